#include "profiler/outputs/chrome_trace.h"

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "nlohmann/json.hpp"
#include "profiler/dump/collector.h"
#include "profiler/testing/handoff_synthesizer.h"
#include "profiler/timeline/timeline_types.h"
#include "tests/profiler/chrome_trace_checker.h"
#include "tests/profiler/timeline_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::_;
using ::warptrace::testing::ChromeTraceViolations;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::MicrosToNs;
using ::warptrace::testing::StatusIs;
using ::warptrace::testing::SyntheticTimeline;

constexpr int64_t kOrigin = 1'700'000'000'123'456'789;

// Two sites, one warpgroup unit of block (3,0,0) on SM 17 with a parent and a child slice.
Timeline SmallTimeline() {
  Timeline t;
  t.layout.kernel_name = "gemm";
  t.layout.device_name = "NVIDIA H200";
  t.layout.grid = {4, 1, 1};
  t.layout.block = {256, 1, 1};
  t.layout.unit = UnitSpec::Warpgroup();
  t.layout.capacity = 4;
  t.layout.sites = {{0, "mainloop", SiteKind::kLoopBody, "gemm.cc:10"},
                    {1, "load", SiteKind::kRegion, "gemm.cc:12"}};
  t.origin_ns = kOrigin;
  t.end_ns = kOrigin + 10'000;
  t.clock_note = "calibrated per unit from globaltimer";
  UnitTimeline& u = t.units.emplace_back();
  u.block_linear = 3;
  u.block_index = {3, 0, 0};
  u.unit_index = 1;
  u.sm_id = 17;
  u.start_ns = kOrigin;
  u.end_ns = kOrigin + 10'000;
  u.slices = {Slice{0, 0, kOrigin + 1'001, kOrigin + 9'999, false},
              Slice{1, 1, kOrigin + 1'234, kOrigin + 5'678, false}};
  return t;
}

absl::StatusOr<std::string> Render(const Timeline& t, ChromeEventStyle style,
                                   ChromeSliceArgs args = ChromeSliceArgs::kFull) {
  std::string out;
  llvm::raw_string_ostream os(out);
  ChromeTraceOptions options;
  options.events = style;
  options.args = args;
  absl::Status status = WriteChromeTrace(t, options, os);
  os.flush();
  if (!status.ok()) return status;
  return out;
}

nlohmann::json Parse(const std::string& text) { return nlohmann::json::parse(text); }

std::vector<nlohmann::json> EventsWithPhase(const nlohmann::json& trace, const std::string& ph) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == ph) out.push_back(e);
  }
  return out;
}

nlohmann::json Metadata(const nlohmann::json& trace, const std::string& name, int64_t pid) {
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == name && e["pid"] == pid) return e;
  }
  return nullptr;
}

TEST(ChromeTraceTest, CompleteEventsHaveExactNanosecondTimestampsRelativeToTheOrigin) {
  absl::StatusOr<std::string> text = Render(SmallTimeline(), ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  const nlohmann::json trace = Parse(*text);
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  const auto x = EventsWithPhase(trace, "X");
  ASSERT_THAT(x, SizeIs(2));
  EXPECT_EQ(x[0]["name"], "mainloop");
  EXPECT_EQ(x[0]["cat"], "loop_body");
  EXPECT_EQ(MicrosToNs(x[0]["ts"]), 1'001);
  EXPECT_EQ(MicrosToNs(x[0]["dur"]), 8'998);
  EXPECT_EQ(x[1]["name"], "load");
  EXPECT_EQ(MicrosToNs(x[1]["ts"]), 1'234);
  EXPECT_EQ(MicrosToNs(x[1]["dur"]), 4'444);
  EXPECT_TRUE(x[1]["ts"].is_number_float());
  // Three decimals, exactly: the text holds every nanosecond.
  EXPECT_THAT(*text, HasSubstr("\"ts\":1.234,\"dur\":4.444,\"args\":"));
}

TEST(ChromeTraceTest, TimestampsKeepEveryNanosecondFarFromTheOrigin) {
  Timeline t = SmallTimeline();
  // 3 hours after the origin, at an odd nanosecond: 10'800'000'000'007 ns.
  const int64_t far = int64_t{10'800'000'000'007};
  t.units[0].slices = {Slice{1, 0, kOrigin + far, kOrigin + far + 1, false}};
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  EXPECT_THAT(*text, HasSubstr("\"ts\":10800000000.007,\"dur\":0.001,"));
  const auto x = EventsWithPhase(Parse(*text), "X");
  ASSERT_THAT(x, SizeIs(1));
  EXPECT_EQ(MicrosToNs(x[0]["ts"]), far);
  EXPECT_EQ(MicrosToNs(x[0]["dur"]), 1);
}

TEST(ChromeTraceTest, SlicesCarryBlockUnitSiteKindAndOriginInArgs) {
  absl::StatusOr<std::string> text = Render(SmallTimeline(), ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  const auto x = EventsWithPhase(Parse(*text), "X");
  ASSERT_THAT(x, SizeIs(2));
  EXPECT_EQ(x[1]["pid"], 17);
  EXPECT_EQ(x[1]["tid"], 3 * 2 + 1);  // block 3 of 2 warpgroups per block, unit 1
  const nlohmann::json expected = nlohmann::json::parse(
      R"json({"block": "(3,0,0)", "unit": 1, "site": 1, "kind": "region", "origin": "gemm.cc:12"})json");
  EXPECT_EQ(x[1]["args"], expected);
}

TEST(ChromeTraceTest, LeanSlicesLeaveArgsToTheTrackAndListSitesOnceInOtherData) {
  absl::StatusOr<std::string> text =
      Render(SmallTimeline(), ChromeEventStyle::kComplete, ChromeSliceArgs::kLean);
  ASSERT_THAT(text, IsOk());
  const nlohmann::json trace = Parse(*text);
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  const auto x = EventsWithPhase(trace, "X");
  ASSERT_THAT(x, SizeIs(2));
  EXPECT_FALSE(x[1].contains("args")) << x[1].dump();
  EXPECT_EQ(x[1]["tid"], 3 * 2 + 1);
  EXPECT_EQ(trace["otherData"]["slice_args"], "lean");
  const nlohmann::json expected = nlohmann::json::parse(
      R"json({"id": 1, "name": "load", "kind": "region", "origin": "gemm.cc:12"})json");
  ASSERT_EQ(trace["otherData"]["sites"].size(), SmallTimeline().layout.sites.size());
  EXPECT_EQ(trace["otherData"]["sites"][1], expected);
  EXPECT_FALSE(trace["otherData"].contains("host_anchor"));
}

TEST(ChromeTraceTest, LeanRepairedSliceStillSaysSo) {
  Timeline t = SmallTimeline();
  t.units[0].verdict = Verdict::kTruncated;
  t.units[0].slices[0].repaired = true;
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kBeginEnd, ChromeSliceArgs::kLean);
  ASSERT_THAT(text, IsOk());
  const auto b = EventsWithPhase(Parse(*text), "B");
  ASSERT_THAT(b, SizeIs(2));
  EXPECT_EQ(b[0]["args"], nlohmann::json::parse(R"({"repaired": true})"));
  EXPECT_FALSE(b[1].contains("args"));
}

TEST(ChromeTraceTest, HostAnchorIsInOtherDataWithEveryDigit) {
  Timeline t = SmallTimeline();
  t.layout.host_anchor = {true, 1'764'500'000'123'456'789, 98'765'432'101,
                          1'764'500'001'000'000'007, 250};
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  const nlohmann::json anchor = Parse(*text)["otherData"]["host_anchor"];
  EXPECT_EQ(anchor["globaltimer_ns"], "1764500000123456789");
  EXPECT_EQ(anchor["boottime_ns"], "98765432101");
  EXPECT_EQ(anchor["realtime_ns"], "1764500001000000007");
  EXPECT_EQ(anchor["uncertainty_ns"], 250);
}

TEST(ChromeTraceTest, SliceArgsParseByName) {
  EXPECT_THAT(ParseChromeSliceArgs("lean"), IsOkAndHolds(ChromeSliceArgs::kLean));
  EXPECT_THAT(ParseChromeSliceArgs("FULL"), IsOkAndHolds(ChromeSliceArgs::kFull));
  EXPECT_THAT(ParseChromeSliceArgs("some"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'lean'")));
}

TEST(ChromeTraceTest, MetadataNamesAndSortsEveryProcessAndThread) {
  absl::StatusOr<std::string> text = Render(SmallTimeline(), ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  const nlohmann::json trace = Parse(*text);
  EXPECT_EQ(trace["displayTimeUnit"], "ns");
  EXPECT_EQ(Metadata(trace, "process_name", 17)["args"]["name"], "SM 17");
  EXPECT_EQ(Metadata(trace, "process_sort_index", 17)["args"]["sort_index"], 17);
  const nlohmann::json thread = Metadata(trace, "thread_name", 17);
  EXPECT_EQ(thread["tid"], 7);
  EXPECT_EQ(thread["args"]["name"], "block (3,0,0) warpgroup 1");
  EXPECT_EQ(thread["args"]["verdict"], "complete");
  EXPECT_EQ(Metadata(trace, "thread_sort_index", 17)["args"]["sort_index"], 7);
  // Process metadata uses the tid of a real unit, so no empty thread appears.
  EXPECT_EQ(Metadata(trace, "process_name", 17)["tid"], 7);
}

// With a role table, a unit's track says which role it runs: the producer / consumer split
// is readable from the track list alone.
TEST(ChromeTraceTest, ThreadNamesCarryTheUnitsRoleWhenTheLayoutHasRoles) {
  Timeline t = SmallTimeline();
  t.layout.unit_roles = {"producer", "consumer"};
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  EXPECT_EQ(Metadata(Parse(*text), "thread_name", 17)["args"]["name"],
            "block (3,0,0) warpgroup 1 consumer");
}

TEST(ChromeTraceTest, OtherDataDescribesKernelDeviceClockAndVerdictCounts) {
  Timeline t = SmallTimeline();
  UnitTimeline overflowed = t.units[0];
  overflowed.unit_index = 0;
  overflowed.block_linear = 4;
  overflowed.block_index = {4, 0, 0};
  overflowed.verdict = Verdict::kOverflowed;
  overflowed.dropped = 12;
  t.units.push_back(overflowed);
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  const nlohmann::json other = Parse(*text)["otherData"];
  EXPECT_EQ(other["kernel"], "gemm");
  EXPECT_EQ(other["device"], "NVIDIA H200");
  EXPECT_EQ(other["clock"], "calibrated per unit from globaltimer");
  EXPECT_THAT(other["time_source"].get<std::string>(), ::testing::StartsWith("device: "));
  EXPECT_EQ(other["origin_ns"], absl::StrCat(kOrigin));
  EXPECT_EQ(other["units"], 2);
  EXPECT_EQ(other["units_complete"], 1);
  EXPECT_EQ(other["units_overflowed"], 1);
  EXPECT_EQ(other["units_truncated"], 0);
  EXPECT_EQ(other["slices"], 4);
  EXPECT_EQ(other["dropped_events"], 12);
  EXPECT_EQ(other["trace_unit"], "warpgroup");
}

TEST(ChromeTraceTest, BeginEndEventsAreBalancedNestedAndNeverEndBeforeTheyBegin) {
  Timeline t = SmallTimeline();
  // A zero-length slice at the child's end, and a sibling after the parent.
  t.units[0].slices.push_back(Slice{1, 1, kOrigin + 5'678, kOrigin + 5'678, false});
  t.units[0].slices.push_back(Slice{1, 0, kOrigin + 9'999, kOrigin + 9'999, false});
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kBeginEnd);
  ASSERT_THAT(text, IsOk());
  const nlohmann::json trace = Parse(*text);
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  EXPECT_THAT(EventsWithPhase(trace, "X"), IsEmpty());
  std::vector<std::string> sequence;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M") continue;
    sequence.push_back(absl::StrCat(e["ph"].get<std::string>(), MicrosToNs(e["ts"])));
  }
  EXPECT_THAT(sequence, ElementsAre("B1001", "B1234", "E5678", "B5678", "E5678", "E9999",
                                    "B9999", "E9999"));
}

TEST(ChromeTraceTest, ZeroLengthSlicesAreKeptWithZeroDuration) {
  Timeline t = SmallTimeline();
  t.units[0].slices = {Slice{0, 0, kOrigin + 10, kOrigin + 10, false}};
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  const auto x = EventsWithPhase(Parse(*text), "X");
  ASSERT_THAT(x, SizeIs(1));
  EXPECT_EQ(MicrosToNs(x[0]["dur"]), 0);
  EXPECT_TRUE(x[0]["dur"].is_number());
}

TEST(ChromeTraceTest, InvalidUtf8InNamesIsReplacedSoTheOutputParses) {
  Timeline t = SmallTimeline();
  t.layout.sites[1].name = "lo\xff" "ad\xc3";
  t.layout.sites[1].origin = "\xe2\x82";
  t.layout.kernel_name = "k\x80";
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  nlohmann::json trace;
  ASSERT_NO_THROW(trace = Parse(*text));
  const auto x = EventsWithPhase(trace, "X");
  ASSERT_THAT(x, SizeIs(2));
  EXPECT_EQ(x[1]["name"], "lo\xef\xbf\xbd" "ad\xef\xbf\xbd");  // U+FFFD for each bad sequence
  EXPECT_EQ(x[1]["args"]["origin"], "\xef\xbf\xbd");
  EXPECT_EQ(trace["otherData"]["kernel"], "k\xef\xbf\xbd");
}

TEST(ChromeTraceTest, NamesWithQuotesAndControlCharactersAreEscaped) {
  Timeline t = SmallTimeline();
  t.layout.sites[0].name = "a \"quoted\"\\ name\n\t\x01";
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  EXPECT_EQ(EventsWithPhase(Parse(*text), "X")[0]["name"], "a \"quoted\"\\ name\n\t\x01");
}

TEST(ChromeTraceTest, ASliceLongerThanTheFormattingBufferIsWrittenWhole) {
  // A 40 KB site name (over the writer's 16 KiB local buffer) between two short slices.
  Timeline t = SmallTimeline();
  const std::string long_name(40'000, 'n');
  t.layout.sites[1].name = long_name;
  t.units[0].slices.push_back(Slice{0, 1, kOrigin + 6'000, kOrigin + 7'000, false});
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  const std::vector<nlohmann::json> x = EventsWithPhase(Parse(*text), "X");
  ASSERT_THAT(x, SizeIs(3));
  EXPECT_EQ(x[0]["name"], "mainloop");
  EXPECT_EQ(x[1]["name"], long_name);
  EXPECT_EQ(x[1]["ts"], 1.234);
  EXPECT_EQ(x[2]["name"], "mainloop");
  EXPECT_EQ(x[2]["dur"], 1.0);
}

TEST(ChromeTraceTest, TruncatedAndOverflowedUnitsAppearWithTheirVerdict) {
  Timeline t = SmallTimeline();
  t.units[0].verdict = Verdict::kTruncated;
  t.units[0].verdict_reason = "no epilogue: the unit never finished";
  t.units[0].slices[0].repaired = true;
  UnitTimeline missing;
  missing.block_linear = 3;
  missing.block_index = {3, 0, 0};
  missing.unit_index = 0;
  missing.sm_id = 0;
  missing.has_record = false;
  missing.verdict = Verdict::kMissing;
  missing.verdict_reason = "no record";
  t.units.insert(t.units.begin(), missing);
  for (ChromeEventStyle style : {ChromeEventStyle::kComplete, ChromeEventStyle::kBeginEnd}) {
    absl::StatusOr<std::string> text = Render(t, style);
    ASSERT_THAT(text, IsOk());
    const nlohmann::json trace = Parse(*text);
    EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
    const nlohmann::json truncated = Metadata(trace, "thread_name", 17);
    EXPECT_EQ(truncated["args"]["name"], "block (3,0,0) warpgroup 1 [truncated]");
    EXPECT_EQ(truncated["args"]["verdict"], "truncated");
    EXPECT_EQ(truncated["args"]["reason"], "no epilogue: the unit never finished");
    // A unit without a record has no SM: it goes to the "no record" process, not SM 0.
    EXPECT_EQ(Metadata(trace, "thread_name", 1 << 20)["args"]["verdict"], "missing");
    EXPECT_EQ(Metadata(trace, "process_name", 1 << 20)["args"]["name"], "no record");
    EXPECT_EQ(Metadata(trace, "process_name", 0), nullptr);
    const auto slices = EventsWithPhase(trace, style == ChromeEventStyle::kComplete ? "X" : "B");
    ASSERT_THAT(slices, SizeIs(2));
    EXPECT_EQ(slices[0]["args"]["verdict"], "truncated");
    EXPECT_EQ(slices[0]["args"]["repaired"], true);
    EXPECT_EQ(slices[1]["args"]["verdict"], "truncated");
    EXPECT_FALSE(slices[1]["args"].contains("repaired"));
  }
}

TEST(ChromeTraceTest, ProcessesAreOrderedBySmAndThreadsFollowTheTimeline) {
  Timeline t = SyntheticTimeline({.blocks = 6, .units_per_block = 2, .iterations = 2,
                                  .num_sms = 4});
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  std::vector<int64_t> process_pids, thread_tids;
  const nlohmann::json trace = Parse(*text);
  for (const auto& e : trace["traceEvents"]) {
    if (e["name"] == "process_name") process_pids.push_back(e["pid"]);
    if (e["name"] == "thread_name") thread_tids.push_back(e["tid"]);
  }
  EXPECT_THAT(process_pids, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(thread_tids, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
}

TEST(ChromeTraceTest, OutputIsDeterministic) {
  const Timeline t = SyntheticTimeline({.blocks = 9, .units_per_block = 2, .iterations = 5});
  for (ChromeEventStyle style : {ChromeEventStyle::kComplete, ChromeEventStyle::kBeginEnd}) {
    absl::StatusOr<std::string> a = Render(t, style);
    absl::StatusOr<std::string> b = Render(t, style);
    ASSERT_THAT(a, IsOk());
    ASSERT_THAT(b, IsOk());
    EXPECT_EQ(*a, *b);
  }
}

TEST(ChromeTraceTest, LargeSyntheticTimelineHoldsEveryInvariantInBothStyles) {
  const Timeline t = SyntheticTimeline({.blocks = 40, .units_per_block = 3, .iterations = 20,
                                        .num_sms = 7});
  size_t expected_slices = 0;
  for (const auto& u : t.units) expected_slices += u.slices.size();
  for (ChromeEventStyle style : {ChromeEventStyle::kComplete, ChromeEventStyle::kBeginEnd}) {
    absl::StatusOr<std::string> text = Render(t, style);
    ASSERT_THAT(text, IsOk());
    const nlohmann::json trace = Parse(*text);
    EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty()) << ChromeEventStyleName(style);
    const size_t begins =
        EventsWithPhase(trace, style == ChromeEventStyle::kComplete ? "X" : "B").size();
    EXPECT_EQ(begins, expected_slices);
    if (style == ChromeEventStyle::kBeginEnd) {
      EXPECT_EQ(EventsWithPhase(trace, "E").size(), expected_slices);
    }
  }
}

TEST(ChromeTraceTest, CheckerCatchesTheDefectsViewersHide) {
  // The checker must be able to fail: feed it the defects the writer never produces.
  const nlohmann::json bad = nlohmann::json::parse(R"({
    "displayTimeUnit": "us", "otherData": {},
    "traceEvents": [
      {"ph": "X", "ts": "12", "dur": 1, "pid": 1, "tid": 1},
      {"ph": "X", "ts": 10, "dur": -1, "pid": 1, "tid": 1},
      {"ph": "X", "ts": 20, "dur": 10, "pid": 1, "tid": 1},
      {"ph": "X", "ts": 25, "dur": 10, "pid": 1, "tid": 1},
      {"ph": "E", "ts": 40, "pid": 1, "tid": 2},
      {"ph": "B", "ts": 50, "pid": 1, "tid": 2}]})");
  const std::vector<std::string> v = ChromeTraceViolations(bad);
  auto has = [&](const std::string& what) {
    for (const auto& s : v) {
      if (s.find(what) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("displayTimeUnit"));
  EXPECT_TRUE(has("ts missing or not a number"));
  EXPECT_TRUE(has("negative dur"));
  EXPECT_TRUE(has("overlaps its enclosing slice"));
  EXPECT_TRUE(has("E without an open B"));
  EXPECT_TRUE(has("B events never closed"));
  EXPECT_TRUE(has("no thread_name metadata"));
}

struct MalformedCase {
  const char* name;
  void (*mutate)(Timeline&);
  const char* message;
};

class ChromeTraceRejectsMalformedTimeline : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(ChromeTraceRejectsMalformedTimeline, WithAMessageNamingUnitAndSliceAndWritesNothing) {
  Timeline t = SmallTimeline();
  GetParam().mutate(t);
  std::string out;
  llvm::raw_string_ostream os(out);
  EXPECT_THAT(WriteChromeTrace(t, {}, os),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
  os.flush();
  EXPECT_THAT(out, IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ChromeTraceRejectsMalformedTimeline,
    ::testing::Values(
        MalformedCase{"SiteOutsideTable", [](Timeline& t) { t.units[0].slices[1].site = 9; },
                      "block (3,0,0) warpgroup 1, slice 1 (site 9, depth 1, "},
        MalformedCase{"EndBeforeBegin",
                      [](Timeline& t) { t.units[0].slices[1].end_ns = kOrigin + 1'100; },
                      "slice 1 (site 1, depth 1, 1700000000123458023..1700000000123457889 ns): "
                      "ends before it begins"},
        MalformedCase{"BeforeOrigin",
                      [](Timeline& t) { t.units[0].slices[0].begin_ns = kOrigin - 1; },
                      "begins before the timeline origin"},
        MalformedCase{"ChildOutlivesParent",
                      [](Timeline& t) { t.units[0].slices[1].end_ns = kOrigin + 10'000; },
                      "ends after its parent"},
        MalformedCase{"DepthSkipsALevel", [](Timeline& t) { t.units[0].slices[1].depth = 2; },
                      "deeper than its enclosing slices"},
        MalformedCase{"SiblingsOverlap", [](Timeline& t) { t.units[0].slices[1].depth = 0; },
                      "overlaps the previous slice at its depth"},
        MalformedCase{"OutOfOrder",
                      [](Timeline& t) {
                        t.units[0].slices.push_back(
                            Slice{1, 0, kOrigin + 20, kOrigin + 30, false});
                      },
                      "begins before the previous slice"},
        MalformedCase{"FarBeyondTheOrigin",
                      [](Timeline& t) {
                        t.origin_ns = -(int64_t{1} << 62);
                        t.units[0].slices[0].end_ns = INT64_MAX;
                      },
                      "more than 2^63 ns after the timeline origin"},
        MalformedCase{"DuplicateUnit",
                      [](Timeline& t) { t.units.push_back(t.units[0]); },
                      "strictly ordered by (block, unit)"}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.name; });

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ChromeTraceFileTest, WritesAParsableFileWithNoExecutableBits) {
  const std::string path = TestTempPath("trace.json");
  ASSERT_THAT(WriteChromeTraceFile(SmallTimeline(), {}, path), IsOk());
  EXPECT_THAT(ChromeTraceViolations(Parse(ReadFile(path))), IsEmpty());
  llvm::sys::fs::file_status status;
  ASSERT_FALSE(llvm::sys::fs::status(path, status));
  EXPECT_EQ(status.permissions() & llvm::sys::fs::all_exe, 0) << "trace files are not programs";
}

TEST(ChromeTraceFileTest, MissingDirectoryIsNotFoundAndNamesThePath) {
  const std::string path = TestTempPath("no/such/dir/trace.json");
  EXPECT_THAT(WriteChromeTraceFile(SmallTimeline(), {}, path),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(path)));
}

TEST(ChromeTraceFileTest, AMalformedTimelineLeavesTheExistingFileUntouched) {
  const std::string path = TestTempPath("kept.json");
  {
    std::ofstream out(path);
    out << "previous";
  }
  Timeline t = SmallTimeline();
  t.units[0].slices[1].site = 42;
  EXPECT_THAT(WriteChromeTraceFile(t, {}, path),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("site 42")));
  EXPECT_EQ(ReadFile(path), "previous");
}

TEST(ChromeEventStyleTest, ParsesTheCommandLineSpellings) {
  EXPECT_EQ(*ParseChromeEventStyle("x"), ChromeEventStyle::kComplete);
  EXPECT_EQ(*ParseChromeEventStyle("X"), ChromeEventStyle::kComplete);
  EXPECT_EQ(*ParseChromeEventStyle("be"), ChromeEventStyle::kBeginEnd);
  EXPECT_THAT(ParseChromeEventStyle("json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'x'")));
}


}  // namespace
}  // namespace warptrace

namespace warptrace {
namespace {

// Times from the host backend are labelled as such in otherData, never passed off as GPU
// times.
TEST(ChromeTraceWriterTest, OtherDataSaysWhenTimesComeFromTheHostBackend) {
  Timeline t = SyntheticTimeline({.blocks = 1, .iterations = 1});
  t.layout.clock.host_backend = true;
  std::string text;
  llvm::raw_string_ostream os(text);
  ASSERT_THAT(WriteChromeTrace(t, {}, os), IsOk());
  os.flush();
  EXPECT_THAT(nlohmann::json::parse(text)["otherData"]["time_source"].get<std::string>(),
              HasSubstr("host backend: CPU steady clock, not a GPU"));
}

TEST(ChromeTraceWriterTest, ChunksMakeOneValidTraceWithTheWritersOrigin) {
  const Timeline whole = testing::SyntheticTimeline({.blocks = 6, .iterations = 3});
  Timeline first = whole, second = whole;
  first.units.resize(5);
  second.units.erase(second.units.begin(), second.units.begin() + 5);
  second.origin_ns = 0;  // ignored: the writer's origin applies
  std::string text;
  llvm::raw_string_ostream os(text);
  {
    ChromeTraceWriter writer(whole.layout, whole.origin_ns, {}, os);
    ASSERT_THAT(writer.Add(first), IsOk());
    ASSERT_THAT(writer.Add(second), IsOk());
    ASSERT_THAT(writer.Finish("note", false), IsOk());
  }
  os.flush();
  const nlohmann::json trace = nlohmann::json::parse(text);
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  EXPECT_EQ(trace["otherData"]["clock"], "note");
  EXPECT_EQ(trace["otherData"]["units"], 12);
  absl::StatusOr<std::string> reference =
      Render(whole, ChromeEventStyle::kComplete, ChromeSliceArgs::kLean);
  ASSERT_THAT(reference, IsOk());
  EXPECT_EQ(EventsWithPhase(trace, "X"), EventsWithPhase(Parse(*reference), "X"));
}

TEST(ChromeTraceWriterTest, RejectsAChunkThatGoesBackInBlockOrder) {
  const Timeline whole = testing::SyntheticTimeline({.blocks = 4, .iterations = 1});
  std::string text;
  llvm::raw_string_ostream os(text);
  ChromeTraceWriter writer(whole.layout, whole.origin_ns, {}, os);
  ASSERT_THAT(writer.Add(whole), IsOk());
  EXPECT_THAT(writer.Add(whole), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("follows block (3,0,0) warpgroup 1")));
  ASSERT_THAT(writer.Finish("", false), IsOk());
  EXPECT_THAT(writer.Add(whole), StatusIs(absl::StatusCode::kFailedPrecondition, _));
  EXPECT_THAT(writer.Finish("", false), StatusIs(absl::StatusCode::kFailedPrecondition, _));
}

// A writer destroyed before Finish (a dump that stopped, an exception unwinding it) writes
// nothing more: its stream may be gone by then (issue 55: the destructor used to finish the
// trace into a destroyed stream).
TEST(ChromeTraceWriterTest, DestroyedUnfinishedWritesNothingMore) {
  const Timeline whole = testing::SyntheticTimeline({.blocks = 2, .iterations = 1});
  std::string text;
  llvm::raw_string_ostream os(text);
  size_t written_before_destruction = 0;
  {
    ChromeTraceWriter writer(whole.layout, whole.origin_ns, {}, os);
    ASSERT_THAT(writer.Add(whole), IsOk());
    os.flush();
    written_before_destruction = text.size();
  }
  os.flush();
  EXPECT_GT(written_before_destruction, 0u);
  EXPECT_EQ(text.size(), written_before_destruction);
}

TEST(ChromeTraceWriterTest, RejectsAUnitIndexPastTheLayoutsUnitsPerBlock) {
  Timeline t = testing::SyntheticTimeline({.blocks = 1, .units_per_block = 2});
  t.units[1].unit_index = 2;  // the block holds 2 warpgroups
  std::string text;
  llvm::raw_string_ostream os(text);
  ChromeTraceWriter writer(t.layout, t.origin_ns, {}, os);
  EXPECT_THAT(writer.Add(t), StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("not below the layout's 2 units per block")));
}


// ---- Hand-offs: instants, async lanes, flows --------------------------------------------

// The hand-off synthesizer's trace (2 blocks x producer/consumer warps) through the dump;
// `derived`: its copies record their begins alone (trace version 5).
Timeline HandoffTimeline(bool derived = false) {
  testing::HandoffSpec spec;
  spec.derived_copy_ends = derived;
  absl::StatusOr<testing::HandoffTrace> trace = testing::SynthesizeHandoffs(spec);
  EXPECT_THAT(trace, IsOk());
  absl::StatusOr<std::unique_ptr<Trace>> collected =
      CollectTrace(trace->layout, std::move(trace->words));
  EXPECT_THAT(collected, IsOk());
  EXPECT_TRUE((*collected)->has_timeline);
  return (*collected)->timeline;
}

TEST(ChromeTraceHandoffTest, ArrivalsAreThreadInstantsNamingBarrierAndPhase) {
  const Timeline t = HandoffTimeline();
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  const nlohmann::json trace = Parse(*text);
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  const std::vector<nlohmann::json> instants = EventsWithPhase(trace, "i");
  ASSERT_THAT(instants, SizeIs(16));  // 4 units x 4 arrivals
  EXPECT_EQ(instants[0]["name"], "arrive full");
  EXPECT_EQ(instants[0]["cat"], "barrier_arrive");
  EXPECT_EQ(instants[0]["s"], "t");
  EXPECT_EQ(instants[0]["tid"], 0);
  EXPECT_EQ(instants[0]["args"]["barrier"], "full[0]");
  EXPECT_EQ(instants[0]["args"]["phase"], 0);
  EXPECT_EQ(instants[3]["args"]["barrier"], "full[1]");
  EXPECT_EQ(instants[3]["args"]["phase"], 1);
  EXPECT_EQ(MicrosToNs(instants[0]["ts"]), t.units[0].instants[0].ns - t.origin_ns);
  EXPECT_EQ(trace["otherData"]["instants"], 16);
}

TEST(ChromeTraceHandoffTest, AsyncCopiesGoOnTheirUnitsOwnNamedAsyncLane) {
  const Timeline t = HandoffTimeline();
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kBeginEnd);
  ASSERT_THAT(text, IsOk());
  const nlohmann::json trace = Parse(*text);
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  std::vector<nlohmann::json> copies;
  for (const nlohmann::json& e : EventsWithPhase(trace, "X")) {
    if (e["cat"] == "async_copy") copies.push_back(e);
  }
  ASSERT_THAT(copies, SizeIs(8)) << "async spans are X events in either style";
  // Lane tid: (lane + 1) * units_per_block * blocks + the unit's tid = 1 * 2 * 2 + 0.
  EXPECT_EQ(copies[0]["tid"], 4);
  EXPECT_EQ(copies[0]["args"]["issue"], 0);
  EXPECT_EQ(copies[0]["args"]["barrier"], "full[0]");
  EXPECT_EQ(copies[4]["tid"], 6) << "block 1's producer";
  bool named = false;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["tid"] == 4) {
      EXPECT_EQ(e["args"]["name"], "block (0,0,0) warp 0 async");
      named = true;
    }
  }
  EXPECT_TRUE(named);
  EXPECT_EQ(trace["otherData"]["async_spans"], 8);
}

TEST(ChromeTraceHandoffTest, EveryLinkIsAFlowBoundInsideItsSlicesOnBothEnds) {
  const Timeline t = HandoffTimeline();
  for (ChromeEventStyle style : {ChromeEventStyle::kComplete, ChromeEventStyle::kBeginEnd}) {
    absl::StatusOr<std::string> text = Render(t, style, ChromeSliceArgs::kLean);
    ASSERT_THAT(text, IsOk());
    const nlohmann::json trace = Parse(*text);
    // The checker pairs every "s" with one "f" (same id, name, cat) and checks that each is
    // strictly inside a slice of its own thread.
    EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
    const std::vector<nlohmann::json> starts = EventsWithPhase(trace, "s");
    const std::vector<nlohmann::json> finishes = EventsWithPhase(trace, "f");
    EXPECT_THAT(starts, SizeIs(20));  // per block: 6 hand-offs + 4 copies
    EXPECT_THAT(finishes, SizeIs(20));
    EXPECT_EQ(trace["otherData"]["flows"], 20);
    EXPECT_EQ(trace["otherData"]["flows_unanchored"], 0);
    int handoffs = 0;
    for (const nlohmann::json& s : starts) {
      if (s["cat"] != "arrival_to_release") continue;
      ++handoffs;
      EXPECT_EQ(s["name"], "hand-off");
      EXPECT_TRUE(s["args"]["completing"].get<bool>());
      for (const nlohmann::json& f : finishes) {
        if (f["id"] != s["id"]) continue;
        EXPECT_NE(f["tid"], s["tid"]) << "an arrival releases a wait of the other warp";
        EXPECT_EQ(f["pid"], s["pid"]);
        EXPECT_LT(MicrosToNs(s["ts"]), MicrosToNs(f["ts"]));
      }
    }
    EXPECT_EQ(handoffs, 12);
  }
}

// Trace version 5: every copy's flow is kept, from its async span to the consumer's wait
// that released the copy's phase (the derived end).
TEST(ChromeTraceHandoffTest, ADerivedCopyEndsFlowIsDrawnToTheReleasedWait) {
  const Timeline t = HandoffTimeline(/*derived=*/true);
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  const nlohmann::json trace = Parse(*text);
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  EXPECT_EQ(trace["otherData"]["flows"], 20);  // per block: 6 hand-offs + 4 copies
  EXPECT_EQ(trace["otherData"]["flows_unanchored"], 0);
  const std::vector<nlohmann::json> finishes = EventsWithPhase(trace, "f");
  int copies = 0;
  for (const nlohmann::json& s : EventsWithPhase(trace, "s")) {
    if (s["cat"] != "issue_to_completion") continue;
    ++copies;
    EXPECT_GE(s["tid"].get<int>(), 4) << "starts on the producer's async lane";
    for (const nlohmann::json& f : finishes) {
      if (f["id"] != s["id"]) continue;
      EXPECT_LT(f["tid"].get<int>(), 4) << "ends on a unit's own track: the consumer's wait";
      EXPECT_EQ(f["tid"].get<int>() % 2, 1) << "the consumer warp";
      EXPECT_LT(MicrosToNs(s["ts"]), MicrosToNs(f["ts"]));
    }
  }
  EXPECT_EQ(copies, 8);
}

TEST(ChromeTraceHandoffTest, AFlowWithAnEndOutsideEverySliceIsLeftOutAndCounted) {
  Timeline t = HandoffTimeline();
  // Unanchor one end of the first flow, in both units that list it.
  const uint64_t id = t.units[1].flows[0].id;
  for (UnitTimeline& u : t.units) {
    for (Flow& f : u.flows) {
      if (f.id == id) f.from.anchor = FlowEnd::kNone;
    }
  }
  absl::StatusOr<std::string> text = Render(t, ChromeEventStyle::kComplete);
  ASSERT_THAT(text, IsOk());
  const nlohmann::json trace = Parse(*text);
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  EXPECT_THAT(EventsWithPhase(trace, "s"), SizeIs(19));
  EXPECT_THAT(EventsWithPhase(trace, "f"), SizeIs(19));
  EXPECT_EQ(trace["otherData"]["flows_unanchored"], 1);
}

TEST(ChromeTraceHandoffTest, CheckerCatchesUnpairedAndUnboundFlows) {
  const nlohmann::json bad = nlohmann::json::parse(R"({
    "displayTimeUnit": "ns", "otherData": {},
    "traceEvents": [
      {"ph": "X", "name": "a", "ts": 10, "dur": 10, "pid": 1, "tid": 1},
      {"ph": "s", "name": "h", "cat": "c", "id": 1, "ts": 12, "pid": 1, "tid": 1},
      {"ph": "s", "name": "h", "cat": "c", "id": 2, "ts": 30, "pid": 1, "tid": 1},
      {"ph": "f", "name": "h", "cat": "c", "id": 2, "ts": 15, "pid": 1, "tid": 1},
      {"ph": "i", "name": "x", "ts": 11, "pid": 1, "tid": 1}]})");
  const std::vector<std::string> v = ChromeTraceViolations(bad);
  auto has = [&](const std::string& what) {
    for (const auto& s : v) {
      if (s.find(what) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("1 \"s\" and 0 \"f\" events"));
  EXPECT_TRUE(has("flow event is not strictly inside a slice"));
  EXPECT_TRUE(has("does not bind to its enclosing slice"));
  EXPECT_TRUE(has("instant without thread scope"));
}


}  // namespace
}  // namespace warptrace
