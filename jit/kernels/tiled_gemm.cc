#include "jit/kernels/tiled_gemm.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/substitute.h"

namespace warptrace {

absl::StatusOr<KernelBuilder> TiledGemmBuilder(const TiledGemmShape& shape) {
  const uint32_t t = shape.tile;
  if (t == 0 || t > 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("tiled_gemm: tile ", t, " must be 1..32 (tile x tile threads per block)"));
  }
  if (shape.m == 0 || shape.n == 0 || shape.k == 0 || shape.m % t != 0 || shape.n % t != 0 ||
      shape.k % t != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tiled_gemm: M=%d, N=%d, K=%d must be positive multiples of the tile %d", shape.m,
        shape.n, shape.k, t));
  }
  KernelBuilder b("tiled_gemm");
  b.Param("const float*", "A").Param("const float*", "B").Param("float*", "C");
  b.Grid({shape.n / t, shape.m / t, 1}).Block({t, t, 1});
  b.SharedArray("float", "As", uint64_t{t} * t).SharedArray("float", "Bs", uint64_t{t} * t);
  b.Stmt(absl::Substitute(
      "const int tx = threadIdx.x;\n"
      "const int ty = threadIdx.y;\n"
      "const int row = blockIdx.y * $0 + ty;\n"
      "const int col = blockIdx.x * $0 + tx;\n"
      "float acc = 0.0f;",
      t));
  b.For("kt", 0, static_cast<int64_t>(shape.k / t), TripCount::Exact(shape.k / t), [&] {
    b.Region("load", [&] {
      b.Stmt(absl::Substitute("As[ty * $0 + tx] = A[row * $1 + kt * $0 + tx];\n"
                              "Bs[ty * $0 + tx] = B[(kt * $0 + ty) * $2 + col];",
                              t, shape.k, shape.n));
    });
    b.Barrier("tile loaded");
    b.Region("compute", [&] {
      b.Stmt(absl::Substitute("for (int kk = 0; kk < $0; ++kk) {\n"
                              "  acc = fmaf(As[ty * $0 + kk], Bs[kk * $0 + tx], acc);\n"
                              "}",
                              t));
    });
    b.Barrier("tile consumed");
  });
  b.Region("store", [&] { b.Stmt(absl::Substitute("C[row * $0 + col] = acc;", shape.n)); });
  return b;
}

absl::StatusOr<Kernel> TiledGemm(const TiledGemmShape& shape) {
  absl::StatusOr<KernelBuilder> b = TiledGemmBuilder(shape);
  if (!b.ok()) return b.status();
  return b->Build();
}

std::vector<float> ReferenceGemm(const std::vector<float>& a, const std::vector<float>& b,
                                 const TiledGemmShape& shape) {
  std::vector<float> c(size_t{shape.m} * shape.n, 0.0f);
  for (uint32_t i = 0; i < shape.m; ++i) {
    for (uint32_t j = 0; j < shape.n; ++j) {
      float acc = 0.0f;
      for (uint32_t k = 0; k < shape.k; ++k) {
        acc = std::fma(a[size_t{i} * shape.k + k], b[size_t{k} * shape.n + j], acc);
      }
      c[size_t{i} * shape.n + j] = acc;
    }
  }
  return c;
}

}  // namespace warptrace
