// TraceSink: what the dump driver (DumpTrace, dump.h) hands a trace to, one trace unit at a
// time. There is one dump pipeline — decode → verify → timeline, per unit — and every output
// is a sink fed by it: the writers ChromeTraceSink (profiler/outputs/chrome_trace_sink.h) and
// PerfettoTraceSink (profiler/outputs/perfetto/perfetto_sink.h); SummarySink, AnalysisSink
// and DurationSink (profiler/analysis/); TraceCollector, the in-memory Trace for library
// users (collector.h, here). Callers choose them through the front end (profiler/frontend/
// dump_files.h). A new output format or analysis is a new sink, never a second pipeline.
//
//   class CountSlices : public TraceSink {
//    public:
//     absl::Status AddUnit(const UnitView& unit) override {
//       slices_ += unit.timeline->slices.size();
//       return absl::OkStatus();
//     }
//     uint64_t slices_ = 0;
//   };
//   CountSlices count;
//   TraceSink* sinks[] = {&count};
//   DumpResult result;
//   RETURN_IF_ERROR(DumpTrace(layout, words, options, sinks, result));
//
// Contract (the driver keeps it; a sink may rely on it):
//   * Call order: Begin once, then AddUnit once per record of the buffer, then End once.
//     When the layout has hand-off sites (links.h), a block's units are handed on together
//     after its last one is verified (their flows need the whole block). Units come in
//     buffer order — (block_linear, unit_index) of the sampled blocks — and
//     include units without a record (missing, or a header too damaged to read): their
//     UnitTimeline has has_record false and no slices.
//   * Each call goes to every sink in the order the caller listed them before the next call
//     begins. All calls come from the thread that called DumpTrace: a sink needs no locking
//     unless it shares state with other threads itself.
//   * Errors: the first sink error stops the dump. No later call is made to any sink (End
//     included), and DumpTrace returns that error, its message prefixed with the sink's
//     Name() ("chrome trace: ..."), with its code unchanged.
//   * A dump that fails verification (strict mode: an error finding in some unit) stops
//     feeding sinks at the first unit (with hand-off sites: the first block) with an error
//     and never calls End; DumpTrace still
//     verifies the remaining units, fills DumpResult::report and returns its ToStatus().
//     So a sink that sees End knows the whole trace passed; one that never sees it must
//     discard what it has (writing through base/file.h's WriteLargeFileAtomically does:
//     nothing is written then).
//   * Lifetimes: everything a call receives is owned by the driver. TraceBegin::layout
//     stays alive and unchanged until End returns (or the dump stops); a UnitView and what it
//     points to are valid only during AddUnit (copy what you keep); TraceEnd only during End.
//   * Parts (optional, NewPart): a sink whose per-unit work can be split by blocks and
//     merged to the same result (integer counts, per-duration counts: SummarySink; per-block
//     records put back in buffer order at the merge: AnalysisSink) may hand the driver
//     parts of itself. With prepare workers (DumpOptions::threads) and no hand-off links,
//     each worker then feeds the units it prepared to a part of its own, on its own thread
//     — the sink's AddUnit is not called — and the driver hands the parts back to
//     MergeParts, on the calling thread, after the last unit and before End. A part gets
//     whole link scopes (format/links.h; today whole blocks: every unit of a block,
//     consecutively, in unit order) and its blocks in buffer order; which blocks go to
//     which part is not fixed. So "merge per thread":
//     such a sink costs the calling thread nothing per unit. A part's
//     UnitView has its record, verdict (the unit's own, before the report's findings cap)
//     and timeline, but no findings. A part's error stops the dump where the sink's
//     AddUnit error would have: at that unit, the sinks listed before it fed, named
//     like the sink's. A sink without
//     parts (NewPart returns null, the default) gets every unit through AddUnit.
//   * Memory: the driver holds O(units) (decoded headers, verdicts) plus one unit's timeline
//     at a time. A sink that wants the dump to stay independent of the event count keeps
//     per-unit aggregates, not slices.
#ifndef WARPTRACE_PROFILER_DUMP_SINK_H_
#define WARPTRACE_PROFILER_DUMP_SINK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "profiler/timeline/timeline_types.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/verify.h"

namespace warptrace {

// Before the first unit.
struct TraceBegin {
  const TraceLayout* layout = nullptr;  // alive until End returns
  // The earliest start of a unit with a record, on the globaltimer axis (ns), from the decoded
  // headers: every timeline time of the trace is at or after it (0 when no unit has a
  // record). Outputs that want relative times (Chrome "ts") subtract it.
  int64_t origin_ns = 0;
  // The latest end stamp (or start, for a unit without a trustworthy end stamp) of a unit with
  // a record, from the headers: an estimate for outputs that want the span up front. The
  // exact end (through the clock model) is TraceEnd::end_ns.
  int64_t end_ns = 0;
  uint64_t units = 0;                // AddUnit calls that follow (records in the buffer)
  bool overhead_compensated = false; // TimelineOptions::compensate_overhead
};

// One trace unit, valid only during AddUnit.
struct UnitView {
  const DecodedRecord* record = nullptr;  // the raw record: header fields and events
  const UnitVerdict* verdict = nullptr;   // what verify said of it
  // Its slices on the absolute globaltimer ns axis, clock rate and verdict; no slices (and
  // has_record false) when it has no usable record.
  const UnitTimeline* timeline = nullptr;
  absl::Span<const Finding> findings;     // this unit's listed findings (capped), in order
  // On the last unit of a block whose trace has hand-off sites: the block's hand-off
  // findings (verify.h; they name events of any of its units). Empty otherwise.
  absl::Span<const Finding> block_findings;
};

// After the last unit (only when the whole dump succeeded).
struct TraceEnd {
  const VerifyReport* report = nullptr;  // totals, verdict counts, every listed finding
  std::string clock_note;  // computed once by the driver from the units' clock results
  int64_t origin_ns = 0;   // = TraceBegin::origin_ns
  int64_t end_ns = 0;      // the latest unit end on the timeline (>= origin_ns)
  uint64_t slices = 0;     // slices over all units
};

// A part of a sink (TraceSink::NewPart), fed on one worker thread.
class SinkPart {
 public:
  virtual ~SinkPart() = default;
  virtual absl::Status AddUnit(const UnitView& unit) = 0;
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // Names the sink in errors ("chrome trace", "summary", ...).
  virtual absl::string_view Name() const = 0;
  virtual absl::Status Begin(const TraceBegin& /*begin*/) { return absl::OkStatus(); }
  virtual absl::Status AddUnit(const UnitView& unit) = 0;
  virtual absl::Status End(const TraceEnd& /*end*/) { return absl::OkStatus(); }

  // Parts (see the contract above): called after Begin, once per worker; null (the
  // default) for a sink that takes every unit through AddUnit.
  virtual std::unique_ptr<SinkPart> NewPart() { return nullptr; }
  // The parts NewPart made, every unit of the trace fed to exactly one of them; after the
  // last unit, before End.
  virtual absl::Status MergeParts(std::vector<std::unique_ptr<SinkPart>> /*parts*/) {
    return absl::OkStatus();
  }
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_DUMP_SINK_H_
