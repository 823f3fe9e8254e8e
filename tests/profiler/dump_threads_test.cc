// DumpOptions::threads (profiler/dump/dump.h): with workers preparing the units, every sink
// call, the report (findings capped in buffer order) and the result are those of the
// single-threaded dump — on clean traces, on traces with findings past the caps (kept with
// allow_truncated) and in strict mode, with and without hand-off links.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/dump/dump.h"
#include "profiler/dump/sink.h"
#include "profiler/testing/pipeline_synthesizer.h"
#include "profiler/testing/trace_synthesizer.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/verify.h"
#include "tests/profiler/buffer_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::IsOk;

// Everything a sink is told, kept.
class TranscriptSink : public TraceSink {
 public:
  absl::string_view Name() const override { return "transcript"; }
  absl::Status Begin(const TraceBegin& begin) override {
    absl::StrAppend(&text, "begin ", begin.units, " ", begin.origin_ns, " ", begin.end_ns, "\n");
    return absl::OkStatus();
  }
  absl::Status AddUnit(const UnitView& unit) override {
    const UnitVerdict& v = *unit.verdict;
    absl::StrAppend(&text, "unit ", unit.record->record_index, " ", static_cast<int>(v.verdict),
                    " ", v.reason, " kept ", v.kept_events, " dropped ", v.dropped, "\n");
    for (const Finding& f : unit.findings) {
      absl::StrAppend(&text, "  finding ", static_cast<int>(f.kind), " ", static_cast<int>(f.severity), " ", FormatFinding(f), " ",
                      f.message, "\n");
    }
    for (const Finding& f : unit.block_findings) {
      absl::StrAppend(&text, "  block finding ", static_cast<int>(f.kind), " ", f.message, "\n");
    }
    timelines.push_back(*unit.timeline);
    return absl::OkStatus();
  }
  absl::Status End(const TraceEnd& end) override {
    absl::StrAppend(&text, "end ", end.slices, " ", end.origin_ns, " ", end.end_ns, " ",
                    end.clock_note, "\n");
    return absl::OkStatus();
  }
  std::string text;
  std::vector<UnitTimeline> timelines;
};

struct Dumped {
  absl::Status status;
  TranscriptSink sink;
  DumpResult result;
  std::string report_json;
};

Dumped DumpWithThreads(const TraceLayout& layout, const std::vector<uint32_t>& words,
                       DumpOptions options, int threads) {
  Dumped d;
  options.threads = threads;
  TraceSink* sinks[] = {&d.sink};
  d.status = DumpTrace(layout, words, options, sinks, d.result);
  llvm::raw_string_ostream os(d.report_json);
  WriteVerifyReportJson(d.result.report, layout, os);
  return d;
}

// The dump with `threads` against the single-threaded one.
void ExpectSameAsOneThread(const TraceLayout& layout, const std::vector<uint32_t>& words,
                           const DumpOptions& options) {
  const Dumped one = DumpWithThreads(layout, words, options, 1);
  for (int threads : {3, 4, 7}) {
    SCOPED_TRACE(absl::StrCat(threads, " threads"));
    const Dumped many = DumpWithThreads(layout, words, options, threads);
    EXPECT_EQ(many.status, one.status);
    EXPECT_EQ(many.sink.text, one.sink.text);
    EXPECT_TRUE(many.sink.timelines == one.sink.timelines) << "the timelines differ";
    EXPECT_EQ(many.report_json, one.report_json);
    EXPECT_EQ(many.result.slices, one.result.slices);
    EXPECT_EQ(many.result.clock_note, one.result.clock_note);
    EXPECT_EQ(many.result.end_ns, one.result.end_ns);
  }
}

std::vector<uint32_t> Corrupted(const TraceLayout& layout, std::vector<uint32_t> words,
                                const std::vector<testing::CorruptionSpec>& specs) {
  for (const testing::CorruptionSpec& spec : specs) {
    EXPECT_THAT(testing::InjectCorruption(layout, spec, absl::MakeSpan(words)), IsOk());
  }
  return words;
}

TEST(DumpThreadsTest, ACleanTraceGivesTheSinksTheSameCalls) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(120'000);
  ASSERT_THAT(buffer, IsOk());
  ExpectSameAsOneThread(buffer->layout, buffer->words, {});
}

// Findings in many units, far past both caps, in batches the workers make out of order.
std::vector<testing::CorruptionSpec> ManyFindings(uint64_t records) {
  std::vector<testing::CorruptionSpec> specs;
  for (uint64_t r = 3; r < records; r += 37) {
    switch (r % 4) {
      case 0: specs.push_back({testing::Corruption::kClockBackwards, r}); break;
      case 1: specs.push_back({testing::Corruption::kUnknownSite, r}); break;
      case 2: specs.push_back({testing::Corruption::kDroppedEvents, r, -1, 3}); break;
      default: specs.push_back({testing::Corruption::kMissingUnit, r}); break;
    }
  }
  return specs;
}

TEST(DumpThreadsTest, FindingsPastTheCapsAreListedAndCountedAsInOrder) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(120'000);
  ASSERT_THAT(buffer, IsOk());
  absl::StatusOr<DecodedTrace> decoded = Decode(buffer->layout, buffer->words);
  ASSERT_THAT(decoded, IsOk());
  const uint64_t records = decoded->records.size();
  const std::vector<uint32_t> words =
      Corrupted(buffer->layout, buffer->words, ManyFindings(records));
  DumpOptions options;
  options.verify.allow_truncated = true;
  options.verify.max_findings = 7;  // reached in the second batch or so
  options.verify.max_findings_per_unit = 1;
  ExpectSameAsOneThread(buffer->layout, words, options);
  const Dumped one = DumpWithThreads(buffer->layout, words, options, 1);
  ASSERT_THAT(one.status, IsOk());
  EXPECT_EQ(one.result.report.findings.size(), 8u) << "7 listed and the too-many note";
  // Strict mode: the dump stops feeding at the first error; the report is still complete.
  options.verify.allow_truncated = false;
  EXPECT_FALSE(DumpWithThreads(buffer->layout, words, options, 1).status.ok());
  ExpectSameAsOneThread(buffer->layout, words, options);
}

TEST(DumpThreadsTest, LinkedBlocksKeepTheirFlowsAndHandoffFindings) {
  testing::PipelineSpec spec;
  spec.blocks = 60;
  spec.consumers = 2;
  spec.iterations = 30;
  spec.jitter_cycles = 40;
  spec.handoff_payloads = true;
  absl::StatusOr<testing::PipelineTrace> trace = testing::SynthesizePipeline(spec);
  ASSERT_THAT(trace, IsOk());
  ExpectSameAsOneThread(trace->layout, trace->words, {});
  const std::vector<uint32_t> words =
      Corrupted(trace->layout, trace->words,
                {{testing::Corruption::kReleaseBeforeArrivals, 40},
                 {testing::Corruption::kClockBackwards, 77},
                 {testing::Corruption::kAsyncNeverCompleted, 120}});
  DumpOptions options;
  options.verify.allow_truncated = true;
  ExpectSameAsOneThread(trace->layout, words, options);
  options.verify.allow_truncated = false;
  ExpectSameAsOneThread(trace->layout, words, options);
}

}  // namespace
}  // namespace warptrace
