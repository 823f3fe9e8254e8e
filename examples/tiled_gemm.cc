// bazel run //examples:tiled_gemm -- [--m=64 --n=64 --k=128 --tile=16] [common flags]
//
// A tiled single-precision GEMM (jit/kernels/tiled_gemm.h): each block computes a tile x
// tile block of C, looping over K with a "load" region (tiles of A and B into shared
// memory), a barrier, a "compute" region and a second barrier, then a "store" region. Runs
// and profiles it end to end, checks C against the CPU reference and writes the trace.
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "examples/example_main.h"
#include "examples/gemm_problem.h"
#include "jit/kernels/tiled_gemm.h"

ABSL_FLAG(uint32_t, m, 64, "rows of A and C (a multiple of --tile)");
ABSL_FLAG(uint32_t, n, 64, "columns of B and C (a multiple of --tile)");
ABSL_FLAG(uint32_t, k, 128, "columns of A, rows of B (a multiple of --tile)");
ABSL_FLAG(uint32_t, tile, 16, "tile edge: a block is tile x tile threads (16 or 32 keep whole warpgroups)");

namespace warptrace::examples {
namespace {

constexpr char kUsage[] =
    "runs, profiles and checks a tiled GEMM, C = A x B, on a GPU or the host "
    "backend.\n"
    "  bazel run //examples:tiled_gemm -- [--m=64 --n=64 --k=128 --tile=16] [--device=host]\n"
    "  [--unit=warp|warpgroup|block] [--placement=global|shared|auto] [--profile=false]";

absl::StatusOr<ExampleProblem> MakeProblem() {
  const TiledGemmShape shape{.m = absl::GetFlag(FLAGS_m),
                             .n = absl::GetFlag(FLAGS_n),
                             .k = absl::GetFlag(FLAGS_k),
                             .tile = absl::GetFlag(FLAGS_tile)};
  absl::StatusOr<Kernel> kernel = TiledGemm(shape);
  if (!kernel.ok()) return kernel.status();
  return GemmProblem(*std::move(kernel), shape.m, shape.n, shape.k, /*seed=*/1,
                     absl::StrFormat("C = A x B, %u x %u x %u (M x N x K), tile %u", shape.m,
                                     shape.n, shape.k, shape.tile));
}

}  // namespace
}  // namespace warptrace::examples

int main(int argc, char** argv) {
  return warptrace::examples::RunExampleMain(argc, argv, "tiled_gemm",
                                             warptrace::examples::kUsage,
                                             warptrace::examples::MakeProblem);
}
