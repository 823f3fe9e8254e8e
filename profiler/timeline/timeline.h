// BuildTimeline: a decoded, verified trace -> a Timeline (timeline_types.h) on the common
// globaltimer nanosecond axis, with nested slices per trace unit.
//
//   ASSIGN_OR_RETURN(DecodedTrace decoded, Decode(layout, words));
//   VerifyReport report = Verify(decoded, {.allow_truncated = allow});
//   RETURN_IF_ERROR(report.ToStatus());
//   ASSIGN_OR_RETURN(Timeline timeline, BuildTimeline(decoded, report));
//
// Clock model (ARCHITECTURE.md). Events carry 32-bit SM cycles; each unit's start and end
// stamps pair a %clock with a %globaltimer (ns). Per unit:
//   * Cycles are unwrapped along the chain start stamp -> events -> end stamp by the event
//     walker (walk.h, clock.h): every step is the forward distance mod 2^32, so any number of
//     wraps is exact as long as consecutive stamps are < 2^32 cycles apart, and the
//     globaltimer span decides the sign of steps of almost 2^32 (CheckWraps). A backward step
//     that verify tolerated (no larger than the unit's overhead) is clamped to 0, so event
//     times never decrease.
//   * rate = unwrapped cycles from start to end stamp / (end - start globaltimer), in
//     cycles per ns, when the unit finished with trustworthy clocks
//     (UnitVerdict::close_at_end_stamp) and ran for at least
//     TimelineOptions::min_calibration_ns. The default of 20 us keeps the rate within 10%
//     on GPUs whose globaltimer ticks every 1 us (and within 0.3% at 32 ns ticks); a
//     shorter unit cannot be calibrated from two coarse ticks.
//   * Otherwise, or when the measured rate is implausible (outside 1/4..4x the nominal
//     clock, e.g. a damaged stamp), the unit uses the layout's nominal SM clock
//     (ClockInfo::nominal_sm_clock_khz) and says so: UnitTimeline::nominal_clock is set,
//     UnitTimeline::clock_source says why, and
//     Timeline::clock_note counts such units and gives the rate used.
//   * An event at unwrapped cycle c (relative to the start stamp) is at
//     start_globaltimer + c / rate ns, rounded to the nearest ns.
//
// Unit times. start_ns is the start globaltimer. end_ns is the end stamp mapped through the
// same model (so a calibrated unit ends exactly at its end globaltimer) when the unit
// finished with trustworthy clocks, else its last event (or closing) time; never before its
// last slice ends.
//
// Instants, async spans, flows (trace version 2, links.h). A kept barrier arrival with its
// payload is an Instant at its event's time. Per block, once its last unit is built, the
// links ScopeLinker resolved become the block's async spans (each issue paired with its
// completion in the unit; an issue never completed spans to the unit's end, completed
// false; a completion without its issue draws nothing) and flows (each link, with the times
// of its two events and an id numbered over the whole trace in block order). Async spans
// get lanes greedily in begin order: a span goes on the lowest lane whose last span ended
// at or before its begin.
//
// Overhead. UnitTimeline::overhead_cycles is the unit's smallest step between consecutive
// events (measured by the clock model, clock.h), an upper bound on what one record point costs: two back-to-back
// record points with no work between them are that far apart. With
// TimelineOptions::compensate_overhead, event i (0-based, within its unit) is moved
// `i * overhead_cycles` cycles earlier — the cost of the i record points before it — and the
// end stamp `kept_events * overhead_cycles` earlier; times are then clamped to be
// non-decreasing. The start stamp does not move. Timeline::overhead_compensated says it was
// done.
//
// Slices. Each entry event opens a slice on its unit's track and the matching exit closes
// it; depth is the number of regions open around it. Regions left open by a repaired unit
// (allow_truncated) are closed at the unit's end stamp when close_at_end_stamp, else at its
// last kept event, and marked `repaired`. Only the kept prefix of each unit's events is used
// (UnitVerdict::kept_events).
//
// Units. Timeline::units has one entry per record, in buffer order (= block_linear, then
// unit_index). A missing unit or one whose header was unusable keeps its verdict and
// reason but has no slices and no times: has_record is false, sm_id 0, and start/end are
// the Timeline's origin_ns.
//
// Errors: InvalidArgument when `report` does not belong to `decoded` (unit count or
// coordinates differ) or the layout's nominal SM clock is 0; FailedPrecondition when the report has errors (strict verification
// failed: fix the trace or verify with allow_truncated).
//
// Cost: one pass over the kept events; per unit one slices vector reserved up front; no
// other allocation. Thread-safety: reentrant; inputs are only read.
#ifndef WARPTRACE_PROFILER_TIMELINE_TIMELINE_H_
#define WARPTRACE_PROFILER_TIMELINE_TIMELINE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include <vector>

#include "absl/types/span.h"
#include "profiler/timeline/timeline_types.h"
#include "profiler/trace/clock.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/links.h"
#include "profiler/trace/verify.h"
#include "profiler/trace/walk.h"

namespace warptrace {

struct TimelineOptions {
  // Move events earlier by the accumulated per-event overhead (see above).
  bool compensate_overhead = false;
  // Units that ran for less than this (globaltimer ns) use the nominal SM clock.
  uint64_t min_calibration_ns = 20'000;
};

absl::StatusOr<Timeline> BuildTimeline(const DecodedTrace& decoded, const VerifyReport& report,
                                       const TimelineOptions& options = {});

// One unit's timeline from its record, verdict and walk (walk.h): what BuildTimeline does per
// unit, and what the dump driver calls with the walk verify already read, so each event is
// walked once. A unit without a usable record gets has_record false, no slices and start/end
// 0 (the caller sets them to the trace's origin). Reuses `out`'s storage. Not thread-safe
// (it keeps scratch space); the layout must outlive the builder.
class UnitTimelineBuilder {
 public:
  // InvalidArgument when the layout's nominal SM clock is 0.
  static absl::StatusOr<UnitTimelineBuilder> Create(const TraceLayout& layout,
                                                    const TimelineOptions& options);
  void Build(const DecodedRecord& record, const UnitVerdict& verdict, const UnitWalk& walk,
             UnitTimeline& out);
  // The time of each kept event slot of the last Build (a payload slot has its event's),
  // as AddScopeLinks needs them; valid until the next Build.
  const std::vector<int64_t>& event_ns() const { return event_ns_; }

 private:
  UnitTimelineBuilder(const TraceLayout& layout, const TimelineOptions& options);
  void PlaceSlices(const DecodedRecord& r, const UnitVerdict& v, const UnitWalk& walk,
                   const UnitClock& clock, UnitTimeline& u);

  const TraceLayout* layout_;
  TimelineOptions options_;
  bool arrival_sites_ = false;  // the layout has kBarrierArrive sites (instants to place)
  std::vector<int64_t> event_ns_;  // scratch: each kept event's time
};

// Adds the async spans and flows of one link scope (format/links.h: a block today; see
// "Instants, async spans, flows" above) to its units: `units[i]` is the UnitTimeline of
// record links_first_record + i, built by UnitTimelineBuilder from `layout`, and
// `event_ns[i]` its event_ns(). Each Flow gets the next `next_flow_id`. Clears the units'
// async spans and flows first.
void AddScopeLinks(const TraceLayout& layout, const Links& links, uint64_t first_record,
                   absl::Span<UnitTimeline> units,
                   absl::Span<const std::vector<int64_t>> event_ns, uint64_t& next_flow_id);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TIMELINE_TIMELINE_H_
