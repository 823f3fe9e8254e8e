// DumpTrace: THE dump pipeline. It walks a raw buffer one trace unit at a time — decode →
// verify → timeline — and hands each unit to the sinks the caller chose (sink.h): the
// Chrome trace writer (chrome_trace.h), the summary (summary.h), the in-memory Trace
// (collector.h), a Perfetto writer, ... There is no other pipeline: the front end
// (profiler/frontend/dump_files.h), through which RunKernel, the warptrace CLI, the Python
// package and the examples dump, and the fuzzer all come through here.
//
//   ChromeTraceSink chrome(ChromeTraceOptions{}, os);
//   SummarySink summary;
//   TraceSink* sinks[] = {&chrome, &summary};
//   DumpResult result;
//   absl::Status status = DumpTrace(layout, words, options, sinks, result);
//   // result.report is filled whenever decoding succeeded, also when verification failed.
//
// Per unit, each event is walked once (walk.h): the walk feeds verify (UnitVerifier) and
// the timeline (UnitTimelineBuilder), and the unit's UnitView goes to every sink in order.
// The clock note is computed once, here, from the units' clock results (clock.h,
// ClockTally), and handed to the sinks at End.
//
// Memory: the decoded headers and the verdicts (O(units), about 200 bytes per unit), the
// findings (capped by VerifyOptions), and one unit's timeline at a time (one block's, with its
// event times, when the layout has hand-off sites: links.h) — with threads, the batches in
// flight (a few times 16 Ki events, or a block); nothing grows with
// the event count beyond the input buffer, unless a sink keeps it (the summary keeps a
// count per distinct duration, the in-memory collector the whole Timeline).
//
// Errors:
//   the codes of Decode (InvalidArgument, DataLoss) — result.report is empty then and no
//     sink is called;
//   VerifyReport::ToStatus (DataLoss, ResourceExhausted) when verification fails in strict
//     mode: sinks stop receiving units at the first unit with an error finding and End is
//     not called (sink.h), but every unit is verified, so result.report is complete;
//   InvalidArgument when the layout's nominal SM clock is 0 (after verification);
//   a sink's error, prefixed with its name, unchanged code: the first one stops the dump;
//   Cancelled when DumpOptions::cancelled said so.
// Thread-safety: reentrant; sinks are called from the calling thread only, except the parts
// of sinks that have them (sink.h, NewPart: summary, analysis), which the driver's workers feed
// the units they prepared (otherwise the workers only read the buffer and the layout).
#ifndef WARPTRACE_PROFILER_DUMP_DUMP_H_
#define WARPTRACE_PROFILER_DUMP_DUMP_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "profiler/dump/sink.h"
#include "profiler/timeline/timeline.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/verify.h"

namespace warptrace {

struct DumpOptions {
  VerifyOptions verify;
  TimelineOptions timeline;
  // Threads the dump may use, the calling one included, and of them those the sinks keep
  // busy beside the calling one while units come in (a streaming writer's background thread:
  // dump_files.h says 1 when a Perfetto or Chrome trace is written, 0 otherwise). The rest,
  // threads - 1 - sink_threads workers, prepare the units (walk, verify, timeline) in
  // batches of consecutive records, a few batches ahead, while the calling thread hands them
  // to the sinks in buffer order: every sink call and the DumpResult are the same as with 1
  // (the report's findings capped in buffer order). With no worker left the calling thread
  // prepares each unit itself: on 2 cores, beside a streaming writer, that measured faster
  // (the 1e6-event Mosaic buffer to Perfetto: 65 ms against 82 ms with a preparing worker).
  // From two workers on, sinks with parts (sink.h: the summary, the analysis) are fed on the
  // workers, one part each, and merged before End, so they cost the calling thread nothing
  // per unit (with one worker the calling thread feeding them is the pipeline's second
  // stage, the faster split).
  int threads = 1;
  int sink_threads = 1;
  // Cancellation (a Ctrl-C, a Python KeyboardInterrupt): when set, called on the calling
  // thread before the first unit and then every kCancelPollEvents events or so; true stops
  // the dump at once with Cancelled ("the dump was cancelled"), End is not called, and the
  // sinks must discard what they have (as for any error). Null: never cancelled.
  std::function<bool()> cancelled;
};

// Events between two calls of DumpOptions::cancelled: a few milliseconds of dump.
inline constexpr uint64_t kCancelPollEvents = uint64_t{1} << 16;

struct DumpResult {
  bool decoded = false;     // the buffer fit the layout (else report is empty)
  VerifyReport report;      // every unit's verdict and the (capped) findings
  std::string clock_note;   // as handed to the sinks' End (empty when End was not reached)
  uint64_t slices = 0;      // slices handed to the sinks
  int64_t origin_ns = 0;    // TraceBegin::origin_ns
  int64_t end_ns = 0;       // TraceEnd::end_ns
};

absl::Status DumpTrace(const TraceLayout& layout, absl::Span<const uint32_t> words,
                       const DumpOptions& options, absl::Span<TraceSink* const> sinks,
                       DumpResult& result);

// DumpTrace over a buffer already decoded (DecodeInto): for a caller that keeps the
// DecodedTrace (collector.h's Trace), so that the buffer is decoded once. `decoded` (and the
// layout and words it points into) must outlive the call; result.decoded is true.
absl::Status DumpDecoded(const DecodedTrace& decoded, const DumpOptions& options,
                         absl::Span<TraceSink* const> sinks, DumpResult& result);

// The earliest start of a unit with a readable header, on the globaltimer axis (ns): the
// TraceBegin::origin_ns a dump of `decoded` hands its sinks (0 when no unit has a record).
int64_t TraceOrigin(const DecodedTrace& decoded);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_DUMP_DUMP_H_
