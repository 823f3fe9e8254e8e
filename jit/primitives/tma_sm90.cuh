// TMA (the Tensor Memory Accelerator, sm_90+): box copies between a tensor in global memory,
// described by a tensor map, and shared memory. One source for the GPU (inline PTX) and the
// host backend (jit/host/device/host_tma.h emulates the copy exactly); included by
// warptrace_primitives.cuh.
//
//   extern "C" __global__ void k(const __grid_constant__ CUtensorMap tmA, ...) {
//     __shared__ __align__(1024) __nv_bfloat16 tile[64 * 64];   // 128B swizzle: 1024-aligned
//     __shared__ unsigned long long full;
//     if (threadIdx.x == 0) { warptrace_mbarrier_init(&full, 1); warptrace_fence_mbarrier_init(); }
//     __syncthreads();
//     if (threadIdx.x == 0) {
//       warptrace_mbarrier_arrive_expect_tx(&full, sizeof(tile));  // the FULL box's bytes
//       warptrace_tma_load_2d(tile, &tmA, /*c0=*/col, /*c1=*/row, &full);
//     }
//     warptrace_mbarrier_wait_parity(&full, 0);
//
// CUtensorMap: the driver's 128-byte, 64-byte-aligned opaque type (cuda.h's when it is
// included; NVRTC has no cuda.h, so it is defined here). A kernel takes it as
// `const __grid_constant__ CUtensorMap name` (KernelBuilder::Param("CUtensorMap", name)) and
// passes its address to the copies.
//
//   warptrace_tma_load_2d(smem_dst, map, c0, c1, bar)      cp.async.bulk.tensor.2d.shared::cluster
//   warptrace_tma_load_3d(smem_dst, map, c0, c1, c2, bar)    .global.mbarrier::complete_tx::bytes:
//                                     the box at element coordinates (c0 innermost, signed) into
//                                     smem_dst (128-byte aligned; with a swizzle, 256/512/1024
//                                     for 32B/64B/128B), completing the box's bytes on `bar`
//   warptrace_tma_store_2d(map, smem_src, c0, c1)        cp.async.bulk.tensor.2d.global.shared::cta
//                                     .bulk_group: the box from shared memory to the tensor
//                                     (out-of-bounds elements are not written)
//   warptrace_bulk_commit_group()        cp.async.bulk.commit_group: closes this thread's stores
//                                        into a bulk group
//   warptrace_bulk_wait_group_read(n)    cp.async.bulk.wait_group.read n (0..7): until at most n
//                                        groups still read their shared memory
//   warptrace_prefetch_tensormap(map)    prefetch.tensormap: a cache hint
// Before a store, fence.proxy.async.shared::cta (warptrace_fence_proxy_async) makes the
// threads' shared-memory writes visible to the copy.
//
// On the host the copies happen at issue: a load completes its bytes on the mbarrier at once
// (its waiters are released by the mbarrier, as for bulk copies), a store writes the tensor at
// once, so the bulk groups have nothing left to wait for. A map that is not a warptrace
// tensor map, a rank that differs from the copy's, or a misaligned box address fails the
// launch naming block, thread and instruction.
#ifndef WARPTRACE_TMA_SM90_CUH_
#define WARPTRACE_TMA_SM90_CUH_

#if !defined(__cuda_cuda_h__) && !defined(WARPTRACE_HAVE_CUTENSORMAP)
#define WARPTRACE_HAVE_CUTENSORMAP 1
typedef struct CUtensorMap_st {
  alignas(64) unsigned long long opaque[16];
} CUtensorMap;
#endif
static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap is 128 bytes");

#if defined(WARPTRACE_HOST_BACKEND)

#include "host_tma.h"

namespace warptrace_host {

inline void TmaCopy(void* smem, const CUtensorMap* map, const int32_t* c, uint32_t rank,
                    unsigned long long* bar, const char* what, const char* site = nullptr) {
  const WarptraceHostTensorMap& m = *reinterpret_cast<const WarptraceHostTensorMap*>(map);
  char error[512];
  if (!::warptrace_host_tma::Check(m, rank, smem, error, sizeof error)) {
    char message[640];
    snprintf(message, sizeof message, "%s: %s", what, error);
    Rt().fail(Fiber(), message);
  }
  ::warptrace_host_tma::CopyBox(m, smem, c, bar == nullptr);
  const unsigned long long box_bytes = ::warptrace_host_tma::BoxBytes(m);
  if (bar == nullptr) {  // a store: the async proxy read the box (until its bulk group)
    WARPTRACE_HOST_ACCESS(smem, box_bytes, WARPTRACE_HOST_ACCESS_BULK_READ);
  } else {  // a load: delivered, visible once its phase of `bar` completes
    WARPTRACE_HOST_ASYNC_WRITE(smem, box_bytes, bar);
  }
  if (bar != nullptr) {
    ::warptrace_host::wgmma::RecordTmaBox(smem, m.box, c, rank, m.element_bytes, m.swizzle,
                                          m.global_address, site);
    MbarUpdate(bar, 0, -static_cast<int>(::warptrace_host_tma::BoxBytes(m)));
  }
}

}  // namespace warptrace_host

// `site`: the caller's file, which is the builder path of the construct or raw statement
// (the emitter's #line directives); it names the copy in the wgmma layout check.
inline void warptrace_tma_load_2d(void* smem_dst, const CUtensorMap* map, int c0, int c1,
                                  unsigned long long* bar, const char* site = __builtin_FILE()) {
  const int32_t c[2] = {c0, c1};
  ::warptrace_host::TmaCopy(
      smem_dst, map, c, 2, bar,
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes", site);
}
inline void warptrace_tma_load_3d(void* smem_dst, const CUtensorMap* map, int c0, int c1, int c2,
                                  unsigned long long* bar, const char* site = __builtin_FILE()) {
  const int32_t c[3] = {c0, c1, c2};
  ::warptrace_host::TmaCopy(
      smem_dst, map, c, 3, bar,
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes", site);
}
inline void warptrace_tma_store_2d(const CUtensorMap* map, const void* smem_src, int c0, int c1) {
  const int32_t c[2] = {c0, c1};
  ::warptrace_host::TmaCopy(const_cast<void*>(smem_src), map, c, 2, nullptr,
                            "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group");
}
// The stores completed at issue: nothing is pending.
// The stores' shared-memory reads stay in flight for the races check until their group
// is waited for (sanitize mode).
inline void warptrace_bulk_commit_group() {
  WARPTRACE_HOST_SANITIZE_EVENT(WARPTRACE_HOST_EVENT_BULK_COMMIT, 0);
}
inline void warptrace_bulk_wait_group_read(unsigned int n) {
  WARPTRACE_HOST_SANITIZE_EVENT(WARPTRACE_HOST_EVENT_BULK_WAIT, n);
  (void)n;
}
inline void warptrace_prefetch_tensormap(const CUtensorMap* map) { (void)map; }

#else  // the GPU

#if __CUDA_ARCH__ >= 900

__device__ __forceinline__ void warptrace_tma_load_2d(void* smem_dst, const CUtensorMap* map,
                                                      int c0, int c1, unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];"
      :
      : "r"(static_cast<unsigned int>(__cvta_generic_to_shared(smem_dst))),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1),
        "r"(static_cast<unsigned int>(__cvta_generic_to_shared(bar)))
      : "memory");
}
__device__ __forceinline__ void warptrace_tma_load_3d(void* smem_dst, const CUtensorMap* map,
                                                      int c0, int c1, int c2,
                                                      unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];"
      :
      : "r"(static_cast<unsigned int>(__cvta_generic_to_shared(smem_dst))),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2),
        "r"(static_cast<unsigned int>(__cvta_generic_to_shared(bar)))
      : "memory");
}
__device__ __forceinline__ void warptrace_tma_store_2d(const CUtensorMap* map,
                                                       const void* smem_src, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
      :
      : "l"(reinterpret_cast<unsigned long long>(map)),
        "r"(static_cast<unsigned int>(__cvta_generic_to_shared(smem_src))), "r"(c0), "r"(c1)
      : "memory");
}
__device__ __forceinline__ void warptrace_bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;" : : : "memory");
}
__device__ __forceinline__ void warptrace_bulk_wait_group_read(unsigned int n) {
  switch (n) {
    case 0: asm volatile("cp.async.bulk.wait_group.read 0;" : : : "memory"); break;
    case 1: asm volatile("cp.async.bulk.wait_group.read 1;" : : : "memory"); break;
    case 2: asm volatile("cp.async.bulk.wait_group.read 2;" : : : "memory"); break;
    case 3: asm volatile("cp.async.bulk.wait_group.read 3;" : : : "memory"); break;
    case 4: asm volatile("cp.async.bulk.wait_group.read 4;" : : : "memory"); break;
    case 5: asm volatile("cp.async.bulk.wait_group.read 5;" : : : "memory"); break;
    case 6: asm volatile("cp.async.bulk.wait_group.read 6;" : : : "memory"); break;
    default: asm volatile("cp.async.bulk.wait_group.read 7;" : : : "memory"); break;
  }
}
__device__ __forceinline__ void warptrace_prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];"
               :
               : "l"(reinterpret_cast<unsigned long long>(map))
               : "memory");
}

#else  // before sm_90: no TMA. A kernel that calls one fails to compile, saying why.

template <typename T>
struct warptrace_tma_needs_sm90 {
  static constexpr bool value = false;
};
#define WARPTRACE_TMA_NEEDS_SM90(name)                                                  \
  static_assert(warptrace_tma_needs_sm90<Map>::value,                                   \
                name " (TMA, cp.async.bulk.tensor) needs sm_90 or later: compile with " \
                     "--gpu-architecture=sm_90 (or sm_90a)")
template <typename Map = CUtensorMap>
__device__ void warptrace_tma_load_2d(void*, const Map*, int, int, unsigned long long*) {
  WARPTRACE_TMA_NEEDS_SM90("warptrace_tma_load_2d");
}
template <typename Map = CUtensorMap>
__device__ void warptrace_tma_load_3d(void*, const Map*, int, int, int, unsigned long long*) {
  WARPTRACE_TMA_NEEDS_SM90("warptrace_tma_load_3d");
}
template <typename Map = CUtensorMap>
__device__ void warptrace_tma_store_2d(const Map*, const void*, int, int) {
  WARPTRACE_TMA_NEEDS_SM90("warptrace_tma_store_2d");
}
template <typename Map = CUtensorMap>
__device__ void warptrace_bulk_commit_group() {
  WARPTRACE_TMA_NEEDS_SM90("warptrace_bulk_commit_group");
}
template <typename Map = CUtensorMap>
__device__ void warptrace_bulk_wait_group_read(unsigned int) {
  WARPTRACE_TMA_NEEDS_SM90("warptrace_bulk_wait_group_read");
}
template <typename Map = CUtensorMap>
__device__ void warptrace_prefetch_tensormap(const Map*) {
  WARPTRACE_TMA_NEEDS_SM90("warptrace_prefetch_tensormap");
}
#undef WARPTRACE_TMA_NEEDS_SM90

#endif  // __CUDA_ARCH__ >= 900
#endif  // WARPTRACE_HOST_BACKEND

#endif  // WARPTRACE_TMA_SM90_CUH_
