// bazel run //examples:warp_specialized_pipeline -- [--m=32 --n=64 --k=256 --stages=3
//     --consumers=2] [--copy=auto|cp_async|bulk] [--persistent [--blocks=N]]
//     [--producer_delay=CYCLES] [--consumer_delay=CYCLES] [common flags]
//
// A warp-specialized GEMM pipeline (jit/kernels/warp_specialized_pipeline.h): warpgroup 0
// produces K-tiles of A and B into an S-stage shared-memory ring ("load": cp.async or sm_90
// bulk copies), warpgroups 1..consumers consume them ("mma") and write C ("store"); the
// hand-off is by full[s] / empty[s] phase barriers, with no block-wide barrier, so the
// producer runs up to S stages ahead. The timeline shows the consumers waiting on full[s],
// the producer on empty[s] when the consumers are slow, and an arrow for every hand-off.
// --producer_delay / --consumer_delay add busy cycles to every load / mma to make either
// side the bottleneck. --persistent runs a grid of --blocks blocks (default a third of the
// tiles) that loop over the tiles. Checks C against the CPU reference.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "jit/target/cuda_target.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "examples/example_main.h"
#include "examples/gemm_problem.h"
#include "jit/kernels/warp_specialized_pipeline.h"

ABSL_FLAG(uint32_t, m, 32, "rows of A and C (a multiple of 4 x --consumers)");
ABSL_FLAG(uint32_t, n, 64, "columns of B and C (a multiple of 32)");
ABSL_FLAG(uint32_t, k, 256, "columns of A, rows of B (a multiple of 32, at least 32 x (stages - 1))");
ABSL_FLAG(uint32_t, stages, 3, "shared-memory stages in the producer/consumer ring (>= 2)");
ABSL_FLAG(uint32_t, consumers, 2, "consumer warpgroups, 1..7 (the block has 1 + consumers warpgroups)");
ABSL_FLAG(std::string, copy, "auto",
          "how the producer copies: cp_async (sm_80+), bulk (sm_90+), or auto (bulk when "
          "--arch is sm_90 or later, else cp_async)");
ABSL_FLAG(bool, persistent, false,
          "persistent kernel: a grid of --blocks blocks, each looping over its tiles");
ABSL_FLAG(uint32_t, blocks, 0,
          "with --persistent: the grid size, 1..tiles (0: a third of the tiles, rounded up)");
ABSL_FLAG(uint32_t, producer_delay, 0, "cycles of busy work the producer adds to every load");
ABSL_FLAG(uint32_t, consumer_delay, 0, "cycles of busy work each consumer adds to every mma");

namespace warptrace::examples {
namespace {

constexpr char kUsage[] =
    "runs, profiles and checks a producer/consumer GEMM pipeline "
    "on a GPU or the host backend.\n"
    "  bazel run //examples:warp_specialized_pipeline -- [--m=32 --n=64 --k=256 --stages=3 "
    "--consumers=2] [--copy=auto|cp_async|bulk] [--persistent [--blocks=N]] "
    "[--producer_delay=CYCLES] [--consumer_delay=CYCLES]\n"
    "  [--device=host] [--unit=warp|warpgroup|block] [--placement=global|shared|auto] "
    "[--profile=false]";

// The copy kind --copy asks for (auto: from --arch).
absl::StatusOr<CopyKind> CopyFromFlags() {
  const std::string copy = absl::GetFlag(FLAGS_copy);
  if (copy == "cp_async") return CopyKind::kCpAsync;
  if (copy == "bulk") return CopyKind::kBulk;
  if (copy != "auto") {
    return absl::InvalidArgumentError(
        absl::StrCat("--copy=", copy, ": use auto, cp_async or bulk"));
  }
  // Bulk copies where the target has them (sm_90 and later); a bad --arch is reported by
  // the example's flag checks.
  absl::StatusOr<CudaTarget> target = CudaTarget::Parse(absl::GetFlag(FLAGS_arch));
  if (target.ok() && target->Has(TargetFeature::kBulkCopy)) return CopyKind::kBulk;
  return CopyKind::kCpAsync;
}

absl::StatusOr<ExampleProblem> MakeProblem() {
  PipelineShape shape{.m = absl::GetFlag(FLAGS_m),
                      .n = absl::GetFlag(FLAGS_n),
                      .k = absl::GetFlag(FLAGS_k),
                      .stages = absl::GetFlag(FLAGS_stages),
                      .consumers = absl::GetFlag(FLAGS_consumers),
                      .producer_delay = absl::GetFlag(FLAGS_producer_delay),
                      .consumer_delay = absl::GetFlag(FLAGS_consumer_delay)};
  absl::StatusOr<CopyKind> copy = CopyFromFlags();
  if (!copy.ok()) return copy.status();
  shape.copy = *copy;
  if (absl::GetFlag(FLAGS_persistent)) {
    const uint32_t blocks = absl::GetFlag(FLAGS_blocks);
    shape.persistent_blocks = blocks > 0 ? blocks : std::max(1u, (PipelineTiles(shape) + 2) / 3);
  } else if (absl::GetFlag(FLAGS_blocks) != 0) {
    return absl::InvalidArgumentError("--blocks needs --persistent");
  }
  absl::StatusOr<Kernel> kernel = WarpSpecializedPipeline(shape);
  if (!kernel.ok()) return kernel.status();
  std::string description = absl::StrFormat(
      "C = A x B, %u x %u x %u (M x N x K), 1 producer + %u consumer warpgroups, %u stages, "
      "%s copies",
      shape.m, shape.n, shape.k, shape.consumers, shape.stages,
      shape.copy == CopyKind::kBulk ? "bulk" : "cp.async");
  if (shape.persistent_blocks > 0) {
    absl::StrAppendFormat(&description, ", persistent: %u blocks for %u tiles",
                          shape.persistent_blocks, PipelineTiles(shape));
  }
  if (shape.producer_delay > 0 || shape.consumer_delay > 0) {
    absl::StrAppendFormat(&description, ", delays: producer %u, consumer %u cycles",
                          shape.producer_delay, shape.consumer_delay);
  }
  return GemmProblem(*std::move(kernel), shape.m, shape.n, shape.k, /*seed=*/3,
                     std::move(description));
}

}  // namespace
}  // namespace warptrace::examples

int main(int argc, char** argv) {
  return warptrace::examples::RunExampleMain(argc, argv, "warp_specialized_pipeline",
                                             warptrace::examples::kUsage,
                                             warptrace::examples::MakeProblem);
}
