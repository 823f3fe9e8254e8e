// Links: the hand-offs a warp-specialized kernel's trace records, resolved exactly from the
// events' payloads (trace version 2), never guessed from event order. Read by the verifier's
// hand-off invariants, the trace writers' flow arrows and the critical-path analysis.
//
// The contract between the recorder (what generated code writes) and the dump:
//
//   site kind (layout.h)  events                          payload (a, b)
//   kBarrierArrive        one event, no exit flag         (barrier, phase)
//   kPhaseWait            enter = the wait starts,        (barrier, phase) on both
//                         exit  = the wait is released
//   kAsyncCopy            begin (no exit flag) = issue,   (issue, barrier) on both
//                         end (exit flag) = the completion
//                         the unit observed
//
//   barrier  the block-local id of one phase barrier (an mbarrier; an element of a barrier
//            array has its own id). Ids mean nothing across blocks: links never leave a block.
//   phase    the 0-based number of the barrier's phase the event belongs to: an arrival
//            counts towards completing phase `phase`; a wait waits for phase `phase` to
//            complete (its parity is phase & 1). Generated code knows it from its loop
//            counters (the k-th use of ring stage s is phase k / stages).
//   issue    a number the unit gives each async copy it issues, unique within the unit and
//            site; the end with the same (site, issue) is that copy's completion.
//            `barrier` is the phase barrier the copy completes on, or kNoBarrier (sm_80
//            cp.async groups).
//
// Resolution, per block: the arrivals of (barrier, phase) from any unit of the block complete
// that phase; every wait released on (barrier, phase) gets a link from each of them, and the
// arrival with the latest time is the one that completed the phase (`completing`). Within a
// unit, an async copy's begin links to the end with the same (site, issue).
//
// Coordinates are (record index in the buffer, event slot in the record), as DecodedRecord
// and the event walker (walk.h) index them.
#ifndef WARPTRACE_PROFILER_TRACE_LINKS_H_
#define WARPTRACE_PROFILER_TRACE_LINKS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "profiler/trace/decode.h"
#include "profiler/trace/layout.h"

namespace warptrace {

inline constexpr uint32_t kNoBarrier = 0xffffffffu;

struct EventRef {
  uint32_t record = 0;  // index into DecodedTrace::records
  uint32_t slot = 0;    // event slot within the record
  friend bool operator==(const EventRef&, const EventRef&) = default;
};

enum class LinkKind : uint8_t {
  kArrivalToRelease,   // a barrier arrival -> the release (exit) of a wait on its phase
  kIssueToCompletion,  // an async copy's begin -> its end
};

struct Link {
  LinkKind kind = LinkKind::kArrivalToRelease;
  EventRef from;
  EventRef to;
  uint32_t barrier = kNoBarrier;
  uint32_t phase = 0;       // kArrivalToRelease
  uint32_t issue = 0;       // kIssueToCompletion
  bool completing = false;  // kArrivalToRelease: `from` is the phase's last arrival
};

// One (block, barrier, phase) with its events, for invariant checks.
struct PhaseRecord {
  uint32_t block_linear = 0;
  uint32_t barrier = 0;
  uint32_t phase = 0;
  std::vector<EventRef> arrivals;  // in buffer order
  std::vector<EventRef> releases;  // wait exits on this phase
};

// An async copy end without its begin, or a begin never ended, in one unit.
struct UnpairedAsync {
  EventRef event;
  uint32_t site = 0;
  uint32_t issue = 0;
  bool is_begin = false;  // true: issued, never observed complete
};

struct Links {
  std::vector<Link> links;
  std::vector<PhaseRecord> phases;     // sorted by (block, barrier, phase)
  std::vector<UnpairedAsync> unpaired; // in buffer order
};

// An event's time, to order the arrivals of a phase (only events of one block are
// compared): ns on the common axis from a timeline, or %clock cycles since a common origin.
using EventTime = std::function<int64_t(const EventRef&)>;

// Resolves the links of every record without a header problem, reading the first
// `kept[record]` event slots of each (the verifier's kept prefix; the events' sizes to read
// all; a missing entry reads all). Events whose payload fell past capacity
// (DecodedRecord::PayloadOf null) and events of sites outside the table are skipped. Links
// are in buffer order of their `to` event; the completing arrival is the latest by `time`.
Links FindLinks(const DecodedTrace& decoded, const TraceLayout& layout,
                const std::vector<uint32_t>& kept, const EventTime& time);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TRACE_LINKS_H_
