#include "jit/host/runtime/abi_table.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/host/runtime/block.h"
#include "jit/host/runtime/cluster.h"
#include "jit/host/runtime/races.h"
#include "jit/host/runtime/virtual_clock.h"
#include "jit/host/runtime/worker.h"

namespace warptrace::host {
namespace {

// Every runtime entry of a kernel thread: its batched shared-memory accesses are checked
// first (host_abi.h race_batch), before anything the call orders or another thread runs.
Fiber* Enter(void* fiber) {
  Fiber* f = Self(fiber);
  if (f->abi.race_pending != 0) FlushRaceBatch(*f);
  return f;
}

int AbiBarrier(void* fiber, unsigned int id, unsigned int count, int wait, int op,
               int predicate, const char* what) {
  Fiber* f = Enter(fiber);
  Worker& w = OwnerOf(f);
  const int64_t now = NowNs(f);
  StopClock(f, now);
  RaceDomain* races = id < WARPTRACE_HOST_NUM_NAMED_BARRIERS ? f->block->races() : nullptr;
  if (races != nullptr) races->BarrierArrive(*f, id);
  const Wait result = f->block->Barrier(f, id, count, wait != 0, op, predicate != 0, what,
                                        w.error());
  if (races != nullptr) races->BarrierDone(*f, id, f->block->BarrierArrived(id) == 0);
  w.FinishSync(f, result, now);
  if (races != nullptr && wait != 0) races->BarrierPassed(*f, id);
  return static_cast<int>(f->result);
}

unsigned long long AbiWarp(void* fiber, int op, unsigned int mask, unsigned long long value,
                           unsigned int arg, const char* what) {
  Fiber* f = Enter(fiber);
  Worker& w = OwnerOf(f);
  const int64_t now = NowNs(f);
  StopClock(f, now);
  w.FinishSync(f, f->block->WarpCollective(f, op, mask, value, arg, what, w.error()), now);
  return f->result;
}

unsigned int AbiActiveMask(void* fiber) {
  Fiber* f = Enter(fiber);
  return f->block->ActiveMask(f);
}

void* AbiShared(void* fiber, unsigned int site, unsigned long long bytes,
                unsigned long long align, unsigned long long element_bytes, const char* name) {
  Fiber* f = Enter(fiber);
  std::string error;
  void* p = f->block->Shared(site, bytes, align == 0 ? 1 : align, element_bytes, name, &error);
  if (!error.empty()) {
    OwnerOf(f).FailFromFiber(f, absl::StatusCode::kResourceExhausted, error);
  }
  return p;
}

void AbiMbarrierWait(void* fiber, unsigned long long* bar, unsigned int parity,
                     const char* what) {
  Fiber* f = Enter(fiber);
  f->last_was_spin = false;
  if (const Cluster* cluster = f->block->cluster(); cluster != nullptr) {
    if (Block* owner = cluster->OwnerOf(bar); owner != nullptr && owner != f->block) {
      OwnerOf(f).FailFromFiber(
          f, absl::StatusCode::kFailedPrecondition,
          absl::StrCat(what, ": ", cluster->CtaName(f->block->cluster_rank()),
                       " waits on mbarrier ", owner->SharedName(reinterpret_cast<char*>(bar)),
                       " of ", cluster->CtaName(owner->cluster_rank()),
                       ": a CTA waits only on its own mbarriers (try_wait is shared::cta)"));
    }
  }
  const int64_t now = NowNs(f);
  StopClock(f, now);
  OwnerOf(f).FinishSync(f, f->block->MbarrierWait(f, bar, parity, what), now);
  if (RaceDomain* races = f->block->races();
      races != nullptr && WARPTRACE_HOST_MBAR_PHASE(*bar) != (parity & 1u)) {
    races->MbarrierObserved(*f, bar);
  }
}

// A peer's mbarrier, reached by `f`: only through the cluster-scope primitives, and only
// after its init was made visible to the cluster. Fails the launch otherwise.
void CheckPeerMbarrier(Fiber* f, const Cluster& cluster, Block& owner,
                       unsigned long long* bar) {
  const std::string name = absl::StrCat("mbarrier ", owner.SharedName(reinterpret_cast<char*>(bar)),
                                        " of ", cluster.CtaName(owner.cluster_rank()));
  const std::string self = cluster.CtaName(f->block->cluster_rank());
  if (f->abi.cluster_op == 0) {
    OwnerOf(f).FailFromFiber(
        f, absl::StatusCode::kFailedPrecondition,
        absl::StrCat(self, " arrived on ", name,
                     " through a local (shared::cta) mbarrier operation: a peer's barrier "
                     "takes mbarrier.arrive.release.cluster.shared::cluster "
                     "(warptrace_mbarrier_arrive_cluster(bar, rank)) with the address of the "
                     "arriving CTA's own barrier and the peer's rank"));
  }
  if (!cluster.InitVisible(bar)) {
    OwnerOf(f).FailFromFiber(
        f, absl::StatusCode::kFailedPrecondition,
        absl::StrCat(self, " used ", name,
                     " before its init was made visible to the cluster: after mbarrier.init, "
                     "fence.mbarrier_init.release.cluster (warptrace_fence_mbarrier_init) and "
                     "a cluster barrier (arrive.release + wait.acquire) in every CTA, before "
                     "any peer arrives on it or multicasts to it"));
  }
}

void AbiMbarrierArrived(void* fiber, unsigned long long* bar, int completed) {
  Fiber* f = Enter(fiber);
  StopClock(f, NowNs(f));  // vtime is the arrival's time
  Block* owner = f->block;
  if (const Cluster* cluster = owner->cluster(); cluster != nullptr) {
    // A remote arrival (mbarrier.arrive...shared::cluster) wakes the peer's waiters.
    if (Block* peer = cluster->OwnerOf(bar); peer != nullptr && peer != owner) {
      CheckPeerMbarrier(f, *cluster, *peer, bar);
      owner = peer;
    }
  }
  if (RaceDomain* races = f->block->races(); races != nullptr) {
    races->MbarrierArrived(*f, bar, completed != 0);
  }
  owner->MbarrierArrived(f, bar, completed != 0);
  // The thread runs on from its arrival: a completing arrival's release of the waiters
  // (any number of them) is the runtime's work, not the thread's, so its clock restarts
  // after it, as a completer's does at a barrier.
  if (completed != 0) StartClock(f, NowNs(f));
}

void AbiSpin(void* fiber, const volatile void* address, unsigned long long value,
             const char* what) {
  Fiber* f = Enter(fiber);
  OwnerOf(f).Spin(f, address, value, what);
}

// The block whose shared memory `address` may be: a cluster peer that holds it (a multicast
// TMA delivery, a mapa pointer: its bytes are the peer's), else `f`'s own.
Block* OwnerBlock(Fiber* f, const void* address) {
  if (const Cluster* cluster = f->block->cluster(); cluster != nullptr) {
    if (Block* peer = cluster->OwnerOf(address); peer != nullptr) return peer;
  }
  return f->block;
}

// The block whose shared memory holds `address`, with its area and offset there; null when
// none does (or it has no sanitizer shadow).
Block* SharedOwner(Fiber* f, const void* address, int* area, uint64_t* offset) {
  Block* owner = OwnerBlock(f, address);
  if (owner->shadow() == nullptr ||
      !owner->shadow()->SharedArea(reinterpret_cast<uintptr_t>(address), area, offset)) {
    return nullptr;
  }
  return owner;
}

// The races check of an access already checked for bounds (within its area).
void CheckRace(Fiber* f, const void* address, unsigned long long bytes, int kind) {
  RaceDomain* races = f->block->races();
  if (races == nullptr) return;
  int area = 0;
  uint64_t offset = 0;
  Block* owner = SharedOwner(f, address, &area, &offset);
  if (owner == nullptr) {  // global: a buffer the races check follows, in bounds
    const uintptr_t a = reinterpret_cast<uintptr_t>(address);
    const SanitizeBuffer* buffer = f->block->shadow() != nullptr
                                       ? f->block->shadow()->launch()->BufferNear(a)
                                       : nullptr;
    if (buffer != nullptr && (buffer->races || kind == WARPTRACE_HOST_ACCESS_ATOMIC) &&
        a >= buffer->start && a + bytes <= buffer->start + buffer->bytes) {
      races->GlobalAccess(*f, a, bytes, kind);
    }
    return;
  }
  const uint64_t size =
      area == 0 ? WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES : f->abi.dynamic_shared_bytes;
  if (offset + bytes > size) return;  // out of bounds: reported as such
  races->Access(*f, *owner, area, offset, bytes, kind);
}

void FlushCopies(std::vector<Fiber::Copy>& copies) {
  for (const Fiber::Copy& c : copies) std::memcpy(c.dst, c.src, c.bytes);
  copies.clear();
}

// Sanitize mode only (host_abi.h): checks the access; fails the launch when it would fault.
// The bounds and init checks of an access as `plain` (a read or a write) in the shadow of
// the block that holds it, then the races check as `kind`. Fails the launch when the access
// would fault.
void CheckAccess(Fiber* f, const void* address, unsigned long long bytes, int plain, int kind) {
  BlockShadow* shadow = OwnerBlock(f, address)->shadow();
  if (shadow == nullptr) shadow = f->block->shadow();
  std::string fatal = shadow->Check(*f, reinterpret_cast<uintptr_t>(address), bytes, plain);
  if (!fatal.empty()) OwnerOf(f).FailFromFiber(f, absl::StatusCode::kOutOfRange, fatal);
  CheckRace(f, address, bytes, kind);
}

void AbiAccess(void* fiber, const void* address, unsigned long long bytes, int kind) {
  Fiber* f = Enter(fiber);
  if (f->block->shadow() == nullptr) return;
  if (address == nullptr && kind >= WARPTRACE_HOST_EVENT_MMA_COMMIT) {  // an async-group event
    if (RaceDomain* races = f->block->races(); races != nullptr) races->Event(*f, kind, bytes);
    return;
  }
  // Bytes the kernel wrote, in bounds: only the races check has work (most accesses).
  if (RaceDomain* races = f->block->races(); races != nullptr) {
    Block* owner = OwnerBlock(f, address);
    int area = 0;
    uint64_t offset = 0;
    if (owner->shadow() != nullptr &&
        owner->shadow()->SharedArea(reinterpret_cast<uintptr_t>(address), &area, &offset) &&
        owner->shadow()->Written(area, offset, bytes)) {
      races->Access(*f, *owner, area, offset, bytes, kind);
      return;
    }
  }
  // The bounds and init checks know reads and writes only.
  const int plain = kind == WARPTRACE_HOST_ACCESS_MMA_READ || kind == WARPTRACE_HOST_ACCESS_BULK_READ
                        ? WARPTRACE_HOST_ACCESS_READ
                        : kind == WARPTRACE_HOST_ACCESS_ATOMIC ? WARPTRACE_HOST_ACCESS_WRITE
                                                                : kind;
  CheckAccess(f, address, bytes, plain, kind);
}

// The kernel found the access in its own CTA's shared memory, in bounds and written: only
// the races check has work.
void AbiRace(void* fiber, int area, unsigned long long offset, unsigned long long bytes,
             int kind) {
  Fiber* f = Enter(fiber);
  if (RaceDomain* races = f->block->races(); races != nullptr) {
    races->Access(*f, *f->block, area, offset, bytes, kind);
  }
}

void AbiRaceFlush(void* fiber) { Enter(fiber); }

void AbiCpAsync(void* fiber, void* dst, const void* src, unsigned int bytes) {
  Fiber* f = Enter(fiber);
  if (f->block->shadow() != nullptr) {
    // Checked at issue, delivered at the wait; the races check records the delivery as
    // the thread's cp.async group, visible after the wait that covers it.
    CheckAccess(f, src, bytes, WARPTRACE_HOST_ACCESS_READ, WARPTRACE_HOST_ACCESS_READ);
    CheckAccess(f, dst, bytes, WARPTRACE_HOST_ACCESS_ASYNC_WRITE, RaceDomain::kCpAsyncWrite);
  }
  f->open_copies.push_back({dst, src, bytes});
}

void AbiCpAsyncCommit(void* fiber) {
  Fiber* f = Enter(fiber);
  f->copy_groups.push_back(std::move(f->open_copies));
  f->open_copies.clear();
  if (RaceDomain* races = f->block->races(); races != nullptr) races->CpAsyncCommit(*f);
}

void AbiCpAsyncWaitPrior(void* fiber, unsigned int groups) {
  Fiber* f = Enter(fiber);
  while (f->copy_groups.size() > groups) {
    FlushCopies(f->copy_groups.front());
    f->copy_groups.pop_front();
  }
  if (RaceDomain* races = f->block->races(); races != nullptr) races->CpAsyncWait(*f, groups);
}

unsigned long long AbiClock(void* fiber) {
  return static_cast<unsigned long long>(CorrectedClock(Self(fiber), NowNs(Self(fiber))));
}

const void* AbiExchange(void* fiber, unsigned int group, const void* operands,
                        unsigned int bytes, const char* what) {
  Fiber* f = Enter(fiber);
  Worker& w = OwnerOf(f);
  const int64_t now = NowNs(f);
  StopClock(f, now);
  w.FinishSync(f, f->block->Exchange(f, group, operands, bytes, what, w.error()), now);
  return reinterpret_cast<const void*>(static_cast<uintptr_t>(f->result));
}

void AbiClusterBarrier(void* fiber, int arrive, int wait, const char* what) {
  Fiber* f = Enter(fiber);
  Worker& w = OwnerOf(f);
  Cluster* cluster = f->block->cluster();
  if (cluster == nullptr) {
    // Without a cluster launch every CTA is a cluster of one (PTX ISA: a grid launched
    // without clusters has 1x1x1 clusters): the barrier is the block's threads.
    w.FailFromFiber(f, absl::StatusCode::kFailedPrecondition,
                    absl::StrCat(what, ": the launch has no cluster shape (the host backend "
                                       "needs KernelBuilder::Cluster for cluster barriers)"));
  }
  f->last_was_spin = false;
  const int64_t now = NowNs(f);
  StopClock(f, now);
  RaceDomain* races = f->block->races();
  if (races != nullptr && arrive != 0) races->ClusterArrive(*f, cluster->barrier_phase());
  const Wait result = cluster->Barrier(f, f->block->cluster_rank(), arrive != 0, wait != 0,
                                       what, w.error());
  if (races != nullptr) races->ClusterDone(cluster->barrier_phase());
  w.FinishSync(f, result, now);
  if (races != nullptr && wait != 0) races->ClusterPassed(*f, cluster->barrier_phase());
}

void* AbiMapa(void* fiber, const void* address, unsigned int rank, int track,
              const char* what) {
  Fiber* f = Enter(fiber);
  Worker& w = OwnerOf(f);
  Cluster* cluster = f->block->cluster();
  if (cluster == nullptr) {
    if (rank == 0) return const_cast<void*>(address);  // a cluster of one: rank 0 is itself
    w.FailFromFiber(f, absl::StatusCode::kFailedPrecondition,
                    absl::StrCat(what, ": CTA rank ", rank,
                                 " is outside the cluster: the launch has no cluster shape "
                                 "(each CTA is a cluster of one, rank 0)"));
  }
  void* mapped =
      cluster->Map(f, f->block->cluster_rank(), address, rank, track != 0, what, w.error());
  if (mapped == nullptr) w.FailWithError(f, absl::StatusCode::kFailedPrecondition);
  return mapped;
}

void AbiMbarrierInit(void* fiber, unsigned long long* bar) {
  Fiber* f = Enter(fiber);
  if (Cluster* cluster = f->block->cluster(); cluster != nullptr) {
    cluster->Initialized(f, f->block->cluster_rank(), bar);
  }
  if (RaceDomain* races = f->block->races(); races != nullptr) {
    int area = 0;
    uint64_t offset = 0;
    if (Block* owner = SharedOwner(f, bar, &area, &offset); owner != nullptr) {
      races->MbarrierInit(bar, *owner);
      // Its word is the emulation's from now on, exempt from the races check: its many
      // reads and updates no longer reach the runtime.
      owner->shadow()->Unchecked(area, offset, 8);
    }
  }
}

void AbiFail(void* fiber, const char* message) {
  Fiber* f = Enter(fiber);
  OwnerOf(f).EndWithoutUnwinding(f, absl::StatusCode::kAborted, message);
}

constexpr WarptraceHostRuntime kAbi = {
    &AbiBarrier,       &AbiWarp,           &AbiActiveMask,   &AbiShared,
    &AbiMbarrierWait,  &AbiMbarrierArrived, &AbiSpin,        &AbiCpAsync,
    &AbiCpAsyncCommit, &AbiCpAsyncWaitPrior, &AbiClock,      &AbiFail,
    &AbiExchange,      &AbiClusterBarrier, &AbiMapa,         &AbiMbarrierInit,
    &AbiAccess,        &AbiRace,           &AbiRaceFlush,
};

}  // namespace

const WarptraceHostRuntime& AbiTable() { return kAbi; }


}  // namespace warptrace::host
