// DumpRequest::threads (profiler/frontend/dump_files.h): every trace output is byte-identical
// whatever the number of threads — Perfetto (deflated on background threads), Chrome JSON
// (written by one) and Mosaic's JSON (formatted at End by the workers) — by path, by file
// descriptor and by stream, on traces big enough to cross many of the pipelines' chunks.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/file.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis_json.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/imports/mosaic_import.h"
#include "profiler/outputs/mosaic_trace.h"
#include "profiler/testing/pipeline_synthesizer.h"
#include "tests/profiler/imports/mosaic_buffer_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::IsOk;

enum class Target { kPath, kFd, kStream };

struct Output {
  TraceFormat format;
  ChromeEventStyle events = ChromeEventStyle::kComplete;
};

// Dumps with `threads` into the one output and returns its bytes.
std::string DumpWith(const TraceLayout& layout, absl::Span<const uint32_t> words,
                     const Output& output, Target target, int threads,
                     const std::string& name) {
  DumpRequest request;
  request.threads = threads;
  request.summary = true;  // sinks beside the writer, as the CLI's --summary has
  TraceOutput& out = request.traces.emplace_back();
  out.format = output.format;
  out.chrome.events = output.events;
  std::string bytes;
  llvm::raw_string_ostream stream(bytes);
  const std::string path = TestTempPath(name);
  int fd = -1;
  switch (target) {
    case Target::kPath:
      out.path = path;
      break;
    case Target::kFd:
      fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
      EXPECT_GE(fd, 0);
      out.fd = fd;
      break;
    case Target::kStream:
      out.stream = &stream;
      break;
  }
  const DumpOutcome outcome = DumpToFiles(layout, words, request);
  EXPECT_THAT(outcome.status, IsOk());
  EXPECT_TRUE(outcome.summary.has_value());
  if (fd >= 0) ::close(fd);
  if (target == Target::kStream) return stream.str();
  absl::StatusOr<std::string> file =
      ReadFile(path, {.role = "dump output", .register_as_input = false});
  EXPECT_THAT(file.status(), IsOk());
  return file.ok() ? *file : "";
}

class DumpThreadsTest : public ::testing::TestWithParam<Target> {};

TEST_P(DumpThreadsTest, PerfettoAndChromeOutputsAreTheSameWithAnyNumberOfThreads) {
  testing::PipelineSpec spec;
  spec.blocks = 160;
  spec.consumers = 2;
  spec.iterations = 40;
  spec.jitter_cycles = 50;
  spec.handoff_payloads = true;  // flows, async spans, stage-ring counters: every path
  absl::StatusOr<testing::PipelineTrace> trace = testing::SynthesizePipeline(spec);
  ASSERT_THAT(trace.status(), IsOk());
  for (const Output& output : {Output{TraceFormat::kPerfetto},
                               Output{TraceFormat::kChromeJson},
                               Output{TraceFormat::kChromeJson, ChromeEventStyle::kBeginEnd}}) {
    const std::string one = DumpWith(trace->layout, trace->words, output, GetParam(), 1, "one");
    // Several 256 KiB packet buffers (Perfetto) or 1 MiB chunks (JSON): the pipelines run.
    ASSERT_GT(one.size(), output.format == TraceFormat::kPerfetto ? 100'000u : 3'000'000u);
    for (int threads : {2, 3, 8}) {
      const std::string many =
          DumpWith(trace->layout, trace->words, output, GetParam(), threads, "many");
      ASSERT_EQ(many.size(), one.size()) << "threads " << threads;
      EXPECT_TRUE(many == one) << "threads " << threads << ": the bytes differ";
    }
  }
}

TEST_P(DumpThreadsTest, MosaicJsonIsTheSameWithAnyNumberOfThreads) {
  // 600 traces of 160 events: more than one kMosaicChunkEvents piece of work, with starts out
  // of buffer order so that the sort decides which piece holds what.
  constexpr uint32_t kEvents = 160;
  std::vector<testing::MosaicTrace> traces(600);
  for (size_t i = 0; i < traces.size(); ++i) {
    testing::MosaicTrace& t = traces[i];
    t.start_lo = static_cast<uint32_t>(1'000'000 + (i * 7919) % 5000);
    t.smid = static_cast<uint32_t>(i % 132);
    uint32_t clock = 100 + static_cast<uint32_t>(i);
    for (uint32_t k = 0; k < kEvents / 2; ++k) {
      t.events.push_back({k % 2, clock += 5 + k % 11});
      t.events.push_back({(k % 2) | (1u << 31), clock += 20 + (i + k) % 13});
    }
  }
  ASSERT_GT(traces.size() * kEvents, kMosaicChunkEvents);
  MosaicSidecar sidecar;
  sidecar.grid = Dim3{300, 1, 1};
  sidecar.block = Dim3{256, 1, 1};
  sidecar.entries_per_trace = 3 + 2 * kEvents;
  sidecar.names = {"outer", "inner"};
  sidecar.kernel_name = "k";
  absl::StatusOr<MosaicImport> imported =
      ConvertMosaicBuffer(sidecar, testing::MosaicWords(traces, sidecar.entries_per_trace));
  ASSERT_THAT(imported.status(), IsOk());
  const Output mosaic{TraceFormat::kChromeJson, ChromeEventStyle::kMosaic};
  const std::string one =
      DumpWith(imported->trace.layout, imported->trace.words, mosaic, GetParam(), 1, "one");
  ASSERT_GT(one.size(), 1'000'000u);
  for (int threads : {2, 4}) {
    const std::string many = DumpWith(imported->trace.layout, imported->trace.words, mosaic,
                                      GetParam(), threads, "many");
    EXPECT_TRUE(many == one) << "threads " << threads << ": the bytes differ";
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, DumpThreadsTest,
                         ::testing::Values(Target::kPath, Target::kFd, Target::kStream));

// The analysis (and summary) beside a trace output: with 3 or more threads the prepare
// workers feed parts of the analysis and summary sinks, merged at the end (sink.h). The
// analysis JSON is the same to the byte as on one thread.
TEST(DumpThreadsAnalysisTest, TheAnalysisIsTheSameWithAnyNumberOfThreads) {
  // Without jitter blocks tie: the order they are merged in names the slowest block.
  for (uint32_t jitter : {0u, 50u}) {
    testing::PipelineSpec spec;
    spec.blocks = 600;
    spec.consumers = 2;
    spec.iterations = 12;
    spec.jitter_cycles = jitter;
    spec.event_cost_cycles = 3;
    spec.num_virtual_sms = 16;
    absl::StatusOr<testing::PipelineTrace> trace = testing::SynthesizePipeline(spec);
    ASSERT_THAT(trace.status(), IsOk());
    auto analysis_with = [&](int threads, bool with_trace) {
      DumpRequest request;
      request.threads = threads;
      request.summary = true;
      std::string bytes;
      llvm::raw_string_ostream stream(bytes);
      if (with_trace) {
        TraceOutput& out = request.traces.emplace_back();
        out.format = TraceFormat::kPerfetto;
        out.stream = &stream;
      }
      const DumpOutcome outcome = DumpToFiles(trace->layout, trace->words, request);
      EXPECT_THAT(outcome.status, IsOk());
      std::string json;
      llvm::raw_string_ostream os(json);
      if (outcome.analysis.has_value()) WriteAnalysisJson(*outcome.analysis, os);
      os.flush();
      return json;
    };
    const std::string one = analysis_with(1, true);
    ASSERT_GT(one.size(), 1000u);
    for (bool with_trace : {true, false}) {
      for (int threads : {2, 3, 4, 8}) {
        EXPECT_TRUE(analysis_with(threads, with_trace) == one)
            << "jitter " << jitter << ", threads " << threads
            << (with_trace ? " beside a trace" : " alone") << ": the analysis differs";
      }
    }
  }
}

TEST(DumpThreadsFailureTest, AFailedDumpWithThreadsLeavesNoFileBehind) {
  testing::PipelineSpec spec;
  spec.blocks = 40;
  absl::StatusOr<testing::PipelineTrace> trace = testing::SynthesizePipeline(spec);
  ASSERT_THAT(trace.status(), IsOk());
  // The last unit's magic is gone: a corrupt record, an error in strict mode, found after
  // every earlier unit went to the writers.
  std::vector<uint32_t> words = trace->words;
  const size_t records = size_t{spec.blocks} * (1 + spec.consumers);
  words[words.size() - words.size() / records] = 0xdeadbeefu;
  for (TraceFormat format : {TraceFormat::kPerfetto, TraceFormat::kChromeJson}) {
    DumpRequest request;
    request.threads = 2;
    TraceOutput& out = request.traces.emplace_back();
    out.format = format;
    out.path = TestTempPath("failed");
    const DumpOutcome outcome = DumpToFiles(trace->layout, words, request);
    EXPECT_FALSE(outcome.status.ok());
    EXPECT_FALSE(ReadFile(out.path, {.register_as_input = false}).ok())
        << "a failed dump wrote " << out.path;
  }
}

}  // namespace
}  // namespace warptrace
