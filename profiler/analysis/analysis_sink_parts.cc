// AnalysisSink's parts (analysis_sink.h, sink.h): making them, and merging what they
// gathered back into the sink in buffer order.
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "profiler/analysis/analysis_sink.h"

namespace warptrace {

// A part: an AnalysisSink of its own, begun like its owner, fed whole blocks.
class AnalysisSink::Part : public SinkPart {
 public:
  explicit Part(AnalysisOptions options) : sink_(options) {}
  absl::Status AddUnit(const UnitView& unit) override {
    if (!unit.timeline->flows.empty()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "block %d unit %d has hand-off flows: a trace with hand-offs is analysed through "
          "AnalysisSink::AddUnit, not through parts (their barriers are numbered in arrival "
          "order)",
          unit.timeline->block_linear, unit.timeline->unit_index));
    }
    return sink_.AddUnit(unit);
  }
  AnalysisSink& sink() { return sink_; }

 private:
  AnalysisSink sink_;
};

std::unique_ptr<SinkPart> AnalysisSink::NewPart() {
  if (layout_ == nullptr || !options_.handoffs.empty()) return nullptr;
  auto part = std::make_unique<Part>(options_);
  TraceBegin begin = begin_;
  begin.units = 0;  // a part holds some of the units: no room reserved for all of them
  if (!part->sink().Begin(begin).ok()) return nullptr;  // Begin succeeded here: cannot fail
  parts_made_.push_back(part.get());
  return part;
}

void AnalysisSink::FamilyAcc::Add(const FamilyAcc& other) {
  count += other.count;
  wait_ns += other.wait_ns;
  overhead += other.overhead;
}

void AnalysisSink::RoleAcc::Add(const RoleAcc& other) {
  units += other.units;
  unit_time_ns += other.unit_time_ns;
  waiting_ns += other.waiting_ns;
  mma_groups += other.mma_groups;
  mma_in_flight_ns += other.mma_in_flight_ns;
  copies += other.copies;
  copy_bytes += other.copy_bytes;
  copy_engines |= other.copy_engines;
  copy_in_flight_ns += other.copy_in_flight_ns;
  for (size_t s = 0; s < sites.size(); ++s) {
    sites[s].count += other.sites[s].count;
    sites[s].total_ns += other.sites[s].total_ns;
    sites[s].self_ns += other.sites[s].self_ns;
    sites[s].waiting_ns += other.sites[s].waiting_ns;
  }
  for (size_t f = 0; f < families.size(); ++f) families[f].Add(other.families[f]);
  if (region_family_dense.size() < other.region_family_dense.size()) {
    region_family_dense.resize(other.region_family_dense.size(), 0);
  }
  for (size_t i = 0; i < other.region_family_dense.size(); ++i) {
    region_family_dense[i] += other.region_family_dense[i];
  }
  for (const auto& [key, ns] : other.region_family_ns) region_family_ns[key] += ns;
}

// A part's counters, added to this sink's (the blocks and units: MergeBlocks).
absl::Status AnalysisSink::MergePart(AnalysisSink& part) {
  if (part.in_block_) RETURN_IF_ERROR(part.FinishBlock());
  if (part.in_scope_) RETURN_IF_ERROR(part.FinishScope());
  if (part.families_ != families_ || part.roles_.size() != roles_.size() ||
      !part.barrier_slots_.empty()) {
    return absl::InternalError("a part's wait families or roles differ from the sink's");
  }
  for (size_t r = 0; r < roles_.size(); ++r) roles_[r].Add(part.roles_[r]);
  result_.units_without_record += part.result_.units_without_record;
  for (const auto& [key, ns] : part.role_rank_ns_) role_rank_ns_[key] += ns;
  for (const auto& [key, acc] : part.cross_) {
    cross_[key].waits += acc.waits;
    cross_[key].ns += acc.ns;
  }
  path_blocks_ += part.path_blocks_;
  handoffs_ += part.handoffs_;
  cross_cta_handoffs_ += part.cross_cta_handoffs_;
  scope_spans_.insert(scope_spans_.end(), part.scope_spans_.begin(), part.scope_spans_.end());
  if (path_.size() < part.path_.size()) path_.resize(part.path_.size());
  for (size_t i = 0; i < part.path_.size(); ++i) {
    path_[i].blocks += part.path_[i].blocks;
    path_[i].path_ns += part.path_[i].path_ns;
    path_[i].share_sum += part.path_[i].share_sum;
  }
  // The slowest path: the longest, of equals the first in the buffer (as on one thread).
  if (part.slowest_path_span_ > slowest_path_span_ ||
      (part.slowest_path_span_ == slowest_path_span_ && slowest_path_span_ >= 0 &&
       part.slowest_path_record_ < slowest_path_record_)) {
    slowest_path_span_ = part.slowest_path_span_;
    slowest_path_block_ = part.slowest_path_block_;
    slowest_path_record_ = part.slowest_path_record_;
    slowest_path_ = std::move(part.slowest_path_);
    slowest_handoffs_ = std::move(part.slowest_handoffs_);
  }
  return absl::OkStatus();
}

// The parts' blocks, and the units of each, in buffer order (by first record; a record is
// one block's, so they never tie).
absl::Status AnalysisSink::MergeBlocks(absl::Span<AnalysisSink* const> parts) {
  struct Ref {
    uint64_t first_record;
    const AnalysisSink* part;
    const BlockRec* block;
  };
  std::vector<Ref> order;
  size_t units = 0;
  for (const AnalysisSink* part : parts) {
    for (const BlockRec& b : part->blocks_) order.push_back({b.first_record, part, &b});
    units += part->units_.size();
  }
  std::sort(order.begin(), order.end(),
            [](const Ref& a, const Ref& b) { return a.first_record < b.first_record; });
  units_.reserve(units);
  blocks_.reserve(order.size());
  for (const Ref& ref : order) {
    const BlockRec& b = *ref.block;
    const auto from = ref.part->units_.begin() + static_cast<ptrdiff_t>(b.first_unit);
    if (!seen_blocks_.insert(b.block_linear).second) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "units of block %d do not arrive consecutively (unit %d comes after another block)",
          b.block_linear, from->unit_index));
    }
    BlockRec rec = b;
    rec.first_unit = units_.size();
    units_.insert(units_.end(), from, from + static_cast<ptrdiff_t>(b.unit_count));
    blocks_.push_back(rec);
  }
  return absl::OkStatus();
}

absl::Status AnalysisSink::MergeParts(std::vector<std::unique_ptr<SinkPart>> parts) {
  if (layout_ == nullptr) return absl::FailedPreconditionError("MergeParts before Begin");
  if (in_block_ || !units_.empty() || result_.units_without_record > 0) {
    return absl::FailedPreconditionError(
        "MergeParts after units came through AddUnit: a trace goes either to the sink or to "
        "its parts");
  }
  std::vector<AnalysisSink*> sinks;
  for (std::unique_ptr<SinkPart>& p : parts) {
    auto* part = dynamic_cast<Part*>(p.get());
    auto made = std::find(parts_made_.begin(), parts_made_.end(), part);
    if (part == nullptr || made == parts_made_.end()) {
      return absl::InvalidArgumentError("MergeParts: a part this analysis did not make");
    }
    parts_made_.erase(made);
    sinks.push_back(&part->sink());
  }
  for (AnalysisSink* part : sinks) RETURN_IF_ERROR(MergePart(*part));
  return MergeBlocks(sinks);
}

}  // namespace warptrace
