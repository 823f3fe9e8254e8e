#include "profiler/testing/sink_feeder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace warptrace::testing {
namespace {

absl::Status Prefixed(const TraceSink& sink, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(sink.Name(), ": ", status.message()));
}

}  // namespace

absl::Status FeedTrace(const Trace& trace, absl::Span<TraceSink* const> sinks) {
  if (!trace.has_timeline) {
    return absl::FailedPreconditionError("the trace has no timeline (verification failed)");
  }
  const Timeline& timeline = trace.timeline;
  TraceBegin begin;
  begin.layout = &trace.layout;
  begin.origin_ns = timeline.origin_ns;
  begin.end_ns = timeline.end_ns;
  begin.units = timeline.units.size();
  begin.overhead_compensated = timeline.overhead_compensated;
  for (TraceSink* sink : sinks) {
    if (absl::Status s = sink->Begin(begin); !s.ok()) return Prefixed(*sink, s);
  }
  uint64_t slices = 0;
  for (size_t i = 0; i < timeline.units.size(); ++i) {
    UnitView view;
    view.record = &trace.decoded.records[i];
    view.verdict = &trace.report.units[i];
    view.timeline = &timeline.units[i];
    slices += timeline.units[i].slices.size();
    for (TraceSink* sink : sinks) {
      if (absl::Status s = sink->AddUnit(view); !s.ok()) return Prefixed(*sink, s);
    }
  }
  TraceEnd end;
  end.report = &trace.report;
  end.clock_note = timeline.clock_note;
  end.origin_ns = timeline.origin_ns;
  end.end_ns = timeline.end_ns;
  end.slices = slices;
  for (TraceSink* sink : sinks) {
    if (absl::Status s = sink->End(end); !s.ok()) return Prefixed(*sink, s);
  }
  return absl::OkStatus();
}

}  // namespace warptrace::testing
