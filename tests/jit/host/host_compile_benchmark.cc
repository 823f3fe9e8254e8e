// What one host-backend kernel compile costs (HostCompiler::Compile: lowering, writing the
// inputs, g++, reading the shared object back), with and without the precompiled
// cuda_on_cpu.h. Wall time (the compiler is a child process). Run:
//   bazel run -c opt //tests/jit/host:host_compile_benchmark
//
// BM_Compile/<kernel>/<pch>: one compile of an example kernel (0 tiled_gemm,
//   1 warp_specialized_pipeline, 2 reduction; profiled, as the examples run them) per
//   iteration by one HostCompiler; pch 1 reuses the PCH its warm-up compile built, as every
//   compile after a process's first does.
// BM_FirstCompile/<mode>: the first compile of a process (a new HostCompiler and PCH store
//   per iteration), warp_specialized_pipeline: 0 without a PCH; 1 building the PCH into an
//   empty cache directory, then compiling with it; 2 with the PCH a previous process left in
//   the cache directory (checked: manifest, system headers, the .gch's checksum).
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/temp_dir.h"
#include "benchmark/benchmark.h"
#include "jit/emit/emitter.h"
#include "jit/host/compiler/host_compiler.h"
#include "jit/host/compiler/precompiled_header.h"
#include "tests/jit/benchmark_kernels.h"

namespace warptrace {
namespace {

// Every failure aborts, with why (a benchmark of a failing compile would measure nothing).
[[noreturn]] void Die(const std::string& what) {
  testing::BenchmarkDie("host_compile_benchmark", what);
}

CompileRequest Request(int index) {
  absl::StatusOr<KernelSource> source =
      EmitKernel(testing::BenchmarkKernel(index), ProfileOptions{});
  if (!source.ok()) Die(std::string(source.status().message()));
  return host::HostCompileRequest(*source);
}

std::unique_ptr<host::HostCompiler> Compiler(bool pch, host::PrecompiledHeaders* store,
                                             const std::string& directory) {
  host::HostCompilerOptions options;
  options.use_precompiled_header = pch;
  options.precompiled_headers = store;
  options.precompiled_header_directory = directory;
  absl::StatusOr<std::unique_ptr<host::HostCompiler>> compiler =
      host::HostCompiler::Create(options);
  if (!compiler.ok()) Die(std::string(compiler.status().message()));
  return *std::move(compiler);
}

void CompileOrDie(host::HostCompiler& compiler, const CompileRequest& request) {
  absl::StatusOr<CompiledKernel> compiled = compiler.Compile(request);
  if (!compiled.ok()) Die(std::string(compiled.status().message()));
}

absl::StatusOr<TempDir> CacheDir() { return TempDir::Create("host_compile_benchmark"); }

void BM_Compile(benchmark::State& state) {
  const CompileRequest request = Request(static_cast<int>(state.range(0)));
  const bool pch = state.range(1) != 0;
  host::PrecompiledHeaders store;
  std::unique_ptr<host::HostCompiler> compiler = Compiler(pch, &store, "");
  CompileOrDie(*compiler, request);  // warm-up: builds the PCH
  for (auto _ : state) CompileOrDie(*compiler, request);
  state.SetLabel(absl::StrCat(request.name, pch ? " with PCH" : " without PCH"));
  state.counters["with_pch"] = static_cast<double>(compiler->stats().with_pch);
}
BENCHMARK(BM_Compile)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(3);

void BM_FirstCompile(benchmark::State& state) {
  const CompileRequest request = Request(1);
  const int mode = static_cast<int>(state.range(0));
  absl::StatusOr<TempDir> warm = CacheDir();
  if (!warm.ok()) Die(std::string(warm.status().message()));
  if (mode == 2) {
    host::PrecompiledHeaders previous_process;
    CompileOrDie(*Compiler(true, &previous_process, warm->path()), request);
  }
  for (auto _ : state) {
    state.PauseTiming();
    absl::StatusOr<TempDir> empty = CacheDir();
    if (!empty.ok()) Die(std::string(empty.status().message()));
    host::PrecompiledHeaders store;
    state.ResumeTiming();
    CompileOrDie(*Compiler(mode != 0, &store, mode == 1 ? empty->path() : warm->path()),
                 request);
  }
  state.SetLabel(mode == 0 ? "without PCH" : mode == 1 ? "building the PCH" : "PCH from disk");
}
BENCHMARK(BM_FirstCompile)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3);

}  // namespace
}  // namespace warptrace

BENCHMARK_MAIN();
