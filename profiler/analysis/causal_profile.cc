// ComputeCausalProfile (whatif.h): every region's what-if at kCausalSpeedups, ranked.
#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "format/layout.h"
#include "profiler/analysis/whatif.h"
#include "profiler/analysis/whatif_graph.h"
#include "profiler/analysis/whatif_retime.h"

namespace warptrace {

using whatif_internal::Graph;
using whatif_internal::GraphLimitations;
using whatif_internal::KernelNs;
using whatif_internal::MakeRetimeEngine;
using whatif_internal::Retime;
using whatif_internal::RetimeEngine;
using whatif_internal::Retimed;
using whatif_internal::UnitGraph;

namespace {

// A causal profile candidate: (role, name), or (every role: "", name).
struct Cand {
  SiteKind kind;
  uint64_t instances = 0;
  int64_t work_ns = 0;
};
using Candidates = std::map<std::pair<std::string, std::string>, Cand>;

bool Counts(SiteKind k) {
  return k == SiteKind::kRegion || k == SiteKind::kLoopBody || k == SiteKind::kAsyncCopy ||
         k == SiteKind::kMmaGroup;
}

// Candidates: (role, name) with instances, and (every role, name) where several roles have
// it (the others are dropped here). Work per candidate.
Candidates CollectCandidates(const Graph& g) {
  const TraceLayout& layout = g.timeline->layout;
  Candidates cands;
  std::map<std::string, std::set<uint32_t>> roles_of_name;
  for (const UnitGraph& ug : g.units) {
    const UnitTimeline& u = *ug.u;
    if (!u.has_record) continue;
    auto add = [&](uint32_t site, int64_t work) {
      const SiteInfo& info = layout.sites[site];
      if (!Counts(info.kind)) return;
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
  for (auto it = cands.begin(); it != cands.end();) {
    const auto& [role, name] = it->first;
    const bool drop = role.empty() && (!several_roles || roles_of_name[name].size() < 2);
    it = drop ? cands.erase(it) : std::next(it);
  }
  return cands;
}

// One row: the candidate re-timed at each of kCausalSpeedups. With one role, the row names
// no role.
absl::StatusOr<CausalRow> ProfileRow(const RetimeEngine& engine, const std::string& role,
                                     const std::string& name, const Cand& cand,
                                     int64_t measured_ns) {
  const Timeline& timeline = *engine.graph.timeline;
  CausalRow row;
  row.role = engine.graph.roles.size() > 1 ? role : std::string();
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
    row.saving[k] = measured_ns > 0
                        ? static_cast<double>(measured_ns - row.predicted_ns[k]) / measured_ns
                        : 0;
    flat = flat && row.saving[k] < kFlatSaving;
  }
  row.flat = flat;
  return row;
}

}  // namespace

absl::StatusOr<CausalProfile> ComputeCausalProfile(const Timeline& timeline) {
  ASSIGN_OR_RETURN(RetimeEngine engine, MakeRetimeEngine(timeline));
  const Graph& g = engine.graph;
  CausalProfile out;
  out.measured_ns = KernelNs(timeline, nullptr, nullptr);
  for (const auto& [key, cand] : CollectCandidates(g)) {
    ASSIGN_OR_RETURN(CausalRow row,
                     ProfileRow(engine, key.first, key.second, cand, out.measured_ns));
    out.rows.push_back(std::move(row));
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const CausalRow& a, const CausalRow& b) {
    if (a.saving[2] != b.saving[2]) return a.saving[2] > b.saving[2];
    if (a.saving[3] != b.saving[3]) return a.saving[3] > b.saving[3];
    if (a.role != b.role) return a.role < b.role;
    return a.name < b.name;
  });
  // The neutral re-timing counts the waits without a releaser.
  ASSIGN_OR_RETURN(const Retimed neutral, Retime(g, whatif_internal::NeutralFactors(g)));
  out.limitations = GraphLimitations(neutral.unlinked_waits);
  return out;
}

}  // namespace warptrace
