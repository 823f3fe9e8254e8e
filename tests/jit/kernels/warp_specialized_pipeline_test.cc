#include "jit/kernels/warp_specialized_pipeline.h"

#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/plan/record_plan.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

// Slots per K-tile, derived by hand (payload events take 2 slots; trace version 4 records
// a wait's enter and a cp.async group's begin and end without one): the producer waits on
// empty (enter 1 + exit 2 = 3), a load region (2), and, for the units that run them, two
// cp.async copies (begin + end = 2 each) and an arrival on full (2); bulk copies (TMA,
// on a barrier) record their begin alone, with its payload (2 each: trace version 5
// derives the end). A consumer waits on full (3), an mma (2), arrives on empty (2).
constexpr uint64_t kProducerWaitAndLoad = 3 + 2;
constexpr uint64_t kIssuerExtra = 2 + 2 + 2;
constexpr uint64_t kBulkIssuerExtra = 2 + 2 + 2;
constexpr uint64_t kConsumerPerKTile = 3 + 2 + 2;

TEST(WarpSpecializedPipelineTest, CpAsyncProducerAndConsumerWarpsRecordTheirRolesCounts) {
  absl::StatusOr<Kernel> kernel = WarpSpecializedPipeline({32, 64, 256, 3, 2});
  ASSERT_THAT(kernel, IsOk());
  EXPECT_EQ(kernel->block, (Dim3{384, 1, 1}));
  EXPECT_EQ(kernel->grid, (Dim3{2, 4, 1}));
  EXPECT_EQ(kernel->dynamic_shared.bytes, 3u * (8 + 32) * 32 * 4);
  ASSERT_EQ(kernel->phase_barriers.size(), 2u);
  EXPECT_EQ(kernel->phase_barriers[0].arrivals, 128u);  // every producer thread (cp.async)
  EXPECT_EQ(kernel->phase_barriers[1].arrivals, 256u);  // every consumer thread
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, options);
  ASSERT_THAT(plan, IsOk());
  // KT = 8; every producer warp copies its chunks and arrives. Consumers: kernel 2, one
  // first arrival per stage, per K-tile wait + mma + arrive, the store.
  for (uint32_t warp = 0; warp < 12; ++warp) {
    EXPECT_THAT(plan->ExactEventsForUnit(warp),
                IsOkAndHolds(warp < 4 ? 2 + 8 * (kProducerWaitAndLoad + kIssuerExtra)
                                      : 2 + 3 * 2 + 8 * kConsumerPerKTile + 2))
        << "warp " << warp;
  }
}

TEST(WarpSpecializedPipelineTest, BulkCopiesAreRecordedOnlyByTheIssuingProducerWarp) {
  PipelineShape shape{32, 64, 256, 3, 2};
  shape.copy = CopyKind::kBulk;
  absl::StatusOr<Kernel> kernel = WarpSpecializedPipeline(shape);
  ASSERT_THAT(kernel, IsOk());
  EXPECT_EQ(kernel->phase_barriers[0].arrivals, 1u);  // one arrive_expect_tx per phase
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, options);
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(plan->ExactEventsForUnit(0),
              IsOkAndHolds(2 + 8 * (kProducerWaitAndLoad + kBulkIssuerExtra)));
  for (uint32_t warp = 1; warp < 4; ++warp) {
    EXPECT_THAT(plan->ExactEventsForUnit(warp), IsOkAndHolds(2 + 8 * kProducerWaitAndLoad));
  }
  EXPECT_THAT(plan->ExactEventsForUnit(4), IsOkAndHolds(2 + 3 * 2 + 8 * kConsumerPerKTile + 2));
}

TEST(WarpSpecializedPipelineTest, PersistentBlocksArePlannedWithTheirOwnTileCounts) {
  PipelineShape shape{32, 64, 256, 4, 2};  // 8 tiles of 8 x 32, KT = 8
  shape.persistent_blocks = 3;             // tiles 3, 3, 2
  absl::StatusOr<Kernel> kernel = WarpSpecializedPipeline(shape);
  ASSERT_THAT(kernel, IsOk());
  EXPECT_EQ(kernel->grid, (Dim3{3, 1, 1}));
  ProfileOptions options;  // warpgroup units
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, options);
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->per_block());
  const uint64_t tiles[] = {3, 3, 2};
  for (uint32_t block = 0; block < 3; ++block) {
    EXPECT_THAT(plan->ExactEventsForBlockUnit(block, 0),
                IsOkAndHolds(2 + tiles[block] * 8 * (kProducerWaitAndLoad + kIssuerExtra)));
    EXPECT_THAT(plan->ExactEventsForBlockUnit(block, 1),
                IsOkAndHolds(2 + 4 * 2 + tiles[block] * (8 * kConsumerPerKTile + 2)));
  }
  EXPECT_THAT(plan->Explain(), HasSubstr("in [2, 3], largest"));
}

TEST(WarpSpecializedPipelineTest, DelaysAddBusyWorkToLoadsAndMmas) {
  PipelineShape shape{32, 64, 256, 3, 2};
  shape.producer_delay = 1000;
  shape.consumer_delay = 2000;
  absl::StatusOr<KernelBuilder> builder = WarpSpecializedPipelineBuilder(shape);
  ASSERT_THAT(builder.status(), IsOk());
  absl::StatusOr<Kernel> kernel = builder->Build();
  ASSERT_THAT(kernel, IsOk());
  // The raw statements of the roles hold the delays.
  std::string statements;
  std::function<void(const std::vector<KernelNode>&)> collect =
      [&](const std::vector<KernelNode>& body) {
        for (const KernelNode& node : body) {
          if (node.kind == KernelNode::Kind::kStatement) statements += node.text + "\n";
          collect(node.body);
          collect(node.roles);
        }
      };
  collect(kernel->body);
  EXPECT_THAT(statements, HasSubstr("< 1000ll"));
  EXPECT_THAT(statements, HasSubstr("< 2000ll"));
}

TEST(WarpSpecializedPipelineTest, RejectsASingleStage) {
  EXPECT_THAT(WarpSpecializedPipeline({32, 64, 256, 1, 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at least 2")));
}

TEST(WarpSpecializedPipelineTest, RejectsMorePersistentBlocksThanTiles) {
  PipelineShape shape{32, 64, 256, 3, 2};
  shape.persistent_blocks = 9;
  EXPECT_THAT(WarpSpecializedPipeline(shape),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("9 persistent blocks for 8")));
}

TEST(WarpSpecializedPipelineTest, RejectsStagesThatDoNotFitSharedMemory) {
  EXPECT_THAT(WarpSpecializedPipeline({32, 64, 256, 64, 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("shared memory")));
}

TEST(WarpSpecializedPipelineTest, RejectsRowsNotAMultipleOfTheConsumerTile) {
  EXPECT_THAT(WarpSpecializedPipeline({20, 64, 256, 3, 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("M=20")));
}

}  // namespace
}  // namespace warptrace
