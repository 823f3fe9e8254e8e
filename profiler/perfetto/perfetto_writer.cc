#include "profiler/perfetto/perfetto_writer.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "llvm/Support/JSON.h"
#include "profiler/sinks/chrome_trace.h"
#include "profiler/perfetto/perfetto_trace.pb.h"

namespace warptrace {
namespace {

namespace pb = ::warptrace::perfetto;
using ::google::protobuf::io::CodedOutputStream;
using WireFormat = ::google::protobuf::internal::WireFormatLite;

// Track uuids: a kind in the top bits, an id below.
constexpr uint64_t kRootUuid = 1;
constexpr uint64_t kSmUuidBase = uint64_t{1} << 40;
constexpr uint64_t kSmCounterUuidBase = uint64_t{2} << 40;
constexpr uint64_t kNoRecordUuid = uint64_t{3} << 40;
constexpr uint64_t kUnitUuidBase = uint64_t{4} << 40;
// A unit's async lanes: kAsyncUuidBase + record_index * kMaxAsyncLanes + lane.
constexpr uint64_t kAsyncUuidBase = uint64_t{5} << 40;
constexpr uint32_t kMaxAsyncLanes = 256;
// A block's stage-ring counters: kRingUuidBase + block_linear * kMaxRings + ring.
constexpr uint64_t kRingUuidBase = uint64_t{6} << 40;
constexpr uint32_t kMaxRings = 64;

// Interned debug annotation names (per unit, re-declared with the unit's state).
constexpr uint64_t kSiteAnnotationIid = 1;
constexpr uint64_t kKindAnnotationIid = 2;
constexpr uint64_t kOriginAnnotationIid = 3;
// Declared only when the layout has barrier-arrive sites (their instants carry them).
constexpr uint64_t kBarrierAnnotationIid = 4;
constexpr uint64_t kPhaseAnnotationIid = 5;

constexpr uint32_t kPacketTag =
    WireFormat::MakeTag(pb::Trace::kPacketFieldNumber, WireFormat::WIRETYPE_LENGTH_DELIMITED);
constexpr uint32_t kTimestampTag =
    WireFormat::MakeTag(pb::TracePacket::kTimestampFieldNumber, WireFormat::WIRETYPE_VARINT);
constexpr uint32_t kTrackEventTag = WireFormat::MakeTag(
    pb::TracePacket::kTrackEventFieldNumber, WireFormat::WIRETYPE_LENGTH_DELIMITED);

// The writer encodes into its own buffer with CodedOutputStream's *ToArray encoders and
// MessageLite::SerializeWithCachedSizesToArray, and hands full buffers to the raw_ostream:
// per event that is a handful of inlined stores, where a CodedOutputStream object costs a
// call into the library per field (measured: 2x slower overall).
constexpr size_t kBufferBytes = size_t{1} << 16;
// Room every hot-path packet fits in (Reserve's promise), and what a suffix copy may
// over-read: suffixes are stored padded to it.
constexpr size_t kSlopBytes = 64;
constexpr size_t kSuffixCopyBytes = 16;

std::string DimString(const Dim3& d) { return absl::StrFormat("(%d,%d,%d)", d.x, d.y, d.z); }

// Perfetto's strings are UTF-8; names come from users.
std::string Utf8(const std::string& text) {
  return llvm::json::isUTF8(text) ? text : llvm::json::fixUTF8(text);
}

struct UnitSpan {
  uint32_t sm;
  int64_t start_ns;
  int64_t end_ns;
};

// "full[2]" -> "full[*]": the ring a barrier array element belongs to; "" for a barrier
// that is not an array element.
std::string RingOf(const std::string& barrier) {
  const size_t open = barrier.rfind('[');
  if (open == std::string::npos || open == 0 || barrier.back() != ']' ||
      open + 2 >= barrier.size()) {
    return "";
  }
  for (size_t i = open + 1; i + 1 < barrier.size(); ++i) {
    if (barrier[i] < '0' || barrier[i] > '9') return "";
  }
  return barrier.substr(0, open) + "[*]";
}

// One phase of one barrier of the block being written: when its last arrival came (the
// stage became ready) and when the last wait on it was released (it was taken).
struct PhaseSpan {
  int64_t complete_ns = -1;
  int64_t released_ns = -1;
};

}  // namespace

class PerfettoWriter::Impl {
 public:
  explicit Impl(llvm::raw_ostream& os) : os_(os), buffer_(kBufferBytes + kSlopBytes) {}

  absl::Status Begin(const TraceLayout& layout, int64_t origin_ns) {
    if (state_ != State::kNew) return absl::FailedPreconditionError("PerfettoWriter::Begin twice");
    state_ = State::kUnits;
    layout_ = &layout;
    origin_ns_ = origin_ns;
    units_per_block_ = std::max<uint64_t>(UnitsPerBlock(layout), 1);
    unit_kind_ = UnitKindName(layout.unit.kind);
    const HostTimeAnchor& anchor = layout.host_anchor;
    // boottime = t + offset; a known anchor must keep boottime >= 0 at the origin.
    if (anchor.known && anchor.boottime_ns + (origin_ns - anchor.globaltimer_ns) >= 0) {
      boottime_offset_ = anchor.boottime_ns - anchor.globaltimer_ns;
      anchored_ = true;
    } else {
      boottime_offset_ = -origin_ns;
    }
    PrepareSites();

    pb::TracePacket packet;
    packet.set_trusted_packet_sequence_id(kPerfettoTrackSequence);
    packet.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    packet.set_first_packet_on_sequence(true);
    packet.mutable_trace_packet_defaults()->set_timestamp_clock_id(kPerfettoGpuClockId);
    pb::ClockSnapshot* snapshot = packet.mutable_clock_snapshot();
    const int64_t at = anchored_ ? anchor.globaltimer_ns : origin_ns;
    AddClock(*snapshot, kPerfettoGpuClockId, at, false);
    AddClock(*snapshot, pb::BUILTIN_CLOCK_BOOTTIME, at + boottime_offset_, false);
    if (anchored_ && anchor.realtime_ns >= 0) {
      AddClock(*snapshot, pb::BUILTIN_CLOCK_REALTIME, anchor.realtime_ns, false);
    }
    WritePacket(packet);

    pb::TrackDescriptor root;
    root.set_uuid(kRootUuid);
    root.set_name(Utf8(absl::StrCat(layout.kernel_name, " on ", layout.device_name)));
    root.set_description(Utf8(absl::StrFormat(
        "warptrace: kernel %s, grid %s, block %s, trace unit %s, capacity %d events per unit%s",
        layout.kernel_name, DimString(layout.grid), DimString(layout.block), unit_kind_,
        layout.capacity,
        anchored_ ? absl::StrFormat("; host-time anchor exact to %d ns",
                                    anchor.uncertainty_ns)
                  : std::string("; no host-time anchor: time 0 is the first unit's start"))));
    root.set_child_ordering(pb::TrackDescriptor::EXPLICIT);
    WriteDescriptor(root);
    return absl::OkStatus();
  }

  absl::Status AddUnit(const UnitTimeline& unit) {
    if (state_ != State::kUnits) {
      return absl::FailedPreconditionError(state_ == State::kNew
                                               ? "PerfettoWriter::AddUnit before Begin"
                                               : "PerfettoWriter::AddUnit after End");
    }
    RETURN_IF_ERROR(Order(unit));
    RETURN_IF_ERROR(AddHandoffOps(unit));
    const uint64_t track = kUnitUuidBase + unit.record_index;
    if (unit.block_linear != ring_block_ || !ring_block_seen_) FlushRings();
    WriteUnitTrack(unit, ParentTrack(unit), track);
    WriteAsyncTracks(unit, track);
    CollectPhases(unit);
    if (unit.has_record) {
      const int64_t start = std::max(unit.start_ns, origin_ns_);
      spans_.push_back({unit.sm_id, start, std::max(start, unit.end_ns)});
    }
    if (ops_.empty() && unit.verdict == Verdict::kComplete) return absl::OkStatus();
    // Every unit's snapshot declares clock 64 at the trace origin, not at the unit's start:
    // Perfetto's trace processor rejects a snapshot whose CLOCK_BOOTTIME goes back from
    // the previous one of the same clocks (util/clock_synchronizer.cc, the trace clock must
    // be monotonic), and units come in block order, whose starts are not in time order. The
    // unit's first delta is then from the origin (a few bytes more, once per unit). Order()
    // checked that no event precedes the origin.
    StartUnitSequence(origin_ns_, track);
    if (op_flows_.empty() && unit.instants.empty() && unit.async_spans.empty()) {
      // The hot path: slices only.
      for (const Op& op : ops_) {
        const uint64_t delta = static_cast<uint64_t>(op.time - last_ns_);
        last_ns_ = op.time;
        if (op.kind == OpKind::kEnd) {
          WriteUnitEvent(delta, end_suffix_);
        } else {
          WriteBegin(delta, unit.slices[op.index].site, op.repaired);
        }
      }
    } else {
      WriteHandoffOps(unit);
    }
    if (unit.verdict != Verdict::kComplete) WriteVerdict(unit);
    return absl::OkStatus();
  }

  absl::Status End() {
    if (state_ == State::kDone) return absl::FailedPreconditionError("PerfettoWriter::End twice");
    if (state_ == State::kNew) return absl::FailedPreconditionError("PerfettoWriter::End before Begin");
    state_ = State::kDone;
    FlushRings();
    WriteCounters();
    Flush();
    return absl::OkStatus();
  }

  uint64_t packets() const { return packets_; }

 private:
  enum class State { kNew, kUnits, kDone };

  // Per barrier id seen: its name (UTF-8) and its ring's index in ring_names_ (-1: none).
  struct BarrierCache {
    bool known = false;
    std::string name;
    int32_t ring = -1;
  };

  // One event of the current unit, in time order: a slice begin or end on the unit's track,
  // an instant there (a barrier arrival), or an async span's begin or end on its lane.
  enum class OpKind : uint8_t { kBegin, kEnd, kInstant, kAsyncBegin, kAsyncEnd };
  struct Op {
    int64_t time;
    uint32_t index;   // the slice, instant or async span (UnitTimeline's vectors)
    OpKind kind;
    bool repaired;
  };
  // A flow arrow starting (flow_ids) or ending (terminating_flow_ids) at ops_[op].
  struct OpFlow {
    uint32_t op;
    uint64_t id;
    bool terminating;
  };

  static void AddClock(pb::ClockSnapshot& snapshot, uint32_t id, int64_t timestamp,
                       bool incremental) {
    pb::ClockSnapshot::Clock* clock = snapshot.add_clocks();
    clock->set_clock_id(id);
    clock->set_timestamp(static_cast<uint64_t>(timestamp));
    if (incremental) clock->set_is_incremental(true);
  }

  // Per site, the encoded TrackEvent of its slice begins (name and category interned), the
  // same with the site's debug annotations for its first begin in a unit, and the
  // InternedData field that interns its name. Serialized once by protobuf, copied per event.
  void PrepareSites() {
    const size_t n = layout_->sites.size();
    begin_event_.resize(n);
    first_begin_event_.resize(n);
    interned_name_.resize(n);
    begin_suffix_.resize(n);
    first_begin_suffix_.resize(n);
    site_seen_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const SiteInfo& site = layout_->sites[i];
      pb::TrackEvent event;
      event.set_type(pb::TrackEvent::TYPE_SLICE_BEGIN);
      event.set_name_iid(i + 1);
      event.add_category_iids(static_cast<uint64_t>(site.kind) + 1);
      begin_event_[i] = event.SerializeAsString();
      pb::DebugAnnotation* a = event.add_debug_annotations();
      a->set_name_iid(kSiteAnnotationIid);
      a->set_uint_value(i);
      a = event.add_debug_annotations();
      a->set_name_iid(kKindAnnotationIid);
      a->set_string_value(SiteKindName(site.kind));
      a = event.add_debug_annotations();
      a->set_name_iid(kOriginAnnotationIid);
      a->set_string_value(Utf8(site.origin));
      first_begin_event_[i] = event.SerializeAsString();
      pb::TracePacket packet;
      pb::EventName* name = packet.mutable_interned_data()->add_event_names();
      name->set_iid(i + 1);
      name->set_name(Utf8(site.name));
      interned_name_[i] = packet.SerializeAsString();
      begin_suffix_[i] = UnitEventSuffix(begin_event_[i], "");
      first_begin_suffix_[i] = UnitEventSuffix(first_begin_event_[i], interned_name_[i]);
    }
    pb::TrackEvent end;
    end.set_type(pb::TrackEvent::TYPE_SLICE_END);
    end_suffix_ = UnitEventSuffix(end.SerializeAsString(), "");
    // What every unit's state starts with: its categories and annotation names.
    pb::InternedData* interned = unit_start_.mutable_interned_data();
    for (SiteKind kind : kAllSiteKinds) {
      pb::EventCategory* category = interned->add_event_categories();
      category->set_iid(static_cast<uint64_t>(kind) + 1);
      category->set_name(SiteKindName(kind));
    }
    for (auto [iid, name] : {std::pair<uint64_t, const char*>{kSiteAnnotationIid, "site"},
                             {kKindAnnotationIid, "kind"},
                             {kOriginAnnotationIid, "origin"}}) {
      pb::DebugAnnotationName* n = interned->add_debug_annotation_names();
      n->set_iid(iid);
      n->set_name(name);
    }
    const bool arrivals =
        std::any_of(layout_->sites.begin(), layout_->sites.end(),
                    [](const SiteInfo& site) { return site.kind == SiteKind::kBarrierArrive; });
    if (arrivals) {
      for (auto [iid, name] : {std::pair<uint64_t, const char*>{kBarrierAnnotationIid, "barrier"},
                               {kPhaseAnnotationIid, "phase"}}) {
        pb::DebugAnnotationName* n = interned->add_debug_annotation_names();
        n->set_iid(iid);
        n->set_name(name);
      }
    }
    unit_start_.set_trusted_packet_sequence_id(kPerfettoUnitSequence);
    unit_start_.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    unit_start_.mutable_trace_packet_defaults()->set_timestamp_clock_id(kPerfettoGpuClockId);
    pb::ClockSnapshot* snapshot = unit_start_.mutable_clock_snapshot();
    AddClock(*snapshot, kPerfettoGpuClockId, 0, true);
    AddClock(*snapshot, pb::BUILTIN_CLOCK_BOOTTIME, 0, false);
  }

  void Flush() {
    os_.write(reinterpret_cast<const char*>(buffer_.data()), used_);
    used_ = 0;
  }

  // `n` bytes at the end of the buffer, flushing it first when they do not fit. n must be
  // at most kSlopBytes beyond kBufferBytes.
  uint8_t* Reserve(size_t n) {
    if (used_ + n > kBufferBytes) Flush();
    return buffer_.data() + used_;
  }

  // A packet message: tag, length, the message's own serialization.
  // The sequence id, the TrackEvent field holding `event` and `extra` (more encoded packet
  // fields), as bytes; padded in capacity so that WriteUnitEvent may copy 16 bytes.
  static std::string UnitEventSuffix(const std::string& event, const std::string& extra) {
    pb::TracePacket packet;
    packet.set_trusted_packet_sequence_id(kPerfettoUnitSequence);
    std::string out = packet.SerializeAsString();
    uint8_t head[8];
    uint8_t* p = CodedOutputStream::WriteTagToArray(kTrackEventTag, head);
    p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(event.size()), p);
    out.append(reinterpret_cast<const char*>(head), static_cast<size_t>(p - head));
    out += event;
    out += extra;
    out.reserve(std::max(out.size(), kSuffixCopyBytes));
    return out;
  }

  void WritePacket(const pb::TracePacket& packet) {
    const size_t size = packet.ByteSizeLong();
    const size_t total = 1 + CodedOutputStream::VarintSize32(static_cast<uint32_t>(size)) + size;
    if (total > kBufferBytes) {  // a huge name: serialize on its own
      std::string bytes;
      bytes.push_back(static_cast<char>(kPacketTag));
      uint8_t length[8];
      bytes.append(reinterpret_cast<const char*>(length),
                   CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), length) -
                       length);
      packet.AppendToString(&bytes);
      Flush();
      os_.write(bytes.data(), bytes.size());
    } else {
      uint8_t* p = Reserve(total);
      p = CodedOutputStream::WriteTagToArray(kPacketTag, p);
      p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), p);
      packet.SerializeWithCachedSizesToArray(p);
      used_ += total;
    }
    ++packets_;
  }

  void WriteDescriptor(pb::TrackDescriptor& descriptor) {
    pb::TracePacket packet;
    packet.set_trusted_packet_sequence_id(kPerfettoTrackSequence);
    packet.mutable_track_descriptor()->Swap(&descriptor);
    WritePacket(packet);
  }

  // The unit's SM track (declared with its counter track the first time the SM is seen).
  uint64_t ParentTrack(const UnitTimeline& unit) {
    if (!unit.has_record) {
      if (!no_record_declared_) {
        no_record_declared_ = true;
        pb::TrackDescriptor group;
        group.set_uuid(kNoRecordUuid);
        group.set_parent_uuid(kRootUuid);
        group.set_name("no record");
        group.set_description("trace units that wrote no usable record: their SM is unknown");
        group.set_child_ordering(pb::TrackDescriptor::EXPLICIT);
        group.set_sibling_order_rank(std::numeric_limits<int32_t>::max());
        WriteDescriptor(group);
      }
      return kNoRecordUuid;
    }
    const uint64_t uuid = kSmUuidBase + unit.sm_id;
    if (unit.sm_id >= sm_declared_.size()) sm_declared_.resize(uint64_t{unit.sm_id} + 1, false);
    if (!sm_declared_[unit.sm_id]) {
      sm_declared_[unit.sm_id] = true;
      pb::TrackDescriptor sm;
      sm.set_uuid(uuid);
      sm.set_parent_uuid(kRootUuid);
      sm.set_name(absl::StrCat("SM ", unit.sm_id));
      sm.set_child_ordering(pb::TrackDescriptor::EXPLICIT);
      sm.set_sibling_order_rank(static_cast<int32_t>(
          std::min<uint32_t>(unit.sm_id, std::numeric_limits<int32_t>::max() - 1)));
      WriteDescriptor(sm);
      pb::TrackDescriptor counter;
      counter.set_uuid(kSmCounterUuidBase + unit.sm_id);
      counter.set_parent_uuid(uuid);
      counter.set_name("active units");
      counter.set_description("trace units of this SM running at this time");
      counter.set_sibling_order_rank(-1);  // above the units
      counter.mutable_counter()->set_unit(pb::CounterDescriptor::UNIT_COUNT);
      WriteDescriptor(counter);
    }
    return uuid;
  }

  // "block (3,0,0) warpgroup 1 [truncated]", ranked like the Chrome trace's sort index.
  void WriteUnitTrack(const UnitTimeline& unit, uint64_t parent, uint64_t track) {
    const uint64_t rank = uint64_t{unit.block_linear} * units_per_block_ + unit.unit_index;
    const Dim3& b = unit.block_index;
    std::string& name = *unit_track_.mutable_track_descriptor()->mutable_name();
    name.clear();
    absl::StrAppend(&name, "block (", b.x, ",", b.y, ",", b.z, ") ", unit_kind_, " ",
                    unit.unit_index);
    if (unit.verdict != Verdict::kComplete) {
      absl::StrAppend(&name, " [", VerdictName(unit.verdict), "]");
    }
    pb::TrackDescriptor& d = *unit_track_.mutable_track_descriptor();
    d.set_uuid(track);
    d.set_parent_uuid(parent);
    std::string& description = *d.mutable_description();
    description.clear();
    absl::StrAppend(&description, "linear block ", unit.block_linear, ", ",
                    unit.has_record ? absl::StrCat("SM ", unit.sm_id) : "no record", ", ",
                    VerdictName(unit.verdict));
    if (!unit.verdict_reason.empty()) {
      absl::StrAppend(&description, ": ", Utf8(unit.verdict_reason));
    }
    d.set_sibling_order_rank(
        static_cast<int32_t>(std::min<uint64_t>(rank, std::numeric_limits<int32_t>::max())));
    unit_track_.set_trusted_packet_sequence_id(kPerfettoTrackSequence);
    WritePacket(unit_track_);
  }

  // Checks everything AddUnit relies on and puts the unit's begins and ends in time order
  // into ops_, before a byte of the unit is written.
  absl::Status Order(const UnitTimeline& unit) {
    ops_.clear();
    open_.clear();
    ops_.reserve(2 * unit.slices.size());
    int64_t last = origin_ns_;
    auto fail = [&](size_t i, const Slice& s, absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(
          "block ", unit.block_linear, " ", DimString(unit.block_index), " unit ",
          unit.unit_index, ", slice ", i, " (site ", s.site, ", depth ", s.depth, ", ",
          s.begin_ns, "..", s.end_ns, " ns): ", what));
    };
    const size_t num_sites = layout_->sites.size();
    for (size_t i = 0; i < unit.slices.size(); ++i) {
      const Slice& s = unit.slices[i];
      if (s.site >= num_sites) {
        return fail(i, s, absl::StrCat("site id is outside the site table (", num_sites,
                                       " sites)"));
      }
      if (s.end_ns < s.begin_ns) return fail(i, s, "ends before it begins");
      if (s.depth > open_.size()) {
        return fail(i, s, absl::StrCat("is deeper than its enclosing slices (", open_.size(),
                                       " open)"));
      }
      while (open_.size() > s.depth) {
        last = std::max(last, open_.back().first);
        ops_.push_back({open_.back().first, open_.back().second, OpKind::kEnd, false});
        open_.pop_back();
      }
      if (s.begin_ns < last) {
        return fail(i, s, absl::StrCat("begins before an earlier event of its unit or the "
                                       "trace origin (",
                                       last, " ns)"));
      }
      if (!open_.empty() && s.end_ns > open_.back().first) {
        return fail(i, s, absl::StrCat("ends after its parent (", open_.back().first, " ns)"));
      }
      last = s.begin_ns;
      ops_.push_back({s.begin_ns, static_cast<uint32_t>(i), OpKind::kBegin, s.repaired});
      open_.push_back({s.end_ns, static_cast<uint32_t>(i)});
    }
    while (!open_.empty()) {
      ops_.push_back({open_.back().first, open_.back().second, OpKind::kEnd, false});
      open_.pop_back();
    }
    return absl::OkStatus();
  }

  // Merges the unit's instants and async span begins/ends into ops_ (by time; at equal
  // times after the slices' events) and attaches every flow to the op it starts or ends at.
  absl::Status AddHandoffOps(const UnitTimeline& unit) {
    op_flows_.clear();
    if (unit.instants.empty() && unit.async_spans.empty() && unit.flows.empty()) {
      return absl::OkStatus();
    }
    const size_t num_sites = layout_->sites.size();
    auto fail = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("block ", unit.block_linear, " ",
                                                     DimString(unit.block_index), " unit ",
                                                     unit.unit_index, ": ", what));
    };
    if (unit.async_lanes > kMaxAsyncLanes) {
      return fail(absl::StrCat(unit.async_lanes, " async lanes, more than the ",
                               kMaxAsyncLanes, " a unit's track can hold"));
    }
    extra_ops_.clear();
    for (size_t i = 0; i < unit.instants.size(); ++i) {
      const Instant& in = unit.instants[i];
      if (in.site >= num_sites || in.ns < origin_ns_) {
        return fail(absl::StrCat("instant ", i, " (site ", in.site, ", ", in.ns,
                                 " ns) is outside the site table or before the origin"));
      }
      extra_ops_.push_back({in.ns, static_cast<uint32_t>(i), OpKind::kInstant, false});
    }
    for (size_t i = 0; i < unit.async_spans.size(); ++i) {
      const AsyncSpan& a = unit.async_spans[i];
      if (a.site >= num_sites || a.begin_ns < origin_ns_ || a.end_ns < a.begin_ns ||
          a.lane >= unit.async_lanes) {
        return fail(absl::StrCat("async span ", i, " (site ", a.site, ", ", a.begin_ns, "..",
                                 a.end_ns, " ns, lane ", a.lane, " of ", unit.async_lanes,
                                 ") is out of range"));
      }
      extra_ops_.push_back({a.begin_ns, static_cast<uint32_t>(i), OpKind::kAsyncBegin, false});
      extra_ops_.push_back({a.end_ns, static_cast<uint32_t>(i), OpKind::kAsyncEnd, false});
    }
    auto by_time = [](const Op& a, const Op& b) { return a.time < b.time; };
    std::stable_sort(extra_ops_.begin(), extra_ops_.end(), by_time);
    merged_ops_.clear();
    std::merge(ops_.begin(), ops_.end(), extra_ops_.begin(), extra_ops_.end(),
               std::back_inserter(merged_ops_), by_time);
    ops_.swap(merged_ops_);
    return AttachFlows(unit, fail);
  }

  // Each flow of the unit starts at an arrival instant or an async begin (flow_ids) and
  // ends at a wait's end or an async end (terminating_flow_ids), on the unit it names.
  template <typename Fail>
  absl::Status AttachFlows(const UnitTimeline& unit, const Fail& fail) {
    slice_end_op_.assign(unit.slices.size(), 0);
    instant_op_.assign(unit.instants.size(), 0);
    async_begin_op_.assign(unit.async_spans.size(), 0);
    async_end_op_.assign(unit.async_spans.size(), 0);
    for (size_t i = 0; i < ops_.size(); ++i) {
      const Op& op = ops_[i];
      const uint32_t at = static_cast<uint32_t>(i);
      switch (op.kind) {
        case OpKind::kEnd: slice_end_op_[op.index] = at; break;
        case OpKind::kInstant: instant_op_[op.index] = at; break;
        case OpKind::kAsyncBegin: async_begin_op_[op.index] = at; break;
        case OpKind::kAsyncEnd: async_end_op_[op.index] = at; break;
        case OpKind::kBegin: break;
      }
    }
    async_begins_.clear();
    async_ends_.clear();
    for (size_t i = 0; i < unit.async_spans.size(); ++i) {
      const uint32_t span = static_cast<uint32_t>(i);
      async_begins_.push_back({unit.async_spans[i].begin_event, span});
      async_ends_.push_back({unit.async_spans[i].end_event, span});
    }
    std::sort(async_begins_.begin(), async_begins_.end());
    std::sort(async_ends_.begin(), async_ends_.end());
    for (const Flow& f : unit.flows) {
      const bool arrival = f.kind == FlowKind::kArrivalToRelease;
      if (f.from.record_index == unit.record_index) {
        if (arrival) {
          auto it = std::lower_bound(
              unit.instants.begin(), unit.instants.end(), f.from.event,
              [](const Instant& in, uint32_t event) { return in.event < event; });
          if (it == unit.instants.end() || it->event != f.from.event) {
            return fail(absl::StrCat("flow ", f.id, " starts at event ", f.from.event,
                                     ", which is no arrival instant of the unit"));
          }
          op_flows_.push_back({instant_op_[it - unit.instants.begin()], f.id + 1, false});
        } else {
          const int64_t span = AsyncSpanAt(async_begins_, f.from.event);
          if (span < 0) return fail(absl::StrCat("flow ", f.id, " starts at no async issue"));
          op_flows_.push_back({async_begin_op_[span], f.id + 1, false});
        }
      }
      if (f.to.record_index == unit.record_index) {
        if (arrival) {
          // The released wait (FlowEnd::released_wait, found by the timeline).
          if (f.to.released_wait >= unit.slices.size()) {
            return fail(absl::StrCat("flow ", f.id, " releases no wait slice (none ends at ",
                                     f.to.ns, " ns)"));
          }
          op_flows_.push_back({slice_end_op_[f.to.released_wait], f.id + 1, true});
        } else {
          const int64_t span = AsyncSpanAt(async_ends_, f.to.event);
          if (span < 0) return fail(absl::StrCat("flow ", f.id, " ends at no async completion"));
          op_flows_.push_back({async_end_op_[span], f.id + 1, true});
        }
      }
    }
    std::stable_sort(op_flows_.begin(), op_flows_.end(),
                     [](const OpFlow& a, const OpFlow& b) { return a.op < b.op; });
    return absl::OkStatus();
  }

  // The async span whose begin (or end) is event `event` in `index` ((event, span) pairs,
  // sorted), or -1.
  static int64_t AsyncSpanAt(const std::vector<std::pair<uint32_t, uint32_t>>& index,
                             uint32_t event) {
    auto it = std::lower_bound(index.begin(), index.end(), std::pair<uint32_t, uint32_t>{event, 0});
    return it != index.end() && it->first == event ? static_cast<int64_t>(it->second) : -1;
  }

  // ops_ of a unit with hand-offs: events that carry flows, instants and async spans take
  // the slow path.
  void WriteHandoffOps(const UnitTimeline& unit) {
    size_t flow = 0;  // op_flows_ is sorted by op
    for (size_t i = 0; i < ops_.size(); ++i) {
      const Op& op = ops_[i];
      const uint64_t delta = static_cast<uint64_t>(op.time - last_ns_);
      last_ns_ = op.time;
      size_t flows_end = flow;
      while (flows_end < op_flows_.size() && op_flows_[flows_end].op == i) ++flows_end;
      if (flows_end == flow && op.kind == OpKind::kEnd) {
        WriteUnitEvent(delta, end_suffix_);
      } else if (flows_end == flow && op.kind == OpKind::kBegin) {
        WriteBegin(delta, unit.slices[op.index].site, op.repaired);
      } else {
        WriteHandoffEvent(unit, delta, op,
                          absl::MakeConstSpan(op_flows_).subspan(flow, flows_end - flow));
      }
      flow = flows_end;
    }
  }

  // The unit's async lanes, child tracks of its track ("async 0", ...).
  void WriteAsyncTracks(const UnitTimeline& unit, uint64_t track) {
    for (uint32_t lane = 0; lane < unit.async_lanes; ++lane) {
      pb::TrackDescriptor d;
      d.set_uuid(kAsyncUuidBase + unit.record_index * kMaxAsyncLanes + lane);
      d.set_parent_uuid(track);
      d.set_name(absl::StrCat("async ", lane));
      d.set_description("async copies of this trace unit, from issue to observed completion");
      d.set_sibling_order_rank(static_cast<int32_t>(lane));
      WriteDescriptor(d);
    }
  }

  // An event the hot path does not write: an instant, an async span's begin or end (on its
  // lane), or a slice begin/end that flows start or end at. One message, built by protobuf.
  void WriteHandoffEvent(const UnitTimeline& unit, uint64_t delta, const Op& op,
                         absl::Span<const OpFlow> flows) {
    // Reused without TracePacket::Clear, which would free the TrackEvent (a oneof member)
    // and its repeated fields: a malloc and free per event.
    pb::TracePacket& packet = handoff_packet_;
    packet.set_timestamp(delta);
    packet.set_trusted_packet_sequence_id(kPerfettoUnitSequence);
    if (packet.has_interned_data()) packet.clear_interned_data();
    pb::TrackEvent* event = packet.mutable_track_event();
    event->Clear();
    const bool opens = op.kind == OpKind::kBegin || op.kind == OpKind::kInstant ||
                       op.kind == OpKind::kAsyncBegin;
    if (opens) {
      const uint32_t site = op.kind == OpKind::kBegin     ? unit.slices[op.index].site
                            : op.kind == OpKind::kInstant ? unit.instants[op.index].site
                                                          : unit.async_spans[op.index].site;
      const bool first = site_seen_[site] != generation_;
      site_seen_[site] = generation_;
      event->ParseFromString(first ? first_begin_event_[site] : begin_event_[site]);
      if (first) packet.mutable_interned_data()->MergeFrom(InternedName(site));
    }
    event->set_type(op.kind == OpKind::kInstant ? pb::TrackEvent::TYPE_INSTANT
                    : opens                     ? pb::TrackEvent::TYPE_SLICE_BEGIN
                                                : pb::TrackEvent::TYPE_SLICE_END);
    if (op.kind == OpKind::kAsyncBegin || op.kind == OpKind::kAsyncEnd) {
      event->set_track_uuid(kAsyncUuidBase + unit.record_index * kMaxAsyncLanes +
                            unit.async_spans[op.index].lane);
    }
    if (op.kind == OpKind::kInstant) {
      const Instant& in = unit.instants[op.index];
      pb::DebugAnnotation* a = event->add_debug_annotations();
      a->set_name_iid(kBarrierAnnotationIid);
      a->set_string_value(Barrier(in.barrier).name);
      a = event->add_debug_annotations();
      a->set_name_iid(kPhaseAnnotationIid);
      a->set_uint_value(in.phase);
    }
    if (op.repaired) {
      pb::DebugAnnotation* a = event->add_debug_annotations();
      a->set_name("repaired");
      a->set_bool_value(true);
    }
    for (const OpFlow& f : flows) {
      if (f.terminating) {
        event->add_terminating_flow_ids(f.id);
      } else {
        event->add_flow_ids(f.id);
      }
    }
    WritePacket(packet);
  }

  const pb::InternedData& InternedName(uint32_t site) {
    interned_scratch_.ParseFromString(interned_name_[site]);
    return interned_scratch_.interned_data();
  }

  // Records the phases of the unit's arrival -> release flows for its block's stage-ring
  // counters (each flow once: on the unit it releases).
  void CollectPhases(const UnitTimeline& unit) {
    if (!ring_block_seen_) {
      ring_block_seen_ = true;
      ring_block_ = unit.block_linear;
      ring_block_index_ = unit.block_index;
    }
    if (unit.has_record) ring_block_sm_ = unit.sm_id;  // flows only come from such units
    for (const Flow& f : unit.flows) {
      if (f.kind != FlowKind::kArrivalToRelease || f.to.record_index != unit.record_index) {
        continue;
      }
      PhaseSpan& span = phases_[{f.barrier, f.phase}];
      if (f.completing) span.complete_ns = f.from.ns;
      span.released_ns = std::max(span.released_ns, f.to.ns);
    }
  }

  // Barrier `id`'s name and ring, computed once per id.
  const BarrierCache& Barrier(uint32_t id) {
    if (id >= barrier_cache_.size()) {
      // Ids are small (a block's barriers); a corrupt one gets no cache slot of its own.
      if (id > (uint32_t{1} << 16)) {
        scratch_barrier_ = {true, Utf8(BarrierName(*layout_, id)), -1};
        return scratch_barrier_;
      }
      barrier_cache_.resize(size_t{id} + 1);
    }
    BarrierCache& b = barrier_cache_[id];
    if (!b.known) {
      b.known = true;
      b.name = Utf8(BarrierName(*layout_, id));
      const std::string ring = RingOf(b.name);
      if (!ring.empty()) {
        auto it = std::find(ring_names_.begin(), ring_names_.end(), ring);
        b.ring = static_cast<int32_t>(it - ring_names_.begin());
        if (it == ring_names_.end()) ring_names_.push_back(ring);
      }
    }
    return b;
  }

  // Writes the finished block's counters: per stage ring (a barrier array, "full[*]"), the
  // number of its stages whose phase completed and that no wait has taken yet.
  void FlushRings() {
    if (!ring_block_seen_) return;
    ring_block_seen_ = false;
    if (phases_.empty()) return;
    for (auto& changes : ring_changes_) changes.clear();
    for (const auto& [key, span] : phases_) {
      const int32_t ring = Barrier(key.first).ring;
      if (ring < 0 || static_cast<uint32_t>(ring) >= kMaxRings || span.complete_ns < 0) continue;
      if (ring_changes_.size() <= static_cast<size_t>(ring)) ring_changes_.resize(ring + 1);
      ring_changes_[ring].push_back({std::max(span.complete_ns, origin_ns_), +1});
      ring_changes_[ring].push_back(
          {std::max({span.released_ns, span.complete_ns, origin_ns_}), -1});
    }
    phases_.clear();
    for (size_t r = 0; r < ring_changes_.size(); ++r) {
      if (ring_changes_[r].empty()) continue;
      const uint64_t uuid = kRingUuidBase + uint64_t{ring_block_} * kMaxRings + r;
      pb::TrackDescriptor d;
      d.set_uuid(uuid);
      d.set_parent_uuid(kSmUuidBase + ring_block_sm_);
      d.set_name(absl::StrCat(ring_names_[r], " stages ready in block ",
                              DimString(ring_block_index_)));
      d.set_description(absl::StrCat(
          "stages of the barrier ring ", ring_names_[r], " in block ", ring_block_,
          " whose current phase has completed (all its arrivals are in) and whose waits "
          "have not all been released yet: full stages a consumer has not taken"));
      d.set_sibling_order_rank(static_cast<int32_t>(
          std::min<uint64_t>(uint64_t{ring_block_} * units_per_block_,
                             std::numeric_limits<int32_t>::max())));
      d.mutable_counter()->set_unit(pb::CounterDescriptor::UNIT_COUNT);
      WriteDescriptor(d);
      WriteCounterTrack(uuid, ring_changes_[r]);
    }
  }

  // Clears sequence 2's state for a unit: defaults (its track, clock 64), clock 64
  // incremental from `base` (always the origin, see AddUnit), interned categories and
  // annotation names.
  void StartUnitSequence(int64_t base, uint64_t track) {
    ++generation_;
    if (generation_ == 1) {
      unit_start_.set_first_packet_on_sequence(true);
    } else {
      unit_start_.clear_first_packet_on_sequence();
    }
    unit_start_.mutable_trace_packet_defaults()->mutable_track_event_defaults()->set_track_uuid(
        track);
    pb::ClockSnapshot* snapshot = unit_start_.mutable_clock_snapshot();
    snapshot->mutable_clocks(0)->set_timestamp(static_cast<uint64_t>(base));
    snapshot->mutable_clocks(1)->set_timestamp(static_cast<uint64_t>(base + boottime_offset_));
    WritePacket(unit_start_);
    last_ns_ = base;
  }

  void WriteBegin(uint64_t delta, uint32_t site, bool repaired) {
    const bool first = site_seen_[site] != generation_;
    if (!repaired) {
      site_seen_[site] = generation_;
      WriteUnitEvent(delta, first ? first_begin_suffix_[site] : begin_suffix_[site]);
      return;
    }
    // Rare (--allow-truncated): a message of its own.
    site_seen_[site] = generation_;
    pb::TracePacket packet;
    if (first) packet.ParseFromString(interned_name_[site]);
    packet.set_timestamp(delta);
    packet.set_trusted_packet_sequence_id(kPerfettoUnitSequence);
    pb::TrackEvent* event = packet.mutable_track_event();
    event->ParseFromString(first ? first_begin_event_[site] : begin_event_[site]);
    pb::DebugAnnotation* a = event->add_debug_annotations();
    a->set_name("repaired");
    a->set_bool_value(true);
    WritePacket(packet);
  }

  // The hot path: one packet on the unit sequence — the timestamp delta, then `suffix`:
  // the encoded sequence id and TrackEvent (and any other fields), stored padded to
  // kSuffixCopyBytes when it is that short so the copy is one fixed-size move.
  void WriteUnitEvent(uint64_t delta, const std::string& suffix) {
    const uint32_t body = static_cast<uint32_t>(1 + CodedOutputStream::VarintSize64(delta) +
                                                suffix.size());
    const size_t total = 1 + CodedOutputStream::VarintSize32(body) + body;
    if (total > kSlopBytes) {
      WriteLongUnitEvent(delta, body, suffix);
      return;
    }
    uint8_t* p = Reserve(kSlopBytes);
    uint8_t* const start = p;
    p = CodedOutputStream::WriteTagToArray(kPacketTag, p);
    p = CodedOutputStream::WriteVarint32ToArray(body, p);
    p = CodedOutputStream::WriteTagToArray(kTimestampTag, p);
    p = CodedOutputStream::WriteVarint64ToArray(delta, p);
    if (suffix.size() <= kSuffixCopyBytes && suffix.capacity() >= kSuffixCopyBytes) {
      std::memcpy(p, suffix.data(), kSuffixCopyBytes);
    } else {
      std::memcpy(p, suffix.data(), suffix.size());
    }
    p += suffix.size();
    used_ += static_cast<size_t>(p - start);
    ++packets_;
  }

  void WriteLongUnitEvent(uint64_t delta, uint32_t body, const std::string& suffix) {
    uint8_t head[32];
    uint8_t* p = head;
    p = CodedOutputStream::WriteTagToArray(kPacketTag, p);
    p = CodedOutputStream::WriteVarint32ToArray(body, p);
    p = CodedOutputStream::WriteTagToArray(kTimestampTag, p);
    p = CodedOutputStream::WriteVarint64ToArray(delta, p);
    Flush();
    os_.write(reinterpret_cast<const char*>(head), static_cast<size_t>(p - head));
    os_.write(suffix.data(), suffix.size());
    ++packets_;
  }

  void WriteVerdict(const UnitTimeline& unit) {
    const int64_t at = std::max(last_ns_, unit.has_record ? unit.end_ns : origin_ns_);
    pb::TracePacket packet;
    packet.set_timestamp(static_cast<uint64_t>(at - last_ns_));
    last_ns_ = at;
    packet.set_trusted_packet_sequence_id(kPerfettoUnitSequence);
    pb::TrackEvent* event = packet.mutable_track_event();
    event->set_type(pb::TrackEvent::TYPE_INSTANT);
    event->set_name(VerdictName(unit.verdict));
    event->add_categories("verdict");
    pb::DebugAnnotation* a = event->add_debug_annotations();
    a->set_name("verdict");
    a->set_string_value(VerdictName(unit.verdict));
    a = event->add_debug_annotations();
    a->set_name("reason");
    a->set_string_value(Utf8(unit.verdict_reason));
    if (unit.dropped > 0) {
      a = event->add_debug_annotations();
      a->set_name("dropped_events");
      a->set_uint_value(unit.dropped);
    }
    WritePacket(packet);
  }

  // Per SM, the number of its units running: +1 at each start, -1 at each end.
  void WriteCounters() {
    std::sort(spans_.begin(), spans_.end(), [](const UnitSpan& a, const UnitSpan& b) {
      return std::pair(a.sm, a.start_ns) < std::pair(b.sm, b.start_ns);
    });
    std::vector<std::pair<int64_t, int>> changes;
    for (size_t begin = 0; begin < spans_.size();) {
      const uint32_t sm = spans_[begin].sm;
      size_t end = begin;
      changes.clear();
      for (; end < spans_.size() && spans_[end].sm == sm; ++end) {
        changes.push_back({spans_[end].start_ns, +1});
        changes.push_back({spans_[end].end_ns, -1});
      }
      WriteCounterTrack(kSmCounterUuidBase + sm, changes);
      begin = end;
    }
  }

  // A counter track's values from its +1/-1 changes: one value per distinct time, on
  // sequence 1 with absolute clock-64 timestamps (a -1 and a +1 at one time net out).
  void WriteCounterTrack(uint64_t uuid, std::vector<std::pair<int64_t, int>>& changes) {
    std::sort(changes.begin(), changes.end());
    pb::TracePacket packet;
    packet.set_trusted_packet_sequence_id(kPerfettoTrackSequence);
    pb::TrackEvent* event = packet.mutable_track_event();
    event->set_type(pb::TrackEvent::TYPE_COUNTER);
    event->set_track_uuid(uuid);
    int64_t value = 0;
    for (size_t i = 0; i < changes.size();) {
      const int64_t t = changes[i].first;
      for (; i < changes.size() && changes[i].first == t; ++i) value += changes[i].second;
      packet.set_timestamp(static_cast<uint64_t>(t));
      event->set_counter_value(value);
      WritePacket(packet);
    }
  }

  llvm::raw_ostream& os_;
  std::vector<uint8_t> buffer_;  // kBufferBytes + kSlopBytes
  size_t used_ = 0;
  State state_ = State::kNew;
  const TraceLayout* layout_ = nullptr;
  const char* unit_kind_ = "";
  int64_t origin_ns_ = 0;
  uint64_t units_per_block_ = 1;
  int64_t boottime_offset_ = 0;
  bool anchored_ = false;
  bool no_record_declared_ = false;
  std::vector<std::string> begin_event_;        // by site: encoded TrackEvent
  std::vector<std::string> first_begin_event_;  // by site: the same with annotations
  std::vector<std::string> interned_name_;      // by site: encoded interned_data field
  std::vector<std::string> begin_suffix_;       // by site: see UnitEventSuffix
  std::vector<std::string> first_begin_suffix_;
  std::string end_suffix_;
  std::vector<uint64_t> site_seen_;             // generation that interned the site's name
  pb::TracePacket unit_start_;                  // reused: a unit's state-clearing packet
  pb::TracePacket unit_track_;                  // reused: a unit's track descriptor
  uint64_t generation_ = 0;                     // counts units with events
  int64_t last_ns_ = 0;                         // previous event of the current unit
  std::vector<Op> ops_;                         // the current unit's events
  std::vector<std::pair<int64_t, uint32_t>> open_;  // open slices: end time, index
  // Hand-offs (trace v2) of the current unit: its instants and async spans merged into
  // ops_, the flows attached to ops, and scratch.
  std::vector<Op> extra_ops_;
  std::vector<Op> merged_ops_;
  std::vector<OpFlow> op_flows_;
  std::vector<uint32_t> slice_end_op_, instant_op_, async_begin_op_, async_end_op_;
  std::vector<std::pair<uint32_t, uint32_t>> async_begins_, async_ends_;  // (event, span)
  std::vector<BarrierCache> barrier_cache_;
  BarrierCache scratch_barrier_;
  std::vector<std::string> ring_names_;
  std::vector<std::vector<std::pair<int64_t, int>>> ring_changes_;  // by ring, scratch
  pb::TracePacket handoff_packet_;              // reused: an event with flows or on a lane
  pb::TracePacket interned_scratch_;            // reused: a site's interned name, parsed
  // Stage rings of the block being written: per (barrier, phase) its span; the rings'
  // counter tracks declared so far.
  bool ring_block_seen_ = false;
  uint32_t ring_block_ = 0;
  uint32_t ring_block_sm_ = 0;
  Dim3 ring_block_index_;
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, PhaseSpan> phases_;
  std::vector<bool> sm_declared_;               // by SM id
  std::vector<UnitSpan> spans_;
  uint64_t packets_ = 0;
};

PerfettoWriter::PerfettoWriter(llvm::raw_ostream& os) : impl_(std::make_unique<Impl>(os)) {}
PerfettoWriter::~PerfettoWriter() = default;

absl::Status PerfettoWriter::Begin(const TraceLayout& layout, int64_t origin_ns) {
  return impl_->Begin(layout, origin_ns);
}
absl::Status PerfettoWriter::AddUnit(const UnitTimeline& unit) { return impl_->AddUnit(unit); }
absl::Status PerfettoWriter::Begin(const TraceBegin& begin) {
  if (begin.layout == nullptr) return absl::InvalidArgumentError("TraceBegin without a layout");
  return impl_->Begin(*begin.layout, begin.origin_ns);
}
absl::Status PerfettoWriter::AddUnit(const UnitView& unit) {
  if (unit.timeline == nullptr) return absl::InvalidArgumentError("UnitView without a timeline");
  return impl_->AddUnit(*unit.timeline);
}
absl::Status PerfettoWriter::End(const TraceEnd& /*end*/) { return impl_->End(); }
absl::Status PerfettoWriter::End() { return impl_->End(); }
uint64_t PerfettoWriter::packets() const { return impl_->packets(); }

absl::Status WritePerfettoTraceFile(const Timeline& timeline, absl::string_view path) {
  return WriteFileAtomically(
      path,
      [&](llvm::raw_ostream& os) -> absl::Status {
        os.SetBufferSize(size_t{1} << 20);  // as the Chrome trace file shell: few large writes
        PerfettoWriter writer(os);
        RETURN_IF_ERROR(writer.Begin(timeline.layout, timeline.origin_ns));
        for (const UnitTimeline& unit : timeline.units) RETURN_IF_ERROR(writer.AddUnit(unit));
        return writer.End();
      },
      {.role = "Perfetto trace"});
}

}  // namespace warptrace
