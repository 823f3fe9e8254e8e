// OrderedPipeline<Item>: items a producer fills, transformed by whichever thread is free and
// delivered strictly in the order they were submitted. ChunkPipeline (chunk_pipeline.h) is
// this with byte chunks (deflate, write); the Perfetto writer uses it with batches of trace
// units it formats into packets on every core (profiler/outputs/perfetto/perfetto_writer.h).
//
//   OrderedPipeline<Batch> pipeline(workers, /*max_in_flight=*/2 * workers + 2,
//       [&](int slot, Batch& b) { Format(formatters[slot], b); },   // any thread
//       [&](Batch& b) { Write(b); });                                // in order, one at a time
//   Batch batch;
//   while (...) { Fill(batch); pipeline.Submit(batch); }  // batch: a recycled one after
//   pipeline.Drain();                                     // everything delivered
//
// Who transforms. `workers` background threads; any thread that calls Help(); and the
// producer itself whenever it would wait: in Submit while max_in_flight items are in flight,
// and in Drain, it transforms a queued item if there is one instead of sleeping. With
// workers = 0 there are no background threads: queued items wait for Help() callers or for
// the producer. So on a machine with fewer cores than busy threads the work goes to whichever
// thread is free.
//
// Memory: at most max_in_flight items exist besides the producer's, and they are recycled:
// Submit hands back an item delivered earlier (its storage kept) or, until max_in_flight
// exist, a new one. So steady state allocates nothing.
//
// Exceptions: a transform or deliver that throws (std::bad_alloc, on whichever thread ran
// it) stops the pipeline: nothing more is transformed or delivered, and the producer's next
// Submit or Drain rethrows the first such exception. Help() on another thread never throws
// them. A thread that cannot be started throws from the constructor (std::system_error),
// with the threads already started joined.
//
// Destruction does no work: items still queued are dropped (call Drain first to have them
// delivered); the items being transformed or delivered on other threads are finished.
//
// Thread-safety: Submit and Drain belong to one producer thread; Help and HasPending may be
// called from any thread. The Transform runs concurrently with itself, each call with its
// item's slot (0 <= slot < max_in_flight), which no other call running at the same time has:
// for per-call state. Deliver runs one call at a time, in submission order, each call
// happening-after the previous one, on whichever thread completed the item.
#ifndef WARPTRACE_BASE_ORDERED_PIPELINE_H_
#define WARPTRACE_BASE_ORDERED_PIPELINE_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace warptrace {

template <typename Item>
class OrderedPipeline {
 public:
  using Transform = std::function<void(int slot, Item& item)>;
  using Deliver = std::function<void(Item& item)>;
  // Called (on the producer's thread, with no lock held) after an item was queued: a way to
  // wake a thread that helps (see Help).
  using OnQueued = std::function<void()>;

  // `workers` >= 0 background threads (see above for 0); `transform` null delivers items as
  // they are.
  OrderedPipeline(int workers, size_t max_in_flight, Transform transform, Deliver deliver,
                  OnQueued on_queued = nullptr)
      : max_in_flight_(max_in_flight < 1 ? 1 : max_in_flight),
        transform_(std::move(transform)),
        deliver_(std::move(deliver)),
        on_queued_(std::move(on_queued)),
        done_(max_in_flight_) {
    // Room for every job that can exist, so that handing a delivered one back (Complete,
    // on a worker's thread, outside its try) never allocates: under a memory limit that
    // would throw there and terminate the process.
    free_.reserve(max_in_flight_);
    threads_.reserve(static_cast<size_t>(std::max(workers, 0)));
    try {
      for (int w = 0; w < workers; ++w) threads_.emplace_back([this] { Work(); });
    } catch (...) {
      Stop();
      throw;
    }
  }
  // Drops what is still queued, lets the other threads finish the item they hold, and joins
  // the workers: no transform or deliver starts here.
  ~OrderedPipeline() { Stop(); }
  OrderedPipeline(const OrderedPipeline&) = delete;
  OrderedPipeline& operator=(const OrderedPipeline&) = delete;

  // Queues `item` and swaps it with an item no longer in use (delivered earlier, or new).
  // While max_in_flight items are in flight it transforms a queued one on this thread, or
  // waits.
  void Submit(Item& item) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      RethrowFailure();
      while (in_flight_ >= max_in_flight_) {
        HelpOrWait(lock);
        RethrowFailure();
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
      using std::swap;
      swap(job->item, item);
      job->seq = next_seq_++;
      ++in_flight_;
      pending_.push_back(std::move(job));
      pending_count_.store(pending_.size(), std::memory_order_release);
    }
    changed_.notify_all();
    if (on_queued_) on_queued_();
  }

  // Returns once every submitted item has been delivered, transforming queued ones on this
  // thread meanwhile.
  void Drain() {
    std::unique_lock<std::mutex> lock(mu_);
    RethrowFailure();
    while (next_deliver_ != next_seq_) {
      HelpOrWait(lock);
      RethrowFailure();
    }
  }

  // Transforms one queued item on the calling thread, and delivers every item whose turn has
  // come; false when none was queued. Any thread.
  bool Help() {
    std::unique_lock<std::mutex> lock(mu_);
    if (pending_.empty() || failure_ != nullptr) return false;
    Complete(lock, TakePending());
    return true;
  }
  // Whether an item is queued, not yet taken by anyone: what a helper waits for.
  bool HasPending() const { return pending_count_.load(std::memory_order_acquire) > 0; }

  int workers() const { return static_cast<int>(threads_.size()); }

 private:
  struct Job {
    uint64_t seq = 0;
    int slot = 0;
    Item item;
  };

  // Joins the workers after dropping what is queued (the destructor, or a failed start).
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      pending_.clear();
      pending_count_.store(0, std::memory_order_release);
    }
    changed_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  // The first exception a transform or deliver threw, on the producer's thread (mu_ held).
  void RethrowFailure() {
    if (failure_ != nullptr) std::rethrow_exception(failure_);
  }

  // A queued item transformed here, or a wait for a change (mu_ held by `lock`).
  void HelpOrWait(std::unique_lock<std::mutex>& lock) {
    if (failure_ != nullptr) return;
    if (!pending_.empty()) {
      Complete(lock, TakePending());
    } else {
      changed_.wait(lock);
    }
  }

  // The oldest queued job (pending_ not empty; mu_ held).
  std::unique_ptr<Job> TakePending() {
    std::unique_ptr<Job> job = std::move(pending_.front());
    pending_.pop_front();
    pending_count_.store(pending_.size(), std::memory_order_release);
    return job;
  }

  // Transforms `job` with mu_ released, then delivers, in order, every job whose turn has
  // come. `lock` holds mu_ on entry and on return.
  void Complete(std::unique_lock<std::mutex>& lock, std::unique_ptr<Job> job) {
    lock.unlock();
    try {
      if (transform_) transform_(job->slot, job->item);
    } catch (...) {
      lock.lock();
      Fail(std::current_exception());
      return;
    }
    lock.lock();
    if (failure_ != nullptr) return;
    done_[job->seq % max_in_flight_] = std::move(job);
    // Seqs in flight span fewer than max_in_flight_, so a slot holds next_deliver_'s job or
    // nothing; and while one thread delivers a job, its slot is empty and next_deliver_
    // unchanged, so no other thread delivers meanwhile: one at a time, in order.
    while (done_[next_deliver_ % max_in_flight_] != nullptr) {
      std::unique_ptr<Job> next = std::move(done_[next_deliver_ % max_in_flight_]);
      lock.unlock();
      try {
        deliver_(next->item);
      } catch (...) {
        lock.lock();
        Fail(std::current_exception());
        return;
      }
      lock.lock();
      ++next_deliver_;
      --in_flight_;
      free_.push_back(std::move(next));
      changed_.notify_all();
    }
  }

  // Records the first failure and wakes everyone: nothing more is transformed or delivered
  // (mu_ held).
  void Fail(std::exception_ptr e) {
    if (failure_ == nullptr) failure_ = std::move(e);
    pending_.clear();
    pending_count_.store(0, std::memory_order_release);
    changed_.notify_all();
  }

  void Work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      changed_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping, and nothing left
      Complete(lock, TakePending());
    }
  }

  const size_t max_in_flight_;
  const Transform transform_;
  const Deliver deliver_;
  const OnQueued on_queued_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Job>> pending_;  // submitted, not yet taken
  std::atomic<size_t> pending_count_{0};      // pending_.size(), readable without mu_
  std::vector<std::unique_ptr<Job>> done_;    // transformed, by seq % max_in_flight_
  std::vector<std::unique_ptr<Job>> free_;    // delivered: items to hand back
  int jobs_made_ = 0;          // the next job's slot
  uint64_t next_seq_ = 0;      // the seq the next Submit gets
  uint64_t next_deliver_ = 0;  // the seq whose turn it is to be delivered
  size_t in_flight_ = 0;       // submitted and not yet delivered
  bool stop_ = false;
  std::exception_ptr failure_;  // the first exception of a transform or deliver
  std::vector<std::thread> threads_;
};

}  // namespace warptrace

#endif  // WARPTRACE_BASE_ORDERED_PIPELINE_H_
