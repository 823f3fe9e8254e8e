#include "jit/kernels/warp_specialized_pipeline.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/record_plan.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

TEST(WarpSpecializedPipelineTest, ProducerAndConsumerWarpsRecordTheirRolesCounts) {
  absl::StatusOr<Kernel> kernel = WarpSpecializedPipeline({32, 64, 256, 3, 2});
  ASSERT_THAT(kernel, IsOk());
  EXPECT_EQ(kernel->block, (Dim3{384, 1, 1}));
  EXPECT_EQ(kernel->grid, (Dim3{2, 4, 1}));
  EXPECT_EQ(kernel->dynamic_shared.bytes, 3u * (8 + 32) * 32 * 4);
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, options);
  ASSERT_THAT(plan, IsOk());
  // KT = 8. Producer: kernel 2 + 8 loads x 2 = 18. Consumer: 2 + 8 mma x 2 + store 2 = 20.
  for (uint32_t warp = 0; warp < 12; ++warp) {
    EXPECT_THAT(plan->ExactEventsForUnit(warp), IsOkAndHolds(warp < 4 ? 18u : 20u));
  }
  options.policy.barrier_waits = true;  // + 2 x (1 fill + 8 hand-offs) for everyone
  plan = RecordPlan::Create(*kernel, options);
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(plan->ExactEventsForUnit(0), IsOkAndHolds(36u));
  EXPECT_THAT(plan->ExactEventsForUnit(11), IsOkAndHolds(38u));
}

TEST(WarpSpecializedPipelineTest, RejectsASingleStage) {
  EXPECT_THAT(WarpSpecializedPipeline({32, 64, 256, 1, 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at least 2")));
}

TEST(WarpSpecializedPipelineTest, RejectsFewerKTilesThanTheFillNeeds) {
  EXPECT_THAT(WarpSpecializedPipeline({32, 64, 64, 4, 2}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("K=64 gives 2 K-tiles, fewer than the 3")));
}

TEST(WarpSpecializedPipelineTest, RejectsRowsNotAMultipleOfTheConsumerTile) {
  EXPECT_THAT(WarpSpecializedPipeline({20, 64, 256, 3, 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("M=20")));
}

}  // namespace
}  // namespace warptrace
