// Ordered background output: the producer (a trace writer) fills byte chunks; background
// threads transform them (deflate, or nothing) in parallel and deliver the results — write
// them to a stream — strictly in the order they were submitted. So the bytes that reach the
// stream are the same, byte for byte, whatever the number of threads, while the producer
// never waits on compression or on write(2) unless `max_in_flight` chunks are already queued.
//
// Two classes:
//   ChunkPipeline — the mechanism: Submit(chunk) hands a buffer over (and hands a recycled
//     one back, so steady state allocates nothing); Drain() waits until every chunk was
//     delivered.
//   PipelinedOStream — a raw_ostream whose buffer *is* the chunk being filled: what a writer
//     streams into it (llvm::json::OStream, raw_ostream <<) goes to `target` from a
//     background thread, without a copy on the producer's side.
//
//   llvm::raw_fd_ostream file(fd, false);
//   {
//     PipelinedOStream os(file);           // one background thread writes to `file`
//     ChromeTraceSink chrome(options, os);  // formats on this thread
//     ...
//     os.Finish();                          // everything is in `file` now
//   }
//   file.flush();                          // file.has_error() tells of write errors
//
// Memory: at most `max_in_flight` chunks (plus their transformed copies) exist at once, so a
// dump's output side stays constant whatever the trace's size.
//
// Thread-safety: Submit/Drain (and a PipelinedOStream) belong to one producer thread. The
// Transform runs on the workers, concurrently with itself (each call gets its worker's index,
// 0 <= worker < workers, for per-thread state); Deliver runs on the workers one call at a
// time, in submission order, each call happening-after the previous one. `target` (and
// whatever Deliver touches) must not be used by anyone else until Drain/Finish returned.
#ifndef WARPTRACE_BASE_CHUNK_PIPELINE_H_
#define WARPTRACE_BASE_CHUNK_PIPELINE_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/types/span.h"
#include "llvm/Support/raw_ostream.h"

namespace warptrace {

// The number of threads a dump uses by default: the cores this process may run on (at least 1).
int DefaultThreads();

class ChunkPipeline {
 public:
  // Turns `in` into the bytes to deliver: a span into `out` (the worker's scratch for this
  // chunk, kept between uses) or into `in` itself.
  using Transform = std::function<absl::Span<const uint8_t>(
      int worker, absl::Span<const uint8_t> in, std::vector<uint8_t>& out)>;
  using Deliver = std::function<void(absl::Span<const uint8_t> bytes)>;

  // `workers` >= 1 background threads; `transform` null delivers chunks as they are.
  ChunkPipeline(int workers, size_t max_in_flight, Transform transform, Deliver deliver);
  // Drains, then joins the workers.
  ~ChunkPipeline();
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // Queues chunk[0, size) and swaps `chunk` with a buffer no longer in use (its size is
  // whatever that buffer's was: possibly 0 — the caller resizes it). Blocks while
  // max_in_flight chunks are queued or being delivered.
  void Submit(std::vector<uint8_t>& chunk, size_t size);
  // Returns once every submitted chunk has been delivered.
  void Drain();

  int workers() const { return static_cast<int>(threads_.size()); }

 private:
  struct Job {
    uint64_t seq = 0;
    size_t size = 0;
    std::vector<uint8_t> in;
    std::vector<uint8_t> out;
  };
  void Work(int worker);

  const size_t max_in_flight_;
  const Transform transform_;
  const Deliver deliver_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Job>> pending_;  // submitted, not yet taken by a worker
  std::vector<std::unique_ptr<Job>> free_;    // delivered: buffers to hand back
  uint64_t next_seq_ = 0;      // the seq the next Submit gets
  uint64_t next_deliver_ = 0;  // the seq whose turn it is to be delivered
  size_t in_flight_ = 0;       // submitted and not yet delivered
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// A raw_ostream that hands its filled buffer to a ChunkPipeline of one worker writing into
// `target`. `target` keeps its own errors (has_error): check them after Finish.
class PipelinedOStream : public llvm::raw_ostream {
 public:
  static constexpr size_t kChunkBytes = size_t{1} << 20;
  static constexpr size_t kMaxInFlight = 4;

  explicit PipelinedOStream(llvm::raw_ostream& target);
  // Finish()es.
  ~PipelinedOStream() override;

  // Flushes this stream's buffer into the pipeline and waits until `target` has every byte.
  // The stream stays usable.
  void Finish();

 private:
  void write_impl(const char* ptr, size_t size) override;
  uint64_t current_pos() const override { return pos_; }
  void UseChunk();

  llvm::raw_ostream& target_;
  std::vector<uint8_t> chunk_;  // the raw_ostream buffer (kChunkBytes)
  uint64_t pos_ = 0;
  ChunkPipeline pipeline_;
};

}  // namespace warptrace

#endif  // WARPTRACE_BASE_CHUNK_PIPELINE_H_
