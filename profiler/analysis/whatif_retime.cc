#include "profiler/analysis/whatif_retime.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "format/layout.h"

namespace warptrace {
namespace whatif_internal {

absl::StatusOr<std::vector<Resolved>> Resolve(const Graph& g, absl::Span<const Speedup> speedups) {
  const TraceLayout& layout = g.timeline->layout;
  std::vector<Resolved> out;
  for (const Speedup& s : speedups) {
    Resolved r{&s, std::vector<bool>(layout.sites.size(), false), -1};
    bool any = false, only_waits = true;
    for (size_t i = 0; i < layout.sites.size(); ++i) {
      if (layout.sites[i].name != s.name) continue;
      const SiteKind kind = layout.sites[i].kind;
      if (IsWaitSite(kind) || kind == SiteKind::kBarrierArrive) continue;
      only_waits = false;
      r.site[i] = true;
      any = true;
    }
    if (!any) {
      if (!only_waits || std::none_of(layout.sites.begin(), layout.sites.end(),
                                      [&](const SiteInfo& site) { return site.name == s.name; })) {
        std::set<std::string> names;
        for (const SiteInfo& site : layout.sites) {
          if (!IsWaitSite(site.kind) && site.kind != SiteKind::kBarrierArrive) {
            names.insert(site.name);
          }
        }
        return absl::InvalidArgumentError(absl::StrCat(
            "what-if '", s.text, "': no region, loop body, async copy or wgmma group is named '",
            s.name, "'; the trace has: ", absl::StrJoin(names, ", ")));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "what-if '", s.text, "': '", s.name,
          "' is a wait or an arrival: waits are predicted from what they wait on, not set"));
    }
    if (!s.role.empty()) {
      auto it = std::find(g.roles.begin(), g.roles.end(), s.role);
      if (it == g.roles.end()) {
        return absl::InvalidArgumentError(absl::StrCat("what-if '", s.text, "': no role '",
                                                       s.role, "'; the trace has: ",
                                                       absl::StrJoin(g.roles, ", ")));
      }
      r.role = static_cast<int32_t>(it - g.roles.begin());
    }
    if (s.shorten_ns == 0 && s.factor < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("what-if '", s.text, "': the factor must be >= 0"));
    }
    out.push_back(std::move(r));
  }
  return out;
}

absl::StatusOr<Factors> ComputeFactors(const Graph& g, absl::Span<const Resolved> resolved) {
  Factors f;
  f.slice.resize(g.units.size());
  f.async.resize(g.units.size());
  std::vector<uint64_t> count(resolved.size(), 0);
  for (size_t p = 0; p < g.units.size(); ++p) {
    const UnitGraph& ug = g.units[p];
    const UnitTimeline& u = *ug.u;
    f.slice[p].assign(u.slices.size(), 1.0);
    f.async[p].assign(u.async_spans.size(), 1.0);
    if (!u.has_record) continue;
    for (size_t k = 0; k < resolved.size(); ++k) {
      const Resolved& r = resolved[k];
      if (r.role >= 0 && static_cast<uint32_t>(r.role) != ug.role) continue;
      const Speedup& s = *r.speedup;
      auto apply = [&](double& factor, int64_t work, const char* what) -> absl::Status {
        ++count[k];
        if (s.shorten_ns == 0) {
          factor *= s.factor;
          return absl::OkStatus();
        }
        if (s.shorten_ns > work) {
          return absl::InvalidArgumentError(absl::StrCat(
              "what-if '", s.text, "': the shortening (", s.shorten_ns, " ns) is longer than ",
              what, " '", s.name, "' on block ", u.block_linear, " unit ", u.unit_index,
              " (", work, " ns of work)"));
        }
        if (work > 0) factor *= static_cast<double>(work - s.shorten_ns) / work;
        return absl::OkStatus();
      };
      for (size_t i = 0; i < u.slices.size(); ++i) {
        const Slice& sl = u.slices[i];
        if (!r.site[sl.site]) continue;
        RETURN_IF_ERROR(apply(f.slice[p][i], sl.end_ns - sl.begin_ns - ug.waiting_inside[i],
                              "an instance of"));
      }
      for (size_t i = 0; i < u.async_spans.size(); ++i) {
        const AsyncSpan& a = u.async_spans[i];
        if (!r.site[a.site] || !a.completed) continue;
        RETURN_IF_ERROR(apply(f.async[p][i], a.end_ns - a.begin_ns, "an instance of"));
      }
    }
  }
  for (size_t k = 0; k < resolved.size(); ++k) {
    const Speedup& s = *resolved[k].speedup;
    if (count[k] == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "what-if '", s.text, "': '", s.name, "' has no instance",
          s.role.empty() ? std::string() : absl::StrCat(" on the ", s.role, " units"),
          " in this trace"));
    }
    f.instances += count[k];
  }
  return f;
}

Factors NeutralFactors(const Graph& g) {
  Factors f;
  f.slice.resize(g.units.size());
  f.async.resize(g.units.size());
  for (size_t p = 0; p < g.units.size(); ++p) {
    f.slice[p].assign(g.units[p].u->slices.size(), 1.0);
    f.async[p].assign(g.units[p].u->async_spans.size(), 1.0);
  }
  return f;
}

namespace {

// One unit's walk through its points while its block is re-timed.
struct Cursor {
  size_t next = 0;
  int64_t prev_old = 0, prev_new = 0;
  std::vector<uint32_t> open;          // open slices
  std::vector<double> scale;           // product of factors, parallel to open (with base)
  int open_waits = 0;
  std::vector<int64_t> comp_old, comp_new;  // by slice: latest completion inside (waits)
  std::vector<int64_t> begin_new;      // by slice
  std::vector<int64_t> async_begin_new;
};

// One block being re-timed: a cursor per unit.
struct BlockRun {
  const Graph& g;
  const Factors& f;
  Retimed& r;
  std::vector<Cursor> cur;                           // by position in the block
  absl::flat_hash_map<uint32_t, uint32_t> pos_in_block;  // unit position -> block position
};

Retimed InitRetimed(const Graph& g) {
  Retimed r;
  const size_t n = g.units.size();
  r.point_ns.resize(n);
  r.start_ns.assign(n, 0);
  r.end_ns.assign(n, 0);
  for (size_t p = 0; p < n; ++p) {
    r.point_ns[p].assign(g.units[p].points.size(), 0);
    r.start_ns[p] = g.units[p].u->start_ns;
    r.end_ns[p] = g.units[p].u->end_ns;
  }
  return r;
}

// The block's units start `shift` later than measured (their SM slot moved).
void StartBlock(const BlockGraph& b, int64_t shift, BlockRun& run) {
  run.cur.resize(b.units.size());
  for (uint32_t k = 0; k < b.units.size(); ++k) {
    const UnitGraph& ug = run.g.units[b.units[k]];
    run.pos_in_block[b.units[k]] = k;
    Cursor& c = run.cur[k];
    c.prev_old = ug.u->start_ns;
    c.prev_new = ug.u->start_ns + shift;
    c.scale = {1.0};
    c.comp_old.assign(ug.u->slices.size(), INT64_MIN);
    c.comp_new.assign(ug.u->slices.size(), INT64_MIN);
    c.begin_new.assign(ug.u->slices.size(), 0);
    c.async_begin_new.assign(ug.u->async_spans.size(), 0);
    run.r.start_ns[b.units[k]] = ug.u->start_ns + shift;
  }
}

// A wait's end, once every releaser in the block is placed (nullopt until then).
std::optional<int64_t> WaitEnd(const UnitGraph& ug, const Cursor& c, const Point& pt,
                               BlockRun& run) {
  const Slice& w = ug.u->slices[pt.index];
  const std::vector<Releaser>& rel = ug.releasers[pt.index];
  for (const Releaser& x : rel) {
    auto q = run.pos_in_block.find(x.unit);
    if (q == run.pos_in_block.end()) continue;
    if (run.cur[q->second].next <= x.point) return std::nullopt;
  }
  int64_t latest_old = INT64_MIN, latest_new = INT64_MIN;
  for (const Releaser& x : rel) {
    if (!run.pos_in_block.contains(x.unit)) continue;
    latest_old = std::max(latest_old, x.ns);
    latest_new = std::max(latest_new, run.r.point_ns[x.unit][x.point]);
  }
  if (c.comp_old[pt.index] != INT64_MIN) {
    latest_old = std::max(latest_old, c.comp_old[pt.index]);
    latest_new = std::max(latest_new, c.comp_new[pt.index]);
  }
  const int64_t d = w.end_ns - w.begin_ns;
  if (latest_old == INT64_MIN) {
    ++run.r.unlinked_waits;
    return std::max(c.prev_new, c.begin_new[pt.index] + d);
  }
  // A wait that really waited ends its measured latency after its releaser; one whose
  // releaser came first cost what it cost, and bounds nothing by it (its wake-up latency,
  // were it to wait, is unknown: taken as 0).
  const bool waited = latest_old > w.begin_ns;
  const int64_t lat = waited ? std::max<int64_t>(0, w.end_ns - latest_old) : 0;
  const int64_t cost = waited ? std::min(d, lat) : d;
  return std::max({c.prev_new, c.begin_new[pt.index] + cost, latest_new + lat});
}

// An async completion's time; recorded as a completion inside the open waits.
int64_t AsyncEnd(const UnitGraph& ug, Cursor& c, const Point& pt, double factor,
                 int64_t work_new) {
  const AsyncSpan& a = ug.u->async_spans[pt.index];
  const int64_t dur = static_cast<int64_t>(std::llround((a.end_ns - a.begin_ns) * factor));
  // Observed inside a wait, the thread waited for it: it ends when the copy (or wgmma group)
  // does. Observed in passing, it is a program point like any other: when the copy really
  // completed is unknown, only that it was done by then.
  const int64_t t = c.open_waits > 0 ? std::max(work_new, c.async_begin_new[pt.index] + dur)
                                     : std::max(work_new, c.async_begin_new[pt.index]);
  for (uint32_t o : c.open) {
    if (ug.is_wait[o]) {
      c.comp_old[o] = std::max(c.comp_old[o], pt.ns);
      c.comp_new[o] = std::max(c.comp_new[o], t);
    }
  }
  return t;
}

// Moves the cursor past `pt`, placed at `t`: opens or closes its slice.
void Advance(const UnitGraph& ug, absl::Span<const double> slice_factors, const Point& pt,
             int64_t t, Cursor& c) {
  switch (pt.kind) {
    case PointKind::kSliceBegin:
      c.begin_new[pt.index] = t;
      c.open.push_back(pt.index);
      c.scale.push_back(c.scale.back() * slice_factors[pt.index]);
      if (ug.is_wait[pt.index]) ++c.open_waits;
      break;
    case PointKind::kSliceEnd: {
      auto it = std::find(c.open.rbegin(), c.open.rend(), pt.index);
      if (it != c.open.rend()) {
        const size_t at = c.open.size() - 1 - (it - c.open.rbegin());
        if (ug.is_wait[pt.index]) --c.open_waits;
        c.open.erase(c.open.begin() + at);
        // Rebuild the scales above `at` (slices close innermost first, so rarely).
        c.scale.resize(at + 1);
        for (size_t j = at; j < c.open.size(); ++j) {
          c.scale.push_back(c.scale.back() * slice_factors[c.open[j]]);
        }
      }
      break;
    }
    case PointKind::kAsyncBegin:
      c.async_begin_new[pt.index] = t;
      break;
    default:
      break;
  }
  c.prev_old = pt.ns;
  c.prev_new = t;
  ++c.next;
}

// Places unit `p`'s points until one waits on a releaser not yet placed. Returns whether it
// placed any.
bool StepUnit(size_t p, Cursor& c, BlockRun& run) {
  const UnitGraph& ug = run.g.units[p];
  std::vector<int64_t>& out = run.r.point_ns[p];
  bool progress = false;
  while (c.next < ug.points.size()) {
    const Point& pt = ug.points[c.next];
    const int64_t gap = pt.ns - c.prev_old;
    const int64_t work_new =
        c.prev_new +
        (c.open_waits > 0 ? 0 : static_cast<int64_t>(std::llround(gap * c.scale.back())));
    int64_t t = work_new;
    if (pt.kind == PointKind::kSliceEnd && ug.is_wait[pt.index]) {
      const std::optional<int64_t> end = WaitEnd(ug, c, pt, run);
      if (!end.has_value()) break;
      t = *end;
    } else if (pt.kind == PointKind::kAsyncEnd) {
      t = AsyncEnd(ug, c, pt, run.f.async[p][pt.index], work_new);
    }
    out[c.next] = t;
    Advance(ug, run.f.slice[p], pt, t, c);
    progress = true;
  }
  return progress;
}

// Re-times block `bi` (its SM-slot predecessor is already done); returns its new end.
absl::StatusOr<int64_t> RetimeBlock(const Graph& g, const Factors& f, size_t bi,
                                    absl::Span<const int64_t> block_end_new, Retimed& r) {
  const BlockGraph& b = g.blocks[bi];
  const int32_t pred = g.occupancy_pred[bi];
  const int64_t shift = pred < 0 ? 0 : block_end_new[pred] - g.blocks[pred].end_ns;
  BlockRun run{g, f, r, {}, {}};
  StartBlock(b, shift, run);
  bool progress = true;
  size_t done = 0;
  while (progress && done < b.units.size()) {
    progress = false;
    done = 0;
    for (uint32_t k = 0; k < b.units.size(); ++k) {
      if (StepUnit(b.units[k], run.cur[k], run)) progress = true;
      if (run.cur[k].next == g.units[b.units[k]].points.size()) ++done;
    }
  }
  if (done < b.units.size()) {
    return absl::InternalError(absl::StrCat(
        "what-if: the hand-off graph of block ", b.block_linear,
        " has a cycle (a wait released by an arrival that came after it)"));
  }
  int64_t end_new = INT64_MIN;
  for (uint32_t k = 0; k < b.units.size(); ++k) {
    const size_t p = b.units[k];
    const UnitTimeline& u = *g.units[p].u;
    r.end_ns[p] = run.cur[k].prev_new + (u.end_ns - run.cur[k].prev_old);
    end_new = std::max(end_new, r.end_ns[p]);
  }
  return end_new;
}

}  // namespace

absl::StatusOr<Retimed> Retime(const Graph& g, const Factors& f) {
  Retimed r = InitRetimed(g);
  std::vector<int64_t> block_end_new(g.blocks.size(), 0);
  for (size_t bi = 0; bi < g.blocks.size(); ++bi) {
    ASSIGN_OR_RETURN(block_end_new[bi], RetimeBlock(g, f, bi, block_end_new, r));
  }
  // Units without a record keep their times.
  return r;
}

namespace {

// `u`'s derived copy ends (AsyncSpan::end_derived) at their releases' new times (the wait
// slices of `out`, retimed already), then its async lanes again, greedily in begin order.
void PlaceDerivedEndsAndLanes(const absl::flat_hash_map<uint64_t, uint32_t>& position_of_record,
                              const Timeline& out, UnitTimeline& u) {
  for (const Flow& f : u.flows) {
    if (!f.derived || f.from.record_index != u.record_index) continue;
    auto to_pos = position_of_record.find(f.to.record_index);
    if (to_pos == position_of_record.end()) continue;
    const UnitTimeline& to = out.units[to_pos->second];
    if (f.to.released_wait >= to.slices.size()) continue;
    for (AsyncSpan& a : u.async_spans) {
      if (a.end_derived && a.begin_event == f.from.event) {
        a.end_ns = std::max(a.begin_ns, to.slices[f.to.released_wait].end_ns);
      }
    }
  }
  std::vector<int64_t> lane_end;
  for (AsyncSpan& a : u.async_spans) {
    size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > a.begin_ns) ++lane;
    if (lane == lane_end.size()) lane_end.push_back(0);
    lane_end[lane] = a.end_ns;
    a.lane = static_cast<uint32_t>(lane);
  }
  u.async_lanes = static_cast<uint32_t>(lane_end.size());
}

}  // namespace

Timeline BuildPredicted(const Graph& g, const Retimed& r) {
  Timeline out = *g.timeline;
  absl::flat_hash_map<uint64_t, uint32_t> position_of_record;
  for (uint32_t p = 0; p < out.units.size(); ++p) position_of_record[out.units[p].record_index] = p;
  // (record, event) -> new time, for the flows' ends.
  absl::flat_hash_map<std::pair<uint64_t, uint32_t>, int64_t> event_ns;
  int64_t origin = INT64_MAX, end = INT64_MIN;
  for (size_t p = 0; p < out.units.size(); ++p) {
    UnitTimeline& u = out.units[p];
    if (!u.has_record) continue;
    const UnitGraph& ug = g.units[p];
    const int64_t delta_start = r.start_ns[p] - u.start_ns;
    for (size_t i = 0; i < ug.points.size(); ++i) {
      const Point& pt = ug.points[i];
      const int64_t t = r.point_ns[p][i];
      switch (pt.kind) {
        case PointKind::kSliceBegin: u.slices[pt.index].begin_ns = t; break;
        case PointKind::kSliceEnd: u.slices[pt.index].end_ns = t; break;
        case PointKind::kInstant:
          u.instants[pt.index].ns = t;
          event_ns[{u.record_index, u.instants[pt.index].event}] = t;
          break;
        case PointKind::kAsyncBegin:
          u.async_spans[pt.index].begin_ns = t;
          event_ns[{u.record_index, u.async_spans[pt.index].begin_event}] = t;
          break;
        case PointKind::kAsyncEnd:
          u.async_spans[pt.index].end_ns = t;
          event_ns[{u.record_index, u.async_spans[pt.index].end_event}] = t;
          break;
      }
    }
    for (AsyncSpan& a : u.async_spans) {
      if (!a.completed) a.end_ns = r.end_ns[p];
    }
    (void)delta_start;
    u.start_ns = r.start_ns[p];
    u.end_ns = std::max(r.end_ns[p], u.start_ns);
    origin = std::min(origin, u.start_ns);
    end = std::max(end, u.end_ns);
  }
  for (UnitTimeline& u : out.units) {
    if (u.has_record) PlaceDerivedEndsAndLanes(position_of_record, out, u);
  }
  for (size_t p = 0; p < out.units.size(); ++p) {
    UnitTimeline& u = out.units[p];
    for (Flow& f : u.flows) {
      auto from = event_ns.find({f.from.record_index, f.from.event});
      if (from != event_ns.end()) f.from.ns = from->second;
      auto to_pos = position_of_record.find(f.to.record_index);
      if (FlowEndsAtRelease(f) && to_pos != position_of_record.end() &&
          f.to.released_wait != FlowEnd::kNone &&
          f.to.released_wait < out.units[to_pos->second].slices.size()) {
        f.to.ns = out.units[to_pos->second].slices[f.to.released_wait].end_ns;
      } else {
        auto to = event_ns.find({f.to.record_index, f.to.event});
        if (to != event_ns.end()) f.to.ns = to->second;
      }
    }
  }
  if (origin == INT64_MAX) origin = end = out.origin_ns;
  out.origin_ns = origin;
  out.end_ns = end;
  for (UnitTimeline& u : out.units) {
    if (!u.has_record) u.start_ns = u.end_ns = origin;
  }
  out.clock_note = absl::StrCat("predicted by warptrace what-if from: ", g.timeline->clock_note);
  return out;
}

namespace {

struct Span {
  int64_t begin = INT64_MAX, end = INT64_MIN;
};

}  // namespace

int64_t KernelNs(const Timeline& t, const std::vector<int64_t>* start,
                 const std::vector<int64_t>* end) {
  Span s;
  for (size_t p = 0; p < t.units.size(); ++p) {
    if (!t.units[p].has_record) continue;
    s.begin = std::min(s.begin, start ? (*start)[p] : t.units[p].start_ns);
    s.end = std::max(s.end, end ? (*end)[p] : t.units[p].end_ns);
  }
  return s.begin == INT64_MAX ? 0 : s.end - s.begin;
}

absl::StatusOr<Retimed> RetimeEngine::Run(absl::Span<const Speedup> speedups,
                                           uint64_t* instances) const {
  ASSIGN_OR_RETURN(std::vector<Resolved> resolved, Resolve(graph, speedups));
  ASSIGN_OR_RETURN(Factors factors, ComputeFactors(graph, resolved));
  if (instances) *instances = factors.instances;
  return Retime(graph, factors);
}

absl::StatusOr<RetimeEngine> MakeRetimeEngine(const Timeline& timeline) {
  RetimeEngine e;
  ASSIGN_OR_RETURN(e.graph, BuildGraph(timeline));
  RETURN_IF_ERROR(CheckLinked(e.graph));
  return e;
}

}  // namespace whatif_internal
}  // namespace warptrace
