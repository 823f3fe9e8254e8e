// Mosaic-compatible Chrome trace: the events JAX Mosaic GPU's own profiler dump writes
// (jax/experimental/mosaic/gpu/profiler.py, ProfilerSpec.dump), event for event, from a
// verified dump of a Mosaic buffer (profiler/imports/mosaic_import.h). It is
// ChromeEventStyle::kMosaic (chrome_trace_options.h): `warptrace dump --events=mosaic`, and
// the default of warptrace.mosaic.install(), so that routing Mosaic's dump through warptrace
// changes nothing its user sees; verification, overflow errors and the other outputs are
// warptrace's as usual.
//
//   TraceOutput& out = request.traces.emplace_back();   // profiler/frontend/dump_files.h
//   out.chrome.events = ChromeEventStyle::kMosaic;      // DumpToFiles picks this sink
//   out.fd = fileno;                                    // or a path, or a stream
//
// Output: {"displayTimeUnit": "ns", "traceEvents": [{"name", "ph", "ts", "pid", "tid"}, ...]}
// (Mosaic's keys in Mosaic's order; compact, where Python's json.dump puts a space after ','
// and ':'; ts written as the shortest decimal that reads back as the same double, as Python
// writes floats, so a JSON reader gets bit-identical numbers). Nothing else: no metadata
// events, no otherData (the verdicts and findings are in the dump's report).
//
// The rules, Mosaic's (checked against the real JAX by tests/python:mosaic_parity_test):
//   * Traces: one per record with at least one event (Mosaic leaves out empty traces), its
//     events in recording order, each a "B" (enter) or an "E" (tag bit 31: exit) named by
//     the site (= Mosaic's interned name id).
//   * pid = 1 + the record's SM id; tid = 1 + trace + traces_per_block x Mosaic's block index,
//     which is x-major: ((bx * grid.y + by) * grid.z + bz).
//   * Overhead: ONE estimate for the whole buffer, m = the smallest step between consecutive
//     events of any trace, computed in uint32 (a step across a clock wrap or backwards is
//     large, so it does not count), and at most 12 ("a ballpark estimate for H100");
//     overhead = m - 1 in uint32 (so m = 0 gives 2^32 - 1, as Mosaic's numpy arithmetic
//     does: every event then moves k cycles later). MosaicTimestamps::compensate_overhead
//     false: overhead 0.
//   * Times, per trace, in uint32 arithmetic (it wraps, as numpy's does): event k's time is
//     clock_k - clock_0 - k x overhead; if it is not greater than the previous event's time
//     it becomes that + 1 (Mosaic's clamp of a clock that goes backwards; verify reports the
//     step as a finding). Cycles are counted as nanoseconds (Mosaic's convention); with
//     MosaicTimestamps::sm_clock_khz the time is converted at that clock instead,
//     round(time x 10^6 / kHz) ns (calibrated: not Mosaic's numbers).
//   * ts = ((start + time) mod 2^32) / 1000 µs as a double, where start is the trace's
//     globaltimer low word (ns) that Mosaic recorded: a sum past 2^32 wraps, as Mosaic's does.
//   * Order: traces by their first event's ts, ties in Mosaic's order (block index, then
//     trace), each trace's events together.
//   * bounds_check (MosaicTimestamps::close_truncated; JAX's dump since 0.10.2, e.g. 0.12.1,
//     which does it for every trace): a trace whose regions are left open at its end (one
//     bounds_check truncated) is followed by a synthetic "E" per open region, innermost
//     first, with that region's name, pid and tid and the ts of the trace's last event (an
//     exit that closes nothing open, where Mosaic's dump fails, is written as recorded).
// Verification is warptrace's, as for every output: in strict mode a finding that is an
// error (a clock that goes back more than the overhead, unbalanced regions, an overflow with
// the exact entries_per_warpgroup that fits) fails the dump and nothing is written; with
// VerifyOptions::allow_truncated it is a warning and this output still holds every event
// the record kept, as Mosaic's dump would (it is written from the decoded records, not the
// trimmed timeline; an overflowed record keeps its recorded prefix, where Mosaic raises).
// Mosaic's wraparound check (`if time < 0: break`) compares a uint32 and never fires, so
// every event is kept, here too.
//
// Memory: unlike the other writers, O(events) (8 bytes each): the overhead estimate and the
// sort by first timestamp need the whole buffer, so the events are written at End.
// Threads: with `threads` > 1, End formats runs of traces (about kMosaicChunkEvents events
// each) on that many background threads (base/chunk_pipeline.h), which write them to `os` in
// order: the bytes are the same as with 1, where End does it all on the calling thread.
// Thread-safety: one sink per dump, called from one thread; `os` is written from End's
// workers only while End runs.
#ifndef WARPTRACE_PROFILER_OUTPUTS_MOSAIC_TRACE_H_
#define WARPTRACE_PROFILER_OUTPUTS_MOSAIC_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "format/layout.h"
#include "format/trace_abi.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/dump/sink.h"
#include "profiler/outputs/chrome_trace_options.h"

namespace warptrace {

// Mosaic's upper bound of its overhead estimate, in cycles.
inline constexpr uint32_t kMosaicOverheadCeilingCycles = 12;
// About how many events End formats as one piece of work (whole traces).
inline constexpr uint64_t kMosaicChunkEvents = 1 << 14;

// Writes to `os` at End (nothing before it: a dump that fails leaves `os` untouched).
// AddUnit and End return FailedPrecondition before Begin; AddUnit returns InvalidArgument
// if a record's tag names no site of the layout (Mosaic's KeyError); stream errors are the
// stream's (the front end checks them).
class MosaicTraceSink : public TraceSink {
 public:
  MosaicTraceSink(const MosaicTimestamps& options, llvm::raw_ostream& os, int threads = 1);
  absl::string_view Name() const override { return "Mosaic-compatible Chrome trace"; }
  absl::Status Begin(const TraceBegin& begin) override;
  absl::Status AddUnit(const UnitView& unit) override;
  absl::Status End(const TraceEnd& end) override;

 private:
  struct Trace {
    uint64_t mosaic_index = 0;  // block index (x-major) x traces_per_block + trace
    uint32_t sm_id = 0;
    uint32_t start = 0;         // globaltimer low word, ns
    uint64_t first_event = 0;   // into events_
    uint32_t event_count = 0;
  };
  struct Format;  // what End formats the events with (mosaic_trace.cc)

  MosaicTimestamps options_;
  llvm::raw_ostream& os_;
  const int threads_;
  const TraceLayout* layout_ = nullptr;
  std::vector<Trace> traces_;
  std::vector<abi::Event> events_;
  absl::flat_hash_map<uint32_t, std::string> names_;  // by site id, valid UTF-8
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_MOSAIC_TRACE_H_
