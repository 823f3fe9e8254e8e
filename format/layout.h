// TraceLayout: everything the dump needs to decode a raw trace buffer besides its words —
// grid, block, trace unit, capacity, placement, sampling, site table, clock information,
// kernel and device names. Written by jit/ when it builds a kernel, or read from a JSON
// sidecar (format/layout_json.h, profiler/imports/sidecar.h) for a buffer saved elsewhere.
//
//   TraceLayout layout;
//   layout.kernel_name = "gemm";
//   layout.grid = {8, 8, 1};
//   layout.block = {256, 1, 1};
//   layout.unit = UnitSpec::Warpgroup();
//   layout.capacity = 258;
//   layout.sites = {{0, "kernel", SiteKind::kKernel, "gemm.cc:12"}, ...};
//   RETURN_IF_ERROR(ValidateLayout(layout));
//   uint64_t bytes = BufferBytes(layout);
#ifndef WARPTRACE_FORMAT_LAYOUT_H_
#define WARPTRACE_FORMAT_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/enum_table.h"
#include "base/dim3.h"
#include "format/links.h"

namespace warptrace {

// The group of threads that shares one trace.
enum class UnitKind { kWarp, kWarpgroup, kBlock, kCustom };

struct UnitSpec {
  UnitKind kind = UnitKind::kWarpgroup;
  // kCustom only: the subset [first_thread, first_thread + num_threads) of the block's
  // linear thread ids is one unit, recorded by thread first_thread + recorder_offset.
  uint32_t first_thread = 0;
  uint32_t num_threads = 0;
  uint32_t recorder_offset = 0;

  static UnitSpec Warp() { return {UnitKind::kWarp}; }
  static UnitSpec Warpgroup() { return {UnitKind::kWarpgroup}; }
  static UnitSpec Block() { return {UnitKind::kBlock}; }
  static UnitSpec Custom(uint32_t first, uint32_t count, uint32_t recorder_offset = 0) {
    return {UnitKind::kCustom, first, count, recorder_offset};
  }
  friend bool operator==(const UnitSpec&, const UnitSpec&) = default;
};

// Where events are staged on the device.
enum class Placement { kGlobal, kShared, kAuto };

// Which blocks record. Unsampled blocks pay one compare and have no record in the buffer.
struct BlockSample {
  uint32_t begin = 0;           // first linear block id recorded
  uint32_t end = UINT32_MAX;    // one past the last (clamped to the grid)
  uint32_t stride = 1;          // every stride-th block from begin
  friend bool operator==(const BlockSample&, const BlockSample&) = default;
};

// What a record site's events are (format/links.h has the payload contract):
//   kRegion, kLoopBody, kKernel, kBarrierWait: spans, an enter and an exit event, nested;
//   kBarrierArrive: an instant, one event (no exit flag) with payload (barrier, phase);
//   kPhaseWait: a span from the start of a wait on a phase barrier to its release, both
//     events with payload (barrier, phase);
//   kAsyncCopy: an async span, a begin (issue) and an end (exit flag: the completion a
//     thread observed) with payload (issue id, barrier); it may overlap the unit's spans.
//   kMmaGroup: an async span of tensor-core work, a wgmma group from its commit (begin) to
//     the wgmma.wait_group that retires it (end), payload (issue id, kNoBarrier); like
//     kAsyncCopy in every other respect (links, async lanes).
// The last three exist from trace version 2 on, kMmaGroup from version 3.
enum class SiteKind {
  kRegion,
  kLoopBody,
  kBarrierWait,
  kKernel,
  kBarrierArrive,
  kPhaseWait,
  kAsyncCopy,
  kMmaGroup,
};
// The names of the site kinds (the sidecar's "kind"), in enum order; also every kind, for
// loops over them (`for (const auto& k : kSiteKinds.names) ... k.value`).
inline constexpr EnumTable<SiteKind, 8> kSiteKinds{"site kind", {{
    {SiteKind::kRegion, "region"},
    {SiteKind::kLoopBody, "loop_body"},
    {SiteKind::kBarrierWait, "barrier_wait"},
    {SiteKind::kKernel, "kernel"},
    {SiteKind::kBarrierArrive, "barrier_arrive"},
    {SiteKind::kPhaseWait, "phase_wait"},
    {SiteKind::kAsyncCopy, "async_copy"},
    {SiteKind::kMmaGroup, "mma_group"},
}}};
static_assert(kSiteKinds.Covers(8));
// Whether the kind's events are async spans: an issue and a completion, matched by the
// payload's issue id, overlapping whatever the unit does meanwhile.
inline bool IsAsyncSite(SiteKind kind) {
  return kind == SiteKind::kAsyncCopy || kind == SiteKind::kMmaGroup;
}
// Whether the kind's events nest on the unit's span stack (not instants, not async spans).
inline bool SiteKindNests(SiteKind kind) {
  return kind != SiteKind::kBarrierArrive && !IsAsyncSite(kind);
}
// Whether the kind's slices are waits a hand-off link can release: a barrier wait (trace
// version 1, a wait with no payload) or a phase wait (version 2, links.h).
inline bool IsWaitSite(SiteKind kind) {
  return kind == SiteKind::kBarrierWait || kind == SiteKind::kPhaseWait;
}
// Whether the kind's events carry payload slots (some of them: format/links.h says which).
inline bool SiteKindHasPayload(SiteKind kind) {
  return kind == SiteKind::kBarrierArrive || kind == SiteKind::kPhaseWait || IsAsyncSite(kind);
}

// What the builder declared about the loop a site counts (SiteTrip).
enum class TripBound : uint8_t {
  kNone,        // the site counts no loop (or the loop's count is not a constant)
  kExact,       // the loop runs exactly `count` times each time it runs
  kUpperBound,  // it runs at most `count` times
};

// A span site entered exactly once per iteration of loop `loop` (a builder path): the
// loop's own iteration site or a region directly in its body. The loop was declared to run
// `count` times (kExact) or at most that (kUpperBound) per entry of the span open around
// the site's entries (or per unit, when none is). The dump checks it per unit
// (profiler/trace/plan_check.h).
struct SiteTrip {
  TripBound bound = TripBound::kNone;
  uint64_t count = 0;
  std::string loop;
  // The site of the span the loop runs in every time that span runs to its end (no branch,
  // role split or loop without a site between them), or -1. A closed entry of that span in a
  // unit that did not return early (abi::kFlagEarlyReturn) then holds the loop's iterations,
  // even 0 of them: an Exact loop that ran 0 times there is a finding.
  int64_t always_in = -1;
  friend bool operator==(const SiteTrip&, const SiteTrip&) = default;
};

// What moves an async copy's bytes (a kAsyncCopy site's SiteInfo::copy_engine).
enum class CopyEngine : uint8_t {
  kNone,     // not a copy site, or not known (sidecars of version 1)
  kCpAsync,  // sm_80 cp.async: 16-byte chunks shared by the issuing role's threads
  kBulk,     // sm_90 cp.async.bulk: one bulk copy per row, completing on an mbarrier
  kTma1d,    // sm_90 TMA load of one box (cp.async.bulk.tensor.Nd), by its dimensions
  kTma2d,
  kTma3d,
  kTma4d,
  kTma5d,
  kTmaStore1d,  // sm_90 TMA store of one box (cp.async.bulk.tensor.Nd.global.shared::cta)
  kTmaStore2d,
  kTmaStore3d,
  kTmaStore4d,
  kTmaStore5d,
};
// The engines' names (the sidecar's "copy_engine"), in enum order; also every engine.
inline constexpr EnumTable<CopyEngine, 13> kCopyEngines{"copy engine", {{
    {CopyEngine::kNone, "none"},
    {CopyEngine::kCpAsync, "cp.async"},
    {CopyEngine::kBulk, "bulk"},
    {CopyEngine::kTma1d, "tma_1d"},
    {CopyEngine::kTma2d, "tma_2d"},
    {CopyEngine::kTma3d, "tma_3d"},
    {CopyEngine::kTma4d, "tma_4d"},
    {CopyEngine::kTma5d, "tma_5d"},
    {CopyEngine::kTmaStore1d, "tma_store_1d"},
    {CopyEngine::kTmaStore2d, "tma_store_2d"},
    {CopyEngine::kTmaStore3d, "tma_store_3d"},
    {CopyEngine::kTmaStore4d, "tma_store_4d"},
    {CopyEngine::kTmaStore5d, "tma_store_5d"},
}}};
static_assert(kCopyEngines.Covers(13));
// The TMA load (store) engine of a `dims`-dimensional box (1..5); kNone otherwise.
inline CopyEngine TmaCopyEngine(size_t dims, bool store) {
  if (dims < 1 || dims > 5) return CopyEngine::kNone;
  const int first = static_cast<int>(store ? CopyEngine::kTmaStore1d : CopyEngine::kTma1d);
  return static_cast<CopyEngine>(first + static_cast<int>(dims) - 1);
}

// Whether a copy of this engine completes on a phase barrier (a bulk copy, a TMA load):
// from trace version 5 it records its begin alone, and the dump derives its end
// (format/links.h).
inline bool CompletesOnBarrier(CopyEngine e) {
  switch (e) {
    case CopyEngine::kBulk:
    case CopyEngine::kTma1d:
    case CopyEngine::kTma2d:
    case CopyEngine::kTma3d:
    case CopyEngine::kTma4d:
    case CopyEngine::kTma5d:
      return true;
    case CopyEngine::kNone:
    case CopyEngine::kCpAsync:
    case CopyEngine::kTmaStore1d:
    case CopyEngine::kTmaStore2d:
    case CopyEngine::kTmaStore3d:
    case CopyEngine::kTmaStore4d:
    case CopyEngine::kTmaStore5d:
      return false;
  }
  return false;
}

// One record site: the tag's site id resolves here.
struct SiteInfo {
  uint32_t id = 0;
  std::string name;    // region name shown in the timeline
  SiteKind kind = SiteKind::kRegion;
  std::string origin;  // where the builder created it ("gemm.cc:42" or a builder path)
  // kAsyncCopy sites: the engine and the bytes one copy (one issue: an async span) moves,
  // as the builder declared them; kNone / 0 when not known (another producer, an older
  // sidecar, a TMA store without its box). Other sites: kNone and 0. Sidecar fields
  // "copy_engine" (CopyEngineName) and "copy_bytes", written only for a known engine.
  CopyEngine copy_engine = CopyEngine::kNone;
  uint64_t copy_bytes = 0;
  // kAsyncCopy sites of a TMA load with .multicast::cluster: the begin's payload carries the
  // phase and the CTA mask instead of the barrier (format/links.h), so the dump links the
  // copy to the waits it released in every destination CTA. Sidecar field "multicast",
  // written only when true (older sidecars: false).
  bool multicast = false;
  // kAsyncCopy sites of a copy on a phase barrier (CompletesOnBarrier) whose end the dump
  // cannot derive because no trace unit's recorder runs a wait on its barrier (e.g. block
  // units: the one recorder is the producer, the waits run in consumers): from trace
  // version 5 such a site still records the end its issuing thread observed, with the
  // version-4 payloads (format/links.h). Sidecar field "end_observed", written only when
  // true (older sidecars: false).
  bool end_observed = false;
  // kAsyncCopy sites of cp.async groups or TMA store groups, and kMmaGroup sites, whose
  // group ends the dump derives at recorded waits (trace version 5, format/links.h): the
  // site records its groups' begins alone, and each wait of its group kind (GroupClassOf)
  // run by the unit's recorder records one event, an exit of some site of that kind with
  // payload (n, kNoBarrier), n the groups the wait leaves in flight; the dump ends, at that
  // event, every open group of the kind in the unit but the newest n (groups complete in
  // commit order). The plan sets it per group kind where every commit of the kind is a
  // recorded site's begin. Sidecar field "ends_at_waits", written only when true (older
  // sidecars: false).
  bool ends_at_waits = false;
  friend bool operator==(const SiteInfo&, const SiteInfo&) = default;
};

// The in-order asynchronous group kinds (completing in commit order, retired by a wait
// that leaves the n most recent in flight) a site's events belong to.
enum class GroupClass : uint8_t {
  kNone,     // not a group site (a copy on a phase barrier, a span, an unknown engine)
  kCpAsync,  // cp.async groups (cp.async.wait_group)
  kMma,      // wgmma groups (wgmma.wait_group)
  kStore,    // TMA store groups (cp.async.bulk.wait_group.read)
};
inline GroupClass GroupClassOf(const SiteInfo& site) {
  if (site.kind == SiteKind::kMmaGroup) return GroupClass::kMma;
  if (site.kind != SiteKind::kAsyncCopy) return GroupClass::kNone;
  switch (site.copy_engine) {
    case CopyEngine::kCpAsync:
      return GroupClass::kCpAsync;
    case CopyEngine::kTmaStore1d:
    case CopyEngine::kTmaStore2d:
    case CopyEngine::kTmaStore3d:
    case CopyEngine::kTmaStore4d:
    case CopyEngine::kTmaStore5d:
      return GroupClass::kStore;
    case CopyEngine::kNone:
    case CopyEngine::kBulk:
    case CopyEngine::kTma1d:
    case CopyEngine::kTma2d:
    case CopyEngine::kTma3d:
    case CopyEngine::kTma4d:
    case CopyEngine::kTma5d:
      return GroupClass::kNone;
  }
  return GroupClass::kNone;
}

// Whether a trace of `version` records `site`'s group begins alone, their ends derived at
// the recorded waits of the site's group kind (SiteInfo::ends_at_waits): version 5 on.
inline bool GroupEndsAtWaits(const SiteInfo& site, uint32_t version) {
  return version >= 5 && site.ends_at_waits;
}

// Whether a trace of `version` records the begin alone of `site`'s copies, the dump deriving
// their ends (format/links.h): a copy on a phase barrier, from version 5, unless the site
// keeps an observed end (SiteInfo::end_observed).
inline bool CopyEndDerived(const SiteInfo& site, uint32_t version) {
  return version >= 5 && site.kind == SiteKind::kAsyncCopy &&
         CompletesOnBarrier(site.copy_engine) && !site.end_observed;
}

// One phase barrier of a block (an mbarrier; each element of a barrier array is its own
// barrier): what the payloads of kBarrierArrive / kPhaseWait events (links.h) name by id.
// Filled by jit/ from the builder's barrier declarations; the dump uses it to name barriers
// in findings and outputs and to check each phase's arrival count.
struct BarrierInfo {
  uint32_t id = 0;      // the payload's barrier id: barriers[i].id == i
  std::string name;     // as the builder declared it, element included: "full[2]"
  // Recorded kBarrierArrive events, summed over the block's trace units, that complete one
  // phase (an arrive that the recording policy does not record does not count; an
  // expect-tx arrival counts once). 0 = unknown: the count is not checked.
  uint32_t arrivals_per_phase = 0;
  friend bool operator==(const BarrierInfo&, const BarrierInfo&) = default;
};

// How the device's clocks relate.
struct ClockInfo {
  // Nominal SM clock in kHz (e.g. 1980000 for an H100 SXM boost clock). Used where a unit
  // ran too briefly for the globaltimer to calibrate it, and for Mosaic GPU buffers.
  uint64_t nominal_sm_clock_khz = 1'500'000;
  // Number of SMs on the device; an SM id at or past it is a verify finding (0 = unknown).
  uint32_t num_sms = 0;
  // Source of the event timestamps: "clock" (%clock, 32-bit SM cycles).
  std::string event_clock = "clock";
  // True when the kernel ran on the host backend (HostDevice): %clock and %globaltimer are
  // the CPU's steady clock, so times show correctness, not GPU performance. Outputs say so.
  // Sidecar field "clock.host_backend" (absent in older sidecars: false).
  bool host_backend = false;
  friend bool operator==(const ClockInfo&, const ClockInfo&) = default;
};

// Host time at one instant on the trace's globaltimer axis, so a trace lines up with traces
// of the host (Perfetto merges traces by their clock snapshots). RunKernel records it around
// the launch: on the host backend the globaltimer is the host's CLOCK_MONOTONIC read next to
// CLOCK_BOOTTIME / CLOCK_REALTIME, so the pairing is exact to the few ns between the reads;
// on a GPU the kernel's first unit start is paired with the host time of the launch call,
// and `uncertainty_ns` says how far apart (launch to synchronize) they may be.
struct HostTimeAnchor {
  bool known = false;           // false: no anchor (older sidecars, Mosaic GPU buffers)
  int64_t globaltimer_ns = 0;   // on the events' globaltimer axis
  int64_t boottime_ns = 0;      // CLOCK_BOOTTIME at that instant
  int64_t realtime_ns = 0;      // CLOCK_REALTIME at that instant
  int64_t uncertainty_ns = 0;   // the pairing is exact to within this
  friend bool operator==(const HostTimeAnchor&, const HostTimeAnchor&) = default;
};

struct TraceLayout {
  std::string kernel_name;
  std::string device_name;  // "NVIDIA H200", "host backend (4 virtual SMs)", ...
  Dim3 grid;
  Dim3 block;
  // Optional: the thread-block cluster shape (1x1x1, the default and for sidecars written
  // before it existed: no clusters). Sidecar field "cluster", written only for a cluster of
  // more than one CTA. Each block's cluster and rank follow from it (ClusterOfBlock).
  Dim3 cluster;
  UnitSpec unit;
  uint32_t capacity = 0;    // event slots per trace unit
  Placement placement = Placement::kGlobal;  // as run (never kAuto in a recorded layout)
  BlockSample sample;
  ClockInfo clock;
  std::vector<SiteInfo> sites;  // indexed by site id: sites[i].id == i
  HostTimeAnchor host_anchor;   // set by RunKernel, kept by sidecars
  // Optional role table: unit_roles[u] names the role of trace unit u of every block (the
  // builder's role split: "producer", "consumer", ...); an empty string is a unit outside
  // any role. Empty (the default, and for sidecars written before it existed) when the
  // kernel has no role split; otherwise exactly UnitsPerBlock entries. The analysis groups
  // units by it (profiler/analysis/).
  std::vector<std::string> unit_roles;
  // Optional barrier table: the phase barriers whose ids event payloads carry, indexed by
  // id (barriers[i].id == i). Empty (the default, and for sidecars written before it
  // existed) when the kernel declares none or the producer does not know them: then
  // barriers are named by id ("barrier 3") and arrival counts are not checked. A payload
  // naming an id past a non-empty table is a verify finding, not a layout error.
  std::vector<BarrierInfo> barriers;
  // Optional, indexed by site id: what each site counts of its loop (SiteTrip). Empty (the
  // default, older sidecars) when nothing is known; otherwise sites.size() entries.
  std::vector<SiteTrip> site_trips;
  // Optional: the plan's exact event count (slots, payloads included) of trace unit u of
  // every sampled block, or -1 where the count depends on data (a branch, an upper-bounded
  // loop, an early return). Empty (the default, older sidecars, per-block plans) when not
  // known; otherwise UnitsPerBlock entries. A complete unit whose `attempted` differs from
  // its exact count is a verify finding (profiler/trace/plan_check.h).
  std::vector<int64_t> exact_events;
  // Optional: the user's label of each sampled block (KernelBuilder::BlockLabel), indexed by
  // sample ordinal (SampledBlockId): "seq 3 / partition 1". Empty (the default, older
  // sidecars) when the kernel has none; otherwise SampledBlocks entries.
  std::vector<std::string> block_labels;
  // Optional: what each grid dimension means, where a label part is exactly blockIdx.x, .y
  // or .z: {"", "seq", "partition"}. Empty when nothing is known; otherwise 3 entries.
  std::vector<std::string> grid_dim_names;
  friend bool operator==(const TraceLayout&, const TraceLayout&) = default;
};

// Threads in one trace unit of `layout` (32, 128, block size, or the custom count).
uint32_t UnitThreads(const TraceLayout& layout);
// Trace units per block.
uint32_t UnitsPerBlock(const TraceLayout& layout);
// The trace's link scope (format/links.h): the cluster when the layout has a cluster of
// more than one CTA, else the block.
LinkScope LinkScopeOf(const TraceLayout& layout);
// Blocks per instance of the link scope: the shortest run of consecutive linear block ids
// that holds whole clusters. 1 without clusters; a cluster's CTAs when they are consecutive
// (ClusterIsContiguous); else the grid rows (cluster (cx, cy, 1): gx x cy) or planes
// (gx x gy x cz) its clusters span, so one instance may hold several clusters, their CTAs
// interleaved (ClusterLinear tells them apart).
uint32_t BlocksPerLinkScope(const TraceLayout& layout);
// Records per instance of the link scope: records [k n, (k + 1) n) of the buffer belong to
// one instance (UnitsPerBlock, at least 1, times BlocksPerLinkScope).
uint32_t RecordsPerLinkScope(const TraceLayout& layout);
// Whether every cluster's CTAs are consecutive linear block ids (x fastest): a cluster of
// shape (cx, 1, 1), (gx, cy, 1) or (gx, gy, cz) in a grid (gx, gy, gz); so its records are
// consecutive in the buffer when whole clusters are sampled.
bool ClusterIsContiguous(const TraceLayout& layout);
bool ClusterIsContiguous(const Dim3& grid, const Dim3& cluster);
// Where a block sits in its cluster: the cluster's index in the grid of clusters and the
// block's rank in it (x fastest, as %cluster_ctarank); {block, 0} without clusters.
struct ClusterPosition {
  Dim3 cluster;       // %clusterid
  uint32_t rank = 0;  // %cluster_ctarank
};
ClusterPosition ClusterOfBlock(const TraceLayout& layout, const Dim3& block_index);
// The linear id of the block's cluster in the grid of clusters (x fastest); the block's own
// linear id without clusters.
uint32_t ClusterLinear(const TraceLayout& layout, const Dim3& block_index);
// Number of blocks that record (the sample clamped to the grid).
uint64_t SampledBlocks(const TraceLayout& layout);
// Linear block id of the `ordinal`-th sampled block.
uint64_t SampledBlockId(const TraceLayout& layout, uint64_t ordinal);
// Records in the buffer: SampledBlocks * UnitsPerBlock.
uint64_t NumRecords(const TraceLayout& layout);
// Bytes of the whole buffer.
uint64_t BufferBytes(const TraceLayout& layout);

// Checks the layout, with the numbers in every message. InvalidArgument for: a block size
// that is not a multiple of the unit size; a custom subset outside the block or a recorder
// outside its subset; capacity 0; a buffer whose byte size overflows 64 bits; more sites
// than the tag holds (2^30); site ids that are not 0..n-1 in order; an empty sample;
// shared placement whose bytes exceed `shared_budget_bytes` (when non-zero); kAuto
// placement (a recorded layout says what ran); a non-empty role table whose size is not
// UnitsPerBlock; barrier ids that are not 0..n-1 in order, or an empty barrier name.
absl::Status ValidateLayout(const TraceLayout& layout, uint64_t shared_budget_bytes = 0);

// Shared-memory bytes that shared placement needs per block.
uint64_t SharedBytesPerBlock(const TraceLayout& layout);

// blockIdx of linear block id `block_linear` in `grid`.
Dim3 BlockIndex(const Dim3& grid, uint32_t block_linear);

// How every message names a trace unit: "block (3,0,0) warpgroup 1" (the unit kind's name,
// then the unit's index within its block).
std::string UnitName(const Dim3& block_index, UnitKind kind, uint32_t unit_index);
std::string UnitName(const TraceLayout& layout, uint32_t block_linear, uint32_t unit_index);
// A timeline track's name: UnitName with the block's label in brackets after the block when
// the layout has labels, and the unit's role appended when the layout has a role table and
// the unit has a role: "block (0,3,1) [seq 3 / partition 1] warpgroup 0 producer".
// With a cluster shape the block's cluster and CTA rank follow the block:
// "block (3,0,0) cluster (1,0,0) rank 1 [seq 3] warp 0".
std::string UnitTrackName(const TraceLayout& layout, const Dim3& block_index,
                          uint32_t unit_index);

// The user's label of block `block_linear` (TraceLayout::block_labels), or "" when it has
// none (no label table, or a block the sample does not record).
const std::string& BlockLabelOf(const TraceLayout& layout, uint32_t block_linear);

// How messages and outputs name barrier `id`: its table name ("full[2]") when the table has
// it, else "barrier 3".
std::string BarrierName(const TraceLayout& layout, uint32_t id);

const char* UnitKindName(UnitKind kind);          // "warp", "warpgroup", "block", "custom"
const char* PlacementName(Placement placement);   // "global", "shared", "auto"
const char* SiteKindName(SiteKind kind);          // "region", "loop_body", "barrier_wait", "kernel"
const char* TripBoundName(TripBound bound);       // "none", "exact", "upper_bound"
absl::StatusOr<UnitKind> ParseUnitKind(absl::string_view name);
absl::StatusOr<Placement> ParsePlacement(absl::string_view name);
absl::StatusOr<SiteKind> ParseSiteKind(absl::string_view name);
// "none", "cp.async", "bulk", "tma_1d" .. "tma_5d", "tma_store_1d" .. "tma_store_5d".
const char* CopyEngineName(CopyEngine engine);
absl::StatusOr<CopyEngine> ParseCopyEngine(absl::string_view name);
absl::StatusOr<TripBound> ParseTripBound(absl::string_view name);

}  // namespace warptrace

#endif  // WARPTRACE_FORMAT_LAYOUT_H_
