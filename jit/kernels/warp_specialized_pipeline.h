// A warp-specialized GEMM pipeline, C = A * B (row-major floats; A is M x K, B is K x N),
// as a KernelBuilder kernel: the shape of Hopper GEMM and attention kernels.
//
// Warpgroup 0 is the producer, warpgroups 1..`consumers` are consumers. They hand K-tiles
// of A and B over through a ring of `stages` shared-memory stages guarded by two arrays of
// phase barriers (mbarriers), with no block-wide barrier in the main loop:
//   full[s]   completes when stage s holds its next K-tile (the producer's copies landed);
//   empty[s]  completes when every consumer is done reading stage s.
// Use u (0, 1, ...) of the ring goes to stage u % stages and is phase u / stages of both
// barriers. The consumers arrive on every empty[s] once at the start (phase 0), so the
// producer's wait on empty[s] for use u, phase u / stages, needs nothing for the first lap
// and afterwards the consumers' release of use u - stages: the producer runs up to `stages`
// K-tiles ahead of the slowest consumer.
//
//   producer, per use u:  wait empty[s] (phase u/S); region "load": copy the A and B tiles
//                         into stage s, completing on full[s]
//   consumer, per use u:  wait full[s] (phase u/S); region "mma"; arrive empty[s] (phase
//                         u/S + 1); per tile, region "store" writes C
//
// Copies: CopyKind::kCpAsync (sm_80+): the 128 producer threads share the 16-byte chunks
// (cp.async), wait for their own group and each arrives on full[s] (128 arrivals). kBulk
// (sm_90+): one producer thread arrives on full[s] expecting the tile's bytes and issues
// one bulk copy per row, completing on full[s] (1 arrival + transactions).
//
// Persistent (`persistent_blocks` > 0): a 1-D grid of that many blocks, each taking tiles
// blockIdx.x, blockIdx.x + gridDim.x, ... of the (M / BM) x (N / 32) tiles in a tile loop
// with a per-block trip count (TripCount::PerBlock), the ring running on across tiles.
// Otherwise a (N / 32, M / BM) grid, one tile per block.
//
// Delays: `producer_delay` / `consumer_delay` cycles of busy work (clock64) in every load /
// every mma, to create a known bottleneck.
//
// Block: 128 x (1 + consumers) threads. Tile: BM = 4 x consumers rows, 32 columns, BK = 32;
// each consumer thread computes one element of C. Dynamic shared memory: stages x (BM + 32)
// x 32 floats. Kernel parameters, in order: const float* A, const float* B, float* C.
//
// Events per trace unit with the default policy (kernel site, regions, hand-offs), T the
// unit's block's tiles and KT = K / 32, per use u: payload events take 2 slots each.
//   producer unit: 2 + T x KT x (4 wait + 2 load + copies), copies = 2 x 4 for the units
//     that issue them (every producer unit with cp.async, the first one with bulk copies),
//     + 2 per arrival (every producer unit with cp.async, the first one with bulk)
//   consumer unit: 2 + stages x 2 (first arrivals) + T x (KT x (4 wait + 2 mma + 2 arrive)
//     + 2 store)
// RecordPlan counts it exactly (tests/jit/kernels/warp_specialized_pipeline_test.cc).
#ifndef WARPTRACE_JIT_KERNELS_WARP_SPECIALIZED_PIPELINE_H_
#define WARPTRACE_JIT_KERNELS_WARP_SPECIALIZED_PIPELINE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace {

enum class CopyKind {
  kCpAsync,  // sm_80+: cp.async groups
  kBulk,     // sm_90+: bulk copies completing on full[s]
};

struct PipelineShape {
  uint32_t m = 32;
  uint32_t n = 64;
  uint32_t k = 256;
  uint32_t stages = 3;     // >= 2
  uint32_t consumers = 2;  // consumer warpgroups, 1..7
  CopyKind copy = CopyKind::kCpAsync;
  uint32_t persistent_blocks = 0;  // 0: one tile per block; else the persistent grid size
  uint32_t producer_delay = 0;     // cycles of busy work per load
  uint32_t consumer_delay = 0;     // cycles of busy work per mma
};

// Tiles of C: (M / BM) x (N / 32).
uint32_t PipelineTiles(const PipelineShape& shape);

// InvalidArgument when stages < 2, consumers outside 1..7, M not a positive multiple of
// 4 x consumers, N or K not a positive multiple of 32, the stages' shared memory over
// 227 KiB, or more persistent blocks than tiles.
absl::StatusOr<KernelBuilder> WarpSpecializedPipelineBuilder(const PipelineShape& shape);
absl::StatusOr<Kernel> WarpSpecializedPipeline(const PipelineShape& shape);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNELS_WARP_SPECIALIZED_PIPELINE_H_
