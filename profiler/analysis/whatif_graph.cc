#include "profiler/analysis/whatif_graph.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "format/layout.h"

namespace warptrace {
namespace whatif_internal {
namespace {

using PositionOfRecord = absl::flat_hash_map<uint64_t, uint32_t>;

const std::string& RoleName(const TraceLayout& layout, uint32_t unit_index) {
  static const std::string kAll = "all";
  static const std::string kNone = "(none)";
  if (layout.unit_roles.empty()) return kAll;
  if (unit_index >= layout.unit_roles.size() || layout.unit_roles[unit_index].empty()) {
    return kNone;
  }
  return layout.unit_roles[unit_index];
}

// Every unit's graph entry and role; the position of each record.
PositionOfRecord IndexUnits(const Timeline& t, Graph& g) {
  PositionOfRecord position_of_record;
  g.units.resize(t.units.size());
  for (uint32_t p = 0; p < t.units.size(); ++p) {
    const UnitTimeline& u = t.units[p];
    position_of_record[u.record_index] = p;
    UnitGraph& ug = g.units[p];
    ug.u = &u;
    const std::string& role = RoleName(t.layout, u.unit_index);
    auto it = std::find(g.roles.begin(), g.roles.end(), role);
    ug.role = static_cast<uint32_t>(it - g.roles.begin());
    if (it == g.roles.end()) g.roles.push_back(role);
  }
  return position_of_record;
}

absl::Status CheckSites(const TraceLayout& layout, const UnitTimeline& u) {
  for (const Slice& s : u.slices) {
    if (s.site >= layout.sites.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "what-if: unit ", u.unit_index, " of block ", u.block_linear,
          " has a slice of site ", s.site, ", outside the layout's ", layout.sites.size()));
    }
  }
  return absl::OkStatus();
}

// Points, in program order: at one ns, the ends of slices that began earlier (deepest
// first), instants, completions, issues, begins (outermost first), then the ends of slices
// that begin and end there (deepest first).
void BuildPoints(const UnitTimeline& u, UnitGraph& ug, uint64_t& completion_edges) {
  ug.points.reserve(u.slices.size() * 2 + u.instants.size() + u.async_spans.size() * 2);
  for (uint32_t i = 0; i < u.slices.size(); ++i) {
    const Slice& s = u.slices[i];
    const int32_t d = static_cast<int32_t>(s.depth);
    ug.points.push_back({s.begin_ns, 4, d, PointKind::kSliceBegin, i});
    ug.points.push_back({s.end_ns, s.end_ns == s.begin_ns ? 5 : 0, -d, PointKind::kSliceEnd, i});
  }
  for (uint32_t i = 0; i < u.instants.size(); ++i) {
    ug.points.push_back({u.instants[i].ns, 1, static_cast<int32_t>(i), PointKind::kInstant, i});
  }
  for (uint32_t i = 0; i < u.async_spans.size(); ++i) {
    const AsyncSpan& a = u.async_spans[i];
    ug.points.push_back({a.begin_ns, 3, static_cast<int32_t>(i), PointKind::kAsyncBegin, i});
    // A derived end (trace version 5) is another wait's release, not a point of this unit's
    // program: BuildPredicted moves it with that release.
    if (a.completed && !a.end_derived) {
      ug.points.push_back({a.end_ns, 2, static_cast<int32_t>(i), PointKind::kAsyncEnd, i});
      ++completion_edges;
    }
  }
  std::stable_sort(ug.points.begin(), ug.points.end(), [](const Point& a, const Point& b) {
    if (a.ns != b.ns) return a.ns < b.ns;
    if (a.cls != b.cls) return a.cls < b.cls;
    return a.key < b.key;
  });
  ug.point_of_instant.assign(u.instants.size(), 0);
  ug.point_of_async_begin.assign(u.async_spans.size(), 0);
  for (uint32_t i = 0; i < ug.points.size(); ++i) {
    const Point& pt = ug.points[i];
    if (pt.kind == PointKind::kInstant) ug.point_of_instant[pt.index] = i;
    if (pt.kind == PointKind::kAsyncBegin) ug.point_of_async_begin[pt.index] = i;
  }
}

// Waits, and the outermost waits' time inside each slice.
void FindWaits(const TraceLayout& layout, const UnitTimeline& u, UnitGraph& ug) {
  ug.is_wait.assign(u.slices.size(), false);
  ug.waiting_inside.assign(u.slices.size(), 0);
  ug.releasers.assign(u.slices.size(), {});
  std::vector<uint32_t> open;
  for (uint32_t i = 0; i < u.slices.size(); ++i) {
    const Slice& s = u.slices[i];
    while (!open.empty() && u.slices[open.back()].end_ns <= s.begin_ns &&
           u.slices[open.back()].depth >= s.depth) {
      open.pop_back();
    }
    while (!open.empty() && u.slices[open.back()].depth >= s.depth) open.pop_back();
    ug.is_wait[i] = IsWaitSite(layout.sites[s.site].kind);
    if (ug.is_wait[i]) {
      bool nested_in_wait = false;
      for (uint32_t o : open) nested_in_wait = nested_in_wait || ug.is_wait[o];
      if (!nested_in_wait) {
        for (uint32_t o : open) ug.waiting_inside[o] += s.end_ns - s.begin_ns;
      }
    }
    open.push_back(i);
  }
}

// Hand-off edges: each arrival -> the wait it released, from the flows listed on the
// waiting unit.
absl::Status AddHandoffEdges(const Timeline& t, const PositionOfRecord& position_of_record,
                             Graph& g) {
  for (uint32_t p = 0; p < t.units.size(); ++p) {
    const UnitTimeline& u = t.units[p];
    g.flows += u.flows.size();
    for (const Flow& f : u.flows) {
      if (f.kind != FlowKind::kArrivalToRelease || f.to.record_index != u.record_index ||
          f.to.released_wait == FlowEnd::kNone || f.to.released_wait >= u.slices.size()) {
        continue;
      }
      auto from = position_of_record.find(f.from.record_index);
      if (from == position_of_record.end()) continue;
      const UnitTimeline& fu = t.units[from->second];
      if (fu.block_linear != u.block_linear) {
        return absl::InvalidArgumentError(absl::StrCat(
            "what-if: flow ", f.id, " links blocks ", fu.block_linear, " and ", u.block_linear));
      }
      // The arrival: the instant at that event slot (instants are in event order).
      auto at = std::lower_bound(
          fu.instants.begin(), fu.instants.end(), f.from.event,
          [](const Instant& i, uint32_t event) { return i.event < event; });
      if (at == fu.instants.end() || at->event != f.from.event) continue;
      const size_t instant = static_cast<size_t>(at - fu.instants.begin());
      const Slice& w = u.slices[f.to.released_wait];
      if (fu.instants[instant].ns > w.end_ns) continue;  // not a cause (inconsistent times)
      g.units[p].releasers[f.to.released_wait].push_back(
          {from->second, g.units[from->second].point_of_instant[instant],
           fu.instants[instant].ns});
      ++g.handoff_edges;
    }
  }
  return absl::OkStatus();
}

// Blocks (the units with records), by start.
void CollectBlocks(const Timeline& t, Graph& g) {
  std::map<uint32_t, size_t> block_of;
  for (uint32_t p = 0; p < t.units.size(); ++p) {
    const UnitTimeline& u = t.units[p];
    if (!u.has_record) continue;
    auto [it, fresh] = block_of.try_emplace(u.block_linear, g.blocks.size());
    if (fresh) {
      BlockGraph b;
      b.block_linear = u.block_linear;
      b.sm_id = u.sm_id;
      b.start_ns = u.start_ns;
      b.end_ns = u.end_ns;
      g.blocks.push_back(b);
    }
    BlockGraph& b = g.blocks[it->second];
    b.start_ns = std::min(b.start_ns, u.start_ns);
    b.end_ns = std::max(b.end_ns, u.end_ns);
    b.units.push_back(p);
  }
  std::stable_sort(g.blocks.begin(), g.blocks.end(), [](const BlockGraph& a, const BlockGraph& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.block_linear < b.block_linear;
  });
}

// SM slots: each block waits on the latest block of its SM that ended before it started and
// is not already followed.
void LinkOccupancy(Graph& g) {
  g.occupancy_pred.assign(g.blocks.size(), -1);
  std::vector<bool> claimed(g.blocks.size(), false);
  for (size_t i = 0; i < g.blocks.size(); ++i) {
    int32_t best = -1;
    for (size_t j = 0; j < i; ++j) {
      if (claimed[j] || g.blocks[j].sm_id != g.blocks[i].sm_id ||
          g.blocks[j].end_ns > g.blocks[i].start_ns) {
        continue;
      }
      if (best < 0 || g.blocks[j].end_ns > g.blocks[best].end_ns) best = static_cast<int32_t>(j);
    }
    if (best >= 0) {
      claimed[best] = true;
      g.occupancy_pred[i] = best;
      ++g.occupancy_edges;
    }
  }
}

}  // namespace

absl::StatusOr<Graph> BuildGraph(const Timeline& t) {
  Graph g;
  g.timeline = &t;
  const PositionOfRecord position_of_record = IndexUnits(t, g);
  for (uint32_t p = 0; p < t.units.size(); ++p) {
    const UnitTimeline& u = t.units[p];
    if (!u.has_record) continue;
    if (absl::Status s = CheckSites(t.layout, u); !s.ok()) return s;
    BuildPoints(u, g.units[p], g.completion_edges);
    FindWaits(t.layout, u, g.units[p]);
  }
  if (absl::Status s = AddHandoffEdges(t, position_of_record, g); !s.ok()) return s;
  CollectBlocks(t, g);
  LinkOccupancy(g);
  return g;
}

absl::Status NoHandoffsError() {
  return absl::FailedPreconditionError(
      "what-if: the trace has several units per block but no recorded hand-offs (a "
      "version-1 trace, a Mosaic GPU buffer, or a kernel without phase barriers, arrivals "
      "or async copies): the graph cannot tell which unit waited on which, so it would only "
      "guess; record a version-2 trace (warptrace's builder records them by default)");
}

absl::Status CheckLinked(const Graph& g) {
  if (UnitsPerBlock(g.timeline->layout) > 1 && g.flows == 0) return NoHandoffsError();
  return absl::OkStatus();
}

std::vector<std::string> GraphLimitations(uint64_t unlinked_waits) {
  std::vector<std::string> out = {
      "every gap of work that is not re-timed keeps its measured length: shared-memory and "
      "global-memory bandwidth, tensor-core contention between warps, and clock changes are "
      "not in the graph",
      "an async copy or wgmma group keeps its measured duration (times its factor): copies "
      "that shared bandwidth with re-timed work do not get faster",
  };
  if (unlinked_waits > 0) {
    out.push_back(absl::StrCat(unlinked_waits,
                               " wait instances had no recorded releaser and keep their "
                               "measured length"));
  }
  return out;
}

}  // namespace whatif_internal
}  // namespace warptrace
