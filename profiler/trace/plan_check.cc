#include "profiler/trace/plan_check.h"

#include <map>
#include <utility>

#include "absl/strings/str_format.h"
#include "format/trace_abi.h"

namespace warptrace {
namespace {

struct Entries {
  uint64_t entries = 0;
  int64_t first_extra = -1;  // the event beginning the first entry past the declared count
};

std::string Declared(const SiteTrip& trip) {
  return absl::StrFormat("TripCount::%s(%d)",
                         trip.bound == TripBound::kExact ? "Exact" : "UpperBound", trip.count);
}

using EntryCounts = std::map<std::pair<int64_t, uint32_t>, Entries>;

// An Exact loop that runs whenever its span runs (SiteTrip::always_in) and has no entry in a
// closed entry of that span ran 0 times. Not for a unit that returned early: its return
// closed the spans open at the time, which may not have reached the loop.
void AddLoopsThatNeverRan(const DecodedRecord& record, const UnitWalk& walk,
                          const TraceLayout& layout, const EntryCounts& counts,
                          std::vector<PlanMismatch>& out) {
  if ((record.flags & abi::kFlagEarlyReturn) != 0) return;
  std::multimap<int64_t, uint32_t> loops_in;  // span site -> sites of the loops always in it
  for (uint32_t s = 0; s < layout.site_trips.size(); ++s) {
    const SiteTrip& trip = layout.site_trips[s];
    if (trip.bound == TripBound::kExact && trip.count > 0 && trip.always_in >= 0) {
      loops_in.emplace(trip.always_in, s);
    }
  }
  if (loops_in.empty()) return;
  for (size_t i = 0; i < walk.slices.size(); ++i) {
    const WalkSlice& span = walk.slices[i];
    if (span.end_event == WalkSlice::kOpen) continue;
    const auto [first, last] = loops_in.equal_range(span.site);
    for (auto it = first; it != last; ++it) {
      if (counts.count({static_cast<int64_t>(i), it->second}) != 0) continue;
      const SiteTrip& trip = layout.site_trips[it->second];
      out.push_back({PlanMismatch::Kind::kTripShort, static_cast<int64_t>(span.end_event),
                     absl::StrFormat("loop %s was declared %s but ran 0 iterations within "
                                     "one '%s' (site '%s' never entered), which runs it every "
                                     "time: the declared exact count did not happen",
                                     trip.loop, Declared(trip), layout.sites[span.site].name,
                                     layout.sites[it->second].name)});
    }
  }
}

}  // namespace

std::vector<PlanMismatch> CheckPlan(const DecodedRecord& record, const UnitWalk& walk,
                                    const TraceLayout& layout) {
  std::vector<PlanMismatch> out;
  // Entries of each counted site per enclosing slice (-1: none, the unit itself).
  EntryCounts counts;
  std::vector<int64_t> latest_at_depth;
  for (size_t i = 0; i < walk.slices.size(); ++i) {
    const WalkSlice& slice = walk.slices[i];
    if (latest_at_depth.size() <= slice.depth) latest_at_depth.resize(slice.depth + 1, -1);
    latest_at_depth[slice.depth] = static_cast<int64_t>(i);
    if (slice.site >= layout.site_trips.size()) continue;
    const SiteTrip& trip = layout.site_trips[slice.site];
    if (trip.bound == TripBound::kNone) continue;
    const int64_t parent = slice.depth == 0 ? -1 : latest_at_depth[slice.depth - 1];
    Entries& c = counts[{parent, slice.site}];
    if (++c.entries == trip.count + 1) c.first_extra = slice.begin_event;
  }
  // The unit as a whole is "closed" when every event it recorded is here.
  const bool unit_closed = record.complete() && record.dropped() == 0 &&
                           walk.error == WalkError::kNone && walk.walked == record.events.size();
  for (const auto& [key, c] : counts) {
    const SiteTrip& trip = layout.site_trips[key.second];
    const SiteInfo& site = layout.sites[key.second];
    const bool closed = key.first < 0
                            ? unit_closed
                            : walk.slices[key.first].end_event != WalkSlice::kOpen;
    const std::string within =
        key.first < 0 ? std::string("in the unit")
                      : absl::StrFormat("within one '%s'",
                                        layout.sites[walk.slices[key.first].site].name);
    if (c.entries > trip.count) {
      out.push_back({PlanMismatch::Kind::kTripExceeded, c.first_extra,
                     absl::StrFormat(
                         "loop %s was declared %s but ran %s%d iterations %s (site '%s' "
                         "entered %s%d times): its iteration %d begins here; the declared "
                         "count is wrong, so the plan and the buffer are too small",
                         trip.loop, Declared(trip), closed ? "" : "at least ", c.entries,
                         within, site.name, closed ? "" : "at least ", c.entries,
                         trip.count + 1)});
    } else if (trip.bound == TripBound::kExact && closed && c.entries > 0 &&
               c.entries < trip.count) {
      out.push_back(
          {PlanMismatch::Kind::kTripShort,
           key.first < 0 ? -1 : static_cast<int64_t>(walk.slices[key.first].end_event),
           absl::StrFormat("loop %s was declared %s but ran %d iterations %s (site '%s' "
                           "entered %d times): the declared exact count did not happen",
                           trip.loop, Declared(trip), c.entries, within, site.name,
                           c.entries)});
    }
  }
  AddLoopsThatNeverRan(record, walk, layout, counts, out);
  if (record.complete() && record.unit_index < layout.exact_events.size()) {
    const int64_t planned = layout.exact_events[record.unit_index];
    if (planned >= 0 && static_cast<int64_t>(record.attempted) != planned) {
      out.push_back({PlanMismatch::Kind::kEventCount, -1,
                     absl::StrFormat(
                         "recorded %d event slots but the plan counts exactly %d for this "
                         "unit: a declared trip count (or what the plan assumed of the "
                         "kernel's control flow) did not hold",
                         record.attempted, planned)});
    }
  }
  return out;
}

}  // namespace warptrace
