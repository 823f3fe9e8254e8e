#include "tests/jit/primitives/wgmma_kernels.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/primitives/embedded_primitives.h"

namespace warptrace::testing {
namespace {

// `definition` defines extern "C" kernel `name`; `call` is its host entry's call of it from
// `void** args`.
KernelSource Source(const std::string& name, const std::string& definition,
                    const std::string& call, std::vector<KernelParam> params) {
  KernelSource k;
  k.kernel_name = name;
  k.host_entry = "warptrace_host_entry_" + name;
  k.source = absl::StrCat("#include \"warptrace_primitives.cuh\"\n", definition,
                          "\n#ifdef WARPTRACE_HOST_BACKEND\nextern \"C\" void ", k.host_entry,
                          "(void** args) { ", call, "; }\n#endif\n");
  k.headers = EmbeddedPrimitivesHeaders();
  k.params = std::move(params);
  return k;
}

KernelParam Pointer(const std::string& type, const std::string& name) {
  return {type, name, 8, true};
}
KernelParam Int(const std::string& name) { return {"int", name, 4, false}; }

constexpr char kLayoutKernel[] = R"KERNEL(
// Variant V: 0-3 SS with trans-a = V/2, trans-b = V%2; 4-5 RS with trans-b = V-4. Each has
// its own fence-to-wait sequence, so no register moves fall between fence and wgmma.
template <int N, int V>
__device__ __forceinline__ void wgmma_layout_variant(float* out, unsigned long long da,
                                                     unsigned long long db,
                                                     const unsigned (&a)[4]) {
  float d[N / 2];
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  warptrace_wgmma_fence_operand(d);
  warptrace_wgmma_fence();
  if constexpr (V < 4) {
    warptrace_wgmma_mma_async_bf16_ss<N, V / 2, V % 2>(d, da, db, 0);
  } else {
    warptrace_wgmma_mma_async_bf16_rs<N, V - 4>(d, a, db, 0);
  }
  warptrace_wgmma_commit_group();
  warptrace_wgmma_wait_group(0);
  warptrace_wgmma_fence_operand(d);
  for (int i = 0; i < N / 2; ++i) out[threadIdx.x * (N / 2) + i] = d[i];
}

// The same with a two-dimensional accumulator (CUTLASS-style float[N/16][8]; [N/8][4] where
// N is not a multiple of 16): V 0-3 SS (trans-a V/2, trans-b V%2), 4-5 RS (trans-b V-4).
template <int N, int V>
__device__ __forceinline__ void wgmma_layout_variant_2d(float* out, unsigned long long da,
                                                        unsigned long long db,
                                                        const unsigned (&a)[4]) {
  constexpr int kCols = N % 16 == 0 ? 8 : 4;
  float d[N / 2 / kCols][kCols];
  for (int r = 0; r < N / 2 / kCols; ++r) {
    for (int c = 0; c < kCols; ++c) d[r][c] = 0.0f;
  }
  warptrace_wgmma_fence_operand(d);
  warptrace_wgmma_fence();
  if constexpr (V < 4) {
    warptrace_wgmma_mma_async_bf16_ss<N, V / 2, V % 2>(d, da, db, 0);
  } else {
    warptrace_wgmma_mma_async_bf16_rs<N, V - 4>(d, a, db, 0);
  }
  warptrace_wgmma_commit_group();
  warptrace_wgmma_wait_group(0);
  warptrace_wgmma_fence_operand(d);
  for (int r = 0; r < N / 2 / kCols; ++r) {
    for (int c = 0; c < kCols; ++c) out[threadIdx.x * (N / 2) + r * kCols + c] = d[r][c];
  }
}

template <int N>
__device__ __forceinline__ void wgmma_layout_run(float* out, const unsigned* cfg,
                                                 unsigned long long da, unsigned long long db,
                                                 const unsigned (&a)[4]) {
  const int variant = cfg[2] != 0 ? 4 + (cfg[4] != 0) : 2 * (cfg[3] != 0) + (cfg[4] != 0);
  if (cfg[11] != 0) {
    switch (variant) {
      case 0: wgmma_layout_variant_2d<N, 0>(out, da, db, a); break;
      case 1: wgmma_layout_variant_2d<N, 1>(out, da, db, a); break;
      case 2: wgmma_layout_variant_2d<N, 2>(out, da, db, a); break;
      case 3: wgmma_layout_variant_2d<N, 3>(out, da, db, a); break;
      case 4: wgmma_layout_variant_2d<N, 4>(out, da, db, a); break;
      default: wgmma_layout_variant_2d<N, 5>(out, da, db, a); break;
    }
    return;
  }
  switch (variant) {
    case 0: wgmma_layout_variant<N, 0>(out, da, db, a); break;
    case 1: wgmma_layout_variant<N, 1>(out, da, db, a); break;
    case 2: wgmma_layout_variant<N, 2>(out, da, db, a); break;
    case 3: wgmma_layout_variant<N, 3>(out, da, db, a); break;
    case 4: wgmma_layout_variant<N, 4>(out, da, db, a); break;
    default: wgmma_layout_variant<N, 5>(out, da, db, a); break;
  }
}

extern "C" __launch_bounds__(128, 1) __global__ void wgmma_layout(float* out,
                                                                  const unsigned* in) {
  __shared__ __align__(1024) unsigned image_a[2048];
  __shared__ __align__(1024) unsigned image_b[8192];
  for (int i = threadIdx.x; i < 2048; i += 128) image_a[i] = in[16 + i];
  for (int i = threadIdx.x; i < 8192; i += 128) image_b[i] = in[16 + 2048 + i];
  unsigned a[4];
  for (int j = 0; j < 4; ++j) a[j] = in[16 + 2048 + 8192 + threadIdx.x * 4 + j];
  warptrace_fence_proxy_async();  // the generic writes, before the async proxy reads them
  __syncthreads();
  const unsigned long long da = warptrace_wgmma_desc(
      reinterpret_cast<const char*>(image_a) + in[5], in[7], in[8], static_cast<int>(in[1]));
  const unsigned long long db = warptrace_wgmma_desc(
      reinterpret_cast<const char*>(image_b) + in[6], in[9], in[10], static_cast<int>(in[1]));
  switch (in[0]) {
    case 8: wgmma_layout_run<8>(out, in, da, db, a); break;
    case 16: wgmma_layout_run<16>(out, in, da, db, a); break;
    case 24: wgmma_layout_run<24>(out, in, da, db, a); break;
    case 32: wgmma_layout_run<32>(out, in, da, db, a); break;
    case 64: wgmma_layout_run<64>(out, in, da, db, a); break;
    case 128: wgmma_layout_run<128>(out, in, da, db, a); break;
    case 192: wgmma_layout_run<192>(out, in, da, db, a); break;
    default: wgmma_layout_run<256>(out, in, da, db, a); break;
  }
}
)KERNEL";

constexpr char kGemmKernel[] = R"KERNEL(
extern "C" __launch_bounds__(256, 1) __global__ void wgmma_gemm(
    float* c, const unsigned short* a, const unsigned short* bt, int m, int n, int k) {
  // 128 rows x 64 k of bf16: row r at byte 128 r, its 16-byte chunk j at chunk j ^ (r % 8)
  // (the 128-byte swizzle), 8-row atoms 1024 bytes apart (SBO).
  __shared__ __align__(1024) unsigned short tile_a[128 * 64];
  __shared__ __align__(1024) unsigned short tile_b[128 * 64];
  const int wg = threadIdx.x / 128;
  const int t = threadIdx.x % 128;
  const int row0 = blockIdx.y * 128, col0 = blockIdx.x * 128;
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  for (int k0 = 0; k0 < k; k0 += 64) {
    for (int idx = threadIdx.x; idx < 128 * 8; idx += 256) {
      const int r = idx / 8, chunk = idx % 8, to = r * 8 + (chunk ^ (r % 8));
      reinterpret_cast<uint4*>(tile_a)[to] =
          *reinterpret_cast<const uint4*>(a + (row0 + r) * k + k0 + chunk * 8);
      reinterpret_cast<uint4*>(tile_b)[to] =
          *reinterpret_cast<const uint4*>(bt + (col0 + r) * k + k0 + chunk * 8);
    }
    warptrace_fence_proxy_async();
    __syncthreads();
    const unsigned long long da =
        warptrace_wgmma_desc(tile_a + wg * 64 * 64, 16, 1024, WARPTRACE_SWIZZLE_128B);
    const unsigned long long db = warptrace_wgmma_desc(tile_b, 16, 1024, WARPTRACE_SWIZZLE_128B);
    warptrace_wgmma_fence();
    warptrace_wgmma_fence_operand(acc);
    // k16 step s starts 32 bytes further into each 128-byte row: +2 in the address field.
    warptrace_wgmma_mma_async_bf16_ss<128>(acc, da, db, k0 > 0 ? 1 : 0);
    warptrace_wgmma_mma_async_bf16_ss<128>(acc, da + 2, db + 2, 1);
    warptrace_wgmma_mma_async_bf16_ss<128>(acc, da + 4, db + 4, 1);
    warptrace_wgmma_mma_async_bf16_ss<128>(acc, da + 6, db + 6, 1);
    warptrace_wgmma_commit_group();
    warptrace_wgmma_wait_group(0);
    warptrace_wgmma_fence_operand(acc);
    __syncthreads();  // every warpgroup is done with the tiles before they are refilled
  }
  const int w = t / 32, g = (t % 32) / 4, q = t % 4;
  for (int i = 0; i < 64; ++i) {
    const int row = row0 + wg * 64 + 16 * w + g + 8 * ((i >> 1) & 1);
    const int col = col0 + 8 * (i >> 2) + 2 * q + (i & 1);
    c[row * n + col] = acc[i];
  }
  (void)m;
}
)KERNEL";

constexpr char kSetmaxnregRolesKernel[] = R"KERNEL(
extern "C" __launch_bounds__(384, 1) __global__ void setmaxnreg_roles(int* out, const int* in) {
  if (threadIdx.x < 128) {
    warptrace_setmaxnreg_dec<40>();
    out[threadIdx.x] = 40 + in[0];
  } else {
    warptrace_setmaxnreg_inc<232>();
    out[threadIdx.x] = 232 + in[0];
  }
}
)KERNEL";

constexpr char kMisuseKernel[] = R"KERNEL(
extern "C" __global__ void wgmma_misuse(float* out, const int* cfg) {
  __shared__ __align__(1024) unsigned short tile_a[64 * 64];
  __shared__ __align__(1024) unsigned short tile_b[128 * 64];
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) tile_a[i] = 0x3f80;  // bf16 1.0
  for (int i = threadIdx.x; i < 128 * 64; i += blockDim.x) tile_b[i] = 0x3f80;
  __syncthreads();
  const int mode = cfg[0];
  const int warp = threadIdx.x / 32;
  float d[64];
  for (int i = 0; i < 64; ++i) d[i] = 0.0f;
  unsigned a[4];
  for (int i = 0; i < 4; ++i) a[i] = 0x3f803f80u;  // two bf16 1.0 (RS: A all ones too)
  unsigned long long da = warptrace_wgmma_desc(tile_a, 16, 1024, WARPTRACE_SWIZZLE_128B);
  unsigned long long db = warptrace_wgmma_desc(tile_b, 16, 1024, WARPTRACE_SWIZZLE_128B);
  if (mode == 11) warptrace_setmaxnreg_inc(static_cast<unsigned>(cfg[1]));
  if (mode == 12) warptrace_setmaxnreg_inc(warp == 0 ? 232u : 240u);
  if (mode == 13) {
    if (warp == 0) {
      warptrace_setmaxnreg_dec(40);
    } else {
      warptrace_setmaxnreg_inc(232);
    }
  }
  if (mode == 14) da = warptrace_wgmma_desc(out, 16, 1024, WARPTRACE_SWIZZLE_128B);
  if (mode == 15) db |= 1ull << 49;
  if (mode == 1 && warp == 1) db += 2;
  if (mode == 3 && warp == 3) return;
  if (mode != 18) warptrace_wgmma_fence();
  if (mode == 17) d[7] = 0.0f;
  if (mode == 2 && warp == 0) {
    float e[32];
    warptrace_wgmma_mma_async_bf16_ss<64>(e, da, db, 0);
  } else if (mode == 5 && warp == 1) {
    warptrace_wgmma_mma_async_bf16_ss<128, 0, 1>(d, da, db, 0);
  } else if (mode == 20) {
    warptrace_wgmma_mma_async_bf16_rs<128>(d, a, db, 0);
  } else {
    warptrace_wgmma_mma_async_bf16_ss<128>(d, da, db, mode == 4 && warp == 2 ? 1 : 0);
  }
  if (mode == 6) d[5] = 1.0f;
  if (mode == 7) out[threadIdx.x * 64 + 63] = d[3];
  if (mode == 10) warptrace_wgmma_mma_async_bf16_ss<128>(d, da, db, 1);
  if (mode == 16) {
    float (&half)[32] = *reinterpret_cast<float (*)[32]>(&d[0]);
    warptrace_wgmma_mma_async_bf16_ss<64>(half, da, db, 1);
  }
  if (mode == 19) {
    float (&middle)[32] = *reinterpret_cast<float (*)[32]>(&d[16]);
    warptrace_wgmma_mma_async_bf16_ss<64>(middle, da, db, 1);
  }
  if (mode == 20) a[1] = 0u;
  warptrace_wgmma_commit_group();
  if (mode == 8) warptrace_wgmma_wait_group(static_cast<unsigned>(cfg[1]));
  if (mode == 9) {
    warptrace_wgmma_commit_group();
    warptrace_wgmma_commit_group();
    warptrace_wgmma_wait_group(2);
    warptrace_wgmma_wait_group(1);
  }
  warptrace_wgmma_wait_group(0);
  for (int i = 0; i < (mode == 7 ? 63 : 64); ++i) out[threadIdx.x * 64 + i] = d[i];
}
)KERNEL";

}  // namespace

KernelSource WgmmaLayoutKernel() {
  return Source("wgmma_layout", kLayoutKernel,
                "wgmma_layout(*(float**)args[0], *(const unsigned**)args[1])",
                {Pointer("float*", "out"), Pointer("const unsigned*", "in")});
}

KernelSource WgmmaGemmKernel() {
  return Source("wgmma_gemm", kGemmKernel,
                "wgmma_gemm(*(float**)args[0], *(const unsigned short**)args[1], "
                "*(const unsigned short**)args[2], *(int*)args[3], *(int*)args[4], "
                "*(int*)args[5])",
                {Pointer("float*", "c"), Pointer("const unsigned short*", "a"),
                 Pointer("const unsigned short*", "bt"), Int("m"), Int("n"), Int("k")});
}

KernelSource SetmaxnregRolesKernel() {
  return Source("setmaxnreg_roles", kSetmaxnregRolesKernel,
                "setmaxnreg_roles(*(int**)args[0], *(const int**)args[1])",
                {Pointer("int*", "out"), Pointer("const int*", "in")});
}

KernelSource WgmmaMisuseKernel() {
  return Source("wgmma_misuse", kMisuseKernel,
                "wgmma_misuse(*(float**)args[0], *(const int**)args[1])",
                {Pointer("float*", "out"), Pointer("const int*", "cfg")});
}

KernelSource SetmaxnregStaticKernel(int regs) {
  const std::string name = absl::StrCat("setmaxnreg_static_", regs);
  return Source(name,
                absl::StrCat("extern \"C\" __global__ void ", name,
                             "(int* out) { warptrace_setmaxnreg_inc<", regs,
                             ">(); out[threadIdx.x] = 1; }"),
                absl::StrCat(name, "(*(int**)args[0])"), {Pointer("int*", "out")});
}

}  // namespace warptrace::testing
