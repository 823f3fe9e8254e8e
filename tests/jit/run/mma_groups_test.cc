// KernelBuilder::MmaGroup / WaitMmaGroups run on the host backend's wgmma emulation: two
// groups in flight at once (WaitMmaGroups(1) retires all but the most recent group, the
// emitter's per-thread group history decides which span ends where). Operands of all ones
// make the result exact: each m64n64k16 wgmma adds 16 to every accumulator.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "base/testing/temp_path.h"
#include "format/layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr int kIterations = 3;

// read_before_wait: the epilogue reads both accumulators before the last WaitMmaGroups(0).
absl::StatusOr<Kernel> TwoGroupsInFlight(bool read_before_wait = false) {
  KernelBuilder b("mma_groups");
  b.Param("float*", "out").Grid({2, 1, 1}).Block({128, 1, 1});
  b.Stmt(
      "__shared__ __align__(1024) unsigned short sa[64 * 64];\n"
      "__shared__ __align__(1024) unsigned short sb[64 * 64];\n"
      "for (int i = threadIdx.x; i < 64 * 64; i += 128) { sa[i] = 0x3f80; sb[i] = 0x3f80; }\n"
      "warptrace_fence_proxy_async();\n"
      "__syncthreads();\n"
      "const unsigned long long da = warptrace_wgmma_desc(sa, 16u, 1024u, "
      "WARPTRACE_SWIZZLE_128B);\n"
      "const unsigned long long db = warptrace_wgmma_desc(sb, 16u, 1024u, "
      "WARPTRACE_SWIZZLE_128B);\n"
      "float acc0[32], acc1[32];\n"
      "for (int i = 0; i < 32; ++i) { acc0[i] = 0.0f; acc1[i] = 0.0f; }");
  b.For("it", 0, kIterations, TripCount::Exact(kIterations), [&] {
    b.MmaGroup("a", [&] { b.Stmt("warptrace_wgmma_mma_async_bf16_ss<64>(acc0, da, db, 1);"); });
    b.WaitMmaGroups(1);  // retires the previous iteration's b
    b.MmaGroup("b", [&] { b.Stmt("warptrace_wgmma_mma_async_bf16_ss<64>(acc1, da, db, 1);"); });
    b.WaitMmaGroups(1);  // retires this iteration's a
  });
  const std::string epilogue =
      "float sum = 0.0f;\n"
      "for (int i = 0; i < 32; ++i) sum += acc0[i] + acc1[i];\n"
      "out[blockIdx.x * 128 + threadIdx.x] = sum;";
  if (read_before_wait) {  // the last b is still pending
    b.Stmt(epilogue);
    b.WaitMmaGroups(0);
  } else {
    b.WaitMmaGroups(0);
    b.Stmt(epilogue);
  }
  return b.Build();
}

class MmaGroupsTest : public testing::HostRunTest {};

TEST_F(MmaGroupsTest, TwoGroupsInFlightComputeExactlyAndRecordOverlappingSpans) {
  absl::StatusOr<Kernel> kernel = TwoGroupsInFlight();
  ASSERT_THAT(kernel, IsOk());
  std::vector<float> out(256, -1.0f);
  const std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out))};
  RunOptions options;
  options.profile.unit = UnitSpec::Warpgroup();
  absl::StatusOr<RunResult> run = RunKernel(device(), *kernel, args, options);
  ASSERT_THAT(run, IsOk());
  // 32 accumulators x 2 arrays x 3 iterations x 16 (one k16 of ones).
  for (float v : out) ASSERT_EQ(v, 32.0f * 2 * kIterations * 16);
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok());
  // Trace version 5, the groups' ends derived at the waits (SiteInfo::ends_at_waits):
  // kernel 2 + 3 x (2 groups x (commit 1 + the wait after it with its payload 2)) + the
  // last wait(0) 2 + the exit's wait(0) 2.
  EXPECT_EQ(run->plan->ExactEventsForUnit(0).value_or(0), 2u + kIterations * 6u + 4u);
  const TraceLayout& layout = run->trace->layout;
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    std::vector<const AsyncSpan*> a, b;
    for (const AsyncSpan& span : unit.async_spans) {
      ASSERT_EQ(layout.sites[span.site].kind, SiteKind::kMmaGroup);
      EXPECT_TRUE(span.completed);
      (layout.sites[span.site].name == "a" ? a : b).push_back(&span);
    }
    ASSERT_EQ(a.size(), static_cast<size_t>(kIterations));
    ASSERT_EQ(b.size(), static_cast<size_t>(kIterations));
    // Group a of iteration i is retired only after b of iteration i was committed: the two
    // spans overlap (a's end is after b's begin), as the tensor cores' work would.
    for (int i = 0; i < kIterations; ++i) {
      EXPECT_GE(a[i]->end_ns, b[i]->begin_ns) << "iteration " << i;
      EXPECT_GE(b[i]->begin_ns, a[i]->begin_ns) << "iteration " << i;
    }
    EXPECT_GE(unit.async_lanes, 2u);
  }
}

// Reading an accumulator whose group no wait retired yet (on a GPU: whatever the tensor
// cores have written so far) fails the launch at the access, naming the thread, the array
// and the statement's builder path; it used to read the host's poison NaN silently.
TEST_F(MmaGroupsTest, ReadingAPendingAccumulatorFailsNamingThreadArrayAndPath) {
  absl::StatusOr<Kernel> kernel = TwoGroupsInFlight(/*read_before_wait=*/true);
  ASSERT_THAT(kernel, IsOk());
  std::vector<float> out(256, -1.0f);
  const std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out))};
  EXPECT_THAT(
      RunKernel(device(), *kernel, args, RunOptions{}).status(),
      StatusIs(absl::StatusCode::kAborted,
               AllOf(HasSubstr("block ("), HasSubstr("thread ("),
                     HasSubstr("): kernel mma_groups > statement `float sum = 0.0f;"),
                     HasSubstr(": accumulator 'acc1' is read (or written) while a "
                               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 (A and B "
                               "descriptors) on it is pending (its register d[0] of 32): no "
                               "wgmma.wait_group retired its group yet"))));
}

}  // namespace
}  // namespace warptrace
