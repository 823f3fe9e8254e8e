// The event walker: one pass over a trace unit's events that unwraps their %clock stamps
// (clock.h) and follows the nesting of its regions. Verify (findings, verdict) and timeline
// (slices on the ns axis) both read a UnitWalk, so the dump walks each event once per unit.
//
//   UnitWalk walk;                      // reuse across units: no allocation once warm
//   for (const DecodedRecord& r : decoded.records) {
//     WalkUnit(r, layout, walk);
//     ... walk.cycles[i], walk.slices, walk.error, walk.wraps ...
//   }
//
// What a walk holds (a record with a header problem walks no events):
//   * the walked prefix: events up to, not including, the first structural error — a site
//     id outside the site table, an exit with no open region, an exit of another site than
//     the innermost open one. The walk stops there: nothing after it can be trusted;
//   * cycles[i]: event i's unwrapped cycles since the start stamp. Steps are ClockStep's
//     reading, corrected by CheckWraps when the unit finished with a trustworthy globaltimer
//     pair and no structural error (then the chain runs on to the end stamp, end_cycles);
//   * the steps read as the clock going backwards (negative), in event order; a step into
//     the end stamp has event == walked;
//   * slices in begin order (the event index of their entry and, when closed within the
//     prefix, of their exit; depth = regions open around them) and the regions still open
//     after the prefix (`open`, innermost last);
//   * min_gap: the smallest forward step between two consecutive events (the unit's
//     measured overhead, clock.h), UINT64_MAX with fewer than two events.
// Events of sites that do not nest (SiteKindNests: barrier arrivals, async copies) are timed
// (cycles) but open and close no slice; links.h reads them.
// Version-2 records: event indices are slot indices; a payload slot (DecodedRecord::
// HasPayload) is stepped over as part of its event, with its event's cycles, so it never
// opens, closes or times anything.
// Cost: one pass over the events; vectors reused across calls.
#ifndef WARPTRACE_PROFILER_TRACE_WALK_H_
#define WARPTRACE_PROFILER_TRACE_WALK_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "format/layout.h"
#include "profiler/trace/clock.h"
#include "profiler/trace/decode.h"

namespace warptrace {

enum class WalkError : uint8_t {
  kNone,
  kUnknownSite,        // error_site >= the site table's size
  kExitWithoutBegin,   // an exit with no region open
  kMismatchedNesting,  // an exit of error_site while expected_site is innermost
};

struct WalkSlice {
  static constexpr uint32_t kOpen = std::numeric_limits<uint32_t>::max();
  uint32_t site = 0;
  uint32_t depth = 0;
  uint32_t begin_event = 0;
  uint32_t end_event = kOpen;  // kOpen while not closed within the walked prefix
};

struct BackStep {
  uint32_t event = 0;   // the event stamped earlier than its predecessor (walked: end stamp)
  int64_t cycles = 0;   // how far back, > 0
};

struct UnitWalk {
  uint32_t walked = 0;  // events in the walked prefix
  WalkError error = WalkError::kNone;
  uint32_t error_site = 0;
  uint32_t expected_site = 0;       // kMismatchedNesting: the innermost open site
  uint32_t expected_begin = 0;      // ... and the event that opened it
  std::vector<int64_t> cycles;      // per walked event (and, on error, the error event's
                                    // step is not included)
  std::vector<WalkSlice> slices;
  std::vector<uint32_t> open;       // indices into slices, innermost last
  std::vector<BackStep> back_steps;
  uint64_t min_gap = std::numeric_limits<uint64_t>::max();
  bool chain_to_end = false;        // end_cycles is meaningful (finished, no error)
  int64_t end_cycles = 0;
  WrapCheck wraps;                  // kUnchecked unless chain_to_end with a gt pair

  // Regions open just before event `event` (<= walked): the slices begun before it and not
  // closed before it.
  uint32_t OpenBefore(uint32_t event) const;
};

// Walks `record`'s events with `layout` (its site table and nominal clock).
void WalkUnit(const DecodedRecord& record, const TraceLayout& layout, UnitWalk& walk);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TRACE_WALK_H_
