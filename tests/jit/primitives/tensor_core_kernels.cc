#include "tests/jit/primitives/tensor_core_kernels.h"

#include <cstdlib>

namespace warptrace::testing {

const std::vector<PrimitiveKernel>& TensorCoreKernels() {
  static const std::vector<PrimitiveKernel>* kernels = new std::vector<PrimitiveKernel>{
      // One mma.sync per warp on registers the test packs: in[thread * 10 + 0..3] = a,
      // 4..5 = b, 6..9 = c (float bits); out[thread * 4 + i] = d[i] (float bits).
      {"mma_bf16_registers", R"(
  const int* r = in + threadIdx.x * 10;
  const unsigned int a[4] = {static_cast<unsigned int>(r[0]), static_cast<unsigned int>(r[1]),
                             static_cast<unsigned int>(r[2]), static_cast<unsigned int>(r[3])};
  const unsigned int b[2] = {static_cast<unsigned int>(r[4]), static_cast<unsigned int>(r[5])};
  const float c[4] = {__int_as_float(r[6]), __int_as_float(r[7]), __int_as_float(r[8]),
                      __int_as_float(r[9])};
  float d[4];
  warptrace_mma_m16n8k16_f32_bf16(d, a, b, c);
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = __float_as_int(d[i]);
)"},
      {"mma_f16_registers", R"(
  const int* r = in + threadIdx.x * 10;
  const unsigned int a[4] = {static_cast<unsigned int>(r[0]), static_cast<unsigned int>(r[1]),
                             static_cast<unsigned int>(r[2]), static_cast<unsigned int>(r[3])};
  const unsigned int b[2] = {static_cast<unsigned int>(r[4]), static_cast<unsigned int>(r[5])};
  const float c[4] = {__int_as_float(r[6]), __int_as_float(r[7]), __int_as_float(r[8]),
                      __int_as_float(r[9])};
  float d[4];
  warptrace_mma_m16n8k16_f32_f16(d, a, b, c);
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = __float_as_int(d[i]);
)"},
      // Every ldmatrix form on one tile: in[0..255] = a 32-row x 8 tile of 16-bit values,
      // in[256 + lane] = the tile row whose address the lane passes. out[(form * 32 + lane) *
      // 4 + register], forms x1, x2, x4, x1.trans, x2.trans, x4.trans (unused registers 0).
      {"ldmatrix_forms", R"(
  __shared__ __align__(16) unsigned short tile[256];
  const int lane = threadIdx.x;
  for (int i = lane; i < 256; i += 32) tile[i] = static_cast<unsigned short>(in[i]);
  __syncwarp();
  const unsigned short* row = &tile[in[256 + lane] * 8];
  unsigned int r[6][4] = {};
  warptrace_ldmatrix_x1(r[0][0], row);
  warptrace_ldmatrix_x2(r[1][0], r[1][1], row);
  warptrace_ldmatrix_x4(r[2][0], r[2][1], r[2][2], r[2][3], row);
  warptrace_ldmatrix_x1_trans(r[3][0], row);
  warptrace_ldmatrix_x2_trans(r[4][0], r[4][1], row);
  warptrace_ldmatrix_x4_trans(r[5][0], r[5][1], r[5][2], r[5][3], row);
  for (int f = 0; f < 6; ++f) {
    for (int m = 0; m < 4; ++m) out[(f * 32 + lane) * 4 + m] = static_cast<int>(r[f][m]);
  }
)"},
      // Every stmatrix form: in[lane] = the tile row the lane passes, in[32 + lane * 4 + m] =
      // its register m. Form f (x1, x2, x4, x1.trans, x2.trans, x4.trans) stores into a zeroed
      // 32 x 8 tile of its own; out[f * 256 + i] = element i of tile f.
      {"stmatrix_forms", R"(
  __shared__ __align__(16) unsigned short tiles[6 * 256];
  const int lane = threadIdx.x;
  for (int i = lane; i < 6 * 256; i += 32) tiles[i] = 0;
  __syncwarp();
  const int p = in[lane];
  unsigned int r[4];
  for (int m = 0; m < 4; ++m) r[m] = static_cast<unsigned int>(in[32 + lane * 4 + m]);
  warptrace_stmatrix_x1(&tiles[0 * 256 + p * 8], r[0]);
  warptrace_stmatrix_x2(&tiles[1 * 256 + p * 8], r[0], r[1]);
  warptrace_stmatrix_x4(&tiles[2 * 256 + p * 8], r[0], r[1], r[2], r[3]);
  warptrace_stmatrix_x1_trans(&tiles[3 * 256 + p * 8], r[0]);
  warptrace_stmatrix_x2_trans(&tiles[4 * 256 + p * 8], r[0], r[1]);
  warptrace_stmatrix_x4_trans(&tiles[5 * 256 + p * 8], r[0], r[1], r[2], r[3]);
  __syncwarp();
  for (int i = lane; i < 6 * 256; i += 32) out[i] = tiles[i];
)",
       /*needs_sm90=*/true},
      // elect.sync in every warp: out[thread] = 1 in the elected lane.
      {"elect_one", R"(
  out[threadIdx.x] = warptrace_elect_sync() ? 1 : 0;
)",
       /*needs_sm90=*/true},
      // C = A B, 64 x 64 x 64, bf16 inputs, fp32 accumulation, through ldmatrix (A row-major:
      // .x4; B stored [k][n]: .x2.trans gives the "col" fragment) and mma.sync: 4 warps, each
      // a 16-row strip of 8 16x8 tiles. in: A (64 x 64 float bits, row-major), then B (k x n);
      // out: C (float bits, row-major).
      {"mma_gemm_bf16", R"(
  __shared__ __align__(16) __nv_bfloat16 As[64 * 64];
  __shared__ __align__(16) __nv_bfloat16 Bs[64 * 64];
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) {
    As[i] = __float2bfloat16(__int_as_float(in[i]));
    Bs[i] = __float2bfloat16_rn(__int_as_float(in[64 * 64 + i]));
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = warp * 16;
  float acc[8][4] = {};
  for (int k0 = 0; k0 < 64; k0 += 16) {
    unsigned int a[4];
    warptrace_ldmatrix_x4(a[0], a[1], a[2], a[3], &As[(m0 + lane % 16) * 64 + k0 + (lane / 16) * 8]);
    for (int j = 0; j < 8; ++j) {
      unsigned int b[2];
      warptrace_ldmatrix_x2_trans(b[0], b[1], &Bs[(k0 + lane % 16) * 64 + j * 8]);
      warptrace_mma_m16n8k16_f32_bf16(acc[j], a, b, acc[j]);
    }
  }
  const int g = lane / 4, t = lane % 4;
  for (int j = 0; j < 8; ++j) {
    for (int i = 0; i < 4; ++i) {
      out[(m0 + g + 8 * (i / 2)) * 64 + j * 8 + 2 * t + (i % 2)] = __float_as_int(acc[j][i]);
    }
  }
)"},
      // Misuse (undefined on a GPU, a launch error on the host): lane 5's row address is 8
      // bytes past a 16-byte boundary.
      {"ldmatrix_misaligned", R"(
  __shared__ __align__(16) unsigned short tile[256];
  for (int i = threadIdx.x; i < 256; i += 32) tile[i] = static_cast<unsigned short>(i);
  __syncwarp();
  unsigned int r0, r1, r2, r3;
  warptrace_ldmatrix_x4(r0, r1, r2, r3, &tile[threadIdx.x * 8 + (threadIdx.x == 5 ? 4 : 0)]);
  out[threadIdx.x] = static_cast<int>(r0 + r1 + r2 + r3);
)"},
      // Misuse: lane 31 exits instead of taking part in the ldmatrix.
      {"ldmatrix_missing_lane", R"(
  __shared__ __align__(16) unsigned short tile[256];
  for (int i = threadIdx.x; i < 256; i += 32) tile[i] = static_cast<unsigned short>(i);
  __syncwarp();
  if (threadIdx.x == 31) return;
  unsigned int r0;
  warptrace_ldmatrix_x1(r0, &tile[(threadIdx.x % 8) * 8]);
  out[threadIdx.x] = static_cast<int>(r0);
)"},
      // Misuse: half the warp issues the bf16 mma, the other half the f16 one.
      {"mma_divergent", R"(
  const unsigned int a[4] = {0, 0, 0, 0};
  const unsigned int b[2] = {0, 0};
  const float c[4] = {0, 0, 0, 0};
  float d[4];
  if (threadIdx.x < 16) {
    warptrace_mma_m16n8k16_f32_bf16(d, a, b, c);
  } else {
    warptrace_mma_m16n8k16_f32_f16(d, a, b, c);
  }
  out[threadIdx.x] = __float_as_int(d[0]);
)"},
      // Every 16-bit pattern to float: out[i] = __half2float of bits i, out[65536 + i] =
      // __bfloat162float of bits i (float bits).
      {"half_bits_to_float", R"(
  for (int i = threadIdx.x; i < 65536; i += blockDim.x) {
    out[i] = __float_as_int(__half2float(__ushort_as_half(static_cast<unsigned short>(i))));
    out[65536 + i] =
        __float_as_int(__bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(i))));
  }
)"},
      // Floats to 16 bits: in[0] = n, in[1..n] = float bits; out[i * 12 + j] for sample i:
      // __float2half, _rn, _rz, _rd, _ru; __float2bfloat16, _rn, _rz, _rd, _ru;
      // __floats2half2_rn(x, -x) and __floats2bfloat162_rn(x, -x) (as 32 bits, .x low).
      {"float_to_16_bits", R"(
  const int n = in[0];
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float x = __int_as_float(in[1 + i]);
    int* o = out + i * 12;
    o[0] = __half_as_ushort(__float2half(x));
    o[1] = __half_as_ushort(__float2half_rn(x));
    o[2] = __half_as_ushort(__float2half_rz(x));
    o[3] = __half_as_ushort(__float2half_rd(x));
    o[4] = __half_as_ushort(__float2half_ru(x));
    o[5] = __bfloat16_as_ushort(__float2bfloat16(x));
    o[6] = __bfloat16_as_ushort(__float2bfloat16_rn(x));
    o[7] = __bfloat16_as_ushort(__float2bfloat16_rz(x));
    o[8] = __bfloat16_as_ushort(__float2bfloat16_rd(x));
    o[9] = __bfloat16_as_ushort(__float2bfloat16_ru(x));
    const __half2 h2 = __floats2half2_rn(x, -x);
    const __nv_bfloat162 b2 = __floats2bfloat162_rn(x, -x);
    o[10] = static_cast<int>(__half_as_ushort(h2.x) |
                             (static_cast<unsigned int>(__half_as_ushort(h2.y)) << 16));
    o[11] = static_cast<int>(__bfloat16_as_ushort(b2.x) |
                             (static_cast<unsigned int>(__bfloat16_as_ushort(b2.y)) << 16));
  }
)"},
      // The pair helpers on two floats: in[0], in[1] (float bits). out: see the test.
      {"half_pairs", R"(
  const float x = __int_as_float(in[0]), y = __int_as_float(in[1]);
  const __nv_bfloat162 b = __float22bfloat162_rn(make_float2(x, y));
  const __half2 h = __float22half2_rn(make_float2(x, y));
  out[0] = __float_as_int(__low2float(b));
  out[1] = __float_as_int(__high2float(b));
  out[2] = __float_as_int(__low2float(h));
  out[3] = __float_as_int(__high2float(h));
  const __nv_bfloat162 swapped = __halves2bfloat162(__high2bfloat16(b), __low2bfloat16(b));
  out[4] = static_cast<int>(__bfloat16_as_ushort(swapped.x) |
                           (static_cast<unsigned int>(__bfloat16_as_ushort(swapped.y)) << 16));
  const __half2 hs = __halves2half2(__high2half(h), __low2half(h));
  out[5] = static_cast<int>(__half_as_ushort(hs.x) |
                           (static_cast<unsigned int>(__half_as_ushort(hs.y)) << 16));
  const float2 bf = __bfloat1622float2(b);
  const float2 hf = __half22float2(h);
  out[6] = __float_as_int(bf.x + bf.y);
  out[7] = __float_as_int(hf.x + hf.y);
  out[8] = __bfloat16_as_ushort(__hadd(__low2bfloat16(b), __high2bfloat16(b)));
  out[9] = __half_as_ushort(__hmul(__low2half(h), __high2half(h)));
  out[10] = static_cast<int>(sizeof(__nv_bfloat162) * 100 + alignof(__nv_bfloat162) * 10 +
                             sizeof(__nv_bfloat16));
)"},
  };
  return *kernels;
}

const PrimitiveKernel& FindTensorCoreKernel(const std::string& name) {
  for (const PrimitiveKernel& k : TensorCoreKernels()) {
    if (k.name == name) return k;
  }
  std::abort();
}

}  // namespace warptrace::testing
