#include "profiler/analysis/analysis_sink.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "format/links.h"
#include "profiler/analysis/diagnosis.h"
#include "profiler/analysis/stats.h"
#include "profiler/timeline/timeline.h"

namespace warptrace {
namespace {

double Ratio(double num, double den) { return den > 0 ? num / den : 0; }

uint64_t Key(uint32_t hi, uint32_t lo) { return (uint64_t{hi} << 32) | lo; }

}  // namespace

std::string WaitFamily(absl::string_view name) {
  // A cluster-wide barrier id names the CTA rank ("full[0] of CTA rank 1"): every CTA's
  // element is one family.
  if (const size_t rank = name.rfind(" of CTA rank "); rank != absl::string_view::npos &&
      rank + 13 < name.size() &&
      name.find_first_not_of("0123456789", rank + 13) == absl::string_view::npos) {
    name = name.substr(0, rank);
  }
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    out.push_back(name[i]);
    if (name[i] != '[') continue;
    size_t j = i + 1;
    while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
    if (j > i + 1 && j < name.size() && name[j] == ']') {
      out.push_back('*');
      i = j - 1;
    }
  }
  return out;
}

AnalysisSink::AnalysisSink(AnalysisOptions options) : options_(options) {}

int64_t AnalysisSink::FixedNs(double ns) {
  return std::llround(std::ldexp(std::clamp(ns, 0.0, 0x1p30), kFixedShift));
}

int64_t AnalysisSink::RoundFixed(__int128 fixed) {
  return static_cast<int64_t>((fixed + (__int128{1} << (kFixedShift - 1))) >> kFixedShift);
}

absl::Status AnalysisSink::Begin(const TraceBegin& begin) {
  begin_ = begin;
  parts_made_.clear();
  layout_ = begin.layout;
  overhead_compensated_ = begin.overhead_compensated;
  const uint32_t units_per_block = UnitsPerBlock(*layout_);
  if (!layout_->unit_roles.empty() && layout_->unit_roles.size() != units_per_block) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the layout's role table names %d units but a block has %d",
        layout_->unit_roles.size(), units_per_block));
  }
  family_of_site_.assign(layout_->sites.size(), -1);
  for (size_t s = 0; s < layout_->sites.size(); ++s) {
    if (!IsWaitSite(layout_->sites[s].kind)) continue;
    family_of_site_[s] = static_cast<int32_t>(FamilyIndex(WaitFamily(layout_->sites[s].name)));
  }
  role_of_unit_.assign(units_per_block, 0);
  for (uint32_t u = 0; u < units_per_block; ++u) {
    std::string name = "all";
    if (!layout_->unit_roles.empty()) {
      name = layout_->unit_roles[u].empty() ? "(none)" : layout_->unit_roles[u];
    }
    auto it = std::find_if(roles_.begin(), roles_.end(),
                           [&](const RoleAcc& r) { return r.name == name; });
    if (it == roles_.end()) {
      RoleAcc role;
      role.name = name;
      role.sites.resize(layout_->sites.size());
      role.families.resize(families_.size());
      roles_.push_back(std::move(role));
      it = roles_.end() - 1;
    }
    role_of_unit_[u] = static_cast<uint32_t>(it - roles_.begin());
  }
  units_per_block_ = units_per_block;
  cluster_scope_ = LinkScopeOf(*layout_) == LinkScope::kCluster && units_per_block > 0;
  records_per_scope_ = RecordsPerLinkScope(*layout_);
  scope_ranks_ = cluster_scope_ ? static_cast<uint32_t>(layout_->cluster.Count()) : 1;
  const size_t clusters = cluster_scope_ ? BlocksPerLinkScope(*layout_) / scope_ranks_ : 1;
  finders_.resize(std::max<size_t>(1, clusters));
  slots_.resize(finders_.size());
  units_.reserve(begin.units);
  result_.kernel_name = layout_->kernel_name;
  result_.device_name = layout_->device_name;
  result_.host_backend = layout_->clock.host_backend;
  return absl::OkStatus();
}

uint32_t AnalysisSink::RoleOf(uint32_t unit_index) const {
  return unit_index < role_of_unit_.size() ? role_of_unit_[unit_index] : 0;
}

namespace {
// Region x family wait totals kept in a dense array (8 bytes each) per role; beyond, a map.
constexpr size_t kDenseRegionWaits = size_t{1} << 16;
}  // namespace

void AnalysisSink::RoleAcc::AddRegionWait(uint32_t site, uint32_t family, size_t sites,
                                          int64_t ns) {
  const size_t index = size_t{family} * sites + site;
  if (index >= kDenseRegionWaits) {
    region_family_ns[Key(site, family)] += ns;
    return;
  }
  if (index >= region_family_dense.size()) {
    region_family_dense.resize(std::min(kDenseRegionWaits, (size_t{family} + 1) * sites), 0);
  }
  region_family_dense[index] += ns;
}

int64_t AnalysisSink::RoleAcc::RegionWait(uint32_t site, uint32_t family, size_t sites) const {
  const size_t index = size_t{family} * sites + site;
  if (index < region_family_dense.size()) return region_family_dense[index];
  auto it = region_family_ns.find(Key(site, family));
  return it == region_family_ns.end() ? 0 : it->second;
}

uint32_t AnalysisSink::FamilyIndex(const std::string& family) {
  auto it = std::find(families_.begin(), families_.end(), family);
  if (it != families_.end()) return static_cast<uint32_t>(it - families_.begin());
  families_.push_back(family);
  for (RoleAcc& role : roles_) role.families.resize(families_.size());
  return static_cast<uint32_t>(families_.size() - 1);
}

uint32_t AnalysisSink::BarrierSlotOf(uint32_t barrier) {
  auto [it, inserted] =
      slot_of_barrier_.try_emplace(barrier, static_cast<uint32_t>(barrier_slots_.size()));
  if (inserted) {
    std::string name = BarrierName(*layout_, barrier);
    const uint32_t family = FamilyIndex(WaitFamily(name));
    barrier_slots_.push_back({std::move(name), family});
    for (RoleAcc& role : roles_) role.barriers.resize(barrier_slots_.size());
  }
  return it->second;
}

// The unit's arrival -> release flows (trace v2) as hand-off links of its block, and the
// barrier each linked wait waited on.
absl::Status AnalysisSink::CollectLinks(const UnitTimeline& t) {
  wait_barriers_.clear();
  if (t.flows.empty()) return absl::OkStatus();
  const uint64_t block_first = t.record_index - t.unit_index;
  for (const Flow& f : t.flows) {
    if (f.kind != FlowKind::kArrivalToRelease || f.to.record_index != t.record_index) continue;
    // The released wait (FlowEnd::released_wait, found by the timeline).
    if (f.to.released_wait >= t.slices.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "block %d unit %d: flow %d releases no wait slice of the unit (no wait ends at %d ns)",
          t.block_linear, t.unit_index, f.id, f.to.ns));
    }
    const uint32_t slice = f.to.released_wait;
    wait_barriers_.push_back({slice, BarrierSlotOf(f.barrier)});
    const bool local = f.from.record_index >= block_first &&
                       f.from.record_index < block_first + units_per_block_;
    if (!local) {
      // An arrival of another CTA of the cluster (LinkScope::kCluster): who released the
      // wait is counted (AddCrossCta), and the cluster's path follows it.
      ++cross_cta_links_;
      if (f.completing) cross_completing_.push_back(&f);
      if (!InCluster(f.from.record_index)) continue;
    } else {
      local_arrivals_.push_back({slice, f.from.ns});
    }
    const uint32_t from_unit = static_cast<uint32_t>(
        local ? f.from.record_index - block_first : f.from.record_index % units_per_block_);
    (cluster_scope_ ? slots_[slot_].links : resolved_links_)
        .push_back({t.block_linear, PathUnitOf(f.from.record_index, from_unit), f.from.ns,
                    PathUnitOf(t.record_index, t.unit_index), slice});
    ++resolved_total_;
  }
  if (cluster_scope_) RETURN_IF_ERROR(CollectLandings(t));
  for (const Flow* f : cross_completing_) AddCrossCta(t, *f);
  cross_completing_.clear();
  local_arrivals_.clear();
  std::sort(wait_barriers_.begin(), wait_barriers_.end(),
            [](const WaitBarrier& a, const WaitBarrier& b) { return a.slice < b.slice; });
  return absl::OkStatus();
}

AnalysisSink::ClusterPlace AnalysisSink::PlaceOfRecord(uint64_t record) const {
  const uint64_t block = SampledBlockId(*layout_, record / std::max<size_t>(1, units_per_block_));
  const Dim3 index = BlockIndex(layout_->grid, static_cast<uint32_t>(block));
  return {static_cast<uint32_t>(ClusterLinear(*layout_, index) % finders_.size()),
          ClusterOfBlock(*layout_, index).rank};
}

// `f` released one of t's waits with its phase's last arrival, from another CTA: the wait
// is held by the peer from the later of its begin and the CTA's own last arrival on the
// phase (local_arrivals_) until that remote arrival; arrivals about together hold nothing.
void AnalysisSink::AddCrossCta(const UnitTimeline& t, const Flow& f) {
  const Slice& wait = t.slices[f.to.released_wait];
  int64_t from = wait.begin_ns;
  for (const auto& [slice, ns] : local_arrivals_) {
    if (slice == f.to.released_wait) from = std::max(from, ns);
  }
  const int64_t held = std::clamp<int64_t>(f.from.ns - from, 0, wait.end_ns - wait.begin_ns);
  const uint32_t from_unit = static_cast<uint32_t>(f.from.record_index % units_per_block_);
  const uint32_t family = barrier_slots_[BarrierSlotOf(f.barrier)].family;
  CrossAcc& acc = cross_[{RoleOf(t.unit_index), RankOfRecord(t.record_index), RoleOf(from_unit),
                          RankOfRecord(f.from.record_index), family}];
  ++acc.waits;
  acc.ns += held;
}

void AnalysisSink::FillCrossCta() {
  result_.cluster_size = static_cast<uint32_t>(layout_->cluster.Count());
  result_.cross_cta_waits.clear();
  for (const auto& [key, acc] : cross_) {
    const auto& [waiter, waiter_rank, releaser, releaser_rank, family] = key;
    CrossCtaWait w;
    w.waiter_role = roles_[waiter].name;
    w.waiter_rank = waiter_rank;
    w.releaser_role = roles_[releaser].name;
    w.releaser_rank = releaser_rank;
    w.family = families_[family];
    w.waits = acc.waits;
    w.waited_ns = acc.ns;
    auto time = role_rank_ns_.find({waiter, waiter_rank});
    w.share = time == role_rank_ns_.end()
                  ? 0
                  : Ratio(static_cast<double>(acc.ns), static_cast<double>(time->second));
    result_.cross_cta_waits.push_back(std::move(w));
  }
  std::stable_sort(result_.cross_cta_waits.begin(), result_.cross_cta_waits.end(),
                   [](const CrossCtaWait& a, const CrossCtaWait& b) {
                     return a.waited_ns > b.waited_ns;
                   });
}

absl::Status AnalysisSink::AddUnit(const UnitView& unit) {
  const UnitTimeline& t = *unit.timeline;
  if (!t.has_record) {
    ++result_.units_without_record;
    return absl::OkStatus();
  }
  if (!in_block_ || t.block_linear != block_) {
    if (in_block_) RETURN_IF_ERROR(FinishBlock());
    if (!seen_blocks_.insert(t.block_linear).second) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "units of block %d do not arrive consecutively (unit %d comes after another block)",
          t.block_linear, t.unit_index));
    }
    // A new link scope instance: every block without clusters, a cluster's first block
    // under the cluster scope.
    const uint64_t scope = cluster_scope_ ? t.record_index / records_per_scope_ : 0;
    if (in_scope_ && (!cluster_scope_ || scope != scope_)) RETURN_IF_ERROR(FinishScope());
    if (!in_scope_) {
      in_scope_ = true;
      scope_ = scope;
      scope_first_record_ = t.record_index;
      for (size_t s = 0; s < finders_.size(); ++s) {
        finders_[s].StartBlock();
        slots_[s].used = false;
        slots_[s].links.clear();
      }
    }
    slot_ = cluster_scope_ ? PlaceOfRecord(t.record_index).slot : 0;
    if (ClusterSlot& slot = slots_[slot_]; !slot.used) {
      slot.used = true;
      slot.first_block = t.block_linear;
      slot.first_record = t.record_index;
    }
    in_block_ = true;
    block_ = t.block_linear;
    block_first_record_ = t.record_index;
    block_has_span_ = false;
  }
  if (block_unit_count_ >= units_per_block_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "block %d has more than the %d units a block holds", t.block_linear,
        units_per_block_));
  }
  const uint32_t role = RoleOf(t.unit_index);
  const double ns_per_event =
      t.events >= 2 && t.cycles_per_ns > 0 ? t.overhead_cycles / t.cycles_per_ns : -1;
  RoleAcc& acc = roles_[role];
  RETURN_IF_ERROR(CollectLinks(t));
  // One sweep over the slices: the critical path's leaves and this role's counters.
  SliceCounter counter{acc,
                       family_of_site_,
                       ns_per_event >= 0 ? FixedNs(2 * ns_per_event) : 0,
                       t.slices.data(),
                       layout_->sites.size(),
                       wait_barriers_,
                       barrier_slots_};
  CriticalPathFinder& finder = finders_[slot_];
  if (absl::Status s = finder.AddUnit(PathUnitOf(t.record_index, t.unit_index), t.slices,
                                      layout_->sites, counter);
      !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("block ", t.block_linear, ": ", s.message()));
  }
  if (int64_t begin = 0, end = 0; cluster_scope_ && finder.LastUnitSpan(begin, end)) {
    block_begin_ns_ = block_has_span_ ? std::min(block_begin_ns_, begin) : begin;
    block_end_ns_ = block_has_span_ ? std::max(block_end_ns_, end) : end;
    block_has_span_ = true;
  }
  units_.push_back({t.block_linear, t.unit_index, t.sm_id, role, t.start_ns, t.end_ns,
                    static_cast<float>(ns_per_event),
                    static_cast<float>(t.events >= 2 ? t.overhead_cycles : -1), t.events,
                    t.returned_early});
  ++acc.units;
  acc.unit_time_ns += t.end_ns - t.start_ns;
  if (LinkScopeOf(*layout_) == LinkScope::kCluster) {
    role_rank_ns_[{role, RankOfRecord(t.record_index)}] += t.end_ns - t.start_ns;
  }
  // Tensor-core time: the union of the unit's wgmma group spans (sorted by begin).
  int64_t covered_end = t.start_ns;
  for (const AsyncSpan& span : t.async_spans) {
    if (span.site >= layout_->sites.size() ||
        layout_->sites[span.site].kind != SiteKind::kMmaGroup) {
      continue;
    }
    ++acc.mma_groups;
    const int64_t begin = std::max(span.begin_ns, covered_end);
    const int64_t end = std::min(span.end_ns, t.end_ns);
    if (end > begin) acc.mma_in_flight_ns += end - begin;
    covered_end = std::max(covered_end, std::min(span.end_ns, t.end_ns));
  }
  AddCopies(t, acc);
  ++block_unit_count_;
  return absl::OkStatus();
}

// Copy bandwidth: the unit's completed copies of a known engine, their bytes and the union
// of their spans (sorted by begin, like the wgmma groups').
void AnalysisSink::AddCopies(const UnitTimeline& t, RoleAcc& acc) const {
  int64_t covered_end = t.start_ns;
  for (const AsyncSpan& span : t.async_spans) {
    if (span.site >= layout_->sites.size() || !span.completed) continue;
    const SiteInfo& site = layout_->sites[span.site];
    if (site.kind != SiteKind::kAsyncCopy || site.copy_engine == CopyEngine::kNone) continue;
    ++acc.copies;
    acc.copy_bytes += site.copy_bytes;
    acc.copy_engines |= 1u << static_cast<uint32_t>(site.copy_engine);
    const int64_t begin = std::max(span.begin_ns, covered_end);
    const int64_t end = std::min(span.end_ns, t.end_ns);
    if (end > begin) acc.copy_in_flight_ns += end - begin;
    covered_end = std::max(covered_end, std::min(span.end_ns, t.end_ns));
  }
}

void AnalysisSink::SliceCounter::OnWait(const Slice& slice,
                                        absl::Span<const Slice* const> enclosing) {
  const int64_t dur = slice.end_ns - slice.begin_ns;
  SiteAcc& site = role.sites[slice.site];
  int32_t family = family_of_site[slice.site];
  if (!wait_barriers.empty()) {
    // A wait a hand-off names: its family is the barrier's ("full[2]" -> "full[*]").
    const uint32_t index = static_cast<uint32_t>(&slice - slices);
    auto it = std::lower_bound(
        wait_barriers.begin(), wait_barriers.end(), index,
        [](const WaitBarrier& w, uint32_t i) { return w.slice < i; });
    if (it != wait_barriers.end() && it->slice == index) {
      family = static_cast<int32_t>(barrier_slots[it->slot].family);
      FamilyAcc& b = role.barriers[it->slot];
      ++b.count;
      b.wait_ns += dur;
      b.overhead += overhead_per_wait;
    }
  }
  site.waiting_ns += dur;
  FamilyAcc& f = role.families[family];
  ++f.count;
  f.wait_ns += dur;
  f.overhead += overhead_per_wait;
  // A wait inside a wait is already counted, with its regions, by the outer one.
  for (const Slice* open : enclosing) {
    if (family_of_site[open->site] >= 0) return;
  }
  role.waiting_ns += dur;
  for (const Slice* open : enclosing) {
    role.sites[open->site].waiting_ns += dur;
    role.AddRegionWait(open->site, static_cast<uint32_t>(family), num_sites, dur);
  }
}

// Explicit links are checked for order as the cursor passes them (each once, no pass of its
// own over them): a link of an earlier block than the one before it is an error.
absl::Status AnalysisSink::AdvanceLinks(uint32_t block, size_t& end) {
  const absl::Span<const HandoffLink> all = options_.handoffs;
  auto unsorted = [&](size_t i) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hand-off links must be sorted by block: link %d (block %d) follows block %d", i,
        all[i].block_linear, all[i - 1].block_linear));
  };
  for (; handoff_cursor_ < all.size() && all[handoff_cursor_].block_linear < block;
       ++handoff_cursor_) {
    if (handoff_cursor_ > 0 &&
        all[handoff_cursor_].block_linear < all[handoff_cursor_ - 1].block_linear) {
      return unsorted(handoff_cursor_);
    }
  }
  end = handoff_cursor_;
  if (end > 0 && end < all.size() && all[end].block_linear < all[end - 1].block_linear) {
    return unsorted(end);
  }
  while (end < all.size() && all[end].block_linear == block) ++end;
  return absl::OkStatus();
}

// The block's explicit links go to its scope (FinishScope walks them) and its record.
absl::Status AnalysisSink::FinishBlock() {
  size_t end = 0;
  RETURN_IF_ERROR(AdvanceLinks(block_, end));
  const absl::Span<const HandoffLink> links =
      options_.handoffs.subspan(handoff_cursor_, end - handoff_cursor_);
  handoff_cursor_ = end;
  if (cluster_scope_) {
    for (HandoffLink link : links) {  // block-local unit indexes, renumbered in the cluster
      const uint32_t base = PathUnitOf(block_first_record_, 0);
      link.from_unit += base;
      link.to_unit += base;
      slots_[slot_].links.push_back(link);
    }
  } else {
    block_explicit_ = links;
  }

  const size_t first = units_.size() - block_unit_count_;
  const int64_t span = !cluster_scope_    ? finders_[0].end_ns() - finders_[0].begin_ns()
                       : block_has_span_ ? block_end_ns_ - block_begin_ns_
                                         : 0;
  BlockRec rec{block_, 0, 0, 0, span, block_first_record_, first, block_unit_count_, true};
  rec.sm_id = units_[first].sm_id;
  rec.start_ns = units_[first].start_ns;
  rec.end_ns = units_[first].end_ns;
  for (size_t i = first; i < units_.size(); ++i) {
    rec.start_ns = std::min(rec.start_ns, units_[i].start_ns);
    rec.end_ns = std::max(rec.end_ns, units_[i].end_ns);
    rec.returned_early &= units_[i].returned_early;
  }
  blocks_.push_back(rec);
  in_block_ = false;
  block_unit_count_ = 0;
  return absl::OkStatus();
}

absl::Status AnalysisSink::End(const TraceEnd& /*end*/) {
  if (in_block_) RETURN_IF_ERROR(FinishBlock());
  if (in_scope_) RETURN_IF_ERROR(FinishScope());
  size_t end = 0;
  RETURN_IF_ERROR(AdvanceLinks(UINT32_MAX, end));  // the links after the last block
  result_.units = units_.size();
  FillRoles();
  FillCriticalPath();
  FillGrid();
  for (RoleAnalysis& role : result_.roles) {
    role.copy_gb_per_s_over_span = Ratio(static_cast<double>(role.copy_bytes),
                                         static_cast<double>(result_.grid.span_ns));
  }
  FillOverhead();
  FillCrossCta();
  result_.diagnosis = Diagnose(result_);
  return absl::OkStatus();
}

// The role's time per site, most total time first.
std::vector<SiteTime> AnalysisSink::SiteTimes(const RoleAcc& acc, double unit_time) const {
  std::vector<SiteTime> sites;
  for (uint32_t s = 0; s < acc.sites.size(); ++s) {
    const SiteAcc& site = acc.sites[s];
    if (site.count == 0) continue;
    SiteTime st;
    st.site = s;
    st.name = layout_->sites[s].name;
    st.kind = layout_->sites[s].kind;
    st.count = site.count;
    st.total_ns = site.total_ns;
    st.self_ns = site.self_ns;
    st.share = Ratio(static_cast<double>(site.total_ns), unit_time);
    st.waiting_ns = site.waiting_ns;
    st.waiting_share = Ratio(static_cast<double>(site.waiting_ns),
                             static_cast<double>(site.total_ns));
    for (size_t f = 0; f < families_.size(); ++f) {
      const int64_t ns = acc.RegionWait(s, static_cast<uint32_t>(f), layout_->sites.size());
      if (ns == 0) continue;
      st.waits.push_back(
          {families_[f], ns, Ratio(static_cast<double>(ns), static_cast<double>(site.total_ns))});
    }
    std::stable_sort(st.waits.begin(), st.waits.end(),
                     [](const WaitInRegion& a, const WaitInRegion& b) {
                       return a.wait_ns > b.wait_ns;
                     });
    sites.push_back(std::move(st));
  }
  std::stable_sort(sites.begin(), sites.end(),
                   [](const SiteTime& a, const SiteTime& b) { return a.total_ns > b.total_ns; });
  return sites;
}

// Role r's median unit time, its slowest unit and the outliers.
void AnalysisSink::FillUnitTimes(uint32_t r, const RoleAcc& acc, RoleAnalysis& out) const {
  std::vector<std::pair<int64_t, size_t>> times;
  for (size_t i = 0; i < units_.size(); ++i) {
    if (units_[i].role == r) times.push_back({units_[i].end_ns - units_[i].start_ns, i});
  }
  if (!times.empty()) {
    std::sort(times.begin(), times.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    const size_t n = times.size();
    out.median_unit_ns = times[n - static_cast<size_t>(std::ceil(0.5 * n))].first;
    auto ref = [&](const std::pair<int64_t, size_t>& t) {
      const UnitRec& u = units_[t.second];
      return UnitRef{u.block_linear, BlockIndex(layout_->grid, u.block_linear), u.unit_index,
                     u.sm_id, acc.name, t.first,
                     Ratio(static_cast<double>(t.first),
                           static_cast<double>(out.median_unit_ns)),
                     BlockLabelOf(*layout_, u.block_linear)};
    };
    out.slowest_unit = ref(times.front());
    for (const auto& t : times) {
      if (out.outlier_units.size() >= options_.max_outliers ||
          static_cast<double>(t.first) <
              options_.outlier_ratio * static_cast<double>(out.median_unit_ns)) {
        break;
      }
      out.outlier_units.push_back(ref(t));
    }
  }
}

void AnalysisSink::FillRoles() {
  result_.roles.clear();
  for (uint32_t r = 0; r < roles_.size(); ++r) {
    const RoleAcc& acc = roles_[r];
    RoleAnalysis out;
    out.role = acc.name;
    out.units = acc.units;
    out.unit_time_ns = acc.unit_time_ns;
    out.waiting_ns = acc.waiting_ns;
    const double unit_time = static_cast<double>(acc.unit_time_ns);
    out.waiting_share = Ratio(static_cast<double>(acc.waiting_ns), unit_time);
    out.mma_groups = acc.mma_groups;
    out.mma_in_flight_ns = acc.mma_in_flight_ns;
    out.mma_in_flight_share = Ratio(static_cast<double>(acc.mma_in_flight_ns), unit_time);
    out.copies = acc.copies;
    out.copy_bytes = acc.copy_bytes;
    for (const EnumName<CopyEngine>& named : kCopyEngines.names) {
      const CopyEngine e = named.value;
      if (acc.copy_engines & (1u << static_cast<uint32_t>(e))) out.copy_engines.push_back(e);
    }
    out.copy_in_flight_ns = acc.copy_in_flight_ns;
    out.copy_in_flight_share = Ratio(static_cast<double>(acc.copy_in_flight_ns), unit_time);
    out.copy_gb_per_s_in_flight = Ratio(static_cast<double>(acc.copy_bytes),
                                        static_cast<double>(acc.copy_in_flight_ns));
    for (size_t f = 0; f < acc.families.size(); ++f) {
      const FamilyAcc& fam = acc.families[f];
      if (fam.count == 0) continue;
      const int64_t overhead = RoundFixed(fam.overhead);
      out.waits.push_back({families_[f], fam.count, fam.wait_ns,
                           Ratio(static_cast<double>(fam.wait_ns), unit_time), overhead,
                           Ratio(static_cast<double>(overhead),
                                 static_cast<double>(fam.wait_ns))});
    }
    for (size_t b = 0; b < acc.barriers.size(); ++b) {
      const FamilyAcc& bar = acc.barriers[b];
      if (bar.count == 0) continue;
      const int64_t overhead = RoundFixed(bar.overhead);
      out.barriers.push_back({barrier_slots_[b].name, bar.count, bar.wait_ns,
                              Ratio(static_cast<double>(bar.wait_ns), unit_time), overhead,
                              Ratio(static_cast<double>(overhead),
                                    static_cast<double>(bar.wait_ns))});
    }
    auto by_wait = [](const WaitStats& a, const WaitStats& b) { return a.wait_ns > b.wait_ns; };
    std::stable_sort(out.waits.begin(), out.waits.end(), by_wait);
    std::stable_sort(out.barriers.begin(), out.barriers.end(), by_wait);
    out.sites = SiteTimes(acc, unit_time);
    FillUnitTimes(r, acc, out);
    result_.roles.push_back(std::move(out));
  }
}

void AnalysisSink::FillOverhead() {
  OverheadAnalysis& o = result_.overhead;
  o = OverheadAnalysis();
  o.compensated = overhead_compensated_;
  std::vector<double> ns, cycles;
  double overhead_ns = 0;
  int64_t unit_time = 0;
  for (const UnitRec& u : units_) {
    o.events += u.events;
    unit_time += u.end_ns - u.start_ns;
    if (u.ns_per_event < 0) continue;
    ns.push_back(u.ns_per_event);
    cycles.push_back(u.cycles_per_event);
    overhead_ns += u.events * static_cast<double>(u.ns_per_event);
  }
  std::sort(ns.begin(), ns.end());
  std::sort(cycles.begin(), cycles.end());
  o.ns_per_event = PercentileSorted(absl::MakeConstSpan(ns), 50);
  o.cycles_per_event = PercentileSorted(absl::MakeConstSpan(cycles), 50);
  o.overhead_ns = std::llround(overhead_ns);
  o.share = Ratio(overhead_ns, static_cast<double>(unit_time));
  int64_t waiting = 0;
  for (const RoleAnalysis& role : result_.roles) {
    waiting += role.waiting_ns;
    for (const WaitStats& w : role.waits) o.wait_overhead_ns += w.overhead_ns;
  }
  o.wait_overhead_fraction =
      Ratio(static_cast<double>(o.wait_overhead_ns), static_cast<double>(waiting));
}

}  // namespace warptrace
