#include "profiler/timeline/timeline_check.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/timeline/timeline_types.h"
#include "tests/profiler/timeline_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

Timeline Small() { return testing::SyntheticTimeline({.blocks = 2, .units_per_block = 2}); }

TEST(TimelineCheckTest, ASynthesizedTimelinePasses) {
  EXPECT_THAT(CheckTimeline(Small()), IsOk());
}

TEST(TimelineCheckTest, MessagesNameTheUnitByLayoutConvention) {
  Timeline t = Small();
  t.units[1].slices[0].site = 99;
  EXPECT_THAT(CheckTimeline(t),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("block (0,0,0) warpgroup 1, slice 0 (site 99, depth 0, ")));
}

TEST(TimelineCheckTest, RejectsHandoffsOutOfRange) {
  const Timeline base = Small();
  const int64_t origin = base.origin_ns;
  auto check = [&](void (*mutate)(UnitTimeline&, int64_t)) {
    Timeline t = base;
    mutate(t.units[0], origin);
    return CheckTimeline(t);
  };
  EXPECT_THAT(check([](UnitTimeline& u, int64_t o) { u.instants.push_back({0, 0, o - 1}); }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("instant 0: time before the origin")));
  EXPECT_THAT(check([](UnitTimeline& u, int64_t o) {
                u.async_lanes = 1;
                u.async_spans.push_back({.site = 0, .begin_ns = o + 5, .end_ns = o + 4});
              }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("async span 0: times")));
  EXPECT_THAT(check([](UnitTimeline& u, int64_t o) {
                u.async_spans.push_back({.site = 0, .begin_ns = o, .end_ns = o, .lane = 0});
              }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lane past async_lanes")));
  EXPECT_THAT(check([](UnitTimeline& u, int64_t) { u.async_lanes = kMaxAsyncLanes + 1; }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("257 async lanes")));
  EXPECT_THAT(check([](UnitTimeline& u, int64_t o) {
                Flow f;
                f.from = {u.record_index, 0, o, static_cast<uint32_t>(u.slices.size())};
                f.to = {u.record_index + 1, 0, o};
                u.flows.push_back(f);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("flow 0: anchor outside the unit's track")));
  EXPECT_THAT(check([](UnitTimeline& u, int64_t o) {
                Flow f;
                f.from = {u.record_index + 1, 0, o};
                f.to = {u.record_index, 0, o};
                f.to.released_wait = static_cast<uint32_t>(u.slices.size());
                u.flows.push_back(f);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("released wait outside the unit's slices")));
}

TEST(TimelineCheckTest, StreamedUnitsMustFollowAndStayBelowTheBound) {
  const Timeline t = Small();
  TimelineChecker checker(t.layout, t.origin_ns, 2);
  ASSERT_THAT(checker.Next(t.units[1]), IsOk());
  EXPECT_THAT(checker.Next(t.units[0]),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("block (0,0,0) warpgroup 0 follows block (0,0,0) warpgroup 1")));
  UnitTimeline past = t.units[2];
  past.unit_index = 2;
  EXPECT_THAT(checker.Next(past), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("not below the layout's 2 units per block")));
  // A rejected unit is not accepted: the one after the last good unit still follows.
  EXPECT_THAT(checker.Next(t.units[2]), IsOk());
}

TEST(TimelineCheckTest, AChunkIsAcceptedWholeOrNotAtAll) {
  const Timeline t = Small();
  TimelineChecker checker(t.layout, t.origin_ns, 0);
  std::vector<UnitTimeline> chunk = {t.units[0], t.units[1], t.units[2]};
  chunk[2].slices[0].end_ns = chunk[2].slices[0].begin_ns - 1;
  EXPECT_THAT(checker.NextUnits(chunk),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ends before it begins")));
  // Nothing of the failed chunk counts: unit 0 may come again.
  EXPECT_THAT(checker.NextUnits(absl::MakeConstSpan(t.units).subspan(0, 2)), IsOk());
}

}  // namespace
}  // namespace warptrace
