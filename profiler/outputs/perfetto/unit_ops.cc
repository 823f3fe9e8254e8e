#include "profiler/outputs/perfetto/unit_ops.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace warptrace {
namespace perfetto_internal {
namespace {

// The async span whose begin (or end) is event `event` in `index` ((event, span) pairs,
// sorted), or -1.
int64_t AsyncSpanAt(const std::vector<std::pair<uint32_t, uint32_t>>& index, uint32_t event) {
  auto it = std::lower_bound(index.begin(), index.end(), std::pair<uint32_t, uint32_t>{event, 0});
  return it != index.end() && it->first == event ? static_cast<int64_t>(it->second) : -1;
}

}  // namespace

absl::Status UnitOps::AddHandoffs(const UnitTimeline& unit, const TraceLayout& layout) {
  op_flows_.clear();
  if (unit.instants.empty() && unit.async_spans.empty() && unit.flows.empty()) {
    return absl::OkStatus();
  }
  extra_ops_.clear();
  for (size_t i = 0; i < unit.instants.size(); ++i) {
    extra_ops_.push_back({unit.instants[i].ns, static_cast<uint32_t>(i), OpKind::kInstant, false});
  }
  for (size_t i = 0; i < unit.async_spans.size(); ++i) {
    const AsyncSpan& a = unit.async_spans[i];
    extra_ops_.push_back({a.begin_ns, static_cast<uint32_t>(i), OpKind::kAsyncBegin, false});
    extra_ops_.push_back({a.end_ns, static_cast<uint32_t>(i), OpKind::kAsyncEnd, false});
  }
  auto by_time = [](const Op& a, const Op& b) { return a.time < b.time; };
  std::stable_sort(extra_ops_.begin(), extra_ops_.end(), by_time);
  merged_ops_.clear();
  std::merge(ops_.begin(), ops_.end(), extra_ops_.begin(), extra_ops_.end(),
             std::back_inserter(merged_ops_), by_time);
  ops_.swap(merged_ops_);
  return AttachFlows(unit, layout);
}

absl::Status UnitOps::AttachFlows(const UnitTimeline& unit, const TraceLayout& layout) {
  auto fail = [&](const Flow& f, absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat(UnitName(unit.block_index, layout.unit.kind, unit.unit_index), ": flow ",
                     f.id, " ", what, " (Perfetto draws a flow between two events)"));
  };
  slice_end_op_.assign(unit.slices.size(), 0);
  instant_op_.assign(unit.instants.size(), 0);
  async_begin_op_.assign(unit.async_spans.size(), 0);
  async_end_op_.assign(unit.async_spans.size(), 0);
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    const uint32_t at = static_cast<uint32_t>(i);
    switch (op.kind) {
      case OpKind::kEnd: slice_end_op_[op.index] = at; break;
      case OpKind::kInstant: instant_op_[op.index] = at; break;
      case OpKind::kAsyncBegin: async_begin_op_[op.index] = at; break;
      case OpKind::kAsyncEnd: async_end_op_[op.index] = at; break;
      case OpKind::kBegin: break;
    }
  }
  async_begins_.clear();
  async_ends_.clear();
  for (size_t i = 0; i < unit.async_spans.size(); ++i) {
    const uint32_t span = static_cast<uint32_t>(i);
    async_begins_.push_back({unit.async_spans[i].begin_event, span});
    async_ends_.push_back({unit.async_spans[i].end_event, span});
  }
  std::sort(async_begins_.begin(), async_begins_.end());
  std::sort(async_ends_.begin(), async_ends_.end());
  for (const Flow& f : unit.flows) {
    const bool from_issue = FlowStartsAtIssue(f.kind);
    const bool to_release = FlowEndsAtRelease(f);  // a derived copy end is a release too
    if (f.from.record_index == unit.record_index) {
      if (!from_issue) {
        auto it = std::lower_bound(unit.instants.begin(), unit.instants.end(), f.from.event,
                                   [](const Instant& in, uint32_t event) { return in.event < event; });
        if (it == unit.instants.end() || it->event != f.from.event) {
          return fail(f, absl::StrCat("starts at event ", f.from.event,
                                      ", which is no arrival instant of the unit"));
        }
        op_flows_.push_back({instant_op_[it - unit.instants.begin()], f.id + 1, false});
      } else {
        const int64_t span = AsyncSpanAt(async_begins_, f.from.event);
        if (span < 0) return fail(f, "starts at no async issue");
        op_flows_.push_back({async_begin_op_[span], f.id + 1, false});
      }
    }
    if (f.to.record_index == unit.record_index) {
      if (to_release) {
        // The released wait (FlowEnd::released_wait, found by the timeline).
        if (f.to.released_wait >= unit.slices.size()) {
          return fail(f, absl::StrCat("releases no wait slice (none ends at ", f.to.ns, " ns)"));
        }
        op_flows_.push_back({slice_end_op_[f.to.released_wait], f.id + 1, true});
      } else {
        const int64_t span = AsyncSpanAt(async_ends_, f.to.event);
        if (span < 0) return fail(f, "ends at no async completion");
        op_flows_.push_back({async_end_op_[span], f.id + 1, true});
      }
    }
  }
  std::stable_sort(op_flows_.begin(), op_flows_.end(),
                   [](const OpFlow& a, const OpFlow& b) { return a.op < b.op; });
  return absl::OkStatus();
}

}  // namespace perfetto_internal
}  // namespace warptrace
