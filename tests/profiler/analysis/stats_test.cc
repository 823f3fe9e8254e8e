#include "profiler/analysis/stats.h"

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
