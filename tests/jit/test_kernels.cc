#include "tests/jit/test_kernels.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "profiler/device/trace_abi.h"

namespace warptrace::testing {

namespace {

constexpr char kBlockStatsSource[] = R"(#include "recorder.cuh"

constexpr warptrace::device::Config kWtConfig = {
    /*unit_threads=*/32, /*unit_first_thread=*/0, /*recorder_offset=*/0,
    /*units_per_block=*/2, /*capacity=*/$CAPACITY, /*shared=*/$SHARED,
    /*sample_begin=*/0, /*sample_end=*/0xffffffffu, /*sample_stride=*/1};

extern "C" __global__ void block_stats(const int* in, int* block_sums, int* warp_sums,
                                       int* total, int* maximum,
                                       unsigned int* warptrace_trace) {
  WARPTRACE_DYNAMIC_SHARED(unsigned int, wt_smem);
  __shared__ int partial[64];
  using warptrace::abi::MakeTag;
  const unsigned int tid = threadIdx.x;
  const unsigned int block = blockIdx.x;
  warptrace::device::UnitState wt;
  warptrace::device::Prologue(wt, kWtConfig, warptrace_trace, kWtConfig.shared ? wt_smem : 0,
                              tid, block);
  warptrace::device::Record(wt, MakeTag(0, false));
  const int v = in[block * 64 + tid];
  partial[tid] = v;
  atomicAdd(total, v);
  atomicMax(maximum, v);
  warptrace::device::Record(wt, MakeTag(2, false));
  __syncthreads();
  warptrace::device::Record(wt, MakeTag(2, true));
  for (unsigned int stride = 32; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  int down = v, all = v;
  for (int i = 0; i < 2; ++i) {
    warptrace::device::Record(wt, MakeTag(1, false));
    if (i == 0) {
      for (int offset = 16; offset > 0; offset /= 2) down += __shfl_down_sync(0xffffffffu, down, offset);
    } else {
      for (int mask = 16; mask > 0; mask /= 2) all += __shfl_xor_sync(0xffffffffu, all, mask);
    }
    warptrace::device::Record(wt, MakeTag(1, true));
  }
  __syncwarp();
  if (tid % 32 == 0) warp_sums[block * 2 + tid / 32] = down + (down == all ? 0 : 1000000);
  if (tid == 0) block_sums[block] = partial[0];
  warptrace::device::Record(wt, MakeTag(0, true));
  warptrace::device::Epilogue(wt, kWtConfig);
}

#ifdef WARPTRACE_HOST_BACKEND
extern "C" void warptrace_host_entry_block_stats(void** args) {
  block_stats(*(const int**)args[0], *(int**)args[1], *(int**)args[2], *(int**)args[3],
              *(int**)args[4], *(unsigned int**)args[5]);
}
#endif
)";

}  // namespace

KernelSource BlockStatsKernel(uint32_t num_blocks, uint32_t capacity, bool shared) {
  KernelSource k;
  k.kernel_name = "block_stats";
  k.host_entry = "warptrace_host_entry_block_stats";
  k.source = absl::StrReplaceAll(kBlockStatsSource, {{"$CAPACITY", absl::StrCat(capacity)},
                                                     {"$SHARED", shared ? "1" : "0"}});
  k.headers = EmbeddedDeviceHeaders();
  k.params = {{"const int*", "in", 8, true},      {"int*", "block_sums", 8, true},
              {"int*", "warp_sums", 8, true},     {"int*", "total", 8, true},
              {"int*", "maximum", 8, true},       {"unsigned int*", "warptrace_trace", 8, true}};
  k.grid = {num_blocks, 1, 1};
  k.block = {kBlockStatsThreads, 1, 1};
  k.dynamic_shared_bytes = shared ? 2 * capacity * abi::kEventWords * 4 : 0;
  k.profiled = true;
  TraceLayout layout;
  layout.kernel_name = k.kernel_name;
  layout.grid = k.grid;
  layout.block = k.block;
  layout.unit = UnitSpec::Warp();
  layout.capacity = capacity;
  layout.placement = shared ? Placement::kShared : Placement::kGlobal;
  layout.sites = {{0, "block_stats", SiteKind::kKernel, "test_kernels.cc"},
                  {1, "loop", SiteKind::kLoopBody, "test_kernels.cc"},
                  {2, "sync", SiteKind::kBarrierWait, "test_kernels.cc"}};
  k.layout = layout;
  return k;
}

std::vector<uint32_t> BlockStatsTags() {
  return {abi::MakeTag(0, false), abi::MakeTag(2, false), abi::MakeTag(2, true),
          abi::MakeTag(1, false), abi::MakeTag(1, true),  abi::MakeTag(1, false),
          abi::MakeTag(1, true),  abi::MakeTag(0, true)};
}

KernelSource SimpleKernel(const std::string& name, const std::string& body,
                          const std::string& prelude) {
  KernelSource k;
  k.kernel_name = name;
  k.host_entry = "warptrace_host_entry_" + name;
  k.source = absl::StrCat(prelude, "\nextern \"C\" __global__ void ", name, "(int* out) {\n",
                          body, "\n}\n#ifdef WARPTRACE_HOST_BACKEND\nextern \"C\" void ",
                          k.host_entry, "(void** args) { ", name,
                          "(*(int**)args[0]); }\n#endif\n");
  k.params = {{"int*", "out", 8, true}};
  return k;
}

}  // namespace warptrace::testing
