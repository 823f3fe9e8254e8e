// The TMA builder constructs end to end on the host backend: AsyncCopySpec::tensor_map (a TMA
// load completing on a phase barrier, the expect_tx bytes the builder's) and TmaStore /
// WaitTmaStores, in a kernel that copies a bf16 matrix through shared memory (128B swizzle in,
// the same swizzle out, so the result is the input exactly). Checks the output, the plan
// (exact, every unit) and the trace: each block's unit records one load and one store as
// async spans from issue to completion, the load linked to its barrier, 0 findings.
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "base/testing/temp_path.h"
#include "format/layout.h"
#include "format/links.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/platform/tensor_map.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr uint32_t kCols = 64, kRows = 64, kBoxRows = 32;

KernelBuilder CopyKernel(const std::vector<uint32_t>& box) {
  KernelBuilder b("tma_copy");
  b.Param("CUtensorMap", "tm_in").Param("CUtensorMap", "tm_out");
  b.Grid({kRows / kBoxRows, 1, 1}).Block({128, 1, 1});
  b.PhaseBarriers("full", 1, 1);
  b.Stmt("__shared__ __align__(1024) unsigned char tile[4096];");
  AsyncCopySpec load;
  load.name = "load tile";
  load.tensor_map = "tm_in";
  load.dst = "tile";
  load.coords = {"0", "blockIdx.x * 32"};
  load.box = box;
  load.element_bytes = 2;
  load.barrier = "full";
  load.barrier_index = "0";
  load.barrier_phase = "0";
  b.AsyncCopy(load);
  b.Arrive("full", 0, 0, ArriveBy::kOneThread);
  b.WaitPhase("full", 0, 0);
  AsyncCopySpec store;
  store.name = "store tile";
  store.tensor_map = "tm_out";
  store.src = "tile";
  store.coords = {"0", "blockIdx.x * 32"};
  b.TmaStore(store);
  b.WaitTmaStores(0);
  return b;
}

TensorMapSpec Map() {
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kBFloat16;
  spec.dims = {kCols, kRows};
  spec.strides_bytes = {kCols * 2};
  spec.box = {kCols, kBoxRows};
  spec.swizzle = TensorMapSwizzle::k128B;
  return spec;
}

class TmaConstructsTest : public testing::HostRunTest {};

TEST_F(TmaConstructsTest, LoadAndStoreRoundTripWithTheirAsyncSpans) {
  absl::StatusOr<Kernel> kernel = CopyKernel({kCols, kBoxRows}).Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint16_t> in(kCols * kRows), out(kCols * kRows, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(i * 2654435761u >> 7);
  const std::vector<KernelArg> args = {
      KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(in)), Map()),
      KernelArg::TensorMap(KernelArg::Out(absl::MakeSpan(out)), Map())};
  RunOptions options;
  options.profile.unit = UnitSpec::Warpgroup();
  absl::StatusOr<RunResult> run = RunKernel(device(), *kernel, args, options);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(out, in);
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok());
  // kernel 2 + load 2 + arrival 2 + wait 3 + store 2 (a bulk store group's issue and
  // retirement carry no payload, trace version 4; the load records its begin alone,
  // version 5): exactly, per block.
  EXPECT_EQ(run->plan->ExactEventsForUnit(0).value_or(0), 11u);
  const TraceLayout& layout = run->trace->layout;
  ASSERT_EQ(run->trace->timeline.units.size(), 2u);
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    ASSERT_EQ(unit.async_spans.size(), 2u);
    for (const AsyncSpan& span : unit.async_spans) {
      EXPECT_TRUE(span.completed);
      EXPECT_LE(span.begin_ns, span.end_ns);
      const SiteInfo& site = layout.sites[span.site];
      EXPECT_EQ(site.kind, SiteKind::kAsyncCopy);
      if (site.name == "load tile") {
        EXPECT_NE(span.barrier, kNoBarrier);  // completes on full[0]
      } else {
        EXPECT_EQ(site.name, "store tile");
        EXPECT_EQ(span.barrier, kNoBarrier);
      }
    }
  }
}

// The box is declared twice, in the copy (what the barrier expects) and in the tensor map
// (what the copy moves): RunKernel compares them before the launch, naming both, instead of
// deadlocking on a barrier that completed more bytes than it expected.
TEST_F(TmaConstructsTest, RunRejectsACopyBoxThatDisagreesWithItsTensorMapNamingBoth) {
  absl::StatusOr<Kernel> kernel = CopyKernel({kCols, 16}).Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint16_t> in(kCols * kRows, 1), out(kCols * kRows, 0);
  const std::vector<KernelArg> args = {
      KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(in)), Map()),
      KernelArg::TensorMap(KernelArg::Out(absl::MakeSpan(out)), Map())};
  EXPECT_THAT(
      RunKernel(device(), *kernel, args, RunOptions{}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("kernel tma_copy > copy load tile: TMA copy 'load tile' declares "
                         "a box of {64, 16} elements of 2 bytes (AsyncCopySpec::box, "
                         "element_bytes: 2048 bytes expected on barrier 'full'), but argument 0 "
                         "(tm_in) of kernel tma_copy is a tensor map with box {64, 32} of bf16 "
                         "(2 bytes) (TensorMapSpec::box, type: 4096 bytes per copy)")));
}

TEST_F(TmaConstructsTest, BuildRejectsTmaMisuse) {
  {  // a box the builder can see is not a TMA box
    EXPECT_THAT(CopyKernel({kCols, 300}).Build(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1..256 elements")));
    EXPECT_THAT(CopyKernel({7, 32}).Build(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a multiple of 16")));
    EXPECT_THAT(CopyKernel({kCols}).Build(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("give 2 or 3 of each")));
  }
  {  // the map must be a CUtensorMap parameter
    KernelBuilder b("k");
    b.Param("float*", "p").Grid({1, 1, 1}).Block({128, 1, 1});
    b.PhaseBarriers("full", 1, 1);
    AsyncCopySpec load;
    load.name = "load";
    load.tensor_map = "p";
    load.dst = "nullptr";
    load.coords = {"0", "0"};
    load.box = {64, 32};
    load.barrier = "full";
    load.barrier_phase = "0";
    b.AsyncCopy(load);
    b.Arrive("full", 0, 0, ArriveBy::kOneThread);
    b.WaitPhase("full", 0, 0);
    EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("not a parameter of type CUtensorMap")));
  }
  {  // a store nobody waits for
    KernelBuilder b("k");
    b.Param("CUtensorMap", "tm").Grid({1, 1, 1}).Block({128, 1, 1});
    AsyncCopySpec store;
    store.name = "store";
    store.tensor_map = "tm";
    store.src = "nullptr";
    store.coords = {"0", "0"};
    b.TmaStore(store);
    EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("is never waited for")));
  }
}

}  // namespace
}  // namespace warptrace
