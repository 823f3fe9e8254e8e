// Dump throughput: how fast warptrace turns trace events into Chrome trace JSON.
//
//   bazel run -c opt //tests/profiler:dump_benchmark
//   bazel run -c opt //tests/profiler:dump_benchmark -- --benchmark_filter=ToFile
//
// Every benchmark takes the number of trace events (1e4 .. 1e7; a slice is two events) and
// reports items_per_second = events/s and bytes_per_second = output bytes/s, plus:
//   heap_growth_MB  the most heap the timed part held above what was live before it (global
//                   operator new is counted in this binary): shows that writing does not
//                   grow with the event count;
//   input_MB        the size of what the timed part reads (the Timeline's slices, or the raw
//                   buffer);
//   maxrss_MB       the process's peak resident set so far (getrusage), for scale.
//
// Benchmarks:
//   BM_DecodeVerifyTimeline raw buffer → decode → per unit walk, verify, timeline (DumpTrace,
//                           profiler/dump/dump.h) with no sink: the dump's analysis cost
//                           (bytes_per_second counts input bytes).
//   BM_FullDumpToFile       the same, streaming each unit to a Chrome JSON ("X") file
//                           through ChromeTraceSink:
//                           what `warptrace dump --output=trace.json` does after reading
//                           the buffer.
//   BM_DecodeVerifyTimelineAnalysis  BM_DecodeVerifyTimeline with the analysis sink
//                           (profiler/analysis/analysis_sink.h): what the analysis costs.
//   BM_FullDumpToFileWithAnalysis    BM_FullDumpToFile with the analysis sink too: what
//                           `warptrace dump --output=trace.json --analysis=a.json` does.
//   BM_FullDumpToFilePipeline/events:N/analysis:0|1/v2:0|1  BM_FullDumpToFile(WithAnalysis)
//                           on a warp-specialized pipeline (a producer, two consumers, a third
//                           of the slices waits): v2:0 a version-1 trace with its hand-off
//                           links passed to the sink, v2:1 the hand-offs recorded (payloads,
//                           arrivals, async copies; the driver resolves the flows, the sink
//                           links them itself); items = the version-1 trace's events.
//   BM_ChromeJsonToFile     Timeline → Chrome JSON ("X" or B/E) in a file, atomically, as the
//                           CLI writes it (WriteChromeTraceFile).
//   BM_ChromeJsonFormatOnly Timeline → Chrome JSON into a buffered sink that discards the
//                           bytes: the writer's own cost without the file system.
// Buffers come from tests/profiler/buffer_fixture.h and Timelines from
// tests/profiler/timeline_fixture.h, both with units of 200 events: a kernel slice around 33
// loop bodies, each around two regions (nesting depth 3).
//
// Measured 2026-11-30 on the 2-vCPU build VM shared by several builds (load average ~13),
// paired with the code before the one-driver dump (0b5155d) run right before it under the
// same load (items_per_second is per CPU second):
//   BM_DecodeVerifyTimeline   91 / 137 / 121 / 117 M events/s at 1e4 / 1e5 / 1e6 / 1e7
//                             (before: 83 / 48 / 83 / 100); heap growth 0.02 / 0.10 / 0.93 /
//                             9.2 MB (before 0.19 / 1.86 / 5.55 / 13.8): O(units), the decoded
//                             headers and verdicts, nothing per event
//   BM_FullDumpToFile         15.6 / 13.9 / 14.8 / 5.2 M events/s (before 13.7 / 13.5 / 11.3 /
//                             2.8, which wrote full per-slice args; lean JSON is the default now)
// The analysis sink, measured 2026-11-30 (load average ~10 on the 2 vCPUs), paired with the
// sink before its one-sweep rewrite, 12 CPU-time samples each (3 rounds x 4 repetitions,
// random interleaving), median ms per iteration at 1e5 / 1e6 events:
//   BM_FullDumpToFile              7.84 / 76.4
//   BM_FullDumpToFileWithAnalysis  8.99 / 87.7   +15% / +15%  (before: 10.1 / 93.7, +30% / +27%)
//   BM_DecodeVerifyTimeline        1.20 / 12.1
//   BM_DecodeVerifyTimelineAnalysis 2.20 / 19.5  the analysis alone 7.4 ms per 1e6 events
//                                                (before 3.14 / 32.4: 20.8 ms)
// On the pipeline (BM_FullDumpToFilePipeline/v2:0, links passed in), at ef8ff1c, 12 samples
// each, load ~10, median (min) ms at 1e5 / 1e6 events, analysis:0 -> analysis:1:
//   4.95 (4.56) -> 6.19 (5.83): +25% (+28%);  47.4 (45.9) -> 58.3 (57.3): +23% (+25%)
// and the fixture in the same run: BM_FullDumpToFile 5.49 / 53.1 -> WithAnalysis 6.26 / 61.3
// (+14% / +15%). By perf samples at 1e6 the sink is ~16% of a pipeline dump: the sweep ~6%,
// linking ~4%, waits ~2.5%, the walk ~1.5%.
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "base/testing/temp_path.h"
#include "benchmark/benchmark.h"
#include "format/trace_abi.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis_sink.h"
#include "profiler/dump/dump.h"
#include "profiler/outputs/chrome_trace.h"
#include "profiler/outputs/chrome_trace_sink.h"
#include "profiler/testing/handoff_synthesizer.h"
#include "profiler/testing/pipeline_synthesizer.h"
#include "profiler/timeline/timeline_types.h"
#include "tests/profiler/buffer_fixture.h"
#include "tests/profiler/timeline_fixture.h"

// ---- Heap accounting ----------------------------------------------------------------------
namespace {

std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};

void CountAlloc(void* p) {
  const int64_t live =
      g_live_bytes.fetch_add(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed) +
      static_cast<int64_t>(malloc_usable_size(p));
  int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak &&
         !g_peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

void* CountedAlloc(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  CountAlloc(p);
  return p;
}

void* CountedAlignedAlloc(size_t n, std::align_val_t align) {
  const size_t a = static_cast<size_t>(align);
  void* p = std::aligned_alloc(a, (n + a - 1) / a * a);
  if (p == nullptr) throw std::bad_alloc();
  CountAlloc(p);
  return p;
}

void CountedFree(void* p) {
  if (p == nullptr) return;
  g_live_bytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  std::free(p);
}

}  // namespace

void* operator new(size_t n) { return CountedAlloc(n); }
void* operator new[](size_t n) { return CountedAlloc(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return CountedAlloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  try {
    return CountedAlloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(size_t n, std::align_val_t a) { return CountedAlignedAlloc(n, a); }
void* operator new[](size_t n, std::align_val_t a) { return CountedAlignedAlloc(n, a); }
void operator delete(void* p) noexcept { CountedFree(p); }
void operator delete[](void* p) noexcept { CountedFree(p); }
void operator delete(void* p, size_t) noexcept { CountedFree(p); }
void operator delete[](void* p, size_t) noexcept { CountedFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { CountedFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { CountedFree(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { CountedFree(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { CountedFree(p); }

namespace warptrace {
namespace {

using testing::SpecForEvents;
using testing::SyntheticEventsPerUnit;
using testing::SyntheticTimeline;

// Heap held above the level at construction, at its highest, until Report.
class HeapWatch {
 public:
  HeapWatch() : base_(g_live_bytes.load()) { g_peak_bytes.store(base_); }
  void Report(benchmark::State& state) const {
    state.counters["heap_growth_MB"] =
        static_cast<double>(g_peak_bytes.load() - base_) / 1e6;
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    state.counters["maxrss_MB"] = static_cast<double>(usage.ru_maxrss) / 1e3;
  }

 private:
  int64_t base_;
};

// A raw_ostream that counts and discards, buffered like a file stream.
class CountingSink : public llvm::raw_ostream {
 public:
  CountingSink() { SetBufferSize(size_t{1} << 20); }
  ~CountingSink() override { flush(); }
  uint64_t bytes() const { return bytes_ + GetNumBytesInBuffer(); }

 private:
  void write_impl(const char* /*ptr*/, size_t size) override { bytes_ += size; }
  uint64_t current_pos() const override { return bytes_; }
  uint64_t bytes_ = 0;
};

uint64_t Events(const Timeline& t) {
  uint64_t events = 0;
  for (const UnitTimeline& u : t.units) events += 2 * u.slices.size();
  return events;
}

double SliceMB(const Timeline& t) {
  return static_cast<double>(Events(t) / 2 * sizeof(Slice)) / 1e6;
}

std::string OutputPath() { return TestTempPath("warptrace_dump_benchmark.json"); }

ChromeTraceOptions Style(int64_t arg) {
  ChromeTraceOptions options;
  options.events = arg == 0 ? ChromeEventStyle::kComplete : ChromeEventStyle::kBeginEnd;
  return options;
}

void BM_ChromeJsonToFile(benchmark::State& state) {
  const Timeline timeline = SyntheticTimeline(SpecForEvents(static_cast<uint64_t>(state.range(0))));
  const ChromeTraceOptions options = Style(state.range(1));
  const std::string path = OutputPath();
  uint64_t file_bytes = 0;
  HeapWatch heap;
  for (auto _ : state) {
    absl::Status status = WriteChromeTraceFile(timeline, options, path);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      break;
    }
    // A dump writes a new file; deleting the previous one (and its page cache) is not its
    // cost.
    state.PauseTiming();
    llvm::sys::fs::file_size(path, file_bytes);
    llvm::sys::fs::remove(path);
    state.ResumeTiming();
  }
  heap.Report(state);
  llvm::sys::fs::remove(path);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * Events(timeline)));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * file_bytes));
  state.counters["input_MB"] = SliceMB(timeline);
  state.SetLabel(options.events == ChromeEventStyle::kComplete ? "X" : "B/E");
}

void BM_ChromeJsonFormatOnly(benchmark::State& state) {
  const Timeline timeline = SyntheticTimeline(SpecForEvents(static_cast<uint64_t>(state.range(0))));
  const ChromeTraceOptions options = Style(state.range(1));
  uint64_t bytes = 0;
  HeapWatch heap;
  for (auto _ : state) {
    CountingSink sink;
    absl::Status status = WriteChromeTrace(timeline, options, sink);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      break;
    }
    bytes = sink.bytes();
  }
  heap.Report(state);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * Events(timeline)));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["input_MB"] = SliceMB(timeline);
  state.SetLabel(options.events == ChromeEventStyle::kComplete ? "X" : "B/E");
}

// Events per second, bytes per second (`bytes` per iteration) and the input's size.
void ReportThroughput(benchmark::State& state, uint64_t events, uint64_t bytes,
                      size_t input_words) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["input_MB"] = static_cast<double>(input_words * 4) / 1e6;
}

void DecodeVerifyTimeline(benchmark::State& state, bool analysis) {
  absl::StatusOr<testing::SyntheticBuffer> buffer =
      testing::MakeSyntheticBuffer(static_cast<uint64_t>(state.range(0)));
  if (!buffer.ok()) {
    state.SkipWithError(std::string(buffer.status().message()).c_str());
    return;
  }
  DumpResult result;
  HeapWatch heap;
  for (auto _ : state) {
    AnalysisSink analysis_sink;
    std::vector<TraceSink*> sinks;
    if (analysis) sinks.push_back(&analysis_sink);
    absl::Status status = DumpTrace(buffer->layout, buffer->words, {}, sinks, result);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(result);
  }
  heap.Report(state);
  if (result.slices * 2 != buffer->events && !state.error_occurred()) {
    state.SkipWithError("the timeline lost events");
  }
  ReportThroughput(state, buffer->events, buffer->words.size() * 4, buffer->words.size());
  state.SetLabel(analysis ? "analysis; bytes = input" : "no output; bytes = input");
}

void BM_DecodeVerifyTimeline(benchmark::State& state) { DecodeVerifyTimeline(state, false); }
void BM_DecodeVerifyTimelineAnalysis(benchmark::State& state) {
  DecodeVerifyTimeline(state, true);
}

// A warp-specialized pipeline (profiler/testing/pipeline_synthesizer.h) of about `events`
// events: a producer and two consumers per block, 100 iterations over 4 stages, every
// iteration a barrier wait and a region per unit, with its exact hand-off links: what the
// analysis sees of a real pipeline (a third of the slices are waits).
struct PipelineBuffer {
  TraceLayout layout;
  std::vector<uint32_t> words;
  uint64_t events = 0;
  std::vector<HandoffLink> links;
};

absl::StatusOr<PipelineBuffer> MakePipelineBuffer(uint64_t events, bool v2) {
  testing::PipelineSpec spec;
  spec.handoff_payloads = v2;
  spec.consumers = 2;
  spec.stages = 4;
  spec.iterations = 100;
  spec.load_cycles = 300;
  spec.mma_cycles = 280;
  spec.jitter_cycles = 40;
  spec.event_cost_cycles = 20;
  const uint64_t per_block = 3 * (2 + 4 * uint64_t{spec.iterations});
  spec.blocks = static_cast<uint32_t>(std::max<uint64_t>(1, events / per_block));
  spec.num_virtual_sms = 132;
  ASSIGN_OR_RETURN(testing::PipelineTrace trace, testing::SynthesizePipeline(spec));
  PipelineBuffer out;
  out.layout = std::move(trace.layout);
  out.words = std::move(trace.words);
  out.links = std::move(trace.links);
  out.events = uint64_t{spec.blocks} * (per_block - 2 * spec.stages);  // no empty wait yet
  if (v2) out.links.clear();  // the trace has them: the sink resolves its flows
  return out;
}

// The body every whole-dump benchmark shares: each iteration dumps `words` into a Chrome
// trace file through ChromeTraceSink plus the sinks `more_sinks` returns (made fresh per
// iteration, like a CLI run), then measures and removes the file. Returns the file's bytes
// (0 after an error, which is reported through `state`); reports heap growth.
uint64_t DumpToFileLoop(
    benchmark::State& state, const TraceLayout& layout, absl::Span<const uint32_t> words,
    const std::function<std::vector<std::unique_ptr<TraceSink>>()>& more_sinks,
    DumpResult& result) {
  const std::string path = OutputPath();
  uint64_t file_bytes = 0;
  HeapWatch heap;
  for (auto _ : state) {
    absl::Status status = WriteLargeFileAtomically(path, [&](llvm::raw_ostream& os) {
      ChromeTraceSink chrome({}, os);
      std::vector<std::unique_ptr<TraceSink>> owned = more_sinks();
      std::vector<TraceSink*> sinks = {&chrome};
      for (const std::unique_ptr<TraceSink>& sink : owned) sinks.push_back(sink.get());
      return DumpTrace(layout, words, {}, sinks, result);
    });
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return 0;
    }
    state.PauseTiming();
    llvm::sys::fs::file_size(path, file_bytes);
    llvm::sys::fs::remove(path);
    state.ResumeTiming();
  }
  heap.Report(state);
  return file_bytes;
}

void FullDumpToFilePipeline(benchmark::State& state) {
  const bool analysis = state.range(1) != 0;
  const bool v2 = state.range(2) != 0;
  absl::StatusOr<PipelineBuffer> buffer =
      MakePipelineBuffer(static_cast<uint64_t>(state.range(0)), v2);
  if (!buffer.ok()) {
    state.SkipWithError(std::string(buffer.status().message()).c_str());
    return;
  }
  DumpResult result;
  const uint64_t file_bytes = DumpToFileLoop(
      state, buffer->layout, buffer->words,
      [&] {
        std::vector<std::unique_ptr<TraceSink>> sinks;
        AnalysisOptions options;
        options.handoffs = buffer->links;
        if (analysis) sinks.push_back(std::make_unique<AnalysisSink>(options));
        return sinks;
      },
      result);
  if (!v2 && result.slices * 2 != buffer->events && !state.error_occurred()) {
    state.SkipWithError("the pipeline's event count is off");
  }
  ReportThroughput(state, buffer->events, file_bytes, buffer->words.size());
  state.SetLabel(absl::StrCat(v2 ? "v2 pipeline (hand-offs recorded)" : "pipeline",
                              analysis ? ", X + analysis with links" : ", X"));
}

void FullDumpToFile(benchmark::State& state, bool analysis) {
  absl::StatusOr<testing::SyntheticBuffer> buffer =
      testing::MakeSyntheticBuffer(static_cast<uint64_t>(state.range(0)));
  if (!buffer.ok()) {
    state.SkipWithError(std::string(buffer.status().message()).c_str());
    return;
  }
  DumpResult result;
  const uint64_t file_bytes = DumpToFileLoop(
      state, buffer->layout, buffer->words,
      [&] {
        std::vector<std::unique_ptr<TraceSink>> sinks;
        if (analysis) sinks.push_back(std::make_unique<AnalysisSink>());
        return sinks;
      },
      result);
  ReportThroughput(state, buffer->events, file_bytes, buffer->words.size());
  state.SetLabel(analysis ? "X + analysis" : "X");
}

// A warp-specialized trace with hand-offs (profiler/testing/handoff_synthesizer.h): 2 warps
// per block, `iterations` ring uses per block (each: a copy, 2 arrivals, 2 waits, an mma),
// through decode, verify with the block pass, timeline with flows and the Chrome trace.
void BM_FullDumpHandoffsToFile(benchmark::State& state) {
  testing::HandoffSpec spec;
  spec.blocks = 64;
  spec.stages = 4;
  spec.iterations = static_cast<uint32_t>(state.range(0));
  absl::StatusOr<testing::HandoffTrace> trace = testing::SynthesizeHandoffs(spec);
  if (!trace.ok()) {
    state.SkipWithError(std::string(trace.status().message()).c_str());
    return;
  }
  uint64_t events = 0;  // slots, payloads included
  for (uint64_t r = 0; r < NumRecords(trace->layout); ++r) {
    events += trace->words[r * abi::RecordWords(trace->layout.capacity) + 5];
  }
  DumpResult result;
  const uint64_t file_bytes = DumpToFileLoop(
      state, trace->layout, trace->words,
      [] { return std::vector<std::unique_ptr<TraceSink>>(); }, result);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * file_bytes));
  state.counters["input_MB"] = static_cast<double>(trace->words.size() * 4) / 1e6;
  state.SetLabel("X + flows; items = slots");
}

void BM_FullDumpToFile(benchmark::State& state) { FullDumpToFile(state, false); }
void BM_FullDumpToFileWithAnalysis(benchmark::State& state) { FullDumpToFile(state, true); }

BENCHMARK(BM_DecodeVerifyTimeline)
    ->ArgsProduct({{10'000, 100'000, 1'000'000, 10'000'000}})
    ->ArgNames({"events"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeVerifyTimelineAnalysis)
    ->ArgsProduct({{10'000, 100'000, 1'000'000, 10'000'000}})
    ->ArgNames({"events"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullDumpToFile)
    ->ArgsProduct({{10'000, 100'000, 1'000'000, 10'000'000}})
    ->ArgNames({"events"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullDumpToFileWithAnalysis)
    ->ArgsProduct({{10'000, 100'000, 1'000'000, 10'000'000}})
    ->ArgNames({"events"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(FullDumpToFilePipeline)
    ->Name("BM_FullDumpToFilePipeline")
    ->ArgsProduct({{100'000, 1'000'000}, {0, 1}, {0, 1}})
    ->ArgNames({"events", "analysis", "v2"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FullDumpHandoffsToFile)
    ->ArgsProduct({{16, 256, 2048}})
    ->ArgNames({"iterations"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChromeJsonToFile)
    ->ArgsProduct({{10'000, 100'000, 1'000'000, 10'000'000}, {0, 1}})
    ->ArgNames({"events", "be"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChromeJsonFormatOnly)
    ->ArgsProduct({{10'000, 100'000, 1'000'000, 10'000'000}, {0}})
    ->ArgNames({"events", "be"})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace warptrace
