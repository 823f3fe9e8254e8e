/* The ABI between the host backend's runtime (jit/host/runtime/runtime.h) and a kernel compiled for
 * the host backend (which force-includes cuda_on_cpu.h). Freestanding C: compiled into both
 * sides. Bump WARPTRACE_HOST_ABI_VERSION whenever anything here changes.
 *
 * Every CUDA thread is a fiber. Before the runtime resumes a fiber on one of its worker
 * threads it stores the fiber's WarptraceHostThread in warptrace_host_current (below), the
 * worker thread's current CUDA thread; threadIdx, blockIdx, ... read it from there.
 * Barriers, warp collectives, waits and spin-wait hooks call back into the runtime through
 * WarptraceHostRuntime. Those calls may switch to another fiber, and may not return: they
 * unwind the fiber with a C++ exception when the launch is aborted (a deadlock, a failed
 * assert), so the shared object must be compiled with exceptions enabled (the default).
 *
 * Exported by every host-backend shared object (defined in cuda_on_cpu.h):
 *   unsigned int warptrace_host_abi_version(void);   returns WARPTRACE_HOST_ABI_VERSION
 *   void <host_entry>(void** args);                  runs the kernel for the current thread
 * and it needs from the process (defined by the runtime, found when it is loaded):
 *   warptrace_host_current                           the thread-local current CUDA thread
 *   warptrace_host_clock, _globaltimer, _smid        the recorder's hooks (below)
 *   warptrace_host_assert_fail                       what the kernel's assert() calls
 */
#ifndef WARPTRACE_JIT_HOST_HOST_ABI_H_
#define WARPTRACE_JIT_HOST_HOST_ABI_H_

#include <time.h>

#define WARPTRACE_HOST_ABI_VERSION 14u

/* The most runs of plain shared-memory accesses a thread holds for the races check before
 * the runtime checks them (WarptraceHostThread::race_batch). */
#define WARPTRACE_HOST_RACE_BATCH 64u
/* A run of accesses of one statement, alike but for their offsets: accesses of `bytes`
 * at offset, offset + stride, ..., last (a loop's reads of a row, or of a column, which
 * the kernel interleaves: kept as two runs). */
struct WarptraceHostRaceAccess {
  unsigned int offset;    /* byte offset in the area of the run's first access */
  unsigned short bytes;
  unsigned short flags;   /* WARPTRACE_HOST_RACE_* */
  const char* statement;  /* the statement marker's builder path then */
  unsigned int stride;    /* bytes between the run's accesses, > 0; 0: one access */
  unsigned int last;      /* the offset of its last access */
};
#define WARPTRACE_HOST_RACE_DYNAMIC 1u /* in the dynamic shared memory (else the static) */
#define WARPTRACE_HOST_RACE_WRITE 2u   /* a write (else a read) */

/* The host backend's nominal "SM clock": %clock reads return the thread's virtual
 * nanoseconds (below) times this rate, so cycles and globaltimer nanoseconds calibrate to
 * exactly this clock.
 *
 * Virtual time. Fibers run one at a time, so wall time would charge every thread for the
 * work of all the threads that ran before it reached a barrier. Instead each thread reads a
 * clock that advances only while it runs (as if every thread had its own core), starting at
 * its block's start, and a synchronization point releases its waiters at the latest arrival
 * time: a thread's clock is steady-clock ns (warptrace_host_now_ns below) + clock_offset_ns,
 * the offset set by the runtime whenever it resumes the fiber. Blocks start when the
 * previous block of their slot ended (the first wave: at the launch's start), so blocks
 * overlap across virtual SMs as on a GPU.
 *
 * The deterministic clock (WarptraceHostClock::read_cost_ns != 0; HostDeviceOptions::clock):
 * no real clock is read at all. warptrace_host_now_ns returns 0, so a thread's virtual time
 * is its clock_offset_ns alone, and it advances only by explicit delays: every clock read
 * (clock(), clock64(), globaltimer, the recorder's stamps) takes read_cost_ns, so a
 * `while (clock64() - start < N)` loop takes N cycles (rounded up to whole reads) plus its
 * first read; __nanosleep(ns) takes ns; a synchronization point releases its waiters at the
 * latest arrival's time, as above. Work between clock reads takes no time. */
#define WARPTRACE_HOST_SM_CLOCK_KHZ 1500000ull

/* Hardware limits the host backend enforces like a GPU does. */
#define WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES (48u * 1024u)
#define WARPTRACE_HOST_NUM_NAMED_BARRIERS 16u

#ifdef __cplusplus
extern "C" {
#endif

struct WarptraceHostDim {
  unsigned int x, y, z;
};

struct WarptraceHostRuntime;

/* The steady clock both sides read, fixed for the duration of a launch. On x86-64 where
 * the TSC is invariant (cpuinfo's constant_tsc and nonstop_tsc) and the kernel's
 * clocksource is the TSC (synchronized across cores; virtual_clock.h TscClockUsable), it is the
 * TSC scaled to nanoseconds: ns_base + (rdtsc - tsc_base) * ns_per_tick_q32 / 2^32, a few ns
 * per read against ~20 for clock_gettime, which the runtime calls at every synchronization
 * point of every thread. The runtime sets tsc_base/ns_base from CLOCK_MONOTONIC at each
 * launch, so the reading stays CLOCK_MONOTONIC to within the rate's calibration error over
 * one launch. ns_per_tick_q32 == 0: no usable TSC, read CLOCK_MONOTONIC itself. */
struct WarptraceHostClock {
  unsigned long long tsc_base;
  long long ns_base;
  unsigned long long ns_per_tick_q32;
  /* Nonzero: the deterministic clock (above), each clock read taking this many ns. */
  long long read_cost_ns;
};

static inline long long warptrace_host_now_ns(const struct WarptraceHostClock* c) {
  if (c->read_cost_ns != 0) return 0;
#if defined(__x86_64__)
  if (c->ns_per_tick_q32 != 0) {
    const long long ticks = (long long)(__builtin_ia32_rdtsc() - c->tsc_base);
    return c->ns_base + (long long)(((__int128)ticks * (__int128)c->ns_per_tick_q32) >> 32);
  }
#endif
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000ll + (long long)ts.tv_nsec;
}

/* One per CUDA thread; owned by the runtime. The kernel writes only the clock fields
 * (clock_offset_ns in the deterministic mode, clock_last_ns, the paired globaltimer read),
 * through warptrace_host_virtual_ns and the recorder's hooks; the rest is read-only to it. */
struct WarptraceHostThread {
  struct WarptraceHostDim thread_idx, block_idx, block_dim, grid_dim;
  unsigned int sm_id;      /* the virtual SM (worker) running the block */
  unsigned int warp;       /* linear thread id / 32 */
  unsigned int lane;       /* linear thread id % 32 */
  unsigned int linear_tid; /* threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * z) */
  void* dynamic_shared;    /* the block's dynamic shared memory (aligned as the kernel
                              declares it, at least 16 bytes; its end abuts an
                              inaccessible guard page, also when it is 0 bytes) */
  void* static_shared;     /* the block's static __shared__ area (page-aligned, 48 KiB) */
  unsigned long long dynamic_shared_bytes; /* the launch's dynamic shared memory size */
  long long clock_offset_ns; /* virtual time = steady-clock ns + this (see above), */
  long long clock_limit_ns;  /* past this when the fiber stops, the runtime corrects it */
  long long clock_last_ns;   /* the last virtual time the kernel read (written by it) */
  void* fiber;             /* opaque: the runtime's fiber */
  const struct WarptraceHostRuntime* rt;
  const struct WarptraceHostClock* clock; /* the launch's steady clock (below) */
  /* Written by the kernel: the recorder's globaltimer read of a stamp pair, which the clock
   * read right after it takes (cuda_on_cpu.h). */
  unsigned long long paired_globaltimer_ns;
  int has_paired_globaltimer;
  /* Thread-block clusters (cluster_sm90.cuh): the launch's cluster shape in CTAs (1,1,1
   * without clusters), this CTA's cluster in the grid of clusters and its rank in it
   * (x fastest, as %cluster_ctarank). */
  struct WarptraceHostDim cluster_dim, cluster_idx;
  unsigned int cluster_rank;
  /* Written by the kernel: nonzero while a cluster-scope primitive (a remote mbarrier
   * arrival, a multicast copy's delivery) acts on a peer CTA's mbarrier, which a plain
   * (shared::cta) mbarrier operation must not. */
  int cluster_op;
  /* The sanitizer (WARPTRACE_HOST_SANITIZE_*, below). Written by the kernel: the builder
   * path of the statement the thread runs (its #line file name; null before the first),
   * stored by the marker the host compiler puts before each builder statement in sanitize
   * mode. Read-only to the kernel: the fiber's stack, whose accesses are never checked. */
  const char* statement;
  /* Written by the kernel in sanitize mode: the dynamic shared memory's declared name and
   * element size (null / 0 until the kernel declares it). */
  const char* dynamic_name;
  unsigned long long dynamic_element_bytes;
  unsigned long long stack_lo, stack_bytes;
  /* The sanitizer's inline filter (cuda_on_cpu.h SanitizeAccess), set by the runtime; the
   * kernel only reads them. Shadow bytes of the static and dynamic shared memory (2: written,
   * so any access is fine unless the races check is on; 3: warptrace's own arrays, fine in
   * every mode; else the runtime decides), and the launch's device buffers as
   * quadruples (window start, window bytes, start, end): an access inside [start, end) is
   * fine, one elsewhere in the window (the buffer with its slack and guard pages) goes to
   * the runtime, one in no window is not checked. With the races check, accesses of a
   * buffer whose buffer_races byte is 1 (a kernel argument not pointing to const) go to the
   * runtime too, and every atomic does. */
  const unsigned char* shadow_static;
  const unsigned char* shadow_dynamic;
  const unsigned long long* buffer_windows;
  const unsigned char* buffer_races;
  unsigned int num_buffers;
  /* [the lowest window start, the highest window end): an address outside is near no
   * buffer (most of the emulation's own memory), found without a look at each window. */
  unsigned long long buffers_lo, buffers_hi;
  /* Written by the kernel in sanitize mode, just before it reports a TMA load's delivery
   * (WARPTRACE_HOST_ACCESS_ASYNC_WRITE): the mbarrier the copy completes on (null for a
   * delivery that completes on no barrier). */
  const void* async_barrier;
  /* Sanitize mode with the races check (sanitize_host.h RaceOnly): the thread's plain reads
   * and writes of its own CTA's written shared memory since its last runtime call, checked
   * in program order by the runtime at its next call (any WarptraceHostRuntime entry, which
   * all come before anything that orders memory or switches threads) or when the batch is
   * full (race_flush). Kernel-written; `race_pending` reset by the runtime. */
  struct WarptraceHostRaceAccess race_batch[WARPTRACE_HOST_RACE_BATCH];
  unsigned int race_pending;
  /* The entry of race_batch the thread's last access joined (a hint only: an access
   * continues the other of the last two runs with any stride, this one contiguously). */
  unsigned int race_last;
};

/* The sanitizer's checks (HostDeviceOptions::sanitize; the kernel is compiled with
 * -DWARPTRACE_HOST_SANITIZE=<mask> and every load and store it keeps calls
 * WarptraceHostRuntime::access). */
#define WARPTRACE_HOST_SANITIZE_BOUNDS 1u /* shared arrays, dynamic shared, device buffers */
#define WARPTRACE_HOST_SANITIZE_RACES 2u  /* shared- and global-memory accesses not
                                            * ordered by happens-before (sanitizer.h,
                                            * races.h, global_races.h) */
#define WARPTRACE_HOST_SANITIZE_INIT 4u   /* shared memory read before any write */

/* WarptraceHostRuntime::access kinds. */
#define WARPTRACE_HOST_ACCESS_READ 0
#define WARPTRACE_HOST_ACCESS_WRITE 1
#define WARPTRACE_HOST_ACCESS_ASYNC_WRITE 2 /* an emulated TMA or cp.async delivery */
#define WARPTRACE_HOST_ACCESS_MMA_READ 3    /* a wgmma's shared-memory operand read */
#define WARPTRACE_HOST_ACCESS_BULK_READ 4   /* a TMA (bulk) store's shared-memory read */
#define WARPTRACE_HOST_ACCESS_ATOMIC 5      /* an atomic read-modify-write */
/* Events (address null, `bytes` the argument): the async groups whose completion orders
 * the accesses above (the races check). */
#define WARPTRACE_HOST_EVENT_MMA_COMMIT 16  /* wgmma.commit_group */
#define WARPTRACE_HOST_EVENT_MMA_WAIT 17    /* wgmma.wait_group `bytes` */
#define WARPTRACE_HOST_EVENT_BULK_COMMIT 18 /* cp.async.bulk.commit_group */
#define WARPTRACE_HOST_EVENT_BULK_WAIT 19   /* cp.async.bulk.wait_group.read `bytes` */
#define WARPTRACE_HOST_EVENT_PROXY_FENCE 20 /* fence.proxy.async */
#define WARPTRACE_HOST_EVENT_FENCE 21       /* __threadfence(), a fence.sc / fence.acq_rel */

/* Code of the kernel's shared object that the sanitizer's instrumentation must not see (its
 * callbacks, the emulation's own bookkeeping). clang's no_sanitize("thread") still
 * instruments atomics (so a callback's own atomic would call itself):
 * disable_sanitizer_instrumentation turns that off too. */
#if defined(__clang__) && defined(__has_attribute)
#if __has_attribute(disable_sanitizer_instrumentation)
#define WARPTRACE_HOST_UNINSTRUMENTED \
  __attribute__((no_sanitize_thread)) __attribute__((disable_sanitizer_instrumentation))
#endif
#endif
#ifndef WARPTRACE_HOST_UNINSTRUMENTED
#define WARPTRACE_HOST_UNINSTRUMENTED __attribute__((no_sanitize_thread))
#endif

/* The CUDA thread the calling worker thread runs (set by the runtime before it resumes a
 * fiber). Defined by the runtime, which is part of the program (never dlopen'ed), so it lives
 * in the static thread-local block and a kernel's shared object reaches it with the
 * initial-exec model: one load from %fs, not a __tls_get_addr call per threadIdx read (a
 * thread-local of the shared object itself would need one; measured 11% of a barrier). */
#if defined(WARPTRACE_HOST_SANITIZE)
/* A sanitize-mode kernel sees it const: the instrumentation then checks no read of it (a
 * call per threadIdx read and per runtime call). The runtime changes it only between
 * fibers, and each fiber sees its own thread whenever it runs. */
extern __thread struct WarptraceHostThread* const warptrace_host_current
    __attribute__((tls_model("initial-exec")));
#else
extern __thread struct WarptraceHostThread* warptrace_host_current
    __attribute__((tls_model("initial-exec")));
#endif

/* Warp collectives (WarptraceHostRuntime::warp). */
enum WarptraceHostWarpOp {
  WARPTRACE_HOST_WARP_SYNC = 0,      /* __syncwarp: result 0 */
  WARPTRACE_HOST_WARP_SHUFFLE = 1,   /* result: the value of lane `arg` (own when arg > 31) */
  WARPTRACE_HOST_WARP_BALLOT = 2,    /* value: predicate; result: bits of true lanes */
  WARPTRACE_HOST_WARP_MATCH_ANY = 3, /* result: lanes of the mask with an equal value */
  WARPTRACE_HOST_WARP_MATCH_ALL = 4  /* result: the mask if all values are equal, else 0 */
};

/* The groups of WarptraceHostRuntime::exchange: the caller's warp, or its warpgroup (the
 * four warps 4k..4k+3 that hold it: linear thread ids 128k..128k+127). */
#define WARPTRACE_HOST_GROUP_WARP 32u
#define WARPTRACE_HOST_GROUP_WARPGROUP 128u

/* Block barrier reductions (WarptraceHostRuntime::barrier). */
enum WarptraceHostBarrierOp {
  WARPTRACE_HOST_BARRIER_PLAIN = 0,
  WARPTRACE_HOST_BARRIER_COUNT = 1, /* result: how many threads passed a true predicate */
  WARPTRACE_HOST_BARRIER_AND = 2,
  WARPTRACE_HOST_BARRIER_OR = 3
};

struct WarptraceHostRuntime {
  /* bar.sync (wait != 0) / bar.arrive (wait == 0) on barrier `id` (0..15) with `count`
   * participating threads (0: the whole block; else a multiple of 32). Returns the
   * reduction of `predicate` over the phase's arrivals for `op` (waiters only). */
  int (*barrier)(void* fiber, unsigned int id, unsigned int count, int wait, int op,
                 int predicate, const char* what);
  /* A warp collective among the lanes of `mask` (which must name the caller); `what` is the
   * CUDA name for messages. */
  unsigned long long (*warp)(void* fiber, int op, unsigned int mask, unsigned long long value,
                             unsigned int arg, const char* what);
  /* The lanes of the caller's warp that have not exited. */
  unsigned int (*active_mask)(void* fiber);
  /* The block's storage for static __shared__ declaration `site` (numbered per translation
   * unit), `bytes` long and `align`-aligned, of elements of `element_bytes` (for the
   * sanitizer's indices); fails the launch past the 48 KiB limit. */
  void* (*shared)(void* fiber, unsigned int site, unsigned long long bytes,
                  unsigned long long align, unsigned long long element_bytes,
                  const char* name);
  /* Parks the caller until the mbarrier at `bar` leaves the phase of parity `parity`
   * (woken by mbarrier_arrived); at once when it already has. `what`: the operation and
   * place for the deadlock report ("mbarrier wait at <file>, line <n>"). */
  void (*mbarrier_wait)(void* fiber, unsigned long long* bar, unsigned int parity,
                        const char* what);
  /* The caller arrived on (or completed transactions of) the mbarrier at `bar`; `completed`:
   * that completed the phase, wake its waiters. */
  void (*mbarrier_arrived)(void* fiber, unsigned long long* bar, int completed);
  /* Spin-wait hook: the caller polled `address` and saw `value` (what: the helper's name);
   * lets other fibers run. */
  void (*spin)(void* fiber, const volatile void* address, unsigned long long value,
               const char* what);
  /* cp.async: copies `bytes` from `src` to `dst` when a later wait covers its group. */
  void (*cp_async)(void* fiber, void* dst, const void* src, unsigned int bytes);
  void (*cp_async_commit)(void* fiber);
  void (*cp_async_wait_prior)(void* fiber, unsigned int groups);
  /* The caller's virtual time, when steady-clock ns + clock_offset_ns passed clock_limit_ns:
   * the runtime takes out the time the worker thread was not running (preempted by the
   * OS), which would otherwise be charged to the thread, and sets a new limit. */
  unsigned long long (*clock)(void* fiber);
  /* Fails the launch with `message` (an assert) and ends the calling thread without
   * unwinding its stack (callable from noexcept code); does not return. */
  void (*fail)(void* fiber, const char* message);
  /* The operand exchange that warp- and warpgroup-wide instructions (mma.sync, ldmatrix,
   * stmatrix, wgmma, setmaxnreg, ...) are built on. `group` is WARPTRACE_HOST_GROUP_WARP
   * (the caller's warp) or WARPTRACE_HOST_GROUP_WARPGROUP (its warpgroup). Every thread of
   * the group contributes the `bytes` bytes at `operands`; the caller parks until all of
   * them have, and then every member gets back the same `group` x `bytes` bytes: the
   * contribution of the thread at position i of the group (its lane, or its linear thread
   * id % 128) at offset i * bytes. The memory is the runtime's, read-only, and stays valid
   * until the caller's next exchange of the same group kind: each group keeps two buffers
   * and alternates them, so members that went on to the next exchange cannot overwrite an
   * exchange that slower members are still reading (a member can only be one exchange
   * ahead: an exchange completes only when every member arrived at it). Operands are
   * compared by `what` (the instruction, e.g. "mma.sync.aligned.m16n8k16...") and `bytes`:
   * members naming a different instruction or size, a member that has exited (at once, or
   * when it exits while the others wait), or a group the block does not fully have (a
   * partial last warp, fewer threads than the warpgroup) fail the launch, naming the block,
   * the threads and the instruction; a member that never arrives is a deadlock whose report
   * names the instruction and the threads missing. The completing thread's time, like
   * every member's, becomes the latest arrival's (as at a barrier). */
  const void* (*exchange)(void* fiber, unsigned int group, const void* operands,
                          unsigned int bytes, const char* what);
  /* The cluster barrier (barrier.cluster): the caller arrives (arrive != 0) and/or waits
   * (wait != 0) until every non-exited thread of the cluster has arrived for the phase of
   * its own last arrival. A wait without an arrival, or a second arrival before the wait,
   * fails the launch. */
  void (*cluster_barrier)(void* fiber, int arrive, int wait, const char* what);
  /* mapa: the address in the shared memory of the cluster's CTA `rank` that corresponds to
   * `address` in the caller's. Fails the launch for a rank outside the cluster, an address
   * outside the caller's shared memory, or a CTA that has exited. `track`: the caller may
   * keep using the address (mapa), so the peer must not exit before a later cluster barrier
   * phase; 0 for a one-off access the instruction completes (a multicast copy's delivery). */
  void* (*mapa)(void* fiber, const void* address, unsigned int rank, int track,
                const char* what);
  /* mbarrier.init of the mbarrier at `bar` by the caller: in a cluster, peers may use it
   * only after a cluster barrier phase that completes after the init (the init made visible
   * with fence.mbarrier_init.release.cluster, then barrier.cluster arrive/wait). */
  void (*mbarrier_init)(void* fiber, unsigned long long* bar);
  /* Sanitize mode only (never called otherwise): the caller accesses `bytes` bytes at
   * `address` (a WARPTRACE_HOST_ACCESS_* kind). Checks them against the block's shared
   * arrays and the launch's device buffers (anything else is not checked); a finding is
   * recorded (the launch fails when it ends), or fails the launch at once when the access
   * would fault. */
  void (*access)(void* fiber, const void* address, unsigned long long bytes, int kind);
  /* Sanitize mode with the races check only: the caller's access of `bytes` bytes at byte
   * `offset` of its own CTA's static (area 0) or dynamic (area 1) shared memory, in bounds
   * and every byte written (shadow 2 or 3, so the bounds and init checks have nothing to
   * say), of a kind other than a plain read or write (those join race_batch): the races
   * check alone, without `access`'s look-up of the address. */
  void (*race)(void* fiber, int area, unsigned long long offset, unsigned long long bytes,
               int kind);
  /* The races check of the caller's full race_batch (every entry does it first). */
  void (*race_flush)(void* fiber);
};

/* mbarrier words (an 8-byte object in shared memory, as on the GPU) hold, on the host
 * backend: bits 0-20 pending arrivals, 21-41 expected arrivals, 42-62 the transaction count
 * (two's complement), bit 63 the phase parity. A phase completes when pending arrivals and
 * the transaction count are both 0. */
#define WARPTRACE_HOST_MBAR_PENDING(w) ((unsigned int)((w)&0x1fffffull))
#define WARPTRACE_HOST_MBAR_EXPECTED(w) ((unsigned int)(((w) >> 21) & 0x1fffffull))
#define WARPTRACE_HOST_MBAR_TX(w) \
  ((int)((((w) >> 42) & 0x1fffffull) ^ 0x100000ull) - 0x100000)
#define WARPTRACE_HOST_MBAR_PHASE(w) ((unsigned int)((w) >> 63))

/* The calling thread's virtual time in ns (see above): the kernel's globaltimer, clock()
 * and clock64(), read in the kernel (cuda_on_cpu.h) and by the recorder's hooks below. */
static inline long long warptrace_host_virtual_ns(struct WarptraceHostThread* t) {
  const long long read_cost = t->clock->read_cost_ns;
  if (read_cost != 0) { /* deterministic: the read itself is what takes time */
    t->clock_offset_ns += read_cost;
    t->clock_last_ns = t->clock_offset_ns;
    return t->clock_offset_ns;
  }
  long long v = warptrace_host_now_ns(t->clock) + t->clock_offset_ns;
  if (v > t->clock_limit_ns) v = (long long)t->rt->clock(t->fiber);
  t->clock_last_ns = v;
  return v;
}

/* The SM cycle count at virtual time `ns`: ns x kHz / 10^6 without overflowing 64 bits. */
static inline unsigned long long warptrace_host_cycles_at(unsigned long long ns) {
  return (ns / 1000000ull) * WARPTRACE_HOST_SM_CLOCK_KHZ +
         (ns % 1000000ull) * WARPTRACE_HOST_SM_CLOCK_KHZ / 1000000ull;
}

/* The calling thread's SM cycle count now (the kernel's clock() and clock64()). */
static inline unsigned long long warptrace_host_cycles(struct WarptraceHostThread* t) {
  return warptrace_host_cycles_at((unsigned long long)warptrace_host_virtual_ns(t));
}

/* The recorder's host hooks (format/recorder.cuh), defined by the runtime and
 * exported by the program: compiled once there instead of in every kernel (they were ~15 ms
 * of each kernel's compile). For the current thread:
 *   warptrace_host_clock        32-bit "SM cycles": virtual ns x WARPTRACE_HOST_SM_CLOCK_KHZ
 *   warptrace_host_globaltimer  virtual ns
 *   warptrace_host_smid         the block's virtual SM
 * The recorder stamps a unit's start and end with a globaltimer read followed at once by a
 * clock read; on a GPU the two are a few cycles apart. On the host the OS may preempt the
 * worker between them (milliseconds under load), which would break the pair's cycles per ns
 * that calibration relies on. So the clock read that follows a globaltimer read takes the
 * same instant (WarptraceHostThread::paired_globaltimer_ns: no fiber switch can come between
 * the two reads, there is no synchronization point).
 * warptrace_host_assert_fail: a failed assert() in the kernel (its __assert_fail forwards
 * here); fails the launch naming the thread and ends it without unwinding.
 * warptrace_host_trips_differ: a thread ran a TripCount::Exact loop another number of times
 * (format/recorder.cuh, WARPTRACE_TRIPS_END); fails the launch like a failed assert(). */
unsigned int warptrace_host_clock(void);
unsigned long long warptrace_host_globaltimer(void);
unsigned int warptrace_host_smid(void);
__attribute__((noreturn)) void warptrace_host_assert_fail(const char* assertion,
                                                          const char* file, unsigned int line,
                                                          const char* function);
__attribute__((noreturn)) void warptrace_host_trips_differ(const char* loop,
                                                           unsigned long long declared,
                                                           unsigned long long ran);

typedef unsigned int (*WarptraceHostAbiVersionFn)(void);
/* The kernel's host entry (KernelSource::host_entry): runs the kernel for the current
 * thread. */
typedef void (*WarptraceHostEntryFn)(void** args);

#ifdef __cplusplus
}
#endif

#endif /* WARPTRACE_JIT_HOST_HOST_ABI_H_ */
