// The Timeline: a verified trace on one nanosecond axis, ready for output. Produced by
// BuildTimeline (timeline.h) from a decoded, verified buffer; consumed by the Chrome trace
// writer (chrome_trace.h) and the summary (summary.h). Plain data, no behaviour.
//
// Each unit's track holds three kinds of things, all on the absolute globaltimer ns axis:
//   slices       nested spans (regions, loop iterations, the kernel, barrier and phase
//                waits): the unit's main track;
//   instants     single events (barrier arrivals) on the main track, at one time;
//   async spans  async copies from issue to observed completion: they may overlap the
//                slices and each other, so they go on the unit's async lanes (a lane holds
//                spans that do not overlap; UnitTimeline::async_lanes of them);
// plus the flows (links.h, resolved exactly from payloads, never guessed) that start or end
// on the unit: an arrival -> each wait release of its phase (any unit of the block), an
// async copy's issue -> its completion. A flow between two units is listed on both.
// Version-1 traces and traces without hand-off sites have none of the last three.
#ifndef WARPTRACE_PROFILER_TIMELINE_TIMELINE_TYPES_H_
#define WARPTRACE_PROFILER_TIMELINE_TIMELINE_TYPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "format/layout.h"
#include "profiler/trace/verdict.h"

namespace warptrace {

// One region instance on one unit's track. Times are absolute globaltimer nanoseconds.
struct Slice {
  uint32_t site = 0;     // index into TraceLayout::sites
  uint32_t depth = 0;    // nesting depth on its track, 0 = outermost
  int64_t begin_ns = 0;
  int64_t end_ns = 0;    // >= begin_ns
  bool repaired = false; // closed by --allow-truncated at the unit's last timestamp
  friend bool operator==(const Slice&, const Slice&) = default;
};

// One instant on a unit's main track: a barrier arrival (SiteKind::kBarrierArrive).
struct Instant {
  uint32_t site = 0;     // index into TraceLayout::sites
  uint32_t event = 0;    // its event slot in the record (DecodedRecord::events)
  int64_t ns = 0;
  uint32_t barrier = 0;  // payload: the barrier id (TraceLayout::barriers, BarrierName)
  uint32_t phase = 0;    // payload: the phase the arrival counts towards
  friend bool operator==(const Instant&, const Instant&) = default;
};

// One async copy (SiteKind::kAsyncCopy) on one of the unit's async lanes.
struct AsyncSpan {
  static constexpr uint32_t kNoEvent = 0xffffffffu;
  uint32_t site = 0;
  uint32_t begin_event = 0;          // the issue's event slot
  // The completion's slot in this unit's record; kNoEvent: never completed, or derived.
  uint32_t end_event = kNoEvent;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;                // completion; the unit's end when never completed
  uint32_t issue = 0;                // payload: the unit's issue number
  uint32_t barrier = 0xffffffffu;    // payload: the barrier it completes on, or kNoBarrier
  bool completed = true;             // false: issued, never observed complete
  uint32_t lane = 0;                 // 0 .. UnitTimeline::async_lanes - 1
  // Trace version 5: a copy on a phase barrier records no end; its end is derived
  // (links.h's Link::derived): the earliest recorded release of the phase it completes,
  // event `derived_event` of record `derived_record` (any unit of the link scope, this one
  // included), and end_ns is that release's time (at least begin_ns). An upper bound on
  // when the bytes landed, not something this unit observed.
  bool end_derived = false;
  // Trace version 5: a group of a site whose ends are derived at waits
  // (SiteInfo::ends_at_waits, Link::at_wait): end_event is the unit's own recorded wait of
  // the group's kind that retired it (several groups may share it), a point of the unit's
  // program as an observed end is: the retirement the thread saw, not an upper bound from
  // another unit.
  bool end_at_wait = false;
  uint64_t derived_record = 0;
  uint32_t derived_event = kNoEvent;
  friend bool operator==(const AsyncSpan&, const AsyncSpan&) = default;
};

enum class FlowKind : uint8_t {
  kArrivalToRelease,   // a barrier arrival -> the release (end) of a wait on its phase
  kIssueToCompletion,  // an async copy's issue -> its completion
  // A multicast copy's issue -> the release of a wait it completed bytes for in another CTA
  // of the cluster (its landing there).
  kMulticastLanding,
};
// "arrival_to_release", "issue_to_completion", "multicast_landing"
const char* FlowKindName(FlowKind kind);
// Where a flow's ends attach: from an async copy's issue (its AsyncSpan) or an arrival
// instant; to a released wait slice (FlowEnd::released_wait) or an async span's end.
bool FlowStartsAtIssue(FlowKind kind);
bool FlowEndsAtRelease(FlowKind kind);

// One end of a flow: an event of some unit of the same block, and what it attaches to.
struct FlowEnd {
  static constexpr uint32_t kNone = 0xffffffffu;
  uint64_t record_index = 0;  // the unit (UnitTimeline::record_index)
  uint32_t event = 0;         // the event slot in its record
  int64_t ns = 0;             // the event's time (an instant, a wait's end, a span's end)
  // The anchor a viewer binds the arrow to: an async copy's issue attaches to its AsyncSpan
  // (on_async, `anchor` indexes UnitTimeline::async_spans); every other end to the
  // innermost slice of the unit's main track that contains `ns` and is at least 2 ns long
  // (so a point strictly inside it exists; `anchor` indexes UnitTimeline::slices). kNone:
  // nothing to attach to (e.g. an arrival outside every region); writers that must bind
  // (Chrome's flow events) leave such a flow out.
  uint32_t anchor = kNone;
  bool on_async = false;
  // The `to` end of a kArrivalToRelease flow: the wait the release ended, indexing
  // UnitTimeline::slices: the unit's wait slice (IsWaitSite) that ends at `ns`; of several
  // (a wait that returned at once right after it, nested waits), the first to begin, the one
  // that waited. kNone otherwise, and when no wait slice ends there.
  uint32_t released_wait = kNone;
  friend bool operator==(const FlowEnd&, const FlowEnd&) = default;
};

// A hand-off arrow (links.h's Link with times and an id).
struct Flow {
  uint64_t id = 0;     // unique in the Timeline (numbered in buffer order of blocks)
  FlowKind kind = FlowKind::kArrivalToRelease;
  FlowEnd from;        // the arrival / the issue
  FlowEnd to;          // the wait's release / the completion
  uint32_t barrier = 0xffffffffu;
  uint32_t phase = 0;       // kArrivalToRelease, kMulticastLanding
  uint32_t issue = 0;       // kIssueToCompletion, kMulticastLanding
  bool completing = false;  // kArrivalToRelease: `from` is its phase's last arrival
  // kIssueToCompletion of a copy whose end is derived (AsyncSpan::end_derived): `to` is the
  // release of a wait (FlowEnd::released_wait set), in any unit of the scope.
  bool derived = false;
  friend bool operator==(const Flow&, const Flow&) = default;
};
// Whether `flow`'s `to` end is a wait's release: its kind's (FlowEndsAtRelease), or a
// derived copy end.
inline bool FlowEndsAtRelease(const Flow& flow) {
  return flow.derived || FlowEndsAtRelease(flow.kind);
}

struct UnitTimeline {
  uint64_t record_index = 0;
  uint32_t block_linear = 0;
  Dim3 block_index;           // blockIdx of block_linear
  uint32_t unit_index = 0;
  uint32_t sm_id = 0;
  Verdict verdict = Verdict::kComplete;
  std::string verdict_reason; // empty when complete
  int64_t start_ns = 0;       // unit start / end on the globaltimer axis
  int64_t end_ns = 0;
  double cycles_per_ns = 0;   // calibrated (or nominal) SM clock rate
  bool nominal_clock = false; // true when the nominal clock was used (clock_source says why)
  ClockSource clock_source = ClockSource::kCalibrated;
  uint32_t overhead_cycles = 0;  // smallest gap between consecutive events (0 if < 2 events)
  uint32_t events = 0;        // events that made it onto the timeline
  uint32_t dropped = 0;       // attempted - capacity when overflowed
  // The unit's recorder left through an early return (abi::kFlagEarlyReturn): the builder's
  // Return, not the kernel's end. False for an unfinished unit.
  bool returned_early = false;
  std::vector<Slice> slices;  // ordered by begin_ns, then depth
  std::vector<Instant> instants;       // in event order (so by ns)
  std::vector<AsyncSpan> async_spans;  // ordered by begin_ns, then begin_event
  uint32_t async_lanes = 0;            // lanes the async spans use (0 when none)
  // The flows from or to this unit, ordered by (to.record_index, to.event, from): a flow
  // whose ends are both on this unit is listed once, one between two units on each.
  std::vector<Flow> flows;
  // False for a unit with no usable record (missing, or its header was corrupt): then it
  // has no slices, sm_id is 0 (unknown) and start_ns = end_ns = Timeline::origin_ns.
  bool has_record = true;
  friend bool operator==(const UnitTimeline&, const UnitTimeline&) = default;
};

struct Timeline {
  TraceLayout layout;
  int64_t origin_ns = 0;  // earliest unit start: Chrome ts are relative to it
  int64_t end_ns = 0;     // latest unit end
  bool overhead_compensated = false;
  std::string clock_note;  // e.g. "calibrated per unit from globaltimer" or the fallback used
  std::vector<UnitTimeline> units;  // ordered by (block_linear, unit_index)
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TIMELINE_TIMELINE_TYPES_H_
