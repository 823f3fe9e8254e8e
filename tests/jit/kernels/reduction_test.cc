#include "jit/kernels/reduction.h"

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

TEST(ReductionTest, EveryUnitRecordsThreeRegionsAndTheKernel) {
  absl::StatusOr<Kernel> kernel = Reduction({4096, 8, 256});
  ASSERT_THAT(kernel, IsOk());
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, options);
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(plan->ExactEventsForUnit(7), IsOkAndHolds(8u));
  // 1 + log2(256) = 9 barriers.
  options.policy.barrier_waits = true;
  plan = RecordPlan::Create(*kernel, options);
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(plan->ExactEventsForUnit(0), IsOkAndHolds(26u));
}

TEST(ReductionTest, LoopIterationsOfTheGridStrideLoopAreBoundedNotExact) {
  absl::StatusOr<Kernel> kernel = Reduction({4096, 8, 256});
  ASSERT_THAT(kernel, IsOk());
  ProfileOptions options;
  options.unit = UnitSpec::Block();
  options.policy.loop_iterations = true;
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, options);
  ASSERT_THAT(plan, IsOk());
  // 8 + tree 8 iterations x 2 = 24, + 0..2 grid-stride iterations x 2.
  EXPECT_EQ(plan->EventsForUnit(0), (EventRange{24, 28}));
}

TEST(ReductionTest, RejectsBlockSizesThatAreNotPowersOfTwo) {
  EXPECT_THAT(Reduction({4096, 8, 96}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("power of two")));
}

TEST(ReductionTest, ReferenceSumsInDouble) {
  EXPECT_DOUBLE_EQ(ReferenceSum({1.5f, 2.5f, -1.0f}), 3.0);
}

}  // namespace
}  // namespace warptrace
