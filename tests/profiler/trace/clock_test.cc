#include "profiler/trace/clock.h"

#include <cstdint>

#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/trace/decode.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kKhz = 1'500'000;  // 1.5 GHz nominal

TEST(ClockStepTest, AWrapIsAForwardStep) {
  EXPECT_EQ(ClockStep(0xffffff00u, 0x00000100u, 1000), 0x200);
  EXPECT_EQ(ClockStep(5, 5, 0), 0);
}

TEST(ClockStepTest, AHugeForwardDistanceBeyondTheUnitsRunIsABackwardStep) {
  EXPECT_EQ(ClockStep(1000, 900, 1 << 20), -100);
  EXPECT_EQ(ClockStep(0x00000010u, 0xfffffff0u, 1 << 20), -0x20);
}

TEST(ClockStepTest, AHugeForwardDistanceWithinTheUnitsRunStaysForward) {
  EXPECT_EQ(ClockStep(0, 0x90000000u, 0xa0000000u), 0x90000000);
}

TEST(ClockStepTest, MaxForwardCyclesFollowsTheGlobaltimerPair) {
  DecodedRecord r;
  r.flags = abi::kFlagComplete;
  r.start_globaltimer = 1000;
  r.end_globaltimer = 1000 + 1'000'000;  // 1 ms at 1.5 GHz = 1.5 M cycles, x4 + 65536
  EXPECT_EQ(MaxForwardCycles(r, 1'500'000), 6'000'000u + 65536u);
  r.flags = 0;
  EXPECT_EQ(MaxForwardCycles(r, 1'500'000), 0x7fffffffu);
}

TEST(ClockStepTest, OnlyForwardStepsOfHalfTheClockOrMoreAreSignAmbiguous) {
  EXPECT_FALSE(SignAmbiguous(0x7fffffff));
  EXPECT_TRUE(SignAmbiguous(0x80000000));
  EXPECT_FALSE(SignAmbiguous(-100));
}

TEST(CheckWrapsTest, AShortUnitsChainIsConfirmed) {
  const WrapCheck c = CheckWraps(1500, 0, 1000, kKhz, 2);
  EXPECT_EQ(c.outcome, WrapOutcome::kConfirmed);
  EXPECT_EQ(c.total_cycles, 1500);
  EXPECT_EQ(c.fitting_totals, 1u);
}

// A 1 s unit at 1.5 GHz whose clock stepped back 100 cycles once: the forward reading has
// one wrap too many (5.79 G cycles in 1 s, 3.9x nominal), which only the globaltimer shows.
TEST(CheckWrapsTest, ASmallStepBackInALongUnitIsFoundFromTheGlobaltimerSpan) {
  const int64_t truth = 1'500'000'000;
  const WrapCheck c = CheckWraps(truth + kWrapCycles, 1, 1'000'000'000, kKhz, 2);
  EXPECT_EQ(c.outcome, WrapOutcome::kFlipped);
  EXPECT_EQ(c.flip, 1u);
  EXPECT_EQ(c.total_cycles, truth);
}

TEST(CheckWrapsTest, FewerSurplusWrapsThanAmbiguousStepsSayWhichIsUnknown) {
  const int64_t truth = 1'500'000'000;
  const WrapCheck c = CheckWraps(truth + kWrapCycles, 2, 1'000'000'000, kKhz, 4);
  EXPECT_EQ(c.outcome, WrapOutcome::kWhichUnknown);
  EXPECT_EQ(c.flip, 1u);
  EXPECT_EQ(c.total_cycles, truth);
}

TEST(CheckWrapsTest, AUnitLongEnoughForSeveralWrapCountsIsUndetermined) {
  // 3 s at a nominal 4 GHz: 1/4..2x nominal spans 3e9..2.4e10 cycles, five wrap counts.
  const WrapCheck c = CheckWraps(12'000'000'000, 3, 3'000'000'000, 4'000'000, 6);
  EXPECT_EQ(c.outcome, WrapOutcome::kUndetermined);
  EXPECT_GT(c.fitting_totals, 1u);
  EXPECT_EQ(c.flip, 0u);  // the chain's own reading fits: it is kept
  EXPECT_EQ(c.total_cycles, 12'000'000'000);
}

// 2.2 s at a nominal 1 GHz allows 0.55e9..4.4e9 cycles: only one total fits, and the
// chain (5 M cycles) reads one wrap less than it.
TEST(CheckWrapsTest, AChainShortOfTheOnlyFittingTotalLostWraps) {
  const int64_t truth = 4'300'000'000;
  const WrapCheck lost = CheckWraps(truth - kWrapCycles, 0, 2'200'000'000, 1'000'000, 3);
  EXPECT_EQ(lost.outcome, WrapOutcome::kLost);
  EXPECT_EQ(lost.total_cycles, truth);
  // Without events there is one gap: the wraps are in it.
  const WrapCheck placed = CheckWraps(truth - kWrapCycles, 0, 2'200'000'000, 1'000'000, 0);
  EXPECT_EQ(placed.outcome, WrapOutcome::kConfirmed);
  EXPECT_EQ(placed.total_cycles, truth);
}

TEST(CheckWrapsTest, ARateNoWrapCountExplainsIsNoFit) {
  const WrapCheck c = CheckWraps(1'000'000'000, 0, 1000, kKhz, 2);
  EXPECT_EQ(c.outcome, WrapOutcome::kNoFit);
  EXPECT_EQ(c.total_cycles, 1'000'000'000);
}

TEST(CalibrateTest, ALongTrustedUnitIsCalibratedFromItsSpan) {
  CalibrationInput in;
  in.has_record = true;
  in.trust_end_stamp = true;
  in.end_cycles = 198'000;
  in.gt_span_ns = 100'000;
  in.min_gap_cycles = 30;
  const UnitClock c = Calibrate(in, kKhz, 20'000);
  EXPECT_EQ(c.source, ClockSource::kCalibrated);
  EXPECT_DOUBLE_EQ(c.cycles_per_ns, 1.98);
  EXPECT_EQ(c.overhead_cycles, 30u);
}

TEST(CalibrateTest, EachFallbackSaysWhy) {
  CalibrationInput in;
  in.has_record = true;
  in.trust_end_stamp = true;
  in.end_cycles = 1500;
  in.gt_span_ns = 1000;
  EXPECT_EQ(Calibrate(in, kKhz, 20'000).source, ClockSource::kTooShort);
  in.gt_span_ns = 100'000;
  in.end_cycles = 100'000'000;  // 1000 GHz
  EXPECT_EQ(Calibrate(in, kKhz, 20'000).source, ClockSource::kImplausibleRate);
  in.trust_end_stamp = false;
  EXPECT_EQ(Calibrate(in, kKhz, 20'000).source, ClockSource::kNoEndStamp);
  in.wraps_lost = true;
  const UnitClock lost = Calibrate(in, kKhz, 20'000);
  EXPECT_EQ(lost.source, ClockSource::kWrapsLost);
  EXPECT_DOUBLE_EQ(lost.cycles_per_ns, 1.5);
  in.has_record = false;
  EXPECT_EQ(Calibrate(in, kKhz, 20'000).source, ClockSource::kNoRecord);
}

TEST(ClockTallyTest, TheNoteCountsCalibratedUnitsAndEveryFallbackReason) {
  ClockTally tally;
  tally.Add(ClockSource::kCalibrated, 1.7);
  tally.Add(ClockSource::kCalibrated, 1.8);
  tally.Add(ClockSource::kTooShort, 1.5);
  tally.Add(ClockSource::kWrapsLost, 1.5);
  tally.Add(ClockSource::kNoRecord, 0);
  EXPECT_THAT(
      tally.Note(kKhz, 20'000, false),
      AllOf(HasSubstr("calibrated per unit from its globaltimer pair (2 units, "
                      "1700.000-1800.000 MHz)"),
            HasSubstr("nominal SM clock 1500.000 MHz from the layout used for 2 units (1 ran "
                      "under 20.000 us, too briefly for the globaltimer, 1 lost %clock wraps"),
            Not(HasSubstr("overhead compensated"))));
  EXPECT_THAT(tally.Note(kKhz, 20'000, true), HasSubstr("overhead compensated"));
  EXPECT_EQ(ClockTally().Note(kKhz, 20'000, false), "no unit has a record: no clock was needed");
}

}  // namespace
}  // namespace warptrace
