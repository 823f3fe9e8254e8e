// Group ends derived at the kind's recorded waits (SiteInfo::ends_at_waits, trace version
// 5), end to end on the host backend with NVRTC compiling the kernel too: two cp.async
// sites committed in a loop with a wait that leaves the newest two groups in flight, and
// no wait after the loop. The plan marks both sites, the emitter records each group's
// begin and each wait alone (no counters, no history, no drain loop; a recorded wait(0)
// before the exit retires the last groups), and the dump ends every group at the wait
// that retired it, as many events as the plan counted. The same for TMA store groups
// (cp.async.bulk.wait_group.read), whose waits the role's first thread makes.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/plan/record_plan.h"
#include "jit/platform/tensor_map.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;

constexpr uint32_t kSteps = 4;
constexpr uint32_t kFloats = 32;  // per copy: one row of 128 bytes

// Each step k copies rows k of `a` and `b` into stage k (no stage reused); after the wait
// leaving step k's two groups in flight, threads 0..7 add the 16 bytes they copied at step
// k - 1 (a thread's own cp.async data is complete for it after its wait).
absl::StatusOr<Kernel> PipelinedGroups() {
  KernelBuilder b("pipelined_groups");
  b.Param("const float*", "a").Param("const float*", "b").Param("float*", "out");
  b.Grid({2, 1, 1}).Block({64, 1, 1});
  b.SharedArray("float", "tile_a", kSteps * kFloats);
  b.SharedArray("float", "tile_b", kSteps * kFloats);
  auto copy = [&](const char* name, const char* tile, const char* src) {
    AsyncCopySpec spec;
    spec.name = name;
    spec.dst = absl::StrCat(tile, " + k * ", kFloats);
    spec.src = absl::StrCat(src, " + (blockIdx.x * ", kSteps, " + k) * ", kFloats);
    spec.rows = 1;
    spec.row_bytes = kFloats * 4;
    spec.src_row_stride_bytes = "128";
    b.AsyncCopy(spec);
  };
  b.For("k", 0, kSteps, TripCount::Exact(kSteps), [&] {
    copy("fill a", "tile_a", "a");
    copy("fill b", "tile_b", "b");
    b.WaitAsyncCopies(2);
    b.Stmt(absl::StrCat(
        "if (k > 0 && threadIdx.x < 8) {\n"
        "  for (int i = 0; i < 4; ++i) {\n"
        "    const int at = (k - 1) * ", kFloats, " + threadIdx.x * 4 + i;\n"
        "    out[blockIdx.x * ", kSteps * kFloats, " + at] = tile_a[at] + tile_b[at];\n"
        "  }\n"
        "}"));
  });
  return b.Build();
}

constexpr uint32_t kStoreCols = 64, kStoreRows = 8;  // a stage: 64 x 8 bf16, 1 KiB

// Each step k fills stage k (no stage reused), makes the writes visible to the async proxy
// and TMA-stores the stage to rows 8k..8k+7; the wait leaves the newest store in flight.
absl::StatusOr<Kernel> PipelinedStores() {
  KernelBuilder b("pipelined_stores");
  b.Param("CUtensorMap", "tm_out");
  b.Grid({1, 1, 1}).Block({128, 1, 1});
  b.Stmt(absl::StrCat("__shared__ __align__(1024) unsigned short tile[", kSteps, " * ",
                      kStoreCols * kStoreRows, "];"));
  b.For("k", 0, kSteps, TripCount::Exact(kSteps), [&] {
    b.Stmt(absl::StrCat("for (int i = 0; i < 4; ++i) {\n"
                        "  const int at = k * ", kStoreCols * kStoreRows,
                        " + threadIdx.x * 4 + i;\n"
                        "  tile[at] = static_cast<unsigned short>(at * 7 + 3);\n"
                        "}\n"
                        "warptrace_fence_proxy_async();"));
    b.Barrier("stage written");
    AsyncCopySpec store;
    store.name = "store stage";
    store.tensor_map = "tm_out";
    store.src = absl::StrCat("tile + k * ", kStoreCols * kStoreRows);
    store.coords = {"0", absl::StrCat("k * ", kStoreRows)};
    b.TmaStore(store);
    b.WaitTmaStores(1);
  });
  return b.Build();
}

// Expects the dump's verification clean; returns the names of the sites whose group ends
// the plan derives at their kind's recorded waits.
std::set<std::string> CleanTraceSitesEndingAtWaits(const Trace& trace) {
  EXPECT_TRUE(trace.report.ok()) << trace.report.findings.size() << " findings";
  EXPECT_TRUE(trace.report.findings.empty());
  std::set<std::string> at_waits;
  for (const SiteInfo& site : trace.layout.sites) {
    if (site.ends_at_waits) at_waits.insert(site.name);
  }
  return at_waits;
}

class GroupEndsAtWaitsTest : public testing::HostRunTest {};

TEST_F(GroupEndsAtWaitsTest, EveryGroupEndsAtTheRecordedWaitThatRetiredIt) {
  absl::StatusOr<Kernel> kernel = PipelinedGroups();
  ASSERT_THAT(kernel, IsOk());
  std::vector<float> a(2 * kSteps * kFloats), b(a.size()), out(a.size(), -1.0f);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i % 13);
    b[i] = static_cast<float>(i % 7) / 2;
  }
  RunOptions options;
  options.check_gpu_compile = true;
  options.profile.unit = UnitSpec::Warp();
  const std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(a)),
                                       KernelArg::In(absl::MakeConstSpan(b)),
                                       KernelArg::Out(absl::MakeSpan(out))};
  absl::StatusOr<RunResult> run = RunKernel(device(), *kernel, args, options);
  ASSERT_THAT(run, IsOk());
  for (size_t i = 0; i < out.size(); ++i) {
    if (i % (kSteps * kFloats) >= (kSteps - 1) * kFloats) continue;  // the last step's
    EXPECT_EQ(out[i], a[i] + b[i]) << i;
  }
  // No counters, history or drain loop: the begins, the waits, a wait(0) before the exit.
  const std::string& src = run->source.source;
  EXPECT_THAT(src, Not(HasSubstr("warptrace_done")));
  EXPECT_THAT(src, Not(HasSubstr("_issued")));
  EXPECT_THAT(src, Not(HasSubstr("warptrace_group_sites")));
  EXPECT_THAT(src, Not(HasSubstr("warptrace_unit_track")));
  EXPECT_THAT(src, HasSubstr("warptrace_cp_async_wait_prior(0u);"));
  ASSERT_NE(run->trace, nullptr);
  EXPECT_EQ(CleanTraceSitesEndingAtWaits(*run->trace), (std::set<std::string>{"fill a", "fill b"}));
  const TraceLayout& layout = run->trace->layout;
  // kernel 2 + 4 x (2 begins + a wait with its payload 2) + the exit's wait(0) 2.
  EXPECT_EQ(run->plan->ExactEventsForUnit(0).value_or(0), 20u);
  EXPECT_EQ(run->plan->ExactEventsForUnit(1).value_or(0), 20u);
  ASSERT_EQ(run->trace->timeline.units.size(), 4u);
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    ASSERT_EQ(unit.async_spans.size(), 2 * kSteps);
    // (site, issue) -> the event that ended it; step k's groups end at step k + 1's wait,
    // the last step's at the exit's wait(0): both sites' at the same event.
    std::map<std::pair<std::string, uint32_t>, uint32_t> end_of;
    for (const AsyncSpan& span : unit.async_spans) {
      const std::string& name = layout.sites[span.site].name;
      EXPECT_TRUE(span.completed) << name;
      EXPECT_TRUE(span.end_at_wait) << name;
      EXPECT_FALSE(span.end_derived) << name;
      EXPECT_LT(span.begin_event, span.end_event) << name;
      EXPECT_LE(span.begin_ns, span.end_ns) << name;
      end_of[{name, span.issue}] = span.end_event;
    }
    ASSERT_EQ(end_of.size(), 2 * kSteps);
    for (uint32_t k = 0; k < kSteps; ++k) {
      const uint32_t end_a = end_of[{"fill a", k}], end_b = end_of[{"fill b", k}];
      EXPECT_EQ(end_a, end_b) << k;
      // Each step records 2 begins and a wait (2 slots) after the kernel's enter: step
      // j's wait is slot 3 + 4j; the exit's wait follows the last step's, at 1 + 4 steps.
      EXPECT_EQ(end_a, k + 1 < kSteps ? 3 + 4 * (k + 1) : 1 + 4 * kSteps) << k;
    }
  }
}


TEST_F(GroupEndsAtWaitsTest, EveryTmaStoreGroupEndsAtTheRecordedWaitThatRetiredIt) {
  absl::StatusOr<Kernel> kernel = PipelinedStores();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint16_t> out(kStoreCols * kStoreRows * kSteps, 0);
  TensorMapSpec map;
  map.type = TensorMapDataType::kBFloat16;
  map.dims = {kStoreCols, kStoreRows * kSteps};
  map.strides_bytes = {kStoreCols * 2};
  map.box = {kStoreCols, kStoreRows};
  map.swizzle = TensorMapSwizzle::kNone;
  RunOptions options;
  options.check_gpu_compile = true;
  options.profile.unit = UnitSpec::Warpgroup();
  const std::vector<KernelArg> args = {
      KernelArg::TensorMap(KernelArg::Out(absl::MakeSpan(out)), map)};
  absl::StatusOr<RunResult> run = RunKernel(device(), *kernel, args, options);
  ASSERT_THAT(run, IsOk());
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i], static_cast<uint16_t>(i * 7 + 3)) << i;
  }
  const std::string& src = run->source.source;
  EXPECT_THAT(src, Not(HasSubstr("warptrace_group_sites")));
  EXPECT_THAT(src, Not(HasSubstr("warptrace_unit_track")));
  ASSERT_NE(run->trace, nullptr);
  EXPECT_EQ(CleanTraceSitesEndingAtWaits(*run->trace), (std::set<std::string>{"store stage"}));
  // kernel 2 + 4 x (a begin + a wait with its payload 2) + the exit's wait(0) 2.
  EXPECT_EQ(run->plan->ExactEventsForUnit(0).value_or(0), 16u);
  ASSERT_EQ(run->trace->timeline.units.size(), 1u);
  const UnitTimeline& unit = run->trace->timeline.units[0];
  ASSERT_EQ(unit.async_spans.size(), kSteps);
  std::map<uint32_t, uint32_t> end_of;  // issue -> the event that ended it
  for (const AsyncSpan& span : unit.async_spans) {
    EXPECT_TRUE(span.completed);
    EXPECT_TRUE(span.end_at_wait);
    EXPECT_FALSE(span.end_derived);
    EXPECT_EQ(span.barrier, kNoBarrier);
    EXPECT_LT(span.begin_event, span.end_event);
    EXPECT_LE(span.begin_ns, span.end_ns);
    end_of[span.issue] = span.end_event;
  }
  ASSERT_EQ(end_of.size(), kSteps);
  for (uint32_t k = 0; k < kSteps; ++k) {
    // Step j records its begin (slot 1 + 3j) and its wait (slot 2 + 3j, with a payload):
    // step k's store ends at step k + 1's wait, the last one's at the exit's wait(0).
    EXPECT_EQ(end_of[k], k + 1 < kSteps ? 2 + 3 * (k + 1) : 1 + 3 * kSteps) << k;
  }
}

}  // namespace
}  // namespace warptrace
