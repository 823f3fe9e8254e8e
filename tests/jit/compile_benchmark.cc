// What instrumentation costs at compile time: NVRTC time for the three example kernels with
// profiling on (warpgroup units, auto placement, regions + kernel site) and off, and the
// PTX size. Run:
//   bazel run -c opt //tests/jit:compile_benchmark
// BM_Compile/<kernel>/<profiled> reports each compile's time and ptx_bytes;
// BM_OnVersusOff/<kernel> compiles both per iteration and reports time_ratio (on / off,
// aim <= 1.10) and ptx_growth (on / off).
#include <nvrtc.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "jit/emitter.h"
#include "jit/kernels/reduction.h"
#include "jit/kernels/tiled_gemm.h"
#include "jit/kernels/warp_specialized_pipeline.h"

namespace warptrace {
namespace {

Kernel Example(int index) {
  absl::StatusOr<Kernel> kernel;
  switch (index) {
    case 0: kernel = TiledGemm({256, 256, 256, 16}); break;
    case 1: kernel = WarpSpecializedPipeline({64, 128, 512, 3, 2}); break;
    default: kernel = Reduction({1 << 20, 64, 256}); break;
  }
  if (!kernel.ok()) std::abort();
  return *kernel;
}

KernelSource Source(int index, bool profiled) {
  ProfileOptions options;
  options.enabled = profiled;
  absl::StatusOr<KernelSource> source = EmitKernel(Example(index), options);
  if (!source.ok()) std::abort();
  return *source;
}

// Compiles for sm_90 and returns the PTX size; aborts on any failure (a benchmark of a
// failing compile would measure nothing).
size_t CompilePtxBytes(const KernelSource& source) {
  std::vector<const char*> texts, names;
  for (const EmbeddedFile& h : source.headers) {
    texts.push_back(h.contents.c_str());
    names.push_back(h.name.c_str());
  }
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.source.c_str(), "kernel.cu", static_cast<int>(texts.size()),
                         texts.data(), names.data()) != NVRTC_SUCCESS) {
    std::abort();
  }
  const char* options[] = {"-arch=sm_90", "-std=c++17"};
  if (nvrtcCompileProgram(prog, 2, options) != NVRTC_SUCCESS) std::abort();
  size_t ptx = 0;
  nvrtcGetPTXSize(prog, &ptx);
  nvrtcDestroyProgram(&prog);
  return ptx;
}

void BM_Compile(benchmark::State& state) {
  const KernelSource source = Source(static_cast<int>(state.range(0)), state.range(1) != 0);
  size_t ptx = 0;
  for (auto _ : state) ptx = CompilePtxBytes(source);
  state.SetLabel(source.kernel_name + (source.profiled ? " profiled" : " unprofiled"));
  state.counters["ptx_bytes"] = static_cast<double>(ptx);
}
BENCHMARK(BM_Compile)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);

void BM_OnVersusOff(benchmark::State& state) {
  const KernelSource off = Source(static_cast<int>(state.range(0)), false);
  const KernelSource on = Source(static_cast<int>(state.range(0)), true);
  double off_s = 0, on_s = 0;
  size_t off_ptx = 0, on_ptx = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    off_ptx = CompilePtxBytes(off);
    auto t1 = std::chrono::steady_clock::now();
    on_ptx = CompilePtxBytes(on);
    auto t2 = std::chrono::steady_clock::now();
    off_s += std::chrono::duration<double>(t1 - t0).count();
    on_s += std::chrono::duration<double>(t2 - t1).count();
  }
  state.SetLabel(on.kernel_name);
  state.counters["time_ratio"] = on_s / off_s;
  state.counters["ptx_growth"] = static_cast<double>(on_ptx) / static_cast<double>(off_ptx);
  state.counters["ptx_off"] = static_cast<double>(off_ptx);
  state.counters["ptx_on"] = static_cast<double>(on_ptx);
}
BENCHMARK(BM_OnVersusOff)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->Iterations(10);

}  // namespace
}  // namespace warptrace

BENCHMARK_MAIN();
