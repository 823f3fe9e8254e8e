#include "profiler/timeline/timeline.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "profiler/clock/clock.h"
#include "profiler/device/trace_abi.h"

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
  for (size_t idx = 0; idx < decoded.records.size(); ++idx) {
    WalkUnit(decoded.records[idx], layout, walk);
    UnitTimeline& u = timeline.units[idx];
    builder.Build(decoded.records[idx], report.units[idx], walk, u);
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
