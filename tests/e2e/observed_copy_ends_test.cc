// Copy sites that keep an observed end (SiteInfo::end_observed, trace version 5), end to end
// on the host backend with NVRTC compiling each kernel too: the plan marks a copy on a phase
// barrier whose barrier no trace unit's recorder waits on, the emitter makes its issuer
// observe the end (as version 4 did), and the dump pairs that recorded end instead of
// deriving it. The Hopper GEMM with block units (one recorder per block: the producer; the
// waits on `full` run in the consumers), with and without multicast clusters, and a kernel
// with one derived and one observed copy site side by side.
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "format/layout.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/kernels/hopper_gemm.h"
#include "jit/platform/tensor_map.h"
#include "jit/plan/record_plan.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::IsOk;

uint16_t Bf16(float x) {  // exact for the multiples of 1/4 used here
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return static_cast<uint16_t>(bits >> 16);
}

TensorMapSpec OperandMap(uint32_t rows, uint32_t k, uint32_t box_rows) {
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kBFloat16;
  spec.dims = {k, rows};
  spec.strides_bytes = {uint64_t{k} * 2};
  spec.box = {kHopperGemmBk, box_rows};
  spec.swizzle = TensorMapSwizzle::k128B;
  return spec;
}

// Issue -> completion flows of `units`, each counted once, by whether their end is derived.
struct CopyFlows {
  uint32_t observed = 0;
  uint32_t derived = 0;
  uint32_t landings = 0;
};

CopyFlows CountCopyFlows(const std::vector<UnitTimeline>& units) {
  CopyFlows out;
  std::set<uint64_t> seen;
  for (const UnitTimeline& unit : units) {
    for (const Flow& flow : unit.flows) {
      if (!seen.insert(flow.id).second) continue;
      if (flow.kind == FlowKind::kMulticastLanding) ++out.landings;
      if (flow.kind != FlowKind::kIssueToCompletion) continue;
      (flow.derived ? out.derived : out.observed) += 1;
    }
  }
  return out;
}

struct ClusterCase {
  const char* label;
  uint32_t cluster_m;
};

class ObservedCopyEndsGemmTest : public testing::HostRunTest,
                                 public ::testing::WithParamInterface<ClusterCase> {};

// Block units: the one recorder (thread 0) is the producer, which waits on `empty` but
// never on `full`, the barrier its TMA loads complete on. Every load site keeps an observed
// end, so every load's span ends at an event of the producer's own record and its flow is
// recorded, not derived; the trace verifies clean and C matches the reference.
TEST_P(ObservedCopyEndsGemmTest, BlockUnitsObserveEveryLoadsEnd) {
  HopperGemmShape shape{.m = 256, .n = 256, .k = 256, .bn = 128, .stages = 2,
                        .out_f32 = true, .cluster_m = GetParam().cluster_m};
  absl::StatusOr<Kernel> kernel = HopperGemm(shape);
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint16_t> a(size_t{shape.m} * shape.k), b(size_t{shape.n} * shape.k);
  std::vector<float> fa(a.size()), fb(b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    fa[i] = static_cast<float>(static_cast<int>(i * 2654435761u >> 7) % 17 - 8) / 4;
    a[i] = Bf16(fa[i]);
  }
  for (size_t i = 0; i < b.size(); ++i) {
    fb[i] = static_cast<float>(static_cast<int>(i * 40503u >> 3) % 13 - 6) / 4;
    b[i] = Bf16(fb[i]);
  }
  std::vector<float> out(size_t{shape.m} * shape.n, -1.0f);
  const std::vector<KernelArg> args = {
      KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(a)),
                           OperandMap(shape.m, shape.k, HopperGemmBoxRowsA(shape))),
      KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(b)),
                           OperandMap(shape.n, shape.k, HopperGemmBoxRowsB(shape))),
      KernelArg::Out(absl::MakeSpan(out))};
  RunOptions options;
  options.check_gpu_compile = true;  // NVRTC, sm_90a: the polls' PTX compiles
  options.profile.unit = UnitSpec::Block();
  absl::StatusOr<RunResult> run = RunKernel(device(), *kernel, args, options);
  ASSERT_THAT(run, IsOk());
  size_t wrong = 0;
  for (uint32_t i = 0; i < shape.m; ++i) {
    for (uint32_t j = 0; j < shape.n; ++j) {
      float ref = 0;
      for (uint32_t kk = 0; kk < shape.k; ++kk) {
        ref += fa[size_t{i} * shape.k + kk] * fb[size_t{j} * shape.k + kk];
      }
      wrong += out[size_t{i} * shape.n + j] != ref ? 1 : 0;
    }
  }
  EXPECT_EQ(wrong, 0u);
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok()) << run->trace->report.findings.size() << " findings";
  const TraceLayout& layout = run->trace->layout;
  uint32_t load_sites = 0;
  for (const SiteInfo& site : layout.sites) {
    if (site.kind != SiteKind::kAsyncCopy || !CompletesOnBarrier(site.copy_engine)) continue;
    ++load_sites;
    EXPECT_TRUE(site.end_observed) << site.name;
    EXPECT_FALSE(CopyEndDerived(site, abi::kTraceVersion)) << site.name;
  }
  EXPECT_EQ(load_sites, 2u);  // A and B
  // Every block's producer issues an A and a B load per K-block.
  const uint32_t loads = HopperGemmTiles(shape) * (shape.k / kHopperGemmBk) * 2;
  uint32_t spans = 0;
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    for (const AsyncSpan& span : unit.async_spans) {
      if (!CompletesOnBarrier(layout.sites[span.site].copy_engine)) continue;
      ++spans;
      EXPECT_TRUE(span.completed);
      EXPECT_FALSE(span.end_derived);
      EXPECT_NE(span.end_event, AsyncSpan::kNoEvent);
      EXPECT_LE(span.begin_ns, span.end_ns);
    }
  }
  EXPECT_EQ(spans, loads);
  const CopyFlows flows = CountCopyFlows(run->trace->timeline.units);
  EXPECT_EQ(flows.observed, loads);
  EXPECT_EQ(flows.derived, 0u);
  // No unit records a wait on `full`, so a multicast half has no recorded landing.
  EXPECT_EQ(flows.landings, 0u);
}

INSTANTIATE_TEST_SUITE_P(Clusters, ObservedCopyEndsGemmTest,
                         ::testing::Values(ClusterCase{"NoCluster", 1},
                                           ClusterCase{"Multicast2x1", 2}),
                         [](const auto& info) { return std::string(info.param.label); });

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
  std::set<std::string> observed, derived;
  for (const SiteInfo& site : layout.sites) {
    if (site.kind != SiteKind::kAsyncCopy) continue;
    (site.end_observed ? observed : derived).insert(site.name);
  }
  EXPECT_EQ(observed, std::set<std::string>{"fill b"});
  EXPECT_EQ(derived, std::set<std::string>{"fill a"});
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
  const CopyFlows flows = CountCopyFlows(run->trace->timeline.units);
  EXPECT_EQ(flows.observed, 2u);  // fill b, per block
  EXPECT_EQ(flows.derived, 2u);   // fill a, per block
}

}  // namespace
}  // namespace warptrace
