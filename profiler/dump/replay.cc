#include "profiler/dump/replay.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace warptrace {
namespace {

absl::Status Named(const TraceSink& sink, const absl::Status& s) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(sink.Name(), ": ", s.message()));
}

}  // namespace

absl::Status ReplayTimeline(const Timeline& timeline, absl::Span<TraceSink* const> sinks) {
  TraceBegin begin;
  begin.layout = &timeline.layout;
  begin.origin_ns = timeline.origin_ns;
  begin.end_ns = timeline.end_ns;
  begin.units = timeline.units.size();
  begin.overhead_compensated = timeline.overhead_compensated;
  for (TraceSink* sink : sinks) {
    if (absl::Status s = Named(*sink, sink->Begin(begin)); !s.ok()) return s;
  }
  TraceEnd end;
  end.origin_ns = timeline.origin_ns;
  end.end_ns = timeline.end_ns;
  end.clock_note = timeline.clock_note;
  for (const UnitTimeline& unit : timeline.units) {
    UnitView view;
    view.timeline = &unit;
    end.slices += unit.slices.size();
    for (TraceSink* sink : sinks) {
      if (absl::Status s = Named(*sink, sink->AddUnit(view)); !s.ok()) return s;
    }
  }
  for (TraceSink* sink : sinks) {
    if (absl::Status s = Named(*sink, sink->End(end)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace warptrace
