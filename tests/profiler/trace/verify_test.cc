#include "profiler/trace/verify.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/testing/temp_path.h"
#include "format/layout.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "nlohmann/json.hpp"
#include "profiler/testing/handoff_synthesizer.h"
#include "profiler/testing/trace_synthesizer.h"
#include "profiler/trace/decode.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::warptrace::testing::Corruption;
using ::warptrace::testing::CorruptionName;
using ::warptrace::testing::CorruptionSpec;
using ::warptrace::testing::InjectCorruption;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;
using ::warptrace::testing::SynthOptions;
using ::warptrace::testing::TraceSynthesizer;
using ::warptrace::testing::UnitScript;

// 3 blocks x 2 warps = 6 units, capacity 4, 8 SMs.
TraceLayout SmallLayout() {
  TraceLayout layout;
  layout.kernel_name = "k";
  layout.device_name = "test device";
  layout.grid = {3, 1, 1};
  layout.block = {64, 1, 1};
  layout.unit = UnitSpec::Warp();
  layout.capacity = 4;
  layout.clock.num_sms = 8;
  layout.sites = {{0, "outer", SiteKind::kRegion, ""}, {1, "inner", SiteKind::kRegion, ""}};
  return layout;
}

// outer { inner }: events B0 B1 E1 E0 with gaps 30, 120, 30 cycles (work + 20 per event).
UnitScript OuterInner() {
  UnitScript s;
  s.Begin(0).Work(10).Region(1, 100).Work(10).End(0);
  return s;
}

class VerifyTest : public ::testing::Test {
 protected:
  void Build(const UnitScript& script = OuterInner(), SynthOptions options = {}) {
    TraceSynthesizer synth(layout_, options);
    synth.SetScript(script);
    for (const auto& [record, s] : scripts_) synth.SetUnitScript(record, s);
    absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
    ASSERT_THAT(words, IsOk());
    words_ = *std::move(words);
  }
  void Inject(CorruptionSpec spec) {
    ASSERT_THAT(InjectCorruption(layout_, spec, absl::MakeSpan(words_)), IsOk());
  }
  VerifyReport Run(VerifyOptions options = {}) {
    absl::StatusOr<DecodedTrace> decoded = Decode(layout_, words_);
    EXPECT_THAT(decoded, IsOk());
    decoded_ = *std::move(decoded);
    return Verify(decoded_, options);
  }
  // The only finding of `report` that is not a repair note.
  static const Finding& OnlyProblem(const VerifyReport& report) {
    const Finding* found = nullptr;
    int count = 0;
    for (const Finding& f : report.findings) {
      if (f.kind == FindingKind::kRepaired) continue;
      found = &f;
      ++count;
    }
    EXPECT_EQ(count, 1) << ::testing::PrintToString(report.findings.size());
    static const Finding kNone;
    return found != nullptr ? *found : kNone;
  }

  TraceLayout layout_ = SmallLayout();
  std::vector<std::pair<uint64_t, UnitScript>> scripts_;
  std::vector<uint32_t> words_;
  DecodedTrace decoded_;
};

TEST_F(VerifyTest, CleanTraceIsCompleteWithMeasuredOverhead) {
  Build();
  const VerifyReport report = Run();
  EXPECT_TRUE(report.ok());
  EXPECT_THAT(report.ToStatus(), IsOk());
  EXPECT_TRUE(report.findings.empty());
  ASSERT_THAT(report.units, SizeIs(6));
  for (const UnitVerdict& u : report.units) {
    EXPECT_EQ(u.verdict, Verdict::kComplete);
    EXPECT_EQ(u.reason, "");
    EXPECT_EQ(u.kept_events, 4u);
    EXPECT_EQ(u.open_regions, 0u);
    EXPECT_EQ(u.overhead_cycles, 30u);
  }
  EXPECT_EQ(report.verdict_counts[static_cast<int>(Verdict::kComplete)], 6u);
  EXPECT_EQ(report.kept_events, 24u);
  EXPECT_EQ(report.required_capacity(), 4u);
}

TEST_F(VerifyTest, ClockWraparoundIsNotAnError) {
  SynthOptions options;
  options.start_clock = 0xffffffc0u;  // wraps between the first and second event
  options.clock_offset_per_record = 0x20;
  Build(OuterInner(), options);
  const VerifyReport report = Run();
  EXPECT_THAT(report.ToStatus(), IsOk());
  for (const UnitVerdict& u : report.units) EXPECT_EQ(u.overhead_cycles, 30u);
}

struct HeaderCase {
  Corruption corruption;
  FindingKind kind;
  Verdict verdict;
  const char* text;
};

class VerifyHeaderTest : public VerifyTest, public ::testing::WithParamInterface<HeaderCase> {};

TEST_P(VerifyHeaderTest, NamesTheProblemWithItsCoordinates) {
  Build();
  Inject({GetParam().corruption, /*record=*/3});
  const VerifyReport report = Run();
  const Finding& f = OnlyProblem(report);
  EXPECT_EQ(f.kind, GetParam().kind) << FindingKindName(f.kind);
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(f.record_index, 3u);
  EXPECT_EQ(f.block_linear, 1u);
  EXPECT_EQ(f.unit_index, 1u);
  EXPECT_THAT(f.message, HasSubstr(GetParam().text));
  EXPECT_EQ(report.units[3].verdict, GetParam().verdict);
  EXPECT_EQ(report.units[3].reason, f.message);
  EXPECT_THAT(report.ToStatus(),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("\n  block (1,0,0) warp 1: "), HasSubstr(GetParam().text))));
}

INSTANTIATE_TEST_SUITE_P(
    EachClass, VerifyHeaderTest,
    ::testing::Values(
        HeaderCase{Corruption::kMissingUnit, FindingKind::kMissingRecord, Verdict::kMissing,
                   "never ran its prologue"},
        HeaderCase{Corruption::kBadMagic, FindingKind::kBadMagic, Verdict::kCorrupt,
                   "header magic is 0xdeadbeef"},
        HeaderCase{Corruption::kBadVersion, FindingKind::kBadVersion, Verdict::kCorrupt,
                   "trace ABI version 6, this build reads versions 1 to 5"},
        HeaderCase{Corruption::kBadHeaderWords, FindingKind::kBadHeaderWords, Verdict::kCorrupt,
                   "header says it is 17 words"},
        HeaderCase{Corruption::kBadChecksum, FindingKind::kBadChecksum, Verdict::kCorrupt,
                   "checksum"},
        HeaderCase{Corruption::kWrongBlock, FindingKind::kWrongBlock, Verdict::kCorrupt,
                   "header says block 2 but this buffer position holds block 1"},
        HeaderCase{Corruption::kWrongUnit, FindingKind::kWrongUnit, Verdict::kCorrupt,
                   "header says unit 2 but this buffer position holds unit 1"},
        HeaderCase{Corruption::kSmIdOutOfRange, FindingKind::kSmIdOutOfRange, Verdict::kCorrupt,
                   "SM id 8 is beyond the device's 8 SMs"},
        HeaderCase{Corruption::kEndBeforeStart, FindingKind::kEndBeforeStart, Verdict::kCorrupt,
                   "1000 ns before it starts"},
        HeaderCase{Corruption::kBadGlobaltimer, FindingKind::kBadGlobaltimer, Verdict::kCorrupt,
                   "start globaltimer 9223372037854775808 ns is past 2^62 ns"},
        HeaderCase{Corruption::kIncompleteUnit, FindingKind::kIncomplete, Verdict::kTruncated,
                   "the unit never finished"}),
    [](const ::testing::TestParamInfo<HeaderCase>& info) {
      std::string name = CorruptionName(info.param.corruption);
      name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
      return name;
    });

TEST_F(VerifyTest, DroppedEventsNameTheCapacityThatWouldHaveBeenEnough) {
  UnitScript six = OuterInner();
  six.Region(1, 5);
  UnitScript eight = six;
  eight.Region(1, 5);
  scripts_ = {{1, six}, {4, eight}};
  Build();
  const VerifyReport report = Run();
  EXPECT_EQ(report.max_attempted, 8u);
  EXPECT_EQ(report.required_capacity(), 8u);
  EXPECT_EQ(report.dropped_events, 6u);
  ASSERT_THAT(report.findings, SizeIs(2));
  EXPECT_EQ(report.findings[0].kind, FindingKind::kDroppedEvents);
  EXPECT_EQ(report.findings[0].record_index, 1u);
  EXPECT_THAT(report.findings[0].message,
              AllOf(HasSubstr("dropped 2 of 6 events"), HasSubstr("capacity is 4"),
                    HasSubstr("a capacity of 8 would have held every unit")));
  EXPECT_EQ(report.units[4].verdict, Verdict::kOverflowed);
  EXPECT_EQ(report.units[4].dropped, 4u);
  EXPECT_EQ(report.units[4].kept_events, 4u);
  EXPECT_THAT(report.ToStatus(),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("a capacity of 8 events per unit would have held every event")));
}

TEST_F(VerifyTest, DroppedEventsInjectedIntoAFullRecordAreFound) {
  Build();
  Inject({Corruption::kDroppedEvents, 2, -1, /*amount=*/3});
  const VerifyReport report = Run();
  const Finding& f = OnlyProblem(report);
  EXPECT_EQ(f.kind, FindingKind::kDroppedEvents);
  EXPECT_THAT(f.message, HasSubstr("dropped 3 of 7 events"));
  EXPECT_EQ(report.units[2].verdict, Verdict::kOverflowed);
}

TEST_F(VerifyTest, ReportsUnpairedEventAtTheOpenBegin) {
  Build();
  Inject({Corruption::kUnpairedEvent, 5});
  const VerifyReport report = Run();
  const Finding& f = OnlyProblem(report);
  EXPECT_EQ(f.kind, FindingKind::kUnpairedEvent);
  EXPECT_EQ(f.event_index, 0);
  EXPECT_THAT(f.message, AllOf(HasSubstr("\"outer\" begun at event 0 has no exit"),
                               HasSubstr("3 events recorded, an odd number")));
  EXPECT_EQ(report.units[5].verdict, Verdict::kCorrupt);
}

TEST_F(VerifyTest, ReportsExitWithoutBegin) {
  Build();
  Inject({Corruption::kExitWithoutBegin, 0});
  const VerifyReport report = Run();
  const Finding& f = OnlyProblem(report);
  EXPECT_EQ(f.kind, FindingKind::kExitWithoutBegin);
  EXPECT_EQ(f.event_index, 0);
  EXPECT_THAT(f.message, HasSubstr("exit of \"outer\" without its begin"));
  // A finding names its unit the way the timeline does (UnitName), never "block 0 unit 0".
  EXPECT_EQ(FormatFinding(f), "block (0,0,0) warp 0 event 0: " + f.message);
}

TEST_F(VerifyTest, ReportsMismatchedNesting) {
  Build();
  Inject({Corruption::kMismatchedNesting, 1});  // the first exit, event 2, exits "outer"
  const VerifyReport report = Run();
  const Finding& f = OnlyProblem(report);
  EXPECT_EQ(f.kind, FindingKind::kMismatchedNesting);
  EXPECT_EQ(f.event_index, 2);
  EXPECT_THAT(f.message, HasSubstr("exit of \"outer\" while \"inner\" (begun at event 1) is the "
                                   "innermost open region"));
}

TEST_F(VerifyTest, ReportsUnknownSite) {
  Build();
  Inject({Corruption::kUnknownSite, 2, /*event=*/1});
  const VerifyReport report = Run();
  const Finding& f = OnlyProblem(report);
  EXPECT_EQ(f.kind, FindingKind::kUnknownSite);
  EXPECT_EQ(f.event_index, 1);
  EXPECT_THAT(f.message, HasSubstr("site id 2 is not in the layout's site table (2 sites"));
}

TEST_F(VerifyTest, ReportsClockGoingBackwardsBeyondTheOverhead) {
  Build();
  Inject({Corruption::kClockBackwards, 4});  // the last event, 100000 cycles back
  const VerifyReport report = Run();
  const Finding& f = OnlyProblem(report);
  EXPECT_EQ(f.kind, FindingKind::kClockBackwards);
  EXPECT_EQ(f.event_index, 3);
  EXPECT_THAT(f.message, AllOf(HasSubstr("goes back 100000 cycles"),
                               HasSubstr("measured overhead of 30 cycles")));
}

TEST_F(VerifyTest, ToleratesABackwardStepWithinTheOverhead) {
  Build();
  Inject({Corruption::kClockBackwards, 4, /*event=*/3, /*amount=*/25});
  const VerifyReport report = Run();
  EXPECT_THAT(report.ToStatus(), IsOk());
  EXPECT_EQ(report.units[4].verdict, Verdict::kComplete);
}

TEST_F(VerifyTest, ClockGoingBackwardsAcrossTheWrapIsStillFound) {
  SynthOptions options;
  options.start_clock = 0xfffffff0u;
  Build(OuterInner(), options);
  // Event 0 lands just past the wrap, at 0x0000000e; event 1 is stamped 5000 cycles before
  // it, at 0xffffec96: a backward step across the wrap, not a forward one of ~2^32.
  Inject({Corruption::kClockBackwards, 0, /*event=*/1, /*amount=*/5000});
  const VerifyReport report = Run();
  const Finding& f = OnlyProblem(report);
  EXPECT_EQ(f.kind, FindingKind::kClockBackwards);
  EXPECT_EQ(f.event_index, 1);
  EXPECT_THAT(f.message, HasSubstr("goes back 5000 cycles"));
}

// A unit that ran 3 s at 1.5 GHz (4.5e9 cycles, the clock wraps once): 1/4..2x the nominal
// clock allows two wrap counts over 3 s, so the wraps between its events cannot be checked
// against the globaltimer. That is said, as a warning: nothing is squeezed silently.
TEST_F(VerifyTest, WrapsALongUnitsSpanCannotConfirmAreAWarning) {
  layout_.clock.nominal_sm_clock_khz = 1'500'000;
  SynthOptions options;
  options.cycles_per_ns = 1.5;
  UnitScript script;
  script.Begin(0).Region(1, 2'250'000'000u).Work(2'250'000'000u).End(0);
  Build(script, options);
  const VerifyReport report = Run();
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.warnings, 6u);
  ASSERT_THAT(report.findings, SizeIs(6));
  const Finding& f = report.findings[0];
  EXPECT_EQ(f.kind, FindingKind::kClockAmbiguous);
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_THAT(f.message, AllOf(HasSubstr("cannot be checked"), HasSubstr("2 different counts")));
  EXPECT_EQ(report.units[0].verdict, Verdict::kComplete);
}

// A bit flip in the header's flags word (issue 55) to a bit no recorder sets is an error;
// it used to pass verification unnoticed (flags are not in the header checksum).
TEST_F(VerifyTest, HeaderFlagsWithUnknownBitsAreAnError) {
  Build();
  const uint64_t record_words = abi::RecordWords(layout_.capacity);
  words_[2 * record_words + 7] |= 0x00010000u;  // flags
  const VerifyReport report = Run();
  const Finding& f = OnlyProblem(report);
  EXPECT_EQ(f.kind, FindingKind::kUnknownFlags) << FindingKindName(f.kind);
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(f.record_index, 2u);
  EXPECT_THAT(f.message, HasSubstr("header flags 0x00010001 have bits no recorder sets"));
  EXPECT_EQ(report.units[2].verdict, Verdict::kCorrupt);
}

// A bit flip in the end globaltimer's high word (issue 55) is a damaged header, an error,
// as it is for the start stamp; it used to pass with a warning that the unit "ran
// 9223372036854807179 ns".
TEST_F(VerifyTest, AnEndGlobaltimerPastAnyDevicesIsAnError) {
  Build();
  const uint64_t record_words = abi::RecordWords(layout_.capacity);
  words_[2 * record_words + 13] |= 0x80000000u;  // end globaltimer, high word
  const VerifyReport report = Run();
  const Finding& f = OnlyProblem(report);
  EXPECT_EQ(f.kind, FindingKind::kBadGlobaltimer) << FindingKindName(f.kind);
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(f.record_index, 2u);
  EXPECT_THAT(f.message, HasSubstr("end globaltimer"));
  EXPECT_EQ(report.units[2].verdict, Verdict::kCorrupt);
}

// A real gap of 2^32 cycles or more loses a wrap: the chain reads 5 M cycles, but the unit's
// 2.2 s globaltimer span at a nominal 1 GHz allows only 0.55e9..4.4e9 cycles, whose one
// total ≡ the chain mod 2^32 is a wrap more. The wrap cannot be placed between the events.
TEST_F(VerifyTest, WrapsLostBetweenEventsAreAnErrorNamingTheSpan) {
  layout_.clock.nominal_sm_clock_khz = 1'000'000;
  SynthOptions options;
  options.cycles_per_ns = 1.0;
  options.start_globaltimer_ns = 0;
  UnitScript script;
  script.Begin(0).Work(5'000'000).End(0);
  Build(script, options);
  // Record 2's end globaltimer (header words 12, 13) moved to 2.2 s after its start.
  const uint64_t record_words = abi::RecordWords(layout_.capacity);
  words_[2 * record_words + 12] = 2'200'000'000u;
  words_[2 * record_words + 13] = 0;
  const VerifyReport strict = Run();
  const Finding& f = OnlyProblem(strict);
  EXPECT_EQ(f.kind, FindingKind::kClockWrapsLost);
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(f.record_index, 2u);
  EXPECT_THAT(f.message, AllOf(HasSubstr("2200000000 ns"), HasSubstr("1 wrap of %clock fewer"),
                               HasSubstr("cannot be placed")));
  EXPECT_EQ(strict.units[2].verdict, Verdict::kCorrupt);
  const VerifyReport repaired = Run({.allow_truncated = true});
  EXPECT_TRUE(repaired.ok());
  EXPECT_FALSE(repaired.units[2].close_at_end_stamp);
}

TEST_F(VerifyTest, StrictModeListsEveryProblemOneLineEach) {
  Build();
  Inject({Corruption::kMissingUnit, 0});
  Inject({Corruption::kUnknownSite, 2});
  Inject({Corruption::kSmIdOutOfRange, 5});
  const VerifyReport report = Run();
  EXPECT_EQ(report.errors, 3u);
  const absl::Status status = report.ToStatus();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("3 errors in 3 of 6 units")));
  const std::vector<std::string> lines = absl::StrSplit(std::string(status.message()), '\n');
  ASSERT_THAT(lines, SizeIs(4));
  EXPECT_THAT(lines[1], HasSubstr("block (0,0,0) warp 0: no record"));
  EXPECT_THAT(lines[2], HasSubstr("block (1,0,0) warp 0 event 0: site id 2"));
  EXPECT_THAT(lines[3], HasSubstr("block (2,0,0) warp 1: SM id 8"));
}

TEST_F(VerifyTest, AllowTruncatedKeepsTheValidPrefixAndWarns) {
  Build();
  Inject({Corruption::kUnknownSite, 2, /*event=*/2});
  const VerifyReport report = Run({.allow_truncated = true});
  EXPECT_TRUE(report.ok());
  EXPECT_THAT(report.ToStatus(), IsOk());
  EXPECT_EQ(report.errors, 0u);
  const UnitVerdict& u = report.units[2];
  EXPECT_EQ(u.verdict, Verdict::kTruncated);
  EXPECT_TRUE(u.repaired);
  EXPECT_EQ(u.kept_events, 2u);
  EXPECT_EQ(u.open_regions, 2u);
  EXPECT_FALSE(u.close_at_end_stamp);
  ASSERT_THAT(report.findings, SizeIs(2));
  EXPECT_EQ(report.findings[0].kind, FindingKind::kUnknownSite);
  EXPECT_EQ(report.findings[0].severity, Severity::kWarning);
  EXPECT_EQ(report.findings[1].kind, FindingKind::kRepaired);
  EXPECT_EQ(report.findings[1].severity, Severity::kWarning);
  EXPECT_THAT(report.findings[1].message,
              HasSubstr("kept the first 2 of 4 events and closed 2 open regions at the unit's "
                        "last kept event"));
}

TEST_F(VerifyTest, AllowTruncatedClosesAnOverflowedUnitAtItsEndStamp) {
  UnitScript nested;  // B0 B1 E1 B1 | E1 E0 dropped
  nested.Begin(0).Region(1, 10).Begin(1).Work(10).End(1).End(0);
  scripts_ = {{1, nested}};
  Build();
  const VerifyReport report = Run({.allow_truncated = true});
  EXPECT_THAT(report.ToStatus(), IsOk());
  const UnitVerdict& u = report.units[1];
  EXPECT_EQ(u.verdict, Verdict::kOverflowed);
  EXPECT_EQ(u.kept_events, 4u);
  EXPECT_EQ(u.open_regions, 2u);
  EXPECT_TRUE(u.close_at_end_stamp);
  EXPECT_TRUE(u.repaired);
  EXPECT_EQ(report.warnings, 2u);  // the drop and its repair
}

TEST_F(VerifyTest, FindingsPastTheCapsAreCountedNotListed) {
  Build();
  for (uint64_t r = 0; r < 6; ++r) Inject({Corruption::kMissingUnit, r});
  const VerifyReport report = Run({.max_findings = 2});
  EXPECT_EQ(report.errors, 6u);
  EXPECT_EQ(report.kind_counts[static_cast<int>(FindingKind::kMissingRecord)], 6u);
  ASSERT_THAT(report.findings, SizeIs(3));
  EXPECT_EQ(report.findings[2].kind, FindingKind::kTooManyFindings);
  EXPECT_THAT(report.findings[2].message, HasSubstr("4 more findings"));
  EXPECT_THAT(report.ToStatus(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("4 more")));
}

TEST_F(VerifyTest, VerdictJsonParsesBackWithEveryUnitAndFinding) {
  Build();
  Inject({Corruption::kUnknownSite, 2, /*event=*/1});
  Inject({Corruption::kMissingUnit, 4});
  const VerifyReport report = Run();
  std::string text;
  llvm::raw_string_ostream os(text);
  WriteVerifyReportJson(report, layout_, os);
  os.flush();
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["format"], "warptrace-verdict");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["errors"], 2);
  EXPECT_EQ(j["verdicts"]["complete"], 4);
  EXPECT_EQ(j["verdicts"]["corrupt"], 1);
  EXPECT_EQ(j["verdicts"]["missing"], 1);
  EXPECT_EQ(j["finding_counts"]["unknown_site"], 1);
  EXPECT_EQ(j["finding_counts"]["missing_record"], 1);
  ASSERT_EQ(j["units"].size(), 6u);
  EXPECT_EQ(j["units"][2]["verdict"], "corrupt");
  EXPECT_EQ(j["units"][2]["block"], 1);
  EXPECT_EQ(j["units"][2]["kept_events"], 1);
  EXPECT_EQ(j["units"][4]["verdict"], "missing");
  ASSERT_EQ(j["findings"].size(), 2u);
  EXPECT_EQ(j["findings"][0]["kind"], "unknown_site");
  EXPECT_EQ(j["findings"][0]["event"], 1);
  EXPECT_EQ(j["findings"][0]["severity"], "error");
  EXPECT_TRUE(j["findings"][1]["event"].is_null());
  EXPECT_EQ(j["findings"][1]["record"], 4);
}

TEST_F(VerifyTest, VerdictReportFileIsWrittenAndParses) {
  Build();
  const VerifyReport report = Run();
  const std::string path = TestTempPath("verdict.json");
  ASSERT_THAT(WriteVerifyReportFile(report, layout_, path), IsOk());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str());
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["units"].size(), 6u);
  EXPECT_THAT(WriteVerifyReportFile(report, layout_, "/nonexistent-dir/verdict.json"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent-dir/verdict.json")));
}


// ---- Hand-offs (trace version 2, links.h) ----------------------------------------------

// The hand-off synthesizer's 2 blocks x (producer warp 0, consumer warp 1), 2 stages,
// 4 iterations. Consumer slots: 0 kernel, 1-2 wait full enter, 3-4 its release, ...
class VerifyHandoffTest : public ::testing::Test {
 protected:
  void SetUp() override { Make({}); }
  void Make(testing::HandoffSpec spec) {
    absl::StatusOr<testing::HandoffTrace> trace = testing::SynthesizeHandoffs(spec);
    ASSERT_THAT(trace, IsOk());
    trace_ = *std::move(trace);
  }
  std::vector<uint32_t> Injected(std::vector<CorruptionSpec> specs) {
    std::vector<uint32_t> words = trace_.words;
    for (const CorruptionSpec& spec : specs) {
      EXPECT_THAT(InjectCorruption(trace_.layout, spec, absl::MakeSpan(words)), IsOk())
          << CorruptionName(spec.kind);
    }
    return words;
  }
  VerifyReport Run(const std::vector<uint32_t>& words, VerifyOptions options = {}) {
    absl::StatusOr<DecodedTrace> decoded = Decode(trace_.layout, words);
    EXPECT_THAT(decoded, IsOk());
    return Verify(*decoded, options);
  }
  static uint64_t Count(const VerifyReport& report, FindingKind kind) {
    return report.kind_counts[static_cast<int>(kind)];
  }
  testing::HandoffTrace trace_;
};

// Trace version 5: the copies on a barrier record their begins alone. A clean trace has
// every copy's phase released somewhere in the block: no finding.
TEST_F(VerifyHandoffTest, CleanDerivedCopyEndsHaveNoFindings) {
  testing::HandoffSpec spec;
  spec.derived_copy_ends = true;
  Make(spec);
  const VerifyReport report = Run(trace_.words);
  EXPECT_TRUE(report.ok()) << report.findings.size() << " findings";
}

// Two warps: a TMA load site ("load", site 1) and a phase wait site ("wait full", site 2);
// no barrier table, so arrival counts are unchecked.
TraceLayout ProducerConsumerLayout() {
  TraceLayout layout;
  layout.kernel_name = "k";
  layout.grid = {1, 1, 1};
  layout.block = {64, 1, 1};
  layout.unit = UnitSpec::Warp();
  layout.capacity = 16;
  layout.sites = {{0, "k", SiteKind::kKernel, ""},
                  {1, "load", SiteKind::kAsyncCopy, "k > load"},
                  {2, "wait full", SiteKind::kPhaseWait, "k > wait full"}};
  layout.sites[1].copy_engine = CopyEngine::kTma2d;
  return layout;
}

// The verdict on ProducerConsumerLayout's trace of `producer` (warp 0) and a consumer (warp
// 1) that waits on phase 0 of barrier 0 alone.
VerifyReport VerifyWithConsumer(const TraceLayout& layout, const testing::UnitScript& producer) {
  testing::UnitScript consumer;
  consumer.Begin(0).WaitPhase(2, 0, 0, 100).End(0);  // phase 1 is never waited on
  testing::TraceSynthesizer synth(layout);
  synth.SetUnitScript(0, producer);
  synth.SetUnitScript(1, consumer);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  EXPECT_THAT(words, IsOk());
  if (!words.ok()) return {};
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, *words);
  EXPECT_THAT(decoded, IsOk());
  return decoded.ok() ? Verify(*decoded) : VerifyReport{};
}

// A version-5 copy whose phase no unit of the block recorded a release of: its end cannot
// be derived, which is its own finding (with what to record), not "never completed".
TEST(VerifyDerivedCopyTest, ACopyWhosePhaseIsNeverWaitedOnIsReportedAsNotDerivable) {
  const TraceLayout layout = ProducerConsumerLayout();
  testing::UnitScript producer;
  producer.Begin(0).CopyBegin(1, 0, 0).Work(10).CopyBegin(1, 0, 1).Work(10).End(0);
  const VerifyReport report = VerifyWithConsumer(layout, producer);
  EXPECT_EQ(report.kind_counts[static_cast<int>(FindingKind::kAsyncEndNotDerivable)], 1u);
  EXPECT_EQ(report.kind_counts[static_cast<int>(FindingKind::kAsyncNeverCompleted)], 0u);
  ASSERT_THAT(report.findings, SizeIs(1));
  EXPECT_EQ(report.findings[0].record_index, 0u);
  EXPECT_EQ(report.findings[0].event_index, 3) << "the second copy's begin";
  EXPECT_THAT(report.findings[0].message,
              AllOf(HasSubstr("async copy 1 of \"load\" completes phase 1 of "),
                    HasSubstr("its end cannot be derived"), HasSubstr("record a wait")));
  EXPECT_EQ(FindingKindName(FindingKind::kAsyncEndNotDerivable),
            std::string("async_end_not_derivable"));
}

// The same producer and consumer with the copy site marked end_observed (the plan found no
// recorder waiting on its barrier): each copy's end is the one its issuer recorded, so no
// wait is needed to derive it; a copy whose recorded end is missing never completed, which
// is not a derivation finding.
TEST(VerifyDerivedCopyTest, ACopySiteThatKeepsAnObservedEndNeedsNoRecordedWait) {
  TraceLayout layout = ProducerConsumerLayout();
  layout.sites[1].end_observed = true;
  for (const bool second_end : {true, false}) {
    testing::UnitScript producer;
    producer.Begin(0).AsyncBegin(1, 0, 0).Work(10).AsyncEnd(1, 0, 0).AsyncBegin(1, 1, 0);
    if (second_end) producer.Work(10).AsyncEnd(1, 1, 0);
    producer.End(0);
    const VerifyReport report = VerifyWithConsumer(layout, producer);
    EXPECT_EQ(report.kind_counts[static_cast<int>(FindingKind::kAsyncEndNotDerivable)], 0u);
    EXPECT_EQ(report.kind_counts[static_cast<int>(FindingKind::kAsyncNeverCompleted)],
              second_end ? 0u : 1u);
    EXPECT_EQ(report.findings.size(), second_end ? 0u : 1u);
  }
}

TEST_F(VerifyHandoffTest, CleanHandoffTraceHasNoFindings) {
  const VerifyReport report = Run(trace_.words);
  EXPECT_TRUE(report.ok());
  EXPECT_THAT(report.findings, SizeIs(0));
  EXPECT_EQ(report.verdict_counts[static_cast<int>(Verdict::kComplete)], 4u);
}

TEST_F(VerifyHandoffTest, ReleaseBeforeItsPhasesArrivalsIsFoundAtTheRelease) {
  // The consumer's first wait (full[0] phase 0) now waits on phase 1, whose arrival (the
  // producer's third) comes after it.
  const VerifyReport report =
      Run(Injected({{Corruption::kReleaseBeforeArrivals, /*record=*/1}}));
  EXPECT_FALSE(report.ok());
  ASSERT_THAT(report.findings, SizeIs(1));
  const Finding& f = report.findings[0];
  EXPECT_EQ(f.kind, FindingKind::kReleaseBeforeArrivals);
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(f.record_index, 1u);
  EXPECT_EQ(f.unit_index, 1u);
  EXPECT_EQ(f.event_index, 3) << "the wait's release";
  EXPECT_THAT(FormatFinding(f),
              AllOf(HasSubstr("block (0,0,0) warp 1 event 3: the wait on phase 1 of full[0] "
                              "is released"),
                    HasSubstr("before that phase's arrival (warp 0 event"),
                    HasSubstr("recorded phase numbers are off")));
  EXPECT_EQ(report.verdict_counts[static_cast<int>(Verdict::kComplete)], 4u)
      << "hand-off findings do not change a unit's verdict";
  EXPECT_THAT(report.ToStatus(), StatusIs(absl::StatusCode::kDataLoss,
                                          HasSubstr("release")));
}

TEST_F(VerifyHandoffTest, ArrivalCountMismatchIsFoundForTheShortAndTheLongPhase) {
  // The producer's first full[0] arrival counts towards phase 1: phase 0 has none, phase 1
  // two; the barrier table says one completes a phase.
  const std::vector<uint32_t> words =
      Injected({{Corruption::kArrivalCountMismatch, /*record=*/0}});
  const VerifyReport report = Run(words);
  ASSERT_THAT(report.findings, SizeIs(2));
  EXPECT_EQ(Count(report, FindingKind::kArrivalCountMismatch), 2u);
  EXPECT_EQ(report.errors, 2u);
  // Both at a release of the consumer (its waits on full[0]): slot 3 (phase 0) first.
  EXPECT_EQ(report.findings[0].record_index, 1u);
  EXPECT_EQ(report.findings[0].event_index, 3);
  EXPECT_THAT(report.findings[0].message,
              HasSubstr("phase 0 of full[0] has 0 recorded arrivals but the barrier table "
                        "says 1 complete a phase: the phase can never complete"));
  EXPECT_THAT(report.findings[1].message,
              HasSubstr("phase 1 of full[0] has 2 recorded arrivals but the barrier table "
                        "says 1"));
  testing::HandoffSpec no_table;
  no_table.barrier_table = false;
  Make(no_table);
  EXPECT_THAT(Run(Injected({{Corruption::kArrivalCountMismatch, 0}})).findings, SizeIs(0))
      << "no barrier table: counts are not checked";
}

TEST_F(VerifyHandoffTest, AsyncEndWithoutItsBeginIsFoundAtTheEnd) {
  const VerifyReport report = Run(Injected({{Corruption::kAsyncEndWithoutBegin, 0}}));
  ASSERT_THAT(report.findings, SizeIs(1));
  EXPECT_EQ(report.findings[0].kind, FindingKind::kAsyncEndWithoutBegin);
  EXPECT_EQ(report.findings[0].record_index, 0u);
  EXPECT_EQ(report.findings[0].event_index, 1) << "the end moved up into the begin's slot";
  EXPECT_THAT(report.findings[0].message,
              HasSubstr("completion of async copy 0 of \"copy\" without its issue"));
}

TEST_F(VerifyHandoffTest, AsyncIssueNeverCompletedIsFoundAtTheIssue) {
  const VerifyReport report = Run(Injected({{Corruption::kAsyncNeverCompleted, 2}}));
  ASSERT_THAT(report.findings, SizeIs(1));
  EXPECT_EQ(report.findings[0].kind, FindingKind::kAsyncNeverCompleted);
  EXPECT_EQ(report.findings[0].record_index, 2u);
  EXPECT_EQ(report.findings[0].block_linear, 1u);
  EXPECT_EQ(report.findings[0].event_index, 1);
  EXPECT_THAT(FormatFinding(report.findings[0]),
              HasSubstr("block (1,0,0) warp 0 event 1: async copy 0 of \"copy\" is issued but "
                        "the unit never observes its completion"));
}

TEST_F(VerifyHandoffTest, HandoffFindingsAreWarningsWhenTruncationIsAllowed) {
  const VerifyReport report = Run(Injected({{Corruption::kReleaseBeforeArrivals, 1},
                                            {Corruption::kAsyncEndWithoutBegin, 2}}),
                                  {.allow_truncated = true});
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.warnings, 2u);
  ASSERT_THAT(report.findings, SizeIs(2));
  EXPECT_EQ(report.findings[0].severity, Severity::kWarning);
  EXPECT_EQ(report.findings[0].block_linear, 0u) << "findings in block order";
  EXPECT_EQ(report.findings[1].block_linear, 1u);
}

TEST_F(VerifyHandoffTest, CountsAndUncompletedIssuesAreNotCheckedWhereAUnitIsCut) {
  // The consumer of block 0 never finished: its arrivals past the recovered slots are lost,
  // which its own finding reports; no count or never-completed finding piles on.
  const VerifyReport report = Run(Injected({{Corruption::kArrivalCountMismatch, 0},
                                            {Corruption::kIncompleteUnit, 1}}),
                                  {.allow_truncated = true});
  EXPECT_EQ(Count(report, FindingKind::kArrivalCountMismatch), 0u);
  EXPECT_EQ(Count(report, FindingKind::kIncomplete), 1u);
}

TEST_F(VerifyHandoffTest, AClockWrapInsideTheBlockDoesNotFakeAnEarlyRelease) {
  // %clock wraps 4096 cycles after the units start: arrivals before the wrap, releases
  // after it are still read in order on the block's common clock.
  testing::HandoffSpec spec;
  spec.synth.start_clock = 0xfffff000u;
  Make(spec);
  EXPECT_THAT(Run(trace_.words).findings, SizeIs(0));
}

TEST(VerifyHandoffClockTest, UnitsOfABlockAreComparedOnTheSmsCommonClock) {
  // Two warps run the same script (arrive on phase 0 of barrier 0, then wait for it), but
  // warp 1 starts 1500 cycles (1 us at 1.5 GHz) later on the same SM: warp 0's wait is
  // released before warp 1 arrives. Local cycles alone would not show it.
  TraceLayout layout;
  layout.kernel_name = "k";
  layout.grid = {1, 1, 1};
  layout.block = {64, 1, 1};
  layout.unit = UnitSpec::Warp();
  layout.capacity = 6;
  layout.clock.nominal_sm_clock_khz = 1'500'000;
  layout.sites = {{0, "arrive", SiteKind::kBarrierArrive, ""},
                  {1, "wait", SiteKind::kPhaseWait, ""}};
  SynthOptions options;
  options.unit_stagger_ns = 1000;
  options.clock_offset_per_record = 1500;
  TraceSynthesizer synth(layout, options);
  UnitScript script;
  script.Arrive(0, 0, 0).Work(10).WaitPhase(1, 0, 0, 100);
  synth.SetScript(script);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  ASSERT_THAT(words, IsOk());
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, *words);
  ASSERT_THAT(decoded, IsOk());
  const VerifyReport report = Verify(*decoded);
  ASSERT_THAT(report.findings, SizeIs(1));
  EXPECT_EQ(report.findings[0].kind, FindingKind::kReleaseBeforeArrivals);
  EXPECT_EQ(report.findings[0].unit_index, 0u);
  EXPECT_EQ(report.findings[0].event_index, 4);
  EXPECT_THAT(report.findings[0].message,
              HasSubstr("before the last of that phase's 2 arrivals (warp 1 event 0)"));
}

// Version 5, a cp.async site whose ends are derived at its recorded waits: a wait leaving
// more in flight than are open is a warning naming it; a group no wait retires an error.
TEST(VerifyDerivedCopyTest, GroupWaitsReportShortWaitsAndGroupsNeverRetired) {
  TraceLayout layout = ProducerConsumerLayout();
  layout.sites[1].copy_engine = CopyEngine::kCpAsync;
  layout.sites[1].ends_at_waits = true;
  testing::UnitScript unit;
  unit.Begin(0).Tag(abi::MakeTag(1, false)).Work(10);
  unit.PayloadTag(abi::MakeTag(1, true), 3, kNoBarrier).Work(10).End(0);
  testing::TraceSynthesizer synth(layout);
  synth.SetUnitScript(0, unit);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  ASSERT_THAT(words, IsOk());
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, *words);
  ASSERT_THAT(decoded, IsOk());
  const VerifyReport report = Verify(*decoded);
  ASSERT_THAT(report.findings, SizeIs(2));
  EXPECT_EQ(report.findings[0].kind, FindingKind::kGroupEndNotDerivable);
  EXPECT_EQ(report.findings[0].severity, Severity::kError);
  EXPECT_EQ(report.findings[0].event_index, 1) << "the group's begin";
  EXPECT_THAT(report.findings[0].message, HasSubstr("group 0 of \"load\""));
  EXPECT_EQ(report.findings[1].kind, FindingKind::kGroupWaitShort);
  EXPECT_EQ(report.findings[1].severity, Severity::kWarning);
  EXPECT_EQ(report.findings[1].event_index, 2) << "the wait";
  EXPECT_THAT(report.findings[1].message,
              HasSubstr("leaves 3 groups of its kind in flight but only 1 was open"));
  EXPECT_EQ(FindingKindName(FindingKind::kGroupWaitShort), std::string("group_wait_short"));
}

}  // namespace
}  // namespace warptrace
