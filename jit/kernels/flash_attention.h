// A FlashAttention-3-style forward kernel (bf16 Q, K, V; fp32 softmax; bf16 O) as a
// KernelBuilder kernel, with the structure of jit/kernels/hopper_gemm.h:
//   O = softmax(Q K^T / sqrt(D) [+ causal mask]) V   per (batch, head),
// Q, K, V and O [batch, heads, seq, D] row-major bf16, D (head_dim) 64 or 128.
//
// Grid (seq / 128 query tiles, heads, batch), 384 threads:
//   producer   warpgroup 0, setmaxnreg.dec 24: its first thread loads the block's 128 x D Q
//              tile once (q_full) and streams the 128 x D K and V tiles of the block's KV
//              range through a 2-stage ring (k_full/k_empty, v_full/v_empty per stage), each
//              tile as D / 64 TMA boxes of 64 columns x 128 rows (128B swizzle).
//   consumers  warpgroups 1 and 2, setmaxnreg.inc 240, 64 query rows each. Per KV tile j:
//              "qk"  S = Q K_j^T: D / 16 wgmma m64n128k16, both operands K-major from shared
//                    memory (K's rows are S's columns, so no transpose);
//              "softmax" online softmax in registers on the accumulator layout (a row's 128
//                    values live in the 4 threads of a quad: row max / sum with
//                    __shfl_xor_sync 1, 2), exp2 with the scale log2(e) / sqrt(D) folded
//                    in; O rescaled by exp2(m_old - m_new); P converted to bf16 wgmma
//                    A fragments straight from S's registers (the m64k16 A fragment of
//                    k-step kk is S's elements 8kk .. 8kk + 7);
//              "pv"  O += P V_j: 128 / 16 wgmma m64nDk16 with A from registers and V
//                    MN-major (TransB = 1; LBO = the distance of V's 64-column boxes, SBO =
//                    1024, the 8-row stride of a 128B-swizzled box);
//              "epilogue" O / row_sum written to global as bf16.
//   causal     block x takes KV tiles 0..x (a KV tile is as long as a query tile) and masks
//              column > row on its diagonal tile.
//   pingpong   the consumers' wgmma issues take turns through two named barriers (each waits
//              on its own, bar.sync, and passes the turn with bar.arrive on the other's):
//              consumer 0 qk, consumer 1 qk, consumer 0 pv, consumer 1 pv, ..., so one
//              consumer's softmax runs while the other's wgmma group is in flight.
//   overlap    within a consumer, the S GEMM of tile j is issued (with the P V of tile
//              j - 1) before the softmax of tile j runs: "qk" j, "pv" j - 1, wait for qk
//              only (wait_group 1), "softmax" (exp, row sums) overlapping pv, wait, then
//              "rescale" (O *= correction, P to bf16).
//
// Kernel parameters, in order: CUtensorMap tmQ, tmK, tmV (each over its tensor as a 2-D
// [batch * heads * seq] x D bf16 matrix, box 64 columns x 128 rows, 128B swizzle),
// `__nv_bfloat16* O`.
#ifndef WARPTRACE_JIT_KERNELS_FLASH_ATTENTION_H_
#define WARPTRACE_JIT_KERNELS_FLASH_ATTENTION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace {

struct FlashAttentionShape {
  uint32_t batch = 1;
  uint32_t heads = 2;
  uint32_t seq = 256;       // a multiple of 128
  uint32_t head_dim = 64;   // 64 or 128
  bool causal = false;
  bool pingpong = false;
  bool overlap = false;
  uint32_t producer_delay = 0;  // cycles of busy work per load
  uint32_t consumer_delay = 0;  // cycles of busy work per softmax
};

inline constexpr uint32_t kFlashAttentionBlockM = 128;   // query rows per block
inline constexpr uint32_t kFlashAttentionBlockN = 128;   // KV rows per tile
inline constexpr uint32_t kFlashAttentionBoxCols = 64;   // TMA box columns (128 bytes)
inline constexpr uint32_t kFlashAttentionStages = 2;

// Query tiles per (batch, head) = KV tiles: seq / 128.
uint32_t FlashAttentionTiles(const FlashAttentionShape& shape);
// KV tiles block (query tile) x loads: all of them, or x + 1 when causal.
uint32_t FlashAttentionKvTiles(const FlashAttentionShape& shape, uint32_t query_tile);
// Dynamic shared memory: Q, 2 stages of K and V, and 1024 bytes of alignment slack.
uint32_t FlashAttentionSharedBytes(const FlashAttentionShape& shape);

// InvalidArgument when seq is not a positive multiple of 128, head_dim not 64 or 128,
// batch or heads 0, or the grid's y/z over 65535.
absl::StatusOr<KernelBuilder> FlashAttentionBuilder(const FlashAttentionShape& shape);
absl::StatusOr<Kernel> FlashAttention(const FlashAttentionShape& shape);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNELS_FLASH_ATTENTION_H_
