#include "profiler/analysis/whatif.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "profiler/analysis/analysis_sink.h"
#include "profiler/dump/replay.h"
#include "profiler/dump/sink.h"

namespace warptrace {
namespace {

// ---- Parsing --------------------------------------------------------------------------

absl::StatusOr<Speedup> ParseOne(absl::string_view text) {
  Speedup s;
  s.text = std::string(absl::StripAsciiWhitespace(text));
  const size_t eq = s.text.rfind('=');
  if (eq == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "what-if '", s.text, "': expected [ROLE:]NAME=FACTOR or [ROLE:]NAME=-DURATION "
        "(e.g. mma=0.5, producer:load=-2000ns)"));
  }
  std::string target(absl::StripAsciiWhitespace(absl::string_view(s.text).substr(0, eq)));
  const std::string value(absl::StripAsciiWhitespace(absl::string_view(s.text).substr(eq + 1)));
  const size_t colon = target.find(':');
  if (colon != std::string::npos) {
    s.role = std::string(absl::StripAsciiWhitespace(absl::string_view(target).substr(0, colon)));
    target = std::string(absl::StripAsciiWhitespace(absl::string_view(target).substr(colon + 1)));
    if (s.role.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("what-if '", s.text, "': empty role"));
    }
  }
  s.name = target;
  if (s.name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("what-if '", s.text, "': empty name"));
  }
  if (!value.empty() && value[0] == '-') {
    absl::string_view number = absl::string_view(value).substr(1);
    double scale = 0;
    if (absl::EndsWith(number, "ns")) {
      scale = 1;
    } else if (absl::EndsWith(number, "us")) {
      scale = 1e3;
    } else if (absl::EndsWith(number, "ms")) {
      scale = 1e6;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "what-if '", s.text, "': a shortening needs a unit (ns, us or ms), e.g. -2000ns"));
    }
    number.remove_suffix(2);
    double d = 0;
    if (!absl::SimpleAtod(number, &d) || !std::isfinite(d) || d <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "what-if '", s.text, "': the shortening must be a positive duration"));
    }
    s.shorten_ns = static_cast<int64_t>(std::llround(d * scale));
    if (s.shorten_ns <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("what-if '", s.text, "': the shortening rounds to 0 ns"));
    }
    return s;
  }
  double f = 0;
  if (!absl::SimpleAtod(value, &f) || !std::isfinite(f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("what-if '", s.text, "': '", value, "' is not a number"));
  }
  if (f <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "what-if '", s.text, "': the factor must be > 0 (0.5: twice as fast; to shorten by a "
        "duration write NAME=-2000ns)"));
  }
  s.factor = f;
  return s;
}

// ---- The graph and the re-timing --------------------------------------------------------

enum class PointKind : uint8_t { kSliceBegin, kSliceEnd, kInstant, kAsyncBegin, kAsyncEnd };

struct Point {
  int64_t ns;
  int32_t cls;  // tie order at one ns (see Order)
  int32_t key;  // tie order inside a class
  PointKind kind;
  uint32_t index;  // into the unit's slices, instants or async spans
};

// A releaser of a wait: an arrival on some unit of the block.
struct Releaser {
  uint32_t unit;   // position in the block
  uint32_t point;  // its point there
  int64_t ns;      // measured
};

struct UnitGraph {
  const UnitTimeline* u = nullptr;
  uint32_t role = 0;
  std::vector<Point> points;
  std::vector<uint32_t> point_of_instant;
  std::vector<uint32_t> point_of_async_begin;
  std::vector<std::vector<Releaser>> releasers;  // by slice (waits only)
  std::vector<int64_t> waiting_inside;           // by slice: outermost waits inside it
  std::vector<bool> is_wait;                     // by slice
};

struct BlockGraph {
  uint32_t block_linear = 0;
  uint32_t sm_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::vector<uint32_t> units;  // positions in Timeline::units (with records)
};

struct Graph {
  const Timeline* timeline = nullptr;
  std::vector<std::string> roles;
  std::vector<UnitGraph> units;      // by position in Timeline::units
  std::vector<BlockGraph> blocks;    // by start
  std::vector<int32_t> occupancy_pred;  // by block (index into blocks), -1 none
  uint64_t handoff_edges = 0;
  uint64_t completion_edges = 0;
  uint64_t occupancy_edges = 0;
  uint64_t flows = 0;
};

// A speedup resolved against the layout: the sites it names and its role.
struct Resolved {
  const Speedup* speedup;
  std::vector<bool> site;  // by site id
  int32_t role;            // -1: every role
};

const std::string& RoleName(const TraceLayout& layout, uint32_t unit_index,
                            std::vector<std::string>& storage) {
  static const std::string kAll = "all";
  static const std::string kNone = "(none)";
  if (layout.unit_roles.empty()) return kAll;
  if (unit_index >= layout.unit_roles.size() || layout.unit_roles[unit_index].empty()) {
    return kNone;
  }
  (void)storage;
  return layout.unit_roles[unit_index];
}

absl::StatusOr<Graph> BuildGraph(const Timeline& t) {
  Graph g;
  g.timeline = &t;
  const TraceLayout& layout = t.layout;
  absl::flat_hash_map<uint64_t, uint32_t> position_of_record;
  std::vector<std::string> storage;
  g.units.resize(t.units.size());
  for (uint32_t p = 0; p < t.units.size(); ++p) {
    const UnitTimeline& u = t.units[p];
    position_of_record[u.record_index] = p;
    UnitGraph& ug = g.units[p];
    ug.u = &u;
    const std::string& role = RoleName(layout, u.unit_index, storage);
    auto it = std::find(g.roles.begin(), g.roles.end(), role);
    ug.role = static_cast<uint32_t>(it - g.roles.begin());
    if (it == g.roles.end()) g.roles.push_back(role);
  }
  for (uint32_t p = 0; p < t.units.size(); ++p) {
    const UnitTimeline& u = t.units[p];
    UnitGraph& ug = g.units[p];
    if (!u.has_record) continue;
    for (const Slice& s : u.slices) {
      if (s.site >= layout.sites.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "what-if: unit ", u.unit_index, " of block ", u.block_linear,
            " has a slice of site ", s.site, ", outside the layout's ", layout.sites.size()));
      }
    }
    // Points, in program order: at one ns, the ends of slices that began earlier (deepest
    // first), instants, completions, issues, begins (outermost first), then the ends of
    // slices that begin and end there (deepest first).
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
      if (a.completed) {
        ug.points.push_back({a.end_ns, 2, static_cast<int32_t>(i), PointKind::kAsyncEnd, i});
        ++g.completion_edges;
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
    // Waits, and the outermost waits' time inside each slice.
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
  // Blocks and their SM slots.
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
  return g;
}

// The per-instance factors of one re-timing.
struct Factors {
  std::vector<std::vector<double>> slice;  // by unit position, by slice
  std::vector<std::vector<double>> async;  // by unit position, by async span
  uint64_t instances = 0;
};

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

// The re-timed points of every unit.
struct Retimed {
  std::vector<std::vector<int64_t>> point_ns;  // by unit position, by point
  std::vector<int64_t> start_ns, end_ns;       // by unit position
  uint64_t unlinked_waits = 0;
};

absl::StatusOr<Retimed> Retime(const Graph& g, const Factors& f) {
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
  std::vector<int64_t> block_end_new(g.blocks.size(), 0);
  // Per unit cursor state.
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
  for (size_t bi = 0; bi < g.blocks.size(); ++bi) {
    const BlockGraph& b = g.blocks[bi];
    const int32_t pred = g.occupancy_pred[bi];
    const int64_t shift = pred < 0 ? 0 : block_end_new[pred] - g.blocks[pred].end_ns;
    std::vector<Cursor> cur(b.units.size());
    absl::flat_hash_map<uint32_t, uint32_t> pos_in_block;
    for (uint32_t k = 0; k < b.units.size(); ++k) {
      const UnitGraph& ug = g.units[b.units[k]];
      pos_in_block[b.units[k]] = k;
      Cursor& c = cur[k];
      c.prev_old = ug.u->start_ns;
      c.prev_new = ug.u->start_ns + shift;
      c.scale = {1.0};
      c.comp_old.assign(ug.u->slices.size(), INT64_MIN);
      c.comp_new.assign(ug.u->slices.size(), INT64_MIN);
      c.begin_new.assign(ug.u->slices.size(), 0);
      c.async_begin_new.assign(ug.u->async_spans.size(), 0);
      r.start_ns[b.units[k]] = ug.u->start_ns + shift;
    }
    bool progress = true;
    size_t done = 0;
    while (progress && done < b.units.size()) {
      progress = false;
      done = 0;
      for (uint32_t k = 0; k < b.units.size(); ++k) {
        const size_t p = b.units[k];
        const UnitGraph& ug = g.units[p];
        const UnitTimeline& u = *ug.u;
        Cursor& c = cur[k];
        std::vector<int64_t>& out = r.point_ns[p];
        while (c.next < ug.points.size()) {
          const Point& pt = ug.points[c.next];
          const int64_t gap = pt.ns - c.prev_old;
          const int64_t work_new =
              c.prev_new + (c.open_waits > 0 ? 0 : static_cast<int64_t>(std::llround(gap * c.scale.back())));
          int64_t t = work_new;
          if (pt.kind == PointKind::kSliceEnd && ug.is_wait[pt.index]) {
            const Slice& w = u.slices[pt.index];
            const std::vector<Releaser>& rel = ug.releasers[pt.index];
            // Every releaser must be placed first.
            bool ready = true;
            for (const Releaser& x : rel) {
              const uint32_t q = pos_in_block.contains(x.unit) ? pos_in_block[x.unit] : UINT32_MAX;
              if (q == UINT32_MAX) continue;
              if (cur[q].next <= x.point) ready = false;
            }
            if (!ready) break;
            int64_t latest_old = INT64_MIN, latest_new = INT64_MIN;
            for (const Releaser& x : rel) {
              if (!pos_in_block.contains(x.unit)) continue;
              latest_old = std::max(latest_old, x.ns);
              latest_new = std::max(latest_new, r.point_ns[x.unit][x.point]);
            }
            if (c.comp_old[pt.index] != INT64_MIN) {
              latest_old = std::max(latest_old, c.comp_old[pt.index]);
              latest_new = std::max(latest_new, c.comp_new[pt.index]);
            }
            const int64_t d = w.end_ns - w.begin_ns;
            t = c.prev_new;
            if (latest_old == INT64_MIN) {
              ++r.unlinked_waits;
              t = std::max(t, c.begin_new[pt.index] + d);
            } else {
              // A wait that really waited ends its measured latency after its releaser;
              // one whose releaser came first cost what it cost, and bounds nothing by it
              // (its wake-up latency, were it to wait, is unknown: taken as 0).
              const bool waited = latest_old > w.begin_ns;
              const int64_t lat = waited ? std::max<int64_t>(0, w.end_ns - latest_old) : 0;
              const int64_t cost = waited ? std::min(d, lat) : d;
              t = std::max({t, c.begin_new[pt.index] + cost, latest_new + lat});
            }
          } else if (pt.kind == PointKind::kAsyncEnd) {
            const AsyncSpan& a = u.async_spans[pt.index];
            const int64_t dur = static_cast<int64_t>(
                std::llround((a.end_ns - a.begin_ns) * f.async[p][pt.index]));
            // Observed inside a wait, the thread waited for it: it ends when the copy (or
            // wgmma group) does. Observed in passing, it is a program point like any other:
            // when the copy really completed is unknown, only that it was done by then.
            t = c.open_waits > 0 ? std::max(work_new, c.async_begin_new[pt.index] + dur)
                                 : std::max(work_new, c.async_begin_new[pt.index]);
            for (uint32_t o : c.open) {
              if (ug.is_wait[o]) {
                c.comp_old[o] = std::max(c.comp_old[o], pt.ns);
                c.comp_new[o] = std::max(c.comp_new[o], t);
              }
            }
          }
          out[c.next] = t;
          switch (pt.kind) {
            case PointKind::kSliceBegin:
              c.begin_new[pt.index] = t;
              c.open.push_back(pt.index);
              c.scale.push_back(c.scale.back() * f.slice[p][pt.index]);
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
                  c.scale.push_back(c.scale.back() * f.slice[p][c.open[j]]);
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
          progress = true;
        }
        if (c.next == ug.points.size()) ++done;
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
      r.end_ns[p] = cur[k].prev_new + (u.end_ns - cur[k].prev_old);
      end_new = std::max(end_new, r.end_ns[p]);
    }
    block_end_new[bi] = end_new;
  }
  // Units without a record keep their times.
  return r;
}

// The predicted Timeline: every time replaced by its re-timed one.
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
    // Lanes again, greedily in begin order (the order is kept: times are monotone).
    std::vector<int64_t> lane_end;
    for (AsyncSpan& a : u.async_spans) {
      size_t lane = 0;
      while (lane < lane_end.size() && lane_end[lane] > a.begin_ns) ++lane;
      if (lane == lane_end.size()) lane_end.push_back(0);
      lane_end[lane] = a.end_ns;
      a.lane = static_cast<uint32_t>(lane);
    }
    u.async_lanes = static_cast<uint32_t>(lane_end.size());
    (void)delta_start;
    u.start_ns = r.start_ns[p];
    u.end_ns = std::max(r.end_ns[p], u.start_ns);
    origin = std::min(origin, u.start_ns);
    end = std::max(end, u.end_ns);
  }
  for (size_t p = 0; p < out.units.size(); ++p) {
    UnitTimeline& u = out.units[p];
    for (Flow& f : u.flows) {
      auto from = event_ns.find({f.from.record_index, f.from.event});
      if (from != event_ns.end()) f.from.ns = from->second;
      auto to_pos = position_of_record.find(f.to.record_index);
      if (f.kind == FlowKind::kArrivalToRelease && to_pos != position_of_record.end() &&
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

absl::Status CheckLinked(const Graph& g) {
  const TraceLayout& layout = g.timeline->layout;
  if (UnitsPerBlock(layout) > 1 && g.flows == 0) {
    return absl::FailedPreconditionError(
        "what-if: the trace has several units per block but no recorded hand-offs (a "
        "version-1 trace, a Mosaic GPU buffer, or a kernel without phase barriers, arrivals "
        "or async copies): the graph cannot tell which unit waited on which, so it would only "
        "guess; record a version-2 trace (warptrace's builder records them by default)");
  }
  return absl::OkStatus();
}

struct Span {
  int64_t begin = INT64_MAX, end = INT64_MIN;
};

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

absl::StatusOr<Analysis> Analyze(const Timeline& t) {
  AnalysisSink sink;
  TraceSink* sinks[] = {&sink};
  RETURN_IF_ERROR(ReplayTimeline(t, sinks));
  return sink.result();
}

std::vector<std::string> Limitations(uint64_t unlinked_waits) {
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

struct Engine {
  Graph graph;
  absl::StatusOr<Retimed> Run(absl::Span<const Speedup> speedups, uint64_t* instances) {
    ASSIGN_OR_RETURN(std::vector<Resolved> resolved, Resolve(graph, speedups));
    ASSIGN_OR_RETURN(Factors factors, ComputeFactors(graph, resolved));
    if (instances) *instances = factors.instances;
    return Retime(graph, factors);
  }
};

absl::StatusOr<Engine> MakeEngine(const Timeline& timeline) {
  Engine e;
  ASSIGN_OR_RETURN(e.graph, BuildGraph(timeline));
  RETURN_IF_ERROR(CheckLinked(e.graph));
  return e;
}

}  // namespace

absl::StatusOr<std::vector<Speedup>> ParseSpeedups(absl::Span<const std::string> specs) {
  std::vector<Speedup> out;
  for (const std::string& spec : specs) {
    for (absl::string_view part : absl::StrSplit(spec, ';')) {
      if (absl::StripAsciiWhitespace(part).empty()) {
        return absl::InvalidArgumentError(absl::StrCat("what-if '", spec, "': empty spec"));
      }
      ASSIGN_OR_RETURN(Speedup s, ParseOne(part));
      out.push_back(std::move(s));
    }
  }
  if (out.empty()) return absl::InvalidArgumentError("what-if: no speedup given");
  return out;
}

absl::StatusOr<WhatIfPrediction> PredictWhatIf(const Timeline& timeline,
                                               absl::Span<const Speedup> speedups,
                                               const WhatIfOptions& options) {
  if (speedups.empty()) return absl::InvalidArgumentError("what-if: no speedup given");
  for (const Speedup& s : speedups) {
    if (s.shorten_ns == 0 && !(s.factor > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("what-if '", s.text, "': the factor must be > 0"));
    }
    if (s.shorten_ns < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("what-if '", s.text, "': the shortening must be positive"));
    }
  }
  ASSIGN_OR_RETURN(Engine engine, MakeEngine(timeline));
  WhatIfPrediction out;
  out.speedups.assign(speedups.begin(), speedups.end());
  ASSIGN_OR_RETURN(Retimed r, engine.Run(speedups, &out.instances));
  const Graph& g = engine.graph;
  out.measured_ns = KernelNs(timeline, nullptr, nullptr);
  out.predicted_ns = KernelNs(timeline, &r.start_ns, &r.end_ns);
  out.speedup = out.predicted_ns > 0 ? static_cast<double>(out.measured_ns) / out.predicted_ns : 0;
  out.handoff_edges = g.handoff_edges;
  out.completion_edges = g.completion_edges;
  out.occupancy_edges = g.occupancy_edges;
  out.unlinked_waits = r.unlinked_waits;
  for (const BlockGraph& b : g.blocks) {
    WhatIfBlock wb;
    wb.block_linear = b.block_linear;
    wb.sm_id = b.sm_id;
    wb.measured_ns = b.end_ns - b.start_ns;
    int64_t s = INT64_MAX, e = INT64_MIN;
    for (uint32_t p : b.units) {
      s = std::min(s, r.start_ns[p]);
      e = std::max(e, r.end_ns[p]);
    }
    wb.predicted_ns = e - s;
    out.blocks.push_back(wb);
  }
  std::sort(out.blocks.begin(), out.blocks.end(),
            [](const WhatIfBlock& a, const WhatIfBlock& b) { return a.block_linear < b.block_linear; });
  Timeline predicted = BuildPredicted(g, r);
  out.roles.resize(g.roles.size());
  for (size_t i = 0; i < g.roles.size(); ++i) out.roles[i].role = g.roles[i];
  for (size_t p = 0; p < g.units.size(); ++p) {
    const UnitTimeline& before = timeline.units[p];
    if (!before.has_record) continue;
    const UnitTimeline& after = predicted.units[p];
    WhatIfRole& role = out.roles[g.units[p].role];
    ++role.units;
    role.measured_ns += before.end_ns - before.start_ns;
    role.predicted_ns += after.end_ns - after.start_ns;
    const UnitGraph& ug = g.units[p];
    std::vector<int64_t> open_end;  // outermost waits only
    for (size_t i = 0; i < before.slices.size(); ++i) {
      if (!ug.is_wait[i]) continue;
      bool nested = !open_end.empty() && before.slices[i].begin_ns < open_end.back();
      if (nested) continue;
      open_end.assign(1, before.slices[i].end_ns);
      role.measured_wait_ns += before.slices[i].end_ns - before.slices[i].begin_ns;
      role.predicted_wait_ns += after.slices[i].end_ns - after.slices[i].begin_ns;
    }
  }
  out.roles.erase(std::remove_if(out.roles.begin(), out.roles.end(),
                                 [](const WhatIfRole& r) { return r.units == 0; }),
                  out.roles.end());
  if (options.analyze) {
    ASSIGN_OR_RETURN(out.analysis, Analyze(predicted));
  }
  if (options.keep_timeline) out.timeline = std::move(predicted);
  out.limitations = Limitations(out.unlinked_waits);
  return out;
}

absl::StatusOr<CausalProfile> ComputeCausalProfile(const Timeline& timeline) {
  ASSIGN_OR_RETURN(Engine engine, MakeEngine(timeline));
  const Graph& g = engine.graph;
  const TraceLayout& layout = timeline.layout;
  CausalProfile out;
  out.measured_ns = KernelNs(timeline, nullptr, nullptr);
  // Candidates: (role, name) with instances, and (every role, name) where several roles have
  // it. Work per candidate.
  struct Cand {
    SiteKind kind;
    uint64_t instances = 0;
    int64_t work_ns = 0;
  };
  std::map<std::pair<std::string, std::string>, Cand> cands;
  std::map<std::string, std::set<uint32_t>> roles_of_name;
  auto counts = [](SiteKind k) {
    return k == SiteKind::kRegion || k == SiteKind::kLoopBody || k == SiteKind::kAsyncCopy ||
           k == SiteKind::kMmaGroup;
  };
  for (const UnitGraph& ug : g.units) {
    const UnitTimeline& u = *ug.u;
    if (!u.has_record) continue;
    auto add = [&](uint32_t site, int64_t work) {
      const SiteInfo& info = layout.sites[site];
      if (!counts(info.kind)) return;
      roles_of_name[info.name].insert(ug.role);
      for (const std::string& role : {g.roles[ug.role], std::string()}) {
        Cand& c = cands[{role, info.name}];
        c.kind = info.kind;
        ++c.instances;
        c.work_ns += work;
      }
    };
    for (size_t i = 0; i < u.slices.size(); ++i) {
      const Slice& s = u.slices[i];
      add(s.site, s.end_ns - s.begin_ns - ug.waiting_inside[i]);
    }
    for (const AsyncSpan& a : u.async_spans) {
      if (a.completed && a.site < layout.sites.size()) add(a.site, a.end_ns - a.begin_ns);
    }
  }
  const bool several_roles = g.roles.size() > 1;
  for (const auto& [key, cand] : cands) {
    const auto& [role, name] = key;
    if (role.empty() && (!several_roles || roles_of_name[name].size() < 2)) continue;
    if (!role.empty() && !several_roles) {
      // One role: the row is the every-role row; name no role.
    }
    CausalRow row;
    row.role = several_roles ? role : std::string();
    row.name = name;
    row.kind = cand.kind;
    row.instances = cand.instances;
    row.work_ns = cand.work_ns;
    bool flat = true;
    for (int k = 0; k < 4; ++k) {
      Speedup s;
      s.role = row.role;
      s.name = name;
      s.factor = 1.0 - kCausalSpeedups[k];
      s.text = absl::StrCat(role.empty() ? "" : role + ":", name, "=", s.factor);
      ASSIGN_OR_RETURN(Retimed r, engine.Run({&s, 1}, nullptr));
      row.predicted_ns[k] = KernelNs(timeline, &r.start_ns, &r.end_ns);
      row.saving[k] = out.measured_ns > 0
                          ? static_cast<double>(out.measured_ns - row.predicted_ns[k]) /
                                out.measured_ns
                          : 0;
      flat = flat && row.saving[k] < kFlatSaving;
    }
    row.flat = flat;
    out.rows.push_back(std::move(row));
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const CausalRow& a, const CausalRow& b) {
    if (a.saving[2] != b.saving[2]) return a.saving[2] > b.saving[2];
    if (a.saving[3] != b.saving[3]) return a.saving[3] > b.saving[3];
    if (a.role != b.role) return a.role < b.role;
    return a.name < b.name;
  });
  uint64_t unlinked = 0;
  {
    Speedup none;
    none.name = "";
    Factors f;
    f.slice.resize(g.units.size());
    f.async.resize(g.units.size());
    for (size_t p = 0; p < g.units.size(); ++p) {
      f.slice[p].assign(g.units[p].u->slices.size(), 1.0);
      f.async[p].assign(g.units[p].u->async_spans.size(), 1.0);
    }
    ASSIGN_OR_RETURN(Retimed r, Retime(g, f));
    unlinked = r.unlinked_waits;
  }
  out.limitations = Limitations(unlinked);
  return out;
}

}  // namespace warptrace
