#include "base/chunk_pipeline.h"

#include <sched.h>

#include <algorithm>
#include <utility>

namespace warptrace {

int DefaultThreads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

ChunkPipeline::ChunkPipeline(int workers, size_t max_in_flight, Transform transform,
                             Deliver deliver, OnQueued on_queued)
    : max_in_flight_(max_in_flight < 1 ? 1 : max_in_flight),
      transform_(std::move(transform)),
      deliver_(std::move(deliver)),
      on_queued_(std::move(on_queued)),
      done_(max_in_flight_) {
  threads_.reserve(static_cast<size_t>(std::max(workers, 0)));
  for (int w = 0; w < workers; ++w) threads_.emplace_back([this] { Work(); });
}

ChunkPipeline::~ChunkPipeline() {
  Drain();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ChunkPipeline::Submit(std::vector<uint8_t>& chunk, size_t size) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    while (in_flight_ >= max_in_flight_) {
      if (threads_.empty() && !pending_.empty()) {
        Complete(lock, TakePending());
      } else {
        changed_.wait(lock);
      }
    }
    std::unique_ptr<Job> job;
    if (!free_.empty()) {
      job = std::move(free_.back());
      free_.pop_back();
    } else {
      // At most max_in_flight_ jobs ever exist (in flight or free), so slots stay below it.
      job = std::make_unique<Job>();
      job->slot = jobs_made_++;
    }
    job->in.swap(chunk);
    job->size = size;
    job->seq = next_seq_++;
    ++in_flight_;
    pending_.push_back(std::move(job));
    pending_count_.store(pending_.size(), std::memory_order_release);
  }
  changed_.notify_all();
  if (on_queued_) on_queued_();
}

void ChunkPipeline::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  while (next_deliver_ != next_seq_) {
    if (threads_.empty() && !pending_.empty()) {
      Complete(lock, TakePending());
    } else {
      changed_.wait(lock);
    }
  }
}

bool ChunkPipeline::Help() {
  std::unique_lock<std::mutex> lock(mu_);
  if (pending_.empty()) return false;
  Complete(lock, TakePending());
  return true;
}

std::unique_ptr<ChunkPipeline::Job> ChunkPipeline::TakePending() {
  std::unique_ptr<Job> job = std::move(pending_.front());
  pending_.pop_front();
  pending_count_.store(pending_.size(), std::memory_order_release);
  return job;
}

void ChunkPipeline::Complete(std::unique_lock<std::mutex>& lock, std::unique_ptr<Job> job) {
  lock.unlock();
  const absl::Span<const uint8_t> in(job->in.data(), job->size);
  job->bytes = transform_ ? transform_(job->slot, in, job->out) : in;
  lock.lock();
  done_[job->seq % max_in_flight_] = std::move(job);
  // Deliver every chunk whose turn has come. Seqs in flight span fewer than max_in_flight_,
  // so a slot holds next_deliver_'s job or nothing; and while one thread delivers a job, its
  // slot is empty and next_deliver_ unchanged, so no other thread delivers meanwhile: one
  // at a time, in order.
  while (done_[next_deliver_ % max_in_flight_] != nullptr) {
    std::unique_ptr<Job> next = std::move(done_[next_deliver_ % max_in_flight_]);
    lock.unlock();
    deliver_(next->bytes);
    lock.lock();
    ++next_deliver_;
    --in_flight_;
    free_.push_back(std::move(next));
    changed_.notify_all();
  }
}

void ChunkPipeline::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !pending_.empty(); });
    if (pending_.empty()) return;  // stopping, and nothing left
    Complete(lock, TakePending());
  }
}

PipelinedOStream::PipelinedOStream(llvm::raw_ostream& target)
    : target_(target),
      pipeline_(1, kMaxInFlight, nullptr, [this](absl::Span<const uint8_t> bytes) {
        target_.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      }) {
  UseChunk();
}

PipelinedOStream::~PipelinedOStream() { Finish(); }

void PipelinedOStream::Finish() {
  flush();
  pipeline_.Drain();
}

void PipelinedOStream::UseChunk() {
  if (chunk_.size() < kChunkBytes) chunk_.resize(kChunkBytes);
  SetBuffer(reinterpret_cast<char*>(chunk_.data()), kChunkBytes);
}

void PipelinedOStream::write_impl(const char* ptr, size_t size) {
  pos_ += size;
  if (reinterpret_cast<const uint8_t*>(ptr) == chunk_.data()) {
    // Our own buffer, full (or flushed): hand it over as it is and continue in another.
    pipeline_.Submit(chunk_, size);
    UseChunk();
    return;
  }
  // A write larger than the buffer, passed through by raw_ostream: queue a copy of it.
  std::vector<uint8_t> copy(reinterpret_cast<const uint8_t*>(ptr),
                            reinterpret_cast<const uint8_t*>(ptr) + size);
  pipeline_.Submit(copy, size);
}

}  // namespace warptrace
