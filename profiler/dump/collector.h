// The in-memory Trace: a recorded buffer decoded, verified and laid out on the ns axis, all
// kept, for RunKernel (jit/run/run.h) and library users who want the whole thing. Built by the
// one dump pipeline (dump.h) with a TraceCollector sink, never by a pipeline of its own.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, CollectTrace(layout, std::move(words)));
//   if (!trace->report.ok()) { /* trace->report.ToStatus() lists every problem */ }
//   RETURN_IF_ERROR(WriteChromeTraceFile(trace->timeline, {}, "trace.json"));
//
// Unlike the streaming sinks, a collected Trace holds every slice (32 bytes each) besides the
// raw buffer: use DumpTrace with streaming sinks for buffers too large for that.
#ifndef WARPTRACE_PROFILER_DUMP_COLLECTOR_H_
#define WARPTRACE_PROFILER_DUMP_COLLECTOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "format/layout.h"
#include "profiler/dump/dump.h"
#include "profiler/dump/sink.h"
#include "profiler/timeline/timeline_types.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/verify.h"

namespace warptrace {

// A recorded, decoded, verified trace. Not copyable or movable (`decoded` refers to
// `layout` and `words`): held by unique_ptr.
struct Trace {
  TraceLayout layout;           // the layout as run
  std::vector<uint32_t> words;  // the raw buffer
  DecodedTrace decoded;         // views into `words` and `layout`
  VerifyReport report;
  // Built when the dump succeeded: the report is ok (strict) or was repaired
  // (allow_truncated); else empty.
  Timeline timeline;
  bool has_timeline = false;

  Trace() = default;
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;
};

// The sink that keeps everything: each unit's timeline is appended to the Timeline it builds;
// at End the Timeline gets its origin, end and clock note. The Timeline is whole only after
// End (a dump that stopped early leaves a partial one: discard it). Not thread-safe.
class TraceCollector : public TraceSink {
 public:
  absl::string_view Name() const override { return "trace collector"; }
  absl::Status Begin(const TraceBegin& begin) override;
  absl::Status AddUnit(const UnitView& unit) override;
  absl::Status End(const TraceEnd& end) override;

  bool complete() const { return complete_; }
  Timeline& timeline() { return timeline_; }

 private:
  Timeline timeline_;
  bool complete_ = false;
};

// Runs the dump pipeline over `words` with a TraceCollector and returns the Trace whatever
// the verdict: `report.ok()` says whether it is whole, `has_timeline` whether it has a
// Timeline. Errors: DumpTrace's decode errors (DataLoss / InvalidArgument when the buffer
// cannot fit the layout at all), its InvalidArgument for a nominal clock of 0, and a
// collector error (prefixed "trace collector: ").
absl::StatusOr<std::unique_ptr<Trace>> CollectTrace(TraceLayout layout,
                                                    std::vector<uint32_t> words,
                                                    const DumpOptions& options = {});

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_DUMP_COLLECTOR_H_
