// HandoffLink: an exact cross-unit edge of a block's timeline — "this arrival (on one trace
// unit) released that wait (on another)". The critical path (critical_path.h) follows such
// edges across units; without them it can only follow program order within one unit.
//
// Links are exact, never guessed from event order. For a version-2 trace (barrier instance
// and phase recorded as payloads) the timeline resolves each arrival -> release as a Flow
// (timeline_types.h, links.h) and AnalysisSink (profiler/analysis/analysis_sink.h) turns the
// flows into HandoffLinks itself; callers with another source may pass links explicitly
// (AnalysisOptions), and tests synthesize them. Version-1 buffers have none, and the
// analysis then says its critical path is per unit only.
//
//   HandoffLink link;
//   link.block_linear = 7;
//   link.from_unit = 0;            // the producer warpgroup ...
//   link.from_ns = 1'000'420;      // ... arrived on full[1] here (its timeline, ns)
//   link.to_unit = 1;              // releasing consumer warpgroup 1's wait:
//   link.to_slice = 12;            // UnitTimeline::slices[12], a wait slice (IsWaitSite)
#ifndef WARPTRACE_PROFILER_ANALYSIS_HANDOFF_H_
#define WARPTRACE_PROFILER_ANALYSIS_HANDOFF_H_

#include <cstdint>

#include "format/layout.h"

namespace warptrace {

struct HandoffLink {
  uint32_t block_linear = 0;  // both ends are units of this block
  uint32_t from_unit = 0;     // unit_index of the arriving unit
  int64_t from_ns = 0;        // time of the arrival, on the common globaltimer ns axis
  uint32_t to_unit = 0;       // unit_index of the waiting unit
  uint32_t to_slice = 0;      // index into that unit's UnitTimeline::slices: the wait released
                              // (a slice of a site IsWaitSite accepts)
  friend bool operator==(const HandoffLink&, const HandoffLink&) = default;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_HANDOFF_H_
