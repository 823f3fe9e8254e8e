#include "profiler/analysis/diagnosis.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/analysis/critical_path.h"
#include "profiler/analysis/handoff.h"

namespace warptrace {
namespace {

std::string Pct(double fraction) {
  const double p = fraction * 100;
  return p >= 10 || p == 0 ? absl::StrFormat("%.0f%%", p) : absl::StrFormat("%.1f%%", p);
}

std::string Block(const UnitRef& b) {
  return absl::StrFormat("block (%d,%d,%d) #%d%s on SM %d", b.block_index.x, b.block_index.y,
                         b.block_index.z, b.block_linear,
                         b.label.empty() ? "" : absl::StrCat(" [", b.label, "]"), b.sm_id);
}

double Frac(double num, double den) { return den > 0 ? num / den : 0; }

// The role's busiest region by self time (not a wait, not the whole kernel).
const SiteTime* BusiestRegion(const RoleAnalysis& role) {
  const SiteTime* best = nullptr;
  for (const SiteTime& site : role.sites) {
    if (IsWaitSite(site.kind) || site.kind == SiteKind::kKernel) continue;
    if (best == nullptr || site.self_ns > best->self_ns) best = &site;
  }
  return best;
}

// The top critical-path region that is real work (not a wait or a pseudo site).
const PathRegion* TopPathRegion(const Analysis& a) {
  for (const PathRegion& region : a.critical_path.regions) {
    if (region.site == kPathUntracked || region.site == kPathHandoff) continue;
    auto role = std::find_if(a.roles.begin(), a.roles.end(),
                             [&](const RoleAnalysis& r) { return r.role == region.role; });
    bool wait = false, kernel = false;
    if (role != a.roles.end()) {
      for (const SiteTime& s : role->sites) {
        if (s.site != region.site) continue;
        wait = IsWaitSite(s.kind);
        kernel = s.kind == SiteKind::kKernel;
      }
    }
    if (!wait && !kernel) return &region;
  }
  return nullptr;
}

// "the consumer's `mma` is on the critical path in 50% of blocks (25% of block time)"; with
// one path per cluster, the region's CTA rank, clusters, and the slowest path's CTA crossings.
std::string PathRegionText(const CriticalPathAnalysis& c, const PathRegion& top) {
  if (!c.cluster_scope) {
    return absl::StrCat("the ", top.role, "'s `", top.name, "` is on the critical path in ",
                        Pct(top.block_fraction), " of blocks (", Pct(top.mean_share),
                        " of block time)");
  }
  std::string text = absl::StrCat("CTA rank ", top.cta_rank, "'s ", top.role, " `", top.name,
                                  "` is on the cluster's critical path in ",
                                  Pct(top.block_fraction), " of clusters (",
                                  Pct(top.mean_share), " of cluster time)");
  const std::vector<PathCrossing>& x = c.slowest_block_crossings;
  if (x.empty()) return text;
  absl::StrAppend(&text, "; the slowest cluster's path crosses CTAs ", x.size(),
                  x.size() == 1 ? " time" : " times", ", from CTA rank ", x.front().from_rank,
                  "'s ", x.front().from_role, " into CTA rank ", x.front().to_rank, "'s ",
                  x.front().to_role, " (`", x.front().wait, "`)");
  for (size_t i = 1; i < x.size(); ++i) {
    if (x[i].from_rank == x.front().from_rank && x[i].to_rank == x.front().to_rank &&
        x[i].from_role == x.front().from_role && x[i].to_role == x.front().to_role) {
      continue;
    }
    absl::StrAppend(&text, " and from CTA rank ", x[i].from_rank, "'s ", x[i].from_role,
                    " into CTA rank ", x[i].to_rank, "'s ", x[i].to_role, " (`", x[i].wait,
                    "`)");
    break;
  }
  return text;
}

void AddBound(const Analysis& a, std::vector<Diagnosis>& out) {
  const RoleAnalysis* waiter = nullptr;
  for (const RoleAnalysis& role : a.roles) {
    if (role.waits.empty()) continue;
    if (waiter == nullptr || role.waiting_share > waiter->waiting_share) waiter = &role;
  }
  if (waiter == nullptr || waiter->waiting_share < kMinWaitShare) return;
  std::string text = absl::StrCat(waiter->role, " units idle ", Pct(waiter->waiting_share),
                                  " waiting on ", waiter->waits.front().family);
  if (!waiter->barriers.empty()) {  // recorded hand-offs name the barrier of each wait
    absl::StrAppend(&text, ", most on ", waiter->barriers.front().family, " (",
                    Pct(waiter->barriers.front().share), " of their time)");
  }
  const RoleAnalysis* bound = nullptr;
  std::string region_text;
  if (!a.critical_path.per_unit_only) {
    if (const PathRegion* top = TopPathRegion(a); top != nullptr) {
      for (const RoleAnalysis& role : a.roles) {
        if (role.role == top->role) bound = &role;
      }
      region_text = PathRegionText(a.critical_path, *top);
    }
  } else if (a.roles.size() == 2) {
    bound = &a.roles[&a.roles[0] == waiter ? 1 : 0];
    if (const SiteTime* busiest = BusiestRegion(*bound); busiest != nullptr) {
      region_text = absl::StrCat(
          "the ", bound->role, "'s busiest region is `", busiest->name, "` (",
          Pct(Frac(static_cast<double>(busiest->self_ns),
                   static_cast<double>(bound->unit_time_ns))),
          " of its time); critical path is per unit only (no hand-off links)");
    }
  } else {
    region_text = "critical path is per unit only (no hand-off links)";
  }
  Diagnosis d;
  d.score = waiter->waiting_share;
  if (bound != nullptr && bound != waiter) {
    d.kind = "bound";
    d.text = absl::StrCat(bound->role, "-bound: ", text);
    if (!region_text.empty()) absl::StrAppend(&d.text, "; ", region_text);
    if (!bound->waits.empty()) {
      absl::StrAppend(&d.text, "; the ", bound->role, " waited ", Pct(bound->waiting_share),
                      " of its time (on ", bound->waits.front().family, ")");
    }
  } else {
    d.kind = "waiting";
    d.text = absl::StrCat("waiting: ", text);
    if (!region_text.empty()) absl::StrAppend(&d.text, "; ", region_text);
  }
  out.push_back(std::move(d));
}

// The largest share of a role's time spent waiting for another CTA of its cluster: e.g. a
// producer whose multicast stage (empty[s]) was last released by the peer's consumer.
void AddCrossCta(const Analysis& a, std::vector<Diagnosis>& out) {
  const CrossCtaWait* top = nullptr;
  for (const CrossCtaWait& w : a.cross_cta_waits) {
    if (top == nullptr || w.share > top->share) top = &w;
  }
  if (top == nullptr || top->share < kMinWaitShare) return;
  Diagnosis d;
  d.kind = "cross_cta";
  d.score = top->share;
  const std::string all =
      a.cluster_size == 2 ? "both CTAs" : absl::StrCat("the ", a.cluster_size, " CTAs");
  d.text = absl::StrCat(
      "cross-CTA stall: CTA ", top->releaser_rank, "'s ", top->releaser_role, " held CTA ",
      top->waiter_rank, "'s ", top->waiter_role, ": the shared stage (", top->family,
      ") waited for ", all, " to release it; CTA rank ", top->waiter_rank, "'s ",
      top->waiter_role, " units spent ", Pct(top->share), " of their time waiting for CTA rank ",
      top->releaser_rank, "'s ", top->releaser_role, " after their own CTA's release (",
      top->waits, " ", top->family, " phases completed by its remote arrivals)");
  out.push_back(std::move(d));
}

// "working block" where early-return blocks were set apart, else "block".
const char* BlockWord(const GridAnalysis& g) {
  return g.early_return_blocks > 0 && g.working_blocks > 0 ? "working block" : "block";
}

const char* DimName(char dim) {
  return dim == 'x' ? "blockIdx.x" : dim == 'y' ? "blockIdx.y" : "blockIdx.z";
}

// "blockIdx.y (seq)" where the block label names the dimension.
std::string DimTitle(const DimImbalance& d) {
  return d.name.empty() ? DimName(d.dim) : absl::StrCat(DimName(d.dim), " (", d.name, ")");
}

// Not ranked: listed first, since it says what the block statistics are over.
void AddEarlyReturn(const GridAnalysis& g, std::vector<Diagnosis>& out) {
  if (g.early_return_blocks == 0) return;
  std::string text;
  if (g.working_blocks == 0) {
    text = absl::StrFormat("early return: all %d blocks returned early (median %s); the block "
                           "statistics below are over all of them",
                           g.blocks, FormatNs(g.median_early_return_ns));
  } else {
    text = absl::StrFormat(
        "early return: %d of %d blocks returned early (median %s, against %s for a working "
        "block); the tail, outliers and imbalance below are over the %d working blocks",
        g.early_return_blocks, g.blocks, FormatNs(g.median_early_return_ns),
        FormatNs(g.median_block_ns), g.working_blocks);
  }
  out.push_back({"early_return", 0, std::move(text), HostClockSupport::kUntimed});
}

// The grid dimension that carries the working blocks' imbalance, when one does.
void AddDimImbalance(const GridAnalysis& g, std::vector<Diagnosis>& out) {
  if (g.dims.empty()) return;
  const DimImbalance& d = g.dims.front();
  if (d.explained < kMinExplained || d.ratio < kMinImbalance) return;
  const std::string name = d.name.empty() ? DimName(d.dim) : d.name;
  std::string text = absl::StrFormat(
      "imbalance by %s: its %d values explain %s of the variance of %s time; the %d %ss "
      "with %s = %d took %s on average, %.2fx the median over %s (%s); %s = %d the least (%s)",
      DimTitle(d), d.values, Pct(d.explained), BlockWord(g), d.slowest_blocks, BlockWord(g),
      name, d.slowest, FormatNs(d.slowest_mean_ns), d.ratio, name, FormatNs(d.median_mean_ns),
      name, d.fastest, FormatNs(d.fastest_mean_ns));
  for (size_t i = 1; i < g.dims.size(); ++i) {
    absl::StrAppend(&text, i == 1 ? " (" : ", ", DimTitle(g.dims[i]), " explains ",
                    Pct(g.dims[i].explained));
  }
  if (g.dims.size() > 1) absl::StrAppend(&text, ")");
  out.push_back({"dim_imbalance",
                 Frac(static_cast<double>(d.slowest_mean_ns - d.median_mean_ns),
                      static_cast<double>(g.span_ns)),
                 std::move(text), HostClockSupport::kRelative});
}

void AddGrid(const Analysis& a, std::vector<Diagnosis>& out) {
  const GridAnalysis& g = a.grid;
  const double span = static_cast<double>(g.span_ns);
  const char* block = BlockWord(g);
  const uint64_t peers = g.working_blocks > 0 ? g.working_blocks : g.blocks;
  if (peers >= 2 && g.tail_share >= kMinTailShare) {
    out.push_back({"tail", g.tail_share,
                   absl::StrCat("tail: the last ", block, " ends ", FormatNs(g.tail_ns),
                                " after the median ", block, " end (", Pct(g.tail_share),
                                " of the kernel's ", FormatNs(g.span_ns), "); it is ",
                                Block(g.last_block), ", ",
                                absl::StrFormat("%.2f", g.last_block.ratio), "x the median ",
                                block, " (", FormatNs(g.median_block_ns), ")"),
                   HostClockSupport::kHostOnly});
  }
  if (g.sms.size() >= 2 && g.sm_imbalance >= kMinImbalance) {
    out.push_back(
        {"sm_imbalance",
         Frac(static_cast<double>(g.busiest_sm.busy_ns - g.mean_sm_busy_ns), span),
         absl::StrFormat("SM imbalance: SM %d was busy %s, %.2fx the mean of %d SMs (%s); it "
                         "ran %d blocks",
                         g.busiest_sm.sm_id, FormatNs(g.busiest_sm.busy_ns), g.sm_imbalance,
                         g.sms.size(), FormatNs(g.mean_sm_busy_ns), g.busiest_sm.blocks),
         HostClockSupport::kHostOnly});
  }
  if (!g.outlier_blocks.empty()) {
    const UnitRef& b = g.outlier_blocks.front();
    std::string text = absl::StrFormat("outlier blocks: %s took %s, %.2fx the median %s (%s)",
                                       Block(b), FormatNs(b.ns), b.ratio, block,
                                       FormatNs(g.median_block_ns));
    for (size_t i = 1; i < g.outlier_blocks.size(); ++i) {
      const UnitRef& o = g.outlier_blocks[i];
      absl::StrAppend(&text, i == 1 ? "; also " : ", ",
                      absl::StrFormat("(%d,%d,%d) %.2fx", o.block_index.x, o.block_index.y,
                                      o.block_index.z, o.ratio));
    }
    out.push_back({"outlier_blocks", Frac(static_cast<double>(b.ns - g.median_block_ns), span),
                   std::move(text), HostClockSupport::kRelative});
  }
  AddDimImbalance(g, out);
  for (const RoleAnalysis& role : a.roles) {
    if (role.units < 2 || role.outlier_units.empty()) continue;
    const UnitRef& u = role.outlier_units.front();
    // A unit that is only slow because its whole block is slow is the block's finding.
    bool block_outlier = false;
    for (const UnitRef& b : g.outlier_blocks) block_outlier |= b.block_linear == u.block_linear;
    if (block_outlier) continue;
    out.push_back({"unit_imbalance", Frac(static_cast<double>(u.ns - role.median_unit_ns), span),
                   absl::StrFormat("unit imbalance in %s: unit %d of %s ran %s, %.2fx the "
                                   "median %s unit (%s)",
                                   role.role, u.unit_index, Block(u), FormatNs(u.ns), u.ratio,
                                   role.role, FormatNs(role.median_unit_ns)),
                   HostClockSupport::kRelative});
  }
}

void AddOverhead(const Analysis& a, std::vector<Diagnosis>& out) {
  const OverheadAnalysis& o = a.overhead;
  if (o.events == 0) return;
  std::string text = absl::StrFormat(
      "overhead: %s (%.0f cycles) per event measured (the smallest gap between two events), "
      "%s of unit time",
      FormatNs(o.ns_per_event), o.cycles_per_event, Pct(o.share));
  if (o.wait_overhead_ns > 0) {
    absl::StrAppend(&text, "; it could account for at most ", Pct(o.wait_overhead_fraction),
                    " of the reported waits");
    const WaitStats* biggest = nullptr;
    for (const RoleAnalysis& role : a.roles) {
      for (const WaitStats& w : role.waits) {
        if (biggest == nullptr || w.wait_ns > biggest->wait_ns) biggest = &w;
      }
    }
    if (biggest != nullptr) {
      absl::StrAppend(&text, " (", Pct(biggest->overhead_fraction), " of the waits on ",
                      biggest->family, ")");
    }
  }
  if (o.compensated) absl::StrAppend(&text, "; already subtracted from the timeline");
  out.push_back({"overhead", 0, std::move(text), HostClockSupport::kHostOnly});
}

}  // namespace

std::string FormatNs(double ns) {
  const double abs = std::abs(ns);
  if (abs < 1e3) return absl::StrFormat("%.0f ns", ns);
  if (abs < 1e6) return absl::StrFormat("%.2f us", ns / 1e3);
  if (abs < 1e9) return absl::StrFormat("%.3f ms", ns / 1e6);
  return absl::StrFormat("%.3f s", ns / 1e9);
}

namespace {

// Not a finding either: what each role's copies moved and how fast (analysis.h, "copy
// bandwidth"). On the host backend the times are host time, and the line says so.
void PrintCopyBandwidth(const Analysis& analysis, llvm::raw_ostream& os) {
  for (const RoleAnalysis& role : analysis.roles) {
    if (role.copies == 0) continue;
    std::vector<std::string> engines;
    for (CopyEngine e : role.copy_engines) engines.push_back(CopyEngineName(e));
    os << "  copy bandwidth: " << role.role << " units moved " << role.copy_bytes
       << " bytes in " << role.copies << " copies (" << absl::StrJoin(engines, ", ")
       << "): "
       << absl::StrFormat("%.2f GB/s per unit while a copy was in flight (%s of their time), "
                          "%.2f GB/s over the kernel's span",
                          role.copy_gb_per_s_in_flight, Pct(role.copy_in_flight_share),
                          role.copy_gb_per_s_over_span)
       << (analysis.host_backend ? " (host time on the host backend, not a GPU's bandwidth)"
                                 : "")
       << "\n";
  }
}

// Not a finding: the slowest cluster's critical path CTA by CTA (a cluster link scope only):
// each stretch on one unit, "CTA 1 consumer 26.70 us", joined at the hand-offs.
void PrintClusterPath(const Analysis& analysis, llvm::raw_ostream& os) {
  const CriticalPathAnalysis& c = analysis.critical_path;
  if (!c.cluster_scope || c.slowest_block_path.empty()) return;
  struct Stretch {
    uint32_t rank;
    const std::string* role;
    uint32_t unit;
    int64_t ns;
  };
  std::vector<Stretch> stretches;
  for (const PathStepRef& s : c.slowest_block_path) {
    if (stretches.empty() || stretches.back().rank != s.cta_rank ||
        stretches.back().unit != s.unit_index) {
      stretches.push_back({s.cta_rank, &s.role, s.unit_index, 0});
    }
    stretches.back().ns += s.ns;
  }
  std::vector<std::string> parts;
  for (const Stretch& s : stretches) {
    parts.push_back(absl::StrCat("CTA ", s.rank, " ", *s.role, " (unit ", s.unit, ") ",
                                 FormatNs(static_cast<double>(s.ns))));
  }
  os << "  critical path of the slowest cluster (block " << c.slowest_block.block_linear
     << ", " << FormatNs(static_cast<double>(c.slowest_block.ns)) << "; "
     << c.slowest_block_crossings.size() << " of its hand-offs cross CTAs, "
     << c.cross_cta_handoffs << " over all " << c.blocks << " clusters): "
     << absl::StrJoin(parts, " -> ")
     << (c.slowest_block_path_truncated ? " (truncated)" : "") << "\n";
}

// On the host backend: which findings a host clock supports, by number.
void PrintHostClockSupport(const std::vector<Diagnosis>& findings, llvm::raw_ostream& os) {
  std::vector<std::string> numbers[3];
  for (size_t i = 0; i < findings.size(); ++i) {
    numbers[static_cast<int>(findings[i].host_clock)].push_back(absl::StrCat(i + 1));
  }
  static constexpr const char* kMeaning[3] = {
      "counted from the records, not timed: holds on a GPU as it is",
      "ratios of host time between blocks or units running the same code: how the work is "
      "spread, not how long a GPU takes",
      "the host's scheduling and clock reads (waits, tail, SM balance, overhead): nothing a "
      "GPU would show"};
  for (int k = 0; k < 3; ++k) {
    if (numbers[k].empty()) continue;
    os << "  host clock, " << (numbers[k].size() == 1 ? "finding " : "findings ")
       << absl::StrJoin(numbers[k], ", ") << ": " << kMeaning[k] << "\n";
  }
}

}  // namespace

std::vector<Diagnosis> Diagnose(const Analysis& analysis) {
  std::vector<Diagnosis> ranked;
  AddBound(analysis, ranked);
  AddCrossCta(analysis, ranked);
  AddGrid(analysis, ranked);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Diagnosis& a, const Diagnosis& b) { return a.score > b.score; });
  // A cross-CTA stall that accounts for at least half of the waiting role's waits is why
  // that role waits: it goes right before the bound (or waiting) finding.
  auto cross = std::find_if(ranked.begin(), ranked.end(),
                            [](const Diagnosis& d) { return d.kind == "cross_cta"; });
  auto bound = std::find_if(ranked.begin(), ranked.end(), [](const Diagnosis& d) {
    return d.kind == "bound" || d.kind == "waiting";
  });
  if (cross != ranked.end() && bound != ranked.end() && bound < cross &&
      cross->score >= 0.5 * bound->score) {
    std::rotate(bound, cross, cross + 1);
  }
  std::vector<Diagnosis> out;
  AddEarlyReturn(analysis.grid, out);
  for (Diagnosis& d : ranked) out.push_back(std::move(d));
  AddOverhead(analysis, out);
  return out;
}

void PrintDiagnosis(const Analysis& analysis, llvm::raw_ostream& os) {
  os << "diagnosis:\n";
  if (analysis.diagnosis.empty()) os << "  (no finding)\n";
  for (size_t i = 0; i < analysis.diagnosis.size(); ++i) {
    os << "  " << (i + 1) << ". " << analysis.diagnosis[i].text << "\n";
  }
  if (analysis.host_backend) PrintHostClockSupport(analysis.diagnosis, os);
  PrintClusterPath(analysis, os);
  // Not a finding: how busy each role kept the tensor cores. On the host backend the wgmma
  // groups are emulated on the CPU, and the share is of host time: it says nothing of a GPU.
  for (const RoleAnalysis& role : analysis.roles) {
    if (role.mma_groups == 0) continue;
    os << "  tensor cores: " << role.role << " units had a wgmma group in flight "
       << Pct(role.mma_in_flight_share)
       << (analysis.host_backend ? " of their host time (" : " of their time (")
       << role.mma_groups << " groups"
       << (analysis.host_backend ? "; host backend: emulated wgmma, not a GPU's tensor cores"
                                 : "")
       << ")\n";
  }
  PrintCopyBandwidth(analysis, os);
}

}  // namespace warptrace
