// OrderedPrefetch: the pieces of a sequential job made ahead of time by worker threads and
// consumed in order. fn(worker, i, result) fills result i for i = 0, 1, ..., n-1, on
// `workers` threads, at most `window` pieces ahead of the consumer; Next() hands them to the
// consumer in order. A parallel dump prepares units this way (decode, verify, timeline)
// while its calling thread hands the prepared ones to the sinks (profiler/dump/dump.h).
//
//   OrderedPrefetch<Batch> prefetch(batches, /*workers=*/2, /*window=*/6,
//                                   [&](int worker, size_t i, Batch& out) { ... });
//   for (size_t i = 0; i < batches; ++i) Consume(prefetch.Next());
//
// Memory: `window` Results, reused (a Result keeps its storage from piece to piece).
// Thread-safety: Next belongs to one consumer thread; fn runs on the workers, one call per
// piece, concurrently for different pieces (`worker`, 0 <= worker < workers, names the thread
// for per-thread state). Destroying the prefetch early (the consumer stopped) waits for the
// pieces being made and makes no more.
// Exceptions: an exception fn throws on a worker (std::bad_alloc) is rethrown by the Next()
// that would have returned its piece; no piece after it is made. A worker that cannot be
// started throws from the constructor (std::system_error), the others joined.
#ifndef WARPTRACE_BASE_ORDERED_PREFETCH_H_
#define WARPTRACE_BASE_ORDERED_PREFETCH_H_

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace warptrace {

template <typename Result>
class OrderedPrefetch {
 public:
  using Fn = std::function<void(int worker, size_t i, Result& result)>;

  OrderedPrefetch(size_t n, int workers, size_t window, Fn fn)
      : n_(n), fn_(std::move(fn)), slots_(window < 1 ? 1 : window) {
    if (workers < 1) workers = 1;
    threads_.reserve(static_cast<size_t>(workers));
    try {
      for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { Work(w); });
    } catch (...) {
      Stop();
      throw;
    }
  }
  ~OrderedPrefetch() { Stop(); }
  OrderedPrefetch(const OrderedPrefetch&) = delete;
  OrderedPrefetch& operator=(const OrderedPrefetch&) = delete;

  // Result i of the i-th call (at most n calls), once it is made; valid until the next call.
  Result& Next() {
    std::unique_lock<std::mutex> lock(mu_);
    if (consuming_) {  // the previous result is done with: its slot may take a new piece
      ++consumed_;
      consuming_ = false;
      changed_.notify_all();
    }
    Slot& slot = slots_[consumed_ % slots_.size()];
    changed_.wait(lock, [&] { return slot.ready == consumed_ || failed_ <= consumed_; });
    if (slot.ready != consumed_) std::rethrow_exception(failure_);
    consuming_ = true;
    return slot.result;
  }

 private:
  static constexpr size_t kNone = std::numeric_limits<size_t>::max();
  struct Slot {
    size_t ready = kNone;  // the piece this slot holds, made; kNone while none is
    Result result;
  };

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  void Work(int worker) {
    for (;;) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(mu_);
        changed_.wait(lock, [&] {
          return stop_ || (next_ < n_ && next_ < consumed_ + slots_.size());
        });
        if (stop_) return;
        i = next_++;
      }
      Slot& slot = slots_[i % slots_.size()];
      try {
        fn_(worker, i, slot.result);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        if (i < failed_) {  // the earliest piece that failed is the one the consumer meets
          failed_ = i;
          failure_ = std::current_exception();
        }
        stop_ = true;  // no more pieces: the consumer stops at piece failed_
        changed_.notify_all();
        return;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        slot.ready = i;
      }
      changed_.notify_all();
    }
  }

  const size_t n_;
  const Fn fn_;
  std::vector<Slot> slots_;
  std::mutex mu_;
  std::condition_variable changed_;
  size_t next_ = 0;        // the next piece a worker takes
  size_t consumed_ = 0;    // pieces the consumer is done with
  bool consuming_ = false; // the consumer holds piece consumed_
  bool stop_ = false;
  size_t failed_ = kNone;         // the first piece whose fn threw (kNone: none)
  std::exception_ptr failure_;    // its exception
  std::vector<std::thread> threads_;
};

}  // namespace warptrace

#endif  // WARPTRACE_BASE_ORDERED_PREFETCH_H_
