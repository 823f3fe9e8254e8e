// AnalysisSink: a TraceSink (profiler/dump/sink.h) that turns a verified trace into an Analysis
// (analysis.h): waiting vs working per unit, role, region and barrier; the critical path of
// every block and how often each region is on it; per-SM busy time, the tail, imbalance and
// waves with outliers named by coordinates; the measured profiling overhead; and a ranked
// diagnosis (diagnosis.h).
//
//   AnalysisSink analysis;                    // or AnalysisSink(options) with hand-off links
//   TraceSink* sinks[] = {&chrome, &analysis};
//   RETURN_IF_ERROR(DumpTrace(layout, words, options, sinks, result));
//   const Analysis& a = analysis.result();    // after End
//   for (const Diagnosis& d : a.diagnosis) llvm::outs() << d.text << "\n";
//
// Memory: O(units), independent of the event count. Per unit it keeps one small record
// (coordinates, SM, role, start/end, overhead); per role and site a few counters; per block
// one record. Of the block being read (units of a block arrive consecutively) it keeps each
// unit's time split by innermost slice and its waits (CriticalPathFinder), never the slices,
// until the block's last unit has been seen, its critical path is computed and only its
// aggregates are kept. With parts, each part keeps the records of its own blocks until
// MergeParts copies them into the sink. Each slice is read once (one sweep feeds the role's
// counters and the path's leaves); nothing is allocated per event once the first block has
// warmed the scratch.
//
// Hand-offs: each unit's arrival -> release flows (UnitTimeline::flows, resolved from the
// trace's payloads by the driver) become HandoffLinks of its block, so a version-2 trace gets
// its critical path across units and its waits broken down by barrier ("full[2]": the
// barrier table's names, BarrierName) with no help from the caller.
//
// Clusters: under a cluster link scope (LinkScopeOf, format/links.h) the critical path is the
// cluster's, not the block's: one path per cluster over the units of all its CTAs (the
// finder numbers them CTA rank x units per block + unit), following remote arrivals and
// multicast landings (FlowKind::kMulticastLanding) from CTA to CTA. CriticalPathAnalysis
// then counts clusters, names each region's and step's CTA rank and lists the slowest
// path's crossings (analysis.h). A scope instance may hold several clusters whose CTAs are
// interleaved (BlocksPerLinkScope): each has its own finder until the instance ends. Blocks
// keep their own records (grid, outliers) either way.
//
// Errors (from the sink calls): InvalidArgument when Begin's layout has a role table of the
// wrong size, when the explicit hand-off links are not sorted by block_linear (found as the
// blocks pass, at the latest by End), when a flow into a unit names no wait slice of it or
// another block's unit, when a link names a unit or slice its block does not have
// (critical_path.h), or when a slice's site is outside the layout's site table;
// FailedPrecondition when units of one block do not arrive consecutively. result() is
// meaningful only after End returned OK.
// Parts (sink.h, NewPart): with the dump's prepare workers and a trace without hand-off
// links, each worker feeds the whole blocks it prepared to a part of its own (an
// AnalysisSink of its own: the same accumulators), and MergeParts adds the parts' per-role
// and critical-path counters and puts their block and unit records back in buffer order. The
// result is the one a single thread gets, exactly: what the sink adds up is integers (wait
// overheads and path shares in fixed point, FixedNs / kShareOne), so the order blocks come
// in does not change a bit of it. No parts with explicit hand-off links
// (AnalysisOptions::handoffs: NewPart returns null), and a part refuses a unit with hand-off
// flows (FailedPrecondition): their barrier slots are numbered in arrival order.
// Thread-safety: like every sink, called from one thread; each part from one thread.
#ifndef WARPTRACE_PROFILER_ANALYSIS_ANALYSIS_SINK_H_
#define WARPTRACE_PROFILER_ANALYSIS_ANALYSIS_SINK_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "profiler/analysis/analysis.h"
#include "profiler/analysis/critical_path.h"
#include "profiler/analysis/handoff.h"
#include "profiler/dump/sink.h"

namespace warptrace {

struct AnalysisOptions {
  // Exact hand-off links (handoff.h) besides the trace's own, sorted by block_linear; not
  // owned, must outlive the dump. A trace whose hand-offs are recorded (version 2: the
  // timeline's arrival -> release flows, links.h) needs none: the sink turns every flow
  // into a link itself. With neither, the critical path is per unit only.
  absl::Span<const HandoffLink> handoffs;
  // A block or unit at least this many times its peers' median is an outlier.
  double outlier_ratio = 1.5;
  size_t max_outliers = 5;
};

// "full[2]" -> "full[*]": every run of digits inside brackets becomes "*"; a trailing
// " of CTA rank N" (a peer CTA's element under a cluster link scope) goes.
std::string WaitFamily(absl::string_view site_name);

class AnalysisSink : public TraceSink {
 public:
  explicit AnalysisSink(AnalysisOptions options = {});

  absl::string_view Name() const override { return "analysis"; }
  absl::Status Begin(const TraceBegin& begin) override;
  absl::Status AddUnit(const UnitView& unit) override;
  absl::Status End(const TraceEnd& end) override;

  std::unique_ptr<SinkPart> NewPart() override;
  absl::Status MergeParts(std::vector<std::unique_ptr<SinkPart>> parts) override;

  const Analysis& result() const { return result_; }

 private:
  class Part;
  struct SiteAcc {
    uint64_t count = 0;
    int64_t total_ns = 0;
    int64_t self_ns = 0;
    int64_t waiting_ns = 0;
  };
  // Overheads in fixed point, 2^kFixedShift units per ns, summed exactly.
  static constexpr int kFixedShift = 32;
  static int64_t FixedNs(double ns);            // ns >= 0, at most 2^30 ns
  static int64_t RoundFixed(__int128 fixed);    // to the nearest ns
  struct FamilyAcc {
    uint64_t count = 0;
    int64_t wait_ns = 0;
    __int128 overhead = 0;  // 2^kFixedShift per ns
    void Add(const FamilyAcc& other);
  };
  struct RoleAcc {
    std::string name;
    uint64_t units = 0;
    int64_t unit_time_ns = 0;
    int64_t waiting_ns = 0;
    uint64_t mma_groups = 0;
    int64_t mma_in_flight_ns = 0;
    uint64_t copies = 0;
    uint64_t copy_bytes = 0;
    uint32_t copy_engines = 0;  // bit per CopyEngine
    int64_t copy_in_flight_ns = 0;
    std::vector<SiteAcc> sites;
    std::vector<FamilyAcc> families;  // by family index (families_)
    std::vector<FamilyAcc> barriers;  // by barrier slot (barrier_slots_)
    // Time inside waits of each family, per enclosing region (site): dense by
    // family * sites + site up to kDenseRegionWaits entries, the rest in the map
    // (site << 32 | family); AddRegionWait / RegionWait.
    std::vector<int64_t> region_family_dense;
    absl::flat_hash_map<uint64_t, int64_t> region_family_ns;
    void AddRegionWait(uint32_t site, uint32_t family, size_t sites, int64_t ns);
    int64_t RegionWait(uint32_t site, uint32_t family, size_t sites) const;
    void Add(const RoleAcc& other);  // a part's counters (MergeParts)
  };
  struct UnitRec {
    uint32_t block_linear;
    uint32_t unit_index;
    uint32_t sm_id;
    uint32_t role;
    int64_t start_ns;
    int64_t end_ns;
    float ns_per_event;   // < 0: unknown (fewer than 2 events)
    float cycles_per_event;
    uint32_t events;
    bool returned_early;  // UnitTimeline::returned_early
  };
  struct BlockRec {
    uint32_t block_linear;
    uint32_t sm_id;
    int64_t start_ns;
    int64_t end_ns;
    int64_t path_ns;  // its critical-path span (first slice begin to last slice end)
    uint64_t first_record;  // the record_index of its first unit with a record
    size_t first_unit;      // its units: units_[first_unit, first_unit + unit_count)
    size_t unit_count;
    bool returned_early;    // every unit of it with a record returned early
  };
  // A block's share of its path (at most 1), in fixed point: kShareOne is the whole path.
  static constexpr int64_t kShareOne = int64_t{1} << 60;
  struct PathAcc {
    uint64_t blocks = 0;
    int64_t path_ns = 0;
    __int128 share_sum = 0;  // kShareOne per block's whole path
  };
  // A barrier named by hand-off payloads: its name ("full[2]") and wait family index.
  struct BarrierSlot {
    std::string name;
    uint32_t family;
  };
  // A wait slice of the unit being read and the barrier slot a hand-off link names for it.
  struct WaitBarrier {
    uint32_t slice;
    uint32_t slot;
  };
  // CriticalPathFinder's visitor: one role's counters, per slice.
  struct SliceCounter {
    RoleAcc& role;
    const std::vector<int32_t>& family_of_site;
    int64_t overhead_per_wait;  // two record points' measured overhead (FixedNs), 0: unknown
    const Slice* slices;          // the unit's slices (a slice's index is its offset)
    size_t num_sites;             // the layout's
    absl::Span<const WaitBarrier> wait_barriers;  // by slice
    absl::Span<const BarrierSlot> barrier_slots;
    void OnSlice(const Slice& slice, absl::Span<const Slice* const> enclosing) {
      SiteAcc& site = role.sites[slice.site];
      ++site.count;
      site.total_ns += slice.end_ns - slice.begin_ns;
      if (family_of_site[slice.site] >= 0) OnWait(slice, enclosing);
    }
    void OnWait(const Slice& slice, absl::Span<const Slice* const> enclosing);
    void OnSelf(uint32_t site, int64_t ns) { role.sites[site].self_ns += ns; }
  };

  uint32_t RoleOf(uint32_t unit_index) const;
  uint32_t FamilyIndex(const std::string& family);
  uint32_t BarrierSlotOf(uint32_t barrier);
  absl::Status CollectLinks(const UnitTimeline& unit);
  absl::Status AdvanceLinks(uint32_t block, size_t& end);
  absl::Status FinishBlock();
  absl::Status FinishScope();
  void AccumulatePath(CriticalPathFinder& finder, int64_t span);
  // Where a record's block sits (cluster scope): its cluster's slot in the scope instance
  // (ClusterLinear modulo the clusters an instance holds) and its CTA rank.
  struct ClusterPlace {
    uint32_t slot = 0;
    uint32_t rank = 0;
  };
  ClusterPlace PlaceOfRecord(uint64_t record) const;
  // The finder's number of a unit: unit_index (block scope), or its place in its cluster,
  // CTA rank x units_per_block_ + unit_index (cluster scope).
  uint32_t PathUnitOf(uint64_t record, uint32_t unit_index) const {
    if (!cluster_scope_) return unit_index;
    return PlaceOfRecord(record).rank * static_cast<uint32_t>(units_per_block_) + unit_index;
  }
  // Whether a record belongs to the cluster of the block being read (cluster scope).
  bool InCluster(uint64_t record) const {
    return cluster_scope_ && record / records_per_scope_ == scope_ &&
           PlaceOfRecord(record).slot == slot_;
  }
  absl::Status CollectLandings(const UnitTimeline& t);
  absl::Status WalkPath(CriticalPathFinder& finder, absl::Span<const HandoffLink> links,
                        uint32_t first_block, uint64_t first_record);
  void FillPathSteps(CriticalPathAnalysis& out) const;
  absl::Status MergePart(AnalysisSink& part);
  absl::Status MergeBlocks(absl::Span<AnalysisSink* const> parts);
  void AddCopies(const UnitTimeline& t, RoleAcc& acc) const;
  void FillRoles();
  std::vector<SiteTime> SiteTimes(const RoleAcc& acc, double unit_time) const;
  void FillUnitTimes(uint32_t r, const RoleAcc& acc, RoleAnalysis& out) const;
  void FillCriticalPath();
  void FillGrid();
  void FillBlockTimes(absl::Span<const BlockRec* const> blocks, int64_t origin);
  void FillDimImbalance(absl::Span<const BlockRec* const> working);
  void FillOverhead();

  AnalysisOptions options_;
  const TraceLayout* layout_ = nullptr;
  std::vector<int32_t> family_of_site_;  // -1 for a site that is not a wait
  std::vector<std::string> families_;
  std::vector<uint32_t> role_of_unit_;   // by unit_index
  std::vector<RoleAcc> roles_;
  std::vector<UnitRec> units_;
  std::vector<BlockRec> blocks_;

  // The block being read: its units' leaves and waits live in finders_ until FinishScope.
  bool in_block_ = false;
  uint32_t block_ = 0;
  uint64_t block_first_record_ = 0;
  size_t units_per_block_ = 0;
  size_t block_unit_count_ = 0;
  size_t handoff_cursor_ = 0;
  absl::flat_hash_set<uint32_t> seen_blocks_;
  // Hand-off links resolved from the units' flows (trace v2), this block's; the explicit
  // and resolved links of the block together (scratch); the unit's linked waits.
  std::vector<HandoffLink> resolved_links_;
  uint64_t cross_cta_links_ = 0;  // arrival -> release flows from another CTA
  // Waits released from another CTA, by (waiter role, waiter rank, releaser role, releaser
  // rank, family); unit time by (role, rank). Ranks: the record's place in its link scope.
  struct CrossAcc {
    uint64_t waits = 0;
    int64_t ns = 0;
  };
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>, CrossAcc> cross_;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> role_rank_ns_;
  std::vector<const Flow*> cross_completing_;                // scratch, per unit
  std::vector<std::pair<uint32_t, int64_t>> local_arrivals_;  // scratch: (slice, arrival ns)
  uint32_t RankOfRecord(uint64_t record) const {
    return cluster_scope_ ? PlaceOfRecord(record).rank : 0;
  }
  void AddCrossCta(const UnitTimeline& t, const Flow& f);
  void FillCrossCta();
  std::vector<HandoffLink> block_links_;
  std::vector<WaitBarrier> wait_barriers_;
  uint64_t resolved_total_ = 0;
  std::vector<BarrierSlot> barrier_slots_;
  absl::flat_hash_map<uint32_t, uint32_t> slot_of_barrier_;  // barrier id -> slot

  // The link scope instance being read, and one critical path per block or cluster of it
  // (critical_path.h). Without clusters (LinkScope::kBlock) the instance is the block, its
  // path finders_[0]'s. Under LinkScope::kCluster it is the run of blocks that holds whole
  // clusters (BlocksPerLinkScope: one cluster when its CTAs are consecutive blocks, else
  // several, interleaved), a finder and links per cluster (by slot, PlaceOfRecord), whose
  // units the finder knows as CTA rank x units_per_block_ + unit (PathUnitOf) so that remote
  // arrivals and multicast landings are edges of one path.
  bool cluster_scope_ = false;
  uint32_t records_per_scope_ = 1;  // RecordsPerLinkScope
  uint32_t scope_ranks_ = 1;        // CTAs per cluster
  bool in_scope_ = false;
  uint64_t scope_ = 0;              // record_index / records_per_scope_ (cluster scope)
  uint64_t scope_first_record_ = 0; // its first unit's record (block scope)
  uint32_t slot_ = 0;               // the cluster of the block being read (cluster scope)
  struct ClusterSlot {
    bool used = false;
    uint32_t first_block = 0;
    uint64_t first_record = 0;
    std::vector<HandoffLink> links;  // explicit (renumbered) and resolved
  };
  std::vector<ClusterSlot> slots_;  // cluster scope: by slot
  absl::Span<const HandoffLink> block_explicit_;  // block scope: the block's explicit links
  bool block_has_span_ = false;     // cluster scope: the block's own path span
  int64_t block_begin_ns_ = 0;
  int64_t block_end_ns_ = 0;
  std::vector<int64_t> scope_spans_;  // cluster scope: each cluster's path span
  uint64_t cross_cta_handoffs_ = 0;
  std::vector<CriticalPathFinder::PathHandoff> path_handoffs_;     // scratch
  std::vector<CriticalPathFinder::PathHandoff> slowest_handoffs_;  // the slowest path's

  // Critical path, over blocks. Dense by PathIndex(rank, role, site).
  size_t PathIndex(uint32_t rank, uint32_t role, uint32_t site) const;
  std::vector<CriticalPathFinder> finders_;  // by slot (block scope: one)
  std::vector<CriticalPathFinder::PathTime> path_times_;  // scratch
  std::vector<int64_t> block_path_ns_;    // this block's path time, dense
  std::vector<uint32_t> touched_;         // indexes of block_path_ns_ set this block
  std::vector<PathAcc> path_;             // over blocks, dense
  uint64_t path_blocks_ = 0;
  uint64_t handoffs_ = 0;
  BlockPath slowest_path_;
  uint32_t slowest_path_block_ = 0;
  uint64_t slowest_path_record_ = 0;  // the slowest block's first_record
  int64_t slowest_path_span_ = -1;

  bool overhead_compensated_ = false;
  TraceBegin begin_;                    // for the parts' Begin
  std::vector<const Part*> parts_made_;  // by NewPart since Begin, not yet merged
  Analysis result_;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_ANALYSIS_SINK_H_
