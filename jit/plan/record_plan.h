// RecordPlan: where a kernel records and how many events each trace unit can record, known
// before anything runs, so the trace buffer is sized exactly and can never overflow.
//
// Record sites, numbered in builder (preorder) order:
//   * the whole kernel (site 0 when RecordPolicy::kernel), named after the kernel;
//   * every named region;
//   * with RecordPolicy::loop_iterations, each iteration of every loop whose trip count or
//     bound is known, named "loop <var>";
//   * with RecordPolicy::barrier_waits (or BarrierRecord::kAlways), each barrier's wait,
//     from arrival to release, named after the barrier (also named barriers' syncs);
//   * with RecordPolicy::handoffs (on by default), each phase barrier arrival (an instant
//     named "arrive <array>"), each phase wait (a span named "wait <array>") and each async
//     copy (an async span from issue to observed completion, named after the copy), every
//     event with a payload slot (format/links.h), so each costs 2 slots.
// Policy-made sites (loop iterations, barrier waits) are placed only where their count is
// bounded, i.e. not inside a loop of TripCount::Unknown(); a named region (or a barrier
// with BarrierRecord::kAlways) there is an error.
// Each span site records 2 events (enter, exit) per execution; an arrival 1 event and its
// payload (2 slots); a phase wait 2 events, only the exit with a payload (3 slots: the
// enter's is derived, format/links.h); a copy on a phase barrier its begin with payload
// (2 slots: the dump derives its end from the recorded waits on its phase), or, where no
// unit's recorder runs a recorded wait on its barrier (SiteInfo::end_observed, e.g. block
// units), its begin and the end its issuer observes, each with payload (4 slots; counted
// where it is issued: every copy is awaited, which Build() checks); a cp.async group its
// begin and end (2 slots). Arrivals by ArriveBy::kOneThread and bulk copies (issued by the
// role's first thread) count only for the unit whose recorder is that thread.
//
// Counting. The plan follows the path of each trace unit's recorder thread (the thread
// that writes the unit's events): a region adds 2, a loop multiplies its body by its trip
// count (or bound), a branch takes the larger side (and the smaller for the minimum), a
// role split takes the role the recorder thread is in, an early return counts the exits
// of the sites it leaves. The result per unit is a range [min, max]; the capacity is the
// largest max over units, the exact maximum any unit can record. When min == max for a
// unit (no data-dependent branch, upper-bounded loop or early return changes its count),
// ExactEventsForUnit gives the exact number every run records.
//
// Per-block loops (TripCount::PerBlock, a persistent kernel's tile loop). Their trip count
// is an expression of blockIdx, gridDim, blockDim and the kernel's integer scalars, so a
// plan is made for one launch: Create takes the launch's scalar values and evaluates each
// expression for every sampled block. Counts are then exact per block and per unit
// (EventsForBlockUnit, ExactEventsForBlockUnit), the capacity is the largest over the
// launch's blocks, and Explain shows each expression with its range over the blocks.
// Blocks with the same trip counts share one count, so the cost grows with the number of
// distinct per-block trip vectors, not with the grid.
//
// Placement. kGlobal writes events straight to the buffer. kShared stages them in a static
// shared array of units_per_block * capacity * 8 bytes, copied out in the epilogue.
// kAuto chooses shared when the staging array fits the budget left by the kernel's own
// shared memory: shared_budget_bytes - static shared - dynamic shared (the default budget,
// 48 KiB, is what every GPU gives a block without opting in), and global otherwise.
//
//   ProfileOptions options;
//   options.unit = UnitSpec::Warpgroup();
//   ASSIGN_OR_RETURN(RecordPlan plan, RecordPlan::Create(kernel, options));
//   plan.capacity();       // 258
//   std::cout << plan.Explain();
//
// Thread-safety: a RecordPlan is an immutable value.
#ifndef WARPTRACE_JIT_PLAN_RECORD_PLAN_H_
#define WARPTRACE_JIT_PLAN_RECORD_PLAN_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/layout.h"
#include "jit/builder/kernel.h"
#include "jit/plan/per_block_exprs.h"  // LaunchScalars

namespace warptrace {

struct RecordPolicy {
  bool loop_iterations = false;  // a loop-body site per iteration of bounded loops
  bool barrier_waits = false;    // a barrier-wait site per BarrierRecord::kByPolicy barrier
  bool kernel = true;            // a site spanning the whole kernel, per unit
  // Phase barrier arrivals, phase waits and async copies, with their links' payloads.
  bool handoffs = true;
  // wgmma groups (KernelBuilder::MmaGroup) as async spans, commit to retiring wait.
  bool mma_groups = true;
  friend bool operator==(const RecordPolicy&, const RecordPolicy&) = default;
};

struct ProfileOptions {
  // Off: the emitted kernel has no trace parameter and no record code (no plan is made).
  bool enabled = true;
  // The trace unit. Unset, the plan chooses one that fits the block: a warpgroup if the
  // block is a multiple of 128 threads, else a warp if it is a multiple of 32, else the
  // block; Explain() says which and why.
  std::optional<UnitSpec> unit;
  Placement placement = Placement::kAuto;
  RecordPolicy policy;
  BlockSample sample;
  // Shared bytes per block auto placement may fill (with the kernel's own shared memory).
  uint64_t shared_budget_bytes = 48 * 1024;
  // Overrides the capacity written to the buffer. RunKernel's one retry sets it to the
  // capacity a dropped-events trace showed was needed (jit/run/run.cc); tests set it too
  // small to exercise dropped events. The plan's own numbers (max_events, Explain) are
  // unchanged.
  std::optional<uint32_t> capacity_override;
  // On the host backend, every thread counts the iterations of each TripCount::Exact loop
  // and a count that differs fails the launch, naming the thread's warp and the loop (the
  // trace holds one thread per unit; format/recorder.cuh, WARPTRACE_TRIPS_*). Costs the
  // host a counter and a compare per loop; compiles to nothing on a GPU. Off: only the
  // trace's counts are checked, as on a GPU (profiler/trace/plan_check.h).
  bool host_trip_checks = true;
};

// The events one trace unit records on some path through the kernel.
struct EventRange {
  uint64_t min = 0;
  uint64_t max = 0;
  bool exact() const { return min == max; }
  friend bool operator==(const EventRange&, const EventRange&) = default;
};

class RecordPlan {
 public:
  // InvalidArgument for: a region, or a barrier with BarrierRecord::kAlways, inside a loop
  // of unknown trip count (naming the loop and the fix), a unit that does not fit the
  // block (see ValidateLayout), a profiled kernel with no record site, a count over
  // 2^32 - 1 events per unit, explicit shared placement that exceeds the static shared
  // limit (48 KiB with the kernel's own static shared arrays), a capacity override of 0,
  // or `options.enabled` false; for a per-block trip count (naming the loop): an
  // expression that does not parse, reads a name that is not an integer scalar
  // parameter, reads a scalar missing from `scalars`, fails to evaluate (division by zero,
  // overflow) or is negative for a block.
  static absl::StatusOr<RecordPlan> Create(const Kernel& kernel, const ProfileOptions& options,
                                           const LaunchScalars& scalars = {});

  // Exact maximum events of any trace unit (before any capacity override).
  uint64_t max_events() const { return max_events_; }
  // Event slots per unit in the buffer: max_events or the override.
  uint32_t capacity() const { return layout_.capacity; }
  Placement placement() const { return layout_.placement; }
  uint32_t units_per_block() const { return UnitsPerBlock(layout_); }
  uint64_t buffer_bytes() const { return BufferBytes(layout_); }
  // Static shared bytes of the staging array per block (0 for global placement).
  uint64_t staging_bytes() const;
  // The layout of a launch (kernel name, grid, block, unit, capacity, placement, sample
  // clamped to the grid, sites, the role table, and the barrier table: each phase barrier
  // element "full[2]" by id, with the kBarrierArrive events the block's units record per
  // phase, 0 when an arrival's recording depends on data or is off); device_name and clock
  // are left for the device to fill.
  const TraceLayout& layout() const { return layout_; }
  const std::vector<SiteInfo>& sites() const { return layout_.sites; }

  // The site a node records (region, loop iteration, barrier wait), by KernelNode::ordinal.
  std::optional<uint32_t> SiteOf(uint32_t node_ordinal) const;
  // That site's entry in sites(), or null when the node records none.
  const SiteInfo* SiteInfoOf(uint32_t node_ordinal) const;
  std::optional<uint32_t> kernel_site() const { return kernel_site_; }
  // ProfileOptions::host_trip_checks, for the emitter.
  bool host_trip_checks() const { return host_trip_checks_; }

  // Events unit `unit` (0 .. units_per_block-1) of any sampled block records, as a range
  // (over the blocks too, when a per-block loop makes blocks differ).
  EventRange EventsForUnit(uint32_t unit) const;
  // The exact count, when the unit's count depends neither on data nor on the block.
  // FailedPrecondition, naming the construct, when it does; OutOfRange for a unit index
  // past the block.
  absl::StatusOr<uint64_t> ExactEventsForUnit(uint32_t unit) const;
  // As above for unit `unit` of the block with linear id `block_linear`; a block that is
  // not sampled (or past the grid) records nothing: {0, 0}.
  EventRange EventsForBlockUnit(uint32_t block_linear, uint32_t unit) const;
  absl::StatusOr<uint64_t> ExactEventsForBlockUnit(uint32_t block_linear, uint32_t unit) const;
  // Whether the kernel has a per-block trip count (the plan is then for one launch).
  bool per_block() const { return !block_class_.empty(); }

  // The derivation as an indented tree, one line per construct that records, e.g.
  //   kernel gemm -> kernel 2 + loop k 256 = 258
  //     loop k x64 -> (region load 2 + region mma 2) x 64 = 256
  // then each unit's range and the buffer and placement arithmetic.
  std::string Explain() const;

 private:
  RecordPlan() = default;
  // Explain's lines after the tree: per-unit ranges, per-block note, capacity, buffer,
  // placement.
  std::string ExplainNumbers(const ProfileOptions& options, const std::string& per_block_note,
                             const std::string& placement_note) const;

  TraceLayout layout_;
  uint64_t max_events_ = 0;
  std::vector<std::optional<uint32_t>> site_of_node_;
  std::optional<uint32_t> kernel_site_;
  bool host_trip_checks_ = true;
  std::vector<EventRange> unit_events_;  // per unit, over all sampled blocks
  std::vector<std::string> unit_notes_;  // role and first data-dependent construct per unit
  // Per-block loops: the class (distinct per-block trip vector) of each sampled block, by
  // sample ordinal, and each class's per-unit ranges. Empty without per-block loops.
  std::vector<uint32_t> block_class_;
  std::vector<std::vector<EventRange>> class_events_;
  std::string explanation_;
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_PLAN_RECORD_PLAN_H_
