// Chrome trace output: writes a Timeline (timeline_types.h) as Chrome trace event JSON that
// loads in Perfetto (ui.perfetto.dev) and chrome://tracing.
//
//   ChromeTraceOptions options;                       // "X" complete events
//   RETURN_IF_ERROR(WriteChromeTraceFile(timeline, options, "trace.json"));
//
//   std::string json;                                 // or into any raw_ostream
//   llvm::raw_string_ostream os(json);
//   RETURN_IF_ERROR(WriteChromeTrace(timeline, options, os));
//
// The output is streamed with llvm::json::OStream: memory does not grow with the number of
// slices (only with the number of sites, units and SMs), and nothing is hand-formatted.
// Metadata is written attribute by attribute. Slice events, the bulk, are written as one
// json::OStream::rawValue each, filled from a per-site event template that json::OStream
// itself serialized once (names, keys, escaping) with holes for the numbers, which are
// formatted with std::to_chars. That keeps the per-event cost at a few memcpys and two
// integer conversions (see tests/profiler/dump_benchmark.cc for the numbers).
//
// Shape of the output (one JSON object, compact, fields in this order; everything that
// depends on all units comes last so the trace can be written as it is built):
//
//   {"displayTimeUnit": "ns",
//    "traceEvents": [ per unit: its thread metadata, then its slice events; ...;
//                     process metadata ],
//    "otherData": {"tool": "warptrace", "kernel": ..., "device": ..., "clock": <clock_note>,
//                  "time_source": "device: ..." or "host backend: ..." (ClockInfo::host_backend),
//                  "nominal_sm_clock_khz": N, "grid": "(8,8,1)", "block": "(256,1,1)",
//                  "trace_unit": "warpgroup", "capacity": N,
//                  "origin_ns": "<decimal string>", "overhead_compensated": b,
//                  "units": N, "units_complete": N, "units_truncated": N,
//                  "units_overflowed": N, "units_corrupt": N, "units_missing": N,
//                  "slices": N, "instants": N, "async_spans": N, "flows": N,
//                  "flows_unanchored": N, "dropped_events": N, "slice_args": "lean" | "full",
//                  "sites": [{"id", "name", "kind", "origin"} per site],
//                  "host_anchor": {"globaltimer_ns", "boottime_ns", "realtime_ns" (decimal
//                                  strings), "uncertainty_ns"}  (when the layout has one)}}
//
// Processes and threads:
//   pid = the unit's SM id; process_name "SM 17", process_sort_index 17.
//   tid = block_linear * units_per_block + unit_index: unique across the whole trace (never
//     reused by two SMs), thread_name "block (3,0,0) warpgroup 1" with " [truncated]" etc.
//     appended when the unit's verdict is not complete; thread_sort_index = tid. The
//     thread_name event's args also carry "verdict" and, when not complete, "reason".
//   A unit without a record (UnitTimeline::has_record false: it never ran, or its header
//     was unreadable, so its SM is unknown) goes to process 1048576 (2^20, beyond any SM id),
//     named "no record" and sorted last.
//   Process metadata events carry the tid of the SM's first unit, so no viewer invents an
//     empty thread for them. Every unit of the Timeline gets its thread metadata, including
//     truncated, overflowed, corrupt and missing ones (with no slices for the last two).
//   Thread metadata precedes its unit's slices; process metadata closes the event list, by
//   increasing SM id. (Both viewers read metadata events wherever they are.)
//
// Slice events, per unit in Timeline order, slices in Timeline order (begin, then depth):
//   "X" (default): {"name", "cat", "ph":"X", "ts", "dur", ["args",] "pid", "tid"}
//   "B"/"E":       {"name", "cat", "ph":"B", "ts", ["args",] "pid", "tid"} ... {"ph":"E", "ts",
//                  "pid", "tid"}; every B has its E, E's come innermost first, and within a
//                  thread ts never decreases in file order (so no E precedes its B, even
//                  for zero-length slices, which have B and E at the same ts, in that order).
//   name: the site's name through json::fixUTF8; cat: the site kind ("region", "loop_body",
//   "barrier_wait", "kernel", "phase_wait"; async spans below).
//   args, lean (ChromeSliceArgs::kLean, the default): absent, except {"repaired": true} on a
//   slice closed by --allow-truncated — block and unit are the thread's, the verdict is in
//   the thread name, and site id, kind and origin are in otherData's "sites" (by name).
//   args, full: {"block": "(3,0,0)", "unit": 1, "site": 4, "kind": "region",
//   "origin": "gemm.cc:42"} plus "verdict": "<name>" when the unit is not complete and
//   "repaired": true on a slice closed by --allow-truncated (absent means false).
//   ts: microseconds relative to Timeline::origin_ns, written with exactly three decimals so
//   that every value is exact to the nanosecond ("1234.567"); never negative.
//   dur: end_ns - begin_ns in the same form, >= 0.
//
// Hand-offs (trace version 2: timeline_types.h's instants, async spans and flows), written
// after each unit's slices:
//   instants (barrier arrivals): {"name": site, "cat": "barrier_arrive", "ph": "i",
//     "s": "t", "ts", "args": {"barrier": "full[2]", "phase": N[, "event": slot (full)]},
//     "pid", "tid"} on the unit's thread;
//   async spans (async copies): "X" events (in both event styles) on the unit's async lanes:
//     thread tid = (lane + 1) * units_per_block * grid blocks + the unit's tid, named
//     "<unit> async" / "<unit> async 2" ..., sorted with the unit (same sort index);
//     args {"issue": N[, "barrier": name][, "completed": false]}; spans on one lane never
//     overlap;
//   flows (every link: arrival -> each wait it released, issue -> completion): an "s" event
//     on the source's thread and an "f" event with "bp": "e" on the target's, same "id"
//     (the Flow id), "name" ("hand-off" / "async copy") and "cat" ("arrival_to_release" /
//     "issue_to_completion"); the "s" carries args {"barrier", "phase", "completing"} or
//     {"barrier", "issue"}. Each is placed strictly inside its end's anchor (FlowEnd: a
//     slice of the main track, or the async span), at the event's time moved into
//     (begin, end) of the anchor, so both viewers bind it to that slice. A flow with an end
//     that has no anchor is left out and counted in otherData "flows_unanchored".
//
// Zero-length slices. dur is never rounded up: a region whose begin and end fall in the same
// nanosecond is written with "dur": 0.000. Widening it to one tick (1 ns) would push a child
// that ends with its parent past the parent's end, which breaks nesting — the defect viewers
// do mis-draw. Both viewers accept dur 0 for "X" events (drawn as a hairline, still
// selectable), and in B/E mode a zero-length slice is a B followed by its E at the same ts,
// which both importers keep in file order.
//
// ChromeEventStyle::kMosaic is not this writer's: the front end (dump_files.h) writes it with
// MosaicTraceSink (mosaic_trace.h), Mosaic's own events and numbers; given it, this writer
// writes "B"/"E" events as for kBeginEnd.
//
// Thread-safety: the functions are reentrant; the Timeline is only read.
#ifndef WARPTRACE_PROFILER_OUTPUTS_CHROME_TRACE_H_
#define WARPTRACE_PROFILER_OUTPUTS_CHROME_TRACE_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "format/layout.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/outputs/chrome_trace_options.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {

// Writes `timeline` to `os` as described above. Checks the Timeline first and writes
// nothing if it is malformed. Returns:
//   InvalidArgument  the Timeline breaks its contract: CheckTimeline's errors
//                    (timeline_check.h), whose messages name the unit and the slice.
// Stream errors (e.g. a full disk behind a raw_fd_ostream) are the stream's: the caller
// checks them (WriteChromeTraceFile does).
absl::Status WriteChromeTrace(const Timeline& timeline, const ChromeTraceOptions& options,
                              llvm::raw_ostream& os);

// Writes the trace to the file `path` atomically with WriteLargeFileAtomically (base/file.h):
// a temporary file beside it replaces `path` only once everything is written and flushed
// ("-" writes to stdout); never executable; never over a file this process read. On any
// error `path` is left as it was. Returns the codes of WriteChromeTrace, and:
//   FailedPrecondition: `path` is an input of this process (e.g. the trace's sidecar);
//   NotFound / PermissionDenied / ResourceExhausted (disk full) / Unavailable (other I/O
//   errors) with the path and the system's message (base/status_adapters.h).
absl::Status WriteChromeTraceFile(const Timeline& timeline, const ChromeTraceOptions& options,
                                  absl::string_view path);

// Writes one trace from a sequence of Timeline chunks, so that a dump never holds the
// slices of more than one chunk: memory stays O(sites + SMs), whatever the event count.
//
//   ChromeTraceWriter writer(layout, origin_ns, options, os);   // writes the opening
//   for (...) RETURN_IF_ERROR(writer.Add(chunk));                // units of the next blocks
//   RETURN_IF_ERROR(writer.Finish(clock_note, false));          // metadata, otherData
//
// Every chunk's units continue the (block_linear, unit_index) order of the previous ones;
// its layout, origin_ns, end_ns and clock_note are ignored: the writer's `layout` and
// `origin_ns` (the earliest unit start of the whole trace) apply to all. tids use
// UnitsPerBlock(layout). The output holds the same events as WriteChromeTrace of the
// concatenated Timeline, slices in the same order; thread metadata comes per chunk.
// Add returns TimelineChecker's InvalidArgument cases for the chunk (timeline_check.h;
// nothing of it is written then, but earlier chunks were: discard the output), with the
// bound UnitsPerBlock(layout) on unit indices; FailedPrecondition after Finish (and for a
// second Finish). The destructor writes nothing: a writer destroyed before Finish (a dump
// that stopped, an exception unwinding) leaves the trace unclosed in `os`, which may be gone
// by then. Not thread-safe; `os` must outlive the writer's calls (Finish included).
class ChromeTraceWriter {
 public:
  ChromeTraceWriter(const TraceLayout& layout, int64_t origin_ns,
                    const ChromeTraceOptions& options, llvm::raw_ostream& os);
  ~ChromeTraceWriter();
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  absl::Status Add(const Timeline& chunk);
  // One unit, as Add of a chunk holding only it.
  absl::Status AddUnit(const UnitTimeline& unit);
  absl::Status Finish(absl::string_view clock_note, bool overhead_compensated);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_CHROME_TRACE_H_
