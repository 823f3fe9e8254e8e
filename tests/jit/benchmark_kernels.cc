#include "tests/jit/benchmark_kernels.h"

#include <cstdio>
#include <cstdlib>

#include "absl/status/statusor.h"
#include "jit/kernels/reduction.h"
#include "jit/kernels/tiled_gemm.h"
#include "jit/kernels/warp_specialized_pipeline.h"

namespace warptrace::testing {

Kernel BenchmarkKernel(int index) {
  absl::StatusOr<Kernel> kernel;
  switch (index) {
    case 0: kernel = TiledGemm({256, 256, 256, 16}); break;
    case 1: kernel = WarpSpecializedPipeline({64, 128, 512, 3, 2}); break;
    default: kernel = Reduction({1 << 20, 64, 256}); break;
  }
  if (!kernel.ok()) BenchmarkDie("BenchmarkKernel", std::string(kernel.status().message()));
  return *std::move(kernel);
}

void BenchmarkDie(const char* benchmark, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", benchmark, what.c_str());
  std::abort();
}

}  // namespace warptrace::testing
