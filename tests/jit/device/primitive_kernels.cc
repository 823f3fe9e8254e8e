#include "tests/jit/primitives/primitive_kernels.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "jit/primitives/embedded_primitives.h"

namespace warptrace::testing {

const std::vector<PrimitiveKernel>& PrimitiveKernels() {
  static const std::vector<PrimitiveKernel>* kernels = new std::vector<PrimitiveKernel>{
      // One warp: every (width, lane mask, lane) of __shfl_xor_sync, then __shfl_sync,
      // __shfl_up_sync and __shfl_down_sync over (width, operand, lane): 4 x 5 x 32 x 32.
      {"shuffle_table", R"(
  const int lane = threadIdx.x;
  int w = 0;
  for (int width = 2; width <= 32; width *= 2, ++w) {
    for (int b = 0; b < 32; ++b) {
      out[((0 * 5 + w) * 32 + b) * 32 + lane] = __shfl_xor_sync(0xffffffffu, lane, b, width);
      out[((1 * 5 + w) * 32 + b) * 32 + lane] = __shfl_sync(0xffffffffu, lane, b, width);
      out[((2 * 5 + w) * 32 + b) * 32 + lane] = __shfl_up_sync(0xffffffffu, lane, b, width);
      out[((3 * 5 + w) * 32 + b) * 32 + lane] = __shfl_down_sync(0xffffffffu, lane, b, width);
    }
  }
)"},
      // Two half-warps vote separately (disjoint masks), then the whole warp.
      {"votes", R"(
  const unsigned int lane = threadIdx.x % 32;
  const unsigned int half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  const int pred = in[threadIdx.x];
  out[threadIdx.x * 8 + 0] = static_cast<int>(__ballot_sync(half, pred));
  out[threadIdx.x * 8 + 1] = __any_sync(half, pred);
  out[threadIdx.x * 8 + 2] = __all_sync(half, pred);
  out[threadIdx.x * 8 + 3] = static_cast<int>(__match_any_sync(half, in[threadIdx.x] / 2));
  int all_equal = 0;
  out[threadIdx.x * 8 + 4] = static_cast<int>(__match_all_sync(half, lane / 16, &all_equal));
  out[threadIdx.x * 8 + 5] = all_equal;
  out[threadIdx.x * 8 + 6] = static_cast<int>(__ballot_sync(0xffffffffu, pred));
  out[threadIdx.x * 8 + 7] = __syncthreads_count(pred) * 100 + __syncthreads_and(pred) * 10 +
                             __syncthreads_or(pred);
)"},
      // Named barriers: warps 0-3 produce, warps 4-7 consume, barrier 1 "full" and 2 "empty"
      // with 256 participants each, over 8 rounds.
      {"named_barriers", R"(
  __shared__ int slot[128];
  const bool producer = threadIdx.x < 128;
  const int i = threadIdx.x % 128;
  int sum = 0;
  for (int round = 0; round < 8; ++round) {
    if (producer) {
      if (round > 0) warptrace_named_barrier_sync(2, 256);  // wait until consumed
      slot[i] = round * 1000 + i;
      warptrace_named_barrier_arrive(1, 256);               // full
    } else {
      warptrace_named_barrier_sync(1, 256);
      sum += slot[(i + 1) % 128];
      if (round < 7) warptrace_named_barrier_arrive(2, 256);  // empty
    }
  }
  if (!producer) out[i] = sum;
)"},
      // An mbarrier ring of 4 stages: one producer thread fills stage k % 4 with tile k and
      // arrives on full[k % 4]; 32 consumer threads wait on it, read, and arrive on
      // empty[k % 4]. The producer runs up to 4 tiles ahead; out[64] records its largest lead.
      {"mbarrier_ring", R"(
  __shared__ unsigned long long full[4];
  __shared__ unsigned long long empty[4];
  __shared__ int stage[4][32];
  __shared__ int produced;
  __shared__ int consumed;
  if (threadIdx.x == 0) {
    for (int s = 0; s < 4; ++s) {
      warptrace_mbarrier_init(&full[s], 1);
      warptrace_mbarrier_init(&empty[s], 32);
    }
    produced = 0;
    consumed = 0;
  }
  __syncthreads();
  const int tiles = 16;
  if (threadIdx.x == 32) {
    int lead = 0;
    for (int k = 0; k < tiles; ++k) {
      const int s = k % 4;
      if (k >= 4) warptrace_mbarrier_wait_parity(&empty[s], ((k / 4) - 1) & 1);
      for (int j = 0; j < 32; ++j) stage[s][j] = k * 100 + j;
      produced = k + 1;
      lead = max(lead, produced - consumed);
      warptrace_mbarrier_arrive(&full[s]);
    }
    out[64] = lead;
  } else if (threadIdx.x < 32) {
    int sum = 0;
    for (int k = 0; k < tiles; ++k) {
      const int s = k % 4;
      warptrace_mbarrier_wait_parity(&full[s], (k / 4) & 1);
      sum += stage[s][threadIdx.x];
      __syncwarp();
      if (threadIdx.x == 0) consumed = k + 1;
      warptrace_mbarrier_arrive(&empty[s]);
    }
    out[threadIdx.x] = sum;
  }
)"},
      // cp.async in three groups; each wait_prior makes one more group visible.
      {"cp_async_groups", R"(
  __shared__ int buffer[3][64];
  for (int g = 0; g < 3; ++g) {
    warptrace_cp_async(&buffer[g][threadIdx.x], &in[g * 64 + threadIdx.x], 4);
    warptrace_cp_async_commit();
  }
  warptrace_cp_async_wait_prior(2);
  out[threadIdx.x] = buffer[0][threadIdx.x];
  warptrace_cp_async_wait_prior(1);
  out[64 + threadIdx.x] = buffer[1][threadIdx.x];
  warptrace_cp_async_wait_prior(0);
  out[128 + threadIdx.x] = buffer[2][threadIdx.x];
)"},
      // A bulk copy completing on an mbarrier with a transaction count: the waiters are
      // released only when both the arrival and the 256 bytes completed.
      {"bulk_copy", R"(
  __shared__ unsigned long long bar;
  __shared__ __align__(16) int tile[64];
  if (threadIdx.x == 0) warptrace_mbarrier_init(&bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    warptrace_mbarrier_arrive_expect_tx(&bar, 256);
    warptrace_bulk_copy_g2s(tile, in, 256, &bar);
  }
  warptrace_mbarrier_wait_parity(&bar, 0);
  out[threadIdx.x] = tile[threadIdx.x] * 2;
)",
       /*needs_sm90=*/true},
      // An mbarrier expecting 2 arrivals that gets 1: every thread waits forever.
      {"missing_arrival", R"(
  __shared__ unsigned long long bar;
  if (threadIdx.x == 0) warptrace_mbarrier_init(&bar, 2);
  __syncthreads();
  if (threadIdx.x == 5) warptrace_mbarrier_arrive(&bar);
  warptrace_mbarrier_wait_parity(&bar, 0);
  out[threadIdx.x] = 1;
)"},
      // Vector types, __half / __nv_bfloat16 conversions (bits), __nanosleep, fences,
      // printf, bit helpers.
      {"scalars", R"(
  const float4 v = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
  const int2 p = make_int2(in[0], in[1]);
  out[0] = static_cast<int>(v.x + v.y + v.z + v.w) + p.x * p.y;
  out[1] = alignof(float4) * 100 + alignof(float2) * 10 + alignof(int4) / 16;
  const __half third = __float2half(1.0f / 3.0f);
  out[2] = *reinterpret_cast<const unsigned short*>(&third);
  out[3] = static_cast<int>(__half2float(__hadd(__float2half(1.5f), __float2half(2.25f))) * 100);
  const __nv_bfloat16 b = __float2bfloat16(1.0f / 3.0f);
  out[4] = *reinterpret_cast<const unsigned short*>(&b);
  const __half big = __float2half(65520.0f);
  out[5] = *reinterpret_cast<const unsigned short*>(&big);
  const __half tiny = __float2half(5.9604645e-08f);
  out[6] = *reinterpret_cast<const unsigned short*>(&tiny);
  const long long t0 = clock64();
  __nanosleep(1000);
  out[7] = clock64() - t0 >= 1500 ? 1 : 0;
  __threadfence();
  __threadfence_block();
  out[8] = __popc(0xf0f0u) + __ffs(8) * 100 + __clz(1) * 1000;
  out[9] = static_cast<int>(__brev(1u) >> 31);
  printf("scalars: thread %d says hello\n", static_cast<int>(threadIdx.x));
)"},
  };
  return *kernels;
}

const PrimitiveKernel& FindPrimitiveKernel(const std::string& name) {
  for (const PrimitiveKernel& k : PrimitiveKernels()) {
    if (k.name == name) return k;
  }
  std::abort();
}

KernelSource PrimitiveKernelSource(const PrimitiveKernel& kernel) {
  KernelSource k;
  k.kernel_name = kernel.name;
  k.host_entry = "warptrace_host_entry_" + kernel.name;
  k.source = absl::StrCat(
      "#include \"warptrace_primitives.cuh\"\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n",
      "extern \"C\" __global__ void ", kernel.name, "(int* out, const int* in) {", kernel.body,
      "}\n#ifdef WARPTRACE_HOST_BACKEND\nextern \"C\" void ", k.host_entry,
      "(void** args) { ", kernel.name, "(*(int**)args[0], *(const int**)args[1]); }\n#endif\n");
  k.headers = EmbeddedPrimitivesHeaders();
  k.params = {{"int*", "out", 8, true}, {"const int*", "in", 8, true}};
  return k;
}

}  // namespace warptrace::testing
