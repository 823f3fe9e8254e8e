// CriticalPath: the longest chain of work through one block's trace units, from the block's
// first event to its last, following program order within a unit and hand-off edges
// (handoff.h) across units. "Block" here is one instance of the trace's link scope
// (format/links.h): a thread block, or under LinkScope::kCluster a whole cluster, whose
// units the caller numbers uniquely (AnalysisSink: CTA rank x units per block + unit) so
// that a remote arrival's link is one more edge.
//
//   std::vector<PathUnit> units = {{0, producer.slices}, {1, consumer.slices}};
//   ASSIGN_OR_RETURN(BlockPath path, CriticalPath(units, links, layout.sites));
//   for (const PathStep& step : path.steps) ...   // in time order
//
// Method (a backward walk, exact for a trace whose waits end when they are released):
//   1. Start at the end of the unit whose last slice ends last (the block's last event).
//   2. Walk back along that unit. At the latest barrier-wait slice W that ended at or before
//      the current time and has a hand-off link whose arrival fell inside W (after W began:
//      the wait really waited on it), the chain came from the arrival: the time from W's end
//      to the current time is on the path, the gap from the arrival to W's end is hand-off
//      latency (kPathHandoff), and the walk continues on the arriving unit at the arrival.
//      When several links release W, the latest arrival is the one that released it.
//   3. With no such wait left, the rest of the unit back to its first event is on the path.
// Each stretch of a unit on the path is attributed to the innermost slice covering each
// instant (its site), or to kPathUntracked where no slice covers it. A wait without a link
// (or whose arrival came before it began) stays on the path as that wait's site. A wait is a
// slice of a kBarrierWait or kPhaseWait site (IsWaitSite, handoff.h).
//
// Without links the result is the program order of the unit that finished last: the
// critical path "per unit only"; BlockPath::handoffs says how many edges were followed.
//
// Errors: InvalidArgument for a link whose units are not among `units`, whose to_slice is
// out of range or is not a wait slice, or a slice whose site is outside `sites`.
// Cost: O(slices + links · log waits) per block; a unit's linked waits are sorted by end only
// when they are not already (nested waits).
#ifndef WARPTRACE_PROFILER_ANALYSIS_CRITICAL_PATH_H_
#define WARPTRACE_PROFILER_ANALYSIS_CRITICAL_PATH_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "profiler/analysis/handoff.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {

// Pseudo sites for path time that no slice names.
inline constexpr uint32_t kPathUntracked = 0xffffffffu;  // on a unit, outside every slice
inline constexpr uint32_t kPathHandoff = 0xfffffffeu;    // an arrival until the wait's end
// "(untracked)", "(hand-off)", or the site's name.
const char* PathSiteName(uint32_t site, absl::Span<const SiteInfo> sites);

// One trace unit of the block: its unit_index and its slices (UnitTimeline::slices: ordered
// by begin, then depth, properly nested).
struct PathUnit {
  uint32_t unit_index = 0;
  absl::Span<const Slice> slices;
};

struct PathStep {
  uint32_t unit_index = 0;
  uint32_t site = kPathUntracked;  // a site id, kPathUntracked or kPathHandoff
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t ns() const { return end_ns - begin_ns; }
  friend bool operator==(const PathStep&, const PathStep&) = default;
};

struct BlockPath {
  int64_t begin_ns = 0;  // the block's first slice begin
  int64_t end_ns = 0;    // the block's last slice end (where the walk starts)
  // In time order, contiguous, none empty; consecutive stretches of one unit and site merged.
  // Their total is end_ns minus the first step's begin (the start of the unit where the walk
  // ended), at most end_ns - begin_ns.
  std::vector<PathStep> steps;
  uint32_t handoffs = 0;  // hand-off edges the walk followed
};

// `links` may hold links of other blocks' units only if their unit indexes are also valid
// here; pass exactly this block's links. A block with no slices has an empty path.
absl::StatusOr<BlockPath> CriticalPath(absl::Span<const PathUnit> units,
                                       absl::Span<const HandoffLink> links,
                                       absl::Span<const SiteInfo> sites);

// The same, built up unit by unit while a block streams past, with scratch memory reused
// from block to block (no allocation once warm): what a sink that computes one path per
// block uses. It keeps each unit's time split by innermost slice ("leaves", merged where
// one site runs on) and its wait slices, never the slices themselves.
//
//   finder.StartBlock();
//   for (each unit of the block) RETURN_IF_ERROR(finder.AddUnit(index, slices, sites));
//   RETURN_IF_ERROR(finder.Walk(block_links));
//   finder.PathTimes(times);          // time on the path per (unit, site)
//   if (slowest) finder.Steps(path);   // the path as PathSteps, only when needed
//
// Not thread-safe. Results (begin_ns .. Steps) are valid until the next StartBlock.
class CriticalPathFinder {
 public:
  // Forgets the previous block.
  void StartBlock();
  // One unit of the block (its slices as in PathUnit). InvalidArgument for a slice whose
  // site is outside `sites` (checked before the visitor sees it).
  absl::Status AddUnit(uint32_t unit_index, absl::Span<const Slice> slices,
                       absl::Span<const SiteInfo> sites) {
    return AddUnit(unit_index, slices, sites, NoVisitor());
  }
  // The same, and the sweep over the slices also serves a caller that wants per-slice
  // aggregates (one pass over the slices instead of two):
  //   visitor.OnSlice(const Slice& slice, absl::Span<const Slice* const> enclosing)
  //       every slice in order, with the slices open around it (outermost first);
  //   visitor.OnSelf(uint32_t site, int64_t ns)
  //       each stretch of the unit's time whose innermost slice is of `site` (ns > 0): over
  //       a unit they add up to each site's self time (duration minus its children's).
  template <typename Visitor>
  absl::Status AddUnit(uint32_t unit_index, absl::Span<const Slice> slices,
                       absl::Span<const SiteInfo> sites, Visitor&& visitor);
  // The block's first slice begin and last slice end, once its units are added.
  int64_t begin_ns() const { return begin_ns_; }
  int64_t end_ns() const { return end_ns_; }
  // Whether the block has a path at all (some unit has a slice of non-zero length).
  bool has_path() const { return last_ >= 0; }
  // The span of the unit added last (its first slice's begin to its last slice's end);
  // false when it has no time (no slice of non-zero length).
  bool LastUnitSpan(int64_t& begin, int64_t& end) const;
  // Walks back from the block's last event through `links` (this block's). Errors as
  // CriticalPath (a link to a unit never added "names a unit the block does not have").
  absl::Status Walk(absl::Span<const HandoffLink> links);
  // Hand-off edges the last Walk followed.
  uint32_t handoffs() const { return handoffs_; }
  // The walked path's time per (unit, site): each pair once, in no particular order, ns > 0
  // (site may be kPathUntracked or kPathHandoff); the ns add up to the path's total.
  // Cheaper than Steps (nothing per step is materialized); `out` is replaced.
  struct PathTime {
    uint32_t unit_index;
    uint32_t site;
    int64_t ns;
  };
  void PathTimes(std::vector<PathTime>& out);
  // The walked path as BlockPath (steps in time order, merged as BlockPath says).
  void Steps(BlockPath& path) const;
  // The hand-off edges the last Walk followed, in time order (`out` is replaced): the
  // arriving unit and its arrival, the waiting unit, the end of the wait it released and
  // that wait's site.
  struct PathHandoff {
    uint32_t from_unit;
    int64_t from_ns;
    uint32_t to_unit;
    int64_t to_ns;
    uint32_t wait_site;
  };
  void Handoffs(std::vector<PathHandoff>& out) const;

  // Does both, for one block: StartBlock, AddUnit for each unit, Walk, Steps.
  absl::Status Find(absl::Span<const PathUnit> units, absl::Span<const HandoffLink> links,
                    absl::Span<const SiteInfo> sites, BlockPath& path);

  struct Leaf {
    int64_t begin_ns;
    int64_t end_ns;
    uint32_t site;
  };
  struct Wait {
    uint32_t slice;          // index into the unit's slices
    int64_t begin_ns;
    int64_t end_ns;
    int32_t from_position;   // the releasing arrival's unit (position), -1 when unlinked
    int64_t from_ns;         // and its time
    uint32_t site;           // the wait slice's site
  };
  struct LinkedWait {
    int64_t end_ns;
    uint32_t from_position;  // index into the block's units (in AddUnit order)
    int64_t from_ns;
    bool used;
    uint32_t site;           // the wait's site
  };
  struct UnitWork {
    uint32_t unit_index = 0;
    uint32_t slice_count = 0;
    // The first leaf_count are the unit's time split by innermost slice: contiguous, in time
    // order (neighbours may share a site). The vector is storage, only grown.
    std::vector<Leaf> leaves;
    size_t leaf_count = 0;
    std::vector<Wait> waits;         // the unit's wait slices, in slice order
    std::vector<LinkedWait> linked;  // waits released by a linked arrival, by end_ns
    size_t hint = 0;                 // Walk: the wait the last link named
  };
  // A stretch of the walked path: [begin_ns, end_ns) of unit `position`, split by its
  // leaves, or (handoff) the hand-off latency before a wait of that unit ended.
  struct Segment {
    uint32_t position;
    bool handoff;
    int64_t begin_ns;
    int64_t end_ns;
    uint32_t wait_site;  // handoff: the released wait's site
  };

 private:
  struct NoVisitor {
    void OnSlice(const Slice&, absl::Span<const Slice* const>) {}
    void OnSelf(uint32_t, int64_t) {}
  };
  UnitWork& NewUnit(uint32_t unit_index, size_t slice_count);
  void EndUnit(uint32_t unit_index);
  static absl::Status SiteOutsideTable(uint32_t unit_index, uint32_t site, size_t sites);
  // Calls f(site, begin, end) for the pieces of [begin, end) on the unit's leaves, in time
  // order (begin < end).
  template <typename F>
  static void ForEachPiece(const UnitWork& unit, int64_t begin, int64_t end, F&& f);
  absl::Status AddLinks(absl::Span<const HandoffLink> links);
  int32_t PositionOf(uint32_t unit_index) const {
    return unit_index < position_of_.size() ? position_of_[unit_index] : -1;
  }

  std::vector<UnitWork> work_;          // the first units_ are this block's
  size_t units_ = 0;
  std::vector<int32_t> position_of_;    // unit_index -> position, -1 when absent
  std::vector<const Slice*> open_;
  int64_t begin_ns_ = 0;
  int64_t end_ns_ = 0;
  int64_t last_ = -1;                   // position of the unit whose last slice ends last
  uint32_t handoffs_ = 0;
  std::vector<Segment> segments_;       // the walked path, latest first
  size_t sites_ = 0;                    // the site table's size (AddUnit)
  std::vector<int64_t> sums_;           // PathTimes: by position * (sites_ + 2) + column
  std::vector<uint32_t> touched_;       // indexes of sums_ set
};

template <typename Visitor>
absl::Status CriticalPathFinder::AddUnit(uint32_t unit_index, absl::Span<const Slice> slices,
                                         absl::Span<const SiteInfo> sites, Visitor&& visitor) {
  // A sweep with the stack of open slices: the unit's time split by innermost slice. Leaves
  // are written into storage sized for the most a unit can have (two per slice, plus one),
  // so the sweep never checks capacity; `t` is where the last leaf ended.
  UnitWork& unit = NewUnit(unit_index, slices.size());
  sites_ = sites.size();
  Leaf* leaves = unit.leaves.data();
  size_t n = 0;
  int64_t t = slices.empty() ? 0 : slices.front().begin_ns;
  open_.clear();
  for (size_t i = 0; i < slices.size(); ++i) {
    const Slice& slice = slices[i];
    if (slice.site >= sites.size()) return SiteOutsideTable(unit_index, slice.site, sites.size());
    while (!open_.empty() && open_.back()->end_ns <= slice.begin_ns) {
      const Slice& closed = *open_.back();
      if (closed.end_ns > t) {
        leaves[n++] = {t, closed.end_ns, closed.site};
        visitor.OnSelf(closed.site, closed.end_ns - t);
        t = closed.end_ns;
      }
      open_.pop_back();
    }
    if (slice.begin_ns > t) {
      const uint32_t site = open_.empty() ? kPathUntracked : open_.back()->site;
      leaves[n++] = {t, slice.begin_ns, site};
      if (site != kPathUntracked) visitor.OnSelf(site, slice.begin_ns - t);
      t = slice.begin_ns;
    }
    visitor.OnSlice(slice, absl::MakeConstSpan(open_));
    if (IsWaitSite(sites[slice.site].kind)) {
      unit.waits.push_back(
          {static_cast<uint32_t>(i), slice.begin_ns, slice.end_ns, -1, 0, slice.site});
    }
    open_.push_back(&slice);
  }
  while (!open_.empty()) {  // closes every open slice, nothing after the last
    const Slice& closed = *open_.back();
    if (closed.end_ns > t) {
      leaves[n++] = {t, closed.end_ns, closed.site};
      visitor.OnSelf(closed.site, closed.end_ns - t);
      t = closed.end_ns;
    }
    open_.pop_back();
  }
  unit.leaf_count = n;
  EndUnit(unit_index);
  return absl::OkStatus();
}
template <typename F>
void CriticalPathFinder::ForEachPiece(const UnitWork& unit, int64_t begin, int64_t end,
                                      F&& f) {
  if (end <= begin) return;
  const Leaf* leaves = unit.leaves.data();
  const size_t count = unit.leaf_count;
  // The first leaf that ends after `begin` (leaves are contiguous and in time order).
  size_t lo = 0, hi = count;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (leaves[mid].end_ns <= begin) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  // Leaves are contiguous: only the ends of [begin, end) can fall outside them.
  if (lo == count || leaves[lo].begin_ns >= end) {
    f(kPathUntracked, begin, end);
    return;
  }
  if (begin < leaves[lo].begin_ns) f(kPathUntracked, begin, leaves[lo].begin_ns);
  size_t i = lo;
  for (; i < count && leaves[i].begin_ns < end; ++i) {
    f(leaves[i].site, std::max(begin, leaves[i].begin_ns), std::min(end, leaves[i].end_ns));
  }
  if (leaves[i - 1].end_ns < end) f(kPathUntracked, leaves[i - 1].end_ns, end);
}

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_CRITICAL_PATH_H_
