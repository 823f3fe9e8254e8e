// bazel run //examples:tma_wgmma_ring -- [--m=128 --n=128 --k=256 --bn=64] [common flags]
//
// The smallest Hopper pipeline written with the builder's own constructs, nothing from
// jit/kernels/: C = A x B^T (bf16 in, f32 out), one 64 x BN tile per block, two
// warpgroups in roles. The producer's first thread loads each K-block's A and B tiles with
// TMA (AsyncCopy with a tensor map, 128B swizzle) into a 2-stage ring guarded by mbarriers
// (PhaseBarriers full[2] / empty[2]: WaitPhase, Arrive); the consumer waits for a stage,
// runs one wgmma group on it (MmaGroup: four m64nBNk16 wgmma from shared-memory
// descriptors, then WaitMmaGroups) and hands the stage back. The ring sits in dynamic shared
// memory declared 1024-byte aligned (DynamicShared(..., 1024)), as 128B-swizzled boxes and
// their descriptors need, profiled or not: no rounding by hand. Checks C against a CPU
// reference; `--cost` prints what the kernel costs (registers, spills, HGMMA, UTMALDG, ...)
// unprofiled and profiled, without a GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/substitute.h"
#include "examples/bf16_gemm_problem.h"
#include "examples/example_main.h"
#include "jit/builder/kernel_builder.h"

ABSL_FLAG(uint32_t, m, 128, "rows of A and C (a multiple of 64)");
ABSL_FLAG(uint32_t, n, 128, "rows of B, columns of C (a multiple of --bn)");
ABSL_FLAG(uint32_t, k, 256, "columns of A and B (a multiple of 64)");
ABSL_FLAG(uint32_t, bn, 64, "tile columns = the wgmma N: 64, 128 or 256");

namespace warptrace::examples {
namespace {

constexpr char kUsage[] =
    "runs, profiles and checks a builder-level Hopper pipeline (TMA ring + wgmma, one "
    "producer and one consumer warpgroup) on a GPU or the host backend.\n"
    "  bazel run //examples:tma_wgmma_ring -- [--m=128 --n=128 --k=256 --bn=64] [--cost]\n"
    "  [--device=host] [--unit=warp|warpgroup|block] [--placement=global|shared|auto] "
    "[--profile=false]";

constexpr uint32_t kBm = 64;      // tile rows: one consumer warpgroup's wgmma M
constexpr uint32_t kBk = 64;      // K-block: 64 bf16 = one 128-byte swizzle row
constexpr uint32_t kStages = 2;

absl::StatusOr<Kernel> TmaWgmmaRing(uint32_t m, uint32_t n, uint32_t k, uint32_t bn) {
  const uint32_t kt = k / kBk;
  const uint32_t a_bytes = kBm * kBk * 2;
  const uint32_t stage_bytes = (kBm + bn) * kBk * 2;
  KernelBuilder b("tma_wgmma_ring");
  b.Param("CUtensorMap", "tmA").Param("CUtensorMap", "tmB").Param("float*", "C");
  b.Grid({(m / kBm) * (n / bn), 1, 1}).Block({256, 1, 1});
  b.DynamicShared("unsigned char", "smem", kStages * stage_bytes, /*align=*/1024);
  b.PhaseBarriers("full", kStages, /*arrivals=*/1);      // the producer's one arrival
  b.PhaseBarriers("empty", kStages, /*arrivals=*/128);   // every consumer thread's
  const std::string tile = absl::Substitute(
      "const int tile_m = static_cast<int>(blockIdx.x) / $0;\n"
      "const int tile_n = static_cast<int>(blockIdx.x) % $0;",
      n / bn);
  // Per K-block kt: its stage, the phase of that stage's barriers, the stage's A and B.
  const std::string stage = absl::Substitute(
      "const unsigned int stage = static_cast<unsigned int>(kt) % $0u;\n"
      "const unsigned int phase = static_cast<unsigned int>(kt) / $0u;\n"
      "unsigned char* const stage_a = smem + stage * $1u;\n"
      "unsigned char* const stage_b = stage_a + $2u;",
      kStages, stage_bytes, a_bytes);
  auto load = [&](const char* name, const char* map, const char* dst, std::string row,
                  uint32_t rows) {
    AsyncCopySpec spec;
    spec.name = name;
    spec.tensor_map = map;
    spec.dst = dst;
    spec.coords = {"kt * 64", std::move(row)};
    spec.box = {kBk, rows};
    spec.element_bytes = 2;
    spec.barrier = "full";
    spec.barrier_index = "stage";
    spec.barrier_phase = "phase";
    b.AsyncCopy(spec);  // adds the box's bytes to the phase's expected transactions itself
  };
  auto producer = [&] {
    b.Stmt(tile);
    b.For("kt", 0, static_cast<int64_t>(kt), TripCount::Exact(kt), [&] {
      b.Stmt(stage);
      b.WaitPhase("empty", "stage", "phase");
      b.Region("load", [&] {
        load("A tile", "tmA", "stage_a", absl::StrCat("tile_m * ", kBm), kBm);
        load("B tile", "tmB", "stage_b", absl::StrCat("tile_n * ", bn), bn);
        b.Arrive("full", "stage", "phase", ArriveBy::kOneThread);
      });
    });
  };
  auto consumer = [&] {
    b.Stmt(tile);
    // Both stages start empty: the consumer completes their phase 0 before the first lap.
    b.For("first", 0, static_cast<int64_t>(kStages), TripCount::Exact(kStages),
          [&] { b.Arrive("empty", "first", 0); });
    b.Stmt(absl::StrCat("float acc[", bn / 2, "];"));
    b.For("kt", 0, static_cast<int64_t>(kt), TripCount::Exact(kt), [&] {
      b.Stmt(stage);
      b.WaitPhase("full", "stage", "phase");
      b.Region("mma", [&] {
        b.MmaGroup("wgmma", [&] {
          b.Stmt(absl::Substitute(
              "for (int kk = 0; kk < 4; ++kk) {\n"
              "  const unsigned long long da = warptrace_wgmma_desc(stage_a + kk * 32, 16u, "
              "1024u, WARPTRACE_SWIZZLE_128B);\n"
              "  const unsigned long long db = warptrace_wgmma_desc(stage_b + kk * 32, 16u, "
              "1024u, WARPTRACE_SWIZZLE_128B);\n"
              "  warptrace_wgmma_mma_async_bf16_ss<$0>(acc, da, db, (kt > 0 || kk > 0) ? 1 : "
              "0);\n"
              "}",
              bn));
        });
        b.WaitMmaGroups(0);
      });
      b.Arrive("empty", "stage", "phase + 1");  // the stage's next use may load
    });
    // Thread T holds d_i at row 16w + g + 8((i >> 1) & 1), column 8(i >> 2) + 2t + (i & 1)
    // (w = T / 32, g = lane / 4, t = lane % 4).
    b.Region("epilogue", [&] {
      b.Stmt(absl::Substitute(
          "const int wt = static_cast<int>(threadIdx.x % 128u);\n"
          "const int w = wt / 32, g = (wt % 32) / 4, t = wt % 4;\n"
          "for (int i = 0; i < $0; i += 2) {\n"
          "  const int row = tile_m * $1 + 16 * w + g + 8 * ((i >> 1) & 1);\n"
          "  const int col = tile_n * $2 + 8 * (i >> 2) + 2 * t;\n"
          "  C[static_cast<long long>(row) * $3 + col] = acc[i];\n"
          "  C[static_cast<long long>(row) * $3 + col + 1] = acc[i + 1];\n"
          "}",
          bn / 2, kBm, bn, n));
    });
  };
  b.Roles(RoleAxis::kWarpgroup, {Role{"producer", 1, "", producer},
                                 Role{"consumer", 1, "", consumer}});
  return b.Build();
}

absl::StatusOr<ExampleProblem> MakeProblem() {
  const uint32_t m = absl::GetFlag(FLAGS_m), n = absl::GetFlag(FLAGS_n);
  const uint32_t k = absl::GetFlag(FLAGS_k), bn = absl::GetFlag(FLAGS_bn);
  if (bn != 64 && bn != 128 && bn != 256) {
    return absl::InvalidArgumentError(absl::StrCat("--bn=", bn, ": use 64, 128 or 256"));
  }
  if (m == 0 || m % kBm != 0 || n == 0 || n % bn != 0 || k == 0 || k % kBk != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--m=%u --n=%u --k=%u: M must be a multiple of 64, N of --bn (%u), K of 64", m, n, k,
        bn));
  }
  absl::StatusOr<Kernel> kernel = TmaWgmmaRing(m, n, k, bn);
  if (!kernel.ok()) return kernel.status();
  Bf16Operands operands;
  operands.tensor_maps = true;
  operands.box_a = {kBk, kBm};
  operands.box_b = {kBk, bn};
  return Bf16GemmProblem(
      *std::move(kernel), {m, n, k, /*out_f32=*/true}, operands, /*seed=*/11,
      absl::StrFormat("C = A x B^T, bf16 %u x %u x %u -> f32, tile 64 x %u x 64, 2-stage TMA "
                      "ring (128B swizzle), one wgmma group m64n%uk16 x 4 per stage",
                      m, n, k, bn, bn));
}

}  // namespace
}  // namespace warptrace::examples

int main(int argc, char** argv) {
  return warptrace::examples::RunExampleMain(argc, argv, "tma_wgmma_ring",
                                             warptrace::examples::kUsage,
                                             warptrace::examples::MakeProblem);
}
