// bazel run //examples:warp_specialized_pipeline -- [--m=32 --n=64 --k=256 --stages=3
//     --consumers=2] [common flags]
//
// A warp-specialized GEMM pipeline (jit/kernels/warp_specialized_pipeline.h): warpgroup 0
// produces K-tiles of A and B into a multi-stage shared-memory ring ("load"), warpgroups
// 1..consumers consume them ("mma") and write C ("store"); the hand-off is by barriers. The
// timeline shows the producer's loads running one stage ahead of the consumers' mmas.
// Checks C against the CPU reference.
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "examples/example_main.h"
#include "examples/gemm_problem.h"
#include "jit/kernels/warp_specialized_pipeline.h"

ABSL_FLAG(uint32_t, m, 32, "rows of A and C (a multiple of 4 x --consumers)");
ABSL_FLAG(uint32_t, n, 64, "columns of B and C (a multiple of 32)");
ABSL_FLAG(uint32_t, k, 256, "columns of A, rows of B (a multiple of 32, at least 32 x (stages - 1))");
ABSL_FLAG(uint32_t, stages, 3, "shared-memory stages in the producer/consumer ring (>= 2)");
ABSL_FLAG(uint32_t, consumers, 2, "consumer warpgroups, 1..7 (the block has 1 + consumers warpgroups)");

namespace warptrace::examples {
namespace {

constexpr char kUsage[] =
    "runs, profiles and checks a producer/consumer GEMM pipeline "
    "on a GPU or the host backend.\n"
    "  bazel run //examples:warp_specialized_pipeline -- [--m=32 --n=64 --k=256 --stages=3 "
    "--consumers=2]\n"
    "  [--device=host] [--unit=warp|warpgroup|block] [--placement=global|shared|auto] "
    "[--profile=false]";

absl::StatusOr<ExampleProblem> MakeProblem() {
  const PipelineShape shape{.m = absl::GetFlag(FLAGS_m),
                            .n = absl::GetFlag(FLAGS_n),
                            .k = absl::GetFlag(FLAGS_k),
                            .stages = absl::GetFlag(FLAGS_stages),
                            .consumers = absl::GetFlag(FLAGS_consumers)};
  absl::StatusOr<Kernel> kernel = WarpSpecializedPipeline(shape);
  if (!kernel.ok()) return kernel.status();
  return GemmProblem(
      *std::move(kernel), shape.m, shape.n, shape.k, /*seed=*/3,
      absl::StrFormat(
          "C = A x B, %u x %u x %u (M x N x K), 1 producer + %u consumer warpgroups, %u stages",
          shape.m, shape.n, shape.k, shape.consumers, shape.stages));
}

}  // namespace
}  // namespace warptrace::examples

int main(int argc, char** argv) {
  return warptrace::examples::RunExampleMain(argc, argv, "warp_specialized_pipeline",
                                             warptrace::examples::kUsage,
                                             warptrace::examples::MakeProblem);
}
