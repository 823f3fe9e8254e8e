// Perfetto writer throughput: how fast warptrace turns timeline slices into Perfetto's
// protobuf trace format, and how many bytes per event it writes.
//
//   bazel run -c opt //tests/profiler/outputs/perfetto:perfetto_benchmark
//
// Every benchmark takes the number of trace events (a slice is two events) and reports
// items_per_second = events/s, bytes_per_second = output bytes/s and bytes_per_event.
//   BM_PerfettoFormatOnly  Timeline -> PerfettoWriter into a buffered stream that discards
//                          the bytes: the writer's own cost.
//   BM_PerfettoToFile      Timeline -> .pftrace file, atomically (WritePerfettoTraceFile),
//                          as the CLI writes it.
//   BM_PerfettoHandoffsFormatOnly  the same on a warp-specialized pipeline whose hand-offs
//                          are recorded (profiler/testing/pipeline_synthesizer.h, trace v2:
//                          arrivals, phase waits, async copies; a producer and two consumers
//                          per block): instants, async lanes, a flow per hand-off, stage-ring
//                          counters; events = the units' timeline events (UnitTimeline::events).
// Timelines come from tests/profiler/timeline_fixture.h: units of ~200 events, a kernel
// slice around loop bodies around two regions (depth 3).
// Measured 2026-11-30 (2 vCPUs, load ~4-9, CPU time, median of 3): BM_PerfettoFormatOnly/1e6
// 14.7-17.7 ms (57-68 M events/s, 14.9 bytes/event); BM_PerfettoHandoffsFormatOnly/1e6
// (2.33 M events, 736 k flow listings) 183 ms (12.7 M events/s, 18.2 bytes/event): the
// hand-off events take the protobuf-message path (was 304 ms before reusing the packet's
// TrackEvent instead of Clear()ing it and interning the "barrier"/"phase" annotation names). Numbers: /work/notes/perfetto.md
// and the commit that last changed this file.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "benchmark/benchmark.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/dump/collector.h"
#include "profiler/outputs/perfetto/perfetto_writer.h"
#include "profiler/testing/pipeline_synthesizer.h"
#include "profiler/timeline/timeline_types.h"
#include "tests/profiler/timeline_fixture.h"

namespace warptrace {
namespace {

using testing::SpecForEvents;
using testing::SyntheticTimeline;

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

void Report(benchmark::State& state, uint64_t events, uint64_t bytes) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["bytes_per_event"] = static_cast<double>(bytes) / static_cast<double>(events);
}

// Writes `timeline` as Perfetto protobuf into a byte counter once per iteration; returns the
// bytes of one trace (0 after an error, reported through `state`).
uint64_t FormatLoop(benchmark::State& state, const Timeline& timeline) {
  uint64_t bytes = 0;
  for (auto _ : state) {
    CountingSink sink;
    PerfettoWriter writer(sink);
    absl::Status status = writer.Begin(timeline.layout, timeline.origin_ns);
    for (const UnitTimeline& unit : timeline.units) {
      if (status.ok()) status = writer.AddUnit(unit);
    }
    if (status.ok()) status = writer.End();
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return 0;
    }
    sink.flush();
    bytes = sink.bytes();
  }
  return bytes;
}

void BM_PerfettoFormatOnly(benchmark::State& state) {
  const Timeline timeline = SyntheticTimeline(SpecForEvents(static_cast<uint64_t>(state.range(0))));
  const uint64_t bytes = FormatLoop(state, timeline);
  Report(state, Events(timeline), bytes);
}
BENCHMARK(BM_PerfettoFormatOnly)->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_PerfettoHandoffsFormatOnly(benchmark::State& state) {
  testing::PipelineSpec spec;
  spec.consumers = 2;
  spec.stages = 4;
  spec.iterations = 100;
  spec.load_cycles = 300;
  spec.mma_cycles = 280;
  spec.event_cost_cycles = 20;
  spec.handoff_payloads = true;
  spec.num_virtual_sms = 132;
  // About 3 x 4 events per iteration per unit (with payload slots, more).
  spec.blocks = static_cast<uint32_t>(
      std::max<int64_t>(1, state.range(0) / (3 * 4 * int64_t{spec.iterations})));
  absl::StatusOr<testing::PipelineTrace> pipeline = testing::SynthesizePipeline(spec);
  if (!pipeline.ok()) {
    state.SkipWithError(std::string(pipeline.status().message()).c_str());
    return;
  }
  absl::StatusOr<std::unique_ptr<Trace>> trace =
      CollectTrace(pipeline->layout, std::move(pipeline->words));
  if (!trace.ok()) {
    state.SkipWithError(std::string(trace.status().message()).c_str());
    return;
  }
  const Timeline& timeline = (*trace)->timeline;
  uint64_t events = 0, flows = 0;
  for (const UnitTimeline& u : timeline.units) {
    events += u.events;
    flows += u.flows.size();
  }
  const uint64_t bytes = FormatLoop(state, timeline);
  Report(state, events, bytes);
  state.counters["flows_listed"] = static_cast<double>(flows);
}
BENCHMARK(BM_PerfettoHandoffsFormatOnly)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_PerfettoToFile(benchmark::State& state) {
  const Timeline timeline = SyntheticTimeline(SpecForEvents(static_cast<uint64_t>(state.range(0))));
  const std::string path = TestTempPath("warptrace_perfetto_benchmark.pftrace");
  uint64_t bytes = 0;
  for (auto _ : state) {
    absl::Status status = WritePerfettoTraceFile(timeline, path);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      break;
    }
    state.PauseTiming();
    uint64_t size = 0;
    llvm::sys::fs::file_size(path, size);
    bytes = size;
    llvm::sys::fs::remove(path);
    state.ResumeTiming();
  }
  Report(state, Events(timeline), bytes);
}
BENCHMARK(BM_PerfettoToFile)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace warptrace

BENCHMARK_MAIN();
