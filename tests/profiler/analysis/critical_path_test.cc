#include "profiler/analysis/critical_path.h"

#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// Sites: 0 kernel, 1 work, 2 wait (barrier), 3 other, 4 phase wait (trace v2).
std::vector<SiteInfo> Sites() {
  return {{0, "k", SiteKind::kKernel, ""},
          {1, "work", SiteKind::kRegion, ""},
          {2, "wait", SiteKind::kBarrierWait, ""},
          {3, "other", SiteKind::kRegion, ""},
          {4, "full[0]", SiteKind::kPhaseWait, ""}};
}

TEST(CriticalPathTest, WithoutLinksFollowsTheUnitThatFinishesLast) {
  const std::vector<Slice> a = {{0, 0, 0, 100}, {1, 1, 10, 90}};
  const std::vector<Slice> b = {{0, 0, 0, 150}, {2, 1, 0, 120}, {3, 1, 120, 150}};
  const PathUnit units[] = {{0, a}, {1, b}};
  absl::StatusOr<BlockPath> path = CriticalPath(units, {}, Sites());
  ASSERT_THAT(path, IsOk());
  EXPECT_EQ(path->begin_ns, 0);
  EXPECT_EQ(path->end_ns, 150);
  EXPECT_EQ(path->handoffs, 0u);
  EXPECT_THAT(path->steps, ElementsAre(PathStep{1, 2, 0, 120}, PathStep{1, 3, 120, 150}));
}

TEST(CriticalPathTest, AHandoffMovesThePathToTheArrivingUnit) {
  // Unit 0 works 0..100 and arrives at 100; unit 1 waits 0..105, then works to 150.
  const std::vector<Slice> a = {{0, 0, 0, 100}, {1, 1, 0, 100}};
  const std::vector<Slice> b = {{0, 0, 0, 150}, {2, 1, 0, 105}, {3, 1, 105, 150}};
  const PathUnit units[] = {{0, a}, {1, b}};
  const HandoffLink links[] = {{7, 0, 100, 1, 1}};
  absl::StatusOr<BlockPath> path = CriticalPath(units, links, Sites());
  ASSERT_THAT(path, IsOk());
  EXPECT_EQ(path->handoffs, 1u);
  EXPECT_THAT(path->steps, ElementsAre(PathStep{0, 1, 0, 100}, PathStep{1, kPathHandoff, 100, 105},
                                       PathStep{1, 3, 105, 150}));
}

TEST(CriticalPathTest, AnArrivalBeforeTheWaitBeganDoesNotMoveThePath) {
  const std::vector<Slice> a = {{1, 0, 0, 20}};
  const std::vector<Slice> b = {{3, 0, 0, 50}, {2, 0, 50, 60}, {1, 0, 60, 80}};
  const PathUnit units[] = {{0, a}, {1, b}};
  const HandoffLink links[] = {{0, 0, 20, 1, 1}};
  absl::StatusOr<BlockPath> path = CriticalPath(units, links, Sites());
  ASSERT_THAT(path, IsOk());
  EXPECT_EQ(path->handoffs, 0u);
  EXPECT_THAT(path->steps, ElementsAre(PathStep{1, 3, 0, 50}, PathStep{1, 2, 50, 60},
                                       PathStep{1, 1, 60, 80}));
}

TEST(CriticalPathTest, TheLatestOfSeveralArrivalsReleasesTheWait) {
  const std::vector<Slice> p = {{2, 0, 0, 70}, {1, 0, 70, 90}};
  const std::vector<Slice> c1 = {{1, 0, 0, 30}};
  const std::vector<Slice> c2 = {{3, 0, 0, 70}};
  const PathUnit units[] = {{0, p}, {1, c1}, {2, c2}};
  const HandoffLink links[] = {{0, 1, 30, 0, 0}, {0, 2, 70, 0, 0}};
  absl::StatusOr<BlockPath> path = CriticalPath(units, links, Sites());
  ASSERT_THAT(path, IsOk());
  EXPECT_THAT(path->steps, ElementsAre(PathStep{2, 3, 0, 70}, PathStep{0, 1, 70, 90}));
}

TEST(CriticalPathTest, GapsBetweenSlicesAreUntracked) {
  const std::vector<Slice> a = {{1, 0, 0, 10}, {1, 0, 30, 40}};
  const PathUnit units[] = {{0, a}};
  absl::StatusOr<BlockPath> path = CriticalPath(units, {}, Sites());
  ASSERT_THAT(path, IsOk());
  EXPECT_THAT(path->steps, ElementsAre(PathStep{0, 1, 0, 10}, PathStep{0, kPathUntracked, 10, 30},
                                       PathStep{0, 1, 30, 40}));
  EXPECT_STREQ(PathSiteName(kPathUntracked, Sites()), "(untracked)");
}

TEST(CriticalPathTest, ALinkToASliceThatIsNotAWaitIsRejected) {
  const std::vector<Slice> a = {{1, 0, 0, 10}};
  const PathUnit units[] = {{0, a}, {1, a}};
  const HandoffLink links[] = {{3, 0, 5, 1, 0}};
  EXPECT_THAT(CriticalPath(units, links, Sites()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a barrier wait")));
  const HandoffLink unknown[] = {{3, 9, 5, 1, 0}};
  EXPECT_THAT(CriticalPath(units, unknown, Sites()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not have")));
}

TEST(CriticalPathTest, APhaseWaitIsReleasedByItsLinkLikeABarrierWait) {
  const std::vector<Slice> a = {{0, 0, 0, 100}, {1, 1, 0, 100}};
  const std::vector<Slice> b = {{0, 0, 0, 150}, {4, 1, 0, 105}, {3, 1, 105, 150}};
  const PathUnit units[] = {{0, a}, {1, b}};
  const HandoffLink links[] = {{7, 0, 100, 1, 1}};
  absl::StatusOr<BlockPath> path = CriticalPath(units, links, Sites());
  ASSERT_THAT(path, IsOk());
  EXPECT_EQ(path->handoffs, 1u);
  EXPECT_THAT(path->steps, ElementsAre(PathStep{0, 1, 0, 100}, PathStep{1, kPathHandoff, 100, 105},
                                       PathStep{1, 3, 105, 150}));
}

TEST(CriticalPathFinderTest, AFinderReusedAcrossBlocksFindsWhatAFreshOneFinds) {
  // Block 0: three units and a hand-off; block 1: one unit with nested slices and a gap.
  const std::vector<Slice> p = {{2, 0, 0, 70}, {1, 0, 70, 90}};
  const std::vector<Slice> c1 = {{1, 0, 0, 30}};
  const std::vector<Slice> c2 = {{3, 0, 0, 70}};
  const PathUnit block0[] = {{0, p}, {1, c1}, {2, c2}};
  const HandoffLink links0[] = {{0, 1, 30, 0, 0}, {0, 2, 70, 0, 0}};
  const std::vector<Slice> d = {{0, 0, 5, 200}, {1, 1, 10, 50}, {3, 2, 20, 30}, {1, 1, 80, 190}};
  const PathUnit block1[] = {{1, d}};

  CriticalPathFinder reused;
  BlockPath first, second;
  ASSERT_THAT(reused.Find(block0, links0, Sites(), first), IsOk());
  ASSERT_THAT(reused.Find(block1, {}, Sites(), second), IsOk());
  absl::StatusOr<BlockPath> fresh0 = CriticalPath(block0, links0, Sites());
  absl::StatusOr<BlockPath> fresh1 = CriticalPath(block1, {}, Sites());
  ASSERT_THAT(fresh0, IsOk());
  ASSERT_THAT(fresh1, IsOk());
  EXPECT_EQ(first.steps, fresh0->steps);
  EXPECT_EQ(second.steps, fresh1->steps);
  EXPECT_EQ(second.handoffs, 0u);
  EXPECT_THAT(second.steps,
              ElementsAre(PathStep{1, 0, 5, 10}, PathStep{1, 1, 10, 20}, PathStep{1, 3, 20, 30},
                          PathStep{1, 1, 30, 50}, PathStep{1, 0, 50, 80}, PathStep{1, 1, 80, 190},
                          PathStep{1, 0, 190, 200}));
}

TEST(CriticalPathFinderTest, PathTimesAreTheStepsSummedPerUnitAndSite) {
  const std::vector<Slice> a = {{0, 0, 0, 100}, {1, 1, 0, 100}};
  const std::vector<Slice> b = {{0, 0, 0, 150}, {2, 1, 0, 105}, {3, 1, 105, 120},
                                {3, 1, 130, 150}};
  const HandoffLink links[] = {{7, 0, 100, 1, 1}};
  CriticalPathFinder finder;
  finder.StartBlock();
  ASSERT_THAT(finder.AddUnit(0, a, Sites()), IsOk());
  ASSERT_THAT(finder.AddUnit(1, b, Sites()), IsOk());
  EXPECT_EQ(finder.begin_ns(), 0);
  EXPECT_EQ(finder.end_ns(), 150);
  ASSERT_THAT(finder.Walk(links), IsOk());
  std::vector<CriticalPathFinder::PathTime> times;
  finder.PathTimes(times);
  std::vector<std::tuple<uint32_t, uint32_t, int64_t>> got;
  for (const auto& t : times) got.emplace_back(t.unit_index, t.site, t.ns);
  // Unit 0's work 0..100, the hand-off 100..105, unit 1's "other" 105..120 and 130..150
  // and its kernel slice between them.
  EXPECT_THAT(got, UnorderedElementsAre(std::make_tuple(0u, 1u, int64_t{100}),
                                        std::make_tuple(1u, kPathHandoff, int64_t{5}),
                                        std::make_tuple(1u, 3u, int64_t{35}),
                                        std::make_tuple(1u, 0u, int64_t{10})));
}

TEST(CriticalPathFinderTest, ALinkToAUnitTheBlockNeverAddedIsRejectedAtTheWalk) {
  const std::vector<Slice> b = {{2, 0, 0, 50}};
  const HandoffLink links[] = {{4, 3, 10, 1, 0}};
  CriticalPathFinder finder;
  finder.StartBlock();
  ASSERT_THAT(finder.AddUnit(1, b, Sites()), IsOk());
  EXPECT_THAT(finder.Walk(links), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("names a unit the block does not have")));
}

TEST(CriticalPathTest, ABlockWithoutSlicesHasAnEmptyPath) {
  const PathUnit units[] = {{0, {}}};
  absl::StatusOr<BlockPath> path = CriticalPath(units, {}, Sites());
  ASSERT_THAT(path, IsOk());
  EXPECT_TRUE(path->steps.empty());
}

}  // namespace
}  // namespace warptrace
