// CUDA on the CPU: the header the host backend force-includes (-include cuda_on_cpu.h, with
// -DWARPTRACE_HOST_BACKEND) when it compiles CUDA source with the system C++ compiler into
// a shared object that its runtime (jit/host/runtime/runtime.h) runs, one fiber per CUDA thread.
// Before compiling, the host compiler lowers the source (jit/host/compiler/source_lowering.h):
// `__shared__` declarations become per-block storage, inline PTX a clear error.
//
// Supported, with CUDA's names and semantics:
//   __global__ __device__ __host__ __forceinline__ __noinline__ __align__(n)
//   __launch_bounds__(...) __grid_constant__ __restrict__ (native)
//   threadIdx blockIdx blockDim gridDim warpSize   the running fiber's (read-only)
//   __shared__            per-block storage (static: at most 48 KiB per block, else the
//                         launch fails; `extern __shared__ T a[]` and
//                         WARPTRACE_DYNAMIC_SHARED(type, name) and
//                         WARPTRACE_DYNAMIC_SHARED_ALIGNED(type, name, align): the dynamic
//                         shared memory)
//   __syncthreads __syncthreads_count/_and/_or     barrier 0 of the block
//   __syncwarp __shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __ballot_sync
//   __any_sync __all_sync __match_any_sync __match_all_sync __activemask
//                         resolved when every lane named in the mask arrived, with the PTX
//                         ISA's shfl.sync source-lane rules (width and clamp); a lane that
//                         is not in its own mask, or a named lane that exited, fails the
//                         launch. __activemask: the warp's lanes that have not exited.
//   atomicAdd atomicSub atomicExch atomicMin atomicMax atomicCAS atomicAnd atomicOr
//   atomicXor             (__atomic builtins). Reads through atomics (a failed atomicCAS,
//                         atomicAdd/Or/Xor/Sub of 0, atomicAnd of ~0) are spin-wait hooks:
//                         they let other threads (and blocks) run
//   __nanosleep           a spin-wait hook
//   __threadfence __threadfence_block __threadfence_system, __ldg and the other
//                         cache-hinted loads and stores (__ldcg __ldca __ldcs __ldlu __ldcv
//                         __stwb __stcg __stcs __stwt: plain accesses), __popc __popcll __clz
//   __clzll __ffs __ffsll __brev, min max (CUDA's mixed overloads), fmaf, <cmath> (less
//                         C++17's special math functions, which CUDA lacks too), rsqrtf
//   __expf __logf __sinf __cosf __tanf __sincosf __powf __log2f __log10f __exp10f
//   __fdividef fdividef __saturatef   fast math, computed at full precision on the host
//   __fadd_rn __fsub_rn __fmul_rn __fdiv_rn __frcp_rn __fsqrt_rn __frsqrt_rn __fmaf_rn
//   __dadd_rn __dmul_rn __fma_rn      IEEE round-to-nearest arithmetic
//   __float2int_rn/_rz/_rd/_ru __float2uint_rn/_rz __int2float_rn __uint2float_rn
//   __double2int_rn/_rz __double2float_rn            conversions
//   __int_as_float __float_as_int __uint_as_float __float_as_uint __longlong_as_double
//   __double_as_longlong __double2hiint __double2loint __hiloint2double   reinterpretation
//   <math_constants.h>    CUDART_INF_F, CUDART_NAN_F, CUDART_PI_F, ... (warptrace's copy,
//                         jit/primitives/math_constants.h, embedded for both backends; NVRTC has
//                         no math_constants.h and no INFINITY / NAN / M_PI: RunKernel's NVRTC
//                         check rejects those on the host backend too)
//   clock() clock64()     "SM cycles": the thread's virtual ns × 1.5 GHz (the recorder's
//                         scale; see host_abi.h for virtual time)
//   printf                the C library's
//   assert                a failed assert fails the launch naming block and thread
//   vector types          char1..4 ... double1..4 with CUDA's alignment, make_<type>
//   __half __nv_bfloat16 __half2 __nv_bfloat162 (and _raw)   storage, the conversions
//                         kernels use, bit-exact with the CUDA headers on every input (see
//                         the section below), arithmetic and comparisons through float
//                         (after #include <cuda_fp16.h> or <cuda_bf16.h>, as with NVRTC)
//   nvcuda::wmma          a compile error: tensor cores need a GPU
//   wgmma, setmaxnreg     (sm_90a; warptrace_primitives.cuh's wgmma_sm90.cuh) emulated in
//                         wgmma_host.h: exact layouts, fp32 in a documented order, the
//                         asynchrony and its misuse checked; __cvta_generic_to_shared
//                         returns the shared-memory window address descriptors hold
//   warp- and warpgroup-wide instructions of warptrace_primitives.cuh (mma.sync, ldmatrix,
//                         stmatrix, ...) run on the runtime's operand exchange
//                         (warptrace_host::Exchange / Uniform below; host_abi.h): every
//                         thread of the warp (or warpgroup) hands in its operands and waits
//                         for the others, then computes its own results from all of them; a
//                         member that exited, is missing, or executes another instruction
//                         fails the launch naming block, threads and instruction
// The named barriers, mbarriers, cp.async and bulk copies are in warptrace_primitives.cuh
// (one source for the GPU and the host), included at the end of this header; TMA copies and
// CUtensorMap in tma_sm90.cuh (which it includes; the descriptor: host_tma.h).
//
// The recorder's host hooks (format/recorder.cuh: warptrace_host_clock,
// warptrace_host_globaltimer, warptrace_host_smid) are the runtime's, declared in host_abi.h:
// Δclock / Δglobaltimer calibrates to WARPTRACE_HOST_SM_CLOCK_KHZ exactly.
//
// Compiled as C++17 (the oldest standard emitted code may rely on).
#ifndef WARPTRACE_JIT_HOST_CUDA_ON_CPU_H_
#define WARPTRACE_JIT_HOST_CUDA_ON_CPU_H_

// <cstdint> first: it brings in libstdc++'s configuration (bits/c++config.h), so the C++17
// special math functions (std::riemann_zeta, std::assoc_laguerre, ...) can be switched off
// before <cmath> (and <math.h>, which includes it) would declare them. CUDA device code has
// none of them, and they are most of what <cmath> costs every compile: their templates are
// instantiated at the end of every translation unit (~25 ms of each kernel compile, with the
// precompiled header too) and make the precompiled header 16 MB instead of 11 (BM_Compile
// and BM_FirstCompile in tests/jit/host/host_compile_benchmark.cc).
#include <cstdint>
#undef _GLIBCXX_USE_STD_SPEC_FUNCS

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <type_traits>

#include "host_abi.h"
#ifdef WARPTRACE_HOST_SANITIZE  // the C library's memcpy (sanitize_host.h __wrap_memcpy)
extern "C" void* __real_memcpy(void*, const void*, size_t);
#endif
// What every kernel sees on both backends (fixed-width integers, <climits>, <cfloat>).
#include "warptrace_device_prelude.cuh"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
// A kernel parameter the kernel may take the address of (a CUtensorMap): on the host every
// parameter is an ordinary by-value argument already.
#define __grid_constant__
// Lowered away by the host compiler; one left over is a form it does not support.
#define __shared__ \
  _Pragma("GCC error \"this __shared__ declaration is not supported by the host backend: declare one variable per statement (`__shared__ T name[N];` or `extern __shared__ T name[];`)\"")

namespace warptrace_host {

// A load of the emulation's own plumbing (the runtime's entry table, the fiber): in sanitize
// mode on x86-64 an asm load, which the sanitizer's instrumentation does not see (as a plain
// load each cost a callback, a few per runtime call: 5% of the pipeline's sanitized launch).
template <typename T>
__attribute__((always_inline)) inline T Plumbing(const T& x) {
#if defined(WARPTRACE_HOST_SANITIZE) && defined(__x86_64__)
  static_assert(sizeof(T) == 8, "a pointer");
  T v;
  asm("movq %1, %0" : "=r"(v) : "m"(x));
  return v;
#else
  return x;
#endif
}
// The fiber running on this worker thread (set by the runtime before every resume).
inline const WarptraceHostThread& Current() { return *warptrace_host_current; }
inline void* Fiber() { return Plumbing(warptrace_host_current->fiber); }
inline const WarptraceHostRuntime& Rt() { return *Plumbing(warptrace_host_current->rt); }
// The runtime's entry `fn` (host_abi.h WarptraceHostRuntime), to call with Fiber() first.
#define WARPTRACE_HOST_RT(fn) (::warptrace_host::Plumbing(::warptrace_host::Rt().fn))
// For the clock fields the kernel writes (host_abi.h, WarptraceHostThread).
inline WarptraceHostThread& MutableCurrent() { return *warptrace_host_current; }

}  // namespace warptrace_host

typedef WarptraceHostDim uint3;
struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  constexpr dim3(const WarptraceHostDim& d) : x(d.x), y(d.y), z(d.z) {}
};

#define threadIdx (::warptrace_host::Current().thread_idx)
#define blockIdx (::warptrace_host::Current().block_idx)
#define blockDim (::warptrace_host::Current().block_dim)
#define gridDim (::warptrace_host::Current().grid_dim)
static constexpr int warpSize = 32;

#define WARPTRACE_DYNAMIC_SHARED(type, name) \
  type* const name = ::warptrace_host::DynamicShared<type>(#name)
// The runtime places the base on KernelSource::dynamic_shared_align (the emitter sets it to
// `align`), so the macro only names it.
#define WARPTRACE_DYNAMIC_SHARED_ALIGNED(type, name, align) \
  type* const name = ::warptrace_host::DynamicShared<type>(#name)

namespace warptrace_host {

template <typename T>
struct Identity {
  using type = T;
};
template <typename T>
using NonDeduced = typename Identity<T>::type;

// Per-block storage for the lowered `__shared__ T name;` (T may be an array type).
template <typename T, unsigned long long Align = alignof(T)>
inline T& Shared(unsigned int site, const char* name) {
  constexpr unsigned long long kAlign = Align > alignof(T) ? Align : alignof(T);
  return *static_cast<T*>(WARPTRACE_HOST_RT(shared)(Fiber(), site, sizeof(T), kAlign,
                                      sizeof(std::remove_all_extents_t<T>), name));
}
// `name`: the declaration's, for the sanitizer's messages (sanitize mode only).
template <typename T>
inline T* DynamicShared(const char* name) {
#ifdef WARPTRACE_HOST_SANITIZE
  MutableCurrent().dynamic_name = name;
  MutableCurrent().dynamic_element_bytes = sizeof(T);
#else
  (void)name;
#endif
  return static_cast<T*>(Current().dynamic_shared);
}

// The runtime entries a kernel calls, with its fiber.
inline void Spin(const volatile void* address, unsigned long long value, const char* what) {
  WARPTRACE_HOST_RT(spin)(Fiber(), address, value, what);
}

inline int Barrier(unsigned int id, unsigned int count, int wait, int op, int predicate,
                   const char* what) {
  return WARPTRACE_HOST_RT(barrier)(Fiber(), id, count, wait, op, predicate, what);
}

inline unsigned long long Warp(int op, unsigned int mask, unsigned long long value,
                               unsigned int arg, const char* what) {
  return WARPTRACE_HOST_RT(warp)(Fiber(), op, mask, value, arg, what);
}

// ---- Warp- and warpgroup-wide instructions: the operand exchange (host_abi.h) ----
// Instructions whose threads read each other's operands (mma.sync, ldmatrix, stmatrix,
// wgmma, ...) are emulated in two steps: every thread of the group hands its operands to
// Exchange, which parks it until the whole group has (the runtime fails the launch on a
// member that exited, is missing, or executes another instruction), and then each thread
// computes its own results from everyone's operands.
//
//   struct Operands { unsigned a[4], b[2]; float c[4]; };
//   const Operands* all = Exchange(WARPTRACE_HOST_GROUP_WARP, Operands{...}, "mma.sync...");
//   ... all[lane] is lane's operands, for every lane of the warp
//
// The result stays valid until this thread's next exchange of the same group kind.
// GroupPosition: the thread's index in its group (lane; linear thread id % 128).
// Uniform: an operand that must be the same in every member (a wgmma descriptor, a
// setmaxnreg count): returns it, or fails the launch naming the instruction, the operand and
// the first thread whose value differs from position 0's.
inline unsigned int GroupPosition(unsigned int group) { return Current().linear_tid % group; }

template <typename T>
inline const T* Exchange(unsigned int group, const T& operands, const char* what) {
  static_assert(std::is_trivially_copyable<T>::value, "exchanged operands are copied bytes");
  return static_cast<const T*>(
      WARPTRACE_HOST_RT(exchange)(Fiber(), group, &operands,
                                  static_cast<unsigned int>(sizeof(T)), what));
}

template <typename T>
inline T Uniform(unsigned int group, const T& value, const char* what, const char* operand) {
  const T* all = Exchange(group, value, what);
  const unsigned int first = Current().linear_tid / group * group;
  for (unsigned int i = 1; i < group; ++i) {
    if (std::memcmp(&all[i], &all[0], sizeof(T)) == 0) continue;
    // The differing thread fails the launch (its name prefixes the message); the others
    // go on to be stopped at their next synchronization point.
    if (GroupPosition(group) == i) {
      unsigned long long mine = 0, first_value = 0;
      __builtin_memcpy(&mine, &all[i], sizeof(T) < 8 ? sizeof(T) : 8);
      __builtin_memcpy(&first_value, &all[0], sizeof(T) < 8 ? sizeof(T) : 8);
      char message[512];
      snprintf(message, sizeof message,
               "%s: operand %s must be the same in every thread of the %s (threads %u-%u), "
               "but thread %u has 0x%llx%s where thread %u has 0x%llx",
               what, operand, group == WARPTRACE_HOST_GROUP_WARP ? "warp" : "warpgroup", first,
               first + group - 1, first + i, mine, sizeof(T) > 8 ? "..." : "", first,
               first_value);
      WARPTRACE_HOST_RT(fail)(Fiber(), message);
    }
    break;
  }
  return value;
}

template <typename T>
inline unsigned long long Bits(T value) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                "warp collectives exchange values of at most 8 bytes");
  unsigned long long bits = 0;
  __builtin_memcpy(&bits, &value, sizeof(T));
  return bits;
}
template <typename T>
inline T FromBits(unsigned long long bits) {
  T out;
  __builtin_memcpy(&out, &bits, sizeof(T));
  return out;
}

enum ShflMode { kShflIdx, kShflUp, kShflDown, kShflBfly };

// The source lane of shfl.sync (PTX ISA, "Parallel Synchronization and Communication
// Instructions: shfl.sync"): c packs the segment mask (bits 8-12) and the clamp (bits 0-4);
// an out-of-range source reads the lane's own value (returned as 32: "own").
inline unsigned int ShflSource(ShflMode mode, unsigned int lane, unsigned int b,
                               unsigned int c) {
  const unsigned int segmask = (c >> 8) & 0x1f;
  const unsigned int max_lane = (lane & segmask) | (c & 0x1f & ~segmask);
  const unsigned int min_lane = lane & segmask;
  int j = 0;
  bool valid = false;
  switch (mode) {
    case kShflUp:
      j = static_cast<int>(lane) - static_cast<int>(b);
      valid = j >= static_cast<int>(max_lane);
      break;
    case kShflDown:
      j = static_cast<int>(lane + b);
      valid = static_cast<unsigned int>(j) <= max_lane && b <= 31;
      break;
    case kShflBfly:
      j = static_cast<int>(lane ^ b);
      valid = static_cast<unsigned int>(j) <= max_lane;
      break;
    case kShflIdx:
      j = static_cast<int>(min_lane | (b & 0x1f & ~segmask));
      valid = static_cast<unsigned int>(j) <= max_lane;
      break;
  }
  return valid ? static_cast<unsigned int>(j) : 32u;
}

template <typename T>
inline T Shuffle(unsigned int mask, T value, ShflMode mode, unsigned int b, int width,
                 unsigned int clamp, const char* what) {
  const WarptraceHostThread& t = Current();
  const unsigned int c = ((32u - static_cast<unsigned int>(width)) << 8) | clamp;
  const unsigned int src = ShflSource(mode, t.lane, b, c);
  return FromBits<T>(WARPTRACE_HOST_RT(warp)(Fiber(), WARPTRACE_HOST_WARP_SHUFFLE, mask,
                                             Bits(value), src == 32u ? t.lane : src, what));
}

// Atomics (CasLoop and the atomic* functions below). In sanitize mode they are not
// instrumented: each reports itself as an atomic access (sanitize_host.h), which the races
// check never counts against another atomic.
#ifdef WARPTRACE_HOST_SANITIZE
inline void NoteAtomic(const void* p, unsigned long long bytes);
inline void NoteFence();
#define WARPTRACE_HOST_ATOMIC_FN WARPTRACE_HOST_UNINSTRUMENTED
#define WARPTRACE_HOST_NOTE_ATOMIC(p) ::warptrace_host::NoteAtomic((p), sizeof(*(p)))
#define WARPTRACE_HOST_NOTE_FENCE() ::warptrace_host::NoteFence()
// The emulation's own bookkeeping (wgmma_host.h, wgmma_layout_host.h: layout checks, pending
// groups, exchanges): it touches warptrace's own state and the thread's registers, never
// the kernel's shared or global memory except through reported accesses, so it is not
// instrumented (the layout check alone made 100 million checked loads per hopper_gemm launch).
#define WARPTRACE_HOST_OWN_FN WARPTRACE_HOST_UNINSTRUMENTED
// The emulation's own copy of a run-time length: not checked as the kernel's memcpy calls are.
#define WARPTRACE_HOST_RAW_COPY(d, s, n) __real_memcpy((d), (s), (n))
#else
#define WARPTRACE_HOST_RAW_COPY(d, s, n) __builtin_memcpy((d), (s), (n))
#define WARPTRACE_HOST_ATOMIC_FN
#define WARPTRACE_HOST_OWN_FN
#define WARPTRACE_HOST_NOTE_FENCE() ((void)0)
#define WARPTRACE_HOST_NOTE_ATOMIC(p) ((void)0)
#endif
template <typename T, typename F>
WARPTRACE_HOST_ATOMIC_FN inline T CasLoop(T* address, F update) {
  T old = *address;
  T desired;
  do {
    desired = update(old);
  } while (!__atomic_compare_exchange(address, &old, &desired, false, __ATOMIC_SEQ_CST,
                                      __ATOMIC_SEQ_CST));
  return old;
}

// An atomic that only read: a spin-wait poll.
template <typename T>
inline T PollResult(T* address, T old, const char* what) {
  Spin(address, Bits(old), what);
  return old;
}

// The running thread's SM cycles, from its virtual time (host_abi.h).
// Within a slice the clock is the steady clock (so stamps read together, like the
// recorder's globaltimer and clock, always agree); preemption is taken out when the fiber
// stops (runtime.cc, StopClock), never below the last value read here.
// Past the slice's limit the runtime takes out the time the worker was preempted first:
// without that, a read right after a preemption would pin the preemption into the thread's
// time (the runtime never moves a clock below a value the kernel read).
inline unsigned long long Cycles() { return warptrace_host_cycles(&MutableCurrent()); }

}  // namespace warptrace_host

// ---- Barriers and warp collectives ----

// Barriers name where they were called: `what` is "<op> at <file>, line <n>", a string
// literal made at compile time (nothing to format at run time). In emitted kernels the
// emitter's #line directives make <file> the builder construct ("kernel k > region r >
// barrier b", or "... > statement `...`" with the line inside the statement), so messages
// and the deadlock report (block.cc) name it.
#define WARPTRACE_HOST_STR_(x) #x
#define WARPTRACE_HOST_STR(x) WARPTRACE_HOST_STR_(x)
#define WARPTRACE_HOST_AT(op) op " at " __FILE__ ", line " WARPTRACE_HOST_STR(__LINE__)

namespace warptrace_host {
inline void SyncThreads(const char* what) {
  Barrier(0, 0, 1, WARPTRACE_HOST_BARRIER_PLAIN, 0, what);
}
inline int SyncThreadsReduce(int op, int predicate, const char* what) {
  return Barrier(0, 0, 1, op, predicate != 0, what);
}
}  // namespace warptrace_host

#define __syncthreads() ::warptrace_host::SyncThreads(WARPTRACE_HOST_AT("__syncthreads"))
#define __syncthreads_count(predicate)                                               \
  ::warptrace_host::SyncThreadsReduce(WARPTRACE_HOST_BARRIER_COUNT, (predicate),      \
                                      WARPTRACE_HOST_AT("__syncthreads_count"))
#define __syncthreads_and(predicate)                                                \
  ::warptrace_host::SyncThreadsReduce(WARPTRACE_HOST_BARRIER_AND, (predicate),       \
                                      WARPTRACE_HOST_AT("__syncthreads_and"))
#define __syncthreads_or(predicate)                                                 \
  ::warptrace_host::SyncThreadsReduce(WARPTRACE_HOST_BARRIER_OR, (predicate),        \
                                      WARPTRACE_HOST_AT("__syncthreads_or"))
namespace warptrace_host {
struct SyncWarp {  // SyncWarp(where)(mask): the macro below takes 0 or 1 arguments
  const char* what;
  void operator()(unsigned int mask = 0xffffffffu) const {
    Warp(WARPTRACE_HOST_WARP_SYNC, mask, 0, 0, what);
  }
};
}  // namespace warptrace_host
#define __syncwarp(...) ::warptrace_host::SyncWarp{WARPTRACE_HOST_AT("__syncwarp")}(__VA_ARGS__)
inline unsigned int __activemask() {
  return WARPTRACE_HOST_RT(active_mask)(::warptrace_host::Fiber());
}

// The shuffles name their call site like the barriers ("__shfl_xor_sync at <builder path>,
// line <n>"), so a mismatch's deadlock report says which of the kernel's shuffles each lane
// waits at.
namespace warptrace_host {
template <typename T>
inline T ShflSync(const char* what, unsigned int mask, T var, int src_lane, int width = 32) {
  return Shuffle(mask, var, kShflIdx, static_cast<unsigned int>(src_lane), width, 0x1f, what);
}
template <typename T>
inline T ShflUpSync(const char* what, unsigned int mask, T var, unsigned int delta,
                    int width = 32) {
  return Shuffle(mask, var, kShflUp, delta, width, 0, what);
}
template <typename T>
inline T ShflDownSync(const char* what, unsigned int mask, T var, unsigned int delta,
                      int width = 32) {
  return Shuffle(mask, var, kShflDown, delta, width, 0x1f, what);
}
template <typename T>
inline T ShflXorSync(const char* what, unsigned int mask, T var, int lane_mask,
                     int width = 32) {
  return Shuffle(mask, var, kShflBfly, static_cast<unsigned int>(lane_mask), width, 0x1f, what);
}
}  // namespace warptrace_host
#define __shfl_sync(...) \
  ::warptrace_host::ShflSync(WARPTRACE_HOST_AT("__shfl_sync"), __VA_ARGS__)
#define __shfl_up_sync(...) \
  ::warptrace_host::ShflUpSync(WARPTRACE_HOST_AT("__shfl_up_sync"), __VA_ARGS__)
#define __shfl_down_sync(...) \
  ::warptrace_host::ShflDownSync(WARPTRACE_HOST_AT("__shfl_down_sync"), __VA_ARGS__)
#define __shfl_xor_sync(...) \
  ::warptrace_host::ShflXorSync(WARPTRACE_HOST_AT("__shfl_xor_sync"), __VA_ARGS__)
inline unsigned int __ballot_sync(unsigned int mask, int predicate) {
  return static_cast<unsigned int>(
      ::warptrace_host::Warp(WARPTRACE_HOST_WARP_BALLOT, mask, predicate != 0, 0, "__ballot_sync"));
}
inline int __any_sync(unsigned int mask, int predicate) {
  return (::warptrace_host::Warp(WARPTRACE_HOST_WARP_BALLOT, mask, predicate != 0, 0,
                                 "__any_sync") &
          mask) != 0;
}
inline int __all_sync(unsigned int mask, int predicate) {
  return (::warptrace_host::Warp(WARPTRACE_HOST_WARP_BALLOT, mask, predicate != 0, 0,
                                 "__all_sync") &
          mask) == mask;
}
template <typename T>
inline unsigned int __match_any_sync(unsigned int mask, T value) {
  return static_cast<unsigned int>(::warptrace_host::Warp(
      WARPTRACE_HOST_WARP_MATCH_ANY, mask, ::warptrace_host::Bits(value), 0, "__match_any_sync"));
}
template <typename T>
inline unsigned int __match_all_sync(unsigned int mask, T value, int* pred) {
  const unsigned int result = static_cast<unsigned int>(::warptrace_host::Warp(
      WARPTRACE_HOST_WARP_MATCH_ALL, mask, ::warptrace_host::Bits(value), 0, "__match_all_sync"));
  *pred = result != 0;
  return result;
}

// ---- Atomics ----

template <typename T>
WARPTRACE_HOST_ATOMIC_FN inline T atomicAdd(T* address, ::warptrace_host::NonDeduced<T> value) {
  WARPTRACE_HOST_NOTE_ATOMIC(address);
  if constexpr (std::is_integral<T>::value) {
    const T old = __atomic_fetch_add(address, value, __ATOMIC_SEQ_CST);
    return value == 0 ? ::warptrace_host::PollResult(address, old, "atomicAdd") : old;
  } else {
    return ::warptrace_host::CasLoop(address, [&](T old) { return old + value; });
  }
}
template <typename T>
WARPTRACE_HOST_ATOMIC_FN inline T atomicSub(T* address, ::warptrace_host::NonDeduced<T> value) {
  WARPTRACE_HOST_NOTE_ATOMIC(address);
  const T old = __atomic_fetch_sub(address, value, __ATOMIC_SEQ_CST);
  return value == 0 ? ::warptrace_host::PollResult(address, old, "atomicSub") : old;
}
template <typename T>
WARPTRACE_HOST_ATOMIC_FN inline T atomicExch(T* address, ::warptrace_host::NonDeduced<T> value) {
  WARPTRACE_HOST_NOTE_ATOMIC(address);
  T old;
  __atomic_exchange(address, &value, &old, __ATOMIC_SEQ_CST);
  return old;
}
template <typename T>
WARPTRACE_HOST_ATOMIC_FN inline T atomicMax(T* address, ::warptrace_host::NonDeduced<T> value) {
  WARPTRACE_HOST_NOTE_ATOMIC(address);
  return ::warptrace_host::CasLoop(address, [&](T old) { return old < value ? value : old; });
}
template <typename T>
WARPTRACE_HOST_ATOMIC_FN inline T atomicMin(T* address, ::warptrace_host::NonDeduced<T> value) {
  WARPTRACE_HOST_NOTE_ATOMIC(address);
  return ::warptrace_host::CasLoop(address, [&](T old) { return value < old ? value : old; });
}
template <typename T>
WARPTRACE_HOST_ATOMIC_FN inline T atomicCAS(T* address, ::warptrace_host::NonDeduced<T> compare,
                   ::warptrace_host::NonDeduced<T> value) {
  WARPTRACE_HOST_NOTE_ATOMIC(address);
  const T expected = compare;
  __atomic_compare_exchange(address, &compare, &value, false, __ATOMIC_SEQ_CST,
                            __ATOMIC_SEQ_CST);
  // `compare` now holds the old value; an exchange that did not happen (or changed
  // nothing) only read.
  if (compare != expected || expected == value) {
    return ::warptrace_host::PollResult(address, compare, "atomicCAS");
  }
  return compare;
}
template <typename T>
WARPTRACE_HOST_ATOMIC_FN inline T atomicAnd(T* address, ::warptrace_host::NonDeduced<T> value) {
  WARPTRACE_HOST_NOTE_ATOMIC(address);
  const T old = __atomic_fetch_and(address, value, __ATOMIC_SEQ_CST);
  return value == static_cast<T>(~T{0}) ? ::warptrace_host::PollResult(address, old, "atomicAnd")
                                        : old;
}
template <typename T>
WARPTRACE_HOST_ATOMIC_FN inline T atomicOr(T* address, ::warptrace_host::NonDeduced<T> value) {
  WARPTRACE_HOST_NOTE_ATOMIC(address);
  const T old = __atomic_fetch_or(address, value, __ATOMIC_SEQ_CST);
  return value == 0 ? ::warptrace_host::PollResult(address, old, "atomicOr") : old;
}
template <typename T>
WARPTRACE_HOST_ATOMIC_FN inline T atomicXor(T* address, ::warptrace_host::NonDeduced<T> value) {
  WARPTRACE_HOST_NOTE_ATOMIC(address);
  const T old = __atomic_fetch_xor(address, value, __ATOMIC_SEQ_CST);
  return value == 0 ? ::warptrace_host::PollResult(address, old, "atomicXor") : old;
}

// ---- Fences, sleeps, clocks ----

// In sanitize mode a fence is reported (NoteFence): the races check counts it as what may
// order one block's global accesses before another's.
inline void __threadfence() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  WARPTRACE_HOST_NOTE_FENCE();
}
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  WARPTRACE_HOST_NOTE_FENCE();
}
inline void __nanosleep(unsigned int ns) { ::warptrace_host::Spin(nullptr, ns, "__nanosleep"); }

inline long long int clock64() {
  return static_cast<long long int>(::warptrace_host::Cycles());
}
// CUDA's clock(): the SM cycle counter's low 32 bits (not the C library's process time).
inline long int warptrace_host_clock32() {
  return static_cast<long int>(static_cast<unsigned int>(::warptrace_host::Cycles()));
}
#define clock() warptrace_host_clock32()

// ---- Math and bit helpers ----

template <typename T>
inline T __ldg(const T* address) {
  return *address;
}
// The other cache-hinted loads and stores: a plain access on the host (the hint is only a
// cache policy on the GPU). A store's value converts to the pointee as with CUDA's
// per-type overloads (not deduced).
template <typename T>
inline T __ldcg(const T* address) {
  return *address;
}
template <typename T>
inline T __ldca(const T* address) {
  return *address;
}
template <typename T>
inline T __ldcs(const T* address) {
  return *address;
}
template <typename T>
inline T __ldlu(const T* address) {
  return *address;
}
template <typename T>
inline T __ldcv(const T* address) {
  return *address;
}
template <typename T>
inline void __stwb(T* address, typename std::common_type<T>::type value) {
  *address = value;
}
template <typename T>
inline void __stcg(T* address, typename std::common_type<T>::type value) {
  *address = value;
}
template <typename T>
inline void __stcs(T* address, typename std::common_type<T>::type value) {
  *address = value;
}
template <typename T>
inline void __stwt(T* address, typename std::common_type<T>::type value) {
  *address = value;
}
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x)); }
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}

// CUDA's min/max overload set, including its mixed signed/unsigned forms.
#define WARPTRACE_HOST_MINMAX(A, B, R)                                                  \
  inline R min(A a, B b) {                                                              \
    return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); \
  }                                                                                     \
  inline R max(A a, B b) {                                                              \
    return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(b) : static_cast<R>(a); \
  }
WARPTRACE_HOST_MINMAX(int, int, int)
WARPTRACE_HOST_MINMAX(unsigned int, unsigned int, unsigned int)
WARPTRACE_HOST_MINMAX(int, unsigned int, unsigned int)
WARPTRACE_HOST_MINMAX(unsigned int, int, unsigned int)
WARPTRACE_HOST_MINMAX(long long, long long, long long)
WARPTRACE_HOST_MINMAX(unsigned long long, unsigned long long, unsigned long long)
WARPTRACE_HOST_MINMAX(long, long, long)
WARPTRACE_HOST_MINMAX(unsigned long, unsigned long, unsigned long)
#undef WARPTRACE_HOST_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) { *s = sinf(x); *c = cosf(x); }
inline float fdividef(float a, float b) { return a / b; }
// IEEE round-to-nearest arithmetic (the host's default rounding mode), never contracted.
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
// Conversions: _rn rounds to nearest even, _rz toward zero, _rd down, _ru up.
inline int __float2int_rn(float x) { return static_cast<int>(nearbyintf(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline int __float2int_rd(float x) { return static_cast<int>(floorf(x)); }
inline int __float2int_ru(float x) { return static_cast<int>(ceilf(x)); }
inline unsigned int __float2uint_rn(float x) { return static_cast<unsigned int>(nearbyintf(x)); }
inline unsigned int __float2uint_rz(float x) { return static_cast<unsigned int>(x); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned int x) { return static_cast<float>(x); }
inline int __double2int_rn(double x) { return static_cast<int>(nearbyint(x)); }
inline int __double2int_rz(double x) { return static_cast<int>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }
// Reinterpretation (the bits unchanged).
namespace warptrace_host {  // __builtin_memcpy: in sanitize mode a memcpy is a call
template <typename To, typename From>
inline To BitCast(From x) { To t; __builtin_memcpy(&t, &x, sizeof t); return t; }
}  // namespace warptrace_host
inline float __int_as_float(int x) { return ::warptrace_host::BitCast<float>(x); }
inline int __float_as_int(float x) { return ::warptrace_host::BitCast<int>(x); }
inline float __uint_as_float(unsigned int x) { return ::warptrace_host::BitCast<float>(x); }
inline unsigned int __float_as_uint(float x) { return ::warptrace_host::BitCast<unsigned int>(x); }
inline double __longlong_as_double(long long x) { return ::warptrace_host::BitCast<double>(x); }
inline long long __double_as_longlong(double x) { return ::warptrace_host::BitCast<long long>(x); }
inline int __double2hiint(double x) { return static_cast<int>(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return static_cast<int>(__double_as_longlong(x)); }
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double(static_cast<long long>(
      (static_cast<unsigned long long>(static_cast<unsigned int>(hi)) << 32) |
      static_cast<unsigned int>(lo)));
}

// ---- Vector types (CUDA's vector_types.h: sizes and alignments) ----
#include "vector_types_on_cpu.h"

// ---- __half, __nv_bfloat16 and their pairs ----
// Here only their bit conversions: the types come with the host's <cuda_fp16.h> and
// <cuda_bf16.h> (host_compiler.cc), so a kernel needs the include on the host as NVRTC
// needs it.
#include "half_types_on_cpu.h"

// ---- Tensor cores: not on the host ----

namespace nvcuda {
namespace wmma {
template <typename T>
struct warptrace_needs_gpu : std::false_type {};
#define WARPTRACE_HOST_NEEDS_GPU(T)                                                    \
  static_assert(warptrace_needs_gpu<T>::value,                                         \
                "nvcuda::wmma (tensor-core instructions) cannot run on the host backend: " \
                "this kernel needs a GPU")
struct matrix_a;
struct matrix_b;
struct accumulator;
struct row_major;
struct col_major;
enum layout_t { mem_row_major, mem_col_major };
template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  WARPTRACE_HOST_NEEDS_GPU(Use);
};
template <typename Fragment, typename... Args>
inline void load_matrix_sync(Fragment&, Args...) {
  WARPTRACE_HOST_NEEDS_GPU(Fragment);
}
template <typename Fragment, typename... Args>
inline void store_matrix_sync(Args...) {
  WARPTRACE_HOST_NEEDS_GPU(Fragment);
}
template <typename Fragment, typename... Args>
inline void mma_sync(Fragment&, Args...) {
  WARPTRACE_HOST_NEEDS_GPU(Fragment);
}
template <typename Fragment, typename T>
inline void fill_fragment(Fragment&, T) {
  WARPTRACE_HOST_NEEDS_GPU(Fragment);
}
#undef WARPTRACE_HOST_NEEDS_GPU
}  // namespace wmma
}  // namespace nvcuda

// ---- The ABI the runtime finds with dlsym ----

extern "C" unsigned int warptrace_host_abi_version(void) { return WARPTRACE_HOST_ABI_VERSION; }

// A failed assert() fails the launch, naming block and thread (the C library's would abort
// the process): the runtime's warptrace_host_assert_fail (host_abi.h) formats the message and
// ends the thread without unwinding, so this can stay noexcept as the C library declares it.
// Hidden: calls from this shared object bind here, not to the C library.
extern "C" __attribute__((visibility("hidden"), noreturn)) void __assert_fail(
    const char* assertion, const char* file, unsigned int line, const char* function) noexcept {
  warptrace_host_assert_fail(assertion, file, line, function);
}

// The sanitizer's access callbacks and statement marker (compiled in sanitize mode only).
#include "sanitize_host.h"

// The wgmma / setmaxnreg emulation warptrace_primitives.cuh (wgmma_sm90.cuh) calls.
#include "wgmma_host.h"

#include "warptrace_primitives.cuh"

#endif  // WARPTRACE_JIT_HOST_CUDA_ON_CPU_H_
