// CriticalPath: the longest chain of work through one block's trace units, from the block's
// first event to its last, following program order within a unit and hand-off edges
// (handoff.h) across units.
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
// (or whose arrival came before it began) stays on the path as that wait's site.
//
// Without links the result is the program order of the unit that finished last: the
// critical path "per unit only"; BlockPath::handoffs says how many edges were followed.
//
// Errors: InvalidArgument for a link whose units are not among `units`, whose to_slice is
// out of range or is not a barrier-wait slice, or a slice whose site is outside `sites`.
// Cost: O(slices + links) per call, plus a sort of each unit's linked waits.
#ifndef WARPTRACE_PROFILER_ANALYSIS_CRITICAL_PATH_H_
#define WARPTRACE_PROFILER_ANALYSIS_CRITICAL_PATH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "profiler/analysis/handoff.h"
#include "profiler/trace/layout.h"
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

// The same, reusing its scratch memory (and `path`'s) from call to call: what a sink that
// computes one path per block uses. Not thread-safe.
class CriticalPathFinder {
 public:
  // Fills `path` (its previous contents are replaced). Errors as CriticalPath.
  absl::Status Find(absl::Span<const PathUnit> units, absl::Span<const HandoffLink> links,
                    absl::Span<const SiteInfo> sites, BlockPath& path);

  struct Leaf {
    int64_t begin_ns;
    int64_t end_ns;
    uint32_t site;
  };
  struct LinkedWait {
    int64_t begin_ns;
    int64_t end_ns;
    uint32_t from_position;  // index into `units`
    int64_t from_ns;
    bool used;
  };
  struct UnitWork {
    std::vector<Leaf> leaves;        // contiguous, in time order
    std::vector<LinkedWait> waits;   // by end_ns
  };

 private:
  absl::Status AddLinks(absl::Span<const PathUnit> units, absl::Span<const HandoffLink> links,
                        absl::Span<const SiteInfo> sites);

  std::vector<UnitWork> work_;
  std::vector<const Slice*> open_;
  std::vector<PathStep> reversed_;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_CRITICAL_PATH_H_
