// Perfetto writer throughput: how fast warptrace turns timeline slices into Perfetto's
// protobuf trace format, and how many bytes per event it writes.
//
//   bazel run -c opt //tests/profiler/perfetto:perfetto_benchmark
//
// Every benchmark takes the number of trace events (a slice is two events) and reports
// items_per_second = events/s, bytes_per_second = output bytes/s and bytes_per_event.
//   BM_PerfettoFormatOnly  Timeline -> PerfettoWriter into a buffered stream that discards
//                          the bytes: the writer's own cost.
//   BM_PerfettoToFile      Timeline -> .pftrace file, atomically (WritePerfettoTraceFile),
//                          as the CLI writes it.
// Timelines come from tests/profiler/timeline_fixture.h: units of ~200 events, a kernel
// slice around loop bodies around two regions (depth 3). Numbers: /work/notes/perfetto.md
// and the commit that last changed this file.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "benchmark/benchmark.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/perfetto/perfetto_writer.h"
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

void BM_PerfettoFormatOnly(benchmark::State& state) {
  const Timeline timeline = SyntheticTimeline(SpecForEvents(static_cast<uint64_t>(state.range(0))));
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
      break;
    }
    sink.flush();
    bytes = sink.bytes();
  }
  Report(state, Events(timeline), bytes);
}
BENCHMARK(BM_PerfettoFormatOnly)->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

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
