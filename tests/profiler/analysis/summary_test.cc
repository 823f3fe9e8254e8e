#include "profiler/analysis/summary.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/analysis/stats.h"
#include "profiler/dump/sink.h"
#include "profiler/timeline/timeline_types.h"
#include "tests/profiler/timeline_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// Sites 0 "load" and 2 "load" share a name; 1 is "mma".
Timeline BaseTimeline() {
  Timeline t;
  t.layout.kernel_name = "gemm";
  t.layout.device_name = "NVIDIA H200";
  t.layout.clock.nominal_sm_clock_khz = 1'500'000;
  t.layout.sites = {{0, "load", SiteKind::kRegion, "a"},
                    {1, "mma", SiteKind::kRegion, "b"},
                    {2, "load", SiteKind::kRegion, "c"}};
  t.origin_ns = 1000;
  t.end_ns = 1000 + 50'000;
  return t;
}

UnitTimeline Unit(uint32_t block, int64_t start, int64_t end, bool nominal, double rate) {
  UnitTimeline u;
  u.block_linear = block;
  u.block_index = {block, 0, 0};
  u.start_ns = start;
  u.end_ns = end;
  u.nominal_clock = nominal;
  u.clock_source = nominal ? ClockSource::kTooShort : ClockSource::kCalibrated;
  u.cycles_per_ns = rate;
  return u;
}

TEST(SummaryTest, PercentilesAreNearestRankOverTwentyDurations) {
  Timeline t = BaseTimeline();
  UnitTimeline u = Unit(0, 1000, 21'000, false, 1.8);
  // Durations 1..20 ns, in a shuffled order, half at each "load" site.
  const int64_t durations[20] = {7, 3, 20, 1, 15, 9, 12, 2, 18, 5,
                                 11, 19, 4, 16, 8, 14, 6, 17, 10, 13};
  int64_t now = 1000;
  for (int i = 0; i < 20; ++i) {
    u.slices.push_back(Slice{i % 2 == 0 ? 0u : 2u, 0, now, now + durations[i], false});
    now += 100;
  }
  t.units.push_back(u);
  absl::StatusOr<Summary> s = Summarize(t);
  ASSERT_THAT(s, IsOk());
  ASSERT_THAT(s->regions, SizeIs(1));
  const RegionStats& load = s->regions[0];
  EXPECT_EQ(load.name, "load");
  EXPECT_EQ(load.count, 20u);
  EXPECT_EQ(load.total_ns, 210);
  EXPECT_THAT(load.mean_ns, DoubleEq(10.5));
  EXPECT_EQ(load.min_ns, 1);
  EXPECT_EQ(load.p50_ns, 10);  // ceil(0.50 * 20) = 10th smallest
  EXPECT_EQ(load.p95_ns, 19);  // ceil(0.95 * 20) = 19th smallest
  EXPECT_EQ(load.max_ns, 20);
  EXPECT_THAT(load.share, DoubleEq(210.0 / 20'000.0));
}

// Durations counted by value (the summary keeps how many slices lasted each duration): with
// many repeats, percentiles, extremes and totals are still those of the listed values, also
// when a rank falls on the last or first slice of a run of equal durations.
TEST(SummaryTest, RepeatedDurationsGiveTheStatisticsOfTheListedValues) {
  for (const int n : {1, 2, 19, 20, 21, 100, 10007}) {
    Timeline t = BaseTimeline();
    UnitTimeline u = Unit(0, 1000, 1000 + 64 * int64_t{n}, false, 1.8);
    std::vector<int64_t> listed;
    uint64_t x = 12345;
    int64_t now = 1000;
    for (int i = 0; i < n; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const int64_t d = 1 + static_cast<int64_t>((x >> 33) % 7) * ((x >> 40) % 3 == 0 ? 9 : 1);
      listed.push_back(d);
      u.slices.push_back(Slice{1, 0, now, now + d, false});
      now += 64;
    }
    t.units.push_back(u);
    absl::StatusOr<Summary> s = Summarize(t);
    ASSERT_THAT(s, IsOk());
    ASSERT_THAT(s->regions, SizeIs(1));
    const RegionStats& mma = s->regions[0];
    std::sort(listed.begin(), listed.end());
    int64_t total = 0;
    for (int64_t d : listed) total += d;
    SCOPED_TRACE(::testing::Message() << n << " slices");
    EXPECT_EQ(mma.count, static_cast<uint64_t>(n));
    EXPECT_EQ(mma.total_ns, total);
    EXPECT_EQ(mma.min_ns, listed.front());
    EXPECT_EQ(mma.max_ns, listed.back());
    EXPECT_EQ(mma.p50_ns, listed[NearestRankIndex(listed.size(), 50)]);
    EXPECT_EQ(mma.p95_ns, listed[NearestRankIndex(listed.size(), 95)]);
  }
}

TEST(SummaryTest, PercentilesOfOddAndTinySamplesAreActualValues) {
  Timeline t = BaseTimeline();
  UnitTimeline u = Unit(0, 1000, 2000, false, 1.8);
  // mma: {5, 1, 9} → p50 = 2nd smallest = 5 (ceil 1.5), p95 = 3rd = 9 (ceil 2.85).
  u.slices = {Slice{1, 0, 1000, 1005, false}, Slice{1, 0, 1010, 1011, false},
              Slice{1, 0, 1020, 1029, false},
              // load: one sample, every statistic is that sample.
              Slice{0, 0, 1030, 1037, false}};
  t.units.push_back(u);
  absl::StatusOr<Summary> s = Summarize(t);
  ASSERT_THAT(s, IsOk());
  ASSERT_THAT(s->regions, SizeIs(2));
  EXPECT_EQ(s->regions[0].name, "mma");  // larger total first
  EXPECT_EQ(s->regions[0].p50_ns, 5);
  EXPECT_EQ(s->regions[0].p95_ns, 9);
  EXPECT_THAT(s->regions[0].mean_ns, DoubleEq(5.0));
  EXPECT_EQ(s->regions[1].name, "load");
  EXPECT_EQ(s->regions[1].p50_ns, 7);
  EXPECT_EQ(s->regions[1].p95_ns, 7);
  EXPECT_EQ(s->regions[1].min_ns, 7);
  EXPECT_EQ(s->regions[1].max_ns, 7);
}

TEST(SummaryTest, ShareIsOfTheSumOfUnitTimesAcrossUnits) {
  Timeline t = BaseTimeline();
  UnitTimeline a = Unit(0, 1000, 1400, false, 1.8);  // 400 ns
  a.slices = {Slice{1, 0, 1000, 1100, false}};
  UnitTimeline b = Unit(1, 1000, 1600, false, 1.8);  // 600 ns
  b.slices = {Slice{1, 0, 1000, 1200, false}};
  t.units = {a, b};
  absl::StatusOr<Summary> s = Summarize(t);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->unit_time_ns, 1000);
  ASSERT_THAT(s->regions, SizeIs(1));
  EXPECT_THAT(s->regions[0].share, DoubleEq(0.3));
}

TEST(SummaryTest, RowsAreOrderedByTotalThenName) {
  Timeline t = BaseTimeline();
  t.layout.sites.push_back({3, "alpha", SiteKind::kRegion, "d"});
  UnitTimeline u = Unit(0, 1000, 2000, false, 1.8);
  u.slices = {Slice{1, 0, 1000, 1010, false}, Slice{3, 0, 1010, 1020, false},
              Slice{0, 0, 1020, 1050, false}};
  t.units.push_back(u);
  absl::StatusOr<Summary> s = Summarize(t);
  ASSERT_THAT(s, IsOk());
  EXPECT_THAT(s->regions, ElementsAre(Field(&RegionStats::name, "load"),
                                      Field(&RegionStats::name, "alpha"),
                                      Field(&RegionStats::name, "mma")));
}

TEST(SummaryTest, HeaderSaysCalibratedClockWithMeanRate) {
  Timeline t = BaseTimeline();
  t.units = {Unit(0, 1000, 2000, false, 1.7), Unit(1, 1000, 2000, false, 1.9)};
  absl::StatusOr<Summary> s = Summarize(t);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->calibrated_units, 2u);
  EXPECT_EQ(s->nominal_units, 0u);
  EXPECT_THAT(SummaryHeader(*s),
              AllOf(StartsWith("kernel gemm on NVIDIA H200: 2 units, 0.050 ms wall"),
                    HasSubstr("SM clock calibrated from globaltimer (2 units, mean 1800.0 MHz)")));
}

TEST(SummaryTest, HeaderSaysNominalClockWhenUnitsFellBack) {
  Timeline t = BaseTimeline();
  t.units = {Unit(0, 1000, 2000, true, 1.5)};
  absl::StatusOr<Summary> s = Summarize(t);
  ASSERT_THAT(s, IsOk());
  EXPECT_THAT(SummaryHeader(*s), HasSubstr("SM clock nominal 1500.0 MHz (all 1 units, too short to "
                                           "calibrate)"));
  t.units.push_back(Unit(1, 1000, 2000, false, 1.8));
  s = Summarize(t);
  ASSERT_THAT(s, IsOk());
  EXPECT_THAT(SummaryHeader(*s),
              HasSubstr("calibrated from globaltimer (1 units, mean 1800.0 MHz); nominal "
                        "1500.0 MHz for 1 units too short to calibrate"));
}

// The header gives each nominal-clock unit's actual reason (no end stamp, implausible rate,
// ...), not "too short to calibrate" for all of them as it once did.
TEST(SummaryTest, HeaderNamesTheActualReasonForTheNominalClock) {
  Timeline t = BaseTimeline();
  t.units = {Unit(0, 1000, 2000, true, 1.5), Unit(1, 1000, 2000, true, 1.5)};
  t.units[0].clock_source = ClockSource::kNoEndStamp;
  t.units[1].clock_source = ClockSource::kNoEndStamp;
  absl::StatusOr<Summary> s = Summarize(t);
  ASSERT_THAT(s, IsOk());
  EXPECT_THAT(SummaryHeader(*s),
              HasSubstr("nominal 1500.0 MHz (all 2 units, with no trustworthy end stamp)"));
  EXPECT_THAT(SummaryHeader(*s), Not(HasSubstr("too short")));
  t.units[1].clock_source = ClockSource::kTooShort;
  t.units.push_back(Unit(2, 1000, 2000, false, 1.8));
  s = Summarize(t);
  ASSERT_THAT(s, IsOk());
  EXPECT_THAT(SummaryHeader(*s),
              HasSubstr("nominal 1500.0 MHz for 2 units (1 too short to calibrate, 1 with no "
                        "trustworthy end stamp)"));
}

// The header says when times come from the host backend instead of presenting them as GPU
// times.
TEST(SummaryTest, HeaderSaysWhenTimesComeFromTheHostBackend) {
  Timeline t = BaseTimeline();
  t.units = {Unit(0, 1000, 2000, false, 1.5)};
  absl::StatusOr<Summary> gpu = Summarize(t);
  ASSERT_THAT(gpu, IsOk());
  EXPECT_THAT(SummaryHeader(*gpu), Not(HasSubstr("host backend")));
  t.layout.clock.host_backend = true;
  absl::StatusOr<Summary> host = Summarize(t);
  ASSERT_THAT(host, IsOk());
  EXPECT_TRUE(host->host_backend);
  EXPECT_THAT(SummaryHeader(*host),
              HasSubstr("times come from the host backend (the CPU's steady clock), not a GPU"));
}

TEST(SummaryTest, TableColumnsAreAligned) {
  const Timeline t = testing::SyntheticTimeline({.blocks = 5, .iterations = 7});
  absl::StatusOr<Summary> s = Summarize(t);
  ASSERT_THAT(s, IsOk());
  const std::string table = FormatSummary(*s);
  std::vector<std::string> lines = absl::StrSplit(table, '\n', absl::SkipEmpty());
  ASSERT_THAT(lines, SizeIs(1 + 1 + 4));  // header line, column titles, four regions
  EXPECT_THAT(lines[1], StartsWith("region    count"));
  // Every table line has the same width and the numeric columns end at the same offsets.
  for (size_t i = 2; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].size(), lines[1].size()) << lines[i];
    EXPECT_EQ(lines[i].find_last_of('%'), lines[i].size() - 1);
  }
  EXPECT_THAT(lines[2], StartsWith("kernel  "));  // the largest total
}

TEST(SummaryTest, SyntheticTimelineCountsMatchItsShape) {
  const Timeline t = testing::SyntheticTimeline({.blocks = 3, .units_per_block = 2,
                                                 .iterations = 4});
  absl::StatusOr<Summary> s = Summarize(t);
  ASSERT_THAT(s, IsOk());
  for (const RegionStats& r : s->regions) {
    EXPECT_EQ(r.count, r.name == "kernel" ? 6u : 24u) << r.name;
    EXPECT_LE(r.min_ns, r.p50_ns);
    EXPECT_LE(r.p50_ns, r.p95_ns);
    EXPECT_LE(r.p95_ns, r.max_ns);
  }
}

TEST(SummaryTest, RejectsASliceWithAnUnknownSite) {
  Timeline t = BaseTimeline();
  UnitTimeline u = Unit(4, 1000, 2000, false, 1.8);
  u.unit_index = 1;
  u.slices = {Slice{7, 0, 1000, 1010, false}};
  t.units.push_back(u);
  EXPECT_THAT(Summarize(t), StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("block (4,0,0) warpgroup 1, slice 0 (site 7")));
}

TEST(SummaryTest, RejectsASliceLongerThanAnInt64Holds) {
  Timeline t = BaseTimeline();
  UnitTimeline u = Unit(0, 1000, 2000, false, 1.8);
  u.slices = {Slice{0, 0, -(int64_t{1} << 62), int64_t{1} << 62, false}};
  t.units.push_back(u);
  EXPECT_THAT(Summarize(t), StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("lasts 2^63 ns or more")));
}

TEST(SummaryTest, EmptyTimelinePrintsThatNoRegionWasRecorded) {
  absl::StatusOr<Summary> s = Summarize(BaseTimeline());
  ASSERT_THAT(s, IsOk());
  EXPECT_THAT(FormatSummary(*s), HasSubstr("(no regions recorded)"));
  EXPECT_THAT(SummaryHeader(*s), HasSubstr("no unit carried a clock rate"));
}

TEST(SummaryTest, CountsHandoffsOnceEachAndSaysSoInOneLine) {
  Timeline t = BaseTimeline();
  UnitTimeline producer = Unit(0, 1000, 5000, false, 1.5);
  producer.record_index = 0;
  producer.instants = {Instant{0, 0, 1100, 0, 0}, Instant{0, 2, 1200, 0, 1}};
  producer.async_spans = {AsyncSpan{0, 4, 6, 1300, 1400, 0, 0, true, 0},
                          AsyncSpan{0, 8, AsyncSpan::kNoEvent, 1500, 5000, 1, 0, false, 0}};
  producer.async_lanes = 1;
  Flow handoff;  // producer -> consumer: listed on both units, counted once
  handoff.kind = FlowKind::kArrivalToRelease;
  handoff.from.record_index = 0;
  handoff.to.record_index = 1;
  Flow copy;  // within the producer
  copy.id = 1;
  copy.kind = FlowKind::kIssueToCompletion;
  producer.flows = {handoff, copy};
  UnitTimeline consumer = Unit(0, 1000, 5000, false, 1.5);
  consumer.record_index = 1;
  consumer.unit_index = 1;
  consumer.flows = {handoff};
  t.units = {producer, consumer};
  absl::StatusOr<Summary> summary = Summarize(t);
  ASSERT_THAT(summary, IsOk());
  EXPECT_EQ(summary->arrivals, 2u);
  EXPECT_EQ(summary->async_copies, 2u);
  EXPECT_EQ(summary->async_never_completed, 1u);
  EXPECT_EQ(summary->arrival_flows, 1u);
  EXPECT_EQ(summary->copy_flows, 1u);
  EXPECT_THAT(FormatSummary(*summary),
              HasSubstr("hand-offs: 2 barrier arrivals, 2 async copies (1 never completed), 1 "
                        "arrival -> release flows, 1 issue -> completion flows\n"));
  t.units = {Unit(0, 1000, 5000, false, 1.5)};
  summary = Summarize(t);
  ASSERT_THAT(summary, IsOk());
  EXPECT_THAT(FormatSummary(*summary), Not(HasSubstr("hand-offs")));
}


// Builders that each counted some of the units, merged in any order, give the Summary of
// one builder that counted them all: every field, the clock mean included (whole Hz).
TEST(SummaryTest, MergedBuildersGiveTheSummaryOfOne) {
  Timeline t = testing::SyntheticTimeline({.blocks = 7, .units_per_block = 3, .iterations = 9});
  // Calibrated rates with fractions of a Hz and units with hand-offs, besides nominal units.
  for (size_t i = 0; i < t.units.size(); ++i) {
    UnitTimeline& u = t.units[i];
    u.nominal_clock = i % 5 == 0;
    u.clock_source = u.nominal_clock ? ClockSource::kTooShort : ClockSource::kCalibrated;
    u.cycles_per_ns = 1.7 + 0.0123456789 * static_cast<double>(i % 11);
    if (i % 4 == 1) u.instants = {Instant{0, 0, u.start_ns, 0, 0}};
    if (i % 6 == 2) {
      u.async_spans = {AsyncSpan{0, 4, AsyncSpan::kNoEvent, u.start_ns, u.end_ns, 0, 0, false, 0}};
    }
  }
  SummaryBuilder whole(t.layout);
  for (const UnitTimeline& u : t.units) ASSERT_THAT(whole.AddUnit(u), IsOk());
  const Summary expected = whole.Finish(t.end_ns - t.origin_ns, "note");
  ASSERT_GT(expected.calibrated_units, 0u);
  ASSERT_GT(expected.nominal_units, 0u);
  ASSERT_FALSE(expected.regions.empty());
  for (const size_t parts : {2, 3, 5}) {
    SCOPED_TRACE(::testing::Message() << parts << " parts");
    std::vector<SummaryBuilder> builders(parts, SummaryBuilder(t.layout));
    for (size_t i = 0; i < t.units.size(); ++i) {  // interleaved: no part gets a range
      ASSERT_THAT(builders[(i * 7) % parts].AddUnit(t.units[i]), IsOk());
    }
    SummaryBuilder merged(t.layout);
    for (size_t k = parts; k-- > 0;) merged.Merge(builders[k]);  // the last part first
    const Summary got = merged.Finish(t.end_ns - t.origin_ns, "note");
    EXPECT_TRUE(got == expected) << FormatSummary(got) << "\nvs\n" << FormatSummary(expected);
    EXPECT_EQ(got.mean_calibrated_mhz, expected.mean_calibrated_mhz);
    EXPECT_EQ(got.arrivals, expected.arrivals);
    EXPECT_EQ(got.async_never_completed, expected.async_never_completed);
  }
}

// The sink's parts: units fed to parts, merged, then End, as AddUnit of every unit.
TEST(SummaryTest, SinkPartsMergeIntoTheSummaryOfAddUnit) {
  const Timeline t =
      testing::SyntheticTimeline({.blocks = 5, .units_per_block = 2, .iterations = 6});
  TraceBegin begin;
  begin.layout = &t.layout;
  TraceEnd end;
  end.origin_ns = t.origin_ns;
  end.end_ns = t.end_ns;
  end.clock_note = "clock";
  SummarySink plain;
  ASSERT_THAT(plain.Begin(begin), IsOk());
  SummarySink parted;
  ASSERT_THAT(parted.Begin(begin), IsOk());
  std::vector<std::unique_ptr<SinkPart>> parts;
  parts.push_back(parted.NewPart());
  parts.push_back(parted.NewPart());
  ASSERT_NE(parts[0], nullptr);
  for (size_t i = 0; i < t.units.size(); ++i) {
    UnitView view;
    view.timeline = &t.units[i];
    ASSERT_THAT(plain.AddUnit(view), IsOk());
    ASSERT_THAT(parts[i % 2]->AddUnit(view), IsOk());
  }
  ASSERT_THAT(parted.MergeParts(std::move(parts)), IsOk());
  ASSERT_THAT(plain.End(end), IsOk());
  ASSERT_THAT(parted.End(end), IsOk());
  ASSERT_TRUE(plain.summary().has_value());
  EXPECT_TRUE(parted.summary() == plain.summary());
  // A part of another sink is refused.
  SummarySink other;
  ASSERT_THAT(other.Begin(begin), IsOk());
  std::vector<std::unique_ptr<SinkPart>> foreign;
  foreign.push_back(parted.NewPart());
  EXPECT_THAT(other.MergeParts(std::move(foreign)), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace warptrace
