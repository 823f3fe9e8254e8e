#include "tests/fuzz/dump_fuzz_target.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "format/trace_abi.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/summary.h"
#include "profiler/dump/collector.h"
#include "profiler/dump/dump.h"
#include "profiler/imports/mosaic_import.h"
#include "profiler/imports/sidecar.h"
#include "profiler/outputs/chrome_trace.h"
#include "profiler/outputs/chrome_trace_sink.h"
#include "profiler/timeline/timeline.h"
#include "profiler/timeline/timeline_types.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/verify.h"

namespace warptrace::fuzz {
namespace {

namespace json = llvm::json;

// Returns Internal from the enclosing function when `cond` is false.
#define FUZZ_CHECK(cond, ...)                                                              \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      return absl::InternalError(absl::StrCat("invariant broken: ", #cond, " (", __FILE__, \
                                              ":", __LINE__, "): ", __VA_ARGS__));         \
    }                                                                                      \
  } while (false)

// Reads little-endian fields; past the end every byte is 0.
class Reader {
 public:
  explicit Reader(absl::Span<const uint8_t> data) : data_(data) {}
  uint8_t U8() {
    const uint8_t b = pos_ < data_.size() ? data_[pos_] : 0;
    ++pos_;
    return b;
  }
  uint16_t U16() {
    const uint16_t lo = U8();
    return static_cast<uint16_t>(lo | (uint16_t{U8()} << 8));
  }
  uint32_t U32() {
    const uint32_t lo = U16();
    return lo | (uint32_t{U16()} << 16);
  }
  absl::Span<const uint8_t> Rest() const {
    return pos_ < data_.size() ? data_.subspan(pos_) : absl::Span<const uint8_t>();
  }

 private:
  absl::Span<const uint8_t> data_;
  size_t pos_ = 0;
};

class Writer {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v) {
    U8(static_cast<uint8_t>(v));
    U8(static_cast<uint8_t>(v >> 8));
  }
  void U32(uint32_t v) {
    U16(static_cast<uint16_t>(v));
    U16(static_cast<uint16_t>(v >> 16));
  }
  void Words(absl::Span<const uint32_t> words) {
    for (uint32_t w : words) U32(w);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

std::vector<uint32_t> WordsOf(absl::Span<const uint8_t> bytes) {
  std::vector<uint32_t> words(bytes.size() / 4);
  for (size_t i = 0; i < words.size(); ++i) {
    words[i] = uint32_t{bytes[4 * i]} | uint32_t{bytes[4 * i + 1]} << 8 |
               uint32_t{bytes[4 * i + 2]} << 16 | uint32_t{bytes[4 * i + 3]} << 24;
  }
  return words;
}

// A string stream with a buffer. llvm::raw_string_ostream appends every small write of the
// JSON writers to its string at once, which was a fifth of a smoke run's time; this one
// appends in blocks. Like raw_string_ostream, the string is complete after flush(), which
// the destructor also does.
class BufferedStringStream final : public llvm::raw_string_ostream {
 public:
  explicit BufferedStringStream(std::string& out) : llvm::raw_string_ostream(out) {
    SetBuffered();
  }
  ~BufferedStringStream() override { flush(); }
};

// Names that stress the JSON writers: quotes, escapes, control characters, invalid UTF-8.
std::string SiteName(uint32_t i, bool odd) {
  if (!odd) return absl::StrCat("s", i % 5);
  switch (i % 3) {
    case 0: return "q\"\\\n\t\x01";
    case 1: return "bad \xc3\x28 utf8 \xff";
    default: return absl::StrCat("\xe2\x82\xac", i);
  }
}

absl::StatusOr<json::Value> ParseJson(const std::string& text, const char* what) {
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value) {
    return absl::InternalError(absl::StrCat("invariant broken: ", what,
                                            " does not parse back as JSON: ",
                                            llvm::toString(value.takeError())));
  }
  return std::move(*value);
}

struct RunOptions {
  uint8_t flags = 0;
  VerifyOptions verify;
  TimelineOptions timeline;
  int64_t mosaic_overflows = -1;  // >= 0: the importer's overflow count
  FuzzStages* stages = nullptr;   // never null inside a run
};

RunOptions OptionsFromFlags(FuzzStages& stages, uint8_t flags, uint64_t min_calibration_ns) {
  RunOptions options;
  options.stages = &stages;
  options.flags = flags;
  options.verify.allow_truncated = (flags & kFlagAllowTruncated) != 0;
  options.timeline.compensate_overhead = (flags & kFlagCompensateOverhead) != 0;
  options.timeline.min_calibration_ns = min_calibration_ns;
  return options;
}

// ---- Checks of each stage ---------------------------------------------------------------

absl::Status CheckDecoded(const Trace& t) {
  const TraceLayout& layout = t.layout;
  const DecodedTrace& d = t.decoded;
  const uint64_t per_block = UnitsPerBlock(layout);
  FUZZ_CHECK(d.records.size() == NumRecords(layout), d.records.size(), " records for ",
             NumRecords(layout), " buffer positions");
  const uint32_t* const begin = t.words.data();
  const uint32_t* const end = begin + t.words.size();
  uint64_t total = 0;
  for (size_t i = 0; i < d.records.size(); ++i) {
    const DecodedRecord& r = d.records[i];
    FUZZ_CHECK(r.record_index == i, "record ", i, " says index ", r.record_index);
    FUZZ_CHECK(r.block_linear == SampledBlockId(layout, i / per_block), "record ", i,
               " block ", r.block_linear);
    FUZZ_CHECK(r.unit_index == i % per_block, "record ", i, " unit ", r.unit_index);
    FUZZ_CHECK(r.events.size() <= layout.capacity, "record ", i, " has ", r.events.size(),
               " events for capacity ", layout.capacity);
    if (r.header_problem != HeaderProblem::kNone) {
      FUZZ_CHECK(r.events.empty(), "record ", i, " with header problem ",
                 HeaderProblemName(r.header_problem), " has events");
    }
    if (!r.events.empty()) {
      const auto* e_begin = reinterpret_cast<const uint32_t*>(r.events.data());
      FUZZ_CHECK(e_begin >= begin && e_begin + 2 * r.events.size() <= end, "record ", i,
                 "'s events point outside the buffer");
    }
    total += r.events.size();
  }
  FUZZ_CHECK(total == d.total_events, total, " events vs total_events ", d.total_events);
  return absl::OkStatus();
}

absl::Status CheckReport(const Trace& t, const RunOptions& options) {
  const VerifyReport& rep = t.report;
  const DecodedTrace& d = t.decoded;
  const bool allow = options.verify.allow_truncated;
  FUZZ_CHECK(rep.units.size() == d.records.size(), rep.units.size(), " verdicts for ",
             d.records.size(), " records");
  FUZZ_CHECK(rep.ok() == (rep.errors == 0), "ok() disagrees with errors ", rep.errors);
  const absl::Status status = rep.ToStatus();
  FUZZ_CHECK(status.ok() == rep.ok(), "ToStatus ", status.ToString(), " vs ok() ", rep.ok());
  if (!status.ok()) {
    FUZZ_CHECK(status.code() == absl::StatusCode::kResourceExhausted ||
                   status.code() == absl::StatusCode::kDataLoss,
               "ToStatus code ", status.ToString());
  }
  if (allow) {
    FUZZ_CHECK(rep.errors == 0, "allow_truncated report has ", rep.errors, " errors");
  } else {
    // Strict mode: only the caps' note and unconfirmable clock wraps are warnings.
    FUZZ_CHECK(
        rep.warnings == rep.kind_counts[static_cast<int>(FindingKind::kTooManyFindings)] +
                            rep.kind_counts[static_cast<int>(FindingKind::kClockAmbiguous)],
        "strict report has ", rep.warnings, " warnings");
  }
  uint64_t verdicts = 0;
  for (uint64_t c : rep.verdict_counts) verdicts += c;
  FUZZ_CHECK(verdicts == rep.units.size(), verdicts, " verdicts counted for ",
             rep.units.size(), " units");
  uint64_t kept = 0, dropped = 0;
  for (size_t i = 0; i < rep.units.size(); ++i) {
    const UnitVerdict& v = rep.units[i];
    const DecodedRecord& r = d.records[i];
    FUZZ_CHECK(v.record_index == i && v.block_linear == r.block_linear &&
                   v.unit_index == r.unit_index,
               "verdict ", i, " has other coordinates than its record");
    FUZZ_CHECK(v.kept_events <= r.events.size(), "unit ", i, " keeps ", v.kept_events, " of ",
               r.events.size(), " events");
    FUZZ_CHECK(v.verdict == Verdict::kComplete || !v.reason.empty(), "unit ", i, " is ",
               VerdictName(v.verdict), " without a reason");
    if (!allow && rep.ok()) {
      FUZZ_CHECK(v.verdict == Verdict::kComplete && v.kept_events == r.events.size() &&
                     v.open_regions == 0,
                 "strict ok report: unit ", i, " is ", VerdictName(v.verdict), " keeping ",
                 v.kept_events, " of ", r.events.size(), " events, ", v.open_regions, " open");
    }
    kept += v.kept_events;
    dropped += v.dropped;
    if (v.repaired) ++options.stages->repaired_units;
  }
  FUZZ_CHECK(kept == rep.kept_events, kept, " kept events vs ", rep.kept_events);
  FUZZ_CHECK(dropped == rep.dropped_events, dropped, " dropped vs ", rep.dropped_events);
  if (options.mosaic_overflows >= 0) {
    FUZZ_CHECK(rep.kind_counts[static_cast<int>(FindingKind::kDroppedEvents)] ==
                   static_cast<uint64_t>(options.mosaic_overflows),
               "the importer reported ", options.mosaic_overflows, " overflows, verify ",
               rep.kind_counts[static_cast<int>(FindingKind::kDroppedEvents)]);
  }

  // The verdict report as JSON.
  std::string text;
  BufferedStringStream os(text);
  WriteVerifyReportJson(rep, t.layout, os);
  os.flush();
  absl::StatusOr<json::Value> parsed = ParseJson(text, "the verdict report");
  if (!parsed.ok()) return parsed.status();
  const json::Object* obj = parsed->getAsObject();
  FUZZ_CHECK(obj != nullptr, "the verdict report is not an object");
  FUZZ_CHECK(obj->getBoolean("ok") == rep.ok(), "verdict report's ok");
  const json::Array* units = obj->getArray("units");
  FUZZ_CHECK(units != nullptr && units->size() == rep.units.size(),
             "verdict report's units array");
  return absl::OkStatus();
}

using SliceKey = std::tuple<uint32_t, uint32_t, bool>;  // site, depth, repaired

absl::Status CheckUnitSlices(const Trace& t, size_t idx, const UnitTimeline& u) {
  const DecodedRecord& r = t.decoded.records[idx];
  const UnitVerdict& v = t.report.units[idx];
  const Timeline& tl = t.timeline;
  FUZZ_CHECK(u.start_ns <= u.end_ns, "unit ", idx, " ends at ", u.end_ns, " before its start ",
             u.start_ns);
  FUZZ_CHECK(u.start_ns >= tl.origin_ns && u.end_ns <= tl.end_ns, "unit ", idx, " [",
             u.start_ns, ", ", u.end_ns, "] outside the timeline [", tl.origin_ns, ", ",
             tl.end_ns, "]");
  std::vector<const Slice*> open;
  const Slice* prev = nullptr;
  for (size_t k = 0; k < u.slices.size(); ++k) {
    const Slice& s = u.slices[k];
    const std::string at = absl::StrCat("unit ", idx, " slice ", k, " [", s.begin_ns, ", ",
                                        s.end_ns, "] depth ", s.depth, ": ");
    FUZZ_CHECK(s.site < tl.layout.sites.size(), at, "site ", s.site, " outside the table");
    FUZZ_CHECK(s.end_ns >= s.begin_ns, at, "ends before it begins");
    FUZZ_CHECK(s.begin_ns >= u.start_ns && s.end_ns <= u.end_ns, at, "outside its unit [",
               u.start_ns, ", ", u.end_ns, "]");
    if (prev != nullptr) {
      FUZZ_CHECK(prev->begin_ns < s.begin_ns ||
                     (prev->begin_ns == s.begin_ns && prev->depth <= s.depth),
                 at, "not ordered by (begin, depth)");
    }
    FUZZ_CHECK(s.depth <= open.size(), at, "deeper than its ", open.size(), " open parents");
    if (open.size() > s.depth) {
      FUZZ_CHECK(open[s.depth]->end_ns <= s.begin_ns, at, "overlaps its previous sibling");
    }
    open.resize(s.depth);
    if (s.depth > 0) {
      FUZZ_CHECK(open.back()->begin_ns <= s.begin_ns && s.end_ns <= open.back()->end_ns, at,
                 "sticks out of its parent");
    }
    open.push_back(&s);
    prev = &s;
  }

  // The slices the kept events' nesting implies, regions left open closed as repaired.
  std::vector<SliceKey> expected;
  std::vector<uint32_t> stack;
  uint32_t instants = 0;
  for (uint32_t i = 0; i < v.kept_events; i = r.NextEvent(i)) {
    const uint32_t tag = r.events[i].tag;
    const uint32_t site = r.SiteOf(tag);
    FUZZ_CHECK(site < t.layout.sites.size(), "unit ", idx, " kept event ", i,
               " has an unknown site");
    const SiteKind kind = t.layout.sites[site].kind;
    if (!SiteKindNests(kind)) {
      // Payload within the kept prefix: an instant (arrivals) or part of an async span.
      if (kind == SiteKind::kBarrierArrive && r.PayloadOf(i) != nullptr) ++instants;
      continue;
    }
    if (abi::TagIsExit(tag)) {
      FUZZ_CHECK(!stack.empty() && stack.back() == site, "unit ", idx, " kept event ", i,
                 " is an exit that does not match its innermost open region");
      stack.pop_back();
      expected.emplace_back(site, static_cast<uint32_t>(stack.size()), false);
    } else {
      stack.push_back(site);
    }
  }
  FUZZ_CHECK(stack.size() == v.open_regions, "unit ", idx, " leaves ", stack.size(),
             " regions open, verify says ", v.open_regions);
  while (!stack.empty()) {
    expected.emplace_back(stack.back(), static_cast<uint32_t>(stack.size() - 1), true);
    stack.pop_back();
  }
  FUZZ_CHECK(u.instants.size() == instants, "unit ", idx, " has ", u.instants.size(),
             " instants, its kept events ", instants, " arrivals");
  // Async spans: inside the unit, lanes below async_lanes, no overlap on a lane.
  std::vector<int64_t> lane_end(u.async_lanes, std::numeric_limits<int64_t>::min());
  for (const AsyncSpan& a : u.async_spans) {
    FUZZ_CHECK(a.lane < u.async_lanes, "unit ", idx, " async span on lane ", a.lane, " of ",
               u.async_lanes);
    FUZZ_CHECK(a.begin_ns <= a.end_ns && a.begin_ns >= u.start_ns && a.end_ns <= u.end_ns,
               "unit ", idx, " async span [", a.begin_ns, ", ", a.end_ns, "] outside its unit");
    FUZZ_CHECK(lane_end[a.lane] <= a.begin_ns, "unit ", idx, " async spans overlap on lane ",
               a.lane);
    lane_end[a.lane] = a.end_ns;
  }
  // Flows: both ends in this unit's block, listed here only if one end is here.
  const uint64_t per_block = UnitsPerBlock(t.layout);
  for (const Flow& f : u.flows) {
    FUZZ_CHECK(f.from.record_index == idx || f.to.record_index == idx, "unit ", idx,
               " lists flow ", f.id, " of other units");
    FUZZ_CHECK(f.from.record_index / per_block == idx / per_block &&
                   f.to.record_index / per_block == idx / per_block,
               "unit ", idx, " flow ", f.id, " leaves its block");
  }
  std::vector<SliceKey> actual;
  for (const Slice& s : u.slices) actual.emplace_back(s.site, s.depth, s.repaired);
  std::sort(expected.begin(), expected.end());
  std::sort(actual.begin(), actual.end());
  FUZZ_CHECK(expected == actual, "unit ", idx, " has ", actual.size(),
             " slices that differ from the ", expected.size(), " its kept events imply");
  return absl::OkStatus();
}

uint64_t AsyncSpans(const Timeline& tl) {
  uint64_t n = 0;
  for (const UnitTimeline& u : tl.units) n += u.async_spans.size();
  return n;
}

// Parses a Chrome trace and checks its shape.
// `slices` counts the main tracks' slices, `async_spans` the async lanes' (always "X").
absl::Status CheckChromeJson(const std::string& text, bool begin_end, uint64_t slices,
                             uint64_t async_spans) {
  absl::StatusOr<json::Value> parsed = ParseJson(text, "the Chrome trace");
  if (!parsed.ok()) return parsed.status();
  const json::Object* obj = parsed->getAsObject();
  FUZZ_CHECK(obj != nullptr, "the Chrome trace is not an object");
  FUZZ_CHECK(obj->getString("displayTimeUnit") == llvm::StringRef("ns"), "displayTimeUnit");
  FUZZ_CHECK(obj->getObject("otherData") != nullptr, "no otherData");
  const json::Array* events = obj->getArray("traceEvents");
  FUZZ_CHECK(events != nullptr, "no traceEvents array");
  uint64_t x = 0, b = 0, e = 0;
  std::map<int64_t, int64_t> flow_balance;  // id -> "s" count - "f" count
  std::map<std::pair<int64_t, int64_t>, int64_t> open_b;
  for (size_t i = 0; i < events->size(); ++i) {
    const json::Object* ev = (*events)[i].getAsObject();
    FUZZ_CHECK(ev != nullptr, "trace event ", i, " is not an object");
    const llvm::Optional<llvm::StringRef> ph = ev->getString("ph");
    const llvm::Optional<int64_t> pid = ev->getInteger("pid");
    const llvm::Optional<int64_t> tid = ev->getInteger("tid");
    FUZZ_CHECK(ph && pid && tid, "trace event ", i, " lacks ph/pid/tid");
    if (*ph == "M") continue;
    const llvm::Optional<double> ts = ev->getNumber("ts");
    FUZZ_CHECK(ts && *ts >= 0, "trace event ", i, " has no numeric ts >= 0");
    if (*ph == "X") {
      const llvm::Optional<double> dur = ev->getNumber("dur");
      FUZZ_CHECK(dur && *dur >= 0, "X event ", i, " has no numeric dur >= 0");
      ++x;
    } else if (*ph == "B") {
      ++b;
      ++open_b[std::make_pair(*pid, *tid)];
    } else if (*ph == "E") {
      ++e;
      int64_t& open = open_b[std::make_pair(*pid, *tid)];
      FUZZ_CHECK(open > 0, "E event ", i, " without an open B");
      --open;
    } else if (*ph == "s" || *ph == "f") {
      const llvm::Optional<int64_t> id = ev->getInteger("id");
      FUZZ_CHECK(id.hasValue(), "flow event ", i, " has no integer id");
      flow_balance[*id] += *ph == "s" ? 1 : -1;
    } else {
      FUZZ_CHECK(*ph == "i", "trace event ", i, " has phase ", ph->str());
    }
  }
  for (const auto& [id, balance] : flow_balance) {
    FUZZ_CHECK(balance == 0, "flow ", id, " has ", balance, " more \"s\" than \"f\" events");
  }
  if (begin_end) {
    FUZZ_CHECK(x == async_spans && b == slices && e == slices, b, " B and ", e,
               " E events for ", slices, " slices");
  } else {
    FUZZ_CHECK(x == slices + async_spans && b == 0 && e == 0, x, " X events for ", slices,
               " slices and ", async_spans, " async spans");
  }
  return absl::OkStatus();
}

// Writes `tl` with WriteChromeTrace into `text` and checks what it wrote.
absl::Status CheckChromeTrace(const Timeline& tl, bool begin_end, uint64_t slices,
                              uint64_t async_spans, std::string& text) {
  ChromeTraceOptions options;
  options.events = begin_end ? ChromeEventStyle::kBeginEnd : ChromeEventStyle::kComplete;
  BufferedStringStream os(text);
  const absl::Status written = WriteChromeTrace(tl, options, os);
  FUZZ_CHECK(written.ok(), "WriteChromeTrace rejects BuildTimeline's timeline: ",
             written.ToString());
  os.flush();
  return CheckChromeJson(text, begin_end, slices, async_spans);
}

// Verify and BuildTimeline over the whole decoded trace (each walking every unit itself)
// must give the collected report and Timeline.
absl::Status CheckStepByStep(const Trace& t, const RunOptions& options) {
  const VerifyReport report = Verify(t.decoded, options.verify);
  FUZZ_CHECK(report.errors == t.report.errors && report.warnings == t.report.warnings &&
                 report.kept_events == t.report.kept_events &&
                 report.kind_counts == t.report.kind_counts,
             "Verify's report differs from the dump's");
  absl::StatusOr<Timeline> timeline = BuildTimeline(t.decoded, report, options.timeline);
  FUZZ_CHECK(timeline.ok(), "BuildTimeline fails where the dump works: ",
             timeline.status().ToString());
  FUZZ_CHECK(timeline->clock_note == t.timeline.clock_note &&
                 timeline->origin_ns == t.timeline.origin_ns &&
                 timeline->end_ns == t.timeline.end_ns &&
                 timeline->units.size() == t.timeline.units.size(),
             "BuildTimeline's timeline differs from the dump's");
  for (size_t i = 0; i < timeline->units.size(); ++i) {
    const UnitTimeline& a = timeline->units[i];
    const UnitTimeline& b = t.timeline.units[i];
    FUZZ_CHECK(a.slices == b.slices && a.start_ns == b.start_ns && a.end_ns == b.end_ns &&
                   a.clock_source == b.clock_source && a.cycles_per_ns == b.cycles_per_ns,
               "BuildTimeline's unit ", i, " differs from the dump's");
    FUZZ_CHECK(a.instants == b.instants && a.async_spans == b.async_spans &&
                   a.async_lanes == b.async_lanes && a.flows == b.flows,
               "BuildTimeline's unit ", i, " has other instants, async spans or flows than the "
               "dump's");
  }
  return absl::OkStatus();
}

// The dump driver with the streaming sinks (Chrome trace, summary) must give exactly what
// the in-memory collector (CollectTrace, `t`) gives: the same report, the same Chrome trace
// byte for byte (otherData and clock note included), the same summary. And the collected
// Timeline must be the one the step-by-step functions (Verify, BuildTimeline) build.
// `whole_chrome` is WriteChromeTrace's output for the collected timeline (checked by
// CheckChromeTrace), so byte-for-byte equality with it checks the streamed trace as much.
absl::Status CheckDump(const Trace& t, const RunOptions& options, uint64_t slices,
                       const std::string* whole_chrome, const Summary* whole_summary) {
  DumpOptions dump;
  dump.verify = options.verify;
  dump.timeline = options.timeline;
  ChromeTraceOptions chrome;
  chrome.events = (options.flags & kFlagBeginEnd) ? ChromeEventStyle::kBeginEnd
                                                  : ChromeEventStyle::kComplete;
  // A stream, not a file: every llvm temp file leaves a node in LLVM's remove-on-signal list
  // for good, which slows a long fuzzing run (and makes libFuzzer leak-check every input).
  std::string text;
  BufferedStringStream os(text);
  ChromeTraceSink chrome_sink(chrome, os);
  SummarySink summary_sink;
  TraceSink* sinks[] = {&chrome_sink, &summary_sink};
  DumpResult result;
  const absl::Status status = DumpTrace(t.layout, t.words, dump, sinks, result);
  FUZZ_CHECK(result.report.errors == t.report.errors &&
                 result.report.warnings == t.report.warnings &&
                 result.report.kept_events == t.report.kept_events &&
                 result.report.units.size() == t.report.units.size() &&
                 result.report.findings.size() == t.report.findings.size() &&
                 result.report.kind_counts == t.report.kind_counts,
             "the streaming dump's report differs from the collector's");
  if (!t.has_timeline) {
    FUZZ_CHECK(!status.ok() && status.code() == t.report.ToStatus().code(),
               "a dump of a trace that failed verification gives ", status.ToString());
    return absl::OkStatus();
  }
  FUZZ_CHECK(status.ok(), "the streaming dump fails where the collector works: ",
             status.ToString());
  FUZZ_CHECK(result.slices == slices, "the dump handed on ", result.slices, " slices, not ",
             slices);
  FUZZ_CHECK(result.origin_ns == t.timeline.origin_ns && result.end_ns == t.timeline.end_ns,
             "the dump spans [", result.origin_ns, ", ", result.end_ns, "], the timeline [",
             t.timeline.origin_ns, ", ", t.timeline.end_ns, "]");
  FUZZ_CHECK(result.clock_note == t.timeline.clock_note, "clock notes differ: ",
             result.clock_note, " vs ", t.timeline.clock_note);
  const std::optional<Summary>& streamed = summary_sink.summary();
  FUZZ_CHECK(streamed.has_value() && streamed->regions == whole_summary->regions &&
                 streamed->wall_ns == whole_summary->wall_ns &&
                 streamed->unit_time_ns == whole_summary->unit_time_ns &&
                 streamed->units == whole_summary->units &&
                 streamed->nominal_by_source == whole_summary->nominal_by_source &&
                 streamed->clock_note == whole_summary->clock_note &&
                 FormatSummary(*streamed) == FormatSummary(*whole_summary),
             "the summary sink's summary differs from Summarize's");
  os.flush();
  FUZZ_CHECK(text == *whole_chrome, "the streamed Chrome trace (", text.size(),
             " bytes) differs from the collected timeline's (", whole_chrome->size(), " bytes)");
  return CheckStepByStep(t, options);
}

absl::Status CheckTimeline(const Trace& t, const RunOptions& options) {
  const bool allow = options.verify.allow_truncated;
  FUZZ_CHECK(t.has_timeline == (t.report.ok() || allow), "has_timeline ", t.has_timeline,
             " with report ok ", t.report.ok());
  if (!t.has_timeline) return CheckDump(t, options, 0, nullptr, nullptr);
  ++options.stages->timelines;
  const Timeline& tl = t.timeline;
  FUZZ_CHECK(tl.units.size() == t.decoded.records.size(), tl.units.size(), " timeline units");
  FUZZ_CHECK(tl.origin_ns <= tl.end_ns, "timeline origin ", tl.origin_ns, " after its end ",
             tl.end_ns);
  FUZZ_CHECK(!tl.clock_note.empty(), "no clock note");
  uint64_t slices = 0;
  for (size_t i = 0; i < tl.units.size(); ++i) {
    const UnitTimeline& u = tl.units[i];
    const DecodedRecord& r = t.decoded.records[i];
    const UnitVerdict& v = t.report.units[i];
    FUZZ_CHECK(u.record_index == i && u.block_linear == r.block_linear &&
                   u.unit_index == r.unit_index && u.verdict == v.verdict,
               "timeline unit ", i, " disagrees with its record or verdict");
    FUZZ_CHECK(u.has_record == (r.header_problem == HeaderProblem::kNone), "timeline unit ",
               i, " has_record ", u.has_record);
    if (!u.has_record) {
      FUZZ_CHECK(u.slices.empty() && u.start_ns == tl.origin_ns && u.end_ns == tl.origin_ns,
                 "unit ", i, " without a record has slices or times");
      continue;
    }
    FUZZ_CHECK(u.events == v.kept_events, "unit ", i, " shows ", u.events, " events, kept ",
               v.kept_events);
    FUZZ_CHECK(u.cycles_per_ns > 0, "unit ", i, " rate ", u.cycles_per_ns);
    RETURN_IF_ERROR(CheckUnitSlices(t, i, u));
    slices += u.slices.size();
  }
  std::string chrome;
  RETURN_IF_ERROR(
      CheckChromeTrace(tl, (options.flags & kFlagBeginEnd) != 0, slices, AsyncSpans(tl), chrome));

  absl::StatusOr<Summary> summary = Summarize(tl);
  FUZZ_CHECK(summary.ok(), "Summarize rejects BuildTimeline's timeline: ",
             summary.status().ToString());
  uint64_t counted = 0;
  for (const RegionStats& row : summary->regions) {
    counted += row.count;
    FUZZ_CHECK(row.min_ns <= row.p50_ns && row.p50_ns <= row.p95_ns && row.p95_ns <= row.max_ns,
               "summary row ", row.name, " percentiles out of order");
  }
  FUZZ_CHECK(counted == slices, "summary counts ", counted, " of ", slices, " slices");
  options.stages->slices += slices;
  for (const UnitTimeline& u : tl.units) {
    for (const Flow& f : u.flows) options.stages->flows += f.from.record_index == u.record_index;
  }
  FUZZ_CHECK(!FormatSummary(*summary).empty(), "empty summary text");
  return CheckDump(t, options, slices, &chrome, &*summary);
}

// CollectTrace and every check; a rejected input is fine when rejected with the documented
// code.
absl::Status AnalyzeAndCheck(TraceLayout layout, std::vector<uint32_t> words,
                             const RunOptions& options) {
  const bool layout_ok = ValidateLayout(layout).ok();
  const uint64_t expected_words = layout_ok ? BufferBytes(layout) / 4 : 0;
  const size_t num_words = words.size();
  const uint64_t nominal_khz = layout.clock.nominal_sm_clock_khz;
  DumpOptions dump;
  dump.verify = options.verify;
  dump.timeline = options.timeline;
  absl::StatusOr<std::unique_ptr<Trace>> trace =
      CollectTrace(std::move(layout), std::move(words), dump);
  if (!trace.ok()) {
    const absl::StatusCode code = trace.status().code();
    if (!layout_ok) {
      FUZZ_CHECK(code == absl::StatusCode::kInvalidArgument,
                 "an invalid layout gives ", trace.status().ToString());
    } else if (num_words != expected_words) {
      FUZZ_CHECK(code == absl::StatusCode::kDataLoss, "a buffer of ", num_words,
                 " words for ", expected_words, " gives ", trace.status().ToString());
    } else {
      FUZZ_CHECK(code == absl::StatusCode::kDataLoss ||
                     (code == absl::StatusCode::kInvalidArgument && nominal_khz == 0),
                 "a buffer of the right size gives ", trace.status().ToString());
    }
    ++options.stages->rejected;
    return absl::OkStatus();
  }
  ++options.stages->analyzed;
  FUZZ_CHECK(layout_ok, "an invalid layout was analyzed");
  FUZZ_CHECK(num_words == expected_words, "a buffer of ", num_words, " words for ",
             expected_words, " was analyzed");
  const Trace& t = **trace;
  if (!options.verify.allow_truncated && !t.report.ok()) ++options.stages->strict_failed;
  for (FindingKind kind : {FindingKind::kReleaseBeforeArrivals, FindingKind::kArrivalCountMismatch,
                           FindingKind::kAsyncEndWithoutBegin, FindingKind::kAsyncNeverCompleted}) {
    options.stages->handoff_findings += t.report.kind_counts[static_cast<int>(kind)];
  }
  RETURN_IF_ERROR(CheckDecoded(t));
  RETURN_IF_ERROR(CheckReport(t, options));
  return CheckTimeline(t, options);
}

// ---- Modes ------------------------------------------------------------------------------

absl::Status RunBuffer(FuzzStages& stages, uint8_t flags, Reader& in) {
  BufferParams p;
  p.flags = flags;
  p.unit_kind = in.U8();
  p.grid_x = in.U16();
  p.grid_y = in.U8();
  p.grid_z = in.U8();
  p.block_x = in.U16();
  p.block_y = in.U8();
  p.block_z = in.U8();
  p.custom_first = in.U16();
  p.custom_count = in.U16();
  p.custom_recorder = in.U8();
  p.capacity = in.U16();
  p.num_sites = in.U8();
  p.sample_begin = in.U16();
  p.sample_end = in.U16();
  p.sample_stride = in.U8();
  p.num_sms = in.U8();
  p.nominal_sm_clock_khz = in.U32();
  p.min_calibration_100ns = in.U16();
  TraceLayout layout = LayoutFromParams(p);
  std::vector<uint32_t> words = WordsOf(in.Rest());
  if (ValidateLayout(layout).ok()) {
    const uint64_t expected = BufferBytes(layout) / 4;
    if (expected > kMaxFuzzWords) {
    ++stages.skipped_large;
    return absl::OkStatus();
  }
    if ((flags & kFlagExactSize) == 0) words.resize(expected);
  }
  return AnalyzeAndCheck(std::move(layout), std::move(words),
                         OptionsFromFlags(stages, flags, uint64_t{p.min_calibration_100ns} * 100));
}

absl::Status RunSidecarJson(FuzzStages& stages, uint8_t flags, Reader& in) {
  const absl::Span<const uint8_t> rest = in.Rest();
  const std::string text(reinterpret_cast<const char*>(rest.data()), rest.size());
  absl::StatusOr<TraceLayout> layout = ParseLayoutJson(text);
  if (!layout.ok()) {
    FUZZ_CHECK(layout.status().code() == absl::StatusCode::kInvalidArgument,
               "ParseLayoutJson gives ", layout.status().ToString());
    ++stages.rejected;
    return absl::OkStatus();
  }
  ++stages.sidecars_parsed;
  const absl::Status valid = ValidateLayout(*layout);
  FUZZ_CHECK(valid.ok(), "ParseLayoutJson accepted a layout ValidateLayout rejects: ",
             valid.ToString());
  absl::StatusOr<std::string> format = SidecarFormat(text);
  FUZZ_CHECK(format.ok() && *format == kSidecarFormat, "SidecarFormat of an accepted sidecar");
  std::string again;
  BufferedStringStream os(again);
  WriteLayoutJson(*layout, os);
  os.flush();
  absl::StatusOr<TraceLayout> reparsed = ParseLayoutJson(again);
  FUZZ_CHECK(reparsed.ok(), "WriteLayoutJson's output does not parse: ",
             reparsed.status().ToString());
  FUZZ_CHECK(*reparsed == *layout, "the layout does not round-trip through WriteLayoutJson");
  const uint64_t words = BufferBytes(*layout) / 4;
  if (words > kMaxFuzzWords) {
    ++stages.skipped_large;
    return absl::OkStatus();
  }
  return AnalyzeAndCheck(*std::move(layout), std::vector<uint32_t>(words, 0u),
                         OptionsFromFlags(stages, flags, TimelineOptions().min_calibration_ns));
}

// Converts `words` with a parsed Mosaic sidecar, checks the conversion, then the dump.
absl::Status ConvertAndCheck(FuzzStages& stages, const MosaicSidecar& sidecar,
                             std::vector<uint32_t> words, uint32_t sm_clock_khz, uint8_t flags,
                             bool must_convert) {
  const uint32_t scope_threads = sidecar.scope == UnitKind::kWarp ? 32 : 128;
  const uint64_t expected = sidecar.grid.Count() * (sidecar.block.Count() / scope_threads) *
                            sidecar.entries_per_trace;
  MosaicImportOptions options;
  options.sm_clock_khz = sm_clock_khz;
  absl::StatusOr<MosaicImport> imported = ConvertMosaicBuffer(sidecar, words, options);
  if (!imported.ok()) {
    FUZZ_CHECK(!must_convert, "a zero-filled buffer of the right size is rejected: ",
               imported.status().ToString());
    const absl::StatusCode code = imported.status().code();
    FUZZ_CHECK(code == absl::StatusCode::kDataLoss || code == absl::StatusCode::kInvalidArgument,
               "ConvertMosaicBuffer gives ", imported.status().ToString());
    ++stages.rejected;
    return absl::OkStatus();
  }
  ++stages.mosaic_converted;
  stages.mosaic_overflows += imported->overflows.size();
  FUZZ_CHECK(words.size() == expected, "converted a buffer of ", words.size(), " words for ",
             expected);
  FUZZ_CHECK(sm_clock_khz != 0, "converted with a 0 kHz clock");
  const TraceLayout& layout = imported->trace.layout;
  const absl::Status valid = ValidateLayout(layout);
  FUZZ_CHECK(valid.ok(), "the imported layout is invalid: ", valid.ToString());
  FUZZ_CHECK(imported->trace.words.size() * 4 == BufferBytes(layout), "imported buffer of ",
             imported->trace.words.size(), " words");
  for (const MosaicOverflow& o : imported->overflows) {
    FUZZ_CHECK(o.entries_needed > sidecar.entries_per_trace &&
                   o.events_attempted > o.events_kept && !o.message.empty(),
               "overflow of block ", o.block_linear, " trace ", o.trace, ": ", o.message);
  }
  RunOptions run = OptionsFromFlags(stages, flags, TimelineOptions().min_calibration_ns);
  run.mosaic_overflows = static_cast<int64_t>(imported->overflows.size());
  return AnalyzeAndCheck(imported->trace.layout, imported->trace.words.ToVector(), run);
}

absl::Status RunMosaicBuffer(FuzzStages& stages, uint8_t flags, Reader& in) {
  MosaicParams p;
  p.flags = flags;
  p.grid_x = in.U8();
  p.grid_y = in.U8();
  p.grid_z = in.U8();
  p.block_x = in.U16();
  p.block_y = in.U8();
  p.block_z = in.U8();
  p.entries = in.U16();
  p.warp_scope = in.U8();
  p.num_names = in.U8();
  p.sm_clock_khz = in.U32();
  std::string text;
  {
    BufferedStringStream os(text);
    json::OStream j(os);
    j.object([&] {
      j.attribute("format", kMosaicSidecarFormat);
      j.attributeArray("grid", [&] {
        j.value(p.grid_x);
        j.value(p.grid_y);
        j.value(p.grid_z);
      });
      j.attributeArray("block", [&] {
        j.value(p.block_x);
        j.value(p.block_y);
        j.value(p.block_z);
      });
      j.attribute("entries_per_warpgroup", p.entries);
      j.attribute("trace_scope", (p.warp_scope & 1) ? "warp" : "warpgroup");
      j.attributeArray("names", [&] {
        for (uint32_t i = 0; i < p.num_names; ++i) {
          j.value(json::fixUTF8(SiteName(i, (flags & kFlagOddNames) != 0)));
        }
      });
      j.attribute("kernel_name", "fuzz");
    });
  }
  absl::StatusOr<MosaicSidecar> sidecar = ParseMosaicSidecar(text);
  if (!sidecar.ok()) {
    FUZZ_CHECK(sidecar.status().code() == absl::StatusCode::kInvalidArgument,
               "ParseMosaicSidecar gives ", sidecar.status().ToString());
    ++stages.rejected;
    return absl::OkStatus();
  }
  const uint32_t scope_threads = sidecar->scope == UnitKind::kWarp ? 32 : 128;
  const uint64_t expected = sidecar->grid.Count() * (sidecar->block.Count() / scope_threads) *
                            sidecar->entries_per_trace;
  if (expected > kMaxFuzzWords) {
    ++stages.skipped_large;
    return absl::OkStatus();
  }
  std::vector<uint32_t> words = WordsOf(in.Rest());
  if ((flags & kFlagExactSize) == 0) words.resize(expected);
  return ConvertAndCheck(stages, *sidecar, std::move(words), p.sm_clock_khz, flags,
                         /*must_convert=*/false);
}

absl::Status RunMosaicJson(FuzzStages& stages, uint8_t flags, Reader& in) {
  const absl::Span<const uint8_t> rest = in.Rest();
  const std::string text(reinterpret_cast<const char*>(rest.data()), rest.size());
  absl::StatusOr<MosaicSidecar> sidecar = ParseMosaicSidecar(text);
  if (!sidecar.ok()) {
    FUZZ_CHECK(sidecar.status().code() == absl::StatusCode::kInvalidArgument,
               "ParseMosaicSidecar gives ", sidecar.status().ToString());
    ++stages.rejected;
    return absl::OkStatus();
  }
  FUZZ_CHECK(sidecar->entries_per_trace >= kMosaicHeaderWords + 2, "entries_per_warpgroup ",
             sidecar->entries_per_trace, " accepted");
  FUZZ_CHECK(sidecar->scope == UnitKind::kWarp || sidecar->scope == UnitKind::kWarpgroup,
             "trace scope ", UnitKindName(sidecar->scope), " accepted");
  const uint32_t scope_threads = sidecar->scope == UnitKind::kWarp ? 32 : 128;
  FUZZ_CHECK(sidecar->block.Count() % scope_threads == 0 && sidecar->grid.Count() > 0,
             "block of ", sidecar->block.Count(), " threads accepted");
  const uint64_t expected = sidecar->grid.Count() * (sidecar->block.Count() / scope_threads) *
                            sidecar->entries_per_trace;
  if (expected > kMaxFuzzWords) {
    ++stages.skipped_large;
    return absl::OkStatus();
  }
  // Every trace empty (traces_used 0): always convertible.
  return ConvertAndCheck(stages, *sidecar, std::vector<uint32_t>(expected, 0u),
                         static_cast<uint32_t>(kMosaicDefaultSmClockKhz), flags,
                         /*must_convert=*/true);
}

}  // namespace

TraceLayout LayoutFromParams(const BufferParams& p) {
  const bool odd = (p.flags & kFlagOddNames) != 0;
  TraceLayout layout;
  layout.kernel_name = odd ? "k\"\\\xff" : "fuzz";
  layout.device_name = "fuzz device";
  layout.grid = {p.grid_x, p.grid_y, p.grid_z};
  layout.block = {p.block_x, p.block_y, p.block_z};
  layout.unit.kind = static_cast<UnitKind>(p.unit_kind % 4);
  if (layout.unit.kind == UnitKind::kCustom) {
    layout.unit.first_thread = p.custom_first;
    layout.unit.num_threads = p.custom_count;
    layout.unit.recorder_offset = p.custom_recorder;
  }
  layout.capacity = p.capacity;
  layout.placement = (p.flags & kFlagShared) ? Placement::kShared : Placement::kGlobal;
  layout.sample.begin = p.sample_begin;
  layout.sample.end = p.sample_end == 0xffff ? UINT32_MAX : p.sample_end;
  layout.sample.stride = p.sample_stride;
  layout.clock.nominal_sm_clock_khz = p.nominal_sm_clock_khz;
  layout.clock.num_sms = p.num_sms;
  for (uint32_t i = 0; i < p.num_sites; ++i) {
    layout.sites.push_back(
        {i, SiteName(i, odd), kSiteKinds.names[i % kSiteKinds.names.size()].value, absl::StrCat("fuzz.cc:", i)});
  }
  return layout;
}

std::string EncodeBufferInput(const BufferParams& p, absl::Span<const uint32_t> words) {
  Writer w;
  w.U8(static_cast<uint8_t>((p.flags & ~3u) | static_cast<uint8_t>(FuzzMode::kBuffer)));
  w.U8(p.unit_kind);
  w.U16(p.grid_x);
  w.U8(p.grid_y);
  w.U8(p.grid_z);
  w.U16(p.block_x);
  w.U8(p.block_y);
  w.U8(p.block_z);
  w.U16(p.custom_first);
  w.U16(p.custom_count);
  w.U8(p.custom_recorder);
  w.U16(p.capacity);
  w.U8(p.num_sites);
  w.U16(p.sample_begin);
  w.U16(p.sample_end);
  w.U8(p.sample_stride);
  w.U8(p.num_sms);
  w.U32(p.nominal_sm_clock_khz);
  w.U16(p.min_calibration_100ns);
  w.Words(words);
  return w.Take();
}

std::string EncodeMosaicInput(const MosaicParams& p, absl::Span<const uint32_t> words) {
  Writer w;
  w.U8(static_cast<uint8_t>((p.flags & ~3u) | static_cast<uint8_t>(FuzzMode::kMosaicBuffer)));
  w.U8(p.grid_x);
  w.U8(p.grid_y);
  w.U8(p.grid_z);
  w.U16(p.block_x);
  w.U8(p.block_y);
  w.U8(p.block_z);
  w.U16(p.entries);
  w.U8(p.warp_scope);
  w.U8(p.num_names);
  w.U32(p.sm_clock_khz);
  w.Words(words);
  return w.Take();
}

std::string EncodeTextInput(FuzzMode mode, uint8_t flags, absl::string_view text) {
  std::string out(1, static_cast<char>((flags & ~3u) | static_cast<uint8_t>(mode)));
  out.append(text.data(), text.size());
  return out;
}

absl::Status RunDumpFuzzInput(absl::Span<const uint8_t> data, FuzzStages* stages) {
  FuzzStages ignored;
  if (stages == nullptr) stages = &ignored;
  ++stages->inputs;
  Reader in(data);
  const uint8_t first = in.U8();
  const uint8_t flags = first & ~3u;
  switch (static_cast<FuzzMode>(first & 3u)) {
    case FuzzMode::kBuffer:
      return RunBuffer(*stages, flags, in);
    case FuzzMode::kSidecarJson:
      return RunSidecarJson(*stages, flags, in);
    case FuzzMode::kMosaicBuffer:
      return RunMosaicBuffer(*stages, flags, in);
    case FuzzMode::kMosaicJson:
      return RunMosaicJson(*stages, flags, in);
  }
  return absl::OkStatus();
}

}  // namespace warptrace::fuzz
