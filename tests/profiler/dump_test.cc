#include "profiler/dump/dump.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "nlohmann/json.hpp"
#include "profiler/analysis/summary.h"
#include "profiler/dump/collector.h"
#include "profiler/dump/sink.h"
#include "profiler/outputs/chrome_trace.h"
#include "profiler/outputs/chrome_trace_sink.h"
#include "profiler/testing/handoff_synthesizer.h"
#include "profiler/testing/trace_synthesizer.h"
#include "profiler/timeline/timeline.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/verify.h"
#include "tests/profiler/buffer_fixture.h"
#include "tests/profiler/chrome_trace_checker.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::warptrace::testing::ChromeTraceViolations;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The whole-trace path (Verify, then BuildTimeline over every record) the driver must match.
Timeline WholeTimeline(const testing::SyntheticBuffer& buffer, const TimelineOptions& options) {
  absl::StatusOr<DecodedTrace> decoded = Decode(buffer.layout, buffer.words);
  EXPECT_THAT(decoded, IsOk());
  const VerifyReport report = Verify(*decoded);
  absl::StatusOr<Timeline> timeline = BuildTimeline(*decoded, report, options);
  EXPECT_THAT(timeline, IsOk());
  return *std::move(timeline);
}

std::string ChromeText(const Timeline& timeline) {
  std::string text;
  llvm::raw_string_ostream os(text);
  EXPECT_THAT(WriteChromeTrace(timeline, {}, os), IsOk());
  os.flush();
  return text;
}

// Records every call it gets.
class RecordingSink : public TraceSink {
 public:
  absl::string_view Name() const override { return "recording"; }
  absl::Status Begin(const TraceBegin& begin) override {
    calls.push_back("begin");
    origin_ns = begin.origin_ns;
    units_announced = begin.units;
    return absl::OkStatus();
  }
  absl::Status AddUnit(const UnitView& unit) override {
    calls.push_back(absl::StrCat("unit ", unit.record->block_linear, ".",
                                 unit.record->unit_index));
    EXPECT_EQ(unit.verdict->record_index, unit.record->record_index);
    EXPECT_EQ(unit.timeline->record_index, unit.record->record_index);
    findings.push_back(unit.findings.size());
    has_record.push_back(unit.timeline->has_record);
    if (fail_at_unit == static_cast<int>(has_record.size()) - 1) {
      return absl::UnavailableError("disk on fire");
    }
    return absl::OkStatus();
  }
  absl::Status End(const TraceEnd& end) override {
    calls.push_back("end");
    clock_note = end.clock_note;
    EXPECT_NE(end.report, nullptr);
    return absl::OkStatus();
  }

  int fail_at_unit = -1;
  std::vector<std::string> calls;
  std::vector<size_t> findings;
  std::vector<bool> has_record;
  int64_t origin_ns = 0;
  uint64_t units_announced = 0;
  std::string clock_note;
};

TEST(DumpTest, StreamedChromeTraceIsTheWholeTimelinesTraceByteForByte) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(8000);
  ASSERT_THAT(buffer, IsOk());
  for (bool compensate : {false, true}) {
    DumpOptions options;
    options.timeline.compensate_overhead = compensate;
    std::string text;
    llvm::raw_string_ostream os(text);
    ChromeTraceSink chrome({}, os);
    TraceSink* sinks[] = {&chrome};
    DumpResult result;
    ASSERT_THAT(DumpTrace(buffer->layout, buffer->words, options, sinks, result), IsOk());
    os.flush();
    const Timeline whole = WholeTimeline(*buffer, options.timeline);
    EXPECT_EQ(text, ChromeText(whole));
    const nlohmann::json trace = nlohmann::json::parse(text);
    EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
    EXPECT_THAT(trace["otherData"]["clock"].get<std::string>(),
                HasSubstr("calibrated per unit from its globaltimer pair (40 units"));
    EXPECT_EQ(result.slices, 4000u);
    EXPECT_EQ(result.clock_note, whole.clock_note);
    EXPECT_EQ(result.origin_ns, whole.origin_ns);
    EXPECT_EQ(result.end_ns, whole.end_ns);
  }
}

TEST(DumpTest, AFileGetsTheSameTraceAsAStream) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(2000);
  ASSERT_THAT(buffer, IsOk());
  const std::string path = TestTempPath("to_file.json");
  DumpResult to_file;
  ASSERT_THAT(WriteLargeFileAtomically(path,
                                   [&](llvm::raw_ostream& os) {
                                     ChromeTraceSink chrome({}, os);
                                     TraceSink* sinks[] = {&chrome};
                                     return DumpTrace(buffer->layout, buffer->words, {}, sinks,
                                                      to_file);
                                   }),
              IsOk());
  std::string text;
  llvm::raw_string_ostream os(text);
  ChromeTraceSink chrome({}, os);
  TraceSink* sinks[] = {&chrome};
  DumpResult to_stream;
  ASSERT_THAT(DumpTrace(buffer->layout, buffer->words, {}, sinks, to_stream), IsOk());
  os.flush();
  EXPECT_EQ(text, ReadText(path));
  EXPECT_EQ(to_stream.slices, to_file.slices);
}

TEST(DumpTest, SummarySinkEqualsTheWholeTimelinesSummary) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(4000);
  ASSERT_THAT(buffer, IsOk());
  absl::StatusOr<Summary> expected = Summarize(WholeTimeline(*buffer, {}));
  ASSERT_THAT(expected, IsOk());
  SummarySink summary;
  TraceSink* sinks[] = {&summary};
  DumpResult result;
  ASSERT_THAT(DumpTrace(buffer->layout, buffer->words, {}, sinks, result), IsOk());
  ASSERT_TRUE(summary.summary().has_value());
  EXPECT_EQ(summary.summary()->regions, expected->regions);
  EXPECT_EQ(summary.summary()->units, expected->units);
  EXPECT_EQ(summary.summary()->unit_time_ns, expected->unit_time_ns);
  EXPECT_EQ(summary.summary()->wall_ns, expected->wall_ns);
  EXPECT_EQ(summary.summary()->clock_note, expected->clock_note);
  EXPECT_EQ(FormatSummary(*summary.summary()), FormatSummary(*expected));
}

TEST(DumpTest, SinksGetEveryUnitInBufferOrderIncludingUnitsWithoutARecord) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(1200);
  ASSERT_THAT(buffer, IsOk());  // 3 blocks x 2 warpgroups
  ASSERT_THAT(testing::InjectCorruption(buffer->layout, {testing::Corruption::kMissingUnit, 1},
                                        absl::MakeSpan(buffer->words)),
              IsOk());
  RecordingSink first, second;
  TraceSink* sinks[] = {&first, &second};
  DumpOptions options;
  options.verify.allow_truncated = true;
  DumpResult result;
  ASSERT_THAT(DumpTrace(buffer->layout, buffer->words, options, sinks, result), IsOk());
  for (const RecordingSink* sink : {&first, &second}) {
    EXPECT_THAT(sink->calls, ElementsAre("begin", "unit 0.0", "unit 0.1", "unit 1.0",
                                         "unit 1.1", "unit 2.0", "unit 2.1", "end"));
    EXPECT_THAT(sink->has_record, ElementsAre(true, false, true, true, true, true));
    EXPECT_THAT(sink->findings, ElementsAre(0u, 1u, 0u, 0u, 0u, 0u));  // missing_record
    EXPECT_EQ(sink->units_announced, 6u);
    EXPECT_EQ(sink->clock_note, result.clock_note);
  }
}

TEST(DumpTest, TheFirstSinkErrorStopsTheDumpAndNamesTheSink) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(1000);
  ASSERT_THAT(buffer, IsOk());
  RecordingSink failing, after;
  failing.fail_at_unit = 2;
  TraceSink* sinks[] = {&failing, &after};
  DumpResult result;
  EXPECT_THAT(DumpTrace(buffer->layout, buffer->words, {}, sinks, result),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("recording: disk on fire")));
  EXPECT_THAT(failing.calls, ElementsAre("begin", "unit 0.0", "unit 0.1", "unit 1.0"));
  EXPECT_THAT(after.calls, ElementsAre("begin", "unit 0.0", "unit 0.1"));
}

TEST(DumpTest, FailedVerificationReturnsTheReportAndWritesNothing) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(2000);
  ASSERT_THAT(buffer, IsOk());
  ASSERT_THAT(testing::InjectCorruption(buffer->layout,
                                        {testing::Corruption::kDroppedEvents, /*record=*/4,
                                         -1, /*amount=*/6},
                                        absl::MakeSpan(buffer->words)),
              IsOk());
  const std::string path = TestTempPath("never.json");
  RecordingSink recording;
  DumpResult result;
  EXPECT_THAT(WriteLargeFileAtomically(path,
                                   [&](llvm::raw_ostream& os) {
                                     ChromeTraceSink chrome({}, os);
                                     TraceSink* sinks[] = {&chrome, &recording};
                                     return DumpTrace(buffer->layout, buffer->words, {}, sinks,
                                                      result);
                                   }),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("206")));
  EXPECT_FALSE(result.report.ok());
  EXPECT_EQ(result.report.units.size(), 10u);  // every unit verified
  EXPECT_FALSE(llvm::sys::fs::exists(path));
  // Units 0..3 were handed on; the bad unit 4 and what follows were not, and no End.
  EXPECT_THAT(recording.calls, SizeIs(5));
  EXPECT_EQ(recording.calls.back(), "unit 1.1");
}

TEST(DumpTest, ABufferOfTheWrongSizeIsDataLossAndNoSinkIsCalled) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(2000);
  ASSERT_THAT(buffer, IsOk());
  buffer->words.pop_back();
  RecordingSink recording;
  TraceSink* sinks[] = {&recording};
  DumpResult result;
  EXPECT_THAT(DumpTrace(buffer->layout, buffer->words, {}, sinks, result),
              StatusIs(absl::StatusCode::kDataLoss, ::testing::_));
  EXPECT_FALSE(result.decoded);
  EXPECT_TRUE(result.report.units.empty());
  EXPECT_THAT(recording.calls, IsEmpty());
}


// ---- Hand-offs: a block's units go on together --------------------------------------------

// Records what each AddUnit saw of the hand-offs.
class HandoffRecordingSink : public TraceSink {
 public:
  absl::string_view Name() const override { return "handoff recording"; }
  absl::Status AddUnit(const UnitView& unit) override {
    records.push_back(unit.record->record_index);
    own_findings.push_back(unit.findings.size());
    block_findings.push_back(unit.block_findings.size());
    for (const Finding& f : unit.block_findings) block_finding_kinds.push_back(f.kind);
    flows.push_back(unit.timeline->flows.size());
    return absl::OkStatus();
  }
  absl::Status End(const TraceEnd&) override {
    ended = true;
    return absl::OkStatus();
  }
  std::vector<uint64_t> records;
  std::vector<size_t> own_findings, block_findings, flows;
  std::vector<FindingKind> block_finding_kinds;
  bool ended = false;
};

std::vector<uint32_t> HandoffWords(const testing::HandoffTrace& trace,
                                   std::vector<testing::CorruptionSpec> specs) {
  std::vector<uint32_t> words = trace.words;
  for (const testing::CorruptionSpec& spec : specs) {
    EXPECT_THAT(testing::InjectCorruption(trace.layout, spec, absl::MakeSpan(words)), IsOk());
  }
  return words;
}

TEST(DumpHandoffTest, ABlocksHandoffFindingsComeWithItsLastUnitAndEveryUnitHasItsFlows) {
  absl::StatusOr<testing::HandoffTrace> trace = testing::SynthesizeHandoffs({});
  ASSERT_THAT(trace, IsOk());
  const std::vector<uint32_t> words =
      HandoffWords(*trace, {{testing::Corruption::kAsyncNeverCompleted, /*record=*/2}});
  HandoffRecordingSink sink;
  TraceSink* sinks[] = {&sink};
  DumpOptions options;
  options.verify.allow_truncated = true;
  DumpResult result;
  ASSERT_THAT(DumpTrace(trace->layout, words, options, sinks, result), IsOk());
  EXPECT_THAT(sink.records, ElementsAre(0u, 1u, 2u, 3u));
  EXPECT_THAT(sink.own_findings, ElementsAre(0u, 0u, 0u, 0u));
  EXPECT_THAT(sink.block_findings, ElementsAre(0u, 0u, 0u, 1u)) << "block 1's, on unit 3";
  EXPECT_THAT(sink.block_finding_kinds, ElementsAre(FindingKind::kAsyncNeverCompleted));
  // Block 0: 6 hand-offs (each on both units) + 4 copies (producer only); block 1 one copy
  // fewer (its first issue lost its completion).
  EXPECT_THAT(sink.flows, ElementsAre(10u, 6u, 9u, 6u));
  EXPECT_TRUE(sink.ended);
}

TEST(DumpHandoffTest, StrictModeStopsFeedingAtTheBlockWithAHandoffError) {
  absl::StatusOr<testing::HandoffTrace> trace = testing::SynthesizeHandoffs({});
  ASSERT_THAT(trace, IsOk());
  const std::vector<uint32_t> words =
      HandoffWords(*trace, {{testing::Corruption::kReleaseBeforeArrivals, /*record=*/3}});
  HandoffRecordingSink sink;
  TraceSink* sinks[] = {&sink};
  DumpResult result;
  EXPECT_THAT(DumpTrace(trace->layout, words, {}, sinks, result),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("block (1,0,0) warp 1 event 3: the wait on phase 1 of full[0]")));
  EXPECT_THAT(sink.records, ElementsAre(0u, 1u)) << "block 0 is clean";
  EXPECT_FALSE(sink.ended);
  EXPECT_EQ(result.report.kind_counts[static_cast<int>(FindingKind::kReleaseBeforeArrivals)],
            1u);
}

TEST(DumpHandoffTest, TheDriversTimelineIsTheStepByStepOneFlowsIncluded) {
  testing::HandoffSpec spec;
  spec.blocks = 3;
  spec.stages = 3;
  spec.iterations = 7;
  absl::StatusOr<testing::HandoffTrace> trace = testing::SynthesizeHandoffs(spec);
  ASSERT_THAT(trace, IsOk());
  absl::StatusOr<DecodedTrace> decoded = Decode(trace->layout, trace->words);
  ASSERT_THAT(decoded, IsOk());
  const VerifyReport report = Verify(*decoded);
  ASSERT_TRUE(report.ok()) << report.ToStatus();
  absl::StatusOr<Timeline> whole = BuildTimeline(*decoded, report);
  ASSERT_THAT(whole, IsOk());
  absl::StatusOr<std::unique_ptr<Trace>> collected = CollectTrace(trace->layout, trace->words);
  ASSERT_THAT(collected, IsOk());
  ASSERT_EQ((*collected)->timeline.units.size(), whole->units.size());
  uint64_t flows = 0;
  for (size_t i = 0; i < whole->units.size(); ++i) {
    EXPECT_EQ((*collected)->timeline.units[i], whole->units[i]) << "unit " << i;
    flows += whole->units[i].flows.size();
  }
  // Every flow is listed on both of its units except the copies' (one unit).
  const uint64_t per_block = 2 * trace->arrival_links_per_block + trace->copy_links_per_block;
  EXPECT_EQ(flows, 3 * per_block);
  // And the streamed Chrome trace is the whole Timeline's, byte for byte.
  std::string text;
  llvm::raw_string_ostream os(text);
  ChromeTraceSink chrome({}, os);
  TraceSink* sinks[] = {&chrome};
  DumpResult result;
  ASSERT_THAT(DumpTrace(trace->layout, trace->words, {}, sinks, result), IsOk());
  os.flush();
  EXPECT_EQ(text, ChromeText(*whole));
  EXPECT_THAT(ChromeTraceViolations(nlohmann::json::parse(text)), IsEmpty());
}

}  // namespace
}  // namespace warptrace
