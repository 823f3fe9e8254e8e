#include "profiler/outputs/perfetto/perfetto_sink.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace warptrace {

// Batches of unit copies, written by one thread in the order they were added.
class PerfettoTraceSink::Feeder {
 public:
  explicit Feeder(PerfettoWriter& writer) : writer_(writer) {
    filling_ = std::make_unique<Batch>();
    for (int i = 0; i < kSpareBatches; ++i) free_.push_back(std::make_unique<Batch>());
    thread_ = std::thread([this] { Run(); });
  }
  ~Feeder() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      queue_.clear();  // a dump that stopped early: nothing more is written
    }
    changed_.notify_all();
    thread_.join();
  }
  Feeder(const Feeder&) = delete;
  Feeder& operator=(const Feeder&) = delete;

  // Copies `unit` into the batch being filled (into the storage of a unit written before,
  // so without allocating once the batches have grown); hands the batch over when full.
  // Returns the writer's first error, if it had one.
  absl::Status Add(const UnitTimeline& unit) {
    Batch& batch = *filling_;
    if (batch.count == batch.units.size()) batch.units.emplace_back();
    batch.units[batch.count++] = unit;
    batch.events += uint64_t{unit.events} + 1;
    if (batch.events < kBatchEvents) return absl::OkStatus();
    return Submit();
  }

  // Hands over the last batch and waits until every unit was written.
  absl::Status Finish() {
    if (absl::Status s = Submit(); !s.ok()) return s;
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return (queue_.empty() && !busy_) || !status_.ok(); });
    return status_;
  }

 private:
  // Units of one batch: enough events that handing a batch over costs little against
  // writing it, few enough that the writer starts early.
  static constexpr uint64_t kBatchEvents = uint64_t{1} << 14;
  // Batches beyond the one being filled: one being written, one waiting.
  static constexpr int kSpareBatches = 2;

  struct Batch {
    std::vector<UnitTimeline> units;  // [0, count) are this batch's; the rest are storage
    size_t count = 0;
    uint64_t events = 0;
  };

  absl::Status Submit() {
    std::unique_lock<std::mutex> lock(mu_);
    if (filling_->count > 0) {
      queue_.push_back(std::move(filling_));
      changed_.notify_all();
      changed_.wait(lock, [&] { return !free_.empty() || !status_.ok(); });
      if (!status_.ok()) return status_;
      filling_ = std::move(free_.back());
      free_.pop_back();
    }
    return status_;
  }

  void Run() {
    for (;;) {
      std::unique_ptr<Batch> batch;
      {
        std::unique_lock<std::mutex> lock(mu_);
        changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopped
        batch = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
      }
      absl::Status status;
      for (size_t i = 0; i < batch->count && status.ok(); ++i) {
        status = writer_.AddUnit(batch->units[i]);
      }
      batch->count = 0;
      batch->events = 0;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!status.ok() && status_.ok()) status_ = status;
        free_.push_back(std::move(batch));
        busy_ = false;
      }
      changed_.notify_all();
    }
  }

  PerfettoWriter& writer_;
  std::unique_ptr<Batch> filling_;  // the caller's
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Batch>> queue_;  // handed over, in order
  std::vector<std::unique_ptr<Batch>> free_;
  bool busy_ = false;  // the thread is writing a batch
  bool stop_ = false;
  absl::Status status_;  // the writer's first error
  std::thread thread_;
};

PerfettoWriterOptions PerfettoTraceSink::WriterOptions(PerfettoWriterOptions options) {
  // The writer's own thread is one of the threads: the writer deflates on the others.
  if (options.threads >= 2) --options.threads;
  return options;
}

PerfettoTraceSink::PerfettoTraceSink(llvm::raw_ostream& os, const PerfettoWriterOptions& options)
    : threaded_(options.threads >= 2), writer_(os, WriterOptions(options)) {}

PerfettoTraceSink::~PerfettoTraceSink() = default;

absl::Status PerfettoTraceSink::Begin(const TraceBegin& begin) {
  if (begin.layout == nullptr) return absl::InvalidArgumentError("TraceBegin without a layout");
  absl::Status status = writer_.Begin(*begin.layout, begin.origin_ns);
  if (status.ok() && threaded_) feeder_ = std::make_unique<Feeder>(writer_);
  return status;
}

absl::Status PerfettoTraceSink::AddUnit(const UnitView& unit) {
  if (unit.timeline == nullptr) return absl::InvalidArgumentError("UnitView without a timeline");
  if (feeder_ != nullptr) return feeder_->Add(*unit.timeline);
  return writer_.AddUnit(*unit.timeline);
}

absl::Status PerfettoTraceSink::End(const TraceEnd& /*end*/) {
  if (feeder_ != nullptr) {
    absl::Status status = feeder_->Finish();
    feeder_.reset();
    if (!status.ok()) return status;
  }
  return writer_.End();
}

}  // namespace warptrace
