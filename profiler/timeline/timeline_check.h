// The Timeline contract (timeline_types.h) as one check, run by every writer before it
// writes a byte of a unit: the Chrome trace (chrome_trace.h) and Perfetto
// (perfetto_writer.h) accept exactly the Timelines this accepts, with these messages.
//
//   RETURN_IF_ERROR(CheckTimeline(timeline));                  // a whole Timeline
//
//   TimelineChecker checker(layout, origin_ns, UnitsPerBlock(layout));   // or streamed
//   for (const UnitTimeline& unit : units) RETURN_IF_ERROR(checker.Next(unit));
//
// The rules. Units come strictly ordered by (block_linear, unit_index), with a unit index
// below the layout's units per block when the checker is given that bound. Per unit:
//   slices  a site in the site table; begin <= end; begin at or after the origin and end
//           less than 2^63 ns after it (so every difference a writer takes fits int64);
//           begins in non-decreasing order; a depth at most one deeper than the slice
//           before (no skipped level); no overlap with the previous slice at the same
//           depth; no end past the parent's end;
//   instants, async spans
//           a site in the table, times as for slices, an async span's end not before its
//           begin, its lane below async_lanes, and at most kMaxAsyncLanes lanes;
//   flows   each end on this unit with a time as for slices, an anchor that is kNone or
//           inside the track it names (slices, or async spans when on_async), and a
//           released_wait that is kNone or a slice of the unit.
// Every message names the unit (UnitName: "block (3,0,0) warpgroup 1") and what broke, e.g.
//   "block (3,0,0) warpgroup 1, slice 1 (site 1, depth 1, 20..10 ns): ends before it begins".
//
// A writer may refuse more than this only for what its format cannot represent (Perfetto
// binds a flow to the events it starts and ends at, so it needs those events; see
// perfetto_writer.h) and says so in its header.
//
// Errors: InvalidArgument, as above. Thread-safety: a TimelineChecker is not thread-safe;
// the functions are reentrant.
#ifndef WARPTRACE_PROFILER_TIMELINE_TIMELINE_CHECK_H_
#define WARPTRACE_PROFILER_TIMELINE_TIMELINE_CHECK_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {

// The most async lanes a unit may have (a lane is one track in a viewer).
inline constexpr uint32_t kMaxAsyncLanes = 256;

// Checks the units of one trace as they come. `layout` must outlive the checker.
class TimelineChecker {
 public:
  // `units_per_block` 0: no bound on unit indices.
  TimelineChecker(const TraceLayout& layout, int64_t origin_ns, uint64_t units_per_block);

  // Checks `unit` and that it follows the last unit accepted; accepts it when it passes.
  absl::Status Next(const UnitTimeline& unit);
  // Next for every unit of `units`, all or nothing: when one fails, none is accepted.
  absl::Status NextUnits(absl::Span<const UnitTimeline> units);

 private:
  absl::Status CheckOrder(const UnitTimeline& unit) const;
  absl::Status CheckSlices(const UnitTimeline& unit);
  absl::Status CheckHandoffs(const UnitTimeline& unit) const;

  const TraceLayout& layout_;
  const int64_t origin_ns_;
  const uint64_t units_per_block_;
  // The last unit accepted (the next must follow it); `any` false before the first.
  struct Last {
    bool any = false;
    uint32_t block_linear = 0;
    Dim3 block_index;
    uint32_t unit_index = 0;
  };
  Last last_;
  std::vector<const Slice*> open_;  // scratch: open_[d] = the last slice seen at depth d
};

// The whole Timeline, against its own layout and origin, with no bound on unit indices.
absl::Status CheckTimeline(const Timeline& timeline);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TIMELINE_TIMELINE_CHECK_H_
