#include "profiler/outputs/perfetto/batch_formatter.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "profiler/outputs/perfetto/perfetto_ids.h"

namespace warptrace {
namespace perfetto_internal {

namespace {

void AddClock(pb::ClockSnapshot& snapshot, uint32_t id, int64_t timestamp, bool incremental) {
  pb::ClockSnapshot::Clock* clock = snapshot.add_clocks();
  clock->set_clock_id(id);
  clock->set_timestamp(static_cast<uint64_t>(timestamp));
  if (incremental) clock->set_is_incremental(true);
}

}  // namespace

UnitTemplates::UnitTemplates(const TraceLayout& layout_in, int64_t origin_ns_in,
                             int64_t boottime_offset_in)
    : layout(layout_in),
      origin_ns(origin_ns_in),
      boottime_offset(boottime_offset_in),
      units_per_block(std::max<uint64_t>(UnitsPerBlock(layout_in), 1)) {
  const size_t n = layout.sites.size();
  begin_event.resize(n);
  first_begin_event.resize(n);
  interned_name.resize(n);
  begin_suffix.resize(n);
  first_begin_suffix.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const SiteInfo& site = layout.sites[i];
    pb::TrackEvent event;
    event.set_type(pb::TrackEvent::TYPE_SLICE_BEGIN);
    event.set_name_iid(i + 1);
    event.add_category_iids(static_cast<uint64_t>(site.kind) + 1);
    begin_event[i] = event.SerializeAsString();
    pb::DebugAnnotation* a = event.add_debug_annotations();
    a->set_name_iid(kSiteAnnotationIid);
    a->set_uint_value(i);
    a = event.add_debug_annotations();
    a->set_name_iid(kKindAnnotationIid);
    a->set_string_value(SiteKindName(site.kind));
    a = event.add_debug_annotations();
    a->set_name_iid(kOriginAnnotationIid);
    a->set_string_value(ValidUtf8(site.origin));
    first_begin_event[i] = event.SerializeAsString();
    pb::TracePacket packet;
    pb::EventName* name = packet.mutable_interned_data()->add_event_names();
    name->set_iid(i + 1);
    name->set_name(ValidUtf8(site.name));
    interned_name[i] = packet.SerializeAsString();
    begin_suffix[i] = PacketWriter::UnitEventSuffix(begin_event[i], "");
    first_begin_suffix[i] = PacketWriter::UnitEventSuffix(first_begin_event[i], interned_name[i]);
  }
  pb::TrackEvent end;
  end.set_type(pb::TrackEvent::TYPE_SLICE_END);
  end_suffix = PacketWriter::UnitEventSuffix(end.SerializeAsString(), "");

  // Sequence 2's state after a clear: the categories and annotation names.
  pb::InternedData* interned = batch_first.mutable_interned_data();
  for (const EnumName<SiteKind>& named : kSiteKinds.names) {
    const SiteKind kind = named.value;
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
      std::any_of(layout.sites.begin(), layout.sites.end(),
                  [](const SiteInfo& site) { return site.kind == SiteKind::kBarrierArrive; });
  if (arrivals) {
    for (auto [iid, name] : {std::pair<uint64_t, const char*>{kBarrierAnnotationIid, "barrier"},
                             {kPhaseAnnotationIid, "phase"}}) {
      pb::DebugAnnotationName* n = interned->add_debug_annotation_names();
      n->set_iid(iid);
      n->set_name(name);
    }
  }
  unit_next.set_trusted_packet_sequence_id(kPerfettoUnitSequence);
  unit_next.mutable_trace_packet_defaults()->set_timestamp_clock_id(kPerfettoGpuClockId);
  // Every unit's snapshot declares clock 64 at the trace origin, not at the unit's start:
  // Perfetto's trace processor rejects a snapshot whose CLOCK_BOOTTIME goes back from the
  // previous one of the same clocks (util/clock_synchronizer.cc, the trace clock must be
  // monotonic), and units come in block order, whose starts are not in time order. A
  // unit's first delta is then from the origin (a few bytes more, once per unit);
  // TimelineChecker makes sure that no event precedes the origin.
  pb::ClockSnapshot* snapshot = unit_next.mutable_clock_snapshot();
  AddClock(*snapshot, kPerfettoGpuClockId, origin_ns, true);
  AddClock(*snapshot, pb::BUILTIN_CLOCK_BOOTTIME, origin_ns + boottime_offset, false);
  batch_first.MergeFrom(unit_next);
  batch_first.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  trace_first = batch_first;
  trace_first.set_first_packet_on_sequence(true);
}

BatchFormatter::BatchFormatter(const UnitTemplates& templates, bool compress)
    : t_(templates),
      os_(bytes_),
      out_(os_, compress),
      checker_(templates.layout, templates.origin_ns, templates.units_per_block),
      site_seen_(templates.layout.sites.size(), 0),
      next_packet_(templates.unit_next) {}

void BatchFormatter::Start(uint64_t index, const TimelineChecker::Position* previous) {
  batch_ = index;
  sequence_started_ = false;
  ++generation_;
  bytes_.clear();
  spans_.clear();
  packets_at_start_ = out_.packets();
  checker_.ResumeAfter(previous);
  rings_.emplace(t_.layout, t_.origin_ns, t_.units_per_block);
  first_packet_ = index == 0 ? t_.trace_first : t_.batch_first;
}

absl::Status BatchFormatter::AddUnit(const UnitTimeline& unit, uint8_t declare) {
  ops_.Start(unit);
  RETURN_IF_ERROR(checker_.Next(unit, ops_));
  RETURN_IF_ERROR(ops_.AddHandoffs(unit, t_.layout));
  const uint64_t track = kUnitUuidBase + unit.record_index;
  rings_->StartUnit(unit, out_);
  DeclareParents(unit, declare);
  WriteUnitTrack(unit, track);
  WriteAsyncTracks(unit, track);
  rings_->Collect(unit);
  if (unit.has_record) {
    const int64_t start = std::max(unit.start_ns, t_.origin_ns);
    spans_.push_back({unit.sm_id, start, std::max(start, unit.end_ns)});
  }
  if (ops_.ops().empty() && unit.verdict == Verdict::kComplete) return absl::OkStatus();
  StartUnitSequence(track);
  if (ops_.flows().empty() && unit.instants.empty() && unit.async_spans.empty()) {
    WriteSliceOps(unit);
  } else {
    WriteHandoffOps(unit);
  }
  if (unit.verdict != Verdict::kComplete) WriteVerdict(unit);
  return absl::OkStatus();
}

void BatchFormatter::Finish() {
  rings_->Flush(out_);
  out_.Flush();
}

uint64_t ClusterTrackId(const TraceLayout& layout, const UnitTimeline& unit) {
  const Dim3& shape = layout.cluster;
  if (shape.Count() <= 1) return 0;
  const ClusterPosition p = ClusterOfBlock(layout, unit.block_index);
  const uint64_t clusters_x = layout.grid.x / shape.x, clusters_y = layout.grid.y / shape.y;
  return p.cluster.x + clusters_x * (p.cluster.y + clusters_y * p.cluster.z);
}

// With clusters: the unit's cluster group ("cluster (1,0,0)") and its CTA's track ("CTA rank
// 1: block (3,0,0)"), when the writer says this unit is the first under them.
void BatchFormatter::DeclareClusterParents(const UnitTimeline& unit, uint8_t declare) {
  const uint64_t cluster = ClusterTrackId(t_.layout, unit);
  const ClusterPosition p = ClusterOfBlock(t_.layout, unit.block_index);
  if ((declare & kDeclareCluster) != 0) {
    pb::TrackDescriptor group;
    group.set_uuid(kClusterUuidBase + cluster);
    group.set_parent_uuid(kRootUuid);
    group.set_name(absl::StrCat("cluster (", p.cluster.x, ",", p.cluster.y, ",", p.cluster.z,
                                ")"));
    group.set_description(absl::StrCat("thread-block cluster ", cluster, " of ",
                                       t_.layout.cluster.Count(), " CTAs"));
    group.set_child_ordering(pb::TrackDescriptor::EXPLICIT);
    group.set_sibling_order_rank(static_cast<int32_t>(
        std::min<uint64_t>(cluster, std::numeric_limits<int32_t>::max() - 1)));
    out_.WriteDescriptor(group);
  }
  if ((declare & kDeclareCta) != 0) {
    pb::TrackDescriptor cta;
    cta.set_uuid(kCtaUuidBase + unit.block_linear);
    cta.set_parent_uuid(kClusterUuidBase + cluster);
    cta.set_name(absl::StrCat("CTA rank ", p.rank, ": block (", unit.block_index.x, ",",
                              unit.block_index.y, ",", unit.block_index.z, ")"));
    cta.set_description(absl::StrCat("linear block ", unit.block_linear));
    cta.set_child_ordering(pb::TrackDescriptor::EXPLICIT);
    cta.set_sibling_order_rank(static_cast<int32_t>(p.rank));
    out_.WriteDescriptor(cta);
  }
}

// The unit's SM track and its counter track, or the "no record" group, when the writer says
// this unit is the first under it.
void BatchFormatter::DeclareParents(const UnitTimeline& unit, uint8_t declare) {
  DeclareClusterParents(unit, declare);
  if ((declare & kDeclareNoRecord) != 0) {
    pb::TrackDescriptor group;
    group.set_uuid(kNoRecordUuid);
    group.set_parent_uuid(kRootUuid);
    group.set_name("no record");
    group.set_description("trace units that wrote no usable record: their SM is unknown");
    group.set_child_ordering(pb::TrackDescriptor::EXPLICIT);
    group.set_sibling_order_rank(std::numeric_limits<int32_t>::max());
    out_.WriteDescriptor(group);
  }
  if ((declare & kDeclareSm) != 0) {
    pb::TrackDescriptor sm;
    sm.set_uuid(kSmUuidBase + unit.sm_id);
    sm.set_parent_uuid(kRootUuid);
    sm.set_name(absl::StrCat("SM ", unit.sm_id));
    sm.set_child_ordering(pb::TrackDescriptor::EXPLICIT);
    sm.set_sibling_order_rank(static_cast<int32_t>(
        std::min<uint32_t>(unit.sm_id, std::numeric_limits<int32_t>::max() - 1)));
    out_.WriteDescriptor(sm);
    pb::TrackDescriptor counter;
    counter.set_uuid(kSmCounterUuidBase + unit.sm_id);
    counter.set_parent_uuid(kSmUuidBase + unit.sm_id);
    counter.set_name("active units");
    counter.set_description("trace units of this SM running at this time");
    counter.set_sibling_order_rank(-1);  // above the units
    counter.mutable_counter()->set_unit(pb::CounterDescriptor::UNIT_COUNT);
    out_.WriteDescriptor(counter);
  }
}

// "block (3,0,0) warpgroup 1 consumer [truncated]" (the role when the layout has one),
// ranked like the Chrome trace's sort index, under its SM (or "no record").
void BatchFormatter::WriteUnitTrack(const UnitTimeline& unit, uint64_t track) {
  const uint64_t rank = uint64_t{unit.block_linear} * t_.units_per_block + unit.unit_index;
  pb::TrackDescriptor& d = *unit_track_.mutable_track_descriptor();
  std::string& name = *d.mutable_name();
  name = UnitTrackName(t_.layout, unit.block_index, unit.unit_index);
  if (unit.verdict != Verdict::kComplete) {
    absl::StrAppend(&name, " [", VerdictName(unit.verdict), "]");
  }
  d.set_uuid(track);
  // Under its CTA (with clusters) or its SM; "no record" without a usable record.
  d.set_parent_uuid(!unit.has_record              ? kNoRecordUuid
                    : t_.layout.cluster.Count() > 1 ? kCtaUuidBase + unit.block_linear
                                                    : kSmUuidBase + unit.sm_id);
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

// The unit's async lanes, child tracks of its track ("async 0", ...).
void BatchFormatter::WriteAsyncTracks(const UnitTimeline& unit, uint64_t track) {
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

// Starts a unit on sequence 2: its defaults (its track, clock 64) and clock 64 incremental
// from the origin (UnitTemplates). The batch's first unit also clears the sequence's state
// and interns the categories and annotation names; later units of the batch keep that state
// (TracePacketDefaults may change without a clear: the trace processor keeps the interned
// data), so names are interned and sites annotated once per batch, not once per unit.
void BatchFormatter::StartUnitSequence(uint64_t track) {
  pb::TracePacket& packet = sequence_started_ ? next_packet_ : first_packet_;
  sequence_started_ = true;
  packet.mutable_trace_packet_defaults()->mutable_track_event_defaults()->set_track_uuid(track);
  out_.WritePacket(packet);
  last_ns_ = t_.origin_ns;
}

// The hot path: a unit with slices only.
void BatchFormatter::WriteSliceOps(const UnitTimeline& unit) {
  for (const Op& op : ops_.ops()) {
    const uint64_t delta = static_cast<uint64_t>(op.time - last_ns_);
    last_ns_ = op.time;
    if (op.kind == OpKind::kEnd) {
      out_.WriteUnitEvent(delta, t_.end_suffix);
    } else {
      WriteBegin(delta, unit.slices[op.index].site, op.repaired);
    }
  }
}

// ops_ of a unit with hand-offs: events that carry flows, instants and async spans take the
// slow path.
void BatchFormatter::WriteHandoffOps(const UnitTimeline& unit) {
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
      out_.WriteUnitEvent(delta, t_.end_suffix);
    } else if (flows_end == flow && op.kind == OpKind::kBegin) {
      WriteBegin(delta, unit.slices[op.index].site, op.repaired);
    } else {
      WriteHandoffEvent(unit, delta, op,
                        absl::MakeConstSpan(op_flows).subspan(flow, flows_end - flow));
    }
    flow = flows_end;
  }
}

// An event the hot path does not write: an instant, an async span's begin or end (on its
// lane), or a slice begin/end that flows start or end at. One message, built by protobuf.
void BatchFormatter::WriteHandoffEvent(const UnitTimeline& unit, uint64_t delta, const Op& op,
                                       absl::Span<const OpFlow> flows) {
  // Reused without TracePacket::Clear, which would free the TrackEvent (a oneof member) and
  // its repeated fields: a malloc and free per event.
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
    event->ParseFromString(first ? t_.first_begin_event[site] : t_.begin_event[site]);
    if (first) packet.mutable_interned_data()->MergeFrom(InternedName(site));
  }
  event->set_type(op.kind == OpKind::kInstant ? pb::TrackEvent::TYPE_INSTANT
                  : opens                     ? pb::TrackEvent::TYPE_SLICE_BEGIN
                                              : pb::TrackEvent::TYPE_SLICE_END);
  if (op.kind == OpKind::kAsyncBegin || op.kind == OpKind::kAsyncEnd) {
    event->set_track_uuid(kAsyncUuidBase + unit.record_index * kLanesPerUnit +
                          unit.async_spans[op.index].lane);
  }
  const uint32_t copy_site = op.kind == OpKind::kAsyncBegin ? unit.async_spans[op.index].site : 0;
  if (op.kind == OpKind::kAsyncBegin && copy_site < t_.layout.sites.size()) {
    // What the copy is (SiteInfo::copy_engine, copy_bytes), on its slice.
    const SiteInfo& info = t_.layout.sites[copy_site];
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

const pb::InternedData& BatchFormatter::InternedName(uint32_t site) {
  interned_scratch_.ParseFromString(t_.interned_name[site]);
  return interned_scratch_.interned_data();
}

void BatchFormatter::WriteBegin(uint64_t delta, uint32_t site, bool repaired) {
  const bool first = site_seen_[site] != generation_;
  site_seen_[site] = generation_;
  if (!repaired) {
    out_.WriteUnitEvent(delta, first ? t_.first_begin_suffix[site] : t_.begin_suffix[site]);
    return;
  }
  // Rare (--allow-truncated): a message of its own.
  pb::TracePacket packet;
  if (first) packet.ParseFromString(t_.interned_name[site]);
  packet.set_timestamp(delta);
  packet.set_trusted_packet_sequence_id(kPerfettoUnitSequence);
  pb::TrackEvent* event = packet.mutable_track_event();
  event->ParseFromString(first ? t_.first_begin_event[site] : t_.begin_event[site]);
  pb::DebugAnnotation* a = event->add_debug_annotations();
  a->set_name("repaired");
  a->set_bool_value(true);
  out_.WritePacket(packet);
}

void BatchFormatter::WriteVerdict(const UnitTimeline& unit) {
  const int64_t at = std::max(last_ns_, unit.has_record ? unit.end_ns : t_.origin_ns);
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

}  // namespace perfetto_internal
}  // namespace warptrace
