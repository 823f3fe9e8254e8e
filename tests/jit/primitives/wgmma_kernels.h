// Kernels that exercise the sm_90a wgmma and setmaxnreg primitives (jit/primitives/
// wgmma_sm90.cuh), as complete translation units with their host entries: the host tests
// (tests/jit/host/wgmma_test.cc) run them on HostDevice; the NVRTC test
// (tests/jit/primitives/wgmma_nvrtc_test.cc) compiles the GPU ones for sm_90a and reads
// their SASS. They include only the embedded primitives (bf16 values travel as bits).
#ifndef WARPTRACE_TESTS_JIT_PRIMITIVES_WGMMA_KERNELS_H_
#define WARPTRACE_TESTS_JIT_PRIMITIVES_WGMMA_KERNELS_H_

#include "jit/builder/kernel_source.h"

namespace warptrace::testing {

// wgmma_layout(float* out, const unsigned* in), one warpgroup (128 threads): copies the two
// shared-memory images in `in` into 1024-byte-aligned shared arrays, runs one wgmma
// m64nNk16 (D = A*B) and writes each thread's N/2 accumulators to out[thread * N/2 + i].
// in[0..15]: the configuration (WgmmaLayoutConfig below); then kWgmmaImageAWords words of
// A's image, kWgmmaImageBWords of B's, and 4 words of A fragments per thread (RS).
inline constexpr int kWgmmaConfigWords = 16;
inline constexpr int kWgmmaImageAWords = 2048;  // 8 KiB
inline constexpr int kWgmmaImageBWords = 8192;  // 32 KiB
inline constexpr int kWgmmaFragmentWords = 128 * 4;
enum WgmmaLayoutConfig {
  kCfgN = 0,        // 8, 16, 24, 32, 64, 128, 192, 256
  kCfgSwizzle = 1,  // WARPTRACE_SWIZZLE_* (both operands)
  kCfgRs = 2,       // 1: A from the fragments
  kCfgTransA = 3,
  kCfgTransB = 4,
  kCfgStartA = 5,  // byte offset of A's start in its image (the descriptor's start address)
  kCfgStartB = 6,
  kCfgLboA = 7,
  kCfgSboA = 8,
  kCfgLboB = 9,
  kCfgSboB = 10,
  kCfgShape2d = 11,  // 1: a 2-D accumulator, float[N/16][8] (float[N/8][4] if N % 16 != 0)
};
KernelSource WgmmaLayoutKernel();

// wgmma_gemm(float* c, const unsigned short* a, const unsigned short* bt, int m, int n,
// int k): C (m x n, row-major) = A (m x k, row-major) * B, with B given transposed (bt: n x k,
// row-major), bf16 bits. 256 threads per block (two warpgroups of 64 rows), a 128 x 128 tile
// per block (grid n/128 x m/128), k in steps of 64 through 128B-swizzled shared memory, four
// chained wgmma m64n128k16 per step. m, n multiples of 128, k of 64.
KernelSource WgmmaGemmKernel();

// setmaxnreg_roles(int* out, const int* in), 384 threads: warpgroup 0 setmaxnreg.dec 40, the
// others setmaxnreg.inc 232 (CUTLASS's producer / consumer split); out[t] = its count + in[0].
KernelSource SetmaxnregRolesKernel();

// wgmma_misuse(float* out, const int* cfg), host only, 128 threads (256 for the modes that
// say so): cfg[0] a WgmmaMisuse, cfg[1] its argument. Runs fence, one wgmma m64n128k16
// (A = B = all ones, so every accumulator is 16 when nothing goes wrong), commit, wait 0 and
// writes out[t * 64 + i] = d[i]; each mode breaks one rule.
enum WgmmaMisuse {
  kMisuseNone = 0,
  kMisuseDescriptorDiffers = 1,   // warp 1's B descriptor is 32 bytes further
  kMisuseNDiffers = 2,            // warp 0 issues m64n64k16
  kMisuseWarpMissing = 3,         // warp 3 exits before the wgmma
  kMisuseScaleDiffers = 4,        // warp 2 accumulates
  kMisuseTransDiffers = 5,        // warp 1 passes imm-trans-b 1
  kMisuseWriteBeforeWait = 6,     // writes d[5] between the wgmma and the wait
  kMisuseReadBeforeWait = 7,      // out[t * 64 + 63] = d[3] read before the wait
  kMisuseWaitOutOfRange = 8,      // wait_group cfg[1]
  kMisuseEmptyCommits = 9,        // commit, then two empty commits; wait 2, 1, 0 (no error)
  kMisuseChained = 10,            // a second wgmma (scale-d 1) before the wait: d = 32
  kMisuseSetmaxnregCount = 11,    // setmaxnreg.inc cfg[1] (run-time count)
  kMisuseSetmaxnregNonUniform = 12,  // warp 0 inc 232, the others inc 240
  kMisuseSetmaxnregIncDec = 13,   // warp 0 dec 40, the others inc 232
  kMisuseDescriptorNotShared = 14,  // a descriptor of a global-memory pointer
  kMisuseBaseOffset = 15,         // the B descriptor with base offset 1
  kMisuseChainedOtherN = 16,      // a pending accumulator reused by an m64n64k16
  kMisuseAccessAfterFence = 17,   // writes d[7] between the wgmma.fence and the wgmma
  kMisuseNoFence = 18,            // no wgmma.fence before the first wgmma
  kMisuseOverlapOtherStart = 19,  // an m64n64k16 on d[16..47] while the m64n128k16 is pending
  kMisuseAFragmentWritten = 20,   // RS form (A all ones); writes a[1] before the wait
};
KernelSource WgmmaMisuseKernel();

// A kernel whose body calls warptrace_setmaxnreg_inc<Regs> (a compile-time count).
KernelSource SetmaxnregStaticKernel(int regs);

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_PRIMITIVES_WGMMA_KERNELS_H_
