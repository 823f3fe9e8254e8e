// Verify: checks a DecodedTrace against the trace contract and says, per trace unit, what
// became of it. Findings are data — severity, kind, coordinates, message — so the CLI can
// print them, CI can gate on the JSON report, and BuildTimeline (timeline.h) knows which
// events to trust.
//
//   ASSIGN_OR_RETURN(DecodedTrace decoded, Decode(layout, words));
//   VerifyReport report = Verify(decoded);                 // always a report
//   RETURN_IF_ERROR(WriteVerifyReportFile(report, layout, "verdict.json"));
//   RETURN_IF_ERROR(report.ToStatus());                    // a broken trace is an error
//
// What is checked, per unit (coordinates: record index, block, unit, and event index where
// one event is at fault):
//   header    missing record (the unit never ran), wrong magic / version / header size,
//             checksum mismatch (from version 3, a complete record's checksum also
//             covers its stored event slots, so a changed event word is one too), block id or unit index that disagrees with the record's
//             position, a start globaltimer past decode.h's kMaxGlobaltimerNs (from
//             decode); an SM id at or past ClockInfo::num_sms (when known);
//             a unit that never finished (no kFlagComplete); an end globaltimer before the
//             start one.
//   events    dropped events (attempted > capacity) with the capacity that would have been
//             enough for the whole trace (the largest `attempted` of any unit); an unknown
//             site id; an exit without its begin; an exit that closes another site than the
//             innermost open one (mismatched nesting); regions left open at the end (an odd
//             or unpaired event); the clock going backwards by more than the unit's measured
//             overhead; %clock wraps that the unit's globaltimer span contradicts
//             (kClockWrapsLost: an error; the unit is then timed with the nominal clock) or
//             cannot confirm (kClockAmbiguous: always a warning; clock.h says when).
// The event checks stop at a unit's first event error: what follows cannot be trusted.
//
// Hand-offs (trace version 2, links.h), per link scope after its last unit, from the links
// resolved by ScopeLinker on the block's common SM clock; coordinates are the event at fault:
//   kReleaseBeforeArrivals  a wait released (its exit) earlier than the latest arrival on
//                           the phase it was released on;
//   kArrivalCountMismatch   a phase with more or fewer recorded arrivals than the barrier
//                           table's arrivals_per_phase (only where the table gives one, and
//                           only when every unit of the block is complete: a cut prefix or
//                           dropped events lose arrivals, and that is reported already);
//   kAsyncEndWithoutBegin   an async copy's completion with no issue of that (site, issue)
//                           before it in its unit;
//   kAsyncNeverCompleted    an async copy issued and never observed complete by its unit
//                           (only for complete units);
//   kAsyncEndNotDerivable   a copy on a phase barrier (trace version 5: its end is derived
//                           from the waits on the phase it completes) whose phase has no
//                           recorded release in the scope (only when every unit of the
//                           scope is complete).
//   kGroupEndNotDerivable   a group of a site whose ends are derived at its kind's recorded
//                           waits (SiteInfo::ends_at_waits) that no recorded wait of its
//                           unit retired (only for complete units);
//   kGroupWaitShort         such a wait that found fewer groups of its kind open in its
//                           unit than the n it leaves in flight (always a warning: PTX
//                           allows it, but begins may have gone unrecorded, and then the
//                           ends derived after it are late).
// They are errors (warnings with allow_truncated) but do not change any unit's verdict: each
// unit's own events are well formed; their relation is what is wrong.
//
// Planned vs recorded (plan_check.h), per unit after its event checks, where the layout
// carries the plan's promises: kTripCountExceeded (a loop ran past its declared Exact or
// UpperBound count), kTripCountShort (an Exact loop ran fewer times), each naming the
// loop's builder path with both counts, and kEventCountMismatch (a complete unit the plan
// counted exactly recorded another number of slots). Errors (warnings with allow_truncated
// or plan_mismatch_warnings); the verdict is kept.
//
// The clock (clock.h). %clock is 32 bits and wraps every 2^32 cycles (about 2 s at 2 GHz);
// consecutive stamps are less than 2^32 cycles apart, so the step between two stamps is the
// forward distance mod 2^32 and a wrap is never an error, except where the globaltimer span
// says a step of almost 2^32 was a step back (CheckWraps, read by the walker). The
// chain checked is start stamp, events, end stamp (for finished units). The unit's overhead
// is the smallest forward step between two consecutive events (0 with fewer than 2 events);
// a backward step no larger than it is tolerated (timeline clamps it), a larger one is a
// kClockBackwards error.
//
// Modes. By default every finding except a repair note or an ambiguity warning is an error, and ToStatus() lists
// them. With VerifyOptions::allow_truncated the trace is repaired instead: each unit keeps
// its valid prefix (events before its first event error, the first `capacity` events of an
// overflowed unit, the recovered events of an unfinished one), regions open at the end of
// the prefix are closed at the unit's last timestamp (its end stamp when the unit finished
// cleanly, else the last kept event), every problem is reported as a warning, and one
// kRepaired warning per repaired unit says what was kept and what was closed.
//
// Cost: one pass over the events, no allocation per event (the nesting stack is reused
// across units); a std::string only per finding, and findings are capped per unit and per
// report (counts stay exact in VerifyReport::kind_counts).
//
// Thread-safety: reentrant; the DecodedTrace is only read.
#ifndef WARPTRACE_PROFILER_TRACE_VERIFY_H_
#define WARPTRACE_PROFILER_TRACE_VERIFY_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "format/layout.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/links.h"
#include "profiler/trace/verdict.h"
#include "profiler/trace/walk.h"

namespace warptrace {

enum class Severity : uint8_t { kWarning, kError };
const char* SeverityName(Severity severity);  // "warning", "error"

enum class FindingKind : uint8_t {
  kMissingRecord,     // the unit never ran its prologue
  kBadMagic,
  kBadVersion,
  kBadHeaderWords,
  kBadChecksum,
  kWrongBlock,        // header block id disagrees with the record's position
  kWrongUnit,         // header unit index disagrees with the record's position
  kBadGlobaltimer,    // start globaltimer >= kMaxGlobaltimerNs (decode.h): damaged header
  kSmIdOutOfRange,    // sm_id >= ClockInfo::num_sms
  kIncomplete,        // no kFlagComplete: the epilogue never ran
  kEndBeforeStart,    // end globaltimer < start globaltimer
  kUnknownFlags,      // header flags with bits no recorder sets (abi::kFlag*): a bit flip
  kDroppedEvents,     // attempted > capacity
  kUnknownSite,       // site id >= layout.sites.size()
  kExitWithoutBegin,  // an exit with no open region
  kMismatchedNesting, // an exit of another site than the innermost open one
  kUnpairedEvent,     // regions still open after the unit's last event
  kClockBackwards,    // a backward step larger than the unit's overhead
  kClockAmbiguous,    // %clock wraps the globaltimer span cannot confirm (always a warning)
  kClockWrapsLost,    // the events account for fewer %clock wraps than the span needs
  kReleaseBeforeArrivals,  // a wait released before its phase's last arrival (links.h)
  kArrivalCountMismatch,   // a phase's arrival count is not the barrier table's
  kAsyncEndWithoutBegin,   // an async copy completion without its issue
  kAsyncNeverCompleted,    // an async copy issue its unit never saw complete
  kAsyncEndNotDerivable,   // a v5 copy on a barrier whose phase has no recorded release
  kGroupEndNotDerivable,   // a v5 group (ends derived at waits) no recorded wait retired
  kGroupWaitShort,         // a v5 group wait found fewer open groups than it leaves
  kTripCountExceeded,   // a loop ran past its declared trip count (plan_check.h)
  kTripCountShort,      // an Exact loop ran fewer iterations than declared
  kEventCountMismatch,  // a unit the plan counted exactly recorded another count
  kRepaired,          // allow_truncated: what was kept and closed (always a warning)
  kTooManyFindings,   // findings past the caps were counted, not listed
};
inline constexpr int kNumFindingKinds = static_cast<int>(FindingKind::kTooManyFindings) + 1;
const char* FindingKindName(FindingKind kind);  // "missing_record", "dropped_events", ...

struct Finding {
  Severity severity = Severity::kError;
  FindingKind kind = FindingKind::kMissingRecord;
  uint64_t record_index = 0;
  uint32_t block_linear = 0;
  uint32_t unit_index = 0;
  Dim3 block_index;                      // blockIdx of block_linear (for messages)
  UnitKind unit_kind = UnitKind::kWarpgroup;  // the layout's (for messages)
  int64_t event_index = -1;  // the event at fault, -1 when the finding is about the unit
  std::string message;       // one line, with the numbers; starts with no coordinates
};

// "block (3,0,0) warpgroup 1 event 17: <message>" (event part only when event_index >= 0);
// the unit is named as everywhere else (UnitName, layout.h).
std::string FormatFinding(const Finding& finding);

// What became of one unit, and what BuildTimeline may use of it.
struct UnitVerdict {
  uint64_t record_index = 0;
  uint32_t block_linear = 0;
  uint32_t unit_index = 0;
  Verdict verdict = Verdict::kComplete;
  std::string reason;            // empty when complete; else the first problem, one line
  uint32_t kept_events = 0;      // events BuildTimeline may use: a prefix of record.events
  uint32_t open_regions = 0;     // regions open after the kept prefix (closed when repaired)
  bool close_at_end_stamp = false;  // repairs close at the end stamp, not the last event
  // The unit's measured overhead (clock.h) that judged its steps back, for the report;
  // the timeline takes it from its own clock result, not from here.
  uint32_t overhead_cycles = 0;
  uint32_t dropped = 0;          // attempted - capacity
  bool repaired = false;         // allow_truncated changed what the unit shows
};

struct VerifyOptions {
  // Keep each unit's valid prefix and turn problems into warnings (see the header comment).
  bool allow_truncated = false;
  // Findings listed per unit and per report; past them findings are only counted.
  uint32_t max_findings_per_unit = 8;
  uint32_t max_findings = 1000;
  // Report planned-vs-recorded mismatches (plan_check.h) as warnings: for a run that
  // knowingly ran past its plan (RunKernel's retry with the capacity the dump computed).
  bool plan_mismatch_warnings = false;
};

struct VerifyReport {
  bool allow_truncated = false;
  std::vector<UnitVerdict> units;  // one per DecodedTrace record, same order
  // In record order, then event order; a block's hand-off findings follow its last unit's.
  std::vector<Finding> findings;
  // Findings of each kind, including those past the caps (index: FindingKind).
  std::array<uint64_t, kNumFindingKinds> kind_counts{};
  uint64_t errors = 0;    // error findings, including those past the caps
  // Units with at least one error finding (a unit's hand-off findings after its block may
  // count it once more; ToStatus clamps to the units).
  uint64_t units_with_errors = 0;
  uint64_t warnings = 0;
  // Units of each verdict (index: Verdict).
  std::array<uint64_t, 5> verdict_counts{};
  uint32_t capacity = 0;          // the layout's
  uint32_t max_attempted = 0;     // largest `attempted` of any unit with a valid header
  uint64_t dropped_events = 0;    // total over units
  uint64_t kept_events = 0;       // total events BuildTimeline may use

  bool ok() const { return errors == 0; }
  // The capacity that would have held every unit's events: max(capacity, max_attempted).
  uint32_t required_capacity() const { return max_attempted > capacity ? max_attempted : capacity; }
  // OK when there is no error. Else one line per distinct error finding (capped as the
  // findings are), after a first line with the count: a finding that several units share
  // word for word is one line, "<message> (in N units: <unit>, <unit>, <unit> and N-3
  // more)", in order of first appearance. ResourceExhausted when events were dropped
  // and every other error is a loop past its declared count or a unit over its exact count
  // (the message says which capacity is enough and names the loops), DataLoss otherwise.
  absl::Status ToStatus() const;
};

// Verifies `decoded` (whose layout must still be alive). Never fails: problems are findings.
// The same as a UnitVerifier fed every record with its walk.
VerifyReport Verify(const DecodedTrace& decoded, const VerifyOptions& options = {});

namespace internal {
class Collector;
}  // namespace internal

// Verifies one unit at a time, from the unit's walk (walk.h), into `report`: what the dump
// driver does, so each event is walked once for verify and timeline together.
//
//   VerifyReport report;
//   UnitVerifier verifier(decoded, options, report);   // resets report
//   ScopeLinker linker(decoded);                         // links.h
//   for (const DecodedRecord& r : decoded.records) {
//     WalkUnit(r, layout, walk);
//     const UnitVerdict& v = verifier.Add(r, walk);      // appends to report.units/findings
//     if (linker.Add(r, walk, v.kept_events)) verifier.AddScope(linker);  // hand-offs
//   }
//   verifier.Finish();                                    // the too-many-findings note
//
// Records must be added in buffer order, each once. `decoded` (for the largest `attempted`
// of the whole buffer, named in dropped-events messages) and `report` must outlive the
// verifier. The returned reference is valid until the next Add.
class UnitVerifier {
 public:
  UnitVerifier(const DecodedTrace& decoded, const VerifyOptions& options,
               VerifyReport& report);
  const UnitVerdict& Add(const DecodedRecord& record, const UnitWalk& walk);

  // Parallel verification (the dump driver's, dump.h). ForUnit gives a verifier of ONE unit
  // into `unit_report` (reset), checking as this verifier would but touching nothing of
  // its; any thread may use it while this one is alive. AppendUnit then adds that unit to
  // this report, units in buffer order, with exactly the effect Add would have had: its
  // verdict, counts and the findings the caps list (the report cap is applied here, in
  // order; `unit_report` is moved from). `suppressed` is the unit verifier's suppressed().
  UnitVerifier ForUnit(VerifyReport& unit_report) const;
  const UnitVerdict& AppendUnit(VerifyReport& unit_report, uint64_t suppressed);
  // Findings counted but not listed so far (past the caps).
  uint64_t suppressed() const { return suppressed_; }

  // The hand-off findings of the link scope `linker` just resolved (its units already
  // added). The findings of one scope are capped like one unit's.
  void AddScope(const ScopeLinker& linker);
  void Finish();

 private:
  bool CheckStamps(const DecodedRecord& r, internal::Collector& collect, std::string& reason);
  void VerifyEvents(const DecodedRecord& r, const UnitWalk& walk, internal::Collector& collect,
                    UnitVerdict& v);
  Verdict DecideVerdict(bool unit_corrupt, bool prefix_cut, bool overflowed,
                        bool complete) const;
  UnitVerifier(const UnitVerifier& parent, VerifyReport& unit_report);

  const TraceLayout& layout_;
  const VerifyOptions options_;
  VerifyReport& report_;
  uint64_t suppressed_ = 0;
  bool finished_ = false;
};

// The report as a JSON object, streamed:
//   {"format": "warptrace-verdict", "version": 1, "kernel": ..., "device": ...,
//    "ok": bool, "allow_truncated": bool, "errors": N, "warnings": N,
//    "capacity": N, "max_attempted": N, "required_capacity": N, "dropped_events": N,
//    "verdicts": {"complete": N, "truncated": N, "overflowed": N, "corrupt": N, "missing": N},
//    "finding_counts": {"<kind>": N, ...only kinds that occurred},
//    "units": [{"record": i, "block": b, "unit": u, "verdict": "complete", "reason": "",
//               "kept_events": N, "dropped": N, "overhead_cycles": N, "repaired": bool}],
//    "findings": [{"severity": "error", "kind": "dropped_events", "record": i, "block": b,
//                  "unit": u, "event": i or null, "message": "..."}]}
// The members of one "units" / "findings" object of that report, written into an open
// object of `j`. With `coordinates` (the C API's results, capi/warptrace.h) also the block's
// index "block_index": [x, y, z] and, for a unit, its "name" ("block (1,0,0) warpgroup 0"),
// for a finding its one-line "text" (FormatFinding).
void WriteUnitVerdictJsonMembers(const UnitVerdict& unit, const TraceLayout& layout,
                                 bool coordinates, llvm::json::OStream& j);
void WriteFindingJsonMembers(const Finding& finding, bool coordinates, llvm::json::OStream& j);

void WriteVerifyReportJson(const VerifyReport& report, const TraceLayout& layout,
                           llvm::raw_ostream& os);
// Writes the JSON report to `path` atomically with WriteFileAtomically (base/file.h): never
// executable; FailedPrecondition if `path` is a file this process read; otherwise the file
// system's error naming the path (codes as in base/status_adapters.h).
absl::Status WriteVerifyReportFile(const VerifyReport& report, const TraceLayout& layout,
                                   absl::string_view path);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TRACE_VERIFY_H_
