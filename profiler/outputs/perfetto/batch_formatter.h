// The Perfetto writer's per-thread part (perfetto_writer.h): a batch of consecutive trace
// units formatted into packets — the units' track descriptors, their events on sequence 2,
// verdicts and stage-ring counters — and deflated. Internal.
//
//   UnitTemplates templates(layout, origin_ns, boottime_offset);   // once, at Begin; shared
//   BatchFormatter formatter(templates, compress);                 // one per thread
//   formatter.Start(index, previous);                              // per batch
//   for (unit : batch) RETURN_IF_ERROR(formatter.AddUnit(unit, declare));
//   formatter.Finish();                                            // flushed into bytes()
//
// A batch is self-contained, so batches format on any thread and their bytes concatenate in
// batch order into the same trace whatever thread made which: its first unit with events
// clears sequence 2's incremental state and interns the categories and annotation names again
// (the trace's very first also marks first_packet_on_sequence); a site's name is interned,
// and its annotations given, at its first begin in the batch; stage-ring counters are per
// batch (perfetto_writer.h cuts batches at block ends). What depends on the units before a
// batch comes from the writer, which sees every unit in order: the unit the batch follows
// (for TimelineChecker's order rule) and, per unit, the SM track to declare.
//
// Errors: AddUnit's are the writer's (perfetto_writer.h): nothing of a rejected unit is
// written. Not thread-safe: one formatter per thread; UnitTemplates is read-only once made.
#ifndef WARPTRACE_PROFILER_OUTPUTS_PERFETTO_BATCH_FORMATTER_H_
#define WARPTRACE_PROFILER_OUTPUTS_PERFETTO_BATCH_FORMATTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "format/layout.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/outputs/perfetto/packet_writer.h"
#include "profiler/outputs/perfetto/perfetto_trace.pb.h"
#include "profiler/outputs/perfetto/stage_rings.h"
#include "profiler/outputs/perfetto/unit_ops.h"
#include "profiler/timeline/timeline_check.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {
namespace perfetto_internal {

// With clusters, the linear id of the unit's cluster in the grid of clusters (x fastest),
// which names its group track (kClusterUuidBase + id); 0 without clusters.
uint64_t ClusterTrackId(const TraceLayout& layout, const UnitTimeline& unit);

// What every batch shares, made once at Begin: the clocks, and per site the encoded
// TrackEvent of its slice begins (name and category interned), the same with the site's debug
// annotations for its first begin in a batch, and the InternedData field that interns its
// name. Serialized once by protobuf, copied per event.
struct UnitTemplates {
  // `layout` must outlive it. boottime = t + boottime_offset (perfetto_writer.h, clocks).
  UnitTemplates(const TraceLayout& layout, int64_t origin_ns, int64_t boottime_offset);

  const TraceLayout& layout;
  const int64_t origin_ns;
  const int64_t boottime_offset;
  const uint64_t units_per_block;
  std::vector<std::string> begin_event;        // by site: encoded TrackEvent
  std::vector<std::string> first_begin_event;  // by site: the same with annotations
  std::vector<std::string> interned_name;      // by site: encoded interned_data field
  std::vector<std::string> begin_suffix;       // by site: see PacketWriter::UnitEventSuffix
  std::vector<std::string> first_begin_suffix;
  std::string end_suffix;
  // A batch's first unit packet: clears sequence 2's state, interns the categories and
  // annotation names, sets the defaults (clock 64) and clock 64's incremental snapshot;
  // trace_first also marks first_packet_on_sequence. A later unit's: defaults and snapshot.
  pb::TracePacket trace_first;
  pb::TracePacket batch_first;
  pb::TracePacket unit_next;
};

// Tracks a unit's formatter declares before the unit's own (decided by the writer, which
// sees the units in order: a track is declared by the first unit under it).
enum DeclareFlags : uint8_t {
  kDeclareNone = 0,
  kDeclareSm = 1,        // the unit's SM track and its counter track
  kDeclareNoRecord = 2,  // the "no record" group
  kDeclareCta = 4,       // with clusters: the unit's CTA track
  kDeclareCluster = 8,   // with clusters: its cluster's group track
};

// Where a unit's SM-counter span goes (perfetto_writer.h, counters).
struct UnitSpan {
  uint32_t sm;
  int64_t start_ns;
  int64_t end_ns;
};

class BatchFormatter {
 public:
  BatchFormatter(const UnitTemplates& templates, bool compress);
  BatchFormatter(const BatchFormatter&) = delete;
  BatchFormatter& operator=(const BatchFormatter&) = delete;

  // Starts batch `index` (0 for the trace's first), whose first unit must follow the unit at
  // `previous` (null: none before it). Clears bytes(), spans() and packets().
  void Start(uint64_t index, const TimelineChecker::Position* previous);
  // Checks and writes one unit (see perfetto_writer.h for what is written and refused).
  absl::Status AddUnit(const UnitTimeline& unit, uint8_t declare);
  // Writes the batch's stage-ring counters and flushes its packets into bytes().
  void Finish();

  // The batch's bytes so far (whole compressed_packets packets once Finish returned).
  llvm::SmallVectorImpl<char>& bytes() { return bytes_; }
  // The SM-counter span of each of the batch's units with a record.
  std::vector<UnitSpan>& spans() { return spans_; }
  // Packets written in this batch.
  uint64_t packets() const { return out_.packets() - packets_at_start_; }

 private:
  void DeclareParents(const UnitTimeline& unit, uint8_t declare);
  void DeclareClusterParents(const UnitTimeline& unit, uint8_t declare);
  void WriteUnitTrack(const UnitTimeline& unit, uint64_t track);
  void WriteAsyncTracks(const UnitTimeline& unit, uint64_t track);
  void StartUnitSequence(uint64_t track);
  void WriteSliceOps(const UnitTimeline& unit);
  void WriteHandoffOps(const UnitTimeline& unit);
  void WriteHandoffEvent(const UnitTimeline& unit, uint64_t delta, const Op& op,
                         absl::Span<const OpFlow> flows);
  void WriteBegin(uint64_t delta, uint32_t site, bool repaired);
  void WriteVerdict(const UnitTimeline& unit);
  const pb::InternedData& InternedName(uint32_t site);

  const UnitTemplates& t_;
  llvm::SmallVector<char, 0> bytes_;
  llvm::raw_svector_ostream os_;  // appends to bytes_
  PacketWriter out_;
  TimelineChecker checker_;
  std::optional<StageRings> rings_;  // per batch
  UnitOps ops_;                      // the current unit's events
  uint64_t batch_ = 0;
  bool sequence_started_ = false;    // the batch's first unit packet was written
  uint64_t generation_ = 0;          // per batch: site_seen_ values of this batch
  std::vector<uint64_t> site_seen_;  // by site: the generation that interned its name
  int64_t last_ns_ = 0;              // previous event of the current unit
  uint64_t packets_at_start_ = 0;
  std::vector<UnitSpan> spans_;
  pb::TracePacket unit_track_;       // reused: a unit's track descriptor
  pb::TracePacket handoff_packet_;   // reused: an event with flows or on a lane
  pb::TracePacket interned_scratch_; // reused: a site's interned name, parsed
  pb::TracePacket first_packet_;     // the batch's first unit packet (its model's copy)
  pb::TracePacket next_packet_;      // reused: a later unit's first packet
};

}  // namespace perfetto_internal
}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_PERFETTO_BATCH_FORMATTER_H_
