#include "profiler/dump/unit_feeder.h"

#include <utility>

namespace warptrace {

UnitFeeder::UnitFeeder(Fn fn) : fn_(std::move(fn)) {
  filling_ = std::make_unique<Batch>();
  // Room for every batch, so that returning one to free_ (Run, outside its try) never
  // allocates: under a memory limit that would throw on the feeder's thread and terminate.
  free_.reserve(kSpareBatches + 1);
  for (int i = 0; i < kSpareBatches; ++i) free_.push_back(std::make_unique<Batch>());
  thread_ = std::thread([this] { Run(); });
}

UnitFeeder::~UnitFeeder() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    queue_.clear();  // a dump that stopped early: nothing more is written
  }
  changed_.notify_all();
  thread_.join();
}

absl::Status UnitFeeder::Add(const UnitTimeline& unit) {
  if (filling_ == nullptr) {  // fn failed and took the batches with it
    std::lock_guard<std::mutex> lock(mu_);
    if (thrown_ != nullptr) std::rethrow_exception(thrown_);
    return status_;
  }
  Batch& batch = *filling_;
  if (batch.count == batch.units.size()) batch.units.emplace_back();
  batch.units[batch.count++] = unit;
  batch.events += uint64_t{unit.events} + 1;
  if (batch.events < kBatchEvents) return absl::OkStatus();
  return Submit();
}

absl::Status UnitFeeder::Finish() {
  if (absl::Status s = Submit(); !s.ok()) return s;
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return (queue_.empty() && !busy_) || !status_.ok(); });
  if (thrown_ != nullptr) std::rethrow_exception(thrown_);
  return status_;
}

absl::Status UnitFeeder::Submit() {
  std::unique_lock<std::mutex> lock(mu_);
  if (thrown_ != nullptr) std::rethrow_exception(thrown_);
  if (!status_.ok() || filling_ == nullptr) return status_;
  if (filling_->count == 0) return absl::OkStatus();
  queue_.push_back(std::move(filling_));
  changed_.notify_all();
  changed_.wait(lock, [&] { return !free_.empty() || !status_.ok(); });
  if (thrown_ != nullptr) std::rethrow_exception(thrown_);
  // After fn's error filling_ stays null, even with a batch free again: later calls return
  // the error (an Add must not take a unit in as if nothing had happened).
  if (free_.empty() || !status_.ok()) return status_;
  filling_ = std::move(free_.back());
  free_.pop_back();
  return status_;
}

void UnitFeeder::Run() {
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
    std::exception_ptr thrown;
    try {
      for (size_t i = 0; i < batch->count && status.ok(); ++i) status = fn_(batch->units[i]);
    } catch (...) {
      thrown = std::current_exception();
      status = threw_;  // stops it, as an error; no allocation (unit_feeder.h)
    }
    batch->count = 0;
    batch->events = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!status.ok() && status_.ok()) {
        status_ = status;
        thrown_ = thrown;
      }
      // After an error nothing more is run: what is queued is dropped.
      if (!status_.ok()) queue_.clear();
      free_.push_back(std::move(batch));
      busy_ = false;
    }
    changed_.notify_all();
  }
}

}  // namespace warptrace
