// A Hopper warp-specialized bf16 GEMM, C = A * B^T (A is M x K, B is N x K, both K-major
// row-major bf16; C is M x N row-major, bf16 or f32), fp32 accumulation, as a KernelBuilder
// kernel: the structure of CUTLASS's sm90 TMA warp-specialized kernels.
//
// 384 threads: warpgroup 0 is the producer, warpgroups 1 and 2 the consumers.
//   producer  setmaxnreg.dec 40; per K-block of each tile: wait empty[s], then its first
//             thread issues two TMA loads (128B swizzle) of the A and B tiles into stage s,
//             completing on full[s] (the builder adds the boxes' bytes to the phase), and
//             arrives on full[s].
//   consumers setmaxnreg.inc 232; per K-block: wait full[s]; an mma group of BK / 16 wgmma
//             m64nBNk16 (both operands from shared memory, 128B-swizzle K-major
//             descriptors; the first K-block with scale-d 0); wait for the group; arrive on
//             empty[s]. Per tile, the "epilogue" region writes the accumulators to C.
//   Cooperative (default): the two consumers split one 128 x BN tile, 64 rows each.
//   Ping-pong: each consumer owns its own 64 x BN tiles (the block's tiles alternate between
//             them) and two named barriers order the consumers' mainloops: a consumer
//             waits for its turn (bar.sync on its own barrier) before its mainloop and
//             passes the turn on (bar.arrive on the other's) after it, so one consumer's
//             epilogue overlaps the other's mainloop.
// Ring: `stages` stages of (BM x 64 + BN x 64) bf16, 1024-byte aligned; use u of the ring is
// stage u % stages, phase u / stages (as in jit/kernels/warp_specialized_pipeline.h: the
// consumers pre-arrive on every empty[s] for phase 0).
// Persistent (`persistent_blocks` > 0): that many blocks loop over the tiles (blockIdx.x,
// + gridDim.x, ...), planned exactly per block (TripCount::PerBlock).
// Cluster (`cluster_m` x `cluster_n` = 2x1 or 1x2, CUTLASS's ClusterShape over the tiles;
// cooperative, one tile per block): the grid is launched with 2-CTA clusters (Cluster({2, 1,
// 1}), consecutive blocks), CTA rank r of cluster c computing tile (2 (c / (N / BN)) + r,
// c % (N / BN)) for 2x1 (the pair shares B's tile) or (c / (N / 2BN), 2 (c % (N / 2BN)) + r)
// for 1x2 (the pair shares A's tile). The shared operand is multicast the way CUTLASS's
// sm90 collective splits it: each CTA's producer loads half of the shared box (rank r the
// rows [r h, r h + h), h = BN / 2 for B, 128 / 2 for A) with ctaMask 0b11, so each CTA's
// full[s] receives its own operand's box plus both halves (the construct expects box x
// popcount(mask) for the multicast copy: the same bytes as without a cluster). A stage of
// one CTA is refilled by both producers, so each consumer warpgroup releases it in both CTAs
// (a local arrival and ArriveRemote on the peer's empty[s], one thread per warpgroup, as
// CUTLASS's ClusterBarrier::arrive(cta_id) does): empty[s] counts 2 warpgroups x 2 CTAs.
// The barriers' init is made visible to the cluster (fence.mbarrier_init.release.cluster by
// the frame, then a ClusterSync "barriers ready") before any copy or remote arrival, and a
// ClusterSync "peers done" ends the kernel, so that no CTA exits while its peer may still
// arrive on its barriers or multicast into its shared memory.
//
// Kernel parameters, in order: CUtensorMap tmA (box 64 x BM rows of A, 128B swizzle),
// CUtensorMap tmB (box 64 x BN rows of B, 128B swizzle), C (`__nv_bfloat16*` or `float*`).
// HopperGemmMaps gives the boxes to encode.
#ifndef WARPTRACE_JIT_KERNELS_HOPPER_GEMM_H_
#define WARPTRACE_JIT_KERNELS_HOPPER_GEMM_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace {

// Bugs a test plants in the kernel for the sanitizer's races check (docs/sanitizer.md):
//   kConsumerSkipsFullWait    in use `stages` of the ring (the first reuse of stage 0), the
//                             consumers read the stage without waiting on full[0]
//   kProducerSkipsEmptyWait   in use `stages` + 1 (the first reuse of stage 1), the producer
//                             refills the stage without waiting on empty[1]
//   kReleaseBeforeMmaRetires  (every use) the consumers arrive on empty[s] before the
//                             wgmma.wait_group that retires the group reading the stage
enum class HopperGemmRaceBug {
  kNone,
  kConsumerSkipsFullWait,
  kProducerSkipsEmptyWait,
  kReleaseBeforeMmaRetires,
};

struct HopperGemmShape {
  uint32_t m = 256;
  uint32_t n = 256;
  uint32_t k = 256;
  uint32_t bn = 128;      // the tile's columns = the wgmma N: 64, 128 or 256
  uint32_t stages = 4;    // >= 2
  bool pingpong = false;
  bool out_f32 = false;   // C as float instead of bf16
  uint32_t persistent_blocks = 0;  // 0: one tile per block
  uint32_t producer_delay = 0;     // cycles of busy work per load
  uint32_t consumer_delay = 0;     // cycles of busy work per mma
  // CUTLASS's cluster shape over the tiles: 1x1 (no cluster), 2x1 (B multicast) or 1x2 (A
  // multicast); cooperative and non-persistent only.
  uint32_t cluster_m = 1;
  uint32_t cluster_n = 1;
  // With a cluster: the consumer delay only in the CTA of this rank (-1: every CTA), to
  // make one CTA's consumers hold both CTAs' producers.
  int32_t consumer_delay_rank = -1;
  HopperGemmRaceBug planted_bug = HopperGemmRaceBug::kNone;  // tests only
};

inline constexpr uint32_t kHopperGemmBk = 64;  // K per stage: one 128-byte swizzle row

// Rows of C per tile: 128 cooperative, 64 ping-pong.
uint32_t HopperGemmTileRows(const HopperGemmShape& shape);
// Tiles of C: (M / tile rows) x (N / BN).
uint32_t HopperGemmTiles(const HopperGemmShape& shape);
// Dynamic shared memory: the ring plus 1024 bytes of alignment slack.
uint32_t HopperGemmSharedBytes(const HopperGemmShape& shape);
// True for a 2x1 or 1x2 cluster.
bool HopperGemmClustered(const HopperGemmShape& shape);
// Rows of the TMA boxes to encode in tmA and tmB: the tile's rows, or half of them for the
// operand a cluster multicasts (each CTA of the pair loads one half).
uint32_t HopperGemmBoxRowsA(const HopperGemmShape& shape);
uint32_t HopperGemmBoxRowsB(const HopperGemmShape& shape);

// InvalidArgument when M is not a positive multiple of the tile rows, N of BN, K of 64, BN
// not 64/128/256, stages < 2, the ring over 227 KiB, or more persistent blocks than tiles;
// a cluster other than 1x1, 2x1, 1x2, with ping-pong or persistent, or whose tiles do not
// pair up (M / 128 even for 2x1, N / BN even for 1x2).
absl::StatusOr<KernelBuilder> HopperGemmBuilder(const HopperGemmShape& shape);
absl::StatusOr<Kernel> HopperGemm(const HopperGemmShape& shape);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNELS_HOPPER_GEMM_H_
