// Cache-hit latency of CachingCompiler (memory and disk) against a cold NVRTC compile of
// the same profiled kernel (tests/jit/test_kernels.h's block_stats, with the recorder
// headers). Run with:
//   bazel run -c opt //tests/jit/compile:compile_cache_benchmark
#include <stdlib.h>

#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "jit/compile/compile_cache.h"
#include "jit/compile/nvrtc_compiler.h"
#include "jit/cuda/cuda_device.h"
#include "llvm/Support/FileSystem.h"
#include "tests/jit/test_kernels.h"

namespace warptrace {
namespace {

// A fresh cache directory per process, removed at exit.
const std::string& BenchmarkCacheDir() {
  static const std::string* const dir = [] {
    char pattern[] = "/tmp/warptrace-cache-bench-XXXXXX";
    auto* path = new std::string(mkdtemp(pattern));
    std::atexit([] { llvm::sys::fs::remove_directories(BenchmarkCacheDir()); });
    return path;
  }();
  return *dir;
}

CompileRequest Request() {
  return *CudaCompileRequest(::warptrace::testing::BlockStatsKernel(8, 8, false),
                             CudaTarget::Default());
}

std::unique_ptr<CachingCompiler> Cache(size_t memory_entries) {
  CompileCacheOptions options;
  options.directory = BenchmarkCacheDir();
  options.max_memory_entries = memory_entries;
  return *CachingCompiler::Create(std::make_unique<NvrtcCompiler>(), options);
}

void BM_ColdNvrtcCompile(benchmark::State& state) {
  NvrtcCompiler nvrtc;
  const CompileRequest request = Request();
  for (auto _ : state) {
    absl::StatusOr<CompiledKernel> compiled = nvrtc.Compile(request);
    if (!compiled.ok()) state.SkipWithError(std::string(compiled.status().message()).c_str());
    benchmark::DoNotOptimize(compiled);
  }
}
BENCHMARK(BM_ColdNvrtcCompile)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_CacheHitMemory(benchmark::State& state) {
  auto cache = Cache(/*memory_entries=*/16);
  const CompileRequest request = Request();
  if (!cache->Compile(request).ok()) state.SkipWithError("warm-up compile failed");
  for (auto _ : state) {
    absl::StatusOr<CompiledKernel> hit = cache->Compile(request);
    if (!hit.ok() || !hit->from_cache) state.SkipWithError("not a cache hit");
    benchmark::DoNotOptimize(hit);
  }
  state.counters["memory_hits"] = static_cast<double>(cache->stats().memory_hits);
}
BENCHMARK(BM_CacheHitMemory)->Unit(benchmark::kMicrosecond);

void BM_CacheHitDisk(benchmark::State& state) {
  auto cache = Cache(/*memory_entries=*/0);  // every lookup reads and verifies the file
  const CompileRequest request = Request();
  if (!cache->Compile(request).ok()) state.SkipWithError("warm-up compile failed");
  for (auto _ : state) {
    absl::StatusOr<CompiledKernel> hit = cache->Compile(request);
    if (!hit.ok() || !hit->from_cache) state.SkipWithError("not a cache hit");
    benchmark::DoNotOptimize(hit);
  }
  state.counters["disk_hits"] = static_cast<double>(cache->stats().disk_hits);
  state.counters["cubin_bytes"] = static_cast<double>(cache->Compile(request)->cubin.size());
}
BENCHMARK(BM_CacheHitDisk)->Unit(benchmark::kMicrosecond);

// The key alone (SHA-256 over source, headers and options): the floor of any hit.
void BM_CacheKey(benchmark::State& state) {
  auto cache = Cache(/*memory_entries=*/0);
  const CompileRequest request = Request();
  for (auto _ : state) benchmark::DoNotOptimize(cache->KeyFor(request));
}
BENCHMARK(BM_CacheKey)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace warptrace

BENCHMARK_MAIN();
