// Tests UnitFeeder: every unit reaches fn once, in order and unchanged, across many batches;
// fn's first error stops it and comes back from a later Add and from Finish; a feeder
// dropped before Finish stops cleanly.
#include "profiler/dump/unit_feeder.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/timeline/timeline_types.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// Unit i: record i, with i % 50 slices (so batches hold different numbers of units).
UnitTimeline Unit(uint64_t i) {
  UnitTimeline u;
  u.record_index = i;
  u.block_linear = static_cast<uint32_t>(i / 2);
  u.unit_index = static_cast<uint32_t>(i % 2);
  for (uint64_t k = 0; k < i % 50; ++k) {
    u.slices.push_back({static_cast<uint32_t>(k % 3), 0, static_cast<int64_t>(10 * k),
                        static_cast<int64_t>(10 * k + 5)});
  }
  u.events = static_cast<uint32_t>(2 * u.slices.size());
  u.verdict_reason = i % 7 == 0 ? "a reason" : "";
  return u;
}

TEST(UnitFeederTest, EveryUnitReachesFnOnceInOrderAndUnchanged) {
  // ~3000 units of ~50 events each: ~9 batches of 16 Ki events.
  std::vector<UnitTimeline> seen;
  UnitFeeder feeder([&](const UnitTimeline& u) {
    seen.push_back(u);
    return absl::OkStatus();
  });
  for (uint64_t i = 0; i < 3000; ++i) ASSERT_THAT(feeder.Add(Unit(i)), IsOk());
  ASSERT_THAT(feeder.Finish(), IsOk());
  ASSERT_EQ(seen.size(), 3000u);
  for (uint64_t i = 0; i < 3000; ++i) EXPECT_EQ(seen[i], Unit(i)) << "unit " << i;
}

// An exception fn throws on the feeder's thread (std::bad_alloc in a writer) reaches the
// caller at a later Add or at Finish, instead of std::terminate (issue 55).
TEST(UnitFeederTest, AnExceptionOfFnIsRethrownToTheCaller) {
  uint64_t calls = 0;
  UnitFeeder feeder([&](const UnitTimeline& u) -> absl::Status {
    ++calls;
    if (u.record_index == 700) throw std::bad_alloc();
    return absl::OkStatus();
  });
  bool thrown = false;
  try {
    for (uint64_t i = 0; i < 3000; ++i) (void)feeder.Add(Unit(i));
    (void)feeder.Finish();
  } catch (const std::bad_alloc&) {
    thrown = true;
  }
  EXPECT_TRUE(thrown);
  EXPECT_EQ(calls, 701u) << "fn is not called after it threw";
}

TEST(UnitFeederTest, TheFirstErrorStopsFnAndComesBack) {
  uint64_t calls = 0;
  UnitFeeder feeder([&](const UnitTimeline& u) {
    ++calls;
    if (u.record_index == 700) return absl::InvalidArgumentError("unit 700 is bad");
    if (u.record_index == 900) return absl::InternalError("never reached");
    return absl::OkStatus();
  });
  absl::Status status;
  uint64_t added = 0;
  for (uint64_t i = 0; i < 3000 && status.ok(); ++i, ++added) status = feeder.Add(Unit(i));
  // The error comes back from an Add some batches later (or from Finish): never a later one.
  if (status.ok()) status = feeder.Finish();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unit 700")));
  EXPECT_THAT(feeder.Finish(), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(feeder.Add(Unit(added)), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(calls, 701u);
}

TEST(UnitFeederTest, AFeederDroppedBeforeFinishStops) {
  uint64_t calls = 0;
  {
    UnitFeeder feeder([&](const UnitTimeline&) {
      ++calls;
      return absl::OkStatus();
    });
    for (uint64_t i = 0; i < 2000; ++i) ASSERT_THAT(feeder.Add(Unit(i)), IsOk());
  }
  EXPECT_LE(calls, 2000u);
}

}  // namespace
}  // namespace warptrace
