#include "jit/kernels/ampere_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/substitute.h"
#include "jit/kernels/busy_work.h"

namespace warptrace {
namespace {


constexpr uint32_t kBm = 128, kBn = 128, kBk = 32;
constexpr uint32_t kStageElements = kBm * kBk + kBk * kBn;  // bf16 elements per stage

// The copies of K-tile `tile` (an expression) into its stage: A's 128 rows x 64 bytes, B's 32
// rows x 256 bytes, each a cp.async group.
void CopyKTile(KernelBuilder& b, const AmpereGemmShape& shape, const std::string& tile) {
  const std::string stage = absl::Substitute("stages + (($0) % $1) * $2", tile, shape.stages,
                                             kStageElements);
  AsyncCopySpec a;
  a.name = "A tile";
  a.dst = stage;
  a.src = absl::Substitute("A + block_row * $0 + ($1) * $2", shape.k, tile, kBk);
  a.rows = kBm;
  a.row_bytes = kBk * 2;
  a.src_row_stride_bytes = absl::StrCat(shape.k * 2);
  b.AsyncCopy(a);
  AsyncCopySpec bt;
  bt.name = "B tile";
  bt.dst = absl::StrCat(stage, " + ", kBm * kBk);
  bt.src = absl::Substitute("B + ($0) * $1 + block_col", tile, kBk * shape.n);
  bt.rows = kBk;
  bt.row_bytes = kBn * 2;
  bt.src_row_stride_bytes = absl::StrCat(shape.n * 2);
  b.AsyncCopy(bt);
}

}  // namespace

absl::StatusOr<KernelBuilder> AmpereGemmBuilder(const AmpereGemmShape& shape) {
  if (shape.m == 0 || shape.n == 0 || shape.k == 0 || shape.m % kBm != 0 ||
      shape.n % kBn != 0 || shape.k % kBk != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ampere_gemm: M=%d and N=%d must be positive multiples of 128, K=%d of 32", shape.m,
        shape.n, shape.k));
  }
  if (shape.warps != 4 && shape.warps != 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("ampere_gemm: warps ", shape.warps, " must be 4 or 8"));
  }
  if (shape.stages < 2 || shape.stages > 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("ampere_gemm: stages ", shape.stages, " must be 2..4"));
  }
  const uint32_t kt = shape.k / kBk;
  const uint32_t s = shape.stages;
  const uint32_t warps_n = shape.warps / 2;
  const uint32_t wn = kBn / warps_n;  // columns per warp: 64 or 32
  const uint32_t mi = 64 / 16, ni = wn / 8;

  KernelBuilder b("ampere_gemm");
  b.Param("const unsigned short*", "A").Param("const unsigned short*", "B").Param("float*", "C");
  b.Grid({shape.n / kBn, shape.m / kBm, 1}).Block({32 * shape.warps, 1, 1});
  b.MinBlocksPerSm(shape.min_blocks_per_sm);
  b.DynamicShared("unsigned short", "stages", s * kStageElements * 2);
  b.Stmt(absl::Substitute(
      "const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;\n"
      "const int wm = warp / $0, wn = warp % $0;\n"
      "const int block_row = blockIdx.y * $1, block_col = blockIdx.x * $2;\n"
      "float acc[$3][$4][4] = {};",
      warps_n, kBm, kBn, mi, ni));
  // The first stages - 1 K-tiles (fewer when K has fewer).
  const uint32_t prologue = std::min(s - 1, kt);
  b.For("pre", 0, static_cast<int64_t>(prologue), TripCount::Exact(prologue), [&] {
    b.Region("prologue", [&] { CopyKTile(b, shape, "pre"); });
  });
  b.For("kt", 0, static_cast<int64_t>(kt), TripCount::Exact(kt), [&] {
    b.Region("load", [&] {
      if (shape.producer_delay > 0) b.Stmt(BusyWork(shape.producer_delay));
      b.If(
          absl::Substitute("kt + $0 < $1", s - 1, kt),
          [&] {
            CopyKTile(b, shape, absl::StrCat("kt + ", s - 1));
            // K-tiles kt + 1 .. kt + stages - 1 (two groups each) may stay in flight.
            b.WaitAsyncCopies(2 * (s - 1));
          },
          [&] { b.WaitAsyncCopies(0); }, Uniform::kBlock);
    });
    b.Barrier("tile ready");
    b.Region("mma", [&] {
      if (shape.consumer_delay > 0) b.Stmt(BusyWork(shape.consumer_delay));
      b.Stmt(absl::Substitute(
          "const unsigned short* sa = stages + (kt % $0) * $1;\n"
          "const unsigned short* sb = sa + $2;\n"
          "for (int kk = 0; kk < $3; kk += 16) {\n"
          "  unsigned int a[$4][4];\n"
          "  for (int i = 0; i < $4; ++i) {\n"
          "    warptrace_ldmatrix_x4(a[i][0], a[i][1], a[i][2], a[i][3],\n"
          "                          &sa[(wm * 64 + i * 16 + lane % 16) * $3 + kk + (lane / 16) * 8]);\n"
          "  }\n"
          "  unsigned int bf[$5][2];\n"
          "  for (int j = 0; j < $5; j += 2) {\n"
          "    warptrace_ldmatrix_x4_trans(bf[j][0], bf[j][1], bf[j + 1][0], bf[j + 1][1],\n"
          "        &sb[(kk + lane % 8 + ((lane / 8) % 2) * 8) * $6 + wn * $7 + j * 8 + (lane / 16) * 8]);\n"
          "  }\n"
          "  for (int i = 0; i < $4; ++i) {\n"
          "    for (int j = 0; j < $5; ++j) warptrace_mma_m16n8k16_f32_bf16(acc[i][j], a[i], bf[j], acc[i][j]);\n"
          "  }\n"
          "}",
          s, kStageElements, kBm * kBk, kBk, mi, ni, kBn, wn));
    });
    b.Barrier("tile consumed");
  });
  b.Region("store", [&] {
    b.Stmt(absl::Substitute(
        "for (int i = 0; i < $0; ++i) {\n"
        "  for (int j = 0; j < $1; ++j) {\n"
        "    for (int e = 0; e < 4; ++e) {\n"
        "      const int row = block_row + wm * 64 + i * 16 + lane / 4 + 8 * (e / 2);\n"
        "      const int col = block_col + wn * $2 + j * 8 + 2 * (lane % 4) + e % 2;\n"
        "      C[row * $3 + col] = acc[i][j][e];\n"
        "    }\n"
        "  }\n"
        "}",
        mi, ni, wn, shape.n));
  });
  return b;
}

absl::StatusOr<Kernel> AmpereGemm(const AmpereGemmShape& shape) {
  absl::StatusOr<KernelBuilder> b = AmpereGemmBuilder(shape);
  if (!b.ok()) return b.status();
  return b->Build();
}

uint16_t FloatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float Bf16ToFloat(uint16_t bits) {
  const uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

AmpereGemmReference ReferenceBf16Gemm(const std::vector<uint16_t>& a,
                                      const std::vector<uint16_t>& b,
                                      const AmpereGemmShape& shape) {
  AmpereGemmReference r;
  r.c.assign(size_t{shape.m} * shape.n, 0.0);
  r.magnitude.assign(size_t{shape.m} * shape.n, 0.0);
  std::vector<double> bd(b.size());
  for (size_t i = 0; i < b.size(); ++i) bd[i] = Bf16ToFloat(b[i]);
  for (uint32_t i = 0; i < shape.m; ++i) {
    for (uint32_t k = 0; k < shape.k; ++k) {
      const double x = Bf16ToFloat(a[size_t{i} * shape.k + k]);
      const double* row = &bd[size_t{k} * shape.n];
      double* c = &r.c[size_t{i} * shape.n];
      double* mag = &r.magnitude[size_t{i} * shape.n];
      for (uint32_t j = 0; j < shape.n; ++j) {
        c[j] += x * row[j];
        mag[j] += std::fabs(x * row[j]);
      }
    }
  }
  return r;
}

}  // namespace warptrace
