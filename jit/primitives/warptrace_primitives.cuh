// warptrace's device primitives: the synchronization warp-specialized kernels are made of,
// as device functions with one source for the GPU and the host backend. On the GPU (NVRTC
// or nvcc, __CUDA_ARCH__ defined) each is its real PTX; under WARPTRACE_HOST_BACKEND it calls
// the host runtime (jit/host/device/cuda_on_cpu.h, which includes this header).
//
//   #include "warptrace_primitives.cuh"
//   __shared__ unsigned long long full;                 // an mbarrier: 8 bytes of shared memory
//   if (threadIdx.x == 0) warptrace_mbarrier_init(&full, 1);
//   __syncthreads();
//   ... producer: warptrace_mbarrier_arrive(&full);
//   ... consumer: warptrace_mbarrier_wait_parity(&full, phase & 1);
//
// Named barriers (sm_70+): barrier `id` in 1..15 (0 is __syncthreads'), `count` threads, a
// multiple of 32.
//   warptrace_named_barrier_sync(id, count)     bar.sync: arrive and wait
//   warptrace_named_barrier_arrive(id, count)   bar.arrive: arrive, do not wait
// mbarriers (objects in shared memory; sm_80+, the _tx forms and try_wait sm_90+):
//   warptrace_mbarrier_init(bar, count)         count arrivals complete a phase
//   warptrace_mbarrier_arrive(bar)              returns the phase token (unused on the host)
//   warptrace_mbarrier_arrive_expect_tx(bar, bytes)  expect `bytes` more, then arrive
//   warptrace_mbarrier_expect_tx(bar, bytes) / warptrace_mbarrier_complete_tx(bar, bytes)
//   warptrace_mbarrier_test_wait_parity(bar, parity)  has the phase of that parity completed?
//   warptrace_mbarrier_try_wait_parity(bar, parity)   the same, waiting a while (on the host:
//                                                     until it completes)
//   warptrace_mbarrier_wait_parity(bar, parity)       loops on try_wait
// Asynchronous copies:
//   warptrace_cp_async(smem_dst, gmem_src, bytes)   cp.async, 4, 8 or 16 bytes (sm_80+)
//   warptrace_cp_async_commit() / warptrace_cp_async_wait_prior(n)  groups; wait until at
//                                                   most n groups are pending (0..7)
//   warptrace_bulk_copy_g2s(smem_dst, gmem_src, bytes, bar)  cp.async.bulk completing
//                                                   `bytes` of transactions on `bar` (sm_90+;
//                                                   bytes a multiple of 16)
// Fences (no-ops on the host, whose copies are plain memory operations):
//   warptrace_fence_mbarrier_init()   makes this thread's mbarrier.init visible to the async
//                                     proxy (bulk copies completing on it); sm_90
//                                     fence.mbarrier_init.release.cluster, nothing before
//   warptrace_fence_proxy_async()     orders this thread's shared-memory accesses before
//                                     later bulk copies (async proxy); sm_90
//                                     fence.proxy.async.shared::cta, nothing before
// Tensor cores and matrix movement (sm_80 mma.sync m16n8k16, ldmatrix, sm_90 stmatrix and
// elect.sync): tensor_core_sm80.cuh, included at the end.
// Spin-wait helpers (on the host: hooks that let other threads and blocks run):
//   warptrace_poll(p)                volatile load
//   warptrace_load_acquire(p) / warptrace_store_release(p, v)  gpu-scope acquire / release
#ifndef WARPTRACE_PRIMITIVES_CUH_
#define WARPTRACE_PRIMITIVES_CUH_

#if defined(WARPTRACE_HOST_BACKEND)

// Named for messages and the deadlock report like __syncthreads (cuda_on_cpu.h): the
// operation and the place of the call, "bar.sync at <file>, line <n>".
#define warptrace_named_barrier_sync(id, count)                                    \
  ::warptrace_host::Barrier((id), (count), 1, WARPTRACE_HOST_BARRIER_PLAIN, 0,     \
                            WARPTRACE_HOST_AT("bar.sync"))
#define warptrace_named_barrier_arrive(id, count)                                  \
  ::warptrace_host::Barrier((id), (count), 0, WARPTRACE_HOST_BARRIER_PLAIN, 0,     \
                            WARPTRACE_HOST_AT("bar.arrive"))

namespace warptrace_host {
// See host_abi.h: pending 0-20, expected 21-41, tx 42-62, phase 63.
inline unsigned long long MbarPack(unsigned int pending, unsigned int expected, int tx,
                                   unsigned int phase) {
  return (static_cast<unsigned long long>(pending) & 0x1fffffull) |
         ((static_cast<unsigned long long>(expected) & 0x1fffffull) << 21) |
         ((static_cast<unsigned long long>(static_cast<unsigned int>(tx)) & 0x1fffffull) << 42) |
         (static_cast<unsigned long long>(phase & 1u) << 63);
}
// The phases each mbarrier has completed since its init, for the phase check of the
// builder's waits (the mbarrier word keeps the parity only). The fibers of a block, and all
// the CTAs of a cluster (whose peers complete each other's barriers: remote arrivals,
// multicast copies), run on one worker thread: a worker-thread-local table keyed by the
// mbarrier's address, each entry reset by its barrier's init and forgotten by a new launch.
struct BarrierPhases {
  long long launch = 0;
  unsigned long long completed = 0;
};
class CompletedPhaseTable {
 public:
  CompletedPhaseTable() = default;
  CompletedPhaseTable(const CompletedPhaseTable&) = delete;
  CompletedPhaseTable& operator=(const CompletedPhaseTable&) = delete;
  ~CompletedPhaseTable() { delete[] slots_; }
  // The entry of `bar` in this launch (created at 0).
  WARPTRACE_HOST_UNINSTRUMENTED unsigned long long& operator[](const void* bar) {
    if (2 * (used_ + 1) > capacity_) Grow();
    Slot* s = Probe(bar);
    if (s->key == nullptr) {
      s->key = bar;
      ++used_;
    }
    const long long launch = warptrace_host_current->clock->ns_base;
    if (s->phases.launch != launch) s->phases = {launch, 0};
    return s->phases.completed;
  }
  // The completed phases of `bar` since its init in this launch, or null if none is known.
  WARPTRACE_HOST_UNINSTRUMENTED const unsigned long long* Find(const void* bar) const {
    if (capacity_ == 0) return nullptr;
    const Slot* s = Probe(bar);
    if (s->key == nullptr || s->phases.launch != warptrace_host_current->clock->ns_base) {
      return nullptr;
    }
    return &s->phases.completed;
  }

 private:
  // Open addressing by the barrier's address, at most half full: a wait's phase check is a
  // few loads, none of them a sanitizer callback (the table is the emulation's memory, not
  // the kernel's).
  struct Slot {
    const void* key;
    BarrierPhases phases;
  };
  WARPTRACE_HOST_UNINSTRUMENTED Slot* Probe(const void* bar) const {
    unsigned long long i = (reinterpret_cast<unsigned long long>(bar) >> 3) * 0x9E3779B97F4A7C15ull;
    for (i >>= 32;; ++i) {
      Slot* s = &slots_[i & (capacity_ - 1)];
      if (s->key == bar || s->key == nullptr) return s;
    }
  }
  WARPTRACE_HOST_UNINSTRUMENTED void Grow() {
    Slot* old = slots_;
    const unsigned long long old_capacity = capacity_;
    capacity_ = capacity_ == 0 ? 64 : 2 * capacity_;
    slots_ = new Slot[capacity_];
    for (unsigned long long i = 0; i < capacity_; ++i) slots_[i] = Slot{nullptr, {}};
    for (unsigned long long i = 0; i < old_capacity; ++i) {
      if (old[i].key != nullptr) *Probe(old[i].key) = old[i];
    }
    delete[] old;
  }
  Slot* slots_ = nullptr;
  unsigned long long capacity_ = 0;  // a power of two
  unsigned long long used_ = 0;
};
inline CompletedPhaseTable& CompletedPhases() {
  static thread_local CompletedPhaseTable table;
  return table;
}
// After a wait for phase `phase` of `bar` returned: the parity matched, but phase `phase`
// itself must have completed (phases 0..phase), else the wait aliased phase - 2's parity.
// `path`: the wait's builder path (__FILE__ under the emitter's #line).
inline void MbarCheckPhase(unsigned long long* bar, unsigned int phase, const char* path) {
  const unsigned long long* completed = CompletedPhases().Find(bar);
  if (completed == nullptr || *completed >= static_cast<unsigned long long>(phase) + 1) return;
  char aliased[96];
  if (*completed == 0) {
    snprintf(aliased, sizeof aliased, "the barrier's initial state (before phase 0)");
  } else {
    snprintf(aliased, sizeof aliased, "phase %llu, already completed", *completed - 1);
  }
  char message[1024];
  snprintf(message, sizeof message,
           "%s: waits for phase %u, but phase %u has not completed: phase numbers off by one? "
           "(the barrier has completed %llu phase(s); a wait sees only the parity, and "
           "phase %u's parity %u is that of %s; phase n of an element is its (n+1)-th "
           "completion, counted from 0, e.g. \"k / stages\" for use k of a ring of `stages`)",
           path, phase, phase - 1, *completed, phase, phase & 1u, aliased);
  WARPTRACE_HOST_RT(fail)(Fiber(), message);
}
// The multicast copies that landed on an mbarrier in its current phase (cluster_sm90.cuh's
// TmaMulticast notes each delivery before it completes its bytes), for the expect-tx check
// below. Worker-thread-local like CompletedPhases (a cluster's CTAs share the thread).
struct MulticastLanding {
  long long launch = 0;
  unsigned long long phase = 0;  // the barrier's completed phases at the deliveries
  unsigned int sources = 0;      // bit r: CTA rank r multicast onto it in this phase
  unsigned int dest_rank = 0;    // the CTA that owns the barrier
  unsigned int offset = 0;       // the barrier's shared memory offset (the same in each CTA)
  unsigned short mask = 0;       // the last delivery's ctaMask
  unsigned int bytes = 0;        // its bytes (one box)
  const char* site = nullptr;    // its builder path
};
inline std::unordered_map<const void*, MulticastLanding>& MulticastLandings() {
  static thread_local std::unordered_map<const void*, MulticastLanding> table;
  return table;
}
// Every arrival of `bar`'s phase is in (so every expect_tx of legal code is too) and yet its
// copies completed `surplus` bytes more than expected: the phase can never complete. When
// multicast copies landed on it in this phase, the expect_tx missed slices the CTA receives
// from its peers: say so now, with the ranks and the copy, instead of a later deadlock.
inline void MbarCheckMulticastTx(unsigned long long* bar, unsigned int arrivals, int surplus) {
  const auto it = MulticastLandings().find(bar);
  if (it == MulticastLandings().end()) return;
  const MulticastLanding& m = it->second;
  const unsigned long long* completed = CompletedPhases().Find(bar);
  if (m.launch != Current().clock->ns_base || completed == nullptr || *completed != m.phase) {
    return;
  }
  char sources[64] = "";
  unsigned int count = 0;
  for (unsigned int r = 0; r < 16; ++r) {
    if (((m.sources >> r) & 1u) == 0) continue;
    const size_t used = strlen(sources);
    snprintf(sources + used, sizeof sources - used, "%s%u", count == 0 ? "" : ", ", r);
    ++count;
  }
  char message[1024];
  snprintf(message, sizeof message,
           "%s: multicast expect-tx: the mbarrier at shared memory offset %u of CTA rank %u "
           "has all %u arrivals of its phase %llu, but its copies completed %d bytes more than "
           "its expect_tx counted, so the phase can never complete. Multicast copies from CTA "
           "rank(s) %s landed on it in this phase (ctaMask 0x%04x, %u bytes to each CTA of the "
           "mask): a CTA receives one slice from every CTA that multicasts to it, so its "
           "expect_tx must count them all (%u x %u = %u bytes from these), not only its own",
           m.site == nullptr ? "multicast copy" : m.site, m.offset, m.dest_rank, arrivals,
           m.phase, surplus, sources, m.mask, m.bytes, count, m.bytes, count * m.bytes);
  WARPTRACE_HOST_RT(fail)(Fiber(), message);
}
// Applies `arrivals` and `tx` to the mbarrier; completes the phase when both reach 0.
inline unsigned long long MbarUpdate(unsigned long long* bar, unsigned int arrivals, int tx) {
  const unsigned long long w = *bar;
  unsigned int pending = WARPTRACE_HOST_MBAR_PENDING(w);
  const unsigned int expected = WARPTRACE_HOST_MBAR_EXPECTED(w);
  const int count = WARPTRACE_HOST_MBAR_TX(w) + tx;
  const unsigned int phase = WARPTRACE_HOST_MBAR_PHASE(w);
  if (arrivals > pending) {
    WARPTRACE_HOST_RT(fail)(Fiber(), "mbarrier arrive: more arrivals than the phase expects");
  }
  pending -= arrivals;
  if (pending == 0 && count < 0) MbarCheckMulticastTx(bar, expected, -count);
  const bool completed = pending == 0 && count == 0;
  *bar = completed ? MbarPack(expected, expected, 0, phase ^ 1u)
                   : MbarPack(pending, expected, count, phase);
  if (completed) ++CompletedPhases()[bar];
  WARPTRACE_HOST_RT(mbarrier_arrived)(Fiber(), bar, completed);
  return w;
}
}  // namespace warptrace_host

inline void warptrace_mbarrier_init(unsigned long long* bar, unsigned int count) {
  *bar = ::warptrace_host::MbarPack(count, count, 0, 0);
  ::warptrace_host::CompletedPhases()[bar] = 0;
  WARPTRACE_HOST_RT(mbarrier_init)(::warptrace_host::Fiber(), bar);
}
inline unsigned long long warptrace_mbarrier_arrive(unsigned long long* bar) {
  return ::warptrace_host::MbarUpdate(bar, 1, 0);
}
inline unsigned long long warptrace_mbarrier_arrive_expect_tx(unsigned long long* bar,
                                                              unsigned int bytes) {
  ::warptrace_host::MbarUpdate(bar, 0, static_cast<int>(bytes));
  return ::warptrace_host::MbarUpdate(bar, 1, 0);
}
inline void warptrace_mbarrier_expect_tx(unsigned long long* bar, unsigned int bytes) {
  ::warptrace_host::MbarUpdate(bar, 0, static_cast<int>(bytes));
}
inline void warptrace_mbarrier_complete_tx(unsigned long long* bar, unsigned int bytes) {
  ::warptrace_host::MbarUpdate(bar, 0, -static_cast<int>(bytes));
}
inline bool warptrace_mbarrier_test_wait_parity(unsigned long long* bar, unsigned int parity) {
  const unsigned long long w = *bar;
  const bool done = WARPTRACE_HOST_MBAR_PHASE(w) != (parity & 1u);
  if (done) {  // returns at once; takes the phase's completion time
    WARPTRACE_HOST_RT(mbarrier_wait)(::warptrace_host::Fiber(), bar, parity & 1u,
                                         "mbarrier test_wait");
  } else {
    ::warptrace_host::Spin(bar, w, "mbarrier test_wait");
  }
  return done;
}
namespace warptrace_host {
// `what`: "<op> at <file>, line <n>" (WARPTRACE_HOST_AT), for the deadlock report.
inline bool MbarrierTryWait(unsigned long long* bar, unsigned int parity, const char* what) {
  WARPTRACE_HOST_RT(mbarrier_wait)(Fiber(), bar, parity & 1u, what);
  return WARPTRACE_HOST_MBAR_PHASE(*bar) != (parity & 1u);
}
inline void MbarrierWait(unsigned long long* bar, unsigned int parity, const char* what) {
  while (!MbarrierTryWait(bar, parity, what)) {
  }
}
}  // namespace warptrace_host
// Named for the deadlock report by the place of the call, like __syncthreads.
#define warptrace_mbarrier_try_wait_parity(bar, parity) \
  ::warptrace_host::MbarrierTryWait((bar), (parity), WARPTRACE_HOST_AT("mbarrier try_wait"))
#define warptrace_mbarrier_wait_parity(bar, parity) \
  ::warptrace_host::MbarrierWait((bar), (parity), WARPTRACE_HOST_AT("mbarrier wait"))
// After a wait for phase `phase` returned (the builder's WaitPhase): fails the launch when
// that phase has not completed (the parity aliased an older phase). A no-op on the GPU.
#define warptrace_mbarrier_check_phase(bar, phase) \
  ::warptrace_host::MbarCheckPhase((bar), (phase), __FILE__)

inline void warptrace_cp_async(void* smem_dst, const void* gmem_src, unsigned int bytes) {
  WARPTRACE_HOST_RT(cp_async)(::warptrace_host::Fiber(), smem_dst, gmem_src, bytes);
}
inline void warptrace_cp_async_commit() {
  WARPTRACE_HOST_RT(cp_async_commit)(::warptrace_host::Fiber());
}
inline void warptrace_cp_async_wait_prior(unsigned int n) {
  WARPTRACE_HOST_RT(cp_async_wait_prior)(::warptrace_host::Fiber(), n);
}
// CUDA's <cuda_pipeline.h> names.
inline void __pipeline_memcpy_async(void* dst, const void* src, size_t bytes,
                                    size_t zfill = 0) {
  (void)zfill;
  warptrace_cp_async(dst, src, static_cast<unsigned int>(bytes));
}
inline void __pipeline_commit() { warptrace_cp_async_commit(); }
inline void __pipeline_wait_prior(size_t prior) {
  warptrace_cp_async_wait_prior(static_cast<unsigned int>(prior));
}

// The copy happens at issue; the waiters are released when the transactions complete.
inline void warptrace_bulk_copy_g2s(void* smem_dst, const void* gmem_src, unsigned int bytes,
                                    unsigned long long* bar) {
  std::memcpy(smem_dst, gmem_src, bytes);
  WARPTRACE_HOST_ASYNC_WRITE(smem_dst, bytes, bar);
  warptrace_mbarrier_complete_tx(bar, bytes);
}

inline void warptrace_fence_mbarrier_init() {}
// The races check: the thread's generic-proxy shared-memory writes so far may be read by
// the async proxy (a TMA store, a wgmma operand).
inline void warptrace_fence_proxy_async() {
  WARPTRACE_HOST_SANITIZE_EVENT(WARPTRACE_HOST_EVENT_PROXY_FENCE, 0);
}

template <typename T>
inline T warptrace_poll(const volatile T* p) {
  const T value = *p;
  ::warptrace_host::Spin(p, ::warptrace_host::Bits(value), "warptrace_poll");
  return value;
}
inline unsigned int warptrace_load_acquire(const unsigned int* p) {
  const unsigned int value = __atomic_load_n(p, __ATOMIC_ACQUIRE);
  ::warptrace_host::Spin(p, value, "warptrace_load_acquire");
  return value;
}
inline void warptrace_store_release(unsigned int* p, unsigned int value) {
  __atomic_store_n(p, value, __ATOMIC_RELEASE);
}

#else  // the GPU

#define WARPTRACE_PRIMITIVE __device__ __forceinline__

WARPTRACE_PRIMITIVE unsigned int warptrace_smem_address(const void* p) {
  return static_cast<unsigned int>(__cvta_generic_to_shared(p));
}

WARPTRACE_PRIMITIVE void warptrace_named_barrier_sync(unsigned int id, unsigned int count) {
  asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(count) : "memory");
}
WARPTRACE_PRIMITIVE void warptrace_named_barrier_arrive(unsigned int id, unsigned int count) {
  asm volatile("bar.arrive %0, %1;" : : "r"(id), "r"(count) : "memory");
}

WARPTRACE_PRIMITIVE void warptrace_mbarrier_init(unsigned long long* bar, unsigned int count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;"
               :
               : "r"(warptrace_smem_address(bar)), "r"(count)
               : "memory");
}
WARPTRACE_PRIMITIVE unsigned long long warptrace_mbarrier_arrive(unsigned long long* bar) {
  unsigned long long state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];"
               : "=l"(state)
               : "r"(warptrace_smem_address(bar))
               : "memory");
  return state;
}
WARPTRACE_PRIMITIVE bool warptrace_mbarrier_test_wait_parity(unsigned long long* bar,
                                                             unsigned int parity) {
  unsigned int done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(warptrace_smem_address(bar)), "r"(parity & 1u)
      : "memory");
  return done != 0;
}

#if __CUDA_ARCH__ >= 900
WARPTRACE_PRIMITIVE unsigned long long warptrace_mbarrier_arrive_expect_tx(
    unsigned long long* bar, unsigned int bytes) {
  unsigned long long state;
  asm volatile("mbarrier.arrive.expect_tx.shared.b64 %0, [%1], %2;"
               : "=l"(state)
               : "r"(warptrace_smem_address(bar)), "r"(bytes)
               : "memory");
  return state;
}
WARPTRACE_PRIMITIVE void warptrace_mbarrier_expect_tx(unsigned long long* bar,
                                                      unsigned int bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;"
               :
               : "r"(warptrace_smem_address(bar)), "r"(bytes)
               : "memory");
}
WARPTRACE_PRIMITIVE void warptrace_mbarrier_complete_tx(unsigned long long* bar,
                                                        unsigned int bytes) {
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;"
               :
               : "r"(warptrace_smem_address(bar)), "r"(bytes)
               : "memory");
}
WARPTRACE_PRIMITIVE bool warptrace_mbarrier_try_wait_parity(unsigned long long* bar,
                                                            unsigned int parity) {
  unsigned int done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(warptrace_smem_address(bar)), "r"(parity & 1u)
      : "memory");
  return done != 0;
}
WARPTRACE_PRIMITIVE void warptrace_bulk_copy_g2s(void* smem_dst, const void* gmem_src,
                                                 unsigned int bytes, unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
      :
      : "r"(warptrace_smem_address(smem_dst)), "l"(gmem_src), "r"(bytes),
        "r"(warptrace_smem_address(bar))
      : "memory");
}
WARPTRACE_PRIMITIVE void warptrace_fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" : : : "memory");
}
WARPTRACE_PRIMITIVE void warptrace_fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" : : : "memory");
}
#else
WARPTRACE_PRIMITIVE void warptrace_fence_mbarrier_init() {}
WARPTRACE_PRIMITIVE void warptrace_fence_proxy_async() {}
// sm_80 has no try_wait: test_wait, which returns at once.
WARPTRACE_PRIMITIVE bool warptrace_mbarrier_try_wait_parity(unsigned long long* bar,
                                                            unsigned int parity) {
  return warptrace_mbarrier_test_wait_parity(bar, parity);
}
#endif

WARPTRACE_PRIMITIVE void warptrace_cp_async(void* smem_dst, const void* gmem_src,
                                            unsigned int bytes) {
  const unsigned int dst = warptrace_smem_address(smem_dst);
  if (bytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" : : "r"(dst), "l"(gmem_src) : "memory");
  } else if (bytes == 8) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" : : "r"(dst), "l"(gmem_src) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" : : "r"(dst), "l"(gmem_src) : "memory");
  }
}
WARPTRACE_PRIMITIVE void warptrace_cp_async_commit() {
  asm volatile("cp.async.commit_group;" : : : "memory");
}
WARPTRACE_PRIMITIVE void warptrace_cp_async_wait_prior(unsigned int n) {
  switch (n) {
    case 0: asm volatile("cp.async.wait_group 0;" : : : "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;" : : : "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;" : : : "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;" : : : "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;" : : : "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;" : : : "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;" : : : "memory"); break;
    default: asm volatile("cp.async.wait_group 7;" : : : "memory"); break;
  }
}

template <typename T>
WARPTRACE_PRIMITIVE T warptrace_poll(const volatile T* p) {
  return *p;
}
WARPTRACE_PRIMITIVE unsigned int warptrace_load_acquire(const unsigned int* p) {
  unsigned int value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(p) : "memory");
  return value;
}
WARPTRACE_PRIMITIVE void warptrace_store_release(unsigned int* p, unsigned int value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" : : "l"(p), "r"(value) : "memory");
}

#undef WARPTRACE_PRIMITIVE
#endif  // WARPTRACE_HOST_BACKEND

// Wait for the phase of `parity` to complete (on the host: a macro above).
#if !defined(WARPTRACE_HOST_BACKEND)
#define warptrace_mbarrier_check_phase(bar, phase) ((void)(bar), (void)(phase))
__device__ __forceinline__ void warptrace_mbarrier_wait_parity(unsigned long long* bar,
                                                               unsigned int parity) {
  while (!warptrace_mbarrier_try_wait_parity(bar, parity)) {
  }
}
#endif

// Tensor cores (mma.sync), ldmatrix / stmatrix and elect.sync.
#include "tensor_core_sm80.cuh"
// sm_90a warpgroup MMA (wgmma) and register reallocation (setmaxnreg).
#include "wgmma_sm90.cuh"
// TMA and tensor maps (sm_90): warptrace_tma_load_2d/3d, warptrace_tma_store_2d, the bulk
// groups, prefetch.tensormap, CUtensorMap.
#include "tma_sm90.cuh"
// Thread-block clusters (sm_90): the cluster barrier, mapa, peer shared memory and mbarriers.
#include "cluster_sm90.cuh"

#endif  // WARPTRACE_PRIMITIVES_CUH_
