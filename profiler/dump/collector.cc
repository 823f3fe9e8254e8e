#include "profiler/dump/collector.h"

#include <utility>

#include "base/status_macros.h"

namespace warptrace {

absl::Status TraceCollector::Begin(const TraceBegin& begin) {
  timeline_ = Timeline();
  timeline_.layout = *begin.layout;
  timeline_.origin_ns = timeline_.end_ns = begin.origin_ns;
  timeline_.overhead_compensated = begin.overhead_compensated;
  timeline_.units.reserve(begin.units);
  complete_ = false;
  return absl::OkStatus();
}

absl::Status TraceCollector::AddUnit(const UnitView& unit) {
  timeline_.units.push_back(*unit.timeline);
  return absl::OkStatus();
}

absl::Status TraceCollector::End(const TraceEnd& end) {
  timeline_.origin_ns = end.origin_ns;
  timeline_.end_ns = end.end_ns;
  timeline_.clock_note = end.clock_note;
  complete_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Trace>> CollectTrace(TraceLayout layout,
                                                    std::vector<uint32_t> words,
                                                    const DumpOptions& options) {
  auto trace = std::make_unique<Trace>();
  trace->layout = std::move(layout);
  trace->words = std::move(words);
  RETURN_IF_ERROR(DecodeInto(trace->layout, trace->words, trace->decoded));
  TraceCollector collector;
  TraceSink* sinks[] = {&collector};
  DumpResult result;
  const absl::Status status = DumpDecoded(trace->decoded, options, sinks, result);
  trace->report = std::move(result.report);
  // A failed verification is the report's to tell (report.ok()); anything else is an error.
  if (!status.ok() && !(trace->report.errors > 0 && status == trace->report.ToStatus())) {
    return status;
  }
  if (collector.complete()) {
    trace->timeline = std::move(collector.timeline());
    trace->has_timeline = true;
  }
  return trace;
}

}  // namespace warptrace
