#include "profiler/verify.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "profiler/device/trace_abi.h"

namespace warptrace {
namespace {

namespace json = ::llvm::json;

struct Open {
  uint32_t site;
  uint32_t event;
};

// Collects findings for one report, honouring the caps without building strings past them.
class Collector {
 public:
  Collector(VerifyReport& report, const VerifyOptions& options)
      : report_(report), options_(options) {}

  void StartUnit() { unit_findings_ = 0; }

  template <typename MakeMessage>
  void Add(FindingKind kind, const DecodedRecord& r, int64_t event, MakeMessage&& make) {
    const Severity severity = (options_.allow_truncated || kind == FindingKind::kRepaired)
                                  ? Severity::kWarning
                                  : Severity::kError;
    ++report_.kind_counts[static_cast<int>(kind)];
    if (severity == Severity::kError) {
      ++report_.errors;
    } else {
      ++report_.warnings;
    }
    if (unit_findings_ >= options_.max_findings_per_unit ||
        report_.findings.size() >= options_.max_findings) {
      ++suppressed_;
      return;
    }
    ++unit_findings_;
    report_.findings.push_back(
        {severity, kind, r.record_index, r.block_linear, r.unit_index, event, make()});
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
  const VerifyOptions& options_;
  uint32_t unit_findings_ = 0;
  uint64_t suppressed_ = 0;
};

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
          "trace ABI version %d, this build reads version %d: decode it with the warptrace "
          "that recorded it",
          h[1], abi::kTraceVersion);
    case HeaderProblem::kBadHeaderWords:
      return absl::StrFormat("header says it is %d words, expected %d", h[14],
                             abi::kHeaderWords);
    case HeaderProblem::kBadChecksum:
      return absl::StrFormat(
          "header checksum 0x%08x does not match its identity words (expected 0x%08x): the "
          "header was overwritten",
          h[15], abi::HeaderChecksum(h[0], h[1], h[2], h[3], h[4], h[6]));
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

// The event scan of one unit with a valid header.
struct EventScan {
  uint32_t first_error = UINT32_MAX;  // event index of the first event error, or none
  FindingKind error_kind = FindingKind::kUnknownSite;
  uint32_t error_site = 0;     // the offending event's site
  uint32_t expected_site = 0;  // kMismatchedNesting: the innermost open site
  int64_t back_cycles = 0;     // kClockBackwards: how far back
  uint64_t overhead = 0;
  bool end_stamp_back = false;  // the end stamp steps back beyond the overhead
  int64_t end_back_cycles = 0;
};

}  // namespace

const char* SeverityName(Severity severity) {
  return severity == Severity::kError ? "error" : "warning";
}

const char* FindingKindName(FindingKind kind) {
  switch (kind) {
    case FindingKind::kMissingRecord: return "missing_record";
    case FindingKind::kBadMagic: return "bad_magic";
    case FindingKind::kBadVersion: return "bad_version";
    case FindingKind::kBadHeaderWords: return "bad_header_words";
    case FindingKind::kBadChecksum: return "bad_checksum";
    case FindingKind::kWrongBlock: return "wrong_block";
    case FindingKind::kWrongUnit: return "wrong_unit";
    case FindingKind::kBadGlobaltimer: return "bad_globaltimer";
    case FindingKind::kSmIdOutOfRange: return "sm_id_out_of_range";
    case FindingKind::kIncomplete: return "incomplete";
    case FindingKind::kEndBeforeStart: return "end_before_start";
    case FindingKind::kDroppedEvents: return "dropped_events";
    case FindingKind::kUnknownSite: return "unknown_site";
    case FindingKind::kExitWithoutBegin: return "exit_without_begin";
    case FindingKind::kMismatchedNesting: return "mismatched_nesting";
    case FindingKind::kUnpairedEvent: return "unpaired_event";
    case FindingKind::kClockBackwards: return "clock_backwards";
    case FindingKind::kRepaired: return "repaired";
    case FindingKind::kTooManyFindings: return "too_many_findings";
  }
  return "?";
}

std::string FormatFinding(const Finding& f) {
  if (f.kind == FindingKind::kTooManyFindings) return f.message;
  if (f.event_index >= 0) {
    return absl::StrFormat("block %d unit %d event %d: %s", f.block_linear, f.unit_index,
                           f.event_index, f.message);
  }
  return absl::StrFormat("block %d unit %d: %s", f.block_linear, f.unit_index, f.message);
}

absl::Status VerifyReport::ToStatus() const {
  if (errors == 0) return absl::OkStatus();
  const uint64_t dropped_errors = kind_counts[static_cast<int>(FindingKind::kDroppedEvents)];
  const bool only_dropped = dropped_errors == errors;
  std::string text = absl::StrFormat(
      "trace verification found %d error%s in %d of %d units (run with allow_truncated / "
      "--allow-truncated to keep each unit's valid prefix instead):",
      errors, errors == 1 ? "" : "s",
      units.size() - verdict_counts[static_cast<int>(Verdict::kComplete)], units.size());
  for (const Finding& f : findings) {
    if (f.severity != Severity::kError && f.kind != FindingKind::kTooManyFindings) continue;
    absl::StrAppend(&text, "\n  ", FormatFinding(f));
  }
  if (only_dropped) {
    absl::StrAppend(&text, "\n  a capacity of ", required_capacity(),
                    " events per unit would have held every event");
    return absl::ResourceExhaustedError(text);
  }
  return absl::DataLossError(text);
}

VerifyReport Verify(const DecodedTrace& decoded, const VerifyOptions& options) {
  VerifyReport report;
  report.allow_truncated = options.allow_truncated;
  const TraceLayout& layout = *decoded.layout;
  report.capacity = layout.capacity;
  report.units.resize(decoded.records.size());
  for (const DecodedRecord& r : decoded.records) {
    if (r.header_problem == HeaderProblem::kNone) {
      report.max_attempted = std::max(report.max_attempted, r.attempted);
    }
  }

  Collector collect(report, options);
  const uint32_t num_sites = static_cast<uint32_t>(layout.sites.size());
  std::vector<Open> stack;
  stack.reserve(64);

  for (const DecodedRecord& r : decoded.records) {
    collect.StartUnit();
    UnitVerdict& v = report.units[r.record_index];
    v.record_index = r.record_index;
    v.block_linear = r.block_linear;
    v.unit_index = r.unit_index;

    if (r.header_problem != HeaderProblem::kNone) {
      v.verdict =
          r.header_problem == HeaderProblem::kMissing ? Verdict::kMissing : Verdict::kCorrupt;
      v.reason = HeaderMessage(r);
      collect.Add(HeaderFindingKind(r.header_problem), r, -1, [&] { return v.reason; });
      ++report.verdict_counts[static_cast<int>(v.verdict)];
      continue;
    }

    bool unit_corrupt = false;
    std::string reason;
    auto note_reason = [&](const std::string& text) {
      if (reason.empty()) reason = text;
    };

    if (layout.clock.num_sms != 0 && r.sm_id >= layout.clock.num_sms) {
      unit_corrupt = true;
      std::string m = absl::StrFormat(
          "SM id %d is beyond the device's %d SMs (ids 0..%d): the header is damaged or the "
          "layout names another device",
          r.sm_id, layout.clock.num_sms, layout.clock.num_sms - 1);
      note_reason(m);
      collect.Add(FindingKind::kSmIdOutOfRange, r, -1, [&] { return m; });
    }
    if (r.complete() && r.end_globaltimer < r.start_globaltimer) {
      unit_corrupt = true;
      std::string m = absl::StrFormat(
          "unit ends at globaltimer %d ns, %d ns before it starts (%d ns)", r.end_globaltimer,
          r.start_globaltimer - r.end_globaltimer, r.start_globaltimer);
      note_reason(m);
      collect.Add(FindingKind::kEndBeforeStart, r, -1, [&] { return m; });
    }

    // ---- the event scan: nesting, sites and clock steps in one pass -------------------
    const absl::Span<const abi::Event> events = r.events;
    const uint32_t n = static_cast<uint32_t>(events.size());
    const uint64_t max_forward = MaxForwardCycles(r, layout.clock.nominal_sm_clock_khz);
    EventScan scan;
    stack.clear();
    uint64_t min_gap = std::numeric_limits<uint64_t>::max();
    int64_t worst_back = 0;
    uint32_t prev = r.start_clock;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t tag = events[i].tag;
      const uint32_t site = abi::TagSite(tag);
      if (site >= num_sites) {
        scan.first_error = i;
        scan.error_kind = FindingKind::kUnknownSite;
        scan.error_site = site;
        break;
      }
      const int64_t step = ClockStep(prev, events[i].clock, max_forward);
      if (step < 0) {
        worst_back = std::max(worst_back, -step);
      } else if (i > 0 && static_cast<uint64_t>(step) < min_gap) {
        min_gap = static_cast<uint64_t>(step);
      }
      prev = events[i].clock;
      if (abi::TagIsExit(tag)) {
        if (stack.empty()) {
          scan.first_error = i;
          scan.error_kind = FindingKind::kExitWithoutBegin;
          scan.error_site = site;
          break;
        }
        if (stack.back().site != site) {
          scan.first_error = i;
          scan.error_kind = FindingKind::kMismatchedNesting;
          scan.error_site = site;
          scan.expected_site = stack.back().site;
          break;
        }
        stack.pop_back();
      } else {
        stack.push_back({site, i});
      }
    }
    scan.overhead = min_gap == std::numeric_limits<uint64_t>::max() ? 0 : min_gap;
    const uint32_t scanned = std::min(scan.first_error, n);
    if (scan.first_error == UINT32_MAX && r.complete()) {
      const int64_t step = ClockStep(prev, r.end_clock, max_forward);
      if (step < 0 && static_cast<uint64_t>(-step) > scan.overhead) {
        scan.end_stamp_back = true;
        scan.end_back_cycles = -step;
      }
    }
    if (static_cast<uint64_t>(worst_back) > scan.overhead) {
      // Rare: find the first step back beyond the overhead, and the nesting state there.
      uint32_t p = r.start_clock;
      for (uint32_t i = 0; i < scanned; ++i) {
        const int64_t step = ClockStep(p, events[i].clock, max_forward);
        p = events[i].clock;
        if (step < 0 && static_cast<uint64_t>(-step) > scan.overhead) {
          scan.first_error = i;
          scan.error_kind = FindingKind::kClockBackwards;
          scan.error_site = abi::TagSite(events[i].tag);
          scan.back_cycles = -step;
          break;
        }
      }
      stack.clear();
      for (uint32_t i = 0; i < std::min(scan.first_error, n); ++i) {
        if (abi::TagIsExit(events[i].tag)) {
          stack.pop_back();
        } else {
          stack.push_back({abi::TagSite(events[i].tag), i});
        }
      }
    }

    v.overhead_cycles = static_cast<uint32_t>(std::min<uint64_t>(scan.overhead, UINT32_MAX));
    v.kept_events = std::min(scan.first_error, n);
    v.open_regions = static_cast<uint32_t>(stack.size());
    v.dropped = r.dropped();
    report.dropped_events += v.dropped;

    const bool event_error = scan.first_error != UINT32_MAX;
    if (event_error) {
      const uint32_t i = scan.first_error;
      std::string m;
      switch (scan.error_kind) {
        case FindingKind::kUnknownSite:
          m = absl::StrFormat(
              "site id %d is not in the layout's site table (%d sites, ids 0..%d)",
              scan.error_site, num_sites, num_sites == 0 ? 0 : num_sites - 1);
          break;
        case FindingKind::kExitWithoutBegin:
          m = absl::StrFormat("exit of %s without its begin (no region is open)",
                              SiteName(layout, scan.error_site));
          break;
        case FindingKind::kMismatchedNesting:
          m = absl::StrFormat("exit of %s while %s (begun at event %d) is the innermost open "
                              "region",
                              SiteName(layout, scan.error_site),
                              SiteName(layout, scan.expected_site), stack.back().event);
          break;
        case FindingKind::kClockBackwards:
          m = absl::StrFormat(
              "%%clock goes back %d cycles from the previous stamp (%s event), more than the "
              "unit's measured overhead of %d cycles",
              scan.back_cycles, SiteName(layout, scan.error_site), scan.overhead);
          break;
        default:
          break;
      }
      unit_corrupt = true;
      note_reason(m);
      collect.Add(scan.error_kind, r, i, [&] { return m; });
    } else if (scan.end_stamp_back) {
      unit_corrupt = true;
      std::string m = absl::StrFormat(
          "the end stamp's %%clock is %d cycles before the last event, more than the unit's "
          "measured overhead of %d cycles",
          scan.end_back_cycles, scan.overhead);
      note_reason(m);
      collect.Add(FindingKind::kClockBackwards, r, -1, [&] { return m; });
    }

    const bool overflowed = v.dropped > 0;
    if (overflowed) {
      std::string m = absl::StrFormat(
          "dropped %d of %d events: capacity is %d per unit; the largest unit attempted %d, "
          "so a capacity of %d would have held every unit",
          v.dropped, r.attempted, r.capacity, report.max_attempted, report.required_capacity());
      note_reason(m);
      collect.Add(FindingKind::kDroppedEvents, r, -1, [&] { return m; });
    }
    if (!r.complete()) {
      std::string m = absl::StrFormat(
          "the unit never finished (no epilogue: it exited early, trapped or is still "
          "running); %d events were recovered from its slots",
          n);
      note_reason(m);
      collect.Add(FindingKind::kIncomplete, r, -1, [&] { return m; });
    }
    const bool unpaired = !event_error && !overflowed && r.complete() && !stack.empty();
    if (unpaired) {
      const Open& open = stack.back();
      std::string m = absl::StrFormat(
          "%d region%s still open after the last event: %s begun at event %d has no exit "
          "(%d events recorded%s)",
          stack.size(), stack.size() == 1 ? " is" : "s are", SiteName(layout, open.site),
          open.event, n, n % 2 == 1 ? ", an odd number" : "");
      unit_corrupt = true;
      note_reason(m);
      collect.Add(FindingKind::kUnpairedEvent, r, open.event, [&] { return m; });
    }

    // The unit's last timestamp is its end stamp when it finished with trustworthy clocks.
    v.close_at_end_stamp = r.complete() && !event_error && !scan.end_stamp_back &&
                           r.end_globaltimer >= r.start_globaltimer;
    if (unit_corrupt && !options.allow_truncated) {
      v.verdict = Verdict::kCorrupt;
    } else if (event_error || unpaired) {
      // A repaired prefix; unit-level damage that left the events whole stays corrupt.
      v.verdict = Verdict::kTruncated;
    } else if (unit_corrupt) {
      v.verdict = Verdict::kCorrupt;
    } else if (overflowed) {
      v.verdict = Verdict::kOverflowed;
    } else if (!r.complete()) {
      v.verdict = Verdict::kTruncated;
    } else {
      v.verdict = Verdict::kComplete;
    }
    v.reason = std::move(reason);

    if (options.allow_truncated && (v.kept_events < n || v.open_regions > 0)) {
      v.repaired = true;
      collect.Add(FindingKind::kRepaired, r, -1, [&] {
        return absl::StrFormat(
            "kept the first %d of %d events and closed %d open region%s at the unit's %s",
            v.kept_events, n, v.open_regions, v.open_regions == 1 ? "" : "s",
            v.close_at_end_stamp ? "end stamp" : "last kept event");
      });
    }
    report.kept_events += v.kept_events;
    ++report.verdict_counts[static_cast<int>(v.verdict)];
  }
  collect.Finish();
  return report;
}

void WriteVerifyReportJson(const VerifyReport& report, const TraceLayout& layout,
                           llvm::raw_ostream& os) {
  json::OStream j(os, /*IndentSize=*/1);
  auto utf8 = [](const std::string& s) { return json::isUTF8(s) ? s : json::fixUTF8(s); };
  j.object([&] {
    j.attribute("format", "warptrace-verdict");
    j.attribute("version", 1);
    j.attribute("kernel", utf8(layout.kernel_name));
    j.attribute("device", utf8(layout.device_name));
    j.attribute("ok", report.ok());
    j.attribute("allow_truncated", report.allow_truncated);
    j.attribute("errors", static_cast<int64_t>(report.errors));
    j.attribute("warnings", static_cast<int64_t>(report.warnings));
    j.attribute("capacity", report.capacity);
    j.attribute("max_attempted", report.max_attempted);
    j.attribute("required_capacity", report.required_capacity());
    j.attribute("dropped_events", static_cast<int64_t>(report.dropped_events));
    j.attributeObject("verdicts", [&] {
      for (Verdict v : {Verdict::kComplete, Verdict::kTruncated, Verdict::kOverflowed,
                        Verdict::kCorrupt, Verdict::kMissing}) {
        j.attribute(VerdictName(v),
                    static_cast<int64_t>(report.verdict_counts[static_cast<int>(v)]));
      }
    });
    j.attributeObject("finding_counts", [&] {
      for (int k = 0; k < kNumFindingKinds; ++k) {
        if (report.kind_counts[k] == 0) continue;
        j.attribute(FindingKindName(static_cast<FindingKind>(k)),
                    static_cast<int64_t>(report.kind_counts[k]));
      }
    });
    j.attributeArray("units", [&] {
      for (const UnitVerdict& u : report.units) {
        j.object([&] {
          j.attribute("record", static_cast<int64_t>(u.record_index));
          j.attribute("block", u.block_linear);
          j.attribute("unit", u.unit_index);
          j.attribute("verdict", VerdictName(u.verdict));
          j.attribute("reason", utf8(u.reason));
          j.attribute("kept_events", u.kept_events);
          j.attribute("dropped", u.dropped);
          j.attribute("overhead_cycles", u.overhead_cycles);
          j.attribute("repaired", u.repaired);
        });
      }
    });
    j.attributeArray("findings", [&] {
      for (const Finding& f : report.findings) {
        j.object([&] {
          j.attribute("severity", SeverityName(f.severity));
          j.attribute("kind", FindingKindName(f.kind));
          j.attribute("record", static_cast<int64_t>(f.record_index));
          j.attribute("block", f.block_linear);
          j.attribute("unit", f.unit_index);
          if (f.event_index >= 0) {
            j.attribute("event", f.event_index);
          } else {
            j.attribute("event", nullptr);
          }
          j.attribute("message", utf8(f.message));
        });
      }
    });
  });
}

absl::Status WriteVerifyReportFile(const VerifyReport& report, const TraceLayout& layout,
                                   absl::string_view path) {
  const std::string file(path);
  llvm::Error error = llvm::writeToOutput(file, [&](llvm::raw_ostream& os) -> llvm::Error {
    WriteVerifyReportJson(report, layout, os);
    os << "\n";
    return llvm::Error::success();
  });
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("writing verdict report ", file, ": ", llvm::toString(std::move(error))));
  }
  return absl::OkStatus();
}

}  // namespace warptrace
