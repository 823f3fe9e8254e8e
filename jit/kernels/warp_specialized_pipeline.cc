#include "jit/kernels/warp_specialized_pipeline.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/substitute.h"

namespace warptrace {
namespace {

constexpr uint32_t kBn = 32;
constexpr uint32_t kBk = 32;
constexpr uint32_t kRowsPerConsumer = 4;

}  // namespace

absl::StatusOr<KernelBuilder> WarpSpecializedPipelineBuilder(const PipelineShape& shape) {
  const uint32_t bm = kRowsPerConsumer * shape.consumers;
  if (shape.stages < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("pipeline: ", shape.stages, " stages; a pipeline needs at least 2"));
  }
  if (shape.consumers < 1 || shape.consumers > 7) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pipeline: ", shape.consumers, " consumer warpgroups; use 1..7 (1024 threads a block)"));
  }
  if (shape.m == 0 || shape.m % bm != 0 || shape.n == 0 || shape.n % kBn != 0 ||
      shape.k == 0 || shape.k % kBk != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pipeline: M=%d must be a positive multiple of %d (4 rows x %d consumers), N=%d and "
        "K=%d of 32",
        shape.m, bm, shape.consumers, shape.n, shape.k));
  }
  const uint32_t kt = shape.k / kBk;
  if (kt < shape.stages - 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pipeline: K=%d gives %d K-tiles, fewer than the %d the %d-stage fill loads; use "
        "fewer stages or a larger K",
        shape.k, kt, shape.stages - 1, shape.stages));
  }
  const uint32_t stage_floats = (bm + kBn) * kBk;
  const uint32_t s = shape.stages;

  KernelBuilder b("warp_specialized_pipeline");
  b.Param("const float*", "A").Param("const float*", "B").Param("float*", "C");
  b.Grid({shape.n / kBn, shape.m / bm, 1}).Block({128 * (1 + shape.consumers), 1, 1});
  b.DynamicShared("float", "stages", s * stage_floats * 4);
  b.Stmt(absl::Substitute("const int block_row = blockIdx.y * $0;\n"
                          "const int block_col = blockIdx.x * $1;\n"
                          "float acc = 0.0f;",
                          bm, kBn));
  // The producer copies K-tile `tile` into stage `stage` (expressions of the loop var).
  auto load = [&](const std::string& tile, const std::string& stage) {
    b.Region("load", [&] {
      b.Stmt(absl::Substitute(
          "float* sa = stages + ($0) * $1;\n"
          "float* sb = sa + $2;\n"
          "for (int i = threadIdx.x; i < $2; i += 128) {\n"
          "  sa[i] = A[(block_row + i / $3) * $4 + ($5) * $3 + i % $3];\n"
          "}\n"
          "for (int i = threadIdx.x; i < $6; i += 128) {\n"
          "  sb[i] = B[(($5) * $3 + i / $7) * $8 + block_col + i % $7];\n"
          "}",
          stage, stage_floats, bm * kBk, kBk, shape.k, tile, kBk * kBn, kBn, shape.n));
    });
  };
  auto mma = [&](const std::string& stage) {
    b.Region("mma", [&] {
      b.Stmt(absl::Substitute(
          "const float* sa = stages + ($0) * $1;\n"
          "const float* sb = sa + $2;\n"
          "const int r = cwg * $3 + (threadIdx.x % 128) / 32;\n"
          "const int c = threadIdx.x % 32;\n"
          "for (int kk = 0; kk < $4; ++kk) {\n"
          "  acc = fmaf(sa[r * $4 + kk], sb[kk * $5 + c], acc);\n"
          "}",
          stage, stage_floats, bm * kBk, kRowsPerConsumer, kBk, kBn));
    });
  };
  const auto producer_fill = [&] {
    b.For("p", 0, static_cast<int64_t>(s - 1), TripCount::Exact(s - 1), [&] { load("p", "p"); });
  };
  b.Roles(RoleAxis::kWarpgroup, {{"producer", 1, "", producer_fill},
                                 {"consumer", shape.consumers, "", [] {}}});
  b.Barrier("stage handoff");
  const std::string ahead = absl::StrCat("kt + ", s - 1);
  b.For("kt", 0, static_cast<int64_t>(kt - (s - 1)), TripCount::Exact(kt - (s - 1)), [&] {
    b.Roles(RoleAxis::kWarpgroup,
            {{"producer", 1, "", [&] { load(ahead, absl::StrCat("(", ahead, ") % ", s)); }},
             {"consumer", shape.consumers, "cwg", [&] { mma(absl::StrCat("kt % ", s)); }}});
    b.Barrier("stage handoff");
  });
  b.For("kt", static_cast<int64_t>(kt - (s - 1)), static_cast<int64_t>(kt),
        TripCount::Exact(s - 1), [&] {
          b.Roles(RoleAxis::kWarpgroup,
                  {{"producer", 1, "", [] {}},
                   {"consumer", shape.consumers, "cwg", [&] { mma(absl::StrCat("kt % ", s)); }}});
          b.Barrier("stage handoff");
        });
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [] {}},
           {"consumer", shape.consumers, "cwg", [&] {
              b.Region("store", [&] {
                b.Stmt(absl::Substitute(
                    "C[(block_row + cwg * $0 + (threadIdx.x % 128) / 32) * $1 + block_col + "
                    "threadIdx.x % 32] = acc;",
                    kRowsPerConsumer, shape.n));
              });
            }}});
  return b;
}

absl::StatusOr<Kernel> WarpSpecializedPipeline(const PipelineShape& shape) {
  absl::StatusOr<KernelBuilder> b = WarpSpecializedPipelineBuilder(shape);
  if (!b.ok()) return b.status();
  return b->Build();
}

}  // namespace warptrace
