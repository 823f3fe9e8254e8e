#include "profiler/analysis/duration_sink.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace warptrace {
namespace {

std::string RoleName(const TraceLayout& layout, uint32_t unit_index) {
  if (layout.unit_roles.empty() || unit_index >= layout.unit_roles.size()) return "all";
  return layout.unit_roles[unit_index].empty() ? "(none)" : layout.unit_roles[unit_index];
}

}  // namespace

absl::Status DurationSink::Begin(const TraceBegin& begin) {
  layout_ = begin.layout;
  kernel_name_ = layout_->kernel_name;
  loop_count_.assign(layout_->sites.size(), 0);
  return absl::OkStatus();
}

absl::Status DurationSink::AddUnit(const UnitView& unit) {
  const UnitTimeline& t = *unit.timeline;
  if (!t.has_record) return absl::OkStatus();
  if (!in_block_ || t.block_linear != block_) {
    if (in_block_) block_ns_.push_back(static_cast<double>(block_end_ - block_start_));
    in_block_ = true;
    block_ = t.block_linear;
    block_start_ = t.start_ns;
    block_end_ = t.end_ns;
  }
  block_start_ = std::min(block_start_, t.start_ns);
  block_end_ = std::max(block_end_, t.end_ns);
  const std::string role = RoleName(*layout_, t.unit_index);
  std::fill(loop_count_.begin(), loop_count_.end(), 0);
  stack_.clear();
  auto pop = [&] {
    const Open& o = stack_.back();
    const double self = static_cast<double>(o.dur - o.child_ns);
    o.all->self_ns += self;
    if (o.iteration != nullptr) o.iteration->self_ns += self;
    stack_.pop_back();
  };
  for (const Slice& slice : t.slices) {
    if (slice.site >= layout_->sites.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "block %d unit %d has a slice of site %d, outside the %d-site table", t.block_linear,
          t.unit_index, slice.site, layout_->sites.size()));
    }
    while (stack_.size() > slice.depth) pop();
    const SiteInfo& site = layout_->sites[slice.site];
    const int64_t dur = slice.end_ns - slice.begin_ns;
    int64_t index = stack_.empty() ? -1 : stack_.back().index;
    if (site.kind == SiteKind::kLoopBody) index = loop_count_[slice.site]++;
    if (!stack_.empty()) stack_.back().child_ns += dur;
    Sample* all = &samples_[Key(role, site.name, -1)];
    all->kind = site.kind;
    all->durations.push_back(static_cast<double>(dur));
    Sample* iteration = nullptr;
    if (index >= 0) {
      iteration = &samples_[Key(role, site.name, index)];
      iteration->kind = site.kind;
      iteration->durations.push_back(static_cast<double>(dur));
    }
    stack_.push_back({all, iteration, index, dur, 0});
  }
  while (!stack_.empty()) pop();
  return absl::OkStatus();
}

absl::Status DurationSink::End(const TraceEnd& /*end*/) {
  if (in_block_) block_ns_.push_back(static_cast<double>(block_end_ - block_start_));
  in_block_ = false;
  return absl::OkStatus();
}

}  // namespace warptrace
