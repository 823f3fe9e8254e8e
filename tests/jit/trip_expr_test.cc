#include "jit/builder/trip_expr.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

constexpr char kGridStride[] =
    "blockIdx.x < num_tiles ? (num_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0";

TripExprEnv Env(uint32_t block_x, uint32_t grid_x, std::vector<int64_t> scalars) {
  TripExprEnv env;
  env.block_idx = {block_x, 0, 0};
  env.grid_dim = {grid_x, 1, 1};
  env.block_dim = {128, 1, 1};
  env.scalars = std::move(scalars);
  return env;
}

TEST(TripExprTest, GridStrideCountMatchesTheTilesEachBlockTakes) {
  absl::StatusOr<TripExpr> e = TripExpr::Parse(kGridStride);
  ASSERT_THAT(e, IsOk());
  EXPECT_THAT(e->scalars(), ElementsAre("num_tiles"));
  EXPECT_TRUE(e->reads_block_idx());
  for (uint32_t grid : {1u, 3u, 8u, 40u}) {
    for (int64_t tiles : {0, 1, 7, 20}) {
      for (uint32_t b = 0; b < grid; ++b) {
        int64_t taken = 0;  // the loop itself, run
        for (int64_t t = b; t < tiles; t += grid) ++taken;
        EXPECT_THAT(e->Evaluate(Env(b, grid, {tiles})), IsOkAndHolds(taken))
            << "block " << b << " of " << grid << ", " << tiles << " tiles";
      }
    }
  }
}

TEST(TripExprTest, FollowsCPrecedenceAndTruncatingDivision) {
  const std::pair<const char*, int64_t> cases[] = {
      {"1 + 2 * 3", 7},          {"(1 + 2) * 3", 9},       {"-7 / 2", -3},
      {"-7 % 3", -1},            {"10 - 4 - 3", 3},        {"2 < 3 == 1", 1},
      {"min(4, max(2, 9))", 4},  {"1 ? 2 : 3 ? 4 : 5", 2}, {"0 ? 2 : 0 ? 4 : 5", 5},
      {"!0 + !5", 1},            {"3 >= 3 && 2 != 2", 0},  {"0 || 4 <= 4", 1},
      {"blockDim.x / 32", 4},    {"gridDim.y * gridDim.z", 1},
  };
  for (const auto& [text, value] : cases) {
    absl::StatusOr<TripExpr> e = TripExpr::Parse(text);
    ASSERT_THAT(e, IsOk()) << text;
    EXPECT_FALSE(e->reads_block_idx()) << text;
    EXPECT_THAT(e->Evaluate(Env(0, 1, {})), IsOkAndHolds(value)) << text;
  }
}

TEST(TripExprTest, ShortCircuitAndSelectSkipTheSideThatWouldDivideByZero) {
  absl::StatusOr<TripExpr> e = TripExpr::Parse("n == 0 ? 0 : 12 / n + (n != 0 && 6 / n)");
  ASSERT_THAT(e, IsOk());
  EXPECT_THAT(e->Evaluate(Env(0, 1, {0})), IsOkAndHolds(0));
  EXPECT_THAT(e->Evaluate(Env(0, 1, {3})), IsOkAndHolds(5));
}

TEST(TripExprTest, ScalarsAreListedOnceInOrderOfFirstUse) {
  absl::StatusOr<TripExpr> e = TripExpr::Parse("b * a + b - c_2");
  ASSERT_THAT(e, IsOk());
  EXPECT_THAT(e->scalars(), ElementsAre("b", "a", "c_2"));
  EXPECT_THAT(e->Evaluate(Env(0, 1, {2, 5, 1})), IsOkAndHolds(11));
}

TEST(TripExprTest, ParseErrorsSayWhatWasExpectedAndWhere) {
  EXPECT_THAT(TripExpr::Parse("1 +"), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("expected a number, a name or '('")));
  EXPECT_THAT(TripExpr::Parse("blockIdx.w"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'x', 'y' or 'z'")));
  EXPECT_THAT(TripExpr::Parse("(1 + 2"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("')'")));
  EXPECT_THAT(TripExpr::Parse("4u"), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("without suffix")));
  EXPECT_THAT(TripExpr::Parse("a b"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("column 3")));
  EXPECT_THAT(TripExpr::Parse("99999999999999999999"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("64 bits")));
  EXPECT_THAT(TripExpr::Parse(std::string(100, '(') + "1" + std::string(100, ')')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nesting")));
}

TEST(TripExprTest, DivisionByZeroAndOverflowAreErrorsNotUndefinedBehaviour) {
  absl::StatusOr<TripExpr> div = TripExpr::Parse("10 / n");
  ASSERT_THAT(div, IsOk());
  EXPECT_THAT(div->Evaluate(Env(0, 1, {0})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("divides by zero")));
  absl::StatusOr<TripExpr> mul = TripExpr::Parse("n * n");
  ASSERT_THAT(mul, IsOk());
  EXPECT_THAT(mul->Evaluate(Env(0, 1, {int64_t{1} << 40})),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("overflows")));
  EXPECT_THAT(mul->Evaluate(Env(0, 1, {})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1 scalars but 0")));
}

}  // namespace
}  // namespace warptrace
