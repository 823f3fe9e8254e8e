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
    : pipeline_(
          workers, max_in_flight,
          [transform = std::move(transform)](int slot, Chunk& chunk) {
            const absl::Span<const uint8_t> in(chunk.in.data(), chunk.size);
            chunk.bytes = transform ? transform(slot, in, chunk.out) : in;
          },
          [deliver = std::move(deliver)](Chunk& chunk) { deliver(chunk.bytes); },
          std::move(on_queued)) {}

ChunkPipeline::~ChunkPipeline() = default;

void ChunkPipeline::Submit(std::vector<uint8_t>& chunk, size_t size) {
  staging_.in.swap(chunk);
  staging_.size = size;
  pipeline_.Submit(staging_);
  chunk.swap(staging_.in);
}

PipelinedOStream::PipelinedOStream(llvm::raw_ostream& target)
    : target_(target),
      pipeline_(1, kMaxInFlight, nullptr, [this](absl::Span<const uint8_t> bytes) {
        target_.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      }) {
  UseChunk();
}

PipelinedOStream::~PipelinedOStream() {
  // raw_ostream wants an empty buffer at destruction: empty it into nothing.
  dropping_ = true;
  flush();
}

void PipelinedOStream::Finish() {
  flush();
  pipeline_.Drain();
}

void PipelinedOStream::UseChunk() {
  if (chunk_.size() < kChunkBytes) chunk_.resize(kChunkBytes);
  SetBuffer(reinterpret_cast<char*>(chunk_.data()), kChunkBytes);
}

void PipelinedOStream::write_impl(const char* ptr, size_t size) {
  if (dropping_) return;
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
