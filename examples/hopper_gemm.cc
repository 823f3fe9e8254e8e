// bazel run //examples:hopper_gemm -- [--m=256 --n=256 --k=256 --bn=128 --stages=4]
//     [--pingpong] [--persistent [--blocks=N]] [--out_type=bf16|f32]
//     [--producer_delay=CYCLES] [--consumer_delay=CYCLES] [--cluster=2x1|1x2
//     [--consumer_delay_rank=R]] [common flags]
//
// A Hopper warp-specialized bf16 GEMM (jit/kernels/hopper_gemm.h), C = A x B^T: one
// producer warpgroup whose first thread issues TMA loads (128B swizzle) into an S-stage
// ring guarded by full[s] / empty[s] mbarriers, two consumer warpgroups running wgmma
// m64nBNk16 groups, setmaxnreg 40 / 232; cooperative (both consumers on one 128-row tile)
// or --pingpong (each consumer its own 64-row tiles, their mainloops taking turns through
// two named barriers). The timeline shows the TMA copies running ahead of the consumers by
// up to S stages, each consumer's wgmma groups as async spans, the waits on full[s] /
// empty[s] with arrows from the arrivals that released them, and, with --pingpong, the two
// consumers' mainloops alternating. With --cluster=2x1 (1x2), 2-CTA clusters share the B (A)
// tile: each CTA's producer multicasts its half of it to both CTAs, and each consumer
// releases a stage in both CTAs (remote mbarrier arrivals), CUTLASS's sm90 shape; the
// timeline draws the arrows across the CTAs. Checks C against a CPU reference.
#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "examples/bf16_gemm_problem.h"
#include "examples/example_main.h"
#include "jit/kernels/hopper_gemm.h"

ABSL_FLAG(uint32_t, m, 256, "rows of A and C (a multiple of 128, or 64 with --pingpong)");
ABSL_FLAG(uint32_t, n, 256, "rows of B, columns of C (a multiple of --bn)");
ABSL_FLAG(uint32_t, k, 256, "columns of A and B (a multiple of 64)");
ABSL_FLAG(uint32_t, bn, 128, "tile columns = the wgmma N: 64, 128 or 256");
ABSL_FLAG(uint32_t, stages, 4, "shared-memory stages in the TMA ring (>= 2)");
ABSL_FLAG(bool, pingpong, false,
          "each consumer warpgroup its own 64-row tiles, mainloops taking turns");
ABSL_FLAG(bool, persistent, false,
          "persistent kernel: a grid of --blocks blocks, each looping over its tiles");
ABSL_FLAG(uint32_t, blocks, 0,
          "with --persistent: the grid size, 1..tiles (0: half the tiles, rounded up; on a "
          "GPU pass its SM count)");
ABSL_FLAG(std::string, out_type, "bf16", "C's element type: bf16 or f32");
ABSL_FLAG(uint32_t, producer_delay, 0, "cycles of busy work the producer adds to every load");
ABSL_FLAG(uint32_t, consumer_delay, 0, "cycles of busy work each consumer adds to every mma");
ABSL_FLAG(std::string, cluster, "1x1",
          "CUTLASS's cluster shape over the tiles: 1x1, 2x1 (2-CTA clusters sharing B, "
          "multicast) or 1x2 (sharing A)");
ABSL_FLAG(int32_t, consumer_delay_rank, -1,
          "with --cluster: --consumer_delay only in the CTA of this rank (0 or 1)");

namespace warptrace::examples {
namespace {

constexpr char kUsage[] =
    "runs, profiles and checks a Hopper warp-specialized bf16 GEMM (TMA + wgmma) on a GPU "
    "or the host backend.\n"
    "  bazel run //examples:hopper_gemm -- [--m=256 --n=256 --k=256 --bn=128 --stages=4] "
    "[--pingpong] [--persistent [--blocks=N]] [--out_type=bf16|f32] "
    "[--producer_delay=CYCLES] [--consumer_delay=CYCLES] [--cluster=2x1|1x2 "
    "[--consumer_delay_rank=R]]\n"
    "  [--device=host] [--unit=warp|warpgroup|block] [--placement=global|shared|auto] "
    "[--profile=false]";

absl::StatusOr<ExampleProblem> MakeProblem() {
  HopperGemmShape shape;
  shape.m = absl::GetFlag(FLAGS_m);
  shape.n = absl::GetFlag(FLAGS_n);
  shape.k = absl::GetFlag(FLAGS_k);
  shape.bn = absl::GetFlag(FLAGS_bn);
  shape.stages = absl::GetFlag(FLAGS_stages);
  shape.pingpong = absl::GetFlag(FLAGS_pingpong);
  shape.producer_delay = absl::GetFlag(FLAGS_producer_delay);
  shape.consumer_delay = absl::GetFlag(FLAGS_consumer_delay);
  const std::string cluster = absl::GetFlag(FLAGS_cluster);
  if (cluster == "2x1") {
    shape.cluster_m = 2;
  } else if (cluster == "1x2") {
    shape.cluster_n = 2;
  } else if (cluster != "1x1") {
    return absl::InvalidArgumentError(
        absl::StrCat("--cluster=", cluster, ": use 1x1, 2x1 or 1x2"));
  }
  shape.consumer_delay_rank = absl::GetFlag(FLAGS_consumer_delay_rank);
  const std::string out_type = absl::GetFlag(FLAGS_out_type);
  if (out_type != "bf16" && out_type != "f32") {
    return absl::InvalidArgumentError(absl::StrCat("--out_type=", out_type, ": use bf16 or f32"));
  }
  shape.out_f32 = out_type == "f32";
  if (absl::GetFlag(FLAGS_persistent)) {
    const uint32_t blocks = absl::GetFlag(FLAGS_blocks);
    shape.persistent_blocks =
        blocks > 0 ? blocks : std::max(1u, (HopperGemmTiles(shape) + 1) / 2);
  } else if (absl::GetFlag(FLAGS_blocks) != 0) {
    return absl::InvalidArgumentError("--blocks needs --persistent");
  }
  absl::StatusOr<Kernel> kernel = HopperGemm(shape);
  if (!kernel.ok()) return kernel.status();
  std::string description = absl::StrFormat(
      "C = A x B^T, bf16 %u x %u x %u (M x N x K) -> %s, tile %u x %u x 64, %u stages, %s, "
      "TMA 128B swizzle + wgmma m64n%uk16",
      shape.m, shape.n, shape.k, out_type, HopperGemmTileRows(shape), shape.bn, shape.stages,
      shape.pingpong ? "ping-pong" : "cooperative", shape.bn);
  if (shape.persistent_blocks > 0) {
    absl::StrAppendFormat(&description, ", persistent: %u blocks for %u tiles",
                          shape.persistent_blocks, HopperGemmTiles(shape));
  }
  if (HopperGemmClustered(shape)) {
    absl::StrAppendFormat(&description, ", cluster %ux%u (%s multicast, halves per CTA)",
                          shape.cluster_m, shape.cluster_n, shape.cluster_m == 2 ? "B" : "A");
  }
  if (shape.producer_delay > 0 || shape.consumer_delay > 0) {
    absl::StrAppendFormat(&description, ", delays: producer %u, consumer %u cycles",
                          shape.producer_delay, shape.consumer_delay);
  }
  Bf16Operands operands;
  operands.tensor_maps = true;
  operands.box_a = {kHopperGemmBk, HopperGemmBoxRowsA(shape)};
  operands.box_b = {kHopperGemmBk, HopperGemmBoxRowsB(shape)};
  return Bf16GemmProblem(*std::move(kernel), {shape.m, shape.n, shape.k, shape.out_f32},
                         operands, /*seed=*/7, std::move(description));
}

}  // namespace
}  // namespace warptrace::examples

int main(int argc, char** argv) {
  return warptrace::examples::RunExampleMain(argc, argv, "hopper_gemm",
                                             warptrace::examples::kUsage,
                                             warptrace::examples::MakeProblem);
}
