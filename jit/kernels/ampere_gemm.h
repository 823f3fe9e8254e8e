// An Ampere-style bf16 GEMM on tensor cores, C = A * B (row-major; A is M x K and B is K x N
// bf16, C is M x N fp32), as a KernelBuilder kernel: 128 x 128 block tiles of C, K in steps
// of 32 through a `stages`-deep cp.async ring in dynamic shared memory, each warp computing a
// 64 x (128 / (warps / 2)) piece of the tile with ldmatrix (.x4 for A, .x4.trans for B, whose
// rows are K) and mma.sync m16n8k16 bf16 with fp32 accumulation
// (jit/primitives/tensor_core_sm80.cuh).
//
//   prologue: for s < min(stages - 1, K / 32): copy K-tile s (A 128 x 32, B 32 x 128) into stage s
//   for kt < K / 32:
//     region "load": copy K-tile kt + stages - 1 into its stage (while there is one) and
//                    wait until K-tile kt landed (cp.async.wait_group; the last stages - 1
//                    K-tiles wait for all)
//     barrier "tile ready"; region "mma": ldmatrix + mma.sync over the K-tile's two k16
//     steps; barrier "tile consumed" (the stage is then free for the copy of kt + stages)
//   region "store": each thread writes its accumulators to C.
//
// Block: 32 x warps threads (4: 2 x 2 warps of 64 x 64; 8: 2 x 4 warps of 64 x 32); grid
// (N / 128, M / 128). Dynamic shared memory: stages x 16 KiB (stages x 48 KiB over 48 KiB
// needs a GPU that opts in; the host backend takes any size). sm_80 or newer.
// Kernel parameters, in order: const unsigned short* A, const unsigned short* B (bf16 bits),
// float* C.
//
//   ASSIGN_OR_RETURN(Kernel gemm, AmpereGemm({.m = 256, .n = 256, .k = 128}));
#ifndef WARPTRACE_JIT_KERNELS_AMPERE_GEMM_H_
#define WARPTRACE_JIT_KERNELS_AMPERE_GEMM_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace {

struct AmpereGemmShape {
  uint32_t m = 256;
  uint32_t n = 256;
  uint32_t k = 128;
  uint32_t warps = 4;   // 4 or 8
  uint32_t stages = 3;  // 2..4 cp.async stages
  // The occupancy the kernel is written for, __launch_bounds__(32 x warps, this): two
  // blocks per SM (8 warps: at most 128 registers per thread; 4 warps: 255, no bound in
  // practice). Profiled, the kernel keeps it: ptxas bounds the instrumented kernel alike.
  uint32_t min_blocks_per_sm = 2;
  // Cycles of busy work (clock64) added to every "load" / "mma" region, to make the copies
  // or the tensor-core work the bottleneck the timeline and the diagnosis show.
  uint32_t producer_delay = 0;
  uint32_t consumer_delay = 0;
};

// InvalidArgument when M or N is not a positive multiple of 128, K of 32, warps is not 4 or
// 8, or stages is not 2..4.
absl::StatusOr<KernelBuilder> AmpereGemmBuilder(const AmpereGemmShape& shape);
absl::StatusOr<Kernel> AmpereGemm(const AmpereGemmShape& shape);

// float -> bf16 bits, round to nearest even (NaN -> 0x7fff), and back.
uint16_t FloatToBf16(float f);
float Bf16ToFloat(uint16_t bits);

// The CPU reference in double of the bf16 inputs, and for each element sum_k |a b|, the
// scale of its fp32 accumulation error (the kernel's products are exact in fp32: its error
// is K fp32 additions, at most gamma_K x that sum, gamma_K = K 2^-24 / (1 - K 2^-24)).
struct AmpereGemmReference {
  std::vector<double> c;
  std::vector<double> magnitude;
};
AmpereGemmReference ReferenceBf16Gemm(const std::vector<uint16_t>& a,
                                      const std::vector<uint16_t>& b,
                                      const AmpereGemmShape& shape);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNELS_AMPERE_GEMM_H_
