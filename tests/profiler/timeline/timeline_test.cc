#include "profiler/timeline/timeline.h"

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "format/layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/testing/handoff_synthesizer.h"
#include "profiler/testing/trace_synthesizer.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/verify.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;
using ::warptrace::testing::Corruption;
using ::warptrace::testing::CorruptionSpec;
using ::warptrace::testing::InjectCorruption;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;
using ::warptrace::testing::SynthOptions;
using ::warptrace::testing::TraceSynthesizer;
using ::warptrace::testing::UnitScript;

// 2 blocks (grid 2x1x1) x 2 warps, capacity 8, nominal 1 GHz so that nominal ns = cycles.
TraceLayout SmallLayout() {
  TraceLayout layout;
  layout.kernel_name = "k";
  layout.grid = {2, 1, 1};
  layout.block = {64, 1, 1};
  layout.unit = UnitSpec::Warp();
  layout.capacity = 8;
  layout.clock.nominal_sm_clock_khz = 1'000'000;
  layout.sites = {{0, "outer", SiteKind::kRegion, ""}, {1, "inner", SiteKind::kRegion, ""}};
  return layout;
}

// B0 at 30, B1 at 60, E1 at 180, E0 at 210, end stamp 220 (cycles from the start stamp).
UnitScript OuterInner() {
  UnitScript s;
  s.Begin(0).Work(10).Region(1, 100).Work(10).End(0);
  return s;
}

class TimelineTest : public ::testing::Test {
 protected:
  void Build(const UnitScript& script, SynthOptions options = {}) {
    TraceSynthesizer synth(layout_, options);
    synth.SetScript(script);
    absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
    ASSERT_THAT(words, IsOk());
    words_ = *std::move(words);
  }
  void Inject(CorruptionSpec spec) {
    ASSERT_THAT(InjectCorruption(layout_, spec, absl::MakeSpan(words_)), IsOk());
  }
  absl::StatusOr<Timeline> Run(VerifyOptions verify = {}, TimelineOptions options = {}) {
    absl::StatusOr<DecodedTrace> decoded = Decode(layout_, words_);
    EXPECT_THAT(decoded, IsOk());
    decoded_ = *std::move(decoded);
    report_ = Verify(decoded_, verify);
    return BuildTimeline(decoded_, report_, options);
  }

  TraceLayout layout_ = SmallLayout();
  std::vector<uint32_t> words_;
  DecodedTrace decoded_;
  VerifyReport report_;
};

TEST_F(TimelineTest, SlicesNestPerUnitWithDepth) {
  SynthOptions options;
  options.cycles_per_ns = 1.0;
  options.start_globaltimer_ns = 5000;
  Build(OuterInner(), options);
  absl::StatusOr<Timeline> timeline = Run();
  ASSERT_THAT(timeline, IsOk());
  ASSERT_THAT(timeline->units, SizeIs(4));
  const UnitTimeline& u = timeline->units[3];
  EXPECT_EQ(u.block_linear, 1u);
  EXPECT_EQ(u.unit_index, 1u);
  EXPECT_EQ(u.block_index, (Dim3{1, 0, 0}));
  EXPECT_EQ(u.sm_id, 1u);
  EXPECT_EQ(u.verdict, Verdict::kComplete);
  EXPECT_TRUE(u.has_record);
  EXPECT_EQ(u.events, 4u);
  EXPECT_THAT(u.slices, ElementsAre(Slice{0, 0, 5030, 5210, false}, Slice{1, 1, 5060, 5180, false}));
  EXPECT_EQ(u.start_ns, 5000);
  EXPECT_EQ(u.end_ns, 5220);
  EXPECT_EQ(timeline->origin_ns, 5000);
  EXPECT_EQ(timeline->end_ns, 5220);
  EXPECT_EQ(timeline->layout, layout_);
}

TEST_F(TimelineTest, CalibrationRecoversAKnownRate) {
  layout_.clock.nominal_sm_clock_khz = 1'500'000;
  SynthOptions options;
  options.cycles_per_ns = 1.98;
  UnitScript script;
  script.Region(0, 198'000);  // 100 us at 1.98 GHz
  Build(script, options);
  absl::StatusOr<Timeline> timeline = Run();
  ASSERT_THAT(timeline, IsOk());
  for (const UnitTimeline& u : timeline->units) {
    EXPECT_FALSE(u.nominal_clock);
    EXPECT_THAT(u.cycles_per_ns, DoubleNear(1.98, 1e-4));
    ASSERT_THAT(u.slices, SizeIs(1));
    // 198020 cycles (work + one event cost) at 1.98 GHz.
    EXPECT_NEAR(static_cast<double>(u.slices[0].end_ns - u.slices[0].begin_ns), 100'010.1, 2.0);
  }
  EXPECT_THAT(timeline->clock_note,
              AllOf(HasSubstr("calibrated per unit from its globaltimer pair (4 units"),
                    HasSubstr("1980.0"), Not(HasSubstr("nominal"))));
}

TEST_F(TimelineTest, CoarseGlobaltimerTicksStillCalibrateLongUnits) {
  SynthOptions options;
  options.cycles_per_ns = 1.7;
  options.globaltimer_tick_ns = 1000;  // 1 us ticks
  options.start_globaltimer_ns = 1'000'000'400;
  UnitScript script;
  script.Region(0, 170'000);  // 100 us
  Build(script, options);
  absl::StatusOr<Timeline> timeline = Run();
  ASSERT_THAT(timeline, IsOk());
  for (const UnitTimeline& u : timeline->units) {
    EXPECT_FALSE(u.nominal_clock);
    EXPECT_THAT(u.cycles_per_ns, DoubleNear(1.7, 1.7 * 0.02));
  }
}

TEST_F(TimelineTest, ShortUnitsFallBackToTheNominalClockAndSaySo) {
  layout_.clock.nominal_sm_clock_khz = 1'500'000;
  Build(OuterInner());  // 220 cycles: far under 20 us
  absl::StatusOr<Timeline> timeline = Run();
  ASSERT_THAT(timeline, IsOk());
  for (const UnitTimeline& u : timeline->units) {
    EXPECT_TRUE(u.nominal_clock);
    EXPECT_DOUBLE_EQ(u.cycles_per_ns, 1.5);
    EXPECT_EQ(u.slices[1].end_ns - u.slices[1].begin_ns, 80);  // 120 cycles at 1.5 GHz
  }
  EXPECT_THAT(timeline->clock_note,
              AllOf(HasSubstr("nominal SM clock 1500.000 MHz from the layout used for 4 units"),
                    HasSubstr("4 ran under 20.000 us")));
}

TEST_F(TimelineTest, UnfinishedUnitsUseTheNominalClockAndSaySo) {
  Build(OuterInner());
  Inject({Corruption::kIncompleteUnit, 2});
  absl::StatusOr<Timeline> timeline = Run({.allow_truncated = true}, {.min_calibration_ns = 0});
  ASSERT_THAT(timeline, IsOk());
  EXPECT_TRUE(timeline->units[2].nominal_clock);
  EXPECT_EQ(timeline->units[2].verdict, Verdict::kTruncated);
  EXPECT_EQ(timeline->units[2].end_ns, timeline->units[2].slices[0].end_ns);
  EXPECT_FALSE(timeline->units[0].nominal_clock);
  EXPECT_THAT(timeline->clock_note,
              AllOf(HasSubstr("calibrated per unit from its globaltimer pair (3 units"),
                    HasSubstr("1 unit (1 had no trustworthy end stamp)")));
}

TEST_F(TimelineTest, WraparoundIsUnwrappedExactly) {
  SynthOptions options;
  options.cycles_per_ns = 1.0;
  options.start_clock = 0xffffffffu - 1000;  // wraps inside the first gap
  options.start_globaltimer_ns = 0;
  UnitScript script;
  script.Work(30'000).Region(0, 2'000);
  Build(script, options);
  absl::StatusOr<Timeline> timeline = Run();
  ASSERT_THAT(timeline, IsOk());
  for (const UnitTimeline& u : timeline->units) {
    EXPECT_FALSE(u.nominal_clock);
    EXPECT_DOUBLE_EQ(u.cycles_per_ns, 1.0);
    EXPECT_THAT(u.slices, ElementsAre(Slice{0, 0, 30'030, 32'050, false}));
    EXPECT_EQ(u.end_ns, 32'060);
  }
}

TEST_F(TimelineTest, SeveralWrapsInOneUnitAreUnwrappedExactly) {
  layout_.clock.nominal_sm_clock_khz = 4'000'000;
  SynthOptions options;
  options.cycles_per_ns = 4.0;
  options.start_clock = 0x80000000u;
  options.start_globaltimer_ns = 0;
  options.event_cost_cycles = 0;
  options.prologue_cycles = 0;
  options.epilogue_cycles = 0;
  UnitScript body;
  body.Region(0, 3'000'000'000u).Work(1'000'000'000u);  // steps of 3e9 and 1e9 cycles
  UnitScript script;
  script.Repeat(3, body);  // 1.2e10 cycles: the clock wraps 2 to 3 times
  Build(script, options);
  absl::StatusOr<Timeline> timeline = Run();
  ASSERT_THAT(timeline, IsOk());
  const UnitTimeline& u = timeline->units[0];
  EXPECT_DOUBLE_EQ(u.cycles_per_ns, 4.0);
  EXPECT_THAT(u.slices, ElementsAre(Slice{0, 0, 0, 750'000'000, false},
                                    Slice{0, 0, 1'000'000'000, 1'750'000'000, false},
                                    Slice{0, 0, 2'000'000'000, 2'750'000'000, false}));
  EXPECT_EQ(u.end_ns, 3'000'000'000);
}

// In a unit that ran 1 s, a step back of 100 cycles (within the unit's overhead, so
// tolerated) is a step back, not a forward step of 2^32 - 100 cycles: the globaltimer span
// allows only one wrap count. (The old limit, 4 x span x nominal, allowed the extra wrap;
// the calibrated rate absorbed it, 5.8 GHz instead of 1.5, and squeezed the unit ~3.9x with
// no finding.)
TEST_F(TimelineTest, ALongUnitsSmallStepBackIsNotReadAsAWrap) {
  layout_.clock.nominal_sm_clock_khz = 1'500'000;
  SynthOptions options;
  options.cycles_per_ns = 1.5;
  options.start_globaltimer_ns = 0;
  UnitScript script;
  script.Begin(0).Work(200).Region(1, 1'500'000'000).Work(200).End(0);
  Build(script, options);
  // E0 (event 3) stamped 100 cycles before E1: within the overhead of 220 cycles.
  Inject({Corruption::kClockBackwards, 0, /*event=*/3, /*amount=*/100});
  absl::StatusOr<Timeline> timeline = Run();
  ASSERT_THAT(timeline, IsOk());
  EXPECT_TRUE(report_.ok());
  const UnitTimeline& u = timeline->units[0];
  EXPECT_EQ(u.clock_source, ClockSource::kCalibrated);
  EXPECT_THAT(u.cycles_per_ns, DoubleNear(1.5, 1e-6));
  ASSERT_THAT(u.slices, SizeIs(2));
  const Slice& inner = u.slices[1];
  EXPECT_NEAR(static_cast<double>(inner.end_ns - inner.begin_ns), 1e9 + 20 / 1.5, 2.0);
  EXPECT_EQ(u.slices[0].end_ns, inner.end_ns);  // E0 clamped to E1: time never goes back
}

TEST_F(TimelineTest, OverheadIsTheSmallestGapAndCompensationMovesLaterEventsEarlier) {
  SynthOptions options;
  options.cycles_per_ns = 1.0;
  options.start_globaltimer_ns = 0;
  Build(OuterInner(), options);
  absl::StatusOr<Timeline> plain = Run();
  ASSERT_THAT(plain, IsOk());
  EXPECT_EQ(plain->units[0].overhead_cycles, 30u);
  EXPECT_FALSE(plain->overhead_compensated);

  absl::StatusOr<Timeline> compensated = Run({}, {.compensate_overhead = true});
  ASSERT_THAT(compensated, IsOk());
  EXPECT_TRUE(compensated->overhead_compensated);
  EXPECT_THAT(compensated->clock_note, HasSubstr("overhead compensated"));
  // Event i moves 30 * i earlier: B0 30, B1 60-30, E1 180-60, E0 210-90.
  EXPECT_THAT(compensated->units[0].slices,
              ElementsAre(Slice{0, 0, 30, 120, false}, Slice{1, 1, 30, 120, false}));
  // The end stamp (220) moves 4 * 30 earlier but never before the last event.
  EXPECT_EQ(compensated->units[0].end_ns, 120);
}

TEST_F(TimelineTest, ToleratedBackwardStepNeverMakesTimeGoBack) {
  SynthOptions options;
  options.cycles_per_ns = 1.0;
  options.start_globaltimer_ns = 0;
  Build(OuterInner(), options);
  // E1 stamped 5 cycles before B1 (at 55): within the overhead of 30, so verify tolerates
  // it, and the timeline clamps it instead of ending "inner" before it begins.
  Inject({Corruption::kClockBackwards, 0, /*event=*/2, /*amount=*/5});
  absl::StatusOr<Timeline> timeline = Run();
  ASSERT_THAT(timeline, IsOk());
  const UnitTimeline& u = timeline->units[0];
  EXPECT_THAT(u.slices, ElementsAre(Slice{0, 0, 30, 210, false}, Slice{1, 1, 60, 60, false}));
}

TEST_F(TimelineTest, RepairedUnitsCloseOpenRegionsAtTheirLastTimestamp) {
  SynthOptions options;
  options.cycles_per_ns = 1.0;
  options.start_globaltimer_ns = 0;
  Build(OuterInner(), options);
  Inject({Corruption::kUnknownSite, 1, /*event=*/2});
  absl::StatusOr<Timeline> timeline = Run({.allow_truncated = true});
  ASSERT_THAT(timeline, IsOk());
  const UnitTimeline& u = timeline->units[1];
  EXPECT_EQ(u.verdict, Verdict::kTruncated);
  EXPECT_EQ(u.events, 2u);
  EXPECT_THAT(u.slices, ElementsAre(Slice{0, 0, 30, 60, true}, Slice{1, 1, 60, 60, true}));
  EXPECT_EQ(u.end_ns, 60);
}

TEST_F(TimelineTest, OverflowedUnitsCloseOpenRegionsAtTheirEndStamp) {
  layout_.capacity = 2;
  SynthOptions options;
  options.cycles_per_ns = 1.0;
  options.start_globaltimer_ns = 0;
  Build(OuterInner(), options);
  absl::StatusOr<Timeline> timeline = Run({.allow_truncated = true});
  ASSERT_THAT(timeline, IsOk());
  const UnitTimeline& u = timeline->units[0];
  EXPECT_EQ(u.verdict, Verdict::kOverflowed);
  EXPECT_EQ(u.dropped, 2u);
  EXPECT_THAT(u.slices, ElementsAre(Slice{0, 0, 30, 220, true}, Slice{1, 1, 60, 220, true}));
}

TEST_F(TimelineTest, UnitsWithoutARecordKeepTheirVerdictButHaveNoTimes) {
  SynthOptions options;
  options.start_globaltimer_ns = 7000;
  options.unit_stagger_ns = 100;
  Build(OuterInner(), options);
  Inject({Corruption::kMissingUnit, 0});
  Inject({Corruption::kBadChecksum, 3});
  absl::StatusOr<Timeline> timeline = Run({.allow_truncated = true});
  ASSERT_THAT(timeline, IsOk());
  EXPECT_EQ(timeline->origin_ns, 7100);  // unit 1 is the earliest with a record
  const UnitTimeline& missing = timeline->units[0];
  EXPECT_FALSE(missing.has_record);
  EXPECT_EQ(missing.verdict, Verdict::kMissing);
  EXPECT_THAT(missing.verdict_reason, HasSubstr("never ran"));
  EXPECT_TRUE(missing.slices.empty());
  EXPECT_EQ(missing.start_ns, 7100);
  EXPECT_EQ(missing.end_ns, 7100);
  EXPECT_EQ(timeline->units[3].verdict, Verdict::kCorrupt);
  EXPECT_FALSE(timeline->units[3].has_record);
  EXPECT_TRUE(timeline->units[1].has_record);
  EXPECT_EQ(timeline->units[2].start_ns, 7200);
}

// Regression (found by //tests/fuzz:dump_fuzzer): a start globaltimer past 2^63 became a
// negative start_ns and origin, and the Chrome writer's ts = begin - origin overflowed.
TEST_F(TimelineTest, AUnitWithADamagedStartGlobaltimerStaysOffTheAxis) {
  SynthOptions options;
  options.start_globaltimer_ns = 7000;
  options.unit_stagger_ns = 100;
  Build(OuterInner(), options);
  Inject({Corruption::kBadGlobaltimer, 0});
  Inject({Corruption::kIncompleteUnit, 0});
  Inject({Corruption::kBadGlobaltimer, 2});
  absl::StatusOr<Timeline> timeline = Run({.allow_truncated = true});
  ASSERT_THAT(timeline, IsOk());
  EXPECT_EQ(timeline->origin_ns, 7100);
  EXPECT_GT(timeline->end_ns, 7300);
  for (size_t i : {size_t{0}, size_t{2}}) {
    const UnitTimeline& damaged = timeline->units[i];
    EXPECT_FALSE(damaged.has_record);
    EXPECT_EQ(damaged.verdict, Verdict::kCorrupt);
    EXPECT_THAT(damaged.verdict_reason, HasSubstr("past 2^62 ns"));
    EXPECT_TRUE(damaged.slices.empty());
    EXPECT_EQ(damaged.start_ns, 7100);
  }
  EXPECT_TRUE(timeline->units[1].has_record);
  EXPECT_EQ(timeline->units[3].start_ns, 7300);
}

TEST_F(TimelineTest, RefusesATraceThatFailedVerification) {
  Build(OuterInner());
  Inject({Corruption::kUnknownSite, 1});
  EXPECT_THAT(Run(), StatusIs(absl::StatusCode::kFailedPrecondition,
                              HasSubstr("verify with allow_truncated")));
}

TEST_F(TimelineTest, RefusesAReportOfAnotherTrace) {
  Build(OuterInner());
  absl::StatusOr<DecodedTrace> decoded = Decode(layout_, words_);
  ASSERT_THAT(decoded, IsOk());
  VerifyReport report = Verify(*decoded);
  report.units.pop_back();
  EXPECT_THAT(BuildTimeline(*decoded, report),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("3 units but the decoded "
                                                                     "trace has 4 records")));
}

TEST_F(TimelineTest, RefusesALayoutWithoutANominalClock) {
  Build(OuterInner());
  layout_.clock.nominal_sm_clock_khz = 0;
  EXPECT_THAT(Run(), StatusIs(absl::StatusCode::kInvalidArgument,
                              HasSubstr("nominal SM clock is 0 kHz")));
}

TEST(BlockIndexTest, SplitsTheLinearIdAlongTheGrid) {
  EXPECT_EQ(BlockIndex({4, 3, 2}, 0), (Dim3{0, 0, 0}));
  EXPECT_EQ(BlockIndex({4, 3, 2}, 5), (Dim3{1, 1, 0}));
  EXPECT_EQ(BlockIndex({4, 3, 2}, 23), (Dim3{3, 2, 1}));
}


// ---- Instants, async spans and flows (trace version 2) ---------------------------------

absl::StatusOr<Timeline> HandoffTimeline(const TraceLayout& layout,
                                         const std::vector<uint32_t>& words) {
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  if (!decoded.ok()) return decoded.status();
  const VerifyReport report = Verify(*decoded);
  return BuildTimeline(*decoded, report);
}

TEST(TimelineHandoffTest, ArrivalsAreInstantsCopiesAreAsyncSpansAndEveryLinkIsAFlow) {
  testing::HandoffSpec spec;  // 2 blocks, 2 stages, 4 iterations
  absl::StatusOr<testing::HandoffTrace> trace = testing::SynthesizeHandoffs(spec);
  ASSERT_THAT(trace, IsOk());
  absl::StatusOr<Timeline> timeline = HandoffTimeline(trace->layout, trace->words);
  ASSERT_THAT(timeline, IsOk());
  ASSERT_THAT(timeline->units, SizeIs(4));
  std::set<uint64_t> ids;
  for (const UnitTimeline& u : timeline->units) {
    const bool producer = u.unit_index == 0;
    ASSERT_THAT(u.instants, SizeIs(4)) << "one arrival per iteration";
    for (size_t i = 0; i < u.instants.size(); ++i) {
      EXPECT_EQ(u.instants[i].site, producer ? testing::kHandoffArriveFullSite
                                             : testing::kHandoffArriveEmptySite);
      EXPECT_EQ(u.instants[i].barrier, (producer ? 0u : 2u) + i % 2);
      EXPECT_EQ(u.instants[i].phase, i / 2);
      if (i > 0) {
        EXPECT_GT(u.instants[i].ns, u.instants[i - 1].ns);
      }
    }
    if (producer) {
      ASSERT_THAT(u.async_spans, SizeIs(4));
      EXPECT_EQ(u.async_lanes, 1u) << "the copies never overlap";
      for (uint32_t i = 0; i < 4; ++i) {
        const AsyncSpan& a = u.async_spans[i];
        EXPECT_EQ(a.issue, i);
        EXPECT_EQ(a.barrier, i % 2);
        EXPECT_TRUE(a.completed);
        EXPECT_EQ(a.lane, 0u);
        // The synthesizer runs 1.5 cycles per ns: load 300 cycles = 200 ns.
        EXPECT_NEAR(static_cast<double>(a.end_ns - a.begin_ns), 200.0, 1.0);
      }
    } else {
      EXPECT_THAT(u.async_spans, SizeIs(0));
    }
    for (const Flow& f : u.flows) {
      ids.insert(f.id);
      EXPECT_TRUE(f.from.record_index == u.record_index || f.to.record_index == u.record_index);
      EXPECT_LE(f.from.ns, f.to.ns) << "a hand-off never goes back in time";
      EXPECT_NE(f.from.anchor, FlowEnd::kNone);
      EXPECT_NE(f.to.anchor, FlowEnd::kNone);
      const UnitTimeline& to = timeline->units[f.to.record_index];
      EXPECT_EQ(f.from.released_wait, FlowEnd::kNone) << "only a release ends a wait";
      if (f.kind == FlowKind::kArrivalToRelease) {
        EXPECT_TRUE(f.completing) << "each phase has one arrival";
        ASSERT_NE(f.to.released_wait, FlowEnd::kNone);
        const Slice& wait = to.slices[f.to.released_wait];
        EXPECT_EQ(wait.end_ns, f.to.ns) << "the release is the wait's end";
        EXPECT_TRUE(wait.site == testing::kHandoffWaitFullSite ||
                    wait.site == testing::kHandoffWaitEmptySite);
        EXPECT_EQ(f.to.anchor, f.to.released_wait) << "the arrow binds to the wait it ended";
        EXPECT_NE(f.from.record_index, f.to.record_index) << "across units";
      } else {
        EXPECT_EQ(f.to.released_wait, FlowEnd::kNone) << "a copy's completion ends no wait";
        EXPECT_TRUE(f.from.on_async);
        EXPECT_EQ(f.from.record_index, f.to.record_index);
        EXPECT_EQ(timeline->units[f.from.record_index].async_spans[f.from.anchor].end_ns,
                  f.to.ns);
      }
    }
  }
  // Per block: 4 full waits + 2 empty waits released, 4 copies; ids unique over the trace.
  EXPECT_EQ(trace->arrival_links_per_block, 6u);
  EXPECT_EQ(trace->copy_links_per_block, 4u);
  EXPECT_THAT(ids, SizeIs(2 * (6 + 4)));
  EXPECT_EQ(*ids.begin(), 0u);
  EXPECT_EQ(*ids.rbegin(), 19u);
}

// Trace version 5: the producer's TMA loads record their begins alone; each span ends at
// the consumer's release of the phase it completes (derived, in another unit), and its flow
// runs from the issue to that wait's end, anchored on both sides.
TEST(TimelineHandoffTest, ACopysDerivedEndIsTheReleaseOfItsPhaseAndItsFlowEndsAtThatWait) {
  testing::HandoffSpec spec;  // 2 blocks, 2 stages, 4 iterations
  spec.derived_copy_ends = true;
  absl::StatusOr<testing::HandoffTrace> trace = testing::SynthesizeHandoffs(spec);
  ASSERT_THAT(trace, IsOk());
  absl::StatusOr<Timeline> timeline = HandoffTimeline(trace->layout, trace->words);
  ASSERT_THAT(timeline, IsOk());
  uint32_t copy_flows = 0;
  for (const UnitTimeline& u : timeline->units) {
    if (u.unit_index != 0) {
      EXPECT_THAT(u.async_spans, SizeIs(0));
      continue;
    }
    ASSERT_THAT(u.async_spans, SizeIs(4));
    for (uint32_t i = 0; i < 4; ++i) {
      const AsyncSpan& a = u.async_spans[i];
      EXPECT_EQ(a.issue, i);
      EXPECT_EQ(a.barrier, i % 2);
      EXPECT_TRUE(a.completed);
      EXPECT_TRUE(a.end_derived);
      EXPECT_EQ(a.end_event, AsyncSpan::kNoEvent) << "no end in the producer's record";
      EXPECT_EQ(a.derived_record, u.record_index + 1) << "the consumer's release";
      const UnitTimeline& consumer = timeline->units[a.derived_record];
      bool is_a_wait_end = false;
      for (const Slice& s : consumer.slices) {
        is_a_wait_end = is_a_wait_end ||
                        (s.site == testing::kHandoffWaitFullSite && s.end_ns == a.end_ns);
      }
      EXPECT_TRUE(is_a_wait_end) << "copy " << i << " ends where a full wait was released";
      EXPECT_GT(a.end_ns, a.begin_ns);
    }
    for (const Flow& f : u.flows) {
      if (f.kind != FlowKind::kIssueToCompletion) continue;
      ++copy_flows;
      EXPECT_TRUE(f.derived);
      EXPECT_EQ(f.from.record_index, u.record_index);
      EXPECT_EQ(f.to.record_index, u.record_index + 1);
      EXPECT_TRUE(f.from.on_async);
      EXPECT_NE(f.from.anchor, FlowEnd::kNone);
      EXPECT_NE(f.to.anchor, FlowEnd::kNone);
      const UnitTimeline& to = timeline->units[f.to.record_index];
      ASSERT_LT(f.to.released_wait, to.slices.size());
      EXPECT_EQ(to.slices[f.to.released_wait].end_ns, f.to.ns);
      EXPECT_TRUE(FlowEndsAtRelease(f));
      // Listed on the consumer too, as a hand-off is.
      bool listed = false;
      for (const Flow& g : to.flows) listed = listed || g.id == f.id;
      EXPECT_TRUE(listed);
    }
  }
  EXPECT_EQ(copy_flows, 2 * 4u);
}

TEST(TimelineHandoffTest, OverlappingCopiesGoOnSeparateLanesAndAnUncompletedOneSpansToTheEnd) {
  TraceLayout layout = SmallLayout();
  layout.grid = {1, 1, 1};
  layout.block = {32, 1, 1};
  layout.capacity = 16;
  layout.sites.push_back({2, "copy", SiteKind::kAsyncCopy, ""});
  UnitScript script;
  script.Begin(0)
      .AsyncBegin(2, 0, 0)
      .Work(10)
      .AsyncBegin(2, 1, 0)  // overlaps copy 0: lane 1
      .Work(10)
      .AsyncEnd(2, 0, 0)
      .Work(10)
      .AsyncBegin(2, 2, 0)  // after copy 0 ended: lane 0 again
      .Work(10)
      .AsyncEnd(2, 1, 0)
      .Work(10)
      .AsyncBegin(2, 3, 0)  // never completed
      .Work(10)
      .End(0);
  TraceSynthesizer synth(layout);
  synth.SetScript(script);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  ASSERT_THAT(words, IsOk());
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, *words);
  ASSERT_THAT(decoded, IsOk());
  const VerifyReport report = Verify(*decoded, {.allow_truncated = true});
  EXPECT_EQ(report.kind_counts[static_cast<int>(FindingKind::kAsyncEndWithoutBegin)], 0u);
  EXPECT_EQ(report.kind_counts[static_cast<int>(FindingKind::kAsyncNeverCompleted)], 2u)
      << "copies 2 and 3";
  absl::StatusOr<Timeline> timeline = BuildTimeline(*decoded, report);
  ASSERT_THAT(timeline, IsOk());
  const UnitTimeline& u = timeline->units[0];
  ASSERT_THAT(u.async_spans, SizeIs(4));
  EXPECT_EQ(u.async_lanes, 2u);
  EXPECT_EQ(u.async_spans[0].lane, 0u);
  EXPECT_EQ(u.async_spans[1].lane, 1u);
  EXPECT_EQ(u.async_spans[2].lane, 0u);
  EXPECT_EQ(u.async_spans[3].lane, 1u);
  EXPECT_FALSE(u.async_spans[2].completed);
  EXPECT_EQ(u.async_spans[2].end_event, AsyncSpan::kNoEvent);
  EXPECT_EQ(u.async_spans[2].end_ns, u.end_ns) << "never completed: spans to the unit's end";
  EXPECT_THAT(u.flows, SizeIs(2)) << "only completed copies have a flow";
}

TEST(TimelineHandoffTest, VersionOneAndHandoffFreeTracesHaveNoneOfThem) {
  TraceSynthesizer synth(SmallLayout());
  synth.SetScript(OuterInner());
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  ASSERT_THAT(words, IsOk());
  absl::StatusOr<Timeline> timeline = HandoffTimeline(SmallLayout(), *words);
  ASSERT_THAT(timeline, IsOk());
  for (const UnitTimeline& u : timeline->units) {
    EXPECT_THAT(u.instants, SizeIs(0));
    EXPECT_THAT(u.async_spans, SizeIs(0));
    EXPECT_THAT(u.flows, SizeIs(0));
    EXPECT_THAT(u.slices, SizeIs(2));
  }
}

}  // namespace
}  // namespace warptrace
