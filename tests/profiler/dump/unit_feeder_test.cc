// Tests UnitFeeder: every unit reaches fn once, in order and unchanged, across many batches;
// fn's first error stops it and comes back from a later Add and from Finish; a feeder
// dropped before Finish stops cleanly; a caller that would wait runs the helper's work
// instead, woken by Wake.
#include "profiler/dump/unit_feeder.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
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

// fn hands the caller a piece of work per unit (and Wake) and waits until the caller's thread
// has done it: which happens only if the caller, waiting in Add or Finish, runs the helper.
TEST(UnitFeederTest, ACallerThatWouldWaitRunsTheHelpersWork) {
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex mu;
  std::condition_variable cv;
  uint64_t offered = 0;
  uint64_t done = 0;
  bool wrong_thread = false;
  bool stalled = false;
  UnitFeeder* feeder_ptr = nullptr;
  UnitFeeder feeder(
      [&](const UnitTimeline& u) {
        std::unique_lock<std::mutex> lock(mu);
        ++offered;
        lock.unlock();
        feeder_ptr->Wake();
        lock.lock();
        // A guard against a hang if the helper never runs, not a timing assertion.
        if (!cv.wait_for(lock, std::chrono::seconds(60), [&] { return done == offered; })) {
          stalled = true;
          return absl::InternalError(absl::StrCat("nobody helped with unit ", u.record_index));
        }
        return absl::OkStatus();
      },
      UnitFeeder::Helper{[&] {
                           std::lock_guard<std::mutex> lock(mu);
                           return done < offered;
                         },
                         [&] {
                           std::lock_guard<std::mutex> lock(mu);
                           if (std::this_thread::get_id() != caller) wrong_thread = true;
                           if (done == offered) return false;
                           ++done;
                           cv.notify_all();
                           return true;
                         }});
  feeder_ptr = &feeder;
  constexpr uint64_t kUnits = 2000;  // ~6 batches: the caller waits in Add and in Finish
  for (uint64_t i = 0; i < kUnits; ++i) ASSERT_THAT(feeder.Add(Unit(i)), IsOk());
  ASSERT_THAT(feeder.Finish(), IsOk());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(offered, kUnits);
  EXPECT_EQ(done, kUnits);
  EXPECT_FALSE(wrong_thread);
  EXPECT_FALSE(stalled);
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
