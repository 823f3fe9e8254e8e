#include "profiler/outputs/perfetto/perfetto_writer.h"

#include <algorithm>
#include <cstdint>
#include <limits>
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
#include "profiler/outputs/perfetto/packet_writer.h"
#include "profiler/outputs/perfetto/perfetto_ids.h"
#include "profiler/outputs/perfetto/perfetto_trace.pb.h"
#include "profiler/outputs/perfetto/stage_rings.h"
#include "profiler/outputs/perfetto/unit_ops.h"
#include "profiler/timeline/timeline_check.h"

namespace warptrace {
namespace {

using namespace ::warptrace::perfetto_internal;  // NOLINT: the writer's own parts

std::string DimString(const Dim3& d) { return absl::StrFormat("(%d,%d,%d)", d.x, d.y, d.z); }

struct UnitSpan {
  uint32_t sm;
  int64_t start_ns;
  int64_t end_ns;
};

void AddClock(pb::ClockSnapshot& snapshot, uint32_t id, int64_t timestamp, bool incremental) {
  pb::ClockSnapshot::Clock* clock = snapshot.add_clocks();
  clock->set_clock_id(id);
  clock->set_timestamp(static_cast<uint64_t>(timestamp));
  if (incremental) clock->set_is_incremental(true);
}

}  // namespace

// Tracks, slices, verdicts and the SM counters; the byte level is PacketWriter's, the event
// order UnitOps', the stage-ring counters StageRings'.
class PerfettoWriter::Impl {
 public:
  Impl(llvm::raw_ostream& os, const PerfettoWriterOptions& options)
      : out_(os, options.compress, options.threads > 1 ? options.threads - 1 : 0,
             options.on_deflate_queued) {}

  absl::Status Begin(const TraceLayout& layout, int64_t origin_ns) {
    if (state_ != State::kNew) return absl::FailedPreconditionError("PerfettoWriter::Begin twice");
    state_ = State::kUnits;
    layout_ = &layout;
    origin_ns_ = origin_ns;
    units_per_block_ = std::max<uint64_t>(UnitsPerBlock(layout), 1);
    unit_kind_ = UnitKindName(layout.unit.kind);
    checker_.emplace(layout, origin_ns, units_per_block_);
    rings_.emplace(layout, origin_ns, units_per_block_);
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
    out_.WritePacket(packet);

    pb::TrackDescriptor root;
    root.set_uuid(kRootUuid);
    root.set_name(ValidUtf8(absl::StrCat(layout.kernel_name, " on ", layout.device_name)));
    root.set_description(ValidUtf8(absl::StrFormat(
        "warptrace: kernel %s, grid %s, block %s, trace unit %s, capacity %d events per unit%s",
        layout.kernel_name, DimString(layout.grid), DimString(layout.block), unit_kind_,
        layout.capacity,
        anchored_ ? absl::StrFormat("; host-time anchor exact to %d ns",
                                    anchor.uncertainty_ns)
                  : std::string("; no host-time anchor: time 0 is the first unit's start"))));
    root.set_child_ordering(pb::TrackDescriptor::EXPLICIT);
    out_.WriteDescriptor(root);
    return absl::OkStatus();
  }

  absl::Status AddUnit(const UnitTimeline& unit) {
    if (state_ != State::kUnits) {
      return absl::FailedPreconditionError(state_ == State::kNew
                                               ? "PerfettoWriter::AddUnit before Begin"
                                               : "PerfettoWriter::AddUnit after End");
    }
    ops_.Start(unit);
    RETURN_IF_ERROR(checker_->Next(unit, ops_));
    RETURN_IF_ERROR(ops_.AddHandoffs(unit, *layout_));
    const uint64_t track = kUnitUuidBase + unit.record_index;
    rings_->StartUnit(unit, out_);
    WriteUnitTrack(unit, ParentTrack(unit), track);
    WriteAsyncTracks(unit, track);
    rings_->Collect(unit);
    if (unit.has_record) {
      const int64_t start = std::max(unit.start_ns, origin_ns_);
      spans_.push_back({unit.sm_id, start, std::max(start, unit.end_ns)});
    }
    if (ops_.ops().empty() && unit.verdict == Verdict::kComplete) return absl::OkStatus();
    // Every unit's snapshot declares clock 64 at the trace origin, not at the unit's start:
    // Perfetto's trace processor rejects a snapshot whose CLOCK_BOOTTIME goes back from
    // the previous one of the same clocks (util/clock_synchronizer.cc, the trace clock must
    // be monotonic), and units come in block order, whose starts are not in time order. The
    // unit's first delta is then from the origin (a few bytes more, once per unit). The
    // checker made sure that no event precedes the origin.
    StartUnitSequence(origin_ns_, track);
    if (ops_.flows().empty() && unit.instants.empty() && unit.async_spans.empty()) {
      WriteSliceOps(unit);
    } else {
      WriteHandoffOps(unit);
    }
    if (unit.verdict != Verdict::kComplete) WriteVerdict(unit);
    return absl::OkStatus();
  }

  absl::Status End() {
    if (state_ == State::kDone) return absl::FailedPreconditionError("PerfettoWriter::End twice");
    if (state_ == State::kNew) {
      return absl::FailedPreconditionError("PerfettoWriter::End before Begin");
    }
    state_ = State::kDone;
    rings_->Flush(out_);
    WriteCounters();
    out_.Flush();
    return absl::OkStatus();
  }

  uint64_t packets() const { return out_.packets(); }
  bool HelpDeflate() { return out_.Help(); }
  bool DeflatePending() const { return out_.HasPending(); }

 private:
  enum class State { kNew, kUnits, kDone };

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
      a->set_string_value(ValidUtf8(site.origin));
      first_begin_event_[i] = event.SerializeAsString();
      pb::TracePacket packet;
      pb::EventName* name = packet.mutable_interned_data()->add_event_names();
      name->set_iid(i + 1);
      name->set_name(ValidUtf8(site.name));
      interned_name_[i] = packet.SerializeAsString();
      begin_suffix_[i] = PacketWriter::UnitEventSuffix(begin_event_[i], "");
      first_begin_suffix_[i] = PacketWriter::UnitEventSuffix(first_begin_event_[i], interned_name_[i]);
    }
    pb::TrackEvent end;
    end.set_type(pb::TrackEvent::TYPE_SLICE_END);
    end_suffix_ = PacketWriter::UnitEventSuffix(end.SerializeAsString(), "");
    // What sequence 2's state starts with: the categories and annotation names.
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
    unit_start_.set_first_packet_on_sequence(true);
    unit_start_.mutable_trace_packet_defaults()->set_timestamp_clock_id(kPerfettoGpuClockId);
    pb::ClockSnapshot* snapshot = unit_start_.mutable_clock_snapshot();
    AddClock(*snapshot, kPerfettoGpuClockId, 0, true);
    AddClock(*snapshot, pb::BUILTIN_CLOCK_BOOTTIME, 0, false);
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
        out_.WriteDescriptor(group);
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
      out_.WriteDescriptor(sm);
      pb::TrackDescriptor counter;
      counter.set_uuid(kSmCounterUuidBase + unit.sm_id);
      counter.set_parent_uuid(uuid);
      counter.set_name("active units");
      counter.set_description("trace units of this SM running at this time");
      counter.set_sibling_order_rank(-1);  // above the units
      counter.mutable_counter()->set_unit(pb::CounterDescriptor::UNIT_COUNT);
      out_.WriteDescriptor(counter);
    }
    return uuid;
  }

  // "block (3,0,0) warpgroup 1 consumer [truncated]" (the role when the layout has one),
  // ranked like the Chrome trace's sort index.
  void WriteUnitTrack(const UnitTimeline& unit, uint64_t parent, uint64_t track) {
    const uint64_t rank = uint64_t{unit.block_linear} * units_per_block_ + unit.unit_index;
    std::string& name = *unit_track_.mutable_track_descriptor()->mutable_name();
    name = UnitTrackName(*layout_, unit.block_index, unit.unit_index);
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
      absl::StrAppend(&description, ": ", ValidUtf8(unit.verdict_reason));
    }
    d.set_sibling_order_rank(
        static_cast<int32_t>(std::min<uint64_t>(rank, std::numeric_limits<int32_t>::max())));
    unit_track_.set_trusted_packet_sequence_id(kPerfettoTrackSequence);
    out_.WritePacket(unit_track_);
  }

  // The hot path: a unit with slices only.
  void WriteSliceOps(const UnitTimeline& unit) {
    for (const Op& op : ops_.ops()) {
      const uint64_t delta = static_cast<uint64_t>(op.time - last_ns_);
      last_ns_ = op.time;
      if (op.kind == OpKind::kEnd) {
        out_.WriteUnitEvent(delta, end_suffix_);
      } else {
        WriteBegin(delta, unit.slices[op.index].site, op.repaired);
      }
    }
  }

  // ops_ of a unit with hand-offs: events that carry flows, instants and async spans take
  // the slow path.
  void WriteHandoffOps(const UnitTimeline& unit) {
    const std::vector<Op>& ops = ops_.ops();
    const std::vector<OpFlow>& op_flows = ops_.flows();
    size_t flow = 0;  // sorted by op
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const uint64_t delta = static_cast<uint64_t>(op.time - last_ns_);
      last_ns_ = op.time;
      size_t flows_end = flow;
      while (flows_end < op_flows.size() && op_flows[flows_end].op == i) ++flows_end;
      if (flows_end == flow && op.kind == OpKind::kEnd) {
        out_.WriteUnitEvent(delta, end_suffix_);
      } else if (flows_end == flow && op.kind == OpKind::kBegin) {
        WriteBegin(delta, unit.slices[op.index].site, op.repaired);
      } else {
        WriteHandoffEvent(unit, delta, op,
                          absl::MakeConstSpan(op_flows).subspan(flow, flows_end - flow));
      }
      flow = flows_end;
    }
  }

  // The unit's async lanes, child tracks of its track ("async 0", ...).
  void WriteAsyncTracks(const UnitTimeline& unit, uint64_t track) {
    for (uint32_t lane = 0; lane < unit.async_lanes; ++lane) {
      pb::TrackDescriptor d;
      d.set_uuid(kAsyncUuidBase + unit.record_index * kLanesPerUnit + lane);
      d.set_parent_uuid(track);
      d.set_name(absl::StrCat("async ", lane));
      d.set_description("async copies of this trace unit, from issue to observed completion");
      d.set_sibling_order_rank(static_cast<int32_t>(lane));
      out_.WriteDescriptor(d);
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
      event->set_track_uuid(kAsyncUuidBase + unit.record_index * kLanesPerUnit +
                            unit.async_spans[op.index].lane);
    }
    const uint32_t copy_site =
        op.kind == OpKind::kAsyncBegin ? unit.async_spans[op.index].site : 0;
    if (op.kind == OpKind::kAsyncBegin && copy_site < layout_->sites.size()) {
      // What the copy is (SiteInfo::copy_engine, copy_bytes), on its slice.
      const SiteInfo& info = layout_->sites[copy_site];
      if (info.copy_engine != CopyEngine::kNone) {
        pb::DebugAnnotation* a = event->add_debug_annotations();
        a->set_name("engine");
        a->set_string_value(CopyEngineName(info.copy_engine));
        a = event->add_debug_annotations();
        a->set_name("bytes");
        a->set_uint_value(info.copy_bytes);
      }
    }
    if (op.kind == OpKind::kInstant) {
      const Instant& in = unit.instants[op.index];
      pb::DebugAnnotation* a = event->add_debug_annotations();
      a->set_name_iid(kBarrierAnnotationIid);
      a->set_string_value(rings_->BarrierOf(in.barrier).name);
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
    out_.WritePacket(packet);
  }

  const pb::InternedData& InternedName(uint32_t site) {
    interned_scratch_.ParseFromString(interned_name_[site]);
    return interned_scratch_.interned_data();
  }

  // Starts a unit on sequence 2: its defaults (its track, clock 64) and clock 64 incremental
  // from `base` (always the origin, see AddUnit). The first unit also clears the sequence's
  // state and interns the categories and annotation names; later units keep that state
  // (TracePacketDefaults may change without a clear: the trace processor keeps the interned
  // data), so names are interned and sites annotated once per trace, not once per unit.
  void StartUnitSequence(int64_t base, uint64_t track) {
    pb::TracePacket& packet = generation_ == 0 ? unit_start_ : unit_next_;
    generation_ = 1;
    if (!unit_next_.has_trusted_packet_sequence_id()) {
      unit_next_.set_trusted_packet_sequence_id(kPerfettoUnitSequence);
      *unit_next_.mutable_trace_packet_defaults() = unit_start_.trace_packet_defaults();
      *unit_next_.mutable_clock_snapshot() = unit_start_.clock_snapshot();
    }
    packet.mutable_trace_packet_defaults()->mutable_track_event_defaults()->set_track_uuid(track);
    pb::ClockSnapshot* snapshot = packet.mutable_clock_snapshot();
    snapshot->mutable_clocks(0)->set_timestamp(static_cast<uint64_t>(base));
    snapshot->mutable_clocks(1)->set_timestamp(static_cast<uint64_t>(base + boottime_offset_));
    out_.WritePacket(packet);
    last_ns_ = base;
  }

  void WriteBegin(uint64_t delta, uint32_t site, bool repaired) {
    const bool first = site_seen_[site] != generation_;
    if (!repaired) {
      site_seen_[site] = generation_;
      out_.WriteUnitEvent(delta, first ? first_begin_suffix_[site] : begin_suffix_[site]);
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
    out_.WritePacket(packet);
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
    a->set_string_value(ValidUtf8(unit.verdict_reason));
    if (unit.dropped > 0) {
      a = event->add_debug_annotations();
      a->set_name("dropped_events");
      a->set_uint_value(unit.dropped);
    }
    out_.WritePacket(packet);
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
      out_.WriteCounterTrack(kSmCounterUuidBase + sm, changes);
      begin = end;
    }
  }

  PacketWriter out_;
  State state_ = State::kNew;
  const TraceLayout* layout_ = nullptr;
  const char* unit_kind_ = "";
  int64_t origin_ns_ = 0;
  uint64_t units_per_block_ = 1;
  int64_t boottime_offset_ = 0;
  bool anchored_ = false;
  bool no_record_declared_ = false;
  std::optional<TimelineChecker> checker_;     // from Begin
  std::optional<StageRings> rings_;            // from Begin
  UnitOps ops_;                                // the current unit's events
  std::vector<std::string> begin_event_;        // by site: encoded TrackEvent
  std::vector<std::string> first_begin_event_;  // by site: the same with annotations
  std::vector<std::string> interned_name_;      // by site: encoded interned_data field
  std::vector<std::string> begin_suffix_;       // by site: see UnitEventSuffix
  std::vector<std::string> first_begin_suffix_;
  std::string end_suffix_;
  std::vector<uint64_t> site_seen_;             // generation that interned the site's name
  pb::TracePacket unit_start_;                  // the first unit's state-clearing packet
  pb::TracePacket unit_next_;                   // reused: a later unit's defaults and clock
  pb::TracePacket unit_track_;                  // reused: a unit's track descriptor
  pb::TracePacket handoff_packet_;              // reused: an event with flows or on a lane
  pb::TracePacket interned_scratch_;            // reused: a site's interned name, parsed
  uint64_t generation_ = 0;                     // 1 once sequence 2 is started
  int64_t last_ns_ = 0;                         // previous event of the current unit
  std::vector<bool> sm_declared_;               // by SM id
  std::vector<UnitSpan> spans_;
};

PerfettoWriter::PerfettoWriter(llvm::raw_ostream& os, const PerfettoWriterOptions& options)
    : impl_(std::make_unique<Impl>(os, options)) {}
PerfettoWriter::~PerfettoWriter() = default;

absl::Status PerfettoWriter::Begin(const TraceLayout& layout, int64_t origin_ns) {
  return impl_->Begin(layout, origin_ns);
}
absl::Status PerfettoWriter::AddUnit(const UnitTimeline& unit) { return impl_->AddUnit(unit); }
absl::Status PerfettoWriter::End() { return impl_->End(); }
uint64_t PerfettoWriter::packets() const { return impl_->packets(); }
bool PerfettoWriter::HelpDeflate() { return impl_->HelpDeflate(); }
bool PerfettoWriter::DeflatePending() const { return impl_->DeflatePending(); }

absl::Status WritePerfettoTrace(const Timeline& timeline, llvm::raw_ostream& os) {
  PerfettoWriter writer(os);
  RETURN_IF_ERROR(writer.Begin(timeline.layout, timeline.origin_ns));
  for (const UnitTimeline& unit : timeline.units) RETURN_IF_ERROR(writer.AddUnit(unit));
  return writer.End();
}

absl::Status WritePerfettoTraceFile(const Timeline& timeline, absl::string_view path) {
  return WriteLargeFileAtomically(
      path, [&](llvm::raw_ostream& os) { return WritePerfettoTrace(timeline, os); },
      {.role = "Perfetto trace"});
}

}  // namespace warptrace
