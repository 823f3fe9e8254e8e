// The state of one resident block on the host backend: its fibers (one per CUDA thread),
// its barriers, warp collectives, mbarrier waiters, shared memory and cp.async groups, and
// the description of what each thread waits on (for deadlock reports).
//
// Internal to the runtime (jit/host/runtime/runtime.h). A block lives on one worker thread and all
// of this is touched only from that thread (its fibers never run elsewhere), so nothing here
// is locked. Operations that make a fiber wait return Wait::kPark; the worker then switches
// away from it, and resumes it when another fiber of the block releases it (MakeReady).
#ifndef WARPTRACE_JIT_HOST_BLOCK_H_
#define WARPTRACE_JIT_HOST_BLOCK_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jit/host/runtime/fiber.h"
#include "jit/host/runtime/sanitizer.h"
#include "jit/host/device/host_abi.h"

namespace warptrace::host {

class Block;
class Cluster;

// What a fiber waits on, for scheduling and for deadlock reports.
enum class WaitKind {
  kNone,        // running or ready
  kBarrier,     // bar.sync (__syncthreads is barrier 0)
  kWarp,        // a warp collective
  kMbarrier,    // mbarrier try_wait
  kSpin,        // a spin-wait hook: runnable, but polling
  kExchange,    // a warp- or warpgroup-wide operand exchange (host_abi.h)
  kClusterBarrier,  // barrier.cluster.wait (cluster.h)
  kExited,
};

struct alignas(64) Fiber {
  // The fields a barrier release writes for every waiter, together in the first cache line
  // (Fiber is 64-byte aligned), so a release touches one line per waiter.
  Fiber* next_ready = nullptr;  // intrusive ready queue of the worker / a barrier's waiters
  WaitKind wait = WaitKind::kNone;
  uint64_t result = 0;       // a completed collective's result for this thread
  // Virtual time (host_abi.h) when the fiber last stopped running, or at which a
  // synchronization point released it.
  int64_t vtime = 0;
  FiberContext context;
  Block* block = nullptr;
  void* owner = nullptr;        // the worker running the block
  int64_t resumed_wall = 0;  // steady-clock ns when last resumed
  WarptraceHostThread abi{};
  // The wait's object: barrier id, warp op, mbarrier address, polled address, or the
  // exchange's group size (wait_detail: the group's index).
  uint64_t wait_object = 0;
  uint64_t wait_detail = 0;  // mbarrier parity, polled value, warp mask
  const char* wait_what = "";
  // The previous spin poll (kind/address/value): a poll identical to the previous one,
  // with nothing else done in between, made no progress.
  bool spin_unchanged = false;
  bool last_was_spin = false;  // the fiber's last yield was a spin poll
  bool aborted = false;      // resumed to unwind: the launch failed
  bool started = false;
  // cp.async groups: committed groups (oldest first) and the open one.
  struct Copy {
    void* dst;
    const void* src;
    uint32_t bytes;
  };
  std::deque<std::vector<Copy>> copy_groups;
  std::vector<Copy> open_copies;
  // The fiber's stack, and the last fault it took (set by the fault handler).
  char* stack_lo = nullptr;
  char* stack_hi = nullptr;
  uintptr_t fault_address = 0;
  int fault_signal = 0;
};

// A worker's runnable fibers, first in first out, linked through Fiber::next_ready (a
// fiber is in at most one chain: this queue or one barrier's waiters).
class ReadyQueue {
 public:
  void Push(Fiber* f) { Splice(f, f, 1); }
  // Appends the chain first -> ... -> last (`n` fibers linked through next_ready).
  void Splice(Fiber* first, Fiber* last, uint64_t n) {
    last->next_ready = nullptr;
    if (tail_ == nullptr) {
      head_ = first;
    } else {
      tail_->next_ready = first;
    }
    tail_ = last;
    size_ += n;
  }
  Fiber* Pop() {
    Fiber* f = head_;
    if (f == nullptr) return nullptr;
    head_ = f->next_ready;
    if (head_ == nullptr) tail_ = nullptr;
    --size_;
    return f;
  }
  uint64_t size() const { return size_; }
  Fiber* front() const { return head_; }

 private:
  Fiber* head_ = nullptr;
  Fiber* tail_ = nullptr;
  uint64_t size_ = 0;
};

enum class Wait { kDone, kPark };

class Block {
 public:
  // `fibers` must hold block_dim.Count() entries; static_shared at least 48 KiB
  // (WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES); dynamic_shared the launch's dynamic shared
  // memory (never null).
  Block(ReadyQueue* ready, uint64_t linear, WarptraceHostDim block_idx,
        WarptraceHostDim block_dim, WarptraceHostDim grid_dim, uint32_t sm_id,
        Fiber* fibers, uint32_t num_threads, char* static_shared, char* dynamic_shared,
        const WarptraceHostRuntime* rt, const WarptraceHostClock* clock, int64_t start_vtime);

  uint64_t linear() const { return linear_; }
  uint32_t num_threads() const { return num_threads_; }
  Fiber* fiber(uint32_t i) { return &fibers_[i]; }
  uint32_t live() const { return live_; }
  // Every live thread waits on a barrier, collective or mbarrier of this block: nothing can
  // release any of them.
  // In a cluster: every live thread of every CTA of the cluster waits.
  bool Deadlocked() const {
    return live_ > 0 && parked_ == live_ && (cluster_ == nullptr || ClusterDeadlocked());
  }
  bool Finished() const { return live_ == 0; }
  uint32_t parked() const { return parked_; }
  // The block's thread-block cluster (cluster.h) and its rank there; null without clusters.
  void SetCluster(Cluster* cluster, uint32_t rank) {
    cluster_ = cluster;
    cluster_rank_ = rank;
  }
  Cluster* cluster() const { return cluster_; }
  uint32_t cluster_rank() const { return cluster_rank_; }

  // The operations of WarptraceHostRuntime for `fiber` of this block. On an error they
  // set `*error` and return kDone (the caller fails the launch). `fiber->vtime` is the
  // caller's virtual time on entry; a completed synchronization sets it (and its waiters')
  // to the latest arrival's.
  Wait Barrier(Fiber* fiber, uint32_t id, uint32_t count, bool wait, int op, bool predicate,
               const char* what, std::string* error);
  Wait WarpCollective(Fiber* fiber, int op, uint32_t mask, uint64_t value, uint32_t arg,
                      const char* what, std::string* error);
  uint32_t ActiveMask(const Fiber* fiber) const;
  // WarptraceHostRuntime::exchange (host_abi.h): on completion every member's `result` is
  // the address of the group's contributions.
  Wait Exchange(Fiber* fiber, uint32_t group, const void* operands, uint32_t bytes,
                const char* what, std::string* error);
  void* Shared(uint32_t site, uint64_t bytes, uint64_t align, uint64_t element_bytes,
               const char* name, std::string* error);
  // Sanitize mode (sanitizer.h): the block's shadow, set before its threads run; null
  // otherwise (then Shared places arrays without redzones).
  void SetShadow(std::unique_ptr<BlockShadow> shadow) { shadow_ = std::move(shadow); }
  BlockShadow* shadow() const { return shadow_.get(); }
  // The races check (sanitizer.h, races.h): the domain of the block, or of its cluster
  // (shared by its CTAs); null otherwise.
  void SetRaces(std::shared_ptr<RaceDomain> races) { races_ = std::move(races); }
  RaceDomain* races() const { return races_.get(); }
  // Arrivals at named barrier `id` in its current phase (0 right after it completed).
  uint32_t BarrierArrived(uint32_t id) const { return barriers_[id].arrived; }
  Wait MbarrierWait(Fiber* fiber, unsigned long long* bar, uint32_t parity, const char* what);
  void MbarrierArrived(Fiber* fiber, unsigned long long* bar, bool completed);
  // The latest virtual time any thread of the block reached.
  int64_t EndVtime() const;
  // A thread finished. Errors when a pending warp collective names it.
  void Exit(Fiber* fiber, std::string* error);
  // A parked fiber was resumed (pushed on the ready queue by the caller) or an aborted one
  // unwound.
  void Unpark() { --parked_; }
  // Forgets every barrier's and mbarrier's waiters (the launch failed: the caller makes
  // them ready to unwind).
  void DropWaiters();
  void Park() { ++parked_; }

  // "block (x,y,z)".
  std::string Name() const;
  // "full[1] (static shared memory offset 24)" for an mbarrier at `bar`.
  std::string SharedName(const char* bar) const;
  // One line per run of consecutive threads in the same state:
  // "threads 0-62: wait at __syncthreads (barrier 0: 63 of 64 threads arrived)".
  std::string Census() const;

 private:
  struct NamedBarrier {
    uint32_t expected = 0;
    uint32_t arrived = 0;
    uint32_t true_count = 0;
    int64_t latest = 0;  // latest arrival's virtual time this phase
    // The waiting fibers in arrival order, linked through next_ready: spliced whole into
    // the ready queue when the phase completes. (Measured: faster than an array of
    // waiters linked at the release, BM_BlockBarrier/384 20.0 against 22.5 ms.)
    Fiber* first_waiter = nullptr;
    Fiber* last_waiter = nullptr;
  };
  bool ClusterDeadlocked() const;
  // The cold paths of Barrier: set *error, return kDone.
  Wait BarrierIdError(uint32_t id, const char* what, std::string* error) const;
  Wait BarrierCountError(uint32_t id, uint32_t count, const char* what,
                         std::string* error) const;
  struct MbarrierTimes {
    const unsigned long long* bar;
    int64_t latest;        // latest arrival this phase
    int64_t last_release;  // when the last completed phase completed
  };
  MbarrierTimes& TimesOf(const unsigned long long* bar);
  struct Collective {
    int op = 0;
    uint32_t mask = 0;
    uint32_t arrived = 0;
    const char* what = "";
    int64_t latest = 0;
    uint64_t values[32] = {};
    uint32_t args[32] = {};
    Fiber* fibers[32] = {};
  };
  struct WarpState {
    uint32_t exited = 0;  // lanes that exited
    uint32_t absent = 0;  // lanes a partial last warp does not have (never waited for)
    std::vector<Collective> pending;
  };

  void Complete(Collective& c);
  std::string Describe(const Fiber& fiber) const;

  // One warp's or warpgroup's operand exchange (Exchange): the contributions of the
  // exchange in progress go to buffers[fill]; the previous exchange's buffer, which slower
  // members may still be reading, is the other one.
  struct ExchangeGroup {
    uint32_t first = 0;   // linear thread id of the group's position 0
    uint32_t size = 0;    // 32 or 128
    uint32_t arrived = 0;
    uint64_t arrived_mask[2] = {};  // by position
    uint32_t bytes = 0;
    const char* what = "";
    int64_t latest = 0;
    uint32_t fill = 0;
    std::vector<unsigned char> buffers[2];
    // The parked members in arrival order, linked through next_ready.
    Fiber* first_waiter = nullptr;
    Fiber* last_waiter = nullptr;
    uint32_t waiting = 0;
    bool Has(uint32_t position) const { return (arrived_mask[position / 64] >> (position % 64)) & 1u; }
  };
  // The group of `size` (32 or 128) holding `fiber`, created on first use.
  ExchangeGroup& ExchangeGroupOf(const Fiber& fiber, uint32_t size);
  // The threads of positions first..first+size-1 that have exited, as "3, 7-9" ("" if none).
  std::string ExitedIn(uint32_t first, uint32_t size) const;
  std::string DescribeExchange(const Fiber& fiber) const;
  // Errors for `fiber` exiting while an exchange of its group waits for it ("" if none).
  std::string ExchangeExitError(const Fiber& fiber) const;
  // The group's last member `last` arrived: every member gets the operands at `buffer`
  // (and the latest arrival's time), the waiters are ready again, the group flips buffers.
  void CompleteExchange(ExchangeGroup& g, Fiber* last, const unsigned char* buffer);

  ReadyQueue* ready_;
  uint64_t linear_;
  WarptraceHostDim block_idx_;
  uint32_t num_threads_;
  Fiber* fibers_;
  char* static_shared_;
  char* dynamic_shared_;
  uint64_t static_shared_bytes_ = 0;
  std::vector<int64_t> site_offsets_;  // by site; -1: not yet placed
  // By site, for deadlock reports: the declaration's name and bytes.
  struct SiteDecl {
    const char* name = "";
    uint64_t bytes = 0;
  };
  std::vector<SiteDecl> site_decls_;
  uint32_t live_;
  uint32_t parked_ = 0;
  Cluster* cluster_ = nullptr;
  uint32_t cluster_rank_ = 0;
  NamedBarrier barriers_[WARPTRACE_HOST_NUM_NAMED_BARRIERS];
  std::vector<WarpState> warps_;
  std::vector<Fiber*> mbarrier_waiters_;
  std::vector<MbarrierTimes> mbarrier_times_;
  // Exchanges by group: [0] per warp, [1] per warpgroup (sized on first use).
  std::vector<ExchangeGroup> exchanges_[2];
  std::unique_ptr<BlockShadow> shadow_;
  std::shared_ptr<RaceDomain> races_;
};

// Inline: the hot path of every __syncthreads of every thread.
inline Wait Block::Barrier(Fiber* fiber, uint32_t id, uint32_t count, bool wait, int op,
                           bool predicate, const char* what, std::string* error) {
  if (id >= WARPTRACE_HOST_NUM_NAMED_BARRIERS) [[unlikely]] {
    return BarrierIdError(id, what, error);
  }
  if (count == 0) count = num_threads_;
  NamedBarrier& b = barriers_[id];
  if (b.arrived == 0) {
    if (count > num_threads_ || (count % 32 != 0 && count != num_threads_)) [[unlikely]] {
      return BarrierCountError(id, count, what, error);
    }
    b.expected = count;
    b.true_count = 0;
    b.latest = fiber->vtime;
  } else if (b.expected != count) [[unlikely]] {
    return BarrierCountError(id, count, what, error);
  }
  ++b.arrived;
  if (fiber->vtime > b.latest) b.latest = fiber->vtime;
  if (predicate) ++b.true_count;
  if (b.arrived == b.expected) {
    uint64_t result = b.true_count;
    if (op == WARPTRACE_HOST_BARRIER_AND) result = b.true_count == b.expected;
    if (op == WARPTRACE_HOST_BARRIER_OR) result = b.true_count > 0;
    uint32_t released = 0;
    for (Fiber* w = b.first_waiter; w != nullptr; w = w->next_ready) {
      w->result = result;
      w->vtime = b.latest;
      w->wait = WaitKind::kNone;
      ++released;
    }
    if (released > 0) {
      parked_ -= released;
      ready_->Splice(b.first_waiter, b.last_waiter, released);
    }
    b.first_waiter = b.last_waiter = nullptr;
    b.arrived = 0;
    fiber->result = result;
    fiber->vtime = b.latest;
    return Wait::kDone;
  }
  if (!wait) return Wait::kDone;
  fiber->next_ready = nullptr;
  if (b.last_waiter == nullptr) {
    b.first_waiter = fiber;
  } else {
    b.last_waiter->next_ready = fiber;
  }
  b.last_waiter = fiber;
  fiber->wait = WaitKind::kBarrier;
  fiber->wait_object = id;
  fiber->wait_what = what;
  ++parked_;
  return Wait::kPark;
}

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_BLOCK_H_
