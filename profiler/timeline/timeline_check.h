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
  absl::Status Next(const UnitTimeline& unit) {
    NoSliceVisitor none;
    return Next(unit, none);
  }

  // Next, reporting the slices' nesting as it checks them, so that a writer that needs it
  // (Perfetto orders a unit's begins and ends) reads the slices once:
  //   visitor.Open(i)   slice i begins, after
  //   visitor.Close(j)  for each open slice j that ends before it, innermost first; after
  //                     the last slice, Close for every slice still open, innermost first.
  // When the unit fails, the visitor has seen part of it.
  template <typename Visitor>
  absl::Status Next(const UnitTimeline& unit, Visitor& visitor);

  // Next for every unit of `units`, all or nothing: when one fails, none is accepted.
  absl::Status NextUnits(absl::Span<const UnitTimeline> units);

  // Where a unit stands in Timeline order (what the next unit must follow).
  struct Position {
    uint32_t block_linear = 0;
    Dim3 block_index;
    uint32_t unit_index = 0;
  };
  static Position PositionOf(const UnitTimeline& unit) {
    return {unit.block_linear, unit.block_index, unit.unit_index};
  }
  // Continues as if the unit at `previous` had just been accepted; without one, as a new
  // checker. For a stream of units checked in pieces by several checkers (the Perfetto
  // writer formats batches of units on several threads, perfetto_writer.h).
  void ResumeAfter(const Position* previous) {
    last_ = previous == nullptr ? Last()
                                : Last{true, previous->block_linear, previous->block_index,
                                       previous->unit_index};
  }

 private:
  struct NoSliceVisitor {
    void Open(uint32_t) {}
    void Close(uint32_t) {}
  };

  absl::Status CheckOrder(const UnitTimeline& unit) const;
  template <typename Visitor>
  absl::Status CheckSlices(const UnitTimeline& unit, Visitor& visitor);
  // The error for slice `i` of `unit`, which failed CheckSlices' test:
  // "<unit>, slice i (site, depth, times): <the rule it breaks>".
  absl::Status SliceError(const UnitTimeline& unit, size_t i) const;
  absl::Status CheckHandoffs(const UnitTimeline& unit) const;
  void Accept(const UnitTimeline& unit) {
    last_ = {true, unit.block_linear, unit.block_index, unit.unit_index};
  }

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
  std::vector<uint32_t> open_;  // scratch: open_[d] = the last slice seen at depth d
};

// Inline so that a writer's visitor runs in the check's one loop over the slices.
template <typename Visitor>
absl::Status TimelineChecker::Next(const UnitTimeline& unit, Visitor& visitor) {
  if (absl::Status s = CheckOrder(unit); !s.ok()) return s;
  if (absl::Status s = CheckSlices(unit, visitor); !s.ok()) return s;
  if (absl::Status s = CheckHandoffs(unit); !s.ok()) return s;
  Accept(unit);
  return absl::OkStatus();
}

template <typename Visitor>
absl::Status TimelineChecker::CheckSlices(const UnitTimeline& unit, Visitor& visitor) {
  const size_t num_sites = layout_.sites.size();
  const std::vector<Slice>& slices = unit.slices;
  open_.clear();
  int64_t last_begin = origin_ns_;
  int64_t span;
  for (size_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    if (s.site >= num_sites || s.end_ns < s.begin_ns || s.begin_ns < origin_ns_ ||
        __builtin_sub_overflow(s.end_ns, origin_ns_, &span) || s.begin_ns < last_begin ||
        s.depth > open_.size() ||
        (s.depth < open_.size() && slices[open_[s.depth]].end_ns > s.begin_ns) ||
        (s.depth > 0 && s.end_ns > slices[open_[s.depth - 1]].end_ns)) {
      return SliceError(unit, i);
    }
    last_begin = s.begin_ns;
    while (open_.size() > s.depth) {
      visitor.Close(open_.back());
      open_.pop_back();
    }
    visitor.Open(static_cast<uint32_t>(i));
    open_.push_back(static_cast<uint32_t>(i));
  }
  while (!open_.empty()) {
    visitor.Close(open_.back());
    open_.pop_back();
  }
  return absl::OkStatus();
}

// The whole Timeline, against its own layout and origin, with no bound on unit indices.
absl::Status CheckTimeline(const Timeline& timeline);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TIMELINE_TIMELINE_CHECK_H_
