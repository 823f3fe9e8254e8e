#include "profiler/analysis/critical_path.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// Sites: 0 kernel, 1 work, 2 wait (barrier), 3 other.
std::vector<SiteInfo> Sites() {
  return {{0, "k", SiteKind::kKernel, ""},
          {1, "work", SiteKind::kRegion, ""},
          {2, "wait", SiteKind::kBarrierWait, ""},
          {3, "other", SiteKind::kRegion, ""}};
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

TEST(CriticalPathTest, ABlockWithoutSlicesHasAnEmptyPath) {
  const PathUnit units[] = {{0, {}}};
  absl::StatusOr<BlockPath> path = CriticalPath(units, {}, Sites());
  ASSERT_THAT(path, IsOk());
  EXPECT_TRUE(path->steps.empty());
}

}  // namespace
}  // namespace warptrace
