// Kernels that exercise the TMA primitives (jit/primitives/tma_sm90.cuh) through a
// `CUtensorMap` parameter, built with KernelBuilder so that RunKernel marshals their
// KernelArg::TensorMap. The host suite (tests/jit/host/tma_test.cc) runs them, the NVRTC /
// SASS suite (tests/jit/primitives/tma_nvrtc_test.cc) compiles them, the GPU suite
// (tests/jit/cuda/tma_gpu_test.cc) runs them on a GPU and the runtime benchmark times the
// load. One block of `threads` threads each.
#ifndef WARPTRACE_TESTS_JIT_PRIMITIVES_TMA_KERNELS_H_
#define WARPTRACE_TESTS_JIT_PRIMITIVES_TMA_KERNELS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/builder/kernel.h"
#include "jit/platform/tensor_map.h"

namespace warptrace::testing {

// The largest box (bytes) the kernels' shared buffers hold, plus room to misalign it.
inline constexpr uint32_t kTmaMaxBoxBytes = 16384;

// tma_load_2d(CUtensorMap tm, unsigned char* out, int c0, int c1, unsigned int expect,
//             unsigned int offset, unsigned int bytes):
// thread 0 arrives on an mbarrier expecting `expect` bytes and loads the box at (c0, c1)
// into a 1024-byte-aligned shared buffer + `offset`; every thread waits for the phase, then
// the block copies the buffer's first `bytes` bytes (from + offset) to `out`.
absl::StatusOr<Kernel> TmaLoad2dKernel(uint32_t threads = 128);
// tma_load_3d(CUtensorMap tm, unsigned char* out, int c0, int c1, int c2, unsigned int expect,
//             unsigned int bytes): as above in 3-D, offset 0.
absl::StatusOr<Kernel> TmaLoad3dKernel(uint32_t threads = 128);
// tma_store_2d(CUtensorMap tm, const unsigned char* in, int c0, int c1, unsigned int bytes):
// the block copies `bytes` bytes of `in` into a 1024-byte-aligned shared box, fences the
// async proxy, and thread 0 stores the box at (c0, c1), commits and waits for the group's
// reads (wait_group.read 0) before the block exits.
absl::StatusOr<Kernel> TmaStore2dKernel(uint32_t threads = 128);

// The reference the suites compare with, computed from the definitions (not from the
// emulator's code), byte for byte:
//  - the box is dense in shared memory, innermost dimension first (element (i0, i1, i2) at
//    ((i2 * box1 + i1) * box0 + i0) * element bytes: the layout CuTe's TMA copy atoms give
//    the shared-memory tile);
//  - swizzle (CuTe Swizzle<3,4,3>, <2,4,3>, <1,4,3> on byte offsets, the patterns
//    CU_TENSOR_MAP_SWIZZLE_128B/64B/32B are documented as: "swizzle 16B chunks within a
//    128B/64B/32B span"): inside each 128-byte line L of the box, 16-byte chunk j moves to
//    chunk j XOR (L mod (span / 16)), span 128, 64 or 32 bytes;
//  - an element whose coordinate lies outside [0, dims) reads 0 (zero fill), or is a NaN
//    (NaN fill: `nan_elements` gets its byte offset in the box, and its bytes are 0 here).
// `tensor` holds the buffer the map views (spec.offset_bytes included).
std::vector<uint8_t> ReferenceLoad(const std::vector<uint8_t>& tensor, const TensorMapSpec& spec,
                                   const std::vector<int>& coords,
                                   std::vector<uint64_t>* nan_elements = nullptr);
// `tensor` after a store of `box` (the shared-memory bytes) at `coords`: the in-bounds
// elements of the box are written, the others dropped.
std::vector<uint8_t> ReferenceStore(std::vector<uint8_t> tensor, const TensorMapSpec& spec,
                                    const std::vector<int>& coords,
                                    const std::vector<uint8_t>& box);

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_PRIMITIVES_TMA_KERNELS_H_
