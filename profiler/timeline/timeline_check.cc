#include "profiler/timeline/timeline_check.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"

namespace warptrace {
namespace {

std::string Label(const UnitTimeline& unit, const TraceLayout& layout) {
  return UnitName(unit.block_index, layout.unit.kind, unit.unit_index);
}

// At or after the origin, and less than 2^63 ns after it.
bool TimeInRange(int64_t ns, int64_t origin_ns) {
  int64_t span;
  return ns >= origin_ns && !__builtin_sub_overflow(ns, origin_ns, &span);
}

}  // namespace

TimelineChecker::TimelineChecker(const TraceLayout& layout, int64_t origin_ns,
                                 uint64_t units_per_block)
    : layout_(layout), origin_ns_(origin_ns), units_per_block_(units_per_block) {}

absl::Status TimelineChecker::CheckOrder(const UnitTimeline& unit) const {
  if (last_.any && std::pair(last_.block_linear, last_.unit_index) >=
                       std::pair(unit.block_linear, unit.unit_index)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "timeline units must be strictly ordered by (block, unit): ", Label(unit, layout_),
        " follows ", UnitName(last_.block_index, layout_.unit.kind, last_.unit_index)));
  }
  if (units_per_block_ != 0 && unit.unit_index >= units_per_block_) {
    return absl::InvalidArgumentError(absl::StrCat(Label(unit, layout_),
                                                   ": unit index is not below the layout's ",
                                                   units_per_block_, " units per block"));
  }
  return absl::OkStatus();
}

absl::Status TimelineChecker::NextUnits(absl::Span<const UnitTimeline> units) {
  const Last before = last_;
  for (const UnitTimeline& unit : units) {
    if (absl::Status status = Next(unit); !status.ok()) {
      last_ = before;
      return status;
    }
  }
  return absl::OkStatus();
}

// Called once a slice failed the fast test in CheckSlices: walks the slices again up to `i`
// to say which rule slice `i` breaks (the open stack is rebuilt to give its sibling and
// parent).
absl::Status TimelineChecker::SliceError(const UnitTimeline& unit, size_t i) const {
  const size_t num_sites = layout_.sites.size();
  std::vector<const Slice*> open;  // open[d] = the last slice seen at depth d
  for (size_t k = 0; k < i; ++k) {
    const Slice& s = unit.slices[k];
    if (s.depth < open.size()) open.resize(s.depth);
    open.push_back(&s);
  }
  const Slice& s = unit.slices[i];
  auto fail = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(Label(unit, layout_), ", slice ", i,
                                                   " (site ", s.site, ", depth ", s.depth,
                                                   ", ", s.begin_ns, "..", s.end_ns,
                                                   " ns): ", what));
  };
  if (s.site >= num_sites) {
    return fail(absl::StrCat("site id is outside the site table (", num_sites, " sites)"));
  }
  if (s.end_ns < s.begin_ns) return fail("ends before it begins");
  if (s.begin_ns < origin_ns_) {
    return fail(absl::StrCat("begins before the timeline origin ", origin_ns_, " ns"));
  }
  // origin <= begin <= end, so end - origin bounds every difference a writer takes.
  if (!TimeInRange(s.end_ns, origin_ns_)) {
    return fail(
        absl::StrCat("is more than 2^63 ns after the timeline origin ", origin_ns_, " ns"));
  }
  if (i > 0 && s.begin_ns < unit.slices[i - 1].begin_ns) {
    return fail(absl::StrCat("begins before the previous slice (", unit.slices[i - 1].begin_ns,
                             " ns); slices must be ordered by begin time"));
  }
  if (s.depth > open.size()) {
    return fail(absl::StrCat("is deeper than its enclosing slices (", open.size(),
                             " open at this point)"));
  }
  if (s.depth < open.size()) {
    const Slice& sibling = *open[s.depth];
    if (sibling.end_ns > s.begin_ns) {
      return fail(absl::StrCat("overlaps the previous slice at its depth (site ", sibling.site,
                               ", ends at ", sibling.end_ns, " ns)"));
    }
  }
  if (s.depth == 0) return fail("breaks the slice rules");  // not reached: a rule above failed
  const Slice& parent = *open[s.depth - 1];
  return fail(absl::StrCat("ends after its parent (site ", parent.site, ", ", parent.begin_ns,
                           "..", parent.end_ns, " ns)"));
}

absl::Status TimelineChecker::CheckHandoffs(const UnitTimeline& unit) const {
  if (unit.instants.empty() && unit.async_spans.empty() && unit.flows.empty() &&
      unit.async_lanes == 0) {
    return absl::OkStatus();
  }
  const size_t num_sites = layout_.sites.size();
  auto fail = [&](absl::string_view what, size_t i, absl::string_view problem) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(unit, layout_), ", ", what, " ", i, ": ", problem));
  };
  if (unit.async_lanes > kMaxAsyncLanes) {
    return absl::InvalidArgumentError(absl::StrCat(Label(unit, layout_), ": ",
                                                   unit.async_lanes, " async lanes, more than ",
                                                   kMaxAsyncLanes));
  }
  for (size_t i = 0; i < unit.instants.size(); ++i) {
    const Instant& in = unit.instants[i];
    if (in.site >= num_sites) return fail("instant", i, "site outside the table");
    if (!TimeInRange(in.ns, origin_ns_)) {
      return fail("instant", i, "time before the origin or past 2^63 ns");
    }
  }
  for (size_t i = 0; i < unit.async_spans.size(); ++i) {
    const AsyncSpan& a = unit.async_spans[i];
    if (a.site >= num_sites) return fail("async span", i, "site outside the table");
    if (!TimeInRange(a.begin_ns, origin_ns_) || !TimeInRange(a.end_ns, origin_ns_) ||
        a.end_ns < a.begin_ns) {
      return fail("async span", i, "times before the origin, reversed or past 2^63 ns");
    }
    if (a.lane >= unit.async_lanes) return fail("async span", i, "lane past async_lanes");
  }
  for (size_t i = 0; i < unit.flows.size(); ++i) {
    const Flow& f = unit.flows[i];
    for (const FlowEnd* end : {&f.from, &f.to}) {
      if (end->record_index != unit.record_index) continue;
      if (!TimeInRange(end->ns, origin_ns_)) {
        return fail("flow", i, "time before the origin or past 2^63 ns");
      }
      const size_t limit = end->on_async ? unit.async_spans.size() : unit.slices.size();
      if (end->anchor != FlowEnd::kNone && end->anchor >= limit) {
        return fail("flow", i, "anchor outside the unit's track");
      }
      if (end->released_wait != FlowEnd::kNone && end->released_wait >= unit.slices.size()) {
        return fail("flow", i, "released wait outside the unit's slices");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTimeline(const Timeline& timeline) {
  TimelineChecker checker(timeline.layout, timeline.origin_ns, 0);
  return checker.NextUnits(timeline.units);
}

}  // namespace warptrace
