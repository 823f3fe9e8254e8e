#include "profiler/outputs/perfetto/perfetto_writer.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file.h"
#include "base/ordered_pipeline.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "llvm/ADT/SmallVector.h"
#include "profiler/outputs/perfetto/batch_formatter.h"
#include "profiler/outputs/perfetto/packet_writer.h"
#include "profiler/outputs/perfetto/perfetto_ids.h"
#include "profiler/outputs/perfetto/perfetto_trace.pb.h"
#include "profiler/timeline/timeline_check.h"

namespace warptrace {
namespace {

using namespace ::warptrace::perfetto_internal;  // NOLINT: the writer's own parts

std::string DimString(const Dim3& d) { return absl::StrFormat("(%d,%d,%d)", d.x, d.y, d.z); }

void AddClock(pb::ClockSnapshot& snapshot, uint32_t id, int64_t timestamp) {
  pb::ClockSnapshot::Clock* clock = snapshot.add_clocks();
  clock->set_clock_id(id);
  clock->set_timestamp(static_cast<uint64_t>(timestamp));
}

// Units of a batch (BatchFormatter): at least this many events, cut at a block's end, so a
// block's stage rings stay in one batch; a batch without a block end (a trace whose blocks
// miss their last unit) is cut at kMaxBatchEvents anyway.
constexpr uint64_t kBatchEvents = uint64_t{1} << 15;
constexpr uint64_t kMaxBatchEvents = 4 * kBatchEvents;

// A batch on its way through the pipeline: the units (copied; their storage reused from
// batch to batch), then what the formatter made of them.
struct Batch {
  uint64_t index = 0;
  bool has_previous = false;
  TimelineChecker::Position previous;  // the unit before the batch's first
  std::vector<UnitTimeline> units;     // [0, count) are this batch's
  std::vector<uint8_t> declare;        // by unit: DeclareFlags
  size_t count = 0;
  // Made by the formatter:
  llvm::SmallVector<char, 0> bytes;
  std::vector<UnitSpan> spans;
  uint64_t packets = 0;
  absl::Status status;  // the first unit it refused (the batch's bytes stop there)
};

}  // namespace

// The writer's front: the trace's own packets (clock snapshot, root track, counters), the
// order-dependent decisions (which unit declares an SM track, where batches are cut), and the
// batches, formatted on this thread (threads = 1) or by an OrderedPipeline on every thread
// (perfetto_writer.h, Threads).
class PerfettoWriter::Impl {
 public:
  Impl(llvm::raw_ostream& os, const PerfettoWriterOptions& options)
      : os_(os), options_(options), front_(os, options.compress) {}

  ~Impl() {
    // A writer dropped before End (a dump that stopped): nothing more is formatted or
    // written; the pipeline's threads finish what they hold and stop.
    abandoned_.store(true, std::memory_order_relaxed);
    pipeline_.reset();
  }

  absl::Status Begin(const TraceLayout& layout, int64_t origin_ns) {
    if (state_ != State::kNew) return absl::FailedPreconditionError("PerfettoWriter::Begin twice");
    state_ = State::kUnits;
    const HostTimeAnchor& anchor = layout.host_anchor;
    // boottime = t + offset; a known anchor must keep boottime >= 0 at the origin.
    int64_t boottime_offset = -origin_ns;
    bool anchored = false;
    if (anchor.known && anchor.boottime_ns + (origin_ns - anchor.globaltimer_ns) >= 0) {
      boottime_offset = anchor.boottime_ns - anchor.globaltimer_ns;
      anchored = true;
    }
    templates_.emplace(layout, origin_ns, boottime_offset);

    pb::TracePacket packet;
    packet.set_trusted_packet_sequence_id(kPerfettoTrackSequence);
    packet.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    packet.set_first_packet_on_sequence(true);
    packet.mutable_trace_packet_defaults()->set_timestamp_clock_id(kPerfettoGpuClockId);
    pb::ClockSnapshot* snapshot = packet.mutable_clock_snapshot();
    const int64_t at = anchored ? anchor.globaltimer_ns : origin_ns;
    AddClock(*snapshot, kPerfettoGpuClockId, at);
    AddClock(*snapshot, pb::BUILTIN_CLOCK_BOOTTIME, at + boottime_offset);
    if (anchored && anchor.realtime_ns >= 0) {
      AddClock(*snapshot, pb::BUILTIN_CLOCK_REALTIME, anchor.realtime_ns);
    }
    front_.WritePacket(packet);

    pb::TrackDescriptor root;
    root.set_uuid(kRootUuid);
    root.set_name(ValidUtf8(absl::StrCat(layout.kernel_name, " on ", layout.device_name)));
    root.set_description(ValidUtf8(absl::StrFormat(
        "warptrace: kernel %s, grid %s, block %s, trace unit %s, capacity %d events per unit%s",
        layout.kernel_name, DimString(layout.grid), DimString(layout.block),
        UnitKindName(layout.unit.kind), layout.capacity,
        anchored ? absl::StrFormat("; host-time anchor exact to %d ns", anchor.uncertainty_ns)
                 : std::string("; no host-time anchor: time 0 is the first unit's start"))));
    root.set_child_ordering(pb::TrackDescriptor::EXPLICIT);
    front_.WriteDescriptor(root);
    front_.Flush();  // before any batch's bytes

    if (options_.threads > 1) {
      // Two batches per thread in flight: every thread busy while the caller fills the next.
      // (Measured on two cores with the 1e6-event Mosaic buffer: 8 or 16 in flight were no
      // faster than 4, and 16 or more slower: more batches' units copied go cold.)
      const size_t in_flight = 2 * static_cast<size_t>(options_.threads);
      pipeline_ = std::make_unique<OrderedPipeline<Batch>>(
          options_.threads - 1, in_flight,
          [this](int /*slot*/, Batch& batch) { Format(batch); },
          [this](Batch& batch) { Deliver(batch); });
    } else {
      formatters_.push_back(std::make_unique<BatchFormatter>(*templates_, options_.compress));
    }
    return absl::OkStatus();
  }

  absl::Status AddUnit(const UnitTimeline& unit) {
    if (state_ != State::kUnits) {
      return absl::FailedPreconditionError(state_ == State::kNew
                                               ? "PerfettoWriter::AddUnit before Begin"
                                               : "PerfettoWriter::AddUnit after End");
    }
    return pipeline_ != nullptr ? AddToBatch(unit) : FormatHere(unit);
  }

  absl::Status End() {
    if (state_ == State::kDone) return absl::FailedPreconditionError("PerfettoWriter::End twice");
    if (state_ == State::kNew) {
      return absl::FailedPreconditionError("PerfettoWriter::End before Begin");
    }
    state_ = State::kDone;
    if (pipeline_ != nullptr) {
      if (filling_.count > 0) SubmitBatch();
      pipeline_->Drain();
      RETURN_IF_ERROR(DeliveredError());
    } else if (batch_open_) {
      FinishHere();
    }
    WriteCounters();
    front_.Flush();
    return absl::OkStatus();
  }

  uint64_t packets() const {
    const uint64_t open = batch_open_ ? formatters_[0]->packets() : 0;
    return front_.packets() + delivered_packets_.load(std::memory_order_acquire) + open;
  }

 private:
  enum class State { kNew, kUnits, kDone };

  // Threads = 1: the unit formatted right away into the open batch, which is written when
  // cut. A refused unit leaves nothing behind, and later units may follow.
  absl::Status FormatHere(const UnitTimeline& unit) {
    BatchFormatter& formatter = *formatters_[0];
    if (!batch_open_) {
      formatter.Start(next_batch_, last_.has_value() ? &*last_ : nullptr);
      batch_open_ = true;
    }
    const uint8_t declare = Declarations(unit);
    RETURN_IF_ERROR(formatter.AddUnit(unit, declare));
    Declared(unit, declare);
    last_ = TimelineChecker::PositionOf(unit);
    if (CutAfter(unit)) FinishHere();
    return absl::OkStatus();
  }

  void FinishHere() {
    BatchFormatter& formatter = *formatters_[0];
    formatter.Finish();
    WriteBatch(formatter.bytes(), formatter.spans(), formatter.packets());
    batch_open_ = false;
    ++next_batch_;
  }

  // Threads > 1: the unit copied into the batch being filled, which goes to the pipeline
  // when cut. The first refused unit stops the trace: its error comes back from a later
  // AddUnit or from End (the trace's bytes stop before it).
  absl::Status AddToBatch(const UnitTimeline& unit) {
    RETURN_IF_ERROR(DeliveredError());
    Batch& batch = filling_;
    if (batch.count == 0) {
      batch.index = next_batch_;
      batch.has_previous = last_.has_value();
      if (last_.has_value()) batch.previous = *last_;
    }
    if (batch.count == batch.units.size()) {
      batch.units.emplace_back();
      batch.declare.emplace_back();
    }
    batch.units[batch.count] = unit;
    const uint8_t declare = Declarations(unit);
    batch.declare[batch.count] = declare;
    ++batch.count;
    Declared(unit, declare);
    last_ = TimelineChecker::PositionOf(unit);
    if (CutAfter(unit)) SubmitBatch();
    return absl::OkStatus();
  }

  void SubmitBatch() {
    pipeline_->Submit(filling_);  // filling_ is now a batch delivered earlier, or new
    filling_.count = 0;
    ++next_batch_;
  }

  // On a pipeline thread: the batch formatted by a formatter of the pool (as many exist as
  // threads ever formatted at once: each holds ~1 MB of buffers, better reused warm).
  void Format(Batch& batch) {
    batch.status = absl::OkStatus();
    batch.bytes.clear();
    batch.spans.clear();
    batch.packets = 0;
    if (abandoned_.load(std::memory_order_relaxed)) return;
    std::unique_ptr<BatchFormatter> formatter;
    {
      std::lock_guard<std::mutex> lock(pool_mu_);
      if (!formatters_.empty()) {
        formatter = std::move(formatters_.back());
        formatters_.pop_back();
      }
    }
    if (formatter == nullptr) {
      formatter = std::make_unique<BatchFormatter>(*templates_, options_.compress);
    }
    formatter->Start(batch.index, batch.has_previous ? &batch.previous : nullptr);
    for (size_t i = 0; i < batch.count && batch.status.ok(); ++i) {
      batch.status = formatter->AddUnit(batch.units[i], batch.declare[i]);
    }
    formatter->Finish();
    batch.bytes.swap(formatter->bytes());
    batch.spans.swap(formatter->spans());
    batch.packets = formatter->packets();
    std::lock_guard<std::mutex> lock(pool_mu_);
    formatters_.push_back(std::move(formatter));
  }

  // In batch order, one at a time: the batch's bytes to the stream, until the first error.
  void Deliver(Batch& batch) {
    if (abandoned_.load(std::memory_order_relaxed)) return;
    {
      std::lock_guard<std::mutex> lock(error_mu_);
      if (!error_.ok()) return;
    }
    WriteBatch(batch.bytes, batch.spans, batch.packets);
    if (!batch.status.ok()) {
      std::lock_guard<std::mutex> lock(error_mu_);
      error_ = batch.status;
    }
  }

  // A formatted batch to the stream, its spans to the counters' (one batch at a time, in
  // order: FinishHere or Deliver).
  void WriteBatch(const llvm::SmallVectorImpl<char>& bytes, const std::vector<UnitSpan>& spans,
                  uint64_t packets) {
    os_.write(bytes.data(), bytes.size());
    spans_.insert(spans_.end(), spans.begin(), spans.end());
    delivered_packets_.fetch_add(packets, std::memory_order_release);
  }

  absl::Status DeliveredError() {
    std::lock_guard<std::mutex> lock(error_mu_);
    return error_;
  }

  // Whether a batch ends after `unit` (counted in the batch being filled).
  bool CutAfter(const UnitTimeline& unit) {
    batch_events_ += uint64_t{unit.events} + 1;
    const bool block_end = unit.unit_index + 1 >= templates_->units_per_block;
    if (batch_events_ < kBatchEvents || (!block_end && batch_events_ < kMaxBatchEvents)) {
      return false;
    }
    batch_events_ = 0;
    return true;
  }

  // The tracks `unit` is the first under (DeclareFlags), and marking them declared.
  uint8_t Declarations(const UnitTimeline& unit) const {
    if (!unit.has_record) return no_record_declared_ ? kDeclareNone : kDeclareNoRecord;
    const bool seen = unit.sm_id < sm_declared_.size() && sm_declared_[unit.sm_id];
    uint8_t declare = seen ? kDeclareNone : kDeclareSm;
    if (templates_->layout.cluster.Count() > 1) {
      if (!cta_declared_.contains(unit.block_linear)) declare |= kDeclareCta;
      if (!cluster_declared_.contains(ClusterTrackId(templates_->layout, unit))) {
        declare |= kDeclareCluster;
      }
    }
    return declare;
  }
  void Declared(const UnitTimeline& unit, uint8_t declare) {
    if ((declare & kDeclareNoRecord) != 0) no_record_declared_ = true;
    if ((declare & kDeclareCta) != 0) cta_declared_.insert(unit.block_linear);
    if ((declare & kDeclareCluster) != 0) {
      cluster_declared_.insert(ClusterTrackId(templates_->layout, unit));
    }
    if ((declare & kDeclareSm) != 0) {
      if (unit.sm_id >= sm_declared_.size()) sm_declared_.resize(uint64_t{unit.sm_id} + 1, false);
      sm_declared_[unit.sm_id] = true;
    }
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
      front_.WriteCounterTrack(kSmCounterUuidBase + sm, changes);
      begin = end;
    }
  }

  llvm::raw_ostream& os_;
  const PerfettoWriterOptions options_;
  PacketWriter front_;  // the trace's own packets, straight to os_
  State state_ = State::kNew;
  std::optional<UnitTemplates> templates_;  // from Begin
  // Threads > 1: the idle formatters (Format); threads = 1: the one.
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<BatchFormatter>> formatters_;
  // The producer's (AddUnit's) state.
  uint64_t next_batch_ = 0;
  uint64_t batch_events_ = 0;
  std::optional<TimelineChecker::Position> last_;  // the last unit added
  bool no_record_declared_ = false;
  std::vector<bool> sm_declared_;  // by SM id
  absl::flat_hash_set<uint32_t> cta_declared_;      // with clusters: by linear block id
  absl::flat_hash_set<uint64_t> cluster_declared_;  // by ClusterTrackId
  bool batch_open_ = false;        // threads = 1: formatters_[0] holds a batch
  Batch filling_;                  // threads > 1
  // Delivered batches' (Deliver, in order; read by the producer after Drain).
  std::vector<UnitSpan> spans_;
  std::atomic<uint64_t> delivered_packets_{0};
  std::mutex error_mu_;
  absl::Status error_;  // the first batch error delivered
  std::atomic<bool> abandoned_{false};
  std::unique_ptr<OrderedPipeline<Batch>> pipeline_;  // last: its threads use the above
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
