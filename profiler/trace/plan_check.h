// Planned vs recorded: what the plan promised about a unit's events, checked against what
// the unit recorded. Two promises are in the layout (format/layout.h):
//   * TraceLayout::exact_events: where the plan counted a unit exactly (no data-dependent
//     branch, upper-bounded loop or early return), a complete unit records exactly that
//     many slots: `attempted` must equal it (kEventCountMismatch);
//   * TraceLayout::site_trips (SiteTrip): the site entered once per iteration of a loop with a constant trip
//     count. Per entry of the span around it (or per unit), the site's entries are the
//     loop's observed iterations (kTripCountExceeded, kTripCountShort):
//       - more than declared (Exact or UpperBound): a finding as soon as the recorded
//         events show it, even when the unit later dropped events or never finished, so a
//         loop that runs past its bound is named, not only the capacity it overflowed;
//       - an Exact loop that ran at least once but fewer times than declared, once the span
//         around it closed (then every iteration inside it was recorded).
//       - an Exact loop that ran 0 times within a closed entry of the span it always runs in
//         (SiteTrip::always_in: no branch or role split between them), in a unit that did
//         not return early. A loop under a branch that did not run is no finding (the branch
//         may not have been taken): the unit's exact count catches that where the plan is
//         exact.
// Findings name the unit, the loop's builder path, the declared and the observed counts.
//
// Thread-safety: pure functions; reentrant.
#ifndef WARPTRACE_PROFILER_TRACE_PLAN_CHECK_H_
#define WARPTRACE_PROFILER_TRACE_PLAN_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "format/layout.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/walk.h"

namespace warptrace {

struct PlanMismatch {
  enum class Kind : uint8_t {
    kEventCount,     // attempted != the plan's exact count
    kTripExceeded,   // a loop ran more iterations than declared
    kTripShort,      // an Exact loop ran fewer (at least one)
  };
  Kind kind = Kind::kEventCount;
  int64_t event = -1;   // the event that shows it (-1: the unit as a whole)
  std::string message;  // one line with the loop's path and both counts
};

// The mismatches of one unit, from its record (valid header) and its walk (only the walked
// prefix is counted).
std::vector<PlanMismatch> CheckPlan(const DecodedRecord& record, const UnitWalk& walk,
                                    const TraceLayout& layout);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TRACE_PLAN_CHECK_H_
