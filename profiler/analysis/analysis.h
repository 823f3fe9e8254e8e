// Analysis: where a kernel's time went and who waited on whom, computed from a verified
// trace by AnalysisSink (analysis_sink.h), ranked into a diagnosis (diagnosis.h) and written
// as JSON (analysis_json.h). Plain data, no behaviour.
//
// Definitions (all times are ns on the common globaltimer axis of the timeline):
//   unit time      end_ns - start_ns of a trace unit (its record's start and end stamps).
//   waiting        time inside wait slices (kBarrierWait, kPhaseWait: IsWaitSite; a wait nested in
//                  another wait counts once); working = unit time - waiting.
//   wait family    a wait site's name with every "[digits]" replaced by "[*]": the stages
//                  of one pipeline barrier ("full[0]", "full[1]" -> "full[*]"). A wait that a
//                  recorded hand-off names (trace v2) takes its barrier's name instead
//                  ("full[2]" from the barrier table -> "full[*]").
//   role           TraceLayout::unit_roles[unit_index]; "all" when the layout has no role
//                  table, "(none)" for a unit outside any role.
//   self time      a slice's duration minus its direct children's.
//   block time     a block's critical-path span: its first slice begin to its last slice end.
//   critical path  critical_path.h; PathRegion aggregates it over blocks.
//   SM busy time   the union of the intervals [start_ns, end_ns) of the units on that SM.
//   early return   a block every unit of which (with a record) left through the builder's
//                  Return (abi::kFlagEarlyReturn), not the kernel's end. The other blocks are
//                  the working blocks: the median block, the tail, outlier blocks and the
//                  imbalance by grid dimension are over them (over every block when every
//                  block returned early), so that blocks that exit at once (a partition past
//                  its sequence's end) are no baseline.
//   tail           the last working block's end minus the median working block end (block
//                  end = its latest unit end).
//   dimension imbalance  per grid dimension with at least 2 coordinates among the working
//                  blocks, the blocks grouped by that coordinate of blockIdx: each group's
//                  mean block time, and the share of the working blocks' variance of block
//                  time between the groups (1: the coordinate alone decides a block's time).
//   waves          blocks / the most blocks that ran at once (from the blocks' intervals).
//   outlier        a block (unit) whose time is at least AnalysisOptions::outlier_ratio times
//                  the median block (unit of its role).
//   mma in flight  per unit, the union of its wgmma groups' async spans (SiteKind::kMmaGroup:
//                  commit to retiring wait) clipped to the unit's time: how long the tensor
//                  cores worked for it, whatever the unit's threads did meanwhile.
//   copy bandwidth per role, the bytes of its units' completed async copies (kAsyncCopy
//                  sites whose engine is known: SiteInfo::copy_engine, copy_bytes) over
//                  (a) the time a copy was in flight, the union of the copy spans (issue to
//                  observed completion) per unit, summed over units: what one unit achieved
//                  while copying; (b) the grid's span: what the role achieved over the kernel
//                  (of the recorded blocks: a sampled trace moved more). Host time on the
//                  host backend, not a GPU's bandwidth.
//   overhead       per unit, UnitTimeline::overhead_cycles / cycles_per_ns: the smallest gap
//                  between two consecutive events, an upper bound on what one record point
//                  costs. A wait slice holds at most two record points of its own (its enter
//                  and exit), so 2 x overhead per wait is the most of it that profiling could
//                  account for.
#ifndef WARPTRACE_PROFILER_ANALYSIS_ANALYSIS_H_
#define WARPTRACE_PROFILER_ANALYSIS_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "format/layout.h"

namespace warptrace {

// Names a block, or a unit of it, with its coordinates.
struct UnitRef {
  uint32_t block_linear = 0;
  Dim3 block_index;        // blockIdx
  uint32_t unit_index = 0; // unused for a block
  uint32_t sm_id = 0;
  std::string role;        // unused for a block
  int64_t ns = 0;          // its time (unit time, or block time for a block)
  double ratio = 0;        // ns / the median of its peers
  std::string label;       // the block's user label (BlockLabelOf), "" when none
};

// Waits on one barrier family by the units of one role.
struct WaitStats {
  std::string family;        // "full[*]"
  uint64_t count = 0;        // wait instances
  int64_t wait_ns = 0;
  double share = 0;          // wait_ns / the role's unit time
  int64_t overhead_ns = 0;   // 2 record points per wait at the unit's measured overhead
  double overhead_fraction = 0;  // overhead_ns / wait_ns: at most this much of it is profiling
};

// A region's time inside waits on one family.
struct WaitInRegion {
  std::string family;
  int64_t wait_ns = 0;
  double share = 0;  // wait_ns / the region's total_ns
};

// One record site as run by the units of one role.
struct SiteTime {
  uint32_t site = 0;
  std::string name;
  SiteKind kind = SiteKind::kRegion;
  uint64_t count = 0;
  int64_t total_ns = 0;      // inclusive
  int64_t self_ns = 0;
  double share = 0;          // total_ns / the role's unit time
  int64_t waiting_ns = 0;    // inside it, in barrier waits (a wait site: its own time)
  double waiting_share = 0;  // waiting_ns / total_ns
  std::vector<WaitInRegion> waits;  // by family, largest first (not for wait sites)
};

struct RoleAnalysis {
  std::string role;
  uint64_t units = 0;
  int64_t unit_time_ns = 0;
  int64_t waiting_ns = 0;
  double waiting_share = 0;         // waiting_ns / unit_time_ns
  // wgmma groups (SiteKind::kMmaGroup) of the role's units and the time one was in flight.
  uint64_t mma_groups = 0;
  int64_t mma_in_flight_ns = 0;
  double mma_in_flight_share = 0;   // mma_in_flight_ns / unit_time_ns
  // Completed async copies of a known engine (see "copy bandwidth" above), their bytes and
  // engines, and the time one was in flight.
  uint64_t copies = 0;
  uint64_t copy_bytes = 0;
  std::vector<CopyEngine> copy_engines;  // distinct, in CopyEngine order
  int64_t copy_in_flight_ns = 0;
  double copy_in_flight_share = 0;       // copy_in_flight_ns / unit_time_ns
  double copy_gb_per_s_in_flight = 0;    // copy_bytes / copy_in_flight_ns (bytes/ns = GB/s)
  double copy_gb_per_s_over_span = 0;    // copy_bytes / GridAnalysis::span_ns
  std::vector<WaitStats> waits;     // largest first
  // The waits a hand-off link names (trace v2), by barrier: `family` is the barrier's own
  // name ("full[2]", BarrierName); largest first. Empty without recorded hand-offs.
  std::vector<WaitStats> barriers;
  std::vector<SiteTime> sites;      // by total_ns, largest first
  // Imbalance across the units of this role (unit time).
  int64_t median_unit_ns = 0;
  UnitRef slowest_unit;             // ratio = its time / median_unit_ns
  std::vector<UnitRef> outlier_units;  // slowest first, at most AnalysisOptions::max_outliers
};

// One (role, site) on the critical path, over all blocks (of a cluster-scoped path: one
// (CTA rank, role, site), over all clusters).
struct PathRegion {
  std::string role;
  uint32_t site = 0;         // a site id, or kPathUntracked / kPathHandoff (critical_path.h)
  std::string name;
  uint64_t blocks = 0;       // blocks whose critical path passes through it
  double block_fraction = 0; // blocks / CriticalPathAnalysis::blocks
  int64_t path_ns = 0;       // its time on the critical paths, summed over blocks
  double mean_share = 0;     // mean over all blocks of (its path time / block time)
  uint32_t cta_rank = 0;     // CriticalPathAnalysis::cluster_scope: the units' CTA rank; else 0
};

// One step of a block's critical path.
struct PathStepRef {
  std::string role;
  uint32_t unit_index = 0;   // in its block
  std::string name;
  int64_t ns = 0;
  double share = 0;  // of the block's time
  uint32_t cta_rank = 0;     // CriticalPathAnalysis::cluster_scope: the unit's CTA rank; else 0
};

// A hand-off edge of a cluster-scoped path from one CTA into another: the arrival (a remote
// arrival, a multicast copy's issue) and the wait it released in the peer.
struct PathCrossing {
  uint32_t from_rank = 0;
  std::string from_role;
  uint32_t from_unit = 0;    // in its block
  uint32_t to_rank = 0;
  std::string to_role;
  uint32_t to_unit = 0;
  std::string wait;          // the released wait's site name
  int64_t at_ns = 0;         // the wait's end, from the path's start
};

struct CriticalPathAnalysis {
  // True when no hand-off link was followed in any block: each block's path is the program
  // order of the unit that finished last ("per unit only").
  bool per_unit_only = true;
  // The link scope is the cluster (LinkScope::kCluster): one path per cluster, over the units
  // of all its CTAs, following remote arrivals and multicast landings from CTA to CTA.
  // `blocks`, PathRegion::blocks and slowest_block then count and name clusters (the slowest
  // cluster by its rank-0 block), and ranks name each region's and step's CTA. False: one
  // path per block, as without clusters.
  bool cluster_scope = false;
  uint64_t blocks = 0;
  uint64_t handoffs = 0;             // hand-off edges followed, over all blocks
  uint64_t cross_cta_handoffs = 0;   // of them, from one CTA into another (cluster_scope)
  uint64_t trace_links = 0;          // hand-off links resolved from the trace's payloads
  std::vector<PathRegion> regions;   // by path_ns, largest first
  // The slowest block's path (the sequence of regions), at most kMaxPathSteps steps.
  UnitRef slowest_block;
  std::vector<PathStepRef> slowest_block_path;
  bool slowest_block_path_truncated = false;
  // The slowest path's edges from one CTA into another, in time order (cluster_scope).
  std::vector<PathCrossing> slowest_block_crossings;
  static constexpr size_t kMaxPathSteps = 256;
};

struct SmBusy {
  uint32_t sm_id = 0;
  uint64_t blocks = 0;
  int64_t busy_ns = 0;
};

// The working blocks grouped by one coordinate of blockIdx ("dimension imbalance" above).
struct DimImbalance {
  char dim = 'x';                 // 'x', 'y' or 'z'
  std::string name;               // what it means (TraceLayout::grid_dim_names), or ""
  uint32_t values = 0;            // distinct coordinates among the working blocks
  double explained = 0;           // between-group share of the block-time variance, 0..1
  uint32_t slowest = 0;           // the coordinate whose blocks' mean time is the largest
  int64_t slowest_mean_ns = 0;
  uint64_t slowest_blocks = 0;    // working blocks with that coordinate
  uint32_t fastest = 0;           // ... and the smallest
  int64_t fastest_mean_ns = 0;
  int64_t median_mean_ns = 0;     // the median over the coordinates of their mean
  double ratio = 0;               // slowest_mean_ns / median_mean_ns
};

struct GridAnalysis {
  uint64_t blocks = 0;              // blocks with at least one recorded unit
  uint64_t early_return_blocks = 0; // of them, blocks that returned early (above)
  uint64_t working_blocks = 0;      // blocks - early_return_blocks
  int64_t median_early_return_ns = 0;  // the median time of an early-return block
  int64_t span_ns = 0;              // first unit start to last unit end
  std::vector<SmBusy> sms;          // by sm_id
  int64_t mean_sm_busy_ns = 0;
  SmBusy busiest_sm;
  double sm_imbalance = 0;          // busiest_sm.busy_ns / mean_sm_busy_ns
  // From here to outlier_blocks: over the working blocks (every block when none works).
  int64_t median_block_ns = 0;      // block duration = latest unit end - earliest unit start
  int64_t median_block_end_ns = 0;  // relative to the first unit start
  int64_t last_block_end_ns = 0;    // relative to the first unit start
  int64_t tail_ns = 0;              // last_block_end_ns - median_block_end_ns
  double tail_share = 0;            // tail_ns / span_ns
  UnitRef last_block;               // the block that ended last (ns = its duration)
  UnitRef slowest_block;            // ratio = duration / median_block_ns
  uint64_t max_concurrent_blocks = 0;
  double waves = 0;                 // blocks / max_concurrent_blocks
  std::vector<UnitRef> outlier_blocks;  // slowest first, at most max_outliers
  std::vector<DimImbalance> dims;   // by explained share, largest first
};

struct OverheadAnalysis {
  uint64_t events = 0;              // events on the timeline
  double ns_per_event = 0;          // median over units with >= 2 events
  double cycles_per_event = 0;      // median over those units
  int64_t overhead_ns = 0;          // sum over units of events x the unit's ns per event
  double share = 0;                 // overhead_ns / total unit time
  int64_t wait_overhead_ns = 0;     // sum of WaitStats::overhead_ns
  double wait_overhead_fraction = 0;  // of all waiting
  bool compensated = false;         // the timeline already subtracted it
};

// What a host backend's clock can say about a finding (Analysis::host_backend): the host
// runs the same code, but its times are a CPU's.
enum class HostClockSupport {
  kUntimed,    // counts from the records (early returns): hold on a GPU as they are
  kRelative,   // ratios of time between blocks or units running the same code: show how
               // the work is spread, not how long a GPU takes
  kHostOnly,   // waits, the tail, SM balance, overhead: the host's scheduling and clock
               // reads, nothing a GPU would show
};
inline const char* HostClockSupportName(HostClockSupport support) {
  switch (support) {
    case HostClockSupport::kUntimed:
      return "untimed";
    case HostClockSupport::kRelative:
      return "relative";
    case HostClockSupport::kHostOnly:
      return "host_only";
  }
  return "?";
}

// One ranked finding: a sentence with numbers and coordinates.
struct Diagnosis {
  std::string kind;   // "early_return", "bound", "waiting", "cross_cta", "tail",
                      // "sm_imbalance", "outlier_blocks", "dim_imbalance", "unit_imbalance",
                      // "overhead"
  double score = 0;   // ranking weight: the fraction of kernel time it concerns (0..1)
  std::string text;
  HostClockSupport host_clock = HostClockSupport::kHostOnly;
};

// The causal profile (whatif.h, ComputeCausalProfile): for one region, loop body, async copy
// or wgmma group (of one role, or of every role), the predicted kernel time if its instances
// took kCausalSpeedups less time, and the fraction of the measured kernel time that saves.
inline constexpr double kCausalSpeedups[4] = {0.10, 0.25, 0.50, 1.00};
struct CausalRow {
  std::string role;     // empty: every role
  std::string name;
  SiteKind kind = SiteKind::kRegion;
  uint64_t instances = 0;
  int64_t work_ns = 0;  // its instances' work (length minus the waits inside), summed
  double saving[4] = {0, 0, 0, 0};          // (measured - predicted) / measured
  int64_t predicted_ns[4] = {0, 0, 0, 0};
  bool flat = false;    // every saving below kFlatSaving (whatif.h): not on the critical path
};

struct CausalProfile {
  int64_t measured_ns = 0;        // kernel time: first unit start to last unit end
  std::vector<CausalRow> rows;    // by saving at 50%, largest first (then 100%, role, name)
  std::vector<std::string> limitations;  // what the prediction could not know
};

// Waits released from another CTA of the cluster (a cluster link scope, format/links.h):
// the waits of `waiter_role` in the CTAs of rank `waiter_rank` whose phase's last arrival
// (the one that released them) came from `releaser_role` in CTA rank `releaser_rank`, e.g.
// a producer's wait on a multicast stage's empty barrier, completed by the peer's consumer.
struct CrossCtaWait {
  std::string waiter_role;
  uint32_t waiter_rank = 0;
  std::string releaser_role;
  uint32_t releaser_rank = 0;
  std::string family;      // the barrier family waited on ("empty[*]")
  uint64_t waits = 0;
  // The time those waits were held by the remote arrival alone: from the later of the
  // wait's begin and the waiter CTA's own last arrival on the phase, to the remote
  // arrival; summed.
  int64_t waited_ns = 0;
  double share = 0;        // of the waiter role's unit time in CTAs of waiter_rank
};

struct Analysis {
  std::string kernel_name;
  std::string device_name;
  // The trace ran on the host backend (ClockInfo::host_backend): its times are the CPU's, so
  // PrintDiagnosis labels the shares that would describe GPU hardware as host time.
  bool host_backend = false;
  uint64_t units = 0;                // units with a usable record
  uint64_t units_without_record = 0;
  std::vector<RoleAnalysis> roles;   // in order of first appearance by unit index
  CriticalPathAnalysis critical_path;
  GridAnalysis grid;
  OverheadAnalysis overhead;
  // With clusters: CTAs per cluster, and the waits released across CTAs, most waited first
  // (empty without a cluster link scope).
  uint32_t cluster_size = 1;
  std::vector<CrossCtaWait> cross_cta_waits;
  std::vector<Diagnosis> diagnosis;  // ranked, most important first
  // Filled by the dump front end when asked (DumpRequest::causal_profile); empty otherwise,
  // and then not in the JSON.
  bool has_causal_profile = false;
  CausalProfile causal_profile;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_ANALYSIS_H_
