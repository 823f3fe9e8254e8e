// Links: the hand-offs a warp-specialized kernel's trace records, resolved exactly from the
// events' payloads (trace version 2), never guessed from event order. Read by the verifier's
// hand-off invariants, the trace writers' flow arrows and the critical-path analysis.
//
// The payload contract (which event carries what) is format/links.h.
//
// Resolution, per block: the arrivals of (barrier, phase) from any unit of the block complete
// that phase; every wait released on (barrier, phase) gets a link from each of them, and the
// arrival with the latest time is the one that completed the phase (`completing`). Within a
// unit, an async copy's begin links to the end with the same (site, issue). From trace
// version 5 a copy that completes on a phase barrier (CompletesOnBarrier) records its begin
// alone, with (barrier, phase): its end is derived, the earliest release (by the scope's
// clock) of that (barrier, phase) in any unit of the scope (Link::derived), unless its site
// keeps an observed end (SiteInfo::end_observed: no recorder waits on its barrier), whose
// begin and end pair by (site, issue) as in version 4 (CopyEndDerived). A multicast
// copy's begin (format/links.h) also links to every release of its phase on the barrier at
// the same offset of each other CTA of its mask (kMulticastLanding).
//
// Coordinates are (record index in the buffer, event slot in the record), as DecodedRecord
// and the event walker (walk.h) index them.
#ifndef WARPTRACE_PROFILER_TRACE_LINKS_H_
#define WARPTRACE_PROFILER_TRACE_LINKS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "format/layout.h"
#include "format/links.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/walk.h"

namespace warptrace {

struct EventRef {
  uint32_t record = 0;  // index into DecodedTrace::records
  uint32_t slot = 0;    // event slot within the record
  friend bool operator==(const EventRef&, const EventRef&) = default;
};

enum class LinkKind : uint8_t {
  kArrivalToRelease,   // a barrier arrival -> the release (exit) of a wait on its phase
  kIssueToCompletion,  // an async copy's begin -> its end
  // A multicast copy's begin -> the release of a wait in another CTA of its mask, on the
  // phase the copy completes bytes of there (format/links.h; cluster link scope only).
  kMulticastLanding,
};

struct Link {
  LinkKind kind = LinkKind::kArrivalToRelease;
  EventRef from;
  EventRef to;
  uint32_t site = 0;        // the async copy's site (kIssueToCompletion, kMulticastLanding);
                            // else the arrival's
  uint32_t barrier = kNoBarrier;
  uint32_t phase = 0;       // kArrivalToRelease, kMulticastLanding (the destination's)
  uint32_t issue = 0;       // kIssueToCompletion, kMulticastLanding
  bool completing = false;  // kArrivalToRelease: `from` is the phase's last arrival
  // kIssueToCompletion of a version-5 copy on a phase barrier: `to` is no event of the
  // copy's unit but the earliest recorded release of the (barrier, `phase`) it completes,
  // a wait exit of any unit of the scope. The copy's bytes had landed by then: an upper
  // bound on its completion, not an observation by the issuing unit.
  bool derived = false;
  // kIssueToCompletion of a group whose site's ends are derived at waits
  // (SiteInfo::ends_at_waits, trace version 5): `to` is the unit's own recorded wait of the
  // group's kind that retired it (the first with fewer groups left in flight than were open
  // after this one), an event of the issuing unit's program like an observed end.
  bool at_wait = false;
};

// One (block, barrier, phase) with its events, for invariant checks (with a cluster link
// scope: one (cluster, cluster-wide barrier, phase)).
struct PhaseRecord {
  uint32_t block_linear = 0;  // the block (with a cluster scope: the first CTA seen on it)
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
  uint32_t barrier = kNoBarrier;  // the payload's barrier
  bool is_begin = false;  // true: issued, never observed complete
  // A version-5 copy on a phase barrier (is_begin) whose (barrier, `phase`) has no recorded
  // release in the scope: its end cannot be derived.
  bool no_release = false;
  uint32_t phase = 0;     // no_release: the phase the copy completes (multicast: its low 16 bits)
  // A group of a site whose ends are derived at waits (is_begin): no recorded wait of its
  // kind in the unit retired it.
  bool no_wait = false;
};

// A recorded wait of a group kind whose ends are derived at waits (SiteInfo::ends_at_waits)
// that found fewer groups of the kind open in its unit than the `left` it leaves in flight:
// it ended none, and either the kernel waited with fewer in flight than it declared or
// begins of the kind went unrecorded (then the ends derived after it are late).
struct ShortGroupWait {
  EventRef wait;
  uint32_t site = 0;  // the wait's tag's site
  uint32_t left = 0;  // its payload: the groups it leaves in flight
  uint32_t open = 0;  // the groups of its kind open in the unit when it ran
};

struct Links {
  std::vector<Link> links;
  std::vector<PhaseRecord> phases;     // sorted by (block, barrier, phase)
  std::vector<UnpairedAsync> unpaired; // in buffer order
  std::vector<ShortGroupWait> short_waits;  // in buffer order
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
// The same for records [first, end) only (one link scope, format/links.h: links never leave
// it).
Links FindLinks(const DecodedTrace& decoded, const TraceLayout& layout, uint32_t first,
                uint32_t end, const std::vector<uint32_t>& kept, const EventTime& time);

// Whether `layout` has a site of a hand-off kind (kBarrierArrive, kPhaseWait, kAsyncCopy):
// only then can a trace of it have links.
bool HasHandoffSites(const TraceLayout& layout);

// What the dump driver, Verify and BuildTimeline share to resolve links one link scope
// (format/links.h: the block today) at a time while they walk the units in buffer order:
// feed it every record with its walk (walk.h) and its kept prefix (UnitVerdict::kept_events);
// when the scope's last unit has been added (RecordsPerLinkScope records) it resolves the
// scope's links, on the block's common SM clock.
//
//   ScopeLinker linker(decoded);
//   for (const DecodedRecord& r : decoded.records) {
//     WalkUnit(r, layout, walk);
//     const UnitVerdict& v = verifier.Add(r, walk);
//     if (linker.Add(r, walk, v.kept_events)) { ... linker.links(), linker.Cycles(ref) ... }
//   }
//
// Scope. The records of one instance of the link scope (format/links.h): a block's units, or
// with a cluster scope all units of the cluster's CTAs ("block" below means the scope).
//
// Time. The units of a block run on one SM, so their %clock stamps are one counter: an
// event's time is its unwrapped cycles (UnitWalk::cycles) plus its unit's start %clock
// relative to the block's first unit with a record, the 2^32 ambiguity of that offset
// resolved by the units' start globaltimers at the nominal clock. Exact to the cycle, which
// ns from separately calibrated units are not; FindLinks' `completing` uses it. A cluster's
// CTAs on other SMs than the first unit's are placed by their start globaltimer instead
// (the SMs' %clock counters are unrelated).
//
// A layout without hand-off sites (every version-1 trace) makes it inert: Add returns false
// and keeps nothing. Memory: one block's event cycles. Not thread-safe; `decoded` must
// outlive it.
class ScopeLinker {
 public:
  explicit ScopeLinker(const DecodedTrace& decoded);

  bool active() const { return active_; }
  // Adds the next record in buffer order. Returns true when it is the last record of its
  // link scope (and the linker is active): links() then holds that scope's links until the
  // next Add.
  bool Add(const DecodedRecord& record, const UnitWalk& walk, uint32_t kept_events);

  const Links& links() const { return links_; }
  const DecodedTrace* decoded() const { return &decoded_; }
  uint32_t first_record() const { return first_; }  // the scope's first record
  uint32_t end_record() const { return end_; }      // one past its last
  // An event's cycles on the block's common clock (only for events of the kept prefixes).
  int64_t Cycles(const EventRef& event) const;

 private:
  const DecodedTrace& decoded_;
  const TraceLayout& layout_;
  bool active_ = false;
  uint32_t records_per_scope_ = 1;
  uint32_t first_ = 0;
  uint32_t end_ = 0;
  int64_t ref_gt_ = 0;        // start globaltimer of the block's reference unit
  uint32_t ref_clock_ = 0;    // its start %clock
  uint32_t ref_sm_ = 0;       // its SM
  bool has_ref_ = false;
  std::vector<uint32_t> kept_;                // per record of the buffer
  std::vector<int64_t> base_;                 // per record of the scope: start offset
  std::vector<std::vector<int64_t>> cycles_;  // per record of the scope: walk cycles
  Links links_;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TRACE_LINKS_H_
