// AnalysisSink's critical paths (analysis_sink.h): one per instance of the trace's link scope
// (format/links.h) — a block, or under LinkScope::kCluster a whole cluster, whose CTAs' units
// are numbered by CTA rank so that remote arrivals and multicast landings are edges of one
// path — and their aggregate over the grid.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "profiler/analysis/analysis_sink.h"
#include "profiler/analysis/stats.h"

namespace warptrace {
namespace {

double Ratio(double num, double den) { return den > 0 ? num / den : 0; }

}  // namespace

// A multicast copy's landing in this CTA (cluster scope): its issue in the peer is one more
// arrival on the phase it completed bytes for, so the cluster's path can follow it.
absl::Status AnalysisSink::CollectLandings(const UnitTimeline& t) {
  for (const Flow& f : t.flows) {
    if (f.kind != FlowKind::kMulticastLanding || f.to.record_index != t.record_index ||
        !InCluster(f.from.record_index)) {
      continue;
    }
    if (f.to.released_wait >= t.slices.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "block %d unit %d: multicast landing %d releases no wait slice of the unit (no wait "
          "ends at %d ns)",
          t.block_linear, t.unit_index, f.id, f.to.ns));
    }
    slots_[slot_].links.push_back(
        {t.block_linear,
         PathUnitOf(f.from.record_index, static_cast<uint32_t>(f.from.record_index %
                                                               units_per_block_)),
         f.from.ns, PathUnitOf(t.record_index, t.unit_index), f.to.released_wait});
    ++resolved_total_;
  }
  return absl::OkStatus();
}

// Walks the scope instance's paths: the block's (its explicit and resolved links), or each
// cluster's of the instance.
absl::Status AnalysisSink::FinishScope() {
  in_scope_ = false;
  if (cluster_scope_) {
    for (size_t s = 0; s < finders_.size(); ++s) {
      if (!slots_[s].used) continue;
      RETURN_IF_ERROR(
          WalkPath(finders_[s], slots_[s].links, slots_[s].first_block, slots_[s].first_record));
    }
    return absl::OkStatus();
  }
  absl::Span<const HandoffLink> links = block_explicit_;
  if (!resolved_links_.empty()) {
    if (links.empty()) {
      links = resolved_links_;
    } else {
      block_links_.assign(links.begin(), links.end());
      block_links_.insert(block_links_.end(), resolved_links_.begin(), resolved_links_.end());
      links = block_links_;
    }
  }
  const absl::Status walked = WalkPath(finders_[0], links, block_, scope_first_record_);
  resolved_links_.clear();
  block_explicit_ = {};
  return walked;
}

// One block's or cluster's path, added to the totals (and kept when it is the slowest).
absl::Status AnalysisSink::WalkPath(CriticalPathFinder& finder,
                                    absl::Span<const HandoffLink> links, uint32_t first_block,
                                    uint64_t first_record) {
  if (absl::Status walked = finder.Walk(links); !walked.ok()) {
    return absl::Status(walked.code(),
                        absl::StrCat(cluster_scope_ ? "cluster of block " : "block ",
                                     first_block, ": ", walked.message()));
  }
  if (!finder.has_path()) return absl::OkStatus();
  const int64_t span = finder.end_ns() - finder.begin_ns();
  ++path_blocks_;
  handoffs_ += finder.handoffs();
  if (cluster_scope_) {
    scope_spans_.push_back(span);
    finder.Handoffs(path_handoffs_);
    for (const CriticalPathFinder::PathHandoff& h : path_handoffs_) {
      if (h.from_unit / units_per_block_ != h.to_unit / units_per_block_) ++cross_cta_handoffs_;
    }
  }
  AccumulatePath(finder, span);
  if (span > slowest_path_span_) {
    slowest_path_span_ = span;
    slowest_path_block_ = first_block;
    slowest_path_record_ = first_record;
    finder.Steps(slowest_path_);
    if (cluster_scope_) slowest_handoffs_ = path_handoffs_;
  }
  return absl::OkStatus();
}

size_t AnalysisSink::PathIndex(uint32_t rank, uint32_t role, uint32_t site) const {
  const size_t sites = layout_->sites.size();
  const size_t column = site < sites ? site : site == kPathUntracked ? sites : sites + 1;
  return (size_t{rank} * roles_.size() + role) * (sites + 2) + column;
}

// This scope's path time per (rank, role, site), added to the totals over scopes.
void AnalysisSink::AccumulatePath(CriticalPathFinder& finder, int64_t span) {
  if (block_path_ns_.empty()) {
    block_path_ns_.assign(scope_ranks_ * roles_.size() * (layout_->sites.size() + 2), 0);
    path_.resize(block_path_ns_.size());
  }
  touched_.clear();
  finder.PathTimes(path_times_);
  for (const CriticalPathFinder::PathTime& time : path_times_) {
    const uint32_t rank =
        cluster_scope_ ? time.unit_index / static_cast<uint32_t>(units_per_block_) : 0;
    const uint32_t unit =
        cluster_scope_ ? time.unit_index % static_cast<uint32_t>(units_per_block_)
                       : time.unit_index;
    const size_t index = PathIndex(rank, RoleOf(unit), time.site);
    if (block_path_ns_[index] == 0) touched_.push_back(static_cast<uint32_t>(index));
    block_path_ns_[index] += time.ns;
  }
  for (uint32_t index : touched_) {
    PathAcc& acc = path_[index];
    ++acc.blocks;
    acc.path_ns += block_path_ns_[index];
    const double share =
        Ratio(static_cast<double>(block_path_ns_[index]), static_cast<double>(span));
    acc.share_sum += std::llround(std::min(share, 4.0) * static_cast<double>(kShareOne));
    block_path_ns_[index] = 0;
  }
}

void AnalysisSink::FillCriticalPath() {
  CriticalPathAnalysis& out = result_.critical_path;
  out = CriticalPathAnalysis();
  out.per_unit_only = handoffs_ == 0;
  out.cluster_scope = cluster_scope_;
  out.blocks = path_blocks_;
  out.handoffs = handoffs_;
  out.cross_cta_handoffs = cross_cta_handoffs_;
  out.trace_links = resolved_total_;
  const size_t columns = layout_->sites.size() + 2;
  for (size_t index = 0; index < path_.size(); ++index) {
    const PathAcc& acc = path_[index];
    if (acc.blocks == 0) continue;
    const size_t column = index % columns;
    PathRegion region;
    region.role = roles_[index / columns % roles_.size()].name;
    region.cta_rank = static_cast<uint32_t>(index / columns / roles_.size());
    region.site = column < layout_->sites.size()
                      ? static_cast<uint32_t>(column)
                      : column == layout_->sites.size() ? kPathUntracked : kPathHandoff;
    region.name = PathSiteName(region.site, layout_->sites);
    region.blocks = acc.blocks;
    region.block_fraction = Ratio(static_cast<double>(acc.blocks), static_cast<double>(path_blocks_));
    region.path_ns = acc.path_ns;
    region.mean_share = Ratio(static_cast<double>(acc.share_sum) / static_cast<double>(kShareOne),
                              static_cast<double>(path_blocks_));
    out.regions.push_back(std::move(region));
  }
  std::sort(out.regions.begin(), out.regions.end(), [](const PathRegion& a, const PathRegion& b) {
    if (a.path_ns != b.path_ns) return a.path_ns > b.path_ns;
    if (a.role != b.role) return a.role < b.role;
    if (a.cta_rank != b.cta_rank) return a.cta_rank < b.cta_rank;
    return a.site < b.site;
  });
  if (slowest_path_span_ < 0) return;
  std::vector<int64_t> spans;
  if (cluster_scope_) {
    spans = scope_spans_;
  } else {
    for (const BlockRec& b : blocks_) {
      if (b.path_ns > 0) spans.push_back(b.path_ns);
    }
  }
  std::sort(spans.begin(), spans.end());
  const int64_t median = PercentileSorted(absl::MakeConstSpan(spans), 50);
  auto block = std::find_if(blocks_.begin(), blocks_.end(), [&](const BlockRec& b) {
    return b.block_linear == slowest_path_block_;
  });
  out.slowest_block = UnitRef{slowest_path_block_, BlockIndex(layout_->grid, slowest_path_block_),
                              0, block->sm_id, "", slowest_path_span_,
                              Ratio(static_cast<double>(slowest_path_span_),
                                    static_cast<double>(median)),
                              BlockLabelOf(*layout_, slowest_path_block_)};
  FillPathSteps(out);
}

// The slowest path's steps, each named by its unit's role (and CTA rank), and its edges
// from CTA to CTA.
void AnalysisSink::FillPathSteps(CriticalPathAnalysis& out) const {
  const uint32_t per_block = std::max<uint32_t>(1, static_cast<uint32_t>(units_per_block_));
  auto rank_of = [&](uint32_t unit) { return cluster_scope_ ? unit / per_block : 0; };
  auto unit_of = [&](uint32_t unit) { return cluster_scope_ ? unit % per_block : unit; };
  for (const PathStep& step : slowest_path_.steps) {
    if (out.slowest_block_path.size() >= CriticalPathAnalysis::kMaxPathSteps) {
      out.slowest_block_path_truncated = true;
      break;
    }
    const uint32_t unit = unit_of(step.unit_index);
    out.slowest_block_path.push_back(
        {roles_[RoleOf(unit)].name, unit, PathSiteName(step.site, layout_->sites), step.ns(),
         Ratio(static_cast<double>(step.ns()), static_cast<double>(slowest_path_span_)),
         rank_of(step.unit_index)});
  }
  for (const CriticalPathFinder::PathHandoff& h : slowest_handoffs_) {
    if (rank_of(h.from_unit) == rank_of(h.to_unit)) continue;
    PathCrossing c;
    c.from_rank = rank_of(h.from_unit);
    c.from_unit = unit_of(h.from_unit);
    c.from_role = roles_[RoleOf(c.from_unit)].name;
    c.to_rank = rank_of(h.to_unit);
    c.to_unit = unit_of(h.to_unit);
    c.to_role = roles_[RoleOf(c.to_unit)].name;
    c.wait = PathSiteName(h.wait_site, layout_->sites);
    c.at_ns = h.to_ns - slowest_path_.begin_ns;
    out.slowest_block_crossings.push_back(std::move(c));
  }
}

}  // namespace warptrace
