// A warp-specialized GEMM pipeline, C = A * B (row-major floats; A is M x K, B is K x N),
// as a KernelBuilder kernel. Warpgroup 0 is the producer: it copies K-tiles of A and B
// into a `stages`-deep ring of shared-memory stages ("load" regions). Warpgroups 1..
// `consumers` are consumers: each computes 4 rows x 32 columns of the block's C tile from
// the stage the producer filled earlier ("mma" regions), then writes it ("store").
//
// Hand-off is by __syncthreads only (no flags polled in shared memory), so it is correct
// with any interleaving of threads, including OS threads on the CPU backend:
//   fill:   producer loads tiles 0 .. stages-2 into stages 0 .. stages-2;     barrier
//   steady: for kt in [0, KT - stages + 1): producer loads tile kt + stages - 1 into
//           stage (kt + stages - 1) % stages while consumers use stage kt % stages; barrier
//   drain:  for kt in [KT - stages + 1, KT): consumers use stage kt % stages;  barrier
// A stage is rewritten only after the barrier that ends the iteration which last read it,
// and read only after the barrier that follows its load (KT = K / 32 K-tiles).
//
// Block: 128 x (1 + consumers) threads. Tile: BM = 4 x consumers rows, BN = 32 columns,
// BK = 32. Grid (N / 32, M / BM). Dynamic shared memory: stages x (BM + 32) x 32 floats.
//
// Kernel parameters, in order: const float* A, const float* B, float* C.
//
// Events per trace unit with the default policy (kernel site + regions):
//   producer warpgroup: 2 + 2 x KT             (one load per K-tile)
//   consumer warpgroup: 2 + 2 x KT + 2         (one mma per K-tile, and the store)
#ifndef WARPTRACE_JIT_KERNELS_WARP_SPECIALIZED_PIPELINE_H_
#define WARPTRACE_JIT_KERNELS_WARP_SPECIALIZED_PIPELINE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "jit/kernel_builder.h"

namespace warptrace {

struct PipelineShape {
  uint32_t m = 32;
  uint32_t n = 64;
  uint32_t k = 256;
  uint32_t stages = 3;     // >= 2
  uint32_t consumers = 2;  // consumer warpgroups, 1..7
};

// InvalidArgument when stages < 2, consumers outside 1..7, M not a positive multiple of
// 4 x consumers, N or K not a positive multiple of 32, or fewer K-tiles than stages - 1.
absl::StatusOr<KernelBuilder> WarpSpecializedPipelineBuilder(const PipelineShape& shape);
absl::StatusOr<Kernel> WarpSpecializedPipeline(const PipelineShape& shape);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNELS_WARP_SPECIALIZED_PIPELINE_H_
