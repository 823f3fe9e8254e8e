// DumpOptions::threads (profiler/dump/dump.h): with workers preparing the units, every sink
// call, the report (findings capped in buffer order) and the result are those of the
// single-threaded dump — on clean traces, on traces with findings past the caps (kept with
// allow_truncated) and in strict mode, with and without hand-off links. Sinks with parts
// (sink.h) get every unit once, through parts on the workers when there are some; the
// summary merged from them is the single-threaded one, and a part's error stops the dump
// where the sink's AddUnit error stops it on one thread.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/summary.h"
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

// A sink with parts: records which units came, through AddUnit or a part, and on which
// thread; fails at record `fail_at` (either way) when it is set.
class PartedSink : public TraceSink {
 public:
  absl::string_view Name() const override { return "parted"; }
  absl::Status AddUnit(const UnitView& unit) override {
    return Take(unit, /*by_part=*/false);
  }
  std::unique_ptr<SinkPart> NewPart() override { return std::make_unique<Part>(*this); }
  absl::Status MergeParts(std::vector<std::unique_ptr<SinkPart>> parts) override {
    merged_parts += parts.size();
    return absl::OkStatus();
  }
  absl::Status End(const TraceEnd&) override {
    ended = true;
    return absl::OkStatus();
  }

  std::optional<uint64_t> fail_at;
  std::shared_ptr<std::mutex> mu = std::make_shared<std::mutex>();  // (Dumped moves)
  std::vector<uint64_t> records;  // as they came: sorted by the test
  std::vector<int64_t> unit_starts;
  uint64_t by_part = 0;
  uint64_t off_caller_thread = 0;  // parts fed on another thread than DumpTrace's
  size_t merged_parts = 0;
  bool ended = false;
  std::thread::id caller = std::this_thread::get_id();

 private:
  class Part : public SinkPart {
   public:
    explicit Part(PartedSink& sink) : sink_(sink) {}
    absl::Status AddUnit(const UnitView& unit) override { return sink_.Take(unit, true); }

   private:
    PartedSink& sink_;
  };
  absl::Status Take(const UnitView& unit, bool part) {
    std::lock_guard<std::mutex> lock(*mu);
    EXPECT_TRUE(unit.findings.empty() || !part);
    records.push_back(unit.record->record_index);
    unit_starts.push_back(unit.timeline->start_ns);
    if (part) ++by_part;
    if (part && std::this_thread::get_id() != caller) ++off_caller_thread;
    if (fail_at.has_value() && unit.record->record_index == *fail_at) {
      return absl::InvalidArgumentError(absl::StrCat("no record ", *fail_at, " please"));
    }
    return absl::OkStatus();
  }
};

struct Dumped {
  absl::Status status;
  TranscriptSink sink;
  SummarySink summary;
  PartedSink parted;
  DumpResult result;
  std::string report_json;
};

Dumped DumpWithThreads(const TraceLayout& layout, const std::vector<uint32_t>& words,
                       DumpOptions options, int threads,
                       std::optional<uint64_t> fail_at = std::nullopt) {
  Dumped d;
  options.threads = threads;
  d.parted.fail_at = fail_at;
  TraceSink* sinks[] = {&d.sink, &d.summary, &d.parted};
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
    EXPECT_TRUE(many.summary.summary() == one.summary.summary()) << "the summaries differ";
    EXPECT_EQ(many.parted.ended, one.parted.ended);
    if (many.parted.ended) {
      // Every unit once, by AddUnit on one thread and by parts (possibly) on many.
      std::vector<uint64_t> records = many.parted.records;
      std::sort(records.begin(), records.end());
      EXPECT_EQ(records, one.parted.records);
      std::vector<int64_t> starts = many.parted.unit_starts, one_starts = one.parted.unit_starts;
      std::sort(starts.begin(), starts.end());
      std::sort(one_starts.begin(), one_starts.end());
      EXPECT_EQ(starts, one_starts);
    }
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
  // With workers, the parts had the units, on the workers' threads, and were merged.
  const Dumped one = DumpWithThreads(buffer->layout, buffer->words, {}, 1);
  ASSERT_THAT(one.status, IsOk());
  EXPECT_EQ(one.parted.by_part, 0u);
  EXPECT_EQ(one.parted.merged_parts, 0u);
  ASSERT_TRUE(one.summary.summary().has_value());
  EXPECT_GT(one.summary.summary()->regions.size(), 0u);
  const Dumped four = DumpWithThreads(buffer->layout, buffer->words, {}, 4);
  ASSERT_THAT(four.status, IsOk());
  EXPECT_EQ(four.parted.by_part, four.parted.records.size());
  EXPECT_EQ(four.parted.off_caller_thread, four.parted.by_part);
  // One part per worker: 4 threads less the caller and DumpOptions::sink_threads (1).
  EXPECT_EQ(four.parted.merged_parts, 2u);
}

// A part's error stops the dump at the unit where the sink's own AddUnit error would: same
// status, and the sinks listed before it had that unit.
TEST(DumpThreadsTest, APartsErrorStopsTheDumpWhereAddUnitsWould) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(120'000);
  ASSERT_THAT(buffer, IsOk());
  absl::StatusOr<DecodedTrace> decoded = Decode(buffer->layout, buffer->words);
  ASSERT_THAT(decoded, IsOk());
  const uint64_t fail_at = decoded->records.size() * 2 / 3;
  const Dumped one = DumpWithThreads(buffer->layout, buffer->words, {}, 1, fail_at);
  EXPECT_EQ(one.status,
            absl::InvalidArgumentError(absl::StrCat("parted: no record ", fail_at, " please")));
  // Parts from two workers on (threads less the caller and sink_threads, 1).
  for (int threads : {4, 5}) {
    SCOPED_TRACE(absl::StrCat(threads, " threads"));
    const Dumped many = DumpWithThreads(buffer->layout, buffer->words, {}, threads, fail_at);
    EXPECT_EQ(many.status, one.status);
    EXPECT_EQ(many.sink.text, one.sink.text) << "the transcript sink had the same units";
    EXPECT_FALSE(many.parted.ended);
    EXPECT_GT(many.parted.by_part, 0u);
  }
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
