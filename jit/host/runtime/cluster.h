// One thread-block cluster on the host backend: its CTAs (co-scheduled on one worker, as a
// GPC holds a cluster's CTAs on one GPU), the cluster barrier (barrier.cluster), mapa into
// a peer's shared memory, and the checks of the cluster's rules.
//
// Internal to the runtime (jit/host/runtime/runtime.h). Every CTA of a cluster lives on the
// same worker thread, so, like Block, nothing here is locked; a peer's shared memory is
// plain memory of that worker's slots, and an arrival on a peer's mbarrier wakes the peer's
// waiters directly (OwnerOf).
//
// The cluster barrier follows the PTX ISA's barrier.cluster: "barrier.cluster.arrive" marks
// the thread's arrival, "barrier.cluster.wait" waits until every non-exited thread of the
// cluster has arrived for the phase of the thread's last arrival. A thread arrives once
// before each wait; a wait with no arrival before it, or a second arrival before the wait,
// fails the launch.
//
// Errors (FailedPrecondition, naming the CTAs by rank and block index):
//   * mapa of a rank outside the cluster, of an address outside the caller's shared memory,
//     or into a CTA that has exited;
//   * a CTA whose threads all exited while a peer that mapped its shared memory (mapa,
//     remote mbarrier arrivals) has not passed a cluster barrier phase since: the peer could
//     still read or write memory that no longer exists on a GPU.
#ifndef WARPTRACE_JIT_HOST_CLUSTER_H_
#define WARPTRACE_JIT_HOST_CLUSTER_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/host/device/host_abi.h"
#include "jit/host/runtime/block.h"

namespace warptrace::host {

// The number of CTAs in a cluster of shape `d`.
inline uint32_t ClusterCount(const WarptraceHostDim& d) { return d.x * d.y * d.z; }

class Cluster {
 public:
  // A cluster of shape `dim` at `idx` in the grid of clusters, whose CTAs wake fibers on
  // `ready` (their worker's queue).
  Cluster(ReadyQueue* ready, WarptraceHostDim dim, WarptraceHostDim idx);
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Adds CTA `rank` (in rank order) with its shared memory areas.
  void Add(uint32_t rank, Block* block, char* static_shared, char* dynamic_shared,
           uint64_t dynamic_shared_bytes);

  uint32_t size() const { return static_cast<uint32_t>(ctas_.size()); }
  // The cluster barrier's phase in progress (the number of phases completed).
  uint64_t barrier_phase() const { return static_cast<uint64_t>(phase_); }
  const WarptraceHostDim& dim() const { return dim_; }
  const WarptraceHostDim& idx() const { return idx_; }

  // barrier.cluster.arrive (arrive) and/or .wait (wait) for `f` of CTA `rank`.
  Wait Barrier(Fiber* f, uint32_t rank, bool arrive, bool wait, const char* what,
               std::string* error);
  // A thread of CTA `rank` exited: it no longer counts towards the barrier.
  void ThreadExited(Fiber* f, uint32_t rank);
  // CTA `rank` finished (every thread exited): errors when a peer may still reach it.
  void CtaFinished(uint32_t rank, std::string* error);
  bool Finished() const;
  // Every live thread of every CTA waits (on its block or on the cluster barrier).
  bool Deadlocked() const;

  // mapa: `p` in the shared memory of CTA `from` mapped into CTA `rank`; null with *error
  // set on a misuse. `track`: the mapping keeps the target reachable (the exit rule).
  void* Map(Fiber* f, uint32_t from, const void* p, uint32_t rank, bool track,
            const char* what, std::string* error);
  // The CTA whose shared memory holds `p`, or null.
  Block* OwnerOf(const void* p) const;
  // mbarrier.init of `bar` by `f` of CTA `rank`.
  void Initialized(Fiber* f, uint32_t rank, const void* bar);
  // Whether a peer may use `bar`: a cluster barrier phase completed after its init (true for
  // a barrier whose init the cluster did not see).
  bool InitVisible(const void* bar) const;

  // Forgets the barrier's waiters (the launch failed).
  void DropWaiters();
  // What a fiber parked on the cluster barrier waits for, for deadlock reports.
  std::string DescribeWait() const;
  // "CTA rank 1 (block (1,0,0))".
  std::string CtaName(uint32_t rank) const;
  // Every CTA's census, "CTA rank 0 (block (0,0,0)): threads 0-63: ...; CTA rank 1 ...".
  std::string Census() const;

 private:
  struct Cta {
    Block* block = nullptr;
    char* static_shared = nullptr;
    char* dynamic_shared = nullptr;
    uint64_t dynamic_shared_bytes = 0;
    bool finished = false;
    // By peer rank: the first barrier phase whose completion makes the peer's accesses to
    // this CTA's shared memory safe to outlive (-1: the peer never mapped it).
    std::vector<int64_t> mapped_by;
    // By thread: the phase of the thread's arrival not yet waited on (-1: none).
    std::vector<int64_t> arrival;
    // By thread: what the arrival was ("barrier.cluster.arrive.release at <file>, line n").
    std::vector<const char*> arrived_at;
  };
  // The offset of `p` in CTA `rank`'s shared memory and whether it is the static area;
  // false when it is in neither.
  bool Locate(uint32_t rank, const void* p, uint64_t* offset, bool* in_static) const;
  void CompletePhase();

  ReadyQueue* ready_;
  WarptraceHostDim dim_;
  WarptraceHostDim idx_;
  std::vector<Cta> ctas_;
  uint64_t live_threads_ = 0;
  uint64_t arrived_ = 0;   // arrivals towards phase_
  int64_t phase_ = 0;      // the phase in progress (== the number completed)
  int64_t latest_ = 0;     // the latest arrival's virtual time this phase
  Fiber* first_waiter_ = nullptr;
  Fiber* last_waiter_ = nullptr;
  // By mbarrier: the phase whose completion makes its init visible to the cluster.
  std::unordered_map<const void*, int64_t> init_visible_after_;
};

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_CLUSTER_H_
