// A tiled single-precision GEMM, C = A * B (row-major; A is M x K, B is K x N, C is M x N),
// as a KernelBuilder kernel: each block computes a tile x tile block of C, looping over K
// in steps of `tile` with a "load" region (A and B tiles into shared memory), a barrier,
// a "compute" region (tile multiply-adds per thread) and a second barrier, then a "store"
// region. One thread per output element; block (tile, tile), grid (N / tile, M / tile).
//
// Kernel parameters, in order: const float* A, const float* B, float* C.
//
//   ASSIGN_OR_RETURN(Kernel gemm, TiledGemm({.m = 128, .n = 128, .k = 256}));
//   ASSIGN_OR_RETURN(KernelSource source, EmitKernel(gemm, ProfileOptions{}));
//
// Events per trace unit with the default policy: kernel 2 + (K / tile) x (load 2 +
// compute 2) + store 2.
#ifndef WARPTRACE_JIT_KERNELS_TILED_GEMM_H_
#define WARPTRACE_JIT_KERNELS_TILED_GEMM_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace {

struct TiledGemmShape {
  uint32_t m = 64;
  uint32_t n = 64;
  uint32_t k = 64;
  uint32_t tile = 16;  // 16 (256 threads) or 32 (1024 threads) keep whole warpgroups
};

// The builder, for callers that want to inspect or extend it before Build().
// InvalidArgument when a size is 0 or not a multiple of the tile, or the tile is 0 or
// over 32 (a block has at most 1024 threads).
absl::StatusOr<KernelBuilder> TiledGemmBuilder(const TiledGemmShape& shape);
absl::StatusOr<Kernel> TiledGemm(const TiledGemmShape& shape);

// The CPU reference, accumulating in float in the kernel's order (k ascending, fmaf).
std::vector<float> ReferenceGemm(const std::vector<float>& a, const std::vector<float>& b,
                                 const TiledGemmShape& shape);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNELS_TILED_GEMM_H_
