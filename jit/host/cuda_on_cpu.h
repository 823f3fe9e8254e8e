// CUDA on the CPU: the header HostDevice force-includes (-include cuda_on_cpu.h, with
// -DWARPTRACE_HOST_BACKEND) when it compiles emitted CUDA source with the system C++
// compiler into a shared object. It supports the subset jit/kernel_source.h promises:
//
//   __global__ __device__ __host__ __forceinline__ __noinline__ __align__(n)
//   __launch_bounds__(...) __restrict__ (native)
//   __shared__            static storage: one copy per kernel, shared by the threads of the
//                         running block. Correct because HostDevice runs one block at a
//                         time and serializes launches; like CUDA, its contents at block
//                         start are unspecified (they are the previous block's).
//   WARPTRACE_DYNAMIC_SHARED(type, name)  at function scope: `type* const name`, the block's
//                         dynamic shared memory (16-byte aligned, launch-sized)
//   threadIdx blockIdx blockDim gridDim warpSize   per-OS-thread (thread_local)
//   __syncthreads() __syncwarp(mask)  barriers (every thread of the block / warp must arrive;
//                         a thread that exits never arrives, so HostDevice reports the
//                         resulting deadlock instead of hanging)
//   __shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync  for types up to 8 bytes;
//                         every lane of the warp must take part (the mask is not
//                         interpreted: pass the full mask)
//   atomicAdd atomicSub atomicExch atomicMin atomicMax atomicCAS atomicAnd atomicOr atomicXor
//                         (__atomic builtins; float/double add via compare-and-swap)
//   __threadfence __threadfence_block, __ldg, __popc __popcll __clz __ffs,
//   min max (CUDA's mixed int/unsigned overloads), fmaf and <cmath>, rsqrtf __expf __logf
//   __fdividef __saturatef
//   clock64()             64-bit "SM cycles" on the scale of warptrace_host_clock below, so
//                         kernels that time themselves with clock64() run here too
//
// It also defines the recorder's host hooks (profiler/device/recorder.cuh):
//   warptrace_host_clock()        32-bit "SM cycles": steady-clock ns × 1.5 GHz
//   warptrace_host_globaltimer()  steady-clock ns
//   warptrace_host_smid()         the block's virtual SM
// so Δclock / Δglobaltimer calibrates to WARPTRACE_HOST_SM_CLOCK_KHZ exactly.
//
// Compiled as C++17 (the oldest standard emitted code may rely on).
#ifndef WARPTRACE_JIT_HOST_CUDA_ON_CPU_H_
#define WARPTRACE_JIT_HOST_CUDA_ON_CPU_H_

#include <math.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "host_abi.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __shared__ static
#define WARPTRACE_DYNAMIC_SHARED(type, name) \
  type* const name = static_cast<type*>(::warptrace_host::tls_thread.dynamic_shared)

struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
};

static thread_local uint3 threadIdx;
static thread_local uint3 blockIdx;
static thread_local dim3 blockDim;
static thread_local dim3 gridDim;
static constexpr int warpSize = 32;

namespace warptrace_host {

static thread_local WarptraceHostThread tls_thread;

template <typename T>
struct Identity {
  using type = T;
};
template <typename T>
using NonDeduced = typename Identity<T>::type;

template <typename T>
inline T Shuffle(T value, unsigned int src_lane) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                "host backend shuffles values of at most 8 bytes");
  unsigned long long bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  bits = tls_thread.shuffle(tls_thread.block, tls_thread.warp, tls_thread.lane, bits, src_lane);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

template <typename T, typename F>
inline T CasLoop(T* address, F update) {
  T old = *address;
  T desired;
  do {
    desired = update(old);
  } while (!__atomic_compare_exchange(address, &old, &desired, false, __ATOMIC_SEQ_CST,
                                      __ATOMIC_SEQ_CST));
  return old;
}

}  // namespace warptrace_host

inline void __syncthreads() {
  ::warptrace_host::tls_thread.sync_block(::warptrace_host::tls_thread.block);
}
inline void __syncwarp(unsigned int /*mask*/ = 0xffffffffu) {
  ::warptrace_host::tls_thread.sync_warp(::warptrace_host::tls_thread.block,
                                         ::warptrace_host::tls_thread.warp);
}

template <typename T>
inline T __shfl_sync(unsigned int /*mask*/, T value, int src_lane, int width = 32) {
  const unsigned int lane = ::warptrace_host::tls_thread.lane;
  const unsigned int base = lane & ~static_cast<unsigned int>(width - 1);
  return ::warptrace_host::Shuffle(value, base + (static_cast<unsigned int>(src_lane) %
                                                  static_cast<unsigned int>(width)));
}
template <typename T>
inline T __shfl_down_sync(unsigned int /*mask*/, T value, unsigned int delta, int width = 32) {
  const unsigned int lane = ::warptrace_host::tls_thread.lane;
  const bool inside = (lane % static_cast<unsigned int>(width)) + delta <
                      static_cast<unsigned int>(width);
  return ::warptrace_host::Shuffle(value, inside ? lane + delta : lane);
}
template <typename T>
inline T __shfl_up_sync(unsigned int /*mask*/, T value, unsigned int delta, int width = 32) {
  const unsigned int lane = ::warptrace_host::tls_thread.lane;
  const bool inside = (lane % static_cast<unsigned int>(width)) >= delta;
  return ::warptrace_host::Shuffle(value, inside ? lane - delta : lane);
}
template <typename T>
inline T __shfl_xor_sync(unsigned int /*mask*/, T value, int lane_mask, int width = 32) {
  const unsigned int lane = ::warptrace_host::tls_thread.lane;
  const unsigned int src = lane ^ static_cast<unsigned int>(lane_mask);
  const unsigned int segment = ~static_cast<unsigned int>(width - 1);
  return ::warptrace_host::Shuffle(value, (src & segment) == (lane & segment) ? src : lane);
}

template <typename T>
inline T atomicAdd(T* address, ::warptrace_host::NonDeduced<T> value) {
  if constexpr (std::is_integral<T>::value) {
    return __atomic_fetch_add(address, value, __ATOMIC_SEQ_CST);
  } else {
    return ::warptrace_host::CasLoop(address, [&](T old) { return old + value; });
  }
}
template <typename T>
inline T atomicSub(T* address, ::warptrace_host::NonDeduced<T> value) {
  return __atomic_fetch_sub(address, value, __ATOMIC_SEQ_CST);
}
template <typename T>
inline T atomicExch(T* address, ::warptrace_host::NonDeduced<T> value) {
  T old;
  __atomic_exchange(address, &value, &old, __ATOMIC_SEQ_CST);
  return old;
}
template <typename T>
inline T atomicMax(T* address, ::warptrace_host::NonDeduced<T> value) {
  return ::warptrace_host::CasLoop(address, [&](T old) { return old < value ? value : old; });
}
template <typename T>
inline T atomicMin(T* address, ::warptrace_host::NonDeduced<T> value) {
  return ::warptrace_host::CasLoop(address, [&](T old) { return value < old ? value : old; });
}
template <typename T>
inline T atomicCAS(T* address, ::warptrace_host::NonDeduced<T> compare,
                   ::warptrace_host::NonDeduced<T> value) {
  __atomic_compare_exchange(address, &compare, &value, false, __ATOMIC_SEQ_CST,
                            __ATOMIC_SEQ_CST);
  return compare;  // the old value, whether or not the exchange happened
}
template <typename T>
inline T atomicAnd(T* address, ::warptrace_host::NonDeduced<T> value) {
  return __atomic_fetch_and(address, value, __ATOMIC_SEQ_CST);
}
template <typename T>
inline T atomicOr(T* address, ::warptrace_host::NonDeduced<T> value) {
  return __atomic_fetch_or(address, value, __ATOMIC_SEQ_CST);
}
template <typename T>
inline T atomicXor(T* address, ::warptrace_host::NonDeduced<T> value) {
  return __atomic_fetch_xor(address, value, __ATOMIC_SEQ_CST);
}

inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
template <typename T>
inline T __ldg(const T* address) {
  return *address;
}
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }

// CUDA's min/max overload set, including its mixed signed/unsigned forms.
#define WARPTRACE_HOST_MINMAX(A, B, R)                      \
  inline R min(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); } \
  inline R max(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(b) : static_cast<R>(a); }
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
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }

extern "C" unsigned int warptrace_host_abi_version(void) { return WARPTRACE_HOST_ABI_VERSION; }

extern "C" void warptrace_host_bind_thread(const WarptraceHostThread* thread) {
  ::warptrace_host::tls_thread = *thread;
  threadIdx = {thread->thread_idx.x, thread->thread_idx.y, thread->thread_idx.z};
  blockIdx = {thread->block_idx.x, thread->block_idx.y, thread->block_idx.z};
  blockDim = dim3(thread->block_dim.x, thread->block_dim.y, thread->block_dim.z);
  gridDim = dim3(thread->grid_dim.x, thread->grid_dim.y, thread->grid_dim.z);
}

extern "C" unsigned long long warptrace_host_globaltimer(void) {
  return static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

extern "C" unsigned int warptrace_host_clock(void) {
  const unsigned long long ns = warptrace_host_globaltimer();
  // ns × kHz / 10^6 without overflowing 64 bits; truncated to 32 bits like %clock.
  const unsigned long long cycles = (ns / 1000000ull) * WARPTRACE_HOST_SM_CLOCK_KHZ +
                                    (ns % 1000000ull) * WARPTRACE_HOST_SM_CLOCK_KHZ / 1000000ull;
  return static_cast<unsigned int>(cycles);
}

inline long long int clock64() {
  const unsigned long long ns = warptrace_host_globaltimer();
  return static_cast<long long int>((ns / 1000000ull) * WARPTRACE_HOST_SM_CLOCK_KHZ +
                                    (ns % 1000000ull) * WARPTRACE_HOST_SM_CLOCK_KHZ / 1000000ull);
}

extern "C" unsigned int warptrace_host_smid(void) { return ::warptrace_host::tls_thread.sm_id; }

#endif  // WARPTRACE_JIT_HOST_CUDA_ON_CPU_H_
