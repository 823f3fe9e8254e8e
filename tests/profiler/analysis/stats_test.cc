#include "profiler/analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace warptrace {
namespace {

using ::testing::DoubleNear;

TEST(StatsTest, PercentileIsNearestRank) {
  const std::vector<int64_t> v = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
  EXPECT_EQ(PercentileSorted(absl::MakeConstSpan(v), 50), 50);
  EXPECT_EQ(PercentileSorted(absl::MakeConstSpan(v), 95), 100);
  EXPECT_EQ(PercentileSorted(absl::MakeConstSpan(v), 10), 10);
  EXPECT_EQ(PercentileSorted(absl::Span<const int64_t>(), 50), 0);
}

TEST(StatsTest, NearestRankIndexAtTheEdges) {
  for (int p : {0, 1, 50, 95, 99, 100}) EXPECT_EQ(NearestRankIndex(1, p), 0u) << p;
  EXPECT_EQ(NearestRankIndex(20, 0), 0u);     // the minimum
  EXPECT_EQ(NearestRankIndex(20, 5), 0u);     // ceil(1.0) - 1
  EXPECT_EQ(NearestRankIndex(20, 6), 1u);     // ceil(1.2) - 1
  EXPECT_EQ(NearestRankIndex(20, 50), 9u);    // rank 10
  EXPECT_EQ(NearestRankIndex(20, 95), 18u);   // rank 19 exactly, not 20
  EXPECT_EQ(NearestRankIndex(20, 96), 19u);   // ceil(19.2) - 1
  EXPECT_EQ(NearestRankIndex(20, 100), 19u);  // the maximum
  EXPECT_EQ(NearestRankIndex(20, 150), 19u);  // clamped
  EXPECT_EQ(NearestRankIndex(20, -5), 0u);    // clamped
  // 7 % of 100 is rank 7: in doubles 0.07 * 100 is 7.000000000000001, whose ceil is 8.
  EXPECT_EQ(NearestRankIndex(100, 7), 6u);
}

TEST(StatsTest, SortedAndInPlacePercentilesAgreeWithTies) {
  std::vector<int64_t> values;
  for (int64_t i = 20; i >= 1; --i) values.push_back(i <= 10 ? 5 : i);  // ten 5s, then 11..20
  std::vector<int64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (int p : {0, 25, 50, 51, 95, 100}) {
    std::vector<int64_t> scratch = values;
    EXPECT_EQ(PercentileInPlace(absl::MakeSpan(scratch), p),
              PercentileSorted(absl::MakeConstSpan(sorted), p))
        << p;
  }
  EXPECT_EQ(PercentileSorted(absl::MakeConstSpan(sorted), 50), 5);   // rank 10: the last 5
  EXPECT_EQ(PercentileSorted(absl::MakeConstSpan(sorted), 51), 11);  // rank 11
  EXPECT_EQ(PercentileSorted(absl::MakeConstSpan(sorted), 95), 19);
  const std::vector<double> one = {2.5};
  EXPECT_EQ(PercentileSorted(absl::MakeConstSpan(one), 95), 2.5);
  EXPECT_EQ(PercentileInPlace(absl::Span<int64_t>(), 50), 0);
}

TEST(StatsTest, ExactRankTestOfSeparatedSmallSamples) {
  // U = 0 for 3 vs 3: one arrangement of C(6,3) = 20 on each side -> p = 2/20.
  const std::vector<double> a = {1, 2, 3}, b = {4, 5, 6};
  const RankTest t = MannWhitney(a, b);
  EXPECT_TRUE(t.exact);
  EXPECT_EQ(t.u, 0);
  EXPECT_THAT(t.p_value, DoubleNear(0.1, 1e-12));
}

TEST(StatsTest, ExactRankTestOfInterleavedSamplesIsNotSignificant) {
  const std::vector<double> a = {1, 4, 5, 8}, b = {2, 3, 6, 7};
  const RankTest t = MannWhitney(a, b);
  EXPECT_TRUE(t.exact);
  EXPECT_THAT(t.p_value, DoubleNear(1.0, 1e-12));  // U = 8 = m*n/2
}

TEST(StatsTest, NormalApproximationFindsAShiftAndNotNoise) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(100, 5);
  std::vector<double> a, b, c;
  for (int i = 0; i < 200; ++i) {
    a.push_back(noise(rng));
    b.push_back(noise(rng) + 10);
    c.push_back(noise(rng));
  }
  const RankTest shifted = MannWhitney(a, b);
  EXPECT_FALSE(shifted.exact);
  EXPECT_LT(shifted.p_value, 1e-10);
  EXPECT_LT(shifted.z, 0);  // a is smaller
  EXPECT_GT(MannWhitney(a, c).p_value, 0.01);
}

TEST(StatsTest, AllTiedOrEmptySamplesAreNotSignificant) {
  const std::vector<double> a(30, 5.0), b(30, 5.0);
  EXPECT_EQ(MannWhitney(a, b).p_value, 1.0);
  EXPECT_EQ(MannWhitney(a, {}).p_value, 1.0);
}

}  // namespace
}  // namespace warptrace
