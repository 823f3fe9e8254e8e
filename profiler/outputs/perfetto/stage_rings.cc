#include "profiler/outputs/perfetto/stage_rings.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/utf8.h"
#include "profiler/outputs/perfetto/perfetto_ids.h"

namespace warptrace {
namespace perfetto_internal {

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

StageRings::StageRings(const TraceLayout& layout, int64_t origin_ns, uint64_t units_per_block)
    : layout_(layout), origin_ns_(origin_ns), units_per_block_(units_per_block) {}

const StageRings::Barrier& StageRings::BarrierOf(uint32_t id) {
  if (id >= barriers_.size()) {
    // Ids are small (a block's barriers); a corrupt one gets no cache slot of its own.
    if (id > (uint32_t{1} << 16)) {
      scratch_barrier_ = {true, ValidUtf8(BarrierName(layout_, id)), -1};
      return scratch_barrier_;
    }
    barriers_.resize(size_t{id} + 1);
  }
  Barrier& b = barriers_[id];
  if (!b.known) {
    b.known = true;
    b.name = ValidUtf8(BarrierName(layout_, id));
    const std::string ring = RingOf(b.name);
    if (!ring.empty()) {
      auto it = std::find(ring_names_.begin(), ring_names_.end(), ring);
      b.ring = static_cast<int32_t>(it - ring_names_.begin());
      if (it == ring_names_.end()) ring_names_.push_back(ring);
    }
  }
  return b;
}

void StageRings::StartUnit(const UnitTimeline& unit, PacketWriter& out) {
  if (unit.block_linear != block_ || !block_seen_) Flush(out);
}

void StageRings::Collect(const UnitTimeline& unit) {
  if (!block_seen_) {
    block_seen_ = true;
    block_ = unit.block_linear;
    block_index_ = unit.block_index;
  }
  if (unit.has_record) block_sm_ = unit.sm_id;  // flows only come from such units
  for (const Flow& f : unit.flows) {
    if (f.kind != FlowKind::kArrivalToRelease || f.to.record_index != unit.record_index) {
      continue;
    }
    PhaseSpan& span = phases_[{f.barrier, f.phase}];
    if (f.completing) span.complete_ns = f.from.ns;
    span.released_ns = std::max(span.released_ns, f.to.ns);
  }
}

void StageRings::Flush(PacketWriter& out) {
  if (!block_seen_) return;
  block_seen_ = false;
  if (phases_.empty()) return;
  for (auto& changes : ring_changes_) changes.clear();
  for (const auto& [key, span] : phases_) {
    const int32_t ring = BarrierOf(key.first).ring;
    if (ring < 0 || static_cast<uint32_t>(ring) >= kMaxRings || span.complete_ns < 0) continue;
    if (ring_changes_.size() <= static_cast<size_t>(ring)) ring_changes_.resize(ring + 1);
    ring_changes_[ring].push_back({std::max(span.complete_ns, origin_ns_), +1});
    ring_changes_[ring].push_back({std::max({span.released_ns, span.complete_ns, origin_ns_}), -1});
  }
  phases_.clear();
  for (size_t r = 0; r < ring_changes_.size(); ++r) {
    if (ring_changes_[r].empty()) continue;
    const uint64_t uuid = kRingUuidBase + uint64_t{block_} * kMaxRings + r;
    pb::TrackDescriptor d;
    d.set_uuid(uuid);
    d.set_parent_uuid(kSmUuidBase + block_sm_);
    d.set_name(absl::StrFormat("%s stages ready in block (%d,%d,%d)", ring_names_[r],
                               block_index_.x, block_index_.y, block_index_.z));
    d.set_description(absl::StrCat(
        "stages of the barrier ring ", ring_names_[r], " in block ", block_,
        " whose current phase has completed (all its arrivals are in) and whose waits "
        "have not all been released yet: full stages a consumer has not taken"));
    d.set_sibling_order_rank(static_cast<int32_t>(std::min<uint64_t>(
        uint64_t{block_} * units_per_block_, std::numeric_limits<int32_t>::max())));
    d.mutable_counter()->set_unit(pb::CounterDescriptor::UNIT_COUNT);
    out.WriteDescriptor(d);
    out.WriteCounterTrack(uuid, ring_changes_[r]);
  }
}

}  // namespace perfetto_internal
}  // namespace warptrace
