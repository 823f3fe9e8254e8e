// Legal wgmma patterns from public Hopper kernels, ported to the builder as a new user would,
// run on the host backend's wgmma emulation and checked exactly against a CPU reference;
// with the PTX ISA sentence each relies on. The host backend's accumulator rules
// (jit/host/device/wgmma_host.h) must accept every one of them: a check that refuses legal code is
// as bad as one that misses a bug. Misuses of the same kernels are at the end.
//
// Operands are small integers (exact in bf16; every fp32 sum exact in any order), so the
// results must equal the reference bit for bit. Shared-memory tiles use the K-major layout
// without a swizzle: element (r, k) of a tile with `kt` columns at halfword
// (r % 8) * 8 + k % 8 + (k / 8) * 64 + (r / 8) * 8 * kt, i.e. LBO 128 bytes (between
// 8-column core matrices along K) and SBO kt * 16 bytes (between 8-row groups).
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

uint16_t Bf16(float f) {  // exact for the small integers used here
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

// A rows x cols matrix of small integers (row-major), as floats and as bf16 bits.
struct Matrix {
  int rows, cols;
  std::vector<float> f;
  std::vector<uint16_t> bits;
  float at(int r, int c) const { return f[static_cast<size_t>(r) * cols + c]; }
};

Matrix Make(int rows, int cols, int seed, int lo, int hi) {
  Matrix m{rows, cols, {}, {}};
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const int v = lo + (r * 7 + c * 3 + seed * 5 + (r * c) % 11) % (hi - lo + 1);
      m.f.push_back(static_cast<float>(v));
      m.bits.push_back(Bf16(static_cast<float>(v)));
    }
  }
  return m;
}

// C (m x n) = A (m x k) * Bt (n x k)^T, in double (exact here).
std::vector<float> Gemm(const Matrix& a, const Matrix& bt) {
  std::vector<float> c(static_cast<size_t>(a.rows) * bt.rows);
  for (int i = 0; i < a.rows; ++i) {
    for (int j = 0; j < bt.rows; ++j) {
      double sum = 0;
      for (int k = 0; k < a.cols; ++k) sum += double{a.at(i, k)} * bt.at(j, k);
      c[static_cast<size_t>(i) * bt.rows + j] = static_cast<float>(sum);
    }
  }
  return c;
}

// The device helpers every kernel below shares: the tile index of the layout above, a tile
// load (rows x kt from a row-major matrix with `ld` columns, starting at column k0), and the
// accumulator layout (register i of a thread's m64nN accumulator holds row
// 16 * warp + lane / 4 + 8 * ((i >> 1) & 1), column 8 * (i >> 2) + 2 * (lane % 4) + i % 2).
constexpr char kTileHelpers[] = R"(
__device__ int tile_index(int r, int k, int kt) {
  return (r % 8) * 8 + k % 8 + (k / 8) * 64 + (r / 8) * 8 * kt;
}
__device__ void load_tile(unsigned short* tile, const unsigned short* m, int rows, int kt,
                          int ld, int k0) {
  for (int i = threadIdx.x; i < rows * kt; i += blockDim.x) {
    const int r = i / kt, k = i % kt;
    tile[tile_index(r, k, kt)] = m[r * ld + k0 + k];
  }
}
__device__ int acc_row(int i) { return 16 * (threadIdx.x / 32) + (threadIdx.x % 32) / 4 + 8 * ((i >> 1) & 1); }
__device__ int acc_col(int i) { return 8 * (i >> 2) + 2 * (threadIdx.x % 4) + (i & 1); }
)";

// Builds `b`'s kernel (params C, A, B) and runs it on `device` with A and B's bits; its C
// (a.rows x bt.rows) and the run, in `c` and `run`.
absl::Status RunGemmKernel(Device& device, KernelBuilder& b, const Matrix& a, const Matrix& bt,
                           std::vector<float>& c, std::optional<RunResult>* run = nullptr) {
  absl::StatusOr<Kernel> kernel = b.Build();
  if (!kernel.ok()) return kernel.status();
  c.assign(static_cast<size_t>(a.rows) * bt.rows, -1.0f);
  const std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(c)),
                                       KernelArg::In(absl::MakeConstSpan(a.bits)),
                                       KernelArg::In(absl::MakeConstSpan(bt.bits))};
  absl::StatusOr<RunResult> result = RunKernel(device, *kernel, args, RunOptions{});
  if (!result.ok()) return result.status();
  if (run != nullptr) *run = *std::move(result);
  return absl::OkStatus();
}

class WgmmaLegalPatternsTest : public testing::HostRunTest {};

// ---- fast.cu, kernel 6 (pranjalssh/fast.cu, examples/matmul/matmul_6.cuh) ----
//
// The consumer issues, after one wgmma.fence (warpgroup_arrive), BLOCK_WG_M/64 x BLOCK_K/16
// wgmmas m64n192k16 through a __device__ helper whose parameter is named `d` like the
// kernel's accumulator array, each k-step passing `d[m_it]` straight to the next wgmma, then
// one commit and wait 0. Names as in the original (d, m_it, k_it, wgmma_sA, sA, sB,
// block_k_iter; wgmma192<ScaleD, ScaleA, ScaleB, TransA, TransB>); TMA and the producer
// warpgroup are left out (plain loads and a block barrier feed the tiles).
// PTX ISA (wgmma.mma_async): "... except when these are accumulator register accesses
// across multiple wgmma.mma_async instructions of the same shape. In that case, ordering is
// guaranteed by default."
constexpr char kFastCuHelper[] = R"(
template <int ScaleD, int ScaleA, int ScaleB, int TransA, int TransB>
__device__ void wgmma192(float (&d)[12][8], unsigned short* sA, unsigned short* sB) {
  const unsigned long long desc_a = warptrace_wgmma_desc(&sA[0], 128, 1024, WARPTRACE_SWIZZLE_NONE);
  const unsigned long long desc_b = warptrace_wgmma_desc(&sB[0], 128, 1024, WARPTRACE_SWIZZLE_NONE);
  warptrace_wgmma_mma_async_bf16_ss<192, TransA, TransB>(d, desc_a, desc_b, ScaleD);
}
)";

TEST_F(WgmmaLegalPatternsTest, FastCuKernel6HelperKLoopRunsAndMatches) {
  constexpr int kM = 128, kN = 192, kK = 128;
  const Matrix a = Make(kM, kK, 1, 0, 2), bt = Make(kN, kK, 2, -1, 1);
  KernelBuilder b("fast_cu_kernel6");
  b.Param("float*", "C").Param("const unsigned short*", "A").Param("const unsigned short*", "B");
  b.Grid({1, 1, 1}).Block({128, 1, 1});
  b.Preamble(kTileHelpers).Preamble(kFastCuHelper);
  b.Stmt(
      "__shared__ __align__(1024) unsigned short sA[128 * 64];\n"
      "__shared__ __align__(1024) unsigned short sB[192 * 64];\n"
      "float d[2][12][8];  // d[BLOCK_WG_M / WGMMA_M][WGMMA_N / 16][8]");
  b.For("block_k_iter", 0, kK / 64, TripCount::Exact(kK / 64), [&] {
    b.Stmt("load_tile(sA, A, 128, 64, 128, block_k_iter * 64);\n"
           "load_tile(sB, B, 192, 64, 128, block_k_iter * 64);");
    b.Barrier("tiles loaded");
    b.MmaGroup("mma", [&] {
      b.Stmt(
          "#pragma unroll\n"
          "for (int m_it = 0; m_it < 2; ++m_it) {\n"
          "  unsigned short* wgmma_sA = sA + m_it * 8 * 512;\n"
          "  if (block_k_iter == 0) {\n"
          "    wgmma192<0, 1, 1, 0, 0>(d[m_it], &wgmma_sA[0], &sB[0]);\n"
          "  } else {\n"
          "    wgmma192<1, 1, 1, 0, 0>(d[m_it], &wgmma_sA[0], &sB[0]);\n"
          "  }\n"
          "  #pragma unroll\n"
          "  for (int k_it = 1; k_it < 4; ++k_it) {\n"
          "    wgmma192<1, 1, 1, 0, 0>(d[m_it], &wgmma_sA[k_it * 128], &sB[k_it * 128]);\n"
          "  }\n"
          "}");
    });
    b.WaitMmaGroups(0);
    b.Barrier("tiles consumed");
  });
  b.Stmt(
      "for (int m_it = 0; m_it < 2; ++m_it)\n"
      "  for (int w = 0; w < 12; ++w)\n"
      "    for (int e = 0; e < 8; ++e)\n"
      "      C[(m_it * 64 + acc_row(w * 8 + e)) * 192 + acc_col(w * 8 + e)] = d[m_it][w][e];");
  std::vector<float> c;
  ASSERT_THAT(RunGemmKernel(device(), b, a, bt, c), IsOk());
  EXPECT_EQ(c, Gemm(a, bt));
}

// ---- CUTLASS's pipelined mainloop (collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp) ----
//
// One wgmma group per k-tile on the same accumulators (a 128 x N tile per warpgroup: two
// m64 atoms, `accum[m]`), each followed by warpgroup_wait<K_PIPE_MMAS> with K_PIPE_MMAS = 1,
// so the previous k-tile's group is still in flight when the next one issues; the first
// k_block of the first k-tile with ScaleOut::Zero; warpgroup_fence_operand(accum) around
// each group as CUTLASS does; wait 0 after the loop.
// PTX ISA (wgmma.mma_async), as above: same-shape accumulator accesses across wgmmas are
// ordered, "in the same group or a later one" (the rule names instructions, not groups).
TEST_F(WgmmaLegalPatternsTest, CutlassMainloopWithTwoGroupsInFlightRunsAndMatches) {
  constexpr int kM = 128, kN = 32, kK = 128, kTileK = 32;
  const Matrix a = Make(kM, kK, 3, 0, 2), bt = Make(kN, kK, 4, -1, 1);
  KernelBuilder b("cutlass_mainloop");
  b.Param("float*", "C").Param("const unsigned short*", "A").Param("const unsigned short*", "B");
  b.Grid({1, 1, 1}).Block({128, 1, 1});
  b.Preamble(kTileHelpers);
  b.Stmt(
      "__shared__ __align__(1024) unsigned short sA[128 * 128];\n"
      "__shared__ __align__(1024) unsigned short sB[32 * 128];\n"
      "load_tile(sA, A, 128, 128, 128, 0);\n"
      "load_tile(sB, B, 32, 128, 128, 0);\n"
      "float accum[2][16];");
  b.Barrier("tiles loaded");
  b.For("k_tile", 0, kK / kTileK, TripCount::Exact(kK / kTileK), [&] {
    b.Stmt("warptrace_wgmma_fence_operand(accum[0]);\n"
           "warptrace_wgmma_fence_operand(accum[1]);");
    b.MmaGroup("mma", [&] {
      b.Stmt(
          "for (int k_block = 0; k_block < 2; ++k_block) {\n"
          "  const int k = k_tile * 32 + k_block * 16;\n"
          "  const unsigned long long db = warptrace_wgmma_desc(&sB[(k / 8) * 64], 128, 2048, "
          "WARPTRACE_SWIZZLE_NONE);\n"
          "  for (int m = 0; m < 2; ++m) {\n"
          "    const unsigned long long da = warptrace_wgmma_desc(&sA[m * 8 * 8 * 128 + (k / 8) * "
          "64], 128, 2048, WARPTRACE_SWIZZLE_NONE);\n"
          "    warptrace_wgmma_mma_async_bf16_ss<32>(accum[m], da, db, k_tile > 0 || k_block > 0);\n"
          "  }\n"
          "}");
    });
    b.WaitMmaGroups(1);  // warpgroup_wait<K_PIPE_MMAS>(): the previous k-tile's group retires
    b.Stmt("warptrace_wgmma_fence_operand(accum[0]);\n"
           "warptrace_wgmma_fence_operand(accum[1]);");
  });
  b.WaitMmaGroups(0);
  b.Stmt(
      "for (int m = 0; m < 2; ++m)\n"
      "  for (int i = 0; i < 16; ++i)\n"
      "    C[(m * 64 + acc_row(i)) * 32 + acc_col(i)] = accum[m][i];");
  std::vector<float> c;
  std::optional<RunResult> run;
  ASSERT_THAT(RunGemmKernel(device(), b, a, bt, c, &run), IsOk());
  EXPECT_EQ(c, Gemm(a, bt));
  // Two groups really were in flight: each k-tile's span ends after the next one began.
  ASSERT_NE(run->trace, nullptr);
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    EXPECT_GE(unit.async_lanes, 2u);
  }
}

// ---- FlashAttention-3's intra-warpgroup overlap (hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp) --
//
// FA3's flash::gemm issues both GEMMs (here its two instantiations, `gemm` for SS and
// `gemm_rs` for RS, with its parameter names tCrC and tCrA, none of them the kernel's):
// S_next = Q K^T into tSrS, then, after rescaling tOrO, O += P V (A = P in registers) into
// tOrO; warpgroup_wait<1> retires
// S_next while P V is still in flight, the "softmax" reads tSrS, warpgroup_wait<0> retires
// P V, and only then is tSrS converted into the next P (the accumulator layout of an m64n64
// S is the A-fragment layout of the four k16 steps of P V: A fragment kk = registers
// 8 kk .. 8 kk + 7). The softmax here is an exact stand-in (a row sum; P = S, O rescaled by
// 2 per step), so the result is exact.
// PTX ISA (wgmma.mma_async): "Accessing the accumulator register or the input registers
// containing fragments of matrix A of a wgmma.mma_async instruction without first
// performing a wgmma.wait_group instruction that waits on a wgmma-group including that
// wgmma.mma_async instruction is an undefined behavior" -- accessing another wgmma's
// retired accumulator while one is pending is not. And (wgmma.fence) "between a register
// access by a thread in the warpgroup and any wgmma.mma_async instruction that accesses the
// same registers": every group below starts with one.
constexpr char kFa3Gemm[] = R"(
// flash::gemm: zero_init gives ScaleOut::Zero on the first k-step.
template <bool zero_init>
__device__ void gemm(float (&tCrC)[32], const unsigned short* sA, int a_kt,
                     const unsigned short* sB, int b_kt, int k_steps) {
  for (int kk = 0; kk < k_steps; ++kk) {
    const unsigned long long da = warptrace_wgmma_desc(&sA[kk * 128], 128, a_kt * 16, WARPTRACE_SWIZZLE_NONE);
    const unsigned long long db = warptrace_wgmma_desc(&sB[kk * 128], 128, b_kt * 16, WARPTRACE_SWIZZLE_NONE);
    warptrace_wgmma_mma_async_bf16_ss<64>(tCrC, da, db, zero_init && kk == 0 ? 0 : 1);
  }
}
__device__ void gemm_rs(float (&tCrC)[16], const unsigned (&tCrA)[4][4],
                        const unsigned short* sB, int b_kt) {
  for (int kk = 0; kk < 4; ++kk) {
    const unsigned long long db = warptrace_wgmma_desc(&sB[kk * 128], 128, b_kt * 16, WARPTRACE_SWIZZLE_NONE);
    warptrace_wgmma_mma_async_bf16_rs<32>(tCrC, tCrA[kk], db, 1);
  }
}
// tSrS -> tOrP: bf16 pairs (exact: S holds small integers), low half the even register.
__device__ void convert_p(unsigned (&tOrP)[4][4], const float (&tSrS)[32]) {
  for (int kk = 0; kk < 4; ++kk)
    for (int j = 0; j < 4; ++j)
      tOrP[kk][j] = (__float_as_uint(tSrS[8 * kk + 2 * j]) >> 16) |
                    (__float_as_uint(tSrS[8 * kk + 2 * j + 1]) & 0xffff0000u);
}
)";

// kFa3Blocks KV blocks of 64 rows; head_dim 32; one warpgroup of 64 query rows. Q (64 x 32),
// K (rows kv, columns head_dim) and Vt (head_dim x kv) are K-major tiles as above.
constexpr int kFa3Blocks = 2;

// `misuse`: 0 legal; 1 rescales tOrO after issuing P V (while it is pending); 2 converts the
// next P into tOrP before warpgroup_wait<0> (while P V still reads it).
absl::StatusOr<Kernel> Fa3Kernel(int misuse) {
  KernelBuilder b("fa3_overlap");
  b.Param("float*", "O").Param("float*", "S_sum").Param("const unsigned short*", "Q");
  b.Param("const unsigned short*", "K").Param("const unsigned short*", "V");
  b.Grid({1, 1, 1}).Block({128, 1, 1});
  b.Preamble(kTileHelpers).Preamble(kFa3Gemm);
  b.Stmt(absl::StrCat(
      "__shared__ __align__(1024) unsigned short sQ[64 * 32];\n"
      "__shared__ __align__(1024) unsigned short sK[", kFa3Blocks + 1, " * 64 * 32];\n"
      "__shared__ __align__(1024) unsigned short sVt[", kFa3Blocks, " * 32 * 64];\n"
      "load_tile(sQ, Q, 64, 32, 32, 0);\n"
      "for (int j = 0; j <= ", kFa3Blocks, "; ++j) load_tile(sK + j * 2048, K + j * 2048, 64, "
      "32, 32, 0);\n"
      "for (int j = 0; j < ", kFa3Blocks, "; ++j) load_tile(sVt + j * 2048, V, 32, 64, ",
      kFa3Blocks * 64, ", j * 64);\n"
      "float tSrS[32], tOrO[16];\n"
      "unsigned tOrP[4][4];\n"
      "float row_sum = 0.0f;\n"
      "for (int i = 0; i < 16; ++i) tOrO[i] = 0.0f;"));
  b.Barrier("tiles loaded");
  b.MmaGroup("qk", [&] { b.Stmt("gemm<true>(tSrS, sQ, 32, sK, 32, 2);"); });
  b.WaitMmaGroups(0);
  b.Stmt("convert_p(tOrP, tSrS);");
  b.For("n_block", 0, kFa3Blocks, TripCount::Exact(kFa3Blocks), [&] {
    b.MmaGroup("qk", [&] { b.Stmt("gemm<true>(tSrS, sQ, 32, sK + (n_block + 1) * 2048, 32, 2);"); });
    if (misuse != 1) b.Stmt("for (int i = 0; i < 16; ++i) tOrO[i] *= 2.0f;  // rescale_o");
    b.MmaGroup("pv", [&] { b.Stmt("gemm_rs(tOrO, tOrP, sVt + n_block * 2048, 64);"); });
    if (misuse == 1) b.Stmt("for (int i = 0; i < 16; ++i) tOrO[i] *= 2.0f;  // rescale_o");
    b.WaitMmaGroups(1);  // S_next is ready, P V still in flight
    b.Stmt("for (int i = 0; i < 32; ++i) row_sum += tSrS[i];  // softmax");
    if (misuse == 2) b.Stmt("convert_p(tOrP, tSrS);");
    b.WaitMmaGroups(0);
    if (misuse != 2) b.Stmt("convert_p(tOrP, tSrS);");
  });
  b.Stmt(
      "for (int i = 0; i < 16; ++i) O[acc_row(i) * 32 + acc_col(i)] = tOrO[i];\n"
      "S_sum[threadIdx.x] = row_sum;");
  return b.Build();
}

struct Fa3Data {
  Matrix q, k, v;  // k: (kFa3Blocks + 1) * 64 rows; v: kFa3Blocks * 64 rows
};

Fa3Data MakeFa3Data() {
  return {Make(64, 32, 5, 0, 1), Make((kFa3Blocks + 1) * 64, 32, 6, 0, 1),
          Make(kFa3Blocks * 64, 32, 7, -1, 1)};
}

absl::Status RunFa3(Device& device, int misuse, const Fa3Data& data, std::vector<float>* o,
                    std::vector<float>* s_sum) {
  absl::StatusOr<Kernel> kernel = Fa3Kernel(misuse);
  if (!kernel.ok()) return kernel.status();
  // V is read transposed: Vt (head_dim x kv), row-major, for the K-major B operand.
  std::vector<uint16_t> vt(data.v.bits.size());
  for (int r = 0; r < data.v.rows; ++r) {
    for (int c = 0; c < 32; ++c) vt[static_cast<size_t>(c) * data.v.rows + r] = data.v.bits[r * 32 + c];
  }
  o->assign(64 * 32, -1.0f);
  s_sum->assign(128, -1.0f);
  const std::vector<KernelArg> args = {
      KernelArg::Out(absl::MakeSpan(*o)), KernelArg::Out(absl::MakeSpan(*s_sum)),
      KernelArg::In(absl::MakeConstSpan(data.q.bits)),
      KernelArg::In(absl::MakeConstSpan(data.k.bits)), KernelArg::In(absl::MakeConstSpan(vt))};
  return RunKernel(device, *kernel, args, RunOptions{}).status();
}

TEST_F(WgmmaLegalPatternsTest, Fa3TwoAccumulatorsInFlightRunAndMatch) {
  const Fa3Data data = MakeFa3Data();
  std::vector<float> o, s_sum;
  ASSERT_THAT(RunFa3(device(), 0, data, &o, &s_sum), IsOk());
  // P_j = S_j = Q K_j^T; O = sum_j 2^(blocks - 1 - j) P_j V_j.
  std::vector<double> want(64 * 32, 0.0);
  std::vector<double> s_row_sum(64, 0.0);  // sum over j >= 1 (the S_next the loop reads)
  for (int j = 0; j < kFa3Blocks; ++j) {
    const double scale = static_cast<double>(1 << (kFa3Blocks - 1 - j));
    for (int r = 0; r < 64; ++r) {
      for (int kv = 0; kv < 64; ++kv) {
        double s = 0;
        for (int h = 0; h < 32; ++h) s += double{data.q.at(r, h)} * data.k.at(j * 64 + kv, h);
        for (int h = 0; h < 32; ++h) want[r * 32 + h] += scale * s * data.v.at(j * 64 + kv, h);
      }
    }
  }
  for (int j = 1; j <= kFa3Blocks; ++j) {
    for (int r = 0; r < 64; ++r) {
      for (int kv = 0; kv < 64; ++kv) {
        for (int h = 0; h < 32; ++h) s_row_sum[r] += double{data.q.at(r, h)} * data.k.at(j * 64 + kv, h);
      }
    }
  }
  for (int i = 0; i < 64 * 32; ++i) ASSERT_EQ(o[i], static_cast<float>(want[i])) << "O element " << i;
  // Each thread summed its 32 registers of every S_next: rows r and r + 8 of its quad's
  // columns; the four threads of a quad together hold the two rows completely.
  for (int warp = 0; warp < 4; ++warp) {
    for (int g = 0; g < 8; ++g) {
      double quad = 0;
      for (int t = 0; t < 4; ++t) quad += s_sum[warp * 32 + g * 4 + t];
      EXPECT_EQ(quad, s_row_sum[16 * warp + g] + s_row_sum[16 * warp + g + 8]);
    }
  }
}

// ---- An RS chain (A from registers): four k16 steps on one accumulator in one group ----
//
// PTX ISA (wgmma.mma_async): "The matrix A can be in registers or in shared memory"; the
// chain on D is the same-shape ordering above. The A fragments are written by ordinary code
// before the group's wgmma.fence, as the ISA's fence rule asks.
TEST_F(WgmmaLegalPatternsTest, RsChainFromRegisterFragmentsRunsAndMatches) {
  const Matrix a = Make(64, 64, 8, -2, 2), bt = Make(64, 64, 9, 0, 1);
  KernelBuilder b("rs_chain");
  b.Param("float*", "C").Param("const unsigned short*", "A").Param("const unsigned short*", "B");
  b.Grid({1, 1, 1}).Block({128, 1, 1});
  b.Preamble(kTileHelpers);
  b.Stmt(
      "__shared__ __align__(1024) unsigned short sB[64 * 64];\n"
      "load_tile(sB, B, 64, 64, 64, 0);\n"
      "unsigned frag[4][4];  // A's fragment of each k16 step: element e of step kk is\n"
      "                      // A(acc_row(e), 16 kk + acc_col(e)), two per register\n"
      "for (int kk = 0; kk < 4; ++kk)\n"
      "  for (int j = 0; j < 4; ++j)\n"
      "    frag[kk][j] = A[acc_row(2 * j) * 64 + 16 * kk + acc_col(2 * j)] |\n"
      "                  (unsigned(A[acc_row(2 * j + 1) * 64 + 16 * kk + acc_col(2 * j + 1)]) << 16);\n"
      "float acc[32];");
  b.Barrier("tile loaded");
  b.MmaGroup("mma", [&] {
    b.Stmt(
        "for (int kk = 0; kk < 4; ++kk) {\n"
        "  const unsigned long long db = warptrace_wgmma_desc(&sB[kk * 128], 128, 1024, "
        "WARPTRACE_SWIZZLE_NONE);\n"
        "  warptrace_wgmma_mma_async_bf16_rs<64>(acc, frag[kk], db, kk > 0);\n"
        "}");
  });
  b.WaitMmaGroups(0);
  b.Stmt("for (int i = 0; i < 32; ++i) C[acc_row(i) * 64 + acc_col(i)] = acc[i];");
  std::vector<float> c;
  ASSERT_THAT(RunGemmKernel(device(), b, a, bt, c), IsOk());
  EXPECT_EQ(c, Gemm(a, bt));
}

// ---- Misuses of the same kernels: caught where they happen, through the helpers ----

// FA3's rescale moved after the P V issue: tOrO is the pending accumulator. The helper's
// parameter is tCrC; the kernel's array is tOrO: found through the call.
TEST_F(WgmmaLegalPatternsTest, Fa3RescalingOWhileItsGemmIsPendingFails) {
  const Fa3Data data = MakeFa3Data();
  std::vector<float> o, s_sum;
  EXPECT_THAT(RunFa3(device(), 1, data, &o, &s_sum),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("kernel fa3_overlap > loop n_block > statement `for (int "
                                       "i = 0; i < 16; ++i) ...`"),
                             HasSubstr(": accumulator 'tOrO' is read (or written) while a "
                                       "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
                                       "(A in registers) on it is pending (its register d[0] "
                                       "of 16)"))));
}

// The next P converted into tOrP before warpgroup_wait<0>: P V still reads it.
TEST_F(WgmmaLegalPatternsTest, Fa3OverwritingPWhileItsGemmIsPendingFails) {
  const Fa3Data data = MakeFa3Data();
  std::vector<float> o, s_sum;
  EXPECT_THAT(RunFa3(device(), 2, data, &o, &s_sum),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("block (0,0,0) thread ("),
                             HasSubstr(": 'tOrP' is read (or written) while a "
                                       "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
                                       "(A in registers) holding it as its A fragment"))));
}

}  // namespace
}  // namespace warptrace
