// The host runtime's costs, each a kernel compiled by the host backend and launched through
// HostDevice:
//   BM_BlockBarrier/T     one __syncthreads of a T-thread block (the kernel loops over 1000
//                         barriers; time per barrier)
//   BM_LaunchPerBlock/B   an empty kernel on B blocks of 32 threads (time per block)
//   BM_LaunchPerThread/T  an empty kernel on one block of T threads (time per thread)
//   BM_WarpShuffle        one __shfl_xor_sync of a full warp (time per shuffle)
//   BM_MmaSync/W          one emulated mma.sync m16n8k16 bf16 per warp, W warps of a block
//                         (items: warp-wide mmas; time per launch of 1000 per warp)
//   BM_LdmatrixX4         one emulated ldmatrix.x4 of a full warp (time per launch of 1000)
//   BM_FiberSwitch, BM_UcontextSwitch   one context switch, ours and ucontext's (items/s:
//                         switches per second)
//   BM_TmaLoad128x64Bf16Swizzle128B   one TMA load (cp.async.bulk.tensor.2d) of a 128 x 64
//                         bf16 box (16 KiB) with 128B swizzle by one thread, with its
//                         arrive.expect_tx and the wait on the mbarrier it completes (the
//                         kernel loops over 1000 loads; time per load; bytes/s)
//   BM_WgmmaM64N128K16/W  one emulated wgmma m64n128k16 (SS, 128B swizzle) per warpgroup,
//                         with its fence, commit_group and wait_group 0, in a block of W
//                         warpgroups (the kernel loops over 100; time per wgmma of a
//                         warpgroup, items/s: warpgroup wgmmas per second)
//   BM_WgmmaGemm256       a 256 x 256 x 256 bf16 GEMM through wgmma (4 blocks of 256
//                         threads, 64 wgmma m64n128k16 per warpgroup; time per GEMM)
//
//   bazel run -c opt //tests/jit/host:runtime_benchmark
#include <ucontext.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "benchmark/benchmark.h"
#include "jit/builder/kernel_builder.h"
#include "jit/emit/emitter.h"
#include "jit/host/runtime/fiber.h"
#include "jit/host/host_device.h"
#include "jit/platform/tensor_map.h"
#include "tests/jit/primitives/wgmma_kernels.h"
#include "tests/jit/test_kernels.h"

namespace warptrace {
namespace {

constexpr int kBarriersPerLaunch = 1000;

HostDevice& Device() {
  static HostDevice* device = [] {
    HostDeviceOptions options;
    options.cache_directory = TestTempPath("runtime_benchmark_cache");
    absl::StatusOr<std::unique_ptr<HostDevice>> d = HostDevice::Create(options);
    if (!d.ok()) {
      std::fprintf(stderr, "%s\n", std::string(d.status().message()).c_str());
      std::abort();
    }
    return d->release();
  }();
  return *device;
}

std::unique_ptr<LoadedKernel> Load(const std::string& name, const std::string& body) {
  absl::StatusOr<std::unique_ptr<LoadedKernel>> k =
      Device().Load(testing::SimpleKernel(name, body));
  if (!k.ok()) {
    std::fprintf(stderr, "%s\n", std::string(k.status().message()).c_str());
    std::abort();
  }
  return *std::move(k);
}

void Run(benchmark::State& state, LoadedKernel& kernel, Dim3 grid, Dim3 block) {
  absl::StatusOr<void*> out = Device().Allocate(4096 * 4);
  if (!out.ok()) {
    state.SkipWithError("allocation failed");
    return;
  }
  void* out_ptr = *out;
  void* args[] = {&out_ptr};
  for (auto _ : state) {
    absl::Status s = Device().Launch(kernel, grid, block, 0, args);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
  }
  Device().Free(out_ptr).IgnoreError();
}

void BM_BlockBarrier(benchmark::State& state) {
  static std::unique_ptr<LoadedKernel> kernel =
      Load("barriers", "for (int i = 0; i < 1000; ++i) __syncthreads();");
  const uint32_t threads = static_cast<uint32_t>(state.range(0));
  Run(state, *kernel, {1, 1, 1}, {threads, 1, 1});
  state.SetItemsProcessed(state.iterations() * kBarriersPerLaunch);  // barriers per second
}
BENCHMARK(BM_BlockBarrier)->Arg(32)->Arg(128)->Arg(384)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

void BM_LaunchPerBlock(benchmark::State& state) {
  static std::unique_ptr<LoadedKernel> kernel = Load("empty_blocks", "(void)out;");
  const uint32_t blocks = static_cast<uint32_t>(state.range(0));
  Run(state, *kernel, {blocks, 1, 1}, {32, 1, 1});
  state.SetItemsProcessed(state.iterations() * blocks);
}
BENCHMARK(BM_LaunchPerBlock)->Arg(1)->Arg(64)->Arg(1024)->Unit(benchmark::kMicrosecond)->UseRealTime()->MeasureProcessCPUTime();

void BM_LaunchPerThread(benchmark::State& state) {
  static std::unique_ptr<LoadedKernel> kernel = Load("empty_threads", "(void)out;");
  const uint32_t threads = static_cast<uint32_t>(state.range(0));
  Run(state, *kernel, {1, 1, 1}, {threads, 1, 1});
  state.SetItemsProcessed(state.iterations() * threads);
}
BENCHMARK(BM_LaunchPerThread)->Arg(32)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond)->UseRealTime()->MeasureProcessCPUTime();

void BM_WarpShuffle(benchmark::State& state) {
  static std::unique_ptr<LoadedKernel> kernel = Load(
      "shuffles",
      "int v = threadIdx.x;\nfor (int i = 0; i < 1000; ++i) v = __shfl_xor_sync(0xffffffffu, v, 1);\n"
      "out[threadIdx.x] = v;");
  Run(state, *kernel, {1, 1, 1}, {32, 1, 1});
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_WarpShuffle)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

void BM_MmaSync(benchmark::State& state) {
  static std::unique_ptr<LoadedKernel> kernel = Load("mmas", R"(
  const unsigned int a[4] = {threadIdx.x * 0x00010001u, 0x3f803f80u, 0x3f803f80u, threadIdx.x};
  const unsigned int b[2] = {0x3f803f80u, threadIdx.x * 3u};
  float d[4] = {0, 0, 0, 0};
  for (int i = 0; i < 1000; ++i) warptrace_mma_m16n8k16_f32_bf16(d, a, b, d);
  out[threadIdx.x] = static_cast<int>(d[0] + d[1] + d[2] + d[3]);
)");
  const uint32_t warps = static_cast<uint32_t>(state.range(0));
  Run(state, *kernel, {1, 1, 1}, {32 * warps, 1, 1});
  state.SetItemsProcessed(state.iterations() * 1000 * warps);  // warp-wide mmas per second
}
BENCHMARK(BM_MmaSync)->Arg(1)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

void BM_LdmatrixX4(benchmark::State& state) {
  static std::unique_ptr<LoadedKernel> kernel = Load("ldmatrices", R"(
  __shared__ __align__(16) unsigned short tile[32 * 8];
  for (int i = threadIdx.x; i < 256; i += 32) tile[i] = static_cast<unsigned short>(i);
  __syncwarp();
  unsigned int sum = 0;
  for (int i = 0; i < 1000; ++i) {
    unsigned int r0, r1, r2, r3;
    warptrace_ldmatrix_x4(r0, r1, r2, r3, &tile[((threadIdx.x + i) % 32) * 8]);
    sum += r0 ^ r1 ^ r2 ^ r3;
  }
  out[threadIdx.x] = static_cast<int>(sum);
)");
  Run(state, *kernel, {1, 1, 1}, {32, 1, 1});
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_LdmatrixX4)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

constexpr int kWgmmasPerLaunch = 100;

void BM_WgmmaM64N128K16(benchmark::State& state) {
  static std::unique_ptr<LoadedKernel> kernel = Load("wgmmas", R"(
  __shared__ __align__(1024) unsigned short tile_a[64 * 64];
  __shared__ __align__(1024) unsigned short tile_b[128 * 64];
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) tile_a[i] = 0x3f80;
  for (int i = threadIdx.x; i < 128 * 64; i += blockDim.x) tile_b[i] = 0x3f80;
  __syncthreads();
  const unsigned long long da = warptrace_wgmma_desc(tile_a, 16, 1024, WARPTRACE_SWIZZLE_128B);
  const unsigned long long db = warptrace_wgmma_desc(tile_b, 16, 1024, WARPTRACE_SWIZZLE_128B);
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  for (int it = 0; it < 100; ++it) {
    warptrace_wgmma_fence();
    warptrace_wgmma_mma_async_bf16_ss<128>(acc, da, db, 1);
    warptrace_wgmma_commit_group();
    warptrace_wgmma_wait_group(0);
  }
  out[threadIdx.x] = static_cast<int>(acc[threadIdx.x % 64]);)");
  const uint32_t warpgroups = static_cast<uint32_t>(state.range(0));
  Run(state, *kernel, {1, 1, 1}, {128 * warpgroups, 1, 1});
  state.SetItemsProcessed(state.iterations() * kWgmmasPerLaunch * warpgroups);
}
BENCHMARK(BM_WgmmaM64N128K16)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

void BM_WgmmaGemm256(benchmark::State& state) {
  static std::unique_ptr<LoadedKernel> kernel = [] {
    absl::StatusOr<std::unique_ptr<LoadedKernel>> k =
        Device().Load(testing::WgmmaGemmKernel());
    if (!k.ok()) {
      std::fprintf(stderr, "%s\n", std::string(k.status().message()).c_str());
      std::abort();
    }
    return *std::move(k);
  }();
  int m = 256, n = 256, k = 256;
  absl::StatusOr<void*> c = Device().Allocate(size_t{4} * m * n);
  absl::StatusOr<void*> a = Device().Allocate(size_t{2} * m * k);
  absl::StatusOr<void*> b = Device().Allocate(size_t{2} * n * k);
  if (!c.ok() || !a.ok() || !b.ok()) {
    state.SkipWithError("allocation failed");
    return;
  }
  const std::vector<uint16_t> ones(size_t{1} * 256 * 256, 0x3f80);  // bf16 1.0
  if (!Device().CopyToDevice(*a, ones.data(), ones.size() * 2).ok() ||
      !Device().CopyToDevice(*b, ones.data(), ones.size() * 2).ok()) {
    state.SkipWithError("copy failed");
    return;
  }
  void* c_ptr = *c;
  void* a_ptr = *a;
  void* b_ptr = *b;
  void* args[] = {&c_ptr, &a_ptr, &b_ptr, &m, &n, &k};
  for (auto _ : state) {
    absl::Status s = Device().Launch(*kernel, {2, 2, 1}, {256, 1, 1}, 0, args);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
  }
  Device().Free(c_ptr).IgnoreError();
  Device().Free(a_ptr).IgnoreError();
  Device().Free(b_ptr).IgnoreError();
}
BENCHMARK(BM_WgmmaGemm256)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

// One fiber switch (half of a ping-pong), for the record against ucontext's swapcontext.
host::FiberContext ping_main, ping_fiber;
void PingPong(void*) {
  for (;;) host::SwitchFiber(ping_fiber, ping_main);
}
void BM_FiberSwitch(benchmark::State& state) {
  static host::FiberStack stack = *host::FiberStack::Allocate(64 * 1024);
  ping_fiber.Start(stack, &PingPong, nullptr);
  for (auto _ : state) host::SwitchFiber(ping_main, ping_fiber);
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_FiberSwitch);

ucontext_t u_main, u_fiber;
void UcontextPingPong() {
  for (;;) swapcontext(&u_fiber, &u_main);
}
void BM_UcontextSwitch(benchmark::State& state) {
  static std::vector<char> stack(64 * 1024);
  getcontext(&u_fiber);
  u_fiber.uc_stack.ss_sp = stack.data();
  u_fiber.uc_stack.ss_size = stack.size();
  u_fiber.uc_link = nullptr;
  makecontext(&u_fiber, &UcontextPingPong, 0);
  for (auto _ : state) swapcontext(&u_main, &u_fiber);
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_UcontextSwitch);

constexpr int kTmaLoadsPerLaunch = 1000;

void BM_TmaLoad128x64Bf16Swizzle128B(benchmark::State& state) {
  // A 256 x 64 bf16 matrix (128-byte rows); the loads alternate between its two 128-row boxes.
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kBFloat16;
  spec.dims = {64, 256};
  spec.strides_bytes = {128};
  spec.box = {64, 128};
  spec.swizzle = TensorMapSwizzle::k128B;
  const uint64_t box_bytes = BoxBytes(spec);
  KernelBuilder b("tma_load_loop");
  b.Param("CUtensorMap", "tm").Param("int*", "out").Grid({1, 1, 1}).Block({32, 1, 1});
  b.Stmt(absl::StrCat("__shared__ __align__(1024) unsigned char box[", box_bytes, "];"));
  b.Stmt("__shared__ unsigned long long full;");
  b.Stmt("if (threadIdx.x == 0) { warptrace_mbarrier_init(&full, 1); "
         "warptrace_fence_mbarrier_init(); }");
  b.Stmt("__syncthreads();");
  b.Stmt(absl::StrCat(
      "if (threadIdx.x == 0) { for (int i = 0; i < ", kTmaLoadsPerLaunch, "; ++i) { "
      "warptrace_mbarrier_arrive_expect_tx(&full, ", box_bytes, "); "
      "warptrace_tma_load_2d(box, &tm, 0, (i & 1) * 128, &full); "
      "warptrace_mbarrier_wait_parity(&full, i & 1); } out[0] = box[5]; }"));
  absl::StatusOr<Kernel> kernel = b.Build();
  if (!kernel.ok()) {
    state.SkipWithError(std::string(kernel.status().message()).c_str());
    return;
  }
  static std::unique_ptr<LoadedKernel> loaded = [&] {
    absl::StatusOr<std::unique_ptr<LoadedKernel>> k = Device().Load(EmitUnprofiledKernel(*kernel));
    if (!k.ok()) {
      std::fprintf(stderr, "%s\n", std::string(k.status().message()).c_str());
      std::abort();
    }
    return *std::move(k);
  }();
  const uint64_t tensor_bytes = 256 * 128;
  absl::StatusOr<void*> tensor = Device().Allocate(tensor_bytes);
  absl::StatusOr<void*> out = Device().Allocate(64);
  if (!tensor.ok() || !out.ok()) {
    state.SkipWithError("allocation failed");
    return;
  }
  Device().Memset(*tensor, 1, tensor_bytes).IgnoreError();
  absl::StatusOr<TensorMapBytes> map = Device().EncodeTensorMap(spec, *tensor, "tm");
  if (!map.ok()) {
    state.SkipWithError(std::string(map.status().message()).c_str());
    return;
  }
  void* out_ptr = *out;
  void* args[] = {map->bytes, &out_ptr};
  for (auto _ : state) {
    absl::Status s = Device().Launch(*loaded, {1, 1, 1}, {32, 1, 1}, 0, args);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kTmaLoadsPerLaunch);  // loads per second
  state.SetBytesProcessed(state.iterations() * kTmaLoadsPerLaunch * static_cast<int64_t>(box_bytes));
  Device().Free(*tensor).IgnoreError();
  Device().Free(out_ptr).IgnoreError();
}
BENCHMARK(BM_TmaLoad128x64Bf16Swizzle128B)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

}  // namespace
}  // namespace warptrace

BENCHMARK_MAIN();
