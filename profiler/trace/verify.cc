#include "profiler/trace/verify.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/enum_table.h"
#include "format/trace_abi.h"
#include "profiler/trace/plan_check.h"

namespace warptrace {
namespace internal {

// Collects findings for one report, honouring the caps without building strings past them.
class Collector {
 public:
  Collector(VerifyReport& report, const TraceLayout& layout, const VerifyOptions& options,
            uint64_t& suppressed)
      : report_(report), layout_(layout), options_(options), suppressed_(suppressed) {}

  template <typename MakeMessage>
  void Add(FindingKind kind, const DecodedRecord& r, int64_t event, MakeMessage&& make) {
    const bool plan_kind = kind == FindingKind::kTripCountExceeded ||
                           kind == FindingKind::kTripCountShort ||
                           kind == FindingKind::kEventCountMismatch;
    const Severity severity = (options_.allow_truncated || kind == FindingKind::kRepaired ||
                               kind == FindingKind::kClockAmbiguous ||
                               kind == FindingKind::kGroupWaitShort ||
                               (plan_kind && options_.plan_mismatch_warnings))
                                  ? Severity::kWarning
                                  : Severity::kError;
    ++report_.kind_counts[static_cast<int>(kind)];
    if (severity == Severity::kError) {
      ++report_.errors;
      if (unit_errors_++ == 0) ++report_.units_with_errors;
    } else {
      ++report_.warnings;
    }
    if (unit_findings_ >= options_.max_findings_per_unit ||
        report_.findings.size() >= options_.max_findings) {
      ++suppressed_;
      return;
    }
    ++unit_findings_;
    report_.findings.push_back({severity, kind, r.record_index, r.block_linear, r.unit_index,
                                BlockIndex(layout_.grid, r.block_linear), layout_.unit.kind,
                                event, make()});
  }

  void Finish() {
    if (suppressed_ == 0) return;
    ++report_.kind_counts[static_cast<int>(FindingKind::kTooManyFindings)];
    ++report_.warnings;
    Finding f;
    f.severity = Severity::kWarning;
    f.kind = FindingKind::kTooManyFindings;
    f.message = absl::StrFormat(
        "%d more findings were counted but not listed (limits: %d per unit, %d per report)",
        suppressed_, options_.max_findings_per_unit, options_.max_findings);
    report_.findings.push_back(std::move(f));
  }

 private:
  VerifyReport& report_;
  const TraceLayout& layout_;
  const VerifyOptions& options_;
  uint64_t& suppressed_;     // over the whole report
  uint32_t unit_findings_ = 0;  // a Collector lives for one unit
  uint64_t unit_errors_ = 0;
};

}  // namespace internal

namespace {

using internal::Collector;

std::string SiteName(const TraceLayout& layout, uint32_t site) {
  if (site < layout.sites.size()) return absl::StrCat("\"", layout.sites[site].name, "\"");
  return absl::StrCat("#", site);
}

FindingKind HeaderFindingKind(HeaderProblem problem) {
  switch (problem) {
    case HeaderProblem::kMissing:
      return FindingKind::kMissingRecord;
    case HeaderProblem::kBadMagic:
      return FindingKind::kBadMagic;
    case HeaderProblem::kBadVersion:
      return FindingKind::kBadVersion;
    case HeaderProblem::kBadHeaderWords:
      return FindingKind::kBadHeaderWords;
    case HeaderProblem::kBadChecksum:
      return FindingKind::kBadChecksum;
    case HeaderProblem::kWrongBlock:
      return FindingKind::kWrongBlock;
    case HeaderProblem::kBadGlobaltimer:
      return FindingKind::kBadGlobaltimer;
    case HeaderProblem::kWrongUnit:
    case HeaderProblem::kNone:
      break;
  }
  return FindingKind::kWrongUnit;
}

std::string HeaderMessage(const DecodedRecord& r) {
  const absl::Span<const uint32_t> h = r.header;
  switch (r.header_problem) {
    case HeaderProblem::kMissing:
      return "no record: the unit never ran its prologue (its header is all zero)";
    case HeaderProblem::kBadMagic:
      return absl::StrFormat(
          "header magic is 0x%08x, expected 0x%08x ('WTRC'): the record was overwritten or "
          "the buffer is not a warptrace trace",
          h[0], abi::kTraceMagic);
    case HeaderProblem::kBadVersion:
      return absl::StrFormat(
          "trace ABI version %d, this build reads versions %d to %d: decode it with the "
          "warptrace that recorded it",
          h[1], abi::kMinTraceVersion, abi::kTraceVersion);
    case HeaderProblem::kBadHeaderWords:
      return absl::StrFormat("header says it is %d words, expected %d", h[14],
                             abi::kHeaderWords);
    case HeaderProblem::kBadChecksum:
      if (h[1] < abi::kEventChecksumVersion || (h[7] & abi::kFlagComplete) == 0) {
        return absl::StrFormat(
            "header checksum 0x%08x does not match its identity words (expected 0x%08x): the "
            "header was overwritten",
            h[15], r.expected_checksum);
      }
      return absl::StrFormat(
          "record checksum 0x%08x does not match its identity words and its %d stored event "
          "slots (expected 0x%08x): an event word (tag, clock or payload) or an identity word "
          "was changed after the kernel wrote it; the unit's events are not used",
          h[15], h[5] < h[6] ? h[5] : h[6], r.expected_checksum);
    case HeaderProblem::kWrongBlock:
      return absl::StrFormat(
          "header says block %d but this buffer position holds block %d: records are out of "
          "place (wrong grid or sample in the layout?)",
          h[3], r.block_linear);
    case HeaderProblem::kWrongUnit:
      return absl::StrFormat(
          "header says unit %d but this buffer position holds unit %d: records are out of "
          "place (wrong trace unit in the layout?)",
          h[4], r.unit_index);
    case HeaderProblem::kBadGlobaltimer:
      return absl::StrFormat(
          "start globaltimer %d ns is past 2^62 ns (146 years), which no device reaches: the "
          "header's timer words were overwritten",
          uint64_t{h[10]} | (uint64_t{h[11]} << 32));
    case HeaderProblem::kNone:
      break;
  }
  return "";
}

}  // namespace

namespace {

constexpr EnumTable<Severity, 2> kSeverities{"severity", {{
    {Severity::kWarning, "warning"},
    {Severity::kError, "error"},
}}};
static_assert(kSeverities.Covers(2));

}  // namespace

const char* SeverityName(Severity severity) { return kSeverities.Name(severity); }

namespace {

constexpr EnumTable<FindingKind, 32> kFindingKinds{"finding kind", {{
    {FindingKind::kMissingRecord, "missing_record"},
    {FindingKind::kBadMagic, "bad_magic"},
    {FindingKind::kBadVersion, "bad_version"},
    {FindingKind::kBadHeaderWords, "bad_header_words"},
    {FindingKind::kBadChecksum, "bad_checksum"},
    {FindingKind::kWrongBlock, "wrong_block"},
    {FindingKind::kWrongUnit, "wrong_unit"},
    {FindingKind::kBadGlobaltimer, "bad_globaltimer"},
    {FindingKind::kSmIdOutOfRange, "sm_id_out_of_range"},
    {FindingKind::kIncomplete, "incomplete"},
    {FindingKind::kEndBeforeStart, "end_before_start"},
    {FindingKind::kUnknownFlags, "unknown_flags"},
    {FindingKind::kDroppedEvents, "dropped_events"},
    {FindingKind::kUnknownSite, "unknown_site"},
    {FindingKind::kExitWithoutBegin, "exit_without_begin"},
    {FindingKind::kMismatchedNesting, "mismatched_nesting"},
    {FindingKind::kUnpairedEvent, "unpaired_event"},
    {FindingKind::kClockBackwards, "clock_backwards"},
    {FindingKind::kClockAmbiguous, "clock_ambiguous"},
    {FindingKind::kClockWrapsLost, "clock_wraps_lost"},
    {FindingKind::kReleaseBeforeArrivals, "release_before_arrivals"},
    {FindingKind::kArrivalCountMismatch, "arrival_count_mismatch"},
    {FindingKind::kAsyncEndWithoutBegin, "async_end_without_begin"},
    {FindingKind::kAsyncNeverCompleted, "async_never_completed"},
    {FindingKind::kAsyncEndNotDerivable, "async_end_not_derivable"},
    {FindingKind::kGroupEndNotDerivable, "group_end_not_derivable"},
    {FindingKind::kGroupWaitShort, "group_wait_short"},
    {FindingKind::kTripCountExceeded, "trip_count_exceeded"},
    {FindingKind::kTripCountShort, "trip_count_short"},
    {FindingKind::kEventCountMismatch, "event_count_mismatch"},
    {FindingKind::kRepaired, "repaired"},
    {FindingKind::kTooManyFindings, "too_many_findings"},
}}};
// Every kind has a name: kTooManyFindings is the last.
static_assert(kFindingKinds.Covers(kNumFindingKinds));

}  // namespace

const char* FindingKindName(FindingKind kind) { return kFindingKinds.Name(kind); }

std::string FormatFinding(const Finding& f) {
  if (f.kind == FindingKind::kTooManyFindings) return f.message;
  if (f.event_index >= 0) {
    return absl::StrFormat("%s event %d: %s", UnitName(f.block_index, f.unit_kind, f.unit_index),
                           f.event_index, f.message);
  }
  return absl::StrFormat("%s: %s", UnitName(f.block_index, f.unit_kind, f.unit_index),
                         f.message);
}

namespace {

// One line per distinct error finding: those that several units share word for word (the
// same loop short in every unit) are grouped, naming the first units and counting the rest.
void AppendGroupedErrors(const std::vector<Finding>& findings, std::string& text) {
  constexpr size_t kUnitsNamed = 3;
  struct Group {
    const Finding* first;
    std::vector<std::string> units;
    uint64_t count = 0;
  };
  std::vector<Group> groups;
  std::map<std::pair<FindingKind, std::string>, size_t> group_of;
  for (const Finding& f : findings) {
    if (f.severity != Severity::kError && f.kind != FindingKind::kTooManyFindings) continue;
    const auto [it, added] = group_of.emplace(std::make_pair(f.kind, f.message), groups.size());
    if (added) groups.push_back({&f, {}, 0});
    Group& g = groups[it->second];
    ++g.count;
    if (g.units.size() < kUnitsNamed) {
      std::string unit = UnitName(f.block_index, f.unit_kind, f.unit_index);
      if (f.event_index >= 0) absl::StrAppend(&unit, " event ", f.event_index);
      g.units.push_back(std::move(unit));
    }
  }
  for (const Group& g : groups) {
    if (g.count == 1 || g.first->kind == FindingKind::kTooManyFindings) {
      absl::StrAppend(&text, "\n  ", FormatFinding(*g.first));
      continue;
    }
    absl::StrAppend(&text, "\n  ", g.first->message, " (in ", g.count, " units: ",
                    absl::StrJoin(g.units, ", "));
    if (g.count > g.units.size()) absl::StrAppend(&text, " and ", g.count - g.units.size(), " more");
    absl::StrAppend(&text, ")");
  }
}

}  // namespace

absl::Status VerifyReport::ToStatus() const {
  if (errors == 0) return absl::OkStatus();
  const uint64_t dropped_errors = kind_counts[static_cast<int>(FindingKind::kDroppedEvents)];
  // A loop past its declared count is why events were dropped: still a capacity problem.
  const uint64_t overrun_errors =
      kind_counts[static_cast<int>(FindingKind::kTripCountExceeded)] +
      kind_counts[static_cast<int>(FindingKind::kEventCountMismatch)];
  const bool only_dropped =
      dropped_errors > 0 && dropped_errors + overrun_errors == errors;
  std::string text = absl::StrFormat(
      "trace verification found %d error%s in %d of %d units (run with allow_truncated / "
      "--allow-truncated to keep each unit's valid prefix instead):",
      errors, errors == 1 ? "" : "s",
      // Units with an error: a complete unit can have one (a loop past its Exact count).
      std::min<uint64_t>(std::max<uint64_t>(units_with_errors,
                                            units.size() -
                                                verdict_counts[static_cast<int>(
                                                    Verdict::kComplete)]),
                         units.size()),
      units.size());
  AppendGroupedErrors(findings, text);
  if (only_dropped) {
    absl::StrAppend(&text, "\n  a capacity of ", required_capacity(),
                    " events per unit would have held every event");
    return absl::ResourceExhaustedError(text);
  }
  return absl::DataLossError(text);
}

namespace {

// What the event walk says is wrong with a unit's events, first problem first.
struct EventProblem {
  uint32_t first_error = UINT32_MAX;  // event index of the first event error, or none
  FindingKind kind = FindingKind::kUnknownSite;
  uint32_t site = 0;          // the offending event's site
  int64_t back_cycles = 0;    // kClockBackwards: how far back
  bool end_stamp_back = false;  // the end stamp steps back beyond the overhead
  int64_t end_back_cycles = 0;
  uint32_t open_regions = 0;  // regions open before first_error (after all events if none)
};

EventProblem FindEventProblem(const DecodedRecord& r, const UnitWalk& walk,
                              uint64_t overhead) {
  EventProblem p;
  switch (walk.error) {
    case WalkError::kNone: break;
    case WalkError::kUnknownSite: p.kind = FindingKind::kUnknownSite; break;
    case WalkError::kExitWithoutBegin: p.kind = FindingKind::kExitWithoutBegin; break;
    case WalkError::kMismatchedNesting: p.kind = FindingKind::kMismatchedNesting; break;
  }
  if (walk.error != WalkError::kNone) {
    p.first_error = walk.walked;
    p.site = walk.error_site;
  }
  p.open_regions = static_cast<uint32_t>(walk.open.size());
  for (const BackStep& b : walk.back_steps) {
    if (static_cast<uint64_t>(b.cycles) <= overhead) continue;
    if (b.event < walk.walked) {
      p.first_error = b.event;
      p.kind = FindingKind::kClockBackwards;
      p.site = abi::TagSite(r.events[b.event].tag);
      p.back_cycles = b.cycles;
      p.open_regions = walk.OpenBefore(b.event);
    } else if (walk.chain_to_end) {
      p.end_stamp_back = true;
      p.end_back_cycles = b.cycles;
    }
    break;
  }
  return p;
}

std::string EventProblemMessage(const EventProblem& p, const UnitWalk& walk,
                                const TraceLayout& layout, uint64_t overhead) {
  const uint32_t num_sites = static_cast<uint32_t>(layout.sites.size());
  switch (p.kind) {
    case FindingKind::kUnknownSite:
      return absl::StrFormat("site id %d is not in the layout's site table (%d sites, ids 0..%d)",
                             p.site, num_sites, num_sites == 0 ? 0 : num_sites - 1);
    case FindingKind::kExitWithoutBegin:
      return absl::StrFormat("exit of %s without its begin (no region is open)",
                             SiteName(layout, p.site));
    case FindingKind::kMismatchedNesting:
      return absl::StrFormat(
          "exit of %s while %s (begun at event %d) is the innermost open region",
          SiteName(layout, p.site), SiteName(layout, walk.expected_site), walk.expected_begin);
    case FindingKind::kClockBackwards:
      return absl::StrFormat(
          "%%clock goes back %d cycles from the previous stamp (%s event), more than the "
          "unit's measured overhead of %d cycles",
          p.back_cycles, SiteName(layout, p.site), overhead);
    default:
      break;
  }
  return "";
}

// The finding for wraps the globaltimer span could not confirm, if any.
std::string WrapMessage(const DecodedRecord& r, const WrapCheck& w, int64_t chain_cycles,
                        uint64_t nominal_khz) {
  const uint64_t span = r.end_globaltimer - r.start_globaltimer;
  const double mhz = span == 0 ? 0.0
                               : static_cast<double>(w.total_cycles) /
                                     static_cast<double>(span) * 1e3;
  const double nominal_mhz = static_cast<double>(nominal_khz) / 1e3;
  switch (w.outcome) {
    case WrapOutcome::kUndetermined:
      return absl::StrFormat(
          "the unit ran %d ns: at %.0f-%.0f MHz (1/4..2x the nominal clock) that allows %d "
          "different counts of %%clock wraps, so the wraps between its events cannot be "
          "checked; its events were read as %d cycles (%.3f MHz)",
          span, nominal_mhz / 4, nominal_mhz * 2, w.fitting_totals, w.total_cycles, mhz);
    case WrapOutcome::kWhichUnknown:
      return absl::StrFormat(
          "the globaltimer span (%d ns) says %d of the steps read as gaps of almost 2^32 "
          "cycles were steps back, but not which: the smallest steps back were taken "
          "(%d cycles, %.3f MHz)",
          span, w.flip, w.total_cycles, mhz);
    case WrapOutcome::kLost:
      return absl::StrFormat(
          "the globaltimer span (%d ns) needs %d cycles but the events account for %d, %d "
          "wrap%s of %%clock fewer: a gap of 2^32 cycles or more between two events lost "
          "them and they cannot be placed; the unit is timed with the nominal clock",
          span, w.total_cycles, chain_cycles, (w.total_cycles - chain_cycles) / kWrapCycles,
          (w.total_cycles - chain_cycles) / kWrapCycles == 1 ? "" : "s");
    default:
      break;
  }
  return "";
}

}  // namespace

UnitVerifier::UnitVerifier(const DecodedTrace& decoded, const VerifyOptions& options,
                           VerifyReport& report)
    : layout_(*decoded.layout), options_(options), report_(report) {
  report_ = VerifyReport();
  report_.allow_truncated = options.allow_truncated;
  report_.capacity = layout_.capacity;
  report_.units.reserve(decoded.records.size());
  for (const DecodedRecord& r : decoded.records) {
    if (r.header_problem == HeaderProblem::kNone) {
      report_.max_attempted = std::max(report_.max_attempted, r.attempted);
    }
  }
}

UnitVerifier::UnitVerifier(const UnitVerifier& parent, VerifyReport& unit_report)
    : layout_(parent.layout_), options_(parent.options_), report_(unit_report) {
  report_ = VerifyReport();
  report_.allow_truncated = parent.report_.allow_truncated;
  report_.capacity = parent.report_.capacity;
  report_.max_attempted = parent.report_.max_attempted;  // named in dropped-events messages
}

UnitVerifier UnitVerifier::ForUnit(VerifyReport& unit_report) const {
  return UnitVerifier(*this, unit_report);
}

const UnitVerdict& UnitVerifier::AppendUnit(VerifyReport& unit, uint64_t suppressed) {
  for (size_t k = 0; k < report_.kind_counts.size(); ++k) {
    report_.kind_counts[k] += unit.kind_counts[k];
  }
  for (size_t k = 0; k < report_.verdict_counts.size(); ++k) {
    report_.verdict_counts[k] += unit.verdict_counts[k];
  }
  report_.errors += unit.errors;
  report_.units_with_errors += unit.units_with_errors;
  report_.warnings += unit.warnings;
  report_.dropped_events += unit.dropped_events;
  report_.kept_events += unit.kept_events;
  suppressed_ += suppressed;
  // The unit's verifier listed what the per-unit cap allows; the report cap depends on the
  // findings before it, so it is applied here, as Collector::Add does.
  for (Finding& f : unit.findings) {
    if (report_.findings.size() >= options_.max_findings) {
      ++suppressed_;
      continue;
    }
    report_.findings.push_back(std::move(f));
  }
  report_.units.push_back(std::move(unit.units.front()));
  return report_.units.back();
}

const UnitVerdict& UnitVerifier::Add(const DecodedRecord& r, const UnitWalk& walk) {
  Collector collect(report_, layout_, options_, suppressed_);
  UnitVerdict& v = report_.units.emplace_back();
  v.record_index = r.record_index;
  v.block_linear = r.block_linear;
  v.unit_index = r.unit_index;
  if (r.header_problem != HeaderProblem::kNone) {
    v.verdict =
        r.header_problem == HeaderProblem::kMissing ? Verdict::kMissing : Verdict::kCorrupt;
    v.reason = HeaderMessage(r);
    collect.Add(HeaderFindingKind(r.header_problem), r, -1, [&] { return v.reason; });
  } else {
    VerifyEvents(r, walk, collect, v);
    // Planned vs recorded (plan_check.h): findings that leave the verdict as it is.
    for (PlanMismatch& m : CheckPlan(r, walk, layout_)) {
      const FindingKind kind = m.kind == PlanMismatch::Kind::kTripExceeded
                                   ? FindingKind::kTripCountExceeded
                               : m.kind == PlanMismatch::Kind::kTripShort
                                   ? FindingKind::kTripCountShort
                                   : FindingKind::kEventCountMismatch;
      collect.Add(kind, r, m.event, [&] { return std::move(m.message); });
    }
  }
  ++report_.verdict_counts[static_cast<int>(v.verdict)];
  return v;
}

// Header-level checks of a readable record; returns whether one failed.
bool UnitVerifier::CheckStamps(const DecodedRecord& r, Collector& collect, std::string& reason) {
  bool corrupt = false;
  auto note = [&](FindingKind kind, std::string m) {
    corrupt = true;
    if (reason.empty()) reason = m;
    collect.Add(kind, r, -1, [&] { return m; });
  };
  if (layout_.clock.num_sms != 0 && r.sm_id >= layout_.clock.num_sms) {
    note(FindingKind::kSmIdOutOfRange,
         absl::StrFormat("SM id %d is beyond the device's %d SMs (ids 0..%d): the header is "
                         "damaged or the layout names another device",
                         r.sm_id, layout_.clock.num_sms, layout_.clock.num_sms - 1));
  }
  if (const uint32_t unknown = r.flags & ~(abi::kFlagComplete | abi::kFlagShared | abi::kFlagEarlyReturn);
      unknown != 0) {
    note(FindingKind::kUnknownFlags,
         absl::StrFormat("header flags 0x%08x have bits no recorder sets (0x%08x): the header "
                         "was overwritten",
                         r.flags, unknown));
  }
  if (r.complete() && r.end_globaltimer >= kMaxGlobaltimerNs) {
    // As for the start stamp (decode.h): a flipped high word, not a unit that ran 292 years.
    note(FindingKind::kBadGlobaltimer,
         absl::StrFormat("end globaltimer %d ns is past 2^62 ns, which no device reaches: the "
                         "header's end stamp was overwritten",
                         r.end_globaltimer));
  } else if (r.complete() && r.end_globaltimer < r.start_globaltimer) {
    note(FindingKind::kEndBeforeStart,
         absl::StrFormat("unit ends at globaltimer %d ns, %d ns before it starts (%d ns)",
                         r.end_globaltimer, r.start_globaltimer - r.end_globaltimer,
                         r.start_globaltimer));
  }
  return corrupt;
}

void UnitVerifier::VerifyEvents(const DecodedRecord& r, const UnitWalk& walk,
                                Collector& collect, UnitVerdict& v) {
  std::string reason;
  auto note = [&](const std::string& text) {
    if (reason.empty()) reason = text;
  };
  bool unit_corrupt = CheckStamps(r, collect, reason);
  const uint32_t n = static_cast<uint32_t>(r.events.size());
  const uint64_t overhead =
      walk.min_gap == std::numeric_limits<uint64_t>::max() ? 0 : walk.min_gap;
  const EventProblem p = FindEventProblem(r, walk, overhead);
  v.overhead_cycles = static_cast<uint32_t>(std::min<uint64_t>(overhead, UINT32_MAX));
  v.kept_events = std::min(p.first_error, n);
  v.open_regions = p.open_regions;
  v.dropped = r.dropped();
  report_.dropped_events += v.dropped;

  const bool event_error = p.first_error != UINT32_MAX;
  if (event_error) {
    const std::string m = EventProblemMessage(p, walk, layout_, overhead);
    unit_corrupt = true;
    note(m);
    collect.Add(p.kind, r, p.first_error, [&] { return m; });
  } else if (p.end_stamp_back) {
    unit_corrupt = true;
    const std::string m = absl::StrFormat(
        "the end stamp's %%clock is %d cycles before the last event, more than the unit's "
        "measured overhead of %d cycles",
        p.end_back_cycles, overhead);
    note(m);
    collect.Add(FindingKind::kClockBackwards, r, -1, [&] { return m; });
  }
  const bool wraps_lost = !event_error && walk.wraps.outcome == WrapOutcome::kLost;
  if (!event_error && !p.end_stamp_back) {
    const std::string m =
        WrapMessage(r, walk.wraps, walk.end_cycles, layout_.clock.nominal_sm_clock_khz);
    if (!m.empty()) {
      const FindingKind kind =
          wraps_lost ? FindingKind::kClockWrapsLost : FindingKind::kClockAmbiguous;
      if (wraps_lost) {
        unit_corrupt = true;
        note(m);
      }
      collect.Add(kind, r, -1, [&] { return m; });
    }
  }

  const bool overflowed = v.dropped > 0;
  if (overflowed) {
    const std::string m = absl::StrFormat(
        "dropped %d of %d events: capacity is %d per unit; the largest unit attempted %d, "
        "so a capacity of %d would have held every unit",
        v.dropped, r.attempted, r.capacity, report_.max_attempted, report_.required_capacity());
    note(m);
    collect.Add(FindingKind::kDroppedEvents, r, -1, [&] { return m; });
  }
  if (!r.complete()) {
    const std::string m = absl::StrFormat(
        "the unit never finished (no epilogue: it exited early, trapped or is still "
        "running); %d events were recovered from its slots",
        n);
    note(m);
    collect.Add(FindingKind::kIncomplete, r, -1, [&] { return m; });
  }
  const bool unpaired = !event_error && !overflowed && r.complete() && !walk.open.empty();
  if (unpaired) {
    const WalkSlice& open = walk.slices[walk.open.back()];
    const size_t depth = walk.open.size();
    const std::string m = absl::StrFormat(
        "%d region%s still open after the last event: %s begun at event %d has no exit "
        "(%d events recorded%s)",
        depth, depth == 1 ? " is" : "s are", SiteName(layout_, open.site), open.begin_event, n,
        n % 2 == 1 ? ", an odd number" : "");
    unit_corrupt = true;
    note(m);
    collect.Add(FindingKind::kUnpairedEvent, r, open.begin_event, [&] { return m; });
  }

  // The unit's last timestamp is its end stamp when it finished with trustworthy clocks.
  v.close_at_end_stamp = r.complete() && !event_error && !p.end_stamp_back && !wraps_lost &&
                         r.end_globaltimer >= r.start_globaltimer;
  v.verdict = DecideVerdict(unit_corrupt, event_error || unpaired, overflowed, r.complete());
  v.reason = std::move(reason);
  if (options_.allow_truncated && (v.kept_events < n || v.open_regions > 0)) {
    v.repaired = true;
    collect.Add(FindingKind::kRepaired, r, -1, [&] {
      return absl::StrFormat(
          "kept the first %d of %d events and closed %d open region%s at the unit's %s",
          v.kept_events, n, v.open_regions, v.open_regions == 1 ? "" : "s",
          v.close_at_end_stamp ? "end stamp" : "last kept event");
    });
  }
  report_.kept_events += v.kept_events;
}

namespace {

// The findings of a scope's unpaired async events (UnitVerifier::AddScope), through `add`.
void UnpairedFindings(const TraceLayout& layout, const Links& links, bool block_complete,
                      const std::function<bool(uint32_t)>& complete,
                      const std::function<void(const EventRef&, FindingKind, std::string)>& add) {
  for (const UnpairedAsync& u : links.unpaired) {
    const std::string site =
        u.site < layout.sites.size() ? absl::StrCat("\"", layout.sites[u.site].name, "\"")
                                     : absl::StrCat("#", u.site);
    if (!u.is_begin) {
      add(u.event, FindingKind::kAsyncEndWithoutBegin, absl::StrFormat(
          "completion of async copy %d of %s without its issue earlier in the unit: the "
          "issue was not recorded, or the completion records another copy's issue number",
          u.issue, site));
    } else if (u.no_wait) {
      if (!complete(u.event.record)) continue;  // a cut unit may have lost the wait
      add(u.event, FindingKind::kGroupEndNotDerivable, absl::StrFormat(
          "group %d of %s (its begin here) is never retired by a recorded wait of its kind in "
          "the unit, so its end cannot be derived (trace version 5 records such a group by "
          "its begin alone and derives its end at the unit's next wait that leaves fewer "
          "groups in flight): the kernel left it in flight at its exit, or a wait went "
          "unrecorded",
          u.issue, site));
    } else if (u.no_release) {
      if (!block_complete) continue;  // a cut unit may have lost the release
      add(u.event, FindingKind::kAsyncEndNotDerivable, absl::StrFormat(
          "async copy %d of %s completes phase %d of %s, but no wait on that phase is "
          "recorded in the %s, so its end cannot be derived (trace version 5 records a copy "
          "on a phase barrier by its begin alone): record a wait on the phase (WaitPhase on "
          "that barrier element, with a record policy that keeps waits), or wait for the "
          "phase before the kernel exits",
          u.issue, site, u.phase, BarrierName(layout, u.barrier),
          LinkScopeOf(layout) == LinkScope::kCluster ? "cluster" : "block"));
    } else if (complete(u.event.record)) {
      add(u.event, FindingKind::kAsyncNeverCompleted, absl::StrFormat(
          "async copy %d of %s is issued but the unit never observes its completion before "
          "it ends: wait for the copy (its group or its barrier phase) before exiting, or "
          "record the wait that observes it",
          u.issue, site));
    }
  }
}

}  // namespace

void UnitVerifier::AddScope(const ScopeLinker& linker) {
  Collector collect(report_, layout_, options_, suppressed_);
  const DecodedTrace* decoded = linker.decoded();
  auto record = [&](const EventRef& e) -> const DecodedRecord& { return decoded->records[e.record]; };
  auto unit = [&](const EventRef& e) {
    const DecodedRecord& r = record(e);
    return absl::StrFormat("%s %d event %d", UnitKindName(layout_.unit.kind), r.unit_index,
                           e.slot);
  };
  auto complete = [&](uint32_t index) {
    return index < report_.units.size() && report_.units[index].verdict == Verdict::kComplete;
  };
  bool block_complete = true;
  for (uint32_t i = linker.first_record(); i < linker.end_record(); ++i) {
    block_complete = block_complete && complete(i);
  }
  const Links& links = linker.links();
  // Findings in event order of the block: collect (event, kind, message) and sort.
  struct Pending {
    EventRef at;
    FindingKind kind;
    std::string message;
  };
  std::vector<Pending> pending;
  for (const PhaseRecord& p : links.phases) {
    const std::string barrier = BarrierName(layout_, p.barrier);
    const EventRef* last = nullptr;
    for (const EventRef& a : p.arrivals) {
      if (last == nullptr || linker.Cycles(a) >= linker.Cycles(*last)) last = &a;
    }
    if (last != nullptr) {
      for (const EventRef& release : p.releases) {
        const int64_t early = linker.Cycles(*last) - linker.Cycles(release);
        if (early <= 0) continue;
        pending.push_back({release, FindingKind::kReleaseBeforeArrivals, absl::StrFormat(
            "the wait on phase %d of %s is released %d SM cycles before %s (%s): a release "
            "cannot precede the arrivals that complete "
            "its phase, so the recorded phase numbers are off (check the phase the wait "
            "records against the barrier's uses, e.g. use k of ring stage s is phase k / "
            "stages) or the arrival belongs to another barrier",
            p.phase, barrier, early,
            p.arrivals.size() == 1
                ? std::string("that phase's arrival")
                : absl::StrCat("the last of that phase's ", p.arrivals.size(), " arrivals"),
            unit(*last))});
      }
    }
    const uint32_t expected = p.barrier < layout_.barriers.size()
                                  ? layout_.barriers[p.barrier].arrivals_per_phase
                                  : 0;
    if (expected != 0 && block_complete && p.arrivals.size() != expected) {
      const EventRef at = !p.releases.empty() ? p.releases.front() : p.arrivals.back();
      pending.push_back({at, FindingKind::kArrivalCountMismatch, absl::StrFormat(
          "phase %d of %s has %d recorded arrival%s but the barrier table says %d complete a "
          "phase: %s (check the arrival count the barrier was declared with, and that every "
          "arriving thread's arrival is recorded with this phase)",
          p.phase, barrier, p.arrivals.size(), p.arrivals.size() == 1 ? "" : "s", expected,
          p.arrivals.size() > expected ? "arrivals of another phase were recorded with this "
                                         "one, or the phase completed early"
                                       : "the phase can never complete, so a wait on it "
                                         "would hang (or arrivals went unrecorded)")});
    }
  }
  for (const ShortGroupWait& w : links.short_waits) {
    const std::string site = w.site < layout_.sites.size()
                                 ? absl::StrCat("\"", layout_.sites[w.site].name, "\"")
                                 : absl::StrCat("#", w.site);
    pending.push_back({w.wait, FindingKind::kGroupWaitShort, absl::StrFormat(
        "the wait recorded under %s leaves %d group%s of its kind in flight but only %d "
        "%s open in the unit, so it ended none: the kernel waited with fewer in flight "
        "than it declared, or begins of the kind went unrecorded (then the ends derived "
        "after it are late)",
        site, w.left, w.left == 1 ? "" : "s", w.open, w.open == 1 ? "was" : "were")});
  }
  UnpairedFindings(layout_, links, block_complete, complete,
                   [&](const EventRef& at, FindingKind kind, std::string message) {
                     pending.push_back({at, kind, std::move(message)});
                   });
  std::stable_sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.at.record, a.at.slot) < std::tie(b.at.record, b.at.slot);
  });
  for (Pending& p : pending) {
    collect.Add(p.kind, record(p.at), p.at.slot, [&] { return std::move(p.message); });
  }
}

Verdict UnitVerifier::DecideVerdict(bool unit_corrupt, bool prefix_cut, bool overflowed,
                                    bool complete) const {
  if (unit_corrupt && !options_.allow_truncated) return Verdict::kCorrupt;
  // A repaired prefix; unit-level damage that left the events whole stays corrupt.
  if (prefix_cut) return Verdict::kTruncated;
  if (unit_corrupt) return Verdict::kCorrupt;
  if (overflowed) return Verdict::kOverflowed;
  if (!complete) return Verdict::kTruncated;
  return Verdict::kComplete;
}

void UnitVerifier::Finish() {
  if (finished_) return;
  finished_ = true;
  Collector(report_, layout_, options_, suppressed_).Finish();
}

VerifyReport Verify(const DecodedTrace& decoded, const VerifyOptions& options) {
  VerifyReport report;
  UnitVerifier verifier(decoded, options, report);
  UnitWalk walk;
  ScopeLinker linker(decoded);
  for (const DecodedRecord& r : decoded.records) {
    WalkUnit(r, *decoded.layout, walk);
    const uint32_t kept = verifier.Add(r, walk).kept_events;
    if (linker.Add(r, walk, kept)) verifier.AddScope(linker);
  }
  verifier.Finish();
  return report;
}

}  // namespace warptrace
