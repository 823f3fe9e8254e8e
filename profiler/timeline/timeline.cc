#include "profiler/timeline/timeline.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "format/trace_abi.h"
#include "profiler/trace/clock.h"

namespace warptrace {
namespace {

bool SliceOrder(const Slice& a, const Slice& b) {
  return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.depth < b.depth;
}

absl::Status CheckReportMatches(const DecodedTrace& decoded, const VerifyReport& report) {
  if (decoded.layout == nullptr || report.units.size() != decoded.records.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the verify report has %d units but the decoded trace has %d records: verify this "
        "DecodedTrace and pass its report",
        report.units.size(), decoded.records.size()));
  }
  if (!report.ok()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "verification found %d errors; a timeline is built only from a verified trace: fix "
        "the trace, or verify with allow_truncated to keep each unit's valid prefix",
        report.errors));
  }
  for (size_t idx = 0; idx < decoded.records.size(); ++idx) {
    const DecodedRecord& r = decoded.records[idx];
    const UnitVerdict& v = report.units[idx];
    if (v.record_index != r.record_index || v.block_linear != r.block_linear ||
        v.unit_index != r.unit_index || v.kept_events > r.events.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "verify report unit %d (%s, %d kept events) does not match decoded record %d (%s, "
          "%d events)",
          idx, UnitName(*decoded.layout, v.block_linear, v.unit_index), v.kept_events,
          r.record_index, UnitName(*decoded.layout, r.block_linear, r.unit_index),
          r.events.size()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

UnitTimelineBuilder::UnitTimelineBuilder(const TraceLayout& layout,
                                         const TimelineOptions& options)
    : layout_(&layout), options_(options) {
  for (const SiteInfo& site : layout.sites) {
    arrival_sites_ = arrival_sites_ || site.kind == SiteKind::kBarrierArrive;
  }
}

absl::StatusOr<UnitTimelineBuilder> UnitTimelineBuilder::Create(const TraceLayout& layout,
                                                                 const TimelineOptions& options) {
  if (layout.clock.nominal_sm_clock_khz == 0) {
    return absl::InvalidArgumentError(
        "the layout's nominal SM clock is 0 kHz: set clock.nominal_sm_clock_khz to the "
        "device's SM clock (it converts cycles to ns where a unit cannot be calibrated)");
  }
  return UnitTimelineBuilder(layout, options);
}

void UnitTimelineBuilder::Build(const DecodedRecord& r, const UnitVerdict& v,
                                const UnitWalk& walk, UnitTimeline& u) {
  u.record_index = r.record_index;
  u.block_linear = r.block_linear;
  u.block_index = BlockIndex(layout_->grid, r.block_linear);
  u.unit_index = r.unit_index;
  u.verdict = v.verdict;
  u.verdict_reason = v.reason;
  u.dropped = v.dropped;
  u.slices.clear();
  u.instants.clear();
  u.async_spans.clear();
  u.async_lanes = 0;
  u.flows.clear();
  event_ns_.clear();
  u.events = 0;
  u.start_ns = u.end_ns = 0;
  u.sm_id = 0;
  const bool has_record = r.header_problem == HeaderProblem::kNone;
  const bool has_end = has_record && v.close_at_end_stamp;
  CalibrationInput in;
  in.has_record = has_record;
  in.trust_end_stamp = has_end;
  in.wraps_lost = walk.wraps.outcome == WrapOutcome::kLost;
  in.end_cycles = walk.end_cycles;
  in.gt_span_ns = has_end ? r.end_globaltimer - r.start_globaltimer : 0;
  in.min_gap_cycles = walk.min_gap == std::numeric_limits<uint64_t>::max() ? 0 : walk.min_gap;
  const UnitClock clock =
      Calibrate(in, layout_->clock.nominal_sm_clock_khz, options_.min_calibration_ns);
  u.has_record = has_record;
  u.returned_early =
      has_record && r.complete() && (r.flags & abi::kFlagEarlyReturn) != 0;
  u.clock_source = clock.source;
  u.nominal_clock = has_record && clock.source != ClockSource::kCalibrated;
  u.cycles_per_ns = clock.cycles_per_ns;
  u.overhead_cycles = clock.overhead_cycles;
  if (has_record) PlaceSlices(r, v, walk, clock, u);
}

void UnitTimelineBuilder::PlaceSlices(const DecodedRecord& r, const UnitVerdict& v,
                                      const UnitWalk& walk, const UnitClock& clock,
                                      UnitTimeline& u) {
  u.sm_id = r.sm_id;
  const double ns_per_cycle = 1.0 / clock.cycles_per_ns;
  const int64_t start_ns = static_cast<int64_t>(r.start_globaltimer);
  const int64_t overhead = options_.compensate_overhead ? clock.overhead_cycles : 0;
  // Clamped and wrapping so that damaged stamps (fuzzed input) cannot overflow.
  auto to_ns = [&](int64_t cycles) {
    const double ns = std::clamp(static_cast<double>(cycles) * ns_per_cycle + 0.5, -4e18, 4e18);
    return static_cast<int64_t>(static_cast<uint64_t>(start_ns) +
                                static_cast<uint64_t>(static_cast<int64_t>(ns)));
  };
  // Event times: unwrapped cycles, compensated, clamped to never decrease.
  const uint32_t n = std::min<uint32_t>(v.kept_events, walk.walked);
  event_ns_.resize(n);
  int64_t shown = 0;
  for (uint32_t i = 0; i < n; ++i) {
    shown = std::max(shown, walk.cycles[i] - overhead * i);
    event_ns_[i] = to_ns(shown);
  }
  const int64_t last_ns = n > 0 ? event_ns_[n - 1] : start_ns;
  const int64_t unit_end =
      v.close_at_end_stamp
          ? std::max(last_ns, to_ns(std::max(shown, walk.end_cycles - overhead * n)))
          : last_ns;

  u.start_ns = start_ns;
  u.end_ns = unit_end;
  u.events = n;
  u.slices.reserve(n / 2 + v.open_regions);
  {
    // The slices' lines, owned for writing before the stores come: in a parallel dump they
    // were last read by the thread that wrote the previous batch out (dump.cc).
    const char* p = reinterpret_cast<const char*>(u.slices.data());
    const char* end = p + std::min(walk.slices.size(), u.slices.capacity()) * sizeof(Slice);
    for (; p < end; p += 64) __builtin_prefetch(p, 1);
  }
  bool ordered = true;
  for (const WalkSlice& s : walk.slices) {
    if (s.begin_event >= n) break;  // slices are in begin order
    const int64_t begin = event_ns_[s.begin_event];
    const bool closed = s.end_event != WalkSlice::kOpen && s.end_event < n;
    if (!u.slices.empty() && u.slices.back().begin_ns == begin && u.slices.back().depth > s.depth) {
      ordered = false;
    }
    // Regions left open (repaired units) close at the unit's last timestamp.
    u.slices.push_back({s.site, s.depth, begin, closed ? event_ns_[s.end_event] : unit_end,
                        !closed});
  }
  if (!ordered) std::stable_sort(u.slices.begin(), u.slices.end(), SliceOrder);
  if (r.version < 2 || !arrival_sites_) return;
  for (uint32_t i = 0; i < n; i = r.NextEvent(i)) {
    const uint32_t site = r.SiteOf(r.events[i].tag);
    const abi::Payload* payload = r.PayloadOf(i);
    if (site >= layout_->sites.size() || payload == nullptr ||
        layout_->sites[site].kind != SiteKind::kBarrierArrive) {
      continue;
    }
    u.instants.push_back({site, i, event_ns_[i], payload->a, payload->b});
  }
}

namespace {

FlowKind FlowKindOf(LinkKind kind) {
  switch (kind) {
    case LinkKind::kArrivalToRelease:
      return FlowKind::kArrivalToRelease;
    case LinkKind::kIssueToCompletion:
      return FlowKind::kIssueToCompletion;
    case LinkKind::kMulticastLanding:
      return FlowKind::kMulticastLanding;
  }
  return FlowKind::kArrivalToRelease;
}

// Async spans of one block from its links: each issue with its completion, each issue never
// completed to its unit's end; sorted by begin and given lanes.
void PlaceAsyncSpans(const Links& links, uint64_t first_record, absl::Span<UnitTimeline> units,
                     absl::Span<const std::vector<int64_t>> event_ns) {
  auto ns = [&](const EventRef& e) { return event_ns[e.record - first_record][e.slot]; };
  for (const Link& link : links.links) {
    if (link.kind != LinkKind::kIssueToCompletion) continue;
    AsyncSpan span;
    span.site = link.site;
    span.begin_event = link.from.slot;
    span.begin_ns = ns(link.from);
    if (link.derived) {  // a release in any unit of the scope (links.h)
      span.end_derived = true;
      span.derived_record = link.to.record;
      span.derived_event = link.to.slot;
      span.end_ns = std::max(span.begin_ns, ns(link.to));
    } else {
      // Observed, or a group's end at the unit's own recorded wait (Link::at_wait).
      span.end_at_wait = link.at_wait;
      span.end_event = link.to.slot;
      span.end_ns = ns(link.to);
    }
    span.issue = link.issue;
    span.barrier = link.barrier;
    units[link.from.record - first_record].async_spans.push_back(span);
  }
  for (const UnpairedAsync& u : links.unpaired) {
    if (!u.is_begin) continue;
    UnitTimeline& unit = units[u.event.record - first_record];
    AsyncSpan span;
    span.site = u.site;
    span.begin_event = u.event.slot;
    span.begin_ns = ns(u.event);
    span.end_ns = std::max(span.begin_ns, unit.end_ns);
    span.issue = u.issue;
    span.barrier = u.barrier;
    span.completed = false;
    unit.async_spans.push_back(span);
  }
  std::vector<int64_t> lane_end;
  for (UnitTimeline& u : units) {
    std::stable_sort(u.async_spans.begin(), u.async_spans.end(),
                     [](const AsyncSpan& a, const AsyncSpan& b) {
                       return std::tie(a.begin_ns, a.begin_event) <
                              std::tie(b.begin_ns, b.begin_event);
                     });
    lane_end.clear();
    for (AsyncSpan& span : u.async_spans) {
      uint32_t lane = 0;
      while (lane < lane_end.size() && lane_end[lane] > span.begin_ns) ++lane;
      if (lane == lane_end.size()) lane_end.push_back(0);
      lane_end[lane] = span.end_ns;
      span.lane = lane;
    }
    u.async_lanes = static_cast<uint32_t>(lane_end.size());
  }
}

// Sets the anchor of each end in `ends` (all on `unit`'s main track): the innermost slice
// with begin < ns <= end that is at least 2 ns long. One sweep over the slices.
void AnchorOnSlices(const UnitTimeline& unit, std::vector<FlowEnd*>& ends) {
  std::stable_sort(ends.begin(), ends.end(),
                   [](const FlowEnd* a, const FlowEnd* b) { return a->ns < b->ns; });
  std::vector<uint32_t> stack;  // stack[d]: the last slice begun at depth d
  size_t next = 0;
  for (FlowEnd* end : ends) {
    while (next < unit.slices.size() && unit.slices[next].begin_ns < end->ns) {
      const Slice& s = unit.slices[next];
      stack.resize(std::min<size_t>(stack.size(), s.depth));
      stack.push_back(static_cast<uint32_t>(next));
      ++next;
    }
    end->anchor = FlowEnd::kNone;
    for (size_t d = stack.size(); d-- > 0;) {
      const Slice& s = unit.slices[stack[d]];
      if (s.end_ns >= end->ns && s.end_ns - s.begin_ns >= 2) {
        end->anchor = stack[d];
        break;
      }
    }
  }
}

// Sets released_wait of each release end in `ends` (all of `unit`, FlowEnd).
void FindReleasedWaits(const TraceLayout& layout, const UnitTimeline& unit,
                       absl::Span<FlowEnd* const> ends) {
  std::vector<std::pair<int64_t, uint32_t>> wait_ends;  // (end_ns, slice) of wait slices
  for (uint32_t i = 0; i < unit.slices.size(); ++i) {
    const uint32_t site = unit.slices[i].site;
    if (site < layout.sites.size() && IsWaitSite(layout.sites[site].kind)) {
      wait_ends.push_back({unit.slices[i].end_ns, i});
    }
  }
  std::sort(wait_ends.begin(), wait_ends.end());
  for (FlowEnd* end : ends) {
    auto it = std::lower_bound(wait_ends.begin(), wait_ends.end(),
                               std::pair<int64_t, uint32_t>{end->ns, 0});
    end->released_wait =
        it != wait_ends.end() && it->first == end->ns ? it->second : FlowEnd::kNone;
  }
}

}  // namespace

void AddScopeLinks(const TraceLayout& layout, const Links& links, uint64_t first_record,
                   absl::Span<UnitTimeline> units,
                   absl::Span<const std::vector<int64_t>> event_ns, uint64_t& next_flow_id) {
  for (UnitTimeline& u : units) {
    u.async_spans.clear();
    u.async_lanes = 0;
    u.flows.clear();
  }
  auto known = [&](const EventRef& e) {
    const uint64_t i = e.record - first_record;
    return e.record >= first_record && i < units.size() && i < event_ns.size() &&
           e.slot < event_ns[i].size();
  };
  Links usable;
  for (const Link& link : links.links) {
    if (known(link.from) && known(link.to)) usable.links.push_back(link);
  }
  for (const UnpairedAsync& u : links.unpaired) {
    if (known(u.event)) usable.unpaired.push_back(u);
  }
  PlaceAsyncSpans(usable, first_record, units, event_ns);

  auto ns = [&](const EventRef& e) { return event_ns[e.record - first_record][e.slot]; };
  std::vector<Flow> flows;
  flows.reserve(usable.links.size());
  for (const Link& link : usable.links) {
    Flow flow;
    flow.id = next_flow_id++;
    flow.kind = FlowKindOf(link.kind);
    flow.from = {link.from.record, link.from.slot, ns(link.from)};
    flow.to = {link.to.record, link.to.slot, ns(link.to)};
    flow.barrier = link.barrier;
    flow.phase = link.phase;
    flow.issue = link.issue;
    flow.completing = link.completing;
    flow.derived = link.derived;
    flows.push_back(flow);
  }
  // Anchors: an issue on its async span, every other end on its unit's slices.
  std::vector<std::vector<FlowEnd*>> on_slices(units.size());
  std::vector<std::vector<FlowEnd*>> releases(units.size());
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> by_issue(units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    const std::vector<AsyncSpan>& spans = units[i].async_spans;
    for (uint32_t k = 0; k < spans.size(); ++k) by_issue[i].push_back({spans[k].begin_event, k});
    std::sort(by_issue[i].begin(), by_issue[i].end());
  }
  for (Flow& flow : flows) {
    if (FlowStartsAtIssue(flow.kind)) {
      const size_t i = flow.from.record_index - first_record;
      const auto& index = by_issue[i];
      auto it = std::lower_bound(index.begin(), index.end(),
                                 std::pair<uint32_t, uint32_t>{flow.from.event, 0});
      flow.from.on_async = true;
      if (it != index.end() && it->first == flow.from.event) {
        const AsyncSpan& span = units[i].async_spans[it->second];
        if (span.end_ns - span.begin_ns >= 2) flow.from.anchor = it->second;
      }
    } else {
      on_slices[flow.from.record_index - first_record].push_back(&flow.from);
    }
    if (FlowEndsAtRelease(flow)) {
      releases[flow.to.record_index - first_record].push_back(&flow.to);
    }
    on_slices[flow.to.record_index - first_record].push_back(&flow.to);
  }
  for (size_t i = 0; i < units.size(); ++i) {
    AnchorOnSlices(units[i], on_slices[i]);
    if (!releases[i].empty()) FindReleasedWaits(layout, units[i], releases[i]);
  }
  for (const Flow& flow : flows) {
    units[flow.from.record_index - first_record].flows.push_back(flow);
    if (flow.to.record_index != flow.from.record_index) {
      units[flow.to.record_index - first_record].flows.push_back(flow);
    }
  }
}

absl::StatusOr<Timeline> BuildTimeline(const DecodedTrace& decoded, const VerifyReport& report,
                                       const TimelineOptions& options) {
  RETURN_IF_ERROR(CheckReportMatches(decoded, report));
  const TraceLayout& layout = *decoded.layout;
  ASSIGN_OR_RETURN(UnitTimelineBuilder builder, UnitTimelineBuilder::Create(layout, options));
  Timeline timeline;
  timeline.layout = layout;
  timeline.overhead_compensated = options.compensate_overhead;
  timeline.units.resize(decoded.records.size());
  ClockTally tally;
  int64_t origin = std::numeric_limits<int64_t>::max();
  int64_t end = std::numeric_limits<int64_t>::min();
  UnitWalk walk;
  ScopeLinker linker(decoded);
  std::vector<std::vector<int64_t>> scope_ns(linker.active() ? RecordsPerLinkScope(layout) : 0);
  uint64_t next_flow_id = 0;
  for (size_t idx = 0; idx < decoded.records.size(); ++idx) {
    WalkUnit(decoded.records[idx], layout, walk);
    UnitTimeline& u = timeline.units[idx];
    builder.Build(decoded.records[idx], report.units[idx], walk, u);
    if (linker.active()) {
      scope_ns[idx % scope_ns.size()] = builder.event_ns();
      if (linker.Add(decoded.records[idx], walk, report.units[idx].kept_events)) {
        AddScopeLinks(layout, linker.links(), linker.first_record(),
                      absl::MakeSpan(timeline.units).subspan(linker.first_record(),
                                                             scope_ns.size()),
                      scope_ns, next_flow_id);
      }
    }
    if (!u.has_record) continue;
    tally.Add(u.clock_source, u.cycles_per_ns);
    origin = std::min(origin, u.start_ns);
    end = std::max(end, u.end_ns);
  }
  if (origin == std::numeric_limits<int64_t>::max()) origin = end = 0;
  timeline.origin_ns = origin;
  timeline.end_ns = end;
  for (UnitTimeline& u : timeline.units) {
    if (!u.has_record) u.start_ns = u.end_ns = origin;
  }
  timeline.clock_note = tally.Note(layout.clock.nominal_sm_clock_khz, options.min_calibration_ns,
                                   options.compensate_overhead);
  return timeline;
}

}  // namespace warptrace
