#include "jit/kernels/tiled_gemm.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/plan/record_plan.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

TEST(TiledGemmTest, PlanCountsOneLoadAndComputePerKTile) {
  absl::StatusOr<Kernel> kernel = TiledGemm({64, 32, 128, 16});
  ASSERT_THAT(kernel, IsOk());
  EXPECT_EQ(kernel->grid, (Dim3{2, 4, 1}));
  EXPECT_EQ(kernel->block, (Dim3{16, 16, 1}));
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  options.policy.barrier_waits = true;
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, options);
  ASSERT_THAT(plan, IsOk());
  // kernel 2 + 8 K-tiles x (load 2 + tile loaded 2 + compute 2 + tile consumed 2) + store 2.
  for (uint32_t warp = 0; warp < 8; ++warp) {
    EXPECT_THAT(plan->ExactEventsForUnit(warp), IsOkAndHolds(68u));
  }
}

TEST(TiledGemmTest, RejectsSizesThatAreNotTileMultiples) {
  EXPECT_THAT(TiledGemm({60, 64, 64, 16}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("M=60, N=64, K=64 must be positive multiples of the tile 16")));
}

TEST(TiledGemmTest, RejectsTilesOverABlock) {
  EXPECT_THAT(TiledGemm({64, 64, 64, 64}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tile 64 must be 1..32")));
}

TEST(TiledGemmTest, ReferenceMultipliesRowMajorMatrices) {
  // [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50].
  EXPECT_THAT(ReferenceGemm({1, 2, 3, 4}, {5, 6, 7, 8}, {2, 2, 2, 1}),
              ElementsAre(19, 22, 43, 50));
}

}  // namespace
}  // namespace warptrace
