// One unit's events in the order the Perfetto writer (perfetto_writer.h) writes them, and
// the flow arrows bound to them. Internal.
//
//   UnitOps ops;
//   ops.Start(unit);
//   RETURN_IF_ERROR(checker.Next(unit, ops));         // begins and ends, in time order
//   RETURN_IF_ERROR(ops.AddHandoffs(unit, layout));   // instants, async spans, flows
//   for (const Op& op : ops.ops()) ...
//
// The slices' begins and ends come from TimelineChecker (timeline_check.h) as it checks
// them (Open / Close: one loop over the slices); AddHandoffs relies on the checked unit and
// checks nothing of the contract again.
//
// Not thread-safe; the vectors are reused from unit to unit.
#ifndef WARPTRACE_PROFILER_OUTPUTS_PERFETTO_UNIT_OPS_H_
#define WARPTRACE_PROFILER_OUTPUTS_PERFETTO_UNIT_OPS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "format/layout.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {
namespace perfetto_internal {

// One event of the current unit, in time order: a slice begin or end on the unit's track,
// an instant there (a barrier arrival), or an async span's begin or end on its lane.
enum class OpKind : uint8_t { kBegin, kEnd, kInstant, kAsyncBegin, kAsyncEnd };
struct Op {
  int64_t time;
  uint32_t index;  // the slice, instant or async span (UnitTimeline's vectors)
  OpKind kind;
  bool repaired;
};

// A flow arrow starting (flow_ids) or ending (terminating_flow_ids) at ops()[op].
struct OpFlow {
  uint32_t op;
  uint64_t id;  // Flow::id + 1 (Perfetto's flow ids are nonzero)
  bool terminating;
};

class UnitOps {
 public:
  // Clears the ops and flows for `unit`, which must outlive the calls below.
  void Start(const UnitTimeline& unit) {
    unit_ = &unit;
    ops_.clear();
    op_flows_.clear();
    ops_.reserve(2 * unit.slices.size());
  }
  // TimelineChecker's visitor: slice `i` begins / ends (in time order, ends innermost first).
  void Open(uint32_t i) {
    const Slice& s = unit_->slices[i];
    ops_.push_back({s.begin_ns, i, OpKind::kBegin, s.repaired});
  }
  void Close(uint32_t i) { ops_.push_back({unit_->slices[i].end_ns, i, OpKind::kEnd, false}); }

  // Merges the unit's instants and async span begins/ends into the ops (by time; at equal
  // times after the slices' events) and attaches every flow to the op it starts or ends
  // at: an arrival instant or an async issue (flow_ids), the released wait's end or an
  // async completion (terminating_flow_ids). InvalidArgument, naming the unit and the flow,
  // when a flow's end on this unit is none of these: Perfetto binds an arrow to events, so
  // a flow the Timeline contract allows (an unresolved released_wait) cannot be drawn.
  absl::Status AddHandoffs(const UnitTimeline& unit, const TraceLayout& layout);

  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<OpFlow>& flows() const { return op_flows_; }  // sorted by op

 private:
  absl::Status AttachFlows(const UnitTimeline& unit, const TraceLayout& layout);

  const UnitTimeline* unit_ = nullptr;
  std::vector<Op> ops_;
  std::vector<Op> extra_ops_;
  std::vector<Op> merged_ops_;
  std::vector<OpFlow> op_flows_;
  std::vector<uint32_t> slice_end_op_, instant_op_, async_begin_op_, async_end_op_;
  std::vector<std::pair<uint32_t, uint32_t>> async_begins_, async_ends_;  // (event, span)
};

}  // namespace perfetto_internal
}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_PERFETTO_UNIT_OPS_H_
