#include "profiler/outputs/chrome_trace.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "format/layout.h"
#include "format/layout_json.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "profiler/outputs/event_template.h"
#include "profiler/timeline/timeline_check.h"

namespace warptrace {
namespace {

// links.h's kNoBarrier: an async copy that completes on no phase barrier.
constexpr uint32_t kNoBarrierId = 0xffffffffu;

// The process of units that have no record (has_record false): beyond any SM id.
constexpr uint32_t kNoRecordPid = uint32_t{1} << 20;

// StrCat, not StrFormat: see UnitName (format/layout.cc).
std::string DimString(const Dim3& d) { return absl::StrCat("(", d.x, ",", d.y, ",", d.z, ")"); }

// otherData "time_source": where the times come from.
const char* TimeSource(const ClockInfo& clock) {
  return clock.host_backend
             ? "host backend: CPU steady clock, not a GPU (correctness, not performance)"
             : "device: %globaltimer ns, %clock cycles";
}

std::string UnitLabel(const UnitTimeline& unit, const TraceLayout& layout) {
  return UnitTrackName(layout, unit.block_index, unit.unit_index);
}

// ns → microseconds with exactly three decimals. `ns` >= 0 (CheckTimeline checks it).
// Returns one past the last character written; `out` needs 24 bytes.
char* FormatMicros(int64_t ns, char* out) {
  const uint64_t value = static_cast<uint64_t>(ns);
  const uint64_t whole = value / 1000;
  const uint32_t frac = static_cast<uint32_t>(value % 1000);
  out = std::to_chars(out, out + 20, whole).ptr;
  out[0] = '.';
  out[1] = static_cast<char>('0' + frac / 100);
  out[2] = static_cast<char>('0' + frac / 10 % 10);
  out[3] = static_cast<char>('0' + frac % 10);
  return out + 4;
}

std::string JsonString(llvm::StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  AbandonableJson json(os);
  // json::Value's StringRef constructor repairs invalid UTF-8 itself; ValidUtf8 makes the
  // intent visible and the replacement the one every output uses.
  json.get().value(ValidUtf8(absl::string_view(text.data(), text.size())));
  json.MarkFinished();
  os.flush();
  return out;
}

std::string JsonUint(uint64_t value) {
  char buf[24];
  return std::string(buf, std::to_chars(buf, buf + sizeof(buf), value).ptr);
}

// Streams one checked Timeline (timeline_check.h). Metadata goes through json::OStream attribute by
// attribute; slice events go through it as one rawValue each, filled from an EventTemplate
// that json::OStream serialized (so every name, key and escape is still its work) and from
// numbers formatted with std::to_chars. One template per (site, variant) for the whole
// trace, so the per-event cost is a few memcpys and two integer conversions.
class Writer {
 public:
  Writer(const TraceLayout& layout, int64_t origin_ns, uint64_t units_per_block,
         const ChromeTraceOptions& options, llvm::raw_ostream& os)
      : layout_(layout),
        origin_ns_(origin_ns),
        units_per_block_(std::max<uint64_t>(units_per_block, 1)),
        options_(options),
        json_storage_(os),
        json_(json_storage_.get()) {
    templates_.resize(layout.sites.size() * kVariants);
    instant_templates_.resize(layout.sites.size());
    async_templates_.resize(layout.sites.size() * 4);
    end_template_ = EventTemplate::Build([](llvm::json::OStream& json) {
      json.object([&] {
        json.attribute("ph", "E");
        Holes(json, "ts");
        PidTidHoles(json);
      });
    });
  }

  // {"displayTimeUnit": "ns", "traceEvents": [
  void Begin() {
    json_.objectBegin();
    json_.attribute("displayTimeUnit", "ns");
    json_.attributeBegin("traceEvents");
    json_.arrayBegin();
  }

  // Per checked unit: its thread metadata, then its slices (so a trace streamed unit by
  // unit is byte for byte the trace of the whole Timeline).
  void AddUnits(absl::Span<const UnitTimeline> units) {
    for (const UnitTimeline& unit : units) {
      WriteThreadMetadata(unit);
      Count(unit);
      WriteUnit(unit);
    }
  }

  // Process metadata, ], "otherData": {...}}
  void Finish(absl::string_view clock_note, bool overhead_compensated) {
    WriteProcessMetadata();
    json_.arrayEnd();
    json_.attributeEnd();
    json_.attributeObject("otherData", [&] { WriteOtherData(clock_note, overhead_compensated); });
    json_.objectEnd();
    json_storage_.MarkFinished();
  }

 private:
  // Template variants per site: bit 0 = the unit has a verdict other than complete (args
  // carry "verdict"), bit 1 = the slice was repaired (args carry "repaired": true).
  static constexpr size_t kVariants = 4;
  // What WriteCompleteSlices assembles before a stream write.
  static constexpr size_t kLocalBytes = size_t{16} << 10;
  // Holes of a slice template, in order: ts, [dur,] block, unit, [verdict,] pid, tid.

  uint64_t Tid(const UnitTimeline& unit) const {
    return uint64_t{unit.block_linear} * units_per_block_ + unit.unit_index;
  }
  static uint32_t Pid(const UnitTimeline& unit) {
    return unit.has_record ? unit.sm_id : kNoRecordPid;
  }

  // `"key": <hole>`.
  static void Holes(llvm::json::OStream& json, const char* key) {
    json.attributeBegin(key);
    EventTemplate::Hole(json);
    json.attributeEnd();
  }
  static void PidTidHoles(llvm::json::OStream& json) {
    Holes(json, "pid");
    Holes(json, "tid");
  }
  // The fields every event of `site` begins with.
  static void SiteHead(llvm::json::OStream& json, const SiteInfo& site, const char* ph) {
    json.attribute("name", ValidUtf8(site.name));
    json.attribute("cat", SiteKindName(site.kind));
    json.attribute("ph", ph);
  }

  // A site's template and the text of its holes after ts/dur filled for the current unit.
  struct SiteTemplate {
    std::optional<EventTemplate> event;
    uint64_t tail_generation = 0;  // == generation_ when `tail` is the current unit's
    std::string tail;
  };

  SiteTemplate& TemplateFor(uint32_t site_id, bool verdict, bool repaired) {
    const size_t variant = (verdict ? 1 : 0) | (repaired ? 2 : 0);
    const bool complete = options_.events == ChromeEventStyle::kComplete;
    const bool full = options_.args == ChromeSliceArgs::kFull;
    SiteTemplate& entry = templates_[site_id * kVariants + variant];
    std::optional<EventTemplate>& slot = entry.event;
    if (!slot.has_value()) {
      const SiteInfo& site = layout_.sites[site_id];
      slot = EventTemplate::Build([&](llvm::json::OStream& json) {
        json.object([&] {
          SiteHead(json, site, complete ? "X" : "B");
          Holes(json, "ts");
          if (complete) Holes(json, "dur");
          if (full) {
            json.attributeObject("args", [&] {
              Holes(json, "block");
              Holes(json, "unit");
              json.attribute("site", static_cast<int64_t>(site_id));
              json.attribute("kind", SiteKindName(site.kind));
              json.attribute("origin", ValidUtf8(site.origin));
              if (verdict) Holes(json, "verdict");
              if (repaired) json.attribute("repaired", true);
            });
          } else if (repaired) {
            json.attributeObject("args", [&] { json.attribute("repaired", true); });
          }
          PidTidHoles(json);
        });
      });
    }
    if (entry.tail_generation != generation_) {
      entry.tail_generation = generation_;
      llvm::StringRef values[5];
      size_t n = 0;
      if (full) {
        values[n++] = block_json_;
        values[n++] = unit_json_;
        if (verdict) values[n++] = verdict_json_;
      }
      values[n++] = pid_json_;
      values[n++] = tid_json_;
      entry.tail = slot->Tail(complete ? 2 : 1, values);
    }
    return entry;
  }

  void Count(const UnitTimeline& unit) {
    ++verdict_counts_[static_cast<int>(unit.verdict)];
    ++units_;
    slices_ += unit.slices.size();
    instants_ += unit.instants.size();
    async_spans_ += unit.async_spans.size();
    dropped_ += unit.dropped;
    for (const Flow& flow : unit.flows) {
      if (flow.from.record_index != unit.record_index) continue;  // counted at its source
      ++(Drawn(flow) ? flows_ : flows_unanchored_);
    }
    // The first unit seen on each SM names its process (Timeline order).
    first_tid_.try_emplace(Pid(unit), Tid(unit));
  }

  void WriteOtherData(absl::string_view clock_note, bool overhead_compensated) {
    const TraceLayout& layout = layout_;
    json_.attribute("tool", "warptrace");
    json_.attribute("kernel", ValidUtf8(layout.kernel_name));
    json_.attribute("device", ValidUtf8(layout.device_name));
    json_.attribute("clock", ValidUtf8(clock_note));
    json_.attribute("time_source", TimeSource(layout.clock));
    json_.attribute("nominal_sm_clock_khz",
                    static_cast<int64_t>(layout.clock.nominal_sm_clock_khz));
    json_.attribute("grid", DimString(layout.grid));
    json_.attribute("block", DimString(layout.block));
    json_.attribute("trace_unit", UnitKindName(layout.unit.kind));
    json_.attribute("capacity", static_cast<int64_t>(layout.capacity));
    // Absolute globaltimer values exceed 2^53: a string keeps every digit.
    json_.attribute("origin_ns", absl::StrCat(origin_ns_));
    json_.attribute("overhead_compensated", overhead_compensated);
    json_.attribute("units", static_cast<int64_t>(units_));
    for (Verdict v : {Verdict::kComplete, Verdict::kTruncated, Verdict::kOverflowed,
                      Verdict::kCorrupt, Verdict::kMissing}) {
      json_.attribute(absl::StrCat("units_", VerdictName(v)),
                      static_cast<int64_t>(verdict_counts_[static_cast<int>(v)]));
    }
    json_.attribute("slices", static_cast<int64_t>(slices_));
    json_.attribute("instants", static_cast<int64_t>(instants_));
    json_.attribute("async_spans", static_cast<int64_t>(async_spans_));
    json_.attribute("flows", static_cast<int64_t>(flows_));
    json_.attribute("flows_unanchored", static_cast<int64_t>(flows_unanchored_));
    json_.attribute("dropped_events", static_cast<int64_t>(dropped_));
    json_.attribute("slice_args", ChromeSliceArgsName(options_.args));
    // What lean slices leave out, once per site.
    json_.attributeArray("sites", [&] { WriteSitesJson(layout.sites, json_); });
    if (layout.host_anchor.known) {
      // Decimal strings, like origin_ns: the values exceed 2^53.
      json_.attributeObject("host_anchor", [&] {
        WriteHostAnchorJson(layout.host_anchor, LargeIntegers::kDecimalStrings, json_);
      });
    }
  }

  void WriteProcessMetadata() {
    // One per SM, by SM id, with the tid of the SM's first unit.
    const auto& sms = first_tid_;
    for (const auto& entry : sms) {
      // Plain copies: clang 14 cannot capture structured bindings in lambdas.
      const auto sm = entry.first;
      const auto tid = entry.second;
      json_.object([&] {
        json_.attribute("name", "process_name");
        json_.attribute("ph", "M");
        json_.attribute("pid", static_cast<int64_t>(sm));
        json_.attribute("tid", static_cast<int64_t>(tid));
        json_.attributeObject("args", [&] {
          json_.attribute("name", sm == kNoRecordPid ? std::string("no record")
                                                     : absl::StrCat("SM ", sm));
        });
      });
      json_.object([&] {
        json_.attribute("name", "process_sort_index");
        json_.attribute("ph", "M");
        json_.attribute("pid", static_cast<int64_t>(sm));
        json_.attribute("tid", static_cast<int64_t>(tid));
        json_.attributeObject("args",
                              [&] { json_.attribute("sort_index", static_cast<int64_t>(sm)); });
      });
    }
  }

  void WriteThreadMetadata(const UnitTimeline& unit) {
    const int64_t pid = Pid(unit);
    const int64_t tid = static_cast<int64_t>(Tid(unit));
    std::string name = UnitTrackName(layout_, unit.block_index, unit.unit_index);
    if (unit.verdict != Verdict::kComplete) {
      absl::StrAppend(&name, " [", VerdictName(unit.verdict), "]");
    }
    json_.object([&] {
      json_.attribute("name", "thread_name");
      json_.attribute("ph", "M");
      json_.attribute("pid", pid);
      json_.attribute("tid", tid);
      json_.attributeObject("args", [&] {
        json_.attribute("name", name);
        json_.attribute("verdict", VerdictName(unit.verdict));
        if (unit.verdict != Verdict::kComplete) {
          json_.attribute("reason", ValidUtf8(unit.verdict_reason));
        }
        if (layout_.cluster.Count() > 1) {  // the unit's cluster (%clusterid) and CTA rank
          const ClusterPosition p = ClusterOfBlock(layout_, unit.block_index);
          json_.attributeArray("cluster", [&] {
            for (uint32_t c : {p.cluster.x, p.cluster.y, p.cluster.z}) json_.value(c);
          });
          json_.attribute("cluster_rank", p.rank);
        }
      });
    });
    json_.object([&] {
      json_.attribute("name", "thread_sort_index");
      json_.attribute("ph", "M");
      json_.attribute("pid", pid);
      json_.attribute("tid", tid);
      json_.attributeObject("args", [&] { json_.attribute("sort_index", tid); });
    });
    // Async lanes sort with their unit (same index; their tids are larger).
    for (uint32_t lane = 0; lane < unit.async_lanes; ++lane) {
      const int64_t lane_tid = static_cast<int64_t>(AsyncTid(unit, lane));
      std::string lane_name = absl::StrCat(UnitLabel(unit, layout_), " async");
      if (lane > 0) absl::StrAppend(&lane_name, " ", lane + 1);
      json_.object([&] {
        json_.attribute("name", "thread_name");
        json_.attribute("ph", "M");
        json_.attribute("pid", pid);
        json_.attribute("tid", lane_tid);
        json_.attributeObject("args", [&] { json_.attribute("name", lane_name); });
      });
      json_.object([&] {
        json_.attribute("name", "thread_sort_index");
        json_.attribute("ph", "M");
        json_.attribute("pid", pid);
        json_.attribute("tid", lane_tid);
        json_.attributeObject("args", [&] { json_.attribute("sort_index", tid); });
      });
    }
  }

  // Async lane `lane` of `unit`: a tid past every unit's, one block of them per lane.
  uint64_t AsyncTid(const UnitTimeline& unit, uint32_t lane) const {
    return (uint64_t{lane} + 1) * units_per_block_ * std::max<uint64_t>(layout_.grid.Count(), 1) +
           Tid(unit);
  }

  // Whether both ends of `flow` have an anchor (else it is left out of the trace).
  static bool Drawn(const Flow& flow) {
    return flow.from.anchor != FlowEnd::kNone && flow.to.anchor != FlowEnd::kNone;
  }

  // Instants, async spans and flow events of one unit, after its slices. Like slices, each
  // is a template json::OStream serialized once (per site, variant or flow kind) with the
  // numbers and the barrier's name (serialized once per barrier) filled in.
  void WriteHandoffs(const UnitTimeline& unit) {
    if (unit.instants.empty() && unit.async_spans.empty() && unit.flows.empty()) return;
    // The same values WriteSlices used for this unit (it skips units without slices).
    pid_json_ = JsonUint(Pid(unit));
    tid_json_ = JsonUint(Tid(unit));
    const bool full = options_.args == ChromeSliceArgs::kFull;
    char ts[24], num[24], dur[24];
    for (const Instant& in : unit.instants) {
      if (in.site >= layout_.sites.size()) continue;
      const EventTemplate& t = InstantTemplate(in.site, full);
      llvm::StringRef values[6];
      size_t n = 0;
      values[n++] = Micros(in.ns - origin_ns_, ts);
      values[n++] = BarrierJson(in.barrier);
      values[n++] = Uint(in.phase, num);
      char event[24];
      if (full) values[n++] = Uint(in.event, event);
      values[n++] = pid_json_;
      values[n++] = tid_json_;
      json_.rawValue([&](llvm::raw_ostream& os) { t.Write(os, values); });
    }
    for (const AsyncSpan& a : unit.async_spans) {
      if (a.site >= layout_.sites.size()) continue;
      const bool barrier = a.barrier != kNoBarrierId;
      const EventTemplate& t = AsyncTemplate(a.site, barrier, !a.completed);
      const std::string lane_tid = JsonUint(AsyncTid(unit, a.lane));
      llvm::StringRef values[6];
      size_t n = 0;
      values[n++] = Micros(a.begin_ns - origin_ns_, ts);
      values[n++] = Micros(a.end_ns - a.begin_ns, dur);
      values[n++] = Uint(a.issue, num);
      if (barrier) values[n++] = BarrierJson(a.barrier);
      values[n++] = pid_json_;
      values[n++] = lane_tid;
      json_.rawValue([&](llvm::raw_ostream& os) { t.Write(os, values); });
    }
    for (const Flow& flow : unit.flows) {
      if (!Drawn(flow)) continue;
      if (flow.from.record_index == unit.record_index) WriteFlowEnd(unit, flow, flow.from, true);
      if (flow.to.record_index == unit.record_index) WriteFlowEnd(unit, flow, flow.to, false);
    }
  }

  // One flow event ("s" at the source, "f" at the target) bound strictly inside its anchor
  // (a slice or an async span).
  void WriteFlowEnd(const UnitTimeline& unit, const Flow& flow, const FlowEnd& end,
                    bool start) {
    int64_t begin = 0, finish = 0;
    std::string lane_tid;
    llvm::StringRef tid = tid_json_;
    if (end.on_async) {
      if (end.anchor >= unit.async_spans.size()) return;
      const AsyncSpan& span = unit.async_spans[end.anchor];
      begin = span.begin_ns;
      finish = span.end_ns;
      lane_tid = JsonUint(AsyncTid(unit, span.lane));
      tid = lane_tid;
    } else {
      if (end.anchor >= unit.slices.size()) return;
      begin = unit.slices[end.anchor].begin_ns;
      finish = unit.slices[end.anchor].end_ns;
    }
    const int64_t at = std::clamp(end.ns, begin + 1, std::max(begin + 1, finish - 1));
    const bool arrival = flow.kind == FlowKind::kArrivalToRelease;
    const bool barrier = flow.barrier != kNoBarrierId;
    const EventTemplate& t = FlowTemplate(flow.kind, start, barrier);
    char id[24], ts[24], num[24];
    llvm::StringRef values[7];
    size_t n = 0;
    values[n++] = Uint(flow.id, id);
    values[n++] = Micros(at - origin_ns_, ts);
    if (start) {
      if (barrier) values[n++] = BarrierJson(flow.barrier);
      values[n++] = Uint(arrival ? flow.phase : flow.issue, num);
      if (arrival) values[n++] = flow.completing ? "true" : "false";
    }
    values[n++] = pid_json_;
    values[n++] = tid;
    json_.rawValue([&](llvm::raw_ostream& os) { t.Write(os, values); });
  }

  static llvm::StringRef Micros(int64_t ns, char* buf) {
    return llvm::StringRef(buf, FormatMicros(std::max<int64_t>(ns, 0), buf) - buf);
  }
  static llvm::StringRef Uint(uint64_t value, char* buf) {
    return llvm::StringRef(buf, std::to_chars(buf, buf + 24, value).ptr - buf);
  }

  // The JSON string of barrier `id`'s name, serialized once.
  const std::string& BarrierJson(uint32_t id) {
    auto it = barrier_json_.find(id);
    if (it == barrier_json_.end()) {
      it = barrier_json_.emplace(id, JsonString(BarrierName(layout_, id))).first;
    }
    return it->second;
  }

  // Holes: ts, barrier, phase, [event,] pid, tid.
  const EventTemplate& InstantTemplate(uint32_t site_id, bool full) {
    std::optional<EventTemplate>& slot = instant_templates_[site_id];
    if (!slot.has_value()) {
      const SiteInfo& site = layout_.sites[site_id];
      slot = EventTemplate::Build([&](llvm::json::OStream& json) {
        json.object([&] {
          SiteHead(json, site, "i");
          json.attribute("s", "t");
          Holes(json, "ts");
          json.attributeObject("args", [&] {
            Holes(json, "barrier");
            Holes(json, "phase");
            if (full) Holes(json, "event");
          });
          PidTidHoles(json);
        });
      });
    }
    return *slot;
  }

  // Holes: ts, dur, issue, [barrier,] pid, tid.
  const EventTemplate& AsyncTemplate(uint32_t site_id, bool barrier, bool uncompleted) {
    std::optional<EventTemplate>& slot =
        async_templates_[site_id * 4 + (barrier ? 1 : 0) + (uncompleted ? 2 : 0)];
    if (!slot.has_value()) {
      const SiteInfo& site = layout_.sites[site_id];
      slot = EventTemplate::Build([&](llvm::json::OStream& json) {
        json.object([&] {
          SiteHead(json, site, "X");
          Holes(json, "ts");
          Holes(json, "dur");
          json.attributeObject("args", [&] {
            Holes(json, "issue");
            if (barrier) Holes(json, "barrier");
            if (uncompleted) json.attribute("completed", false);
            if (site.copy_engine != CopyEngine::kNone) {
              json.attribute("engine", CopyEngineName(site.copy_engine));
              json.attribute("bytes", site.copy_bytes);
            }
          });
          PidTidHoles(json);
        });
      });
    }
    return *slot;
  }

  // Holes: id, ts, then for "s": [barrier,] phase or issue, [completing,]; pid, tid.
  static const char* FlowName(FlowKind kind) {
    switch (kind) {
      case FlowKind::kArrivalToRelease:
        return "hand-off";
      case FlowKind::kIssueToCompletion:
        return "async copy";
      case FlowKind::kMulticastLanding:
        return "multicast landing";
    }
    return "?";
  }

  const EventTemplate& FlowTemplate(FlowKind kind, bool start, bool barrier) {
    const bool arrival = kind == FlowKind::kArrivalToRelease;
    std::optional<EventTemplate>& slot =
        flow_templates_[static_cast<size_t>(kind) * 4 + (start ? 2 : 0) + (barrier ? 1 : 0)];
    if (!slot.has_value()) {
      slot = EventTemplate::Build([&](llvm::json::OStream& json) {
        json.object([&] {
          json.attribute("name", FlowName(kind));
          json.attribute("cat", FlowKindName(kind));
          json.attribute("ph", start ? "s" : "f");
          if (!start) json.attribute("bp", "e");
          Holes(json, "id");
          Holes(json, "ts");
          if (start) {
            json.attributeObject("args", [&] {
              if (barrier) Holes(json, "barrier");
              Holes(json, arrival ? "phase" : "issue");
              if (arrival) Holes(json, "completing");
            });
          }
          PidTidHoles(json);
        });
      });
    }
    return *slot;
  }

  void WriteUnit(const UnitTimeline& unit) {
    WriteSlices(unit);
    WriteHandoffs(unit);
  }

  void WriteSlices(const UnitTimeline& unit) {
    if (unit.slices.empty()) return;
    ++generation_;
    // Per-unit hole values, serialized once.
    block_json_ = JsonString(DimString(unit.block_index));
    unit_json_ = JsonUint(unit.unit_index);
    pid_json_ = JsonUint(Pid(unit));
    tid_json_ = JsonUint(Tid(unit));
    const bool has_verdict = unit.verdict != Verdict::kComplete;
    verdict_json_ = has_verdict ? JsonString(VerdictName(unit.verdict)) : std::string();
    const bool complete_events = options_.events == ChromeEventStyle::kComplete;
    if (complete_events) {
      WriteCompleteSlices(unit, has_verdict);
      return;
    }
    open_.clear();
    for (const Slice& s : unit.slices) {
      if (!complete_events) {
        while (open_.size() > s.depth) {
          WriteEnd(open_.back());
          open_.pop_back();
        }
        open_.push_back(s.end_ns);
      }
      WriteSlice(TemplateFor(s.site, has_verdict, s.repaired), s, complete_events);
    }
    while (!open_.empty()) {
      WriteEnd(open_.back());
      open_.pop_back();
    }
  }

  // The unit's slices as "X" events: one rawValue holding them all, comma-separated, each
  // assembled in a local buffer that goes to the stream in large writes (per slice
  // json::OStream's bookkeeping and five stream writes were a third of the JSON dump's time).
  void WriteCompleteSlices(const UnitTimeline& unit, bool has_verdict) {
    json_.rawValue([&](llvm::raw_ostream& os) {
      char buf[kLocalBytes];
      size_t n = 0;
      bool first = true;
      for (const Slice& s : unit.slices) {
        const SiteTemplate& t = TemplateFor(s.site, has_verdict, s.repaired);
        const llvm::StringRef head = t.event->piece(0);
        const llvm::StringRef mid = t.event->piece(1);
        // A comma, the pieces and two numbers of at most 24 characters.
        const size_t need = 1 + head.size() + mid.size() + t.tail.size() + 48;
        if (n + need > sizeof(buf)) {
          os.write(buf, n);
          n = 0;
        }
        if (!first) buf[n++] = ',';
        first = false;
        if (need > sizeof(buf)) {  // a very long name or origin: straight to the stream
          os.write(buf, n);  // the comma
          n = 0;
          WriteSliceText(os, t, s, true);
          continue;
        }
        std::memcpy(buf + n, head.data(), head.size());
        n += head.size();
        n = static_cast<size_t>(FormatMicros(s.begin_ns - origin_ns_, buf + n) - buf);
        std::memcpy(buf + n, mid.data(), mid.size());
        n += mid.size();
        n = static_cast<size_t>(FormatMicros(s.end_ns - s.begin_ns, buf + n) - buf);
        std::memcpy(buf + n, t.tail.data(), t.tail.size());
        n += t.tail.size();
      }
      os.write(buf, n);
    });
  }

  void WriteSliceText(llvm::raw_ostream& os, const SiteTemplate& t, const Slice& s,
                      bool complete) {
    char ts[24], dur[24];
    char* const ts_end = FormatMicros(s.begin_ns - origin_ns_, ts);
    char* const dur_end = complete ? FormatMicros(s.end_ns - s.begin_ns, dur) : dur;
    os << t.event->piece(0) << llvm::StringRef(ts, ts_end - ts);
    if (complete) os << t.event->piece(1) << llvm::StringRef(dur, dur_end - dur);
    os << t.tail;
  }

  void WriteSlice(const SiteTemplate& t, const Slice& s, bool complete) {
    json_.rawValue([&](llvm::raw_ostream& os) { WriteSliceText(os, t, s, complete); });
  }

  void WriteEnd(int64_t end_ns) {
    char ts[24];
    const llvm::StringRef values[3] = {
        llvm::StringRef(ts, FormatMicros(end_ns - origin_ns_, ts) - ts), pid_json_,
        tid_json_};
    json_.rawValue([&](llvm::raw_ostream& os) { end_template_.Write(os, values); });
  }

  const TraceLayout& layout_;
  const int64_t origin_ns_;
  const uint64_t units_per_block_;
  const ChromeTraceOptions options_;
  AbandonableJson json_storage_;
  llvm::json::OStream& json_;
  // Totals for otherData and process metadata: O(SMs), not O(units).
  uint64_t verdict_counts_[5] = {};
  uint64_t units_ = 0, slices_ = 0, dropped_ = 0;
  uint64_t instants_ = 0, async_spans_ = 0, flows_ = 0, flows_unanchored_ = 0;
  std::map<uint32_t, uint64_t> first_tid_;  // pid -> tid of its first unit
  std::vector<SiteTemplate> templates_;  // [site * kVariants + variant]
  std::vector<std::optional<EventTemplate>> instant_templates_;  // [site]
  std::vector<std::optional<EventTemplate>> async_templates_;    // [site * 4 + variant]
  std::optional<EventTemplate> flow_templates_[12];  // [kind * 4 + start * 2 + barrier]
  std::map<uint32_t, std::string> barrier_json_;    // barrier id -> its name as JSON
  uint64_t generation_ = 0;              // counts units written
  EventTemplate end_template_;
  // Per current unit.
  std::string block_json_;
  std::string unit_json_;
  std::string pid_json_;
  std::string tid_json_;
  std::string verdict_json_;
  std::vector<int64_t> open_;  // end times of open B events (B/E mode)
};

// Units per block for tids: the layout's, or more when a hand-built Timeline says so.
uint64_t UnitsPerBlockOf(const Timeline& timeline) {
  uint64_t n = UnitsPerBlock(timeline.layout);
  for (const UnitTimeline& unit : timeline.units) {
    n = std::max<uint64_t>(n, uint64_t{unit.unit_index} + 1);
  }
  return n;
}

}  // namespace

absl::Status WriteChromeTrace(const Timeline& timeline, const ChromeTraceOptions& options,
                              llvm::raw_ostream& os) {
  RETURN_IF_ERROR(CheckTimeline(timeline));
  Writer writer(timeline.layout, timeline.origin_ns, UnitsPerBlockOf(timeline), options, os);
  writer.Begin();
  writer.AddUnits(timeline.units);
  writer.Finish(timeline.clock_note, timeline.overhead_compensated);
  return absl::OkStatus();
}

absl::Status WriteChromeTraceFile(const Timeline& timeline, const ChromeTraceOptions& options,
                                  absl::string_view path) {
  // WriteChromeTrace checks the Timeline before it writes a byte; on its error the file shell
  // removes the temporary file and leaves `path` as it was.
  return WriteLargeFileAtomically(
      path, [&](llvm::raw_ostream& os) { return WriteChromeTrace(timeline, options, os); },
      {.role = "Chrome trace"});
}

// ---- ChromeTraceWriter ----------------------------------------------------------------

struct ChromeTraceWriter::State {
  State(const TraceLayout& layout, int64_t origin, const ChromeTraceOptions& options,
        llvm::raw_ostream& os)
      : layout(layout),
        origin_ns(origin),
        units_per_block(std::max<uint64_t>(UnitsPerBlock(layout), 1)),
        checker(this->layout, origin, units_per_block),
        writer(this->layout, origin, units_per_block, options, os) {}
  const TraceLayout layout;
  const int64_t origin_ns;
  const uint64_t units_per_block;
  TimelineChecker checker;
  Writer writer;
  bool finished = false;
};

ChromeTraceWriter::ChromeTraceWriter(const TraceLayout& layout, int64_t origin_ns,
                                     const ChromeTraceOptions& options, llvm::raw_ostream& os)
    : state_(std::make_unique<State>(layout, origin_ns, options, os)) {
  state_->writer.Begin();
}

// An unfinished trace is abandoned, not closed: a destructor writes nothing.
ChromeTraceWriter::~ChromeTraceWriter() = default;

absl::Status ChromeTraceWriter::Add(const Timeline& chunk) {
  if (state_->finished) {
    return absl::FailedPreconditionError("ChromeTraceWriter::Add after Finish");
  }
  RETURN_IF_ERROR(state_->checker.NextUnits(chunk.units));
  state_->writer.AddUnits(chunk.units);
  return absl::OkStatus();
}

absl::Status ChromeTraceWriter::AddUnit(const UnitTimeline& unit) {
  if (state_->finished) {
    return absl::FailedPreconditionError("ChromeTraceWriter::AddUnit after Finish");
  }
  RETURN_IF_ERROR(state_->checker.Next(unit));
  state_->writer.AddUnits(absl::Span<const UnitTimeline>(&unit, 1));
  return absl::OkStatus();
}

absl::Status ChromeTraceWriter::Finish(absl::string_view clock_note, bool overhead_compensated) {
  if (state_->finished) {
    return absl::FailedPreconditionError("ChromeTraceWriter::Finish twice");
  }
  state_->finished = true;
  state_->writer.Finish(clock_note, overhead_compensated);
  return absl::OkStatus();
}

}  // namespace warptrace
