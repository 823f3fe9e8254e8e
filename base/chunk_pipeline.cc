#include "base/chunk_pipeline.h"

#include <sched.h>

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
                             Deliver deliver)
    : max_in_flight_(max_in_flight < 1 ? 1 : max_in_flight),
      transform_(std::move(transform)),
      deliver_(std::move(deliver)) {
  if (workers < 1) workers = 1;
  threads_.reserve(static_cast<size_t>(workers));
  for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { Work(w); });
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
  std::unique_ptr<Job> job;
  {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return in_flight_ < max_in_flight_; });
    if (!free_.empty()) {
      job = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (job == nullptr) job = std::make_unique<Job>();
  job->in.swap(chunk);
  job->size = size;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job->seq = next_seq_++;
    ++in_flight_;
    pending_.push_back(std::move(job));
  }
  changed_.notify_all();
}

void ChunkPipeline::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return next_deliver_ == next_seq_; });
}

void ChunkPipeline::Work(int worker) {
  for (;;) {
    std::unique_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping, and nothing left
      job = std::move(pending_.front());
      pending_.pop_front();
    }
    const absl::Span<const uint8_t> in(job->in.data(), job->size);
    const absl::Span<const uint8_t> bytes = transform_ ? transform_(worker, in, job->out) : in;
    {
      // Delivery in submission order: wait for the previous chunk's turn to end.
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [&] { return next_deliver_ == job->seq; });
    }
    deliver_(bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++next_deliver_;
      --in_flight_;
      free_.push_back(std::move(job));
    }
    changed_.notify_all();
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
