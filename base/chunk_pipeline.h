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
// Who transforms (ordered_pipeline.h, which this is with byte chunks): `workers` background
// threads, any thread that calls Help() (a thread that would otherwise wait, e.g. for the
// producer), and the producer whenever it would wait (`max_in_flight` chunks in flight in
// Submit, and in Drain). With workers = 0 queued chunks wait for Help() callers or the
// producer. So on a machine with fewer cores than busy threads the work goes to whichever
// thread is free, instead of a thread of its own competing for a core.
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

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/types/span.h"
#include "base/ordered_pipeline.h"
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
  // Drops the chunks still queued (Drain first to have them delivered), lets the other
  // threads finish the chunk they hold, and joins the workers.
  ~ChunkPipeline();
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // A transform or deliver that threw (on any thread) is rethrown by the next Submit or
  // Drain (ordered_pipeline.h); nothing more is delivered after it.
  // Queues chunk[0, size) and swaps `chunk` with a buffer no longer in use (its size is
  // whatever that buffer's was: possibly 0 — the caller resizes it). While max_in_flight
  // chunks are queued or being delivered it transforms a queued chunk itself, or waits.
  void Submit(std::vector<uint8_t>& chunk, size_t size);
  // Returns once every submitted chunk has been delivered, transforming what is still
  // queued on this thread meanwhile.
  void Drain() { pipeline_.Drain(); }

  // Transforms one queued chunk on the calling thread, and delivers every chunk whose turn
  // has come; false when no chunk was queued. Any thread.
  bool Help() { return pipeline_.Help(); }
  // Whether a chunk is queued, not yet taken by anyone: what a helper waits for.
  bool HasPending() const { return pipeline_.HasPending(); }

  int workers() const { return pipeline_.workers(); }

 private:
  struct Chunk {
    std::vector<uint8_t> in;
    size_t size = 0;
    std::vector<uint8_t> out;
    absl::Span<const uint8_t> bytes;  // what the transform made, to deliver
  };

  Chunk staging_;  // the producer's: swapped into the pipeline by Submit
  OrderedPipeline<Chunk> pipeline_;
};

// A raw_ostream that hands its filled buffer to a ChunkPipeline of one worker writing into
// `target`. `target` keeps its own errors (has_error): check them after Finish.
//
// Call Finish before destroying it: the destructor writes nothing (no I/O in a destructor,
// which may run while an exception unwinds the writer above it): bytes not yet handed on by
// Finish are dropped, and the write running on the worker is waited for.
class PipelinedOStream : public llvm::raw_ostream {
 public:
  static constexpr size_t kChunkBytes = size_t{1} << 20;
  static constexpr size_t kMaxInFlight = 4;

  explicit PipelinedOStream(llvm::raw_ostream& target);
  // Drops what Finish did not hand on (see above).
  ~PipelinedOStream() override;

  // Flushes this stream's buffer into the pipeline and waits until `target` has every byte.
  // The stream stays usable. Rethrows an exception of the worker's write.
  void Finish();

 private:
  void write_impl(const char* ptr, size_t size) override;
  uint64_t current_pos() const override { return pos_; }
  void UseChunk();

  llvm::raw_ostream& target_;
  std::vector<uint8_t> chunk_;  // the raw_ostream buffer (kChunkBytes)
  uint64_t pos_ = 0;
  bool dropping_ = false;  // destroyed: write_impl drops what the buffer held
  ChunkPipeline pipeline_;
};

}  // namespace warptrace

#endif  // WARPTRACE_BASE_CHUNK_PIPELINE_H_
