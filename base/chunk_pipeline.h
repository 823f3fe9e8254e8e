// Ordered background output: the producer (a trace writer) fills byte chunks; other threads
// transform them (deflate, or nothing) in parallel and deliver the results — write them to a
// stream — strictly in the order they were submitted. So the bytes that reach the stream are
// the same, byte for byte, whatever the number of threads, while the producer never waits on
// compression or on write(2) unless `max_in_flight` chunks are already queued.
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
// Who transforms. `workers` background threads, and any thread that calls Help() (a thread
// that would otherwise wait, e.g. for the producer). With workers = 0 there are no
// background threads: queued chunks wait for Help() callers, and the producer transforms
// them itself when `max_in_flight` are queued (in Submit) and in Drain. So on a machine with
// fewer cores than busy threads the work goes to whichever thread is free, instead of a
// thread of its own competing for a core.
//
// Memory: at most `max_in_flight` chunks (plus their transformed copies) exist at once, so a
// dump's output side stays constant whatever the trace's size.
//
// Thread-safety: Submit/Drain (and a PipelinedOStream) belong to one producer thread; Help
// and HasPending may be called from any thread. The Transform runs concurrently with itself
// (each call gets its chunk's slot, 0 <= slot < max_in_flight, which no other call running
// at the same time has: for per-call state); Deliver runs one call at a time, in submission
// order, each call happening-after the previous one, on whichever thread completed the
// chunk. `target` (and whatever Deliver touches) must not be used by anyone else until
// Drain/Finish returned.
#ifndef WARPTRACE_BASE_CHUNK_PIPELINE_H_
#define WARPTRACE_BASE_CHUNK_PIPELINE_H_

#include <atomic>
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
  // Turns `in` into the bytes to deliver: a span into `out` (the chunk's scratch, kept
  // between uses) or into `in` itself. `slot` (< max_in_flight) is not used by any other
  // call running at the same time.
  using Transform = std::function<absl::Span<const uint8_t>(
      int slot, absl::Span<const uint8_t> in, std::vector<uint8_t>& out)>;
  using Deliver = std::function<void(absl::Span<const uint8_t> bytes)>;
  // Called (on the producer's thread, with no lock held) after a chunk was queued: a way to
  // wake a thread that helps (see Help).
  using OnQueued = std::function<void()>;

  // `workers` >= 0 background threads (see above for 0); `transform` null delivers chunks as
  // they are.
  ChunkPipeline(int workers, size_t max_in_flight, Transform transform, Deliver deliver,
                OnQueued on_queued = nullptr);
  // Drains, then joins the workers.
  ~ChunkPipeline();
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // Queues chunk[0, size) and swaps `chunk` with a buffer no longer in use (its size is
  // whatever that buffer's was: possibly 0 — the caller resizes it). While max_in_flight
  // chunks are queued or being delivered it waits — with workers = 0, transforming queued
  // chunks itself.
  void Submit(std::vector<uint8_t>& chunk, size_t size);
  // Returns once every submitted chunk has been delivered (with workers = 0, transforming
  // what is still queued on this thread).
  void Drain();

  // Transforms one queued chunk on the calling thread, and delivers every chunk whose turn
  // has come; false when no chunk was queued. Any thread.
  bool Help();
  // Whether a chunk is queued, not yet taken by anyone: what a helper waits for.
  bool HasPending() const { return pending_count_.load(std::memory_order_acquire) > 0; }

  int workers() const { return static_cast<int>(threads_.size()); }

 private:
  struct Job {
    uint64_t seq = 0;
    size_t size = 0;
    int slot = 0;
    std::vector<uint8_t> in;
    std::vector<uint8_t> out;
    absl::Span<const uint8_t> bytes;  // what the transform made, to deliver
  };
  // The oldest queued job (pending_ not empty; mu_ held).
  std::unique_ptr<Job> TakePending();
  // Transforms `job` with mu_ released, then delivers, in order, every job whose turn has
  // come (none while another thread delivers: that one goes on with them). `lock` holds
  // mu_ on entry and on return.
  void Complete(std::unique_lock<std::mutex>& lock, std::unique_ptr<Job> job);
  void Work();

  const size_t max_in_flight_;
  const Transform transform_;
  const Deliver deliver_;
  const OnQueued on_queued_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Job>> pending_;  // submitted, not yet taken
  std::atomic<size_t> pending_count_{0};      // pending_.size(), readable without mu_
  std::vector<std::unique_ptr<Job>> done_;    // transformed, by seq % max_in_flight_
  std::vector<std::unique_ptr<Job>> free_;    // delivered: buffers to hand back
  int jobs_made_ = 0;          // the next job's slot
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
