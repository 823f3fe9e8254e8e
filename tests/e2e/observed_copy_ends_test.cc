// Copy sites that keep an observed end (SiteInfo::end_observed, trace version 5), end to end
// on the host backend with NVRTC compiling the kernel too: the plan marks a copy on a phase
// barrier whose barrier no trace unit's recorder waits on, the emitter makes its issuer
// observe the end (as version 4 did), and the dump pairs that recorded end instead of
// deriving it, while a copy in the same kernel whose barrier a recorder waits on keeps its
// derived end. (The Hopper GEMM with block units: tests/jit/kernels/hopper_gemm_test.cc.)
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "format/layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/plan/record_plan.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::IsOk;

constexpr uint32_t kFloats = 64;  // per tile: 2 rows of 128 bytes

// Two bulk copies issued by the producer warp: "fill a" on barrier `a`, which the producer
// itself waits on, and "fill b" on barrier `b`, which only the consumer warp waits on. Each
// warp copies its tile to `out` (a to the first half, b to the second).
absl::StatusOr<Kernel> MixedKernel() {
  KernelBuilder b("mixed_copy_ends");
  b.Param("const float*", "in").Param("float*", "out").Grid({2, 1, 1}).Block({64, 1, 1});
  b.SharedArray("float", "tile_a", kFloats);
  b.SharedArray("float", "tile_b", kFloats);
  b.PhaseBarriers("a", 1, 1);
  b.PhaseBarriers("b", 1, 1);
  auto copy = [&](const char* name, const char* tile, const char* barrier, const char* src) {
    AsyncCopySpec spec;
    spec.name = name;
    spec.dst = tile;
    spec.src = src;
    spec.rows = 2;
    spec.row_bytes = 128;
    spec.src_row_stride_bytes = "128";
    spec.barrier = barrier;
    spec.barrier_phase = "0";
    b.ArriveExpectTx(barrier, 0, 0, 256);
    b.AsyncCopy(spec);
  };
  b.Roles(RoleAxis::kWarp,
          {{"producer", 1, "", [&] {
              copy("fill a", "tile_a", "a", "in + blockIdx.x * 128");
              copy("fill b", "tile_b", "b", "in + blockIdx.x * 128 + 64");
              b.WaitPhase("a", 0, 0);
              b.Stmt("out[blockIdx.x * 128 + threadIdx.x] = tile_a[threadIdx.x] + "
                     "tile_a[threadIdx.x + 32];");
            }},
           {"consumer", 1, "", [&] {
              b.WaitPhase("b", 0, 0);
              b.Stmt("out[blockIdx.x * 128 + 64 + threadIdx.x % 32] = "
                     "tile_b[threadIdx.x % 32] + tile_b[threadIdx.x % 32 + 32];");
            }}});
  return b.Build();
}

class ObservedCopyEndsMixedTest : public testing::HostRunTest {};

// With block units the producer's recorder records its wait on `a` but none on `b`: "fill
// a" has its end derived from that wait (begin alone, 2 slots), "fill b" keeps an observed
// end (begin and end, 4 slots). Both spans complete, one derived and one recorded, and the
// plan's exact count is what the unit recorded.
TEST_F(ObservedCopyEndsMixedTest, OneSiteDerivedOneObservedInOneKernel) {
  absl::StatusOr<Kernel> kernel = MixedKernel();
  ASSERT_THAT(kernel, IsOk());
  std::vector<float> in(2 * 128), out(2 * 128, -1.0f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 29) / 4;
  RunOptions options;
  options.check_gpu_compile = true;
  options.profile.unit = UnitSpec::Block();
  const std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(in)),
                                       KernelArg::Out(absl::MakeSpan(out))};
  absl::StatusOr<RunResult> run = RunKernel(device(), *kernel, args, options);
  ASSERT_THAT(run, IsOk());
  for (uint32_t block = 0; block < 2; ++block) {
    for (uint32_t t = 0; t < 32; ++t) {
      const float* src = &in[block * 128];
      EXPECT_EQ(out[block * 128 + t], src[t] + src[t + 32]) << block << " " << t;
      EXPECT_EQ(out[block * 128 + 64 + t], src[64 + t] + src[64 + t + 32]) << block << " " << t;
    }
  }
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok()) << run->trace->report.findings.size() << " findings";
  const TraceLayout& layout = run->trace->layout;
  std::set<std::string> observed_sites, derived_sites;
  for (const SiteInfo& site : layout.sites) {
    if (site.kind != SiteKind::kAsyncCopy) continue;
    (site.end_observed ? observed_sites : derived_sites).insert(site.name);
  }
  EXPECT_EQ(observed_sites, std::set<std::string>{"fill b"});
  EXPECT_EQ(derived_sites, std::set<std::string>{"fill a"});
  // kernel 2 + fill a 2 + fill b 4 + arrivals (expect_tx) 2 x 2 + wait a 3.
  EXPECT_EQ(run->plan->ExactEventsForUnit(0).value_or(0), 15u);
  ASSERT_EQ(run->trace->timeline.units.size(), 2u);
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    ASSERT_EQ(unit.async_spans.size(), 2u);
    for (const AsyncSpan& span : unit.async_spans) {
      const std::string& name = layout.sites[span.site].name;
      EXPECT_TRUE(span.completed) << name;
      EXPECT_LE(span.begin_ns, span.end_ns) << name;
      EXPECT_EQ(span.end_derived, name == "fill a") << name;
      EXPECT_EQ(span.end_event != AsyncSpan::kNoEvent, name == "fill b") << name;
    }
  }
  uint32_t recorded = 0, derived = 0;
  std::set<uint64_t> seen;
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    for (const Flow& flow : unit.flows) {
      if (flow.kind != FlowKind::kIssueToCompletion || !seen.insert(flow.id).second) continue;
      (flow.derived ? derived : recorded) += 1;
    }
  }
  EXPECT_EQ(recorded, 2u);  // fill b, per block
  EXPECT_EQ(derived, 2u);   // fill a, per block
}

}  // namespace
}  // namespace warptrace
