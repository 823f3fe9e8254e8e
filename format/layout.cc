#include "format/layout.h"

#include <algorithm>

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/trace_abi.h"

namespace warptrace {
namespace {

constexpr uint32_t kWarpThreads = 32;
constexpr uint32_t kWarpgroupThreads = 128;

uint64_t SampleEnd(const TraceLayout& layout) {
  const uint64_t blocks = layout.grid.Count();
  return layout.sample.end < blocks ? layout.sample.end : blocks;
}

}  // namespace

uint32_t UnitThreads(const TraceLayout& layout) {
  switch (layout.unit.kind) {
    case UnitKind::kWarp:
      return kWarpThreads;
    case UnitKind::kWarpgroup:
      return kWarpgroupThreads;
    case UnitKind::kBlock:
      return static_cast<uint32_t>(layout.block.Count());
    case UnitKind::kCustom:
      return layout.unit.num_threads;
  }
  return 0;
}

uint32_t UnitsPerBlock(const TraceLayout& layout) {
  const uint32_t unit = UnitThreads(layout);
  if (layout.unit.kind == UnitKind::kCustom) return 1;
  if (unit == 0) return 0;
  return static_cast<uint32_t>(layout.block.Count() / unit);
}

bool ClusterIsContiguous(const Dim3& g, const Dim3& c) {
  return (c.y == 1 && c.z == 1) || (c.x == g.x && c.z == 1) || (c.x == g.x && c.y == g.y);
}

bool ClusterIsContiguous(const TraceLayout& layout) {
  return ClusterIsContiguous(layout.grid, layout.cluster);
}

// The cluster whenever it has more than one CTA: payloads then name cluster-wide barrier
// ids (PhaseBarrierDecl::cluster_ids), and a remote arrival links to the wait it released in
// the peer. A scope instance is the shortest run of consecutive blocks that holds whole
// clusters (BlocksPerLinkScope), so that its records are consecutive.
LinkScope LinkScopeOf(const TraceLayout& layout) {
  return layout.cluster.Count() > 1 ? LinkScope::kCluster : LinkScope::kBlock;
}

uint32_t BlocksPerLinkScope(const TraceLayout& layout) {
  const Dim3& c = layout.cluster;
  const Dim3& g = layout.grid;
  if (LinkScopeOf(layout) != LinkScope::kCluster) return 1;
  if (ClusterIsContiguous(layout)) return static_cast<uint32_t>(c.Count());
  // Clusters span cy rows of the grid (cz == 1), else cz planes: every cluster of those
  // rows (planes) is whole in them.
  if (c.z == 1) return g.x * c.y;
  return g.x * g.y * c.z;
}

uint32_t ClusterLinear(const TraceLayout& layout, const Dim3& block_index) {
  const Dim3& c = layout.cluster;
  if (c.x == 0 || c.y == 0 || c.z == 0) return 0;
  const ClusterPosition p = ClusterOfBlock(layout, block_index);
  const uint32_t clusters_x = layout.grid.x / c.x, clusters_y = layout.grid.y / c.y;
  return p.cluster.x + clusters_x * (p.cluster.y + clusters_y * p.cluster.z);
}

ClusterPosition ClusterOfBlock(const TraceLayout& layout, const Dim3& b) {
  const Dim3& c = layout.cluster;
  if (c.x == 0 || c.y == 0 || c.z == 0) return {b, 0};
  ClusterPosition p;
  p.cluster = {b.x / c.x, b.y / c.y, b.z / c.z};
  p.rank = b.x % c.x + c.x * (b.y % c.y + c.y * (b.z % c.z));
  return p;
}

uint32_t RecordsPerLinkScope(const TraceLayout& layout) {
  switch (LinkScopeOf(layout)) {
    case LinkScope::kBlock:
      return std::max<uint32_t>(1, UnitsPerBlock(layout));
    case LinkScope::kCluster:  // whole clusters' blocks, consecutive
      return std::max<uint32_t>(1, UnitsPerBlock(layout)) * BlocksPerLinkScope(layout);
  }
  return std::max<uint32_t>(1, UnitsPerBlock(layout));
}

uint64_t SampledBlocks(const TraceLayout& layout) {
  const uint64_t end = SampleEnd(layout);
  if (layout.sample.stride == 0 || layout.sample.begin >= end) return 0;
  return (end - layout.sample.begin + layout.sample.stride - 1) / layout.sample.stride;
}

uint64_t SampledBlockId(const TraceLayout& layout, uint64_t ordinal) {
  return layout.sample.begin + ordinal * layout.sample.stride;
}

uint64_t NumRecords(const TraceLayout& layout) {
  return SampledBlocks(layout) * UnitsPerBlock(layout);
}

uint64_t BufferBytes(const TraceLayout& layout) {
  return abi::BufferBytes(NumRecords(layout), layout.capacity);
}

uint64_t SharedBytesPerBlock(const TraceLayout& layout) {
  return uint64_t{UnitsPerBlock(layout)} * layout.capacity * sizeof(abi::Event);
}

namespace {

// Grid, block and trace unit: the shape every record follows.
absl::Status ValidateShape(const TraceLayout& layout) {
  const uint64_t block_threads = layout.block.Count();
  if (layout.grid.Count() == 0 || block_threads == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "grid (%d,%d,%d) and block (%d,%d,%d) must have every dimension >= 1", layout.grid.x,
        layout.grid.y, layout.grid.z, layout.block.x, layout.block.y, layout.block.z));
  }
  if (layout.grid.Count() > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "grid has %d blocks; the trace header holds a 32-bit linear block id",
        layout.grid.Count()));
  }
  switch (layout.unit.kind) {
    case UnitKind::kWarp:
    case UnitKind::kWarpgroup: {
      const uint32_t unit = UnitThreads(layout);
      if (block_threads % unit != 0) {
        // Offer the multiples of the unit around the block (never a block of 0 threads).
        const uint64_t below = block_threads / unit * unit;
        const uint64_t above = below + unit;
        const std::string sizes =
            below == 0 ? absl::StrFormat("%d", above) : absl::StrFormat("%d or %d", below, above);
        return absl::InvalidArgumentError(absl::StrFormat(
            "block size %d (%d,%d,%d) is not a multiple of the %s size %d: the last %d "
            "threads would share no trace; use a block of %s threads, or a unit that fits "
            "(%s; left unset, the trace unit is chosen to fit the block)",
            block_threads, layout.block.x, layout.block.y, layout.block.z,
            UnitKindName(layout.unit.kind), unit, block_threads % unit, sizes,
            block_threads % 32 == 0 ? "warp or block" : "block"));
      }
      break;
    }
    case UnitKind::kBlock:
      break;
    case UnitKind::kCustom:
      if (layout.unit.num_threads == 0) {
        return absl::InvalidArgumentError("custom trace unit has 0 threads");
      }
      if (uint64_t{layout.unit.first_thread} + layout.unit.num_threads > block_threads) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "custom trace unit covers threads [%d, %d) but the block has only %d threads",
            layout.unit.first_thread,
            uint64_t{layout.unit.first_thread} + layout.unit.num_threads, block_threads));
      }
      if (layout.unit.recorder_offset >= layout.unit.num_threads) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "custom trace unit's recorder offset %d is outside its %d threads",
            layout.unit.recorder_offset, layout.unit.num_threads));
      }
      break;
  }
  return absl::OkStatus();
}

// The cluster shape divides the grid, and a trace of clusters samples whole link scope
// instances (BlocksPerLinkScope: a cluster link scope must see every CTA a hand-off link may
// reach).
absl::Status ValidateClusterSample(const TraceLayout& layout) {
  const Dim3& c = layout.cluster;
  const Dim3& g = layout.grid;
  if (c.Count() == 0 || c.Count() > 16 || g.x % c.x != 0 || g.y % c.y != 0 ||
      g.z % c.z != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cluster (%d,%d,%d) must have 1 to 16 CTAs and divide the grid (%d,%d,%d)", c.x, c.y,
        c.z, g.x, g.y, g.z));
  }
  if (c.Count() == 1) return absl::OkStatus();
  const uint64_t n = BlocksPerLinkScope(layout);
  const uint64_t end = std::min<uint64_t>(layout.sample.end, g.Count());
  if (layout.sample.stride != 1 || layout.sample.begin % n != 0 || end % n != 0) {
    if (n == c.Count()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "block sample [%d, %d) step %d does not take whole clusters of %d CTAs: with "
          "clusters the sample's step must be 1 and its bounds multiples of %d",
          layout.sample.begin, layout.sample.end, layout.sample.stride, n, n));
    }
    return absl::InvalidArgumentError(absl::StrFormat(
        "block sample [%d, %d) step %d does not take whole clusters of %d CTAs: a cluster "
        "(%d,%d,%d) spans rows of the grid (%d,%d,%d), so the sample's step must be 1 and its "
        "bounds multiples of %d blocks (the rows or planes that hold whole clusters)",
        layout.sample.begin, layout.sample.end, layout.sample.stride, c.Count(), c.x, c.y,
        c.z, g.x, g.y, g.z, n));
  }
  return absl::OkStatus();
}

// Capacity, sampling and the buffer's size.
absl::Status ValidateCapacity(const TraceLayout& layout) {
  if (layout.capacity == 0) {
    return absl::InvalidArgumentError(
        "capacity is 0 events per trace unit: nothing could be recorded");
  }
  if (layout.sample.stride == 0) {
    return absl::InvalidArgumentError("block sample stride is 0; use 1 to record every block");
  }
  if (SampledBlocks(layout) == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "block sample [%d, %d) step %d selects no block of the %d-block grid",
        layout.sample.begin, layout.sample.end, layout.sample.stride, layout.grid.Count()));
  }
  if (absl::Status s = ValidateClusterSample(layout); !s.ok()) return s;
  const unsigned __int128 bytes = static_cast<unsigned __int128>(NumRecords(layout)) *
                                  abi::RecordBytes(layout.capacity);
  if (bytes > std::numeric_limits<uint64_t>::max() ||
      layout.capacity > (std::numeric_limits<uint32_t>::max() - abi::kHeaderWords) / 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "trace buffer of %d records x %d events overflows: reduce the capacity or sample "
        "fewer blocks",
        NumRecords(layout), layout.capacity));
  }
  return absl::OkStatus();
}

// The site, role, trip and barrier tables.
absl::Status ValidateTables(const TraceLayout& layout) {
  if (layout.sites.size() > abi::kMaxSites) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d record sites exceed the %d the tag can hold (bit 31 is the exit flag)",
        layout.sites.size(), uint64_t{abi::kMaxSites}));
  }
  for (size_t i = 0; i < layout.sites.size(); ++i) {
    if (layout.sites[i].id != i) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "site table entry %d (\"%s\") has id %d; ids must be 0..%d in order", i,
          layout.sites[i].name, layout.sites[i].id, layout.sites.size() - 1));
    }
  }
  for (const SiteInfo& site : layout.sites) {
    if (site.kind != SiteKind::kAsyncCopy &&
        (site.copy_engine != CopyEngine::kNone || site.copy_bytes != 0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "site %d (\"%s\") is a %s site but has a copy engine (%s) or bytes (%d); only "
          "async_copy sites do",
          site.id, site.name, SiteKindName(site.kind), CopyEngineName(site.copy_engine),
          site.copy_bytes));
    }
    if (site.multicast && site.kind != SiteKind::kAsyncCopy) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "site %d (\"%s\") is a %s site marked multicast; only async_copy sites are",
          site.id, site.name, SiteKindName(site.kind)));
    }
    if (site.end_observed &&
        (site.kind != SiteKind::kAsyncCopy || !CompletesOnBarrier(site.copy_engine))) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "site %d (\"%s\") is a %s site (copy engine %s) marked end_observed; only "
          "async_copy sites of a copy on a phase barrier (bulk, TMA load) are",
          site.id, site.name, SiteKindName(site.kind), CopyEngineName(site.copy_engine)));
    }
    if (site.ends_at_waits && GroupClassOf(site) == GroupClass::kNone) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "site %d (\"%s\") is a %s site (copy engine %s) marked ends_at_waits; only group "
          "sites are (mma_group, async_copy with engine cp.async or tma_store_*)",
          site.id, site.name, SiteKindName(site.kind), CopyEngineName(site.copy_engine)));
    }
  }
  if (!layout.site_trips.empty() && layout.site_trips.size() != layout.sites.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the site trip table has %d entries but there are %d sites", layout.site_trips.size(),
        layout.sites.size()));
  }
  if (!layout.exact_events.empty() && layout.exact_events.size() != UnitsPerBlock(layout)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the exact-events table has %d entries but a block has %d trace units",
        layout.exact_events.size(), UnitsPerBlock(layout)));
  }
  if (!layout.block_labels.empty() && layout.block_labels.size() != SampledBlocks(layout)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the block label table has %d entries but %d blocks are sampled; give one label per "
        "sampled block (or none)",
        layout.block_labels.size(), SampledBlocks(layout)));
  }
  if (!layout.grid_dim_names.empty() && layout.grid_dim_names.size() != 3) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the grid dimension names have %d entries; give 3 (x, y, z; \"\" for an unnamed one) "
        "or none",
        layout.grid_dim_names.size()));
  }
  if (!layout.unit_roles.empty() && layout.unit_roles.size() != UnitsPerBlock(layout)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "role table names %d trace units but a block has %d; give one role per unit (or "
        "none)",
        layout.unit_roles.size(), UnitsPerBlock(layout)));
  }
  for (size_t i = 0; i < layout.barriers.size(); ++i) {
    const BarrierInfo& b = layout.barriers[i];
    if (b.id != i) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "barrier table entry %d (\"%s\") has id %d; ids must be 0..%d in order", i, b.name,
          b.id, layout.barriers.size() - 1));
    }
    if (b.name.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "barrier table entry %d has an empty name; name it as the builder declared it "
          "(e.g. \"full[2]\")",
          i));
    }
  }
  return absl::OkStatus();
}

// Where the events were staged, and whether they fit.
absl::Status ValidatePlacement(const TraceLayout& layout, uint64_t shared_budget_bytes) {
  if (layout.placement == Placement::kAuto) {
    return absl::InvalidArgumentError(
        "a recorded layout must say which placement ran (global or shared), not auto");
  }
  if (layout.placement == Placement::kShared && shared_budget_bytes != 0 &&
      SharedBytesPerBlock(layout) > shared_budget_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "shared placement needs %d bytes per block (%d units x %d events x 8 bytes) but the "
        "shared-memory budget is %d bytes: use global placement or a smaller capacity",
        SharedBytesPerBlock(layout), UnitsPerBlock(layout), layout.capacity,
        shared_budget_bytes));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateLayout(const TraceLayout& layout, uint64_t shared_budget_bytes) {
  // In order: each check may rely on the ones before it (e.g. a block of at least 1 thread).
  if (absl::Status s = ValidateShape(layout); !s.ok()) return s;
  if (absl::Status s = ValidateCapacity(layout); !s.ok()) return s;
  if (absl::Status s = ValidateTables(layout); !s.ok()) return s;
  return ValidatePlacement(layout, shared_budget_bytes);
}

Dim3 BlockIndex(const Dim3& grid, uint32_t block_linear) {
  const uint64_t gx = grid.x == 0 ? 1 : grid.x;
  const uint64_t gy = grid.y == 0 ? 1 : grid.y;
  Dim3 d;
  d.x = static_cast<uint32_t>(block_linear % gx);
  d.y = static_cast<uint32_t>(block_linear / gx % gy);
  d.z = static_cast<uint32_t>(block_linear / (gx * gy));
  return d;
}

// The names a dump makes per unit are StrCat's, not StrFormat's: Debian's absl terminates the
// process when an allocation inside StrFormat fails (its formatting code lets no exception
// through), and a dump under a memory limit must fail with a message instead
// (//tests/profiler/cli:dump_out_of_memory_test).
namespace {
std::string BlockName(const Dim3& b) {
  return absl::StrCat("block (", b.x, ",", b.y, ",", b.z, ")");
}
}  // namespace

std::string UnitName(const Dim3& block_index, UnitKind kind, uint32_t unit_index) {
  return absl::StrCat(BlockName(block_index), " ", UnitKindName(kind), " ", unit_index);
}

std::string UnitName(const TraceLayout& layout, uint32_t block_linear, uint32_t unit_index) {
  return UnitName(BlockIndex(layout.grid, block_linear), layout.unit.kind, unit_index);
}

const std::string& BlockLabelOf(const TraceLayout& layout, uint32_t block_linear) {
  static const std::string* const kNone = new std::string();
  const BlockSample& s = layout.sample;
  if (layout.block_labels.empty() || block_linear < s.begin || s.stride == 0 ||
      (block_linear - s.begin) % s.stride != 0) {
    return *kNone;
  }
  const uint64_t ordinal = (block_linear - s.begin) / s.stride;
  return ordinal < layout.block_labels.size() ? layout.block_labels[ordinal] : *kNone;
}

std::string UnitTrackName(const TraceLayout& layout, const Dim3& block_index,
                          uint32_t unit_index) {
  std::string name = UnitName(block_index, layout.unit.kind, unit_index);
  const uint64_t linear =
      block_index.x + uint64_t{layout.grid.x} * (block_index.y + uint64_t{layout.grid.y} *
                                                                     block_index.z);
  const size_t block_end = BlockName(block_index).size();
  if (const std::string& label = BlockLabelOf(layout, static_cast<uint32_t>(linear));
      !label.empty()) {
    name.insert(block_end, absl::StrCat(" [", label, "]"));
  }
  if (layout.cluster.Count() > 1) {  // "block (3,0,0) cluster (1,0,0) rank 1 warp 0"
    const ClusterPosition p = ClusterOfBlock(layout, block_index);
    name.insert(block_end, absl::StrCat(" cluster (", p.cluster.x, ",", p.cluster.y, ",",
                                        p.cluster.z, ") rank ", p.rank));
  }
  if (unit_index < layout.unit_roles.size() && !layout.unit_roles[unit_index].empty()) {
    absl::StrAppend(&name, " ", layout.unit_roles[unit_index]);
  }
  return name;
}

std::string BarrierName(const TraceLayout& layout, uint32_t id) {
  if (id < layout.barriers.size()) return layout.barriers[id].name;
  return absl::StrCat("barrier ", id);
}

namespace {

constexpr EnumTable<UnitKind, 4> kUnitKinds{"trace unit", {{
    {UnitKind::kWarp, "warp"},
    {UnitKind::kWarpgroup, "warpgroup"},
    {UnitKind::kBlock, "block"},
    {UnitKind::kCustom, "custom"},
}}};
static_assert(kUnitKinds.Covers(4));

constexpr EnumTable<Placement, 3> kPlacements{"placement", {{
    {Placement::kGlobal, "global"},
    {Placement::kShared, "shared"},
    {Placement::kAuto, "auto"},
}}};
static_assert(kPlacements.Covers(3));

constexpr EnumTable<TripBound, 3> kTripBounds{"trip bound", {{
    {TripBound::kNone, "none"},
    {TripBound::kExact, "exact"},
    {TripBound::kUpperBound, "upper_bound"},
}}};
static_assert(kTripBounds.Covers(3));

}  // namespace

const char* UnitKindName(UnitKind kind) { return kUnitKinds.Name(kind); }
const char* PlacementName(Placement placement) { return kPlacements.Name(placement); }
const char* SiteKindName(SiteKind kind) { return kSiteKinds.Name(kind); }
const char* TripBoundName(TripBound bound) { return kTripBounds.Name(bound); }
const char* CopyEngineName(CopyEngine engine) { return kCopyEngines.Name(engine); }
absl::StatusOr<UnitKind> ParseUnitKind(absl::string_view name) { return kUnitKinds.Parse(name); }
absl::StatusOr<Placement> ParsePlacement(absl::string_view name) {
  return kPlacements.Parse(name);
}
absl::StatusOr<TripBound> ParseTripBound(absl::string_view name) {
  return kTripBounds.Parse(name);
}
absl::StatusOr<SiteKind> ParseSiteKind(absl::string_view name) { return kSiteKinds.Parse(name); }
absl::StatusOr<CopyEngine> ParseCopyEngine(absl::string_view name) {
  return kCopyEngines.Parse(name);
}

}  // namespace warptrace
