// Perfetto output: writes a trace, one trace unit at a time, as Perfetto's protobuf trace
// format (a stream of TracePackets), which ui.perfetto.dev opens directly (.pftrace).
//
// Fed UnitTimelines, like ChromeTraceWriter (chrome_trace.h):
//   PerfettoWriter writer(os);                  // os: any llvm::raw_ostream
//   RETURN_IF_ERROR(writer.Begin(layout, origin_ns));
//   for (const UnitTimeline& unit : units) RETURN_IF_ERROR(writer.AddUnit(unit));
//   RETURN_IF_ERROR(writer.End());
// or WritePerfettoTraceFile(timeline, "trace.pftrace") for a whole Timeline. The dump sink
// that feeds it is PerfettoTraceSink (perfetto_sink.h).
//
// The code: this file's writer does the trace's own packets, the SM counters and the batches
// (Threads below); batch_formatter.h a batch's tracks, slices and verdicts, packet_writer.h
// the protobuf bytes, unit_ops.h the order of a unit's events and its flow arrows,
// stage_rings.h the stage-ring counters, perfetto_ids.h the fixed ids.
//
// Bytes. By default every 256 KiB of packets is deflated into one compressed_packets
// packet (packet_writer.h; PerfettoWriterOptions::compress), which Perfetto's trace
// processor and UI expand in place: ~1-3 bytes per event instead of ~12.
//
// Streaming. The file is Perfetto's `Trace` message, which is nothing but repeated
// `packet` fields, so packets are written as soon as their batch is (tag, length, packet,
// with protobuf's CodedOutputStream); no message ever holds more than one packet.
// Memory is O(sites + SMs + units): per unit one (SM, start, end) for the counters, plus the
// batches in flight.
//
// Batches and threads. The units are written in batches of consecutive units (at least
// 32 Ki events, cut at a block's end), each formatted into packets and deflated on its own
// (batch_formatter.h): its events' incremental state (interned names, the sites' annotations)
// is its own, so a batch does not depend on the batches before it. With
// PerfettoWriterOptions::threads = N > 1 AddUnit copies each unit into the batch being filled
// and hands full batches to N - 1 background threads (base/ordered_pipeline.h), which format
// them in parallel while the caller goes on; the caller formats one itself whenever it would
// wait for them, and the batches are written to `os` in order. With N = 1 AddUnit formats
// each unit right away. The bytes are the same for every N.
//
// Shape of the trace (messages of perfetto_trace.proto, which keeps
// Perfetto's field numbers):
//   Tracks: a root track "KERNEL on DEVICE" (description: grid, block, unit, capacity);
//     under it one track per SM, "SM 17", ordered by SM id; under each SM one track per
//     trace unit, "block (3,0,0) warpgroup 1", ordered like the Chrome trace's
//     thread_sort_index (block_linear * units_per_block + unit_index), with " [truncated]"
//     etc. appended when the unit is not complete, and a counter track "active units".
//     Units without a record (no SM known) go under a track "no record", after the SMs.
//   Slices: per unit, a TrackEvent SLICE_BEGIN / SLICE_END pair per Slice, in time order
//     (ends innermost first), on the unit's track. Names are the sites' names and
//     categories their kinds, both interned once per batch. The first begin of each site in
//     a batch also carries the site's debug annotations (site id, kind, builder origin);
//     block and unit are the track's. A slice closed by --allow-truncated has "repaired": true.
//   Verdicts: a unit that is not complete has an instant event named by its verdict
//     ("truncated", ...) at its end, with debug annotations "verdict" and "reason".
//   Hand-offs (trace version 2, timeline_types.h): a unit's instants (barrier arrivals) are
//     TYPE_INSTANT events on its track, named by their site, with debug annotations
//     "barrier" ("full[2]", BarrierName) and "phase"; its async spans go on child tracks of
//     its track, one per lane ("async 0", ...), as begin/end pairs; every Flow is a flow
//     arrow (TrackEvent flow_ids on its start, terminating_flow_ids on its end; Perfetto
//     flow id = Flow::id + 1): an arrival -> the end of the wait it released (the unit's
//     wait slice ending at Flow::to.ns, the first to begin when several do), an async
//     issue -> its completion (the span's begin -> its end). These events and the slice
//     ends/begins that carry flows are written as whole messages (the slow path).
//   Counters: per SM, the number of its units running (start <= t < end), written at End;
//     per block and stage ring (a barrier array: "full[*]" for full[0], full[1], ...), the
//     number of its stages "ready": whose current phase has completed (its last arrival,
//     Flow::completing) and whose waits on that phase have not all been released yet, a
//     counter track "full[*] stages ready in block (3,0,0)" under the block's SM, written when
//     the block's last unit has been added (units of a block come consecutively from
//     DumpTrace; a block whose units come apart gets a track per run).
//
// Sequences and clocks. Packet sequence 1 holds the clock snapshot of the trace, the track
// descriptors and the counters; its timestamps are absolute globaltimer ns on clock 64 (a
// sequence-scoped clock). Sequence 2 holds the units' events: the first packet of each batch
// clears the sequence's incremental state (SEQ_INCREMENTAL_STATE_CLEARED) and interns the
// categories and annotation names; each unit then starts with one packet of new defaults (its track,
// clock 64) and a clock snapshot that makes clock 64 *incremental* from the trace origin, so an event's timestamp is the nanoseconds since the previous
// event of the unit (the first: since the origin): one or two bytes instead of nine. The
// snapshot is at the origin for every unit, not at the unit's start, because Perfetto's
// trace processor rejects snapshots whose CLOCK_BOOTTIME goes back in time, and units come
// in block order, not start order. A site's name is interned where its batch first uses it. Every snapshot ties clock 64 to CLOCK_BOOTTIME with the same offset:
//   with a host anchor (TraceLayout::host_anchor): boottime = anchor.boottime_ns +
//     (t - anchor.globaltimer_ns), and the first snapshot also gives CLOCK_REALTIME, so the
//     trace lines up with host traces (Perfetto merges traces by clock snapshots);
//   without one: boottime = t - origin_ns, i.e. the trace starts at 0 like the JSON's ts.
//
// Errors: AddUnit returns InvalidArgument when the unit breaks the Timeline's contract:
// TimelineChecker's errors (timeline_check.h; units in (block_linear, unit_index) order,
// unit indices below UnitsPerBlock(layout)); and, beyond the contract, a flow whose start or
// end is not an arrival / released wait / async span of the unit it names (Perfetto binds
// an arrow to events). Nothing of that unit is written, but earlier units were: discard the
// output. With threads > 1 the first refused unit ends the trace: its error comes back from a
// later AddUnit or from End, and nothing after it is written. FailedPrecondition
// for calls out of order (AddUnit before Begin or after End). Stream errors are the
// stream's: the caller checks them (WritePerfettoTraceFile does).
//
// Thread-safety: not thread-safe (one caller thread); `os` must outlive the writer, and
// nobody else may write to it until End returned.
#ifndef WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PERFETTO_WRITER_H_
#define WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PERFETTO_WRITER_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "format/layout.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/outputs/perfetto/perfetto_ids.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {

struct PerfettoWriterOptions {
  // Packets deflated in compressed_packets (packet_writer.h), as Perfetto's own service
  // writes them with COMPRESSION_TYPE_DEFLATE; false: plain packets, ~10x the bytes.
  bool compress = true;
  // Threads the writer may use, the caller's included: with N > 1, N - 1 background threads
  // format and deflate batches of units while the caller goes on (see Batches and threads).
  // The bytes do not depend on it.
  int threads = 1;
};

class PerfettoWriter {
 public:
  explicit PerfettoWriter(llvm::raw_ostream& os, const PerfettoWriterOptions& options = {});
  ~PerfettoWriter();
  PerfettoWriter(const PerfettoWriter&) = delete;
  PerfettoWriter& operator=(const PerfettoWriter&) = delete;

  // Writes the clock snapshot and the root track. `origin_ns` is the earliest unit start
  // of the whole trace (Timeline::origin_ns); no event may come before it. `layout` must
  // outlive the writer.
  absl::Status Begin(const TraceLayout& layout, int64_t origin_ns);
  // Writes one unit: its track (and its SM's, the first time), slices and verdict. Units
  // come in Timeline order, strictly increasing (block_linear, unit_index).
  absl::Status AddUnit(const UnitTimeline& unit);
  // Writes the counters and flushes everything into `os`. Further calls fail.
  absl::Status End();

  // Packets written so far (of the units added: those formatted; all once End returned).
  uint64_t packets() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes a whole Timeline to `os`: Begin, AddUnit for each unit, End. Returns the writer's
// errors; stream errors are the stream's (the file variant below checks them).
absl::Status WritePerfettoTrace(const Timeline& timeline, llvm::raw_ostream& os);

// WritePerfettoTrace into `path` atomically (base/file.h's WriteLargeFileAtomically: a
// temporary file renamed into place; "-" is stdout). Returns the writer's errors and the file
// system's (NotFound, PermissionDenied, ResourceExhausted, Unavailable) naming the path.
absl::Status WritePerfettoTraceFile(const Timeline& timeline, absl::string_view path);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PERFETTO_WRITER_H_
