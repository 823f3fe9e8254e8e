// The Perfetto writer's stage-ring counters (perfetto_writer.h, "Counters"): per block and
// barrier array ("full[*]" for full[0], full[1], ...), how many of its stages are ready —
// their current phase has completed (its last arrival, Flow::completing) and not every wait
// on that phase has been released yet. Also the writer's barrier names. Internal.
//
//   StageRings rings(layout, origin_ns, units_per_block);
//   per unit:  rings.StartUnit(unit, out);   // flushes the previous block when it is done
//              rings.Collect(unit);
//   at End:    rings.Flush(out);
//
// Units of a block come consecutively from DumpTrace; a block whose units come apart gets a
// counter track per run. Not thread-safe; `layout` must outlive the StageRings.
#ifndef WARPTRACE_PROFILER_OUTPUTS_PERFETTO_STAGE_RINGS_H_
#define WARPTRACE_PROFILER_OUTPUTS_PERFETTO_STAGE_RINGS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "format/layout.h"
#include "profiler/outputs/perfetto/packet_writer.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {
namespace perfetto_internal {

// "full[2]" -> "full[*]": the ring a barrier array element belongs to; "" for a barrier
// that is not an array element.
std::string RingOf(const std::string& barrier);

class StageRings {
 public:
  StageRings(const TraceLayout& layout, int64_t origin_ns, uint64_t units_per_block);

  // Per barrier id seen: its name (UTF-8) and its ring's index (-1: none).
  struct Barrier {
    bool known = false;
    std::string name;
    int32_t ring = -1;
  };
  // Barrier `id`'s name and ring, computed once per id.
  const Barrier& BarrierOf(uint32_t id);

  // Before `unit` is written: when it starts another block, writes the finished block's
  // counter tracks to `out`.
  void StartUnit(const UnitTimeline& unit, PacketWriter& out);
  // Records the phases of the unit's arrival -> release flows (each flow once: on the unit
  // it releases).
  void Collect(const UnitTimeline& unit);
  // Writes the current block's counter tracks.
  void Flush(PacketWriter& out);

 private:
  // One phase of one barrier of the block being written: when its last arrival came (the
  // stage became ready) and when the last wait on it was released (it was taken).
  struct PhaseSpan {
    int64_t complete_ns = -1;
    int64_t released_ns = -1;
  };

  const TraceLayout& layout_;
  const int64_t origin_ns_;
  const uint64_t units_per_block_;
  std::vector<Barrier> barriers_;  // by id
  Barrier scratch_barrier_;
  std::vector<std::string> ring_names_;
  std::vector<std::vector<std::pair<int64_t, int>>> ring_changes_;  // by ring, scratch
  // The block being written: per (barrier, phase) its span.
  bool block_seen_ = false;
  uint32_t block_ = 0;
  uint32_t block_sm_ = 0;
  Dim3 block_index_;
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, PhaseSpan> phases_;
};

}  // namespace perfetto_internal
}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_PERFETTO_STAGE_RINGS_H_
