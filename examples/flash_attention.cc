// bazel run //examples:flash_attention -- [--batch=1 --heads=2 --seq=256 --head_dim=64]
//     [--causal] [--pingpong] [--overlap] [--producer_delay=CYCLES]
//     [--consumer_delay=CYCLES] [common flags]
//
// A FlashAttention-3-style forward kernel (jit/kernels/flash_attention.h): bf16 Q, K, V
// [batch, heads, seq, head_dim], fp32 online softmax in registers, bf16 O. One producer
// warpgroup (setmaxnreg 24) loads the 128-row Q tile once and streams K and V tiles by TMA
// (128B swizzle) through a 2-stage ring (k_full/k_empty, v_full/v_empty); two consumer
// warpgroups (setmaxnreg 240) of 64 query rows each run S = Q K^T (wgmma, both operands in
// shared memory), the softmax, and O += P V (wgmma with P from registers, V MN-major).
// The timeline shows the producer's `load` regions and TMA copies running ahead by up to
// two KV tiles, each consumer's "qk" and "pv" wgmma groups as async spans around its
// `softmax`, the waits on the full/empty barriers with arrows from the arrivals that
// released them; with --pingpong, one consumer's softmax running while the other's wgmma
// group is in flight (their issues take turns through two named barriers); with
// --overlap, each consumer's "pv" group in flight during its own next softmax.
// Checks O against a double-precision CPU reference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "examples/bf16_gemm_problem.h"
#include "examples/example_data.h"
#include "examples/example_main.h"
#include "jit/kernels/flash_attention.h"
#include "jit/platform/tensor_map.h"

ABSL_FLAG(uint32_t, batch, 1, "batch size (the grid's z)");
ABSL_FLAG(uint32_t, heads, 2, "attention heads (the grid's y)");
ABSL_FLAG(uint32_t, seq, 256, "sequence length (a multiple of 128)");
ABSL_FLAG(uint32_t, head_dim, 64, "head dimension: 64 or 128");
ABSL_FLAG(bool, causal, false, "causal mask: query row r attends to keys 0..r");
ABSL_FLAG(bool, pingpong, false,
          "the two consumers' wgmma issues take turns (named barriers), so one's softmax "
          "overlaps the other's GEMMs");
ABSL_FLAG(bool, overlap, false,
          "within a consumer, issue the next S = Q K^T GEMM (with the previous P V) before "
          "its softmax");
ABSL_FLAG(uint32_t, producer_delay, 0, "cycles of busy work the producer adds to every K load");
ABSL_FLAG(uint32_t, consumer_delay, 0, "cycles of busy work each consumer adds to every softmax");

namespace warptrace::examples {
namespace {

constexpr char kUsage[] =
    "runs, profiles and checks a FlashAttention-3-style forward kernel (TMA + wgmma, online "
    "softmax) on a GPU or the host backend.\n"
    "  bazel run //examples:flash_attention -- [--batch=1 --heads=2 --seq=256 --head_dim=64] "
    "[--causal] [--pingpong] [--overlap] [--producer_delay=CYCLES] [--consumer_delay=CYCLES]\n"
    "  [--device=host] [--unit=warp|warpgroup|block] [--placement=global|shared|auto] "
    "[--profile=false]";

// The check: |error| <= rel |O| + abs with
//   rel = 2^-8: O's bf16 rounding (2^-9) plus the fp32 normalization;
//   abs = 2^-8 max|V| (P is rounded to bf16, relative 2^-9 per weight, in P V but not in the
//         row sum, so O moves by at most 2^-9 of the weighted mean of |V|; twice that for the
//         softmax's exp2 and scale in fp32) + (seq + head_dim) 2^-22 (fp32 sums of seq terms
//         of P V <= 1 and head_dim products of Q K^T, through exp2's slope <= 1 after the max).
double RelTolerance() { return std::ldexp(1.0, -8); }
double AbsTolerance(const FlashAttentionShape& shape) {
  return std::ldexp(1.0, -8) + (shape.seq + shape.head_dim) * std::ldexp(1.0, -22);
}

// softmax(Q K^T / sqrt(d) [+ causal mask]) V in double for the rows `rows` of O (row m * s +
// r: query r of batch-head m), one after the other.
std::vector<double> ReferenceRows(const std::vector<uint16_t>& q, const std::vector<uint16_t>& k,
                                  const std::vector<uint16_t>& v,
                                  const std::vector<uint32_t>& rows, uint64_t s, uint64_t d,
                                  bool causal) {
  std::vector<double> out(rows.size() * d, 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> scores(s);
  for (size_t checked = 0; checked < rows.size(); ++checked) {
    const uint64_t m = rows[checked] / s, r = rows[checked] % s;
    const uint64_t base = m * s * d;
    const uint64_t keys = causal ? r + 1 : s;
    double max = -INFINITY;
    for (uint64_t c = 0; c < keys; ++c) {
      double dot = 0;
      for (uint64_t x = 0; x < d; ++x) {
        dot += static_cast<double>(Bf16ToFloat(q[base + r * d + x])) *
               static_cast<double>(Bf16ToFloat(k[base + c * d + x]));
      }
      scores[c] = dot * scale;
      max = std::max(max, scores[c]);
    }
    double sum = 0;
    for (uint64_t c = 0; c < keys; ++c) sum += scores[c] = std::exp(scores[c] - max);
    for (uint64_t x = 0; x < d; ++x) {
      double acc = 0;
      for (uint64_t c = 0; c < keys; ++c) {
        acc += scores[c] * static_cast<double>(Bf16ToFloat(v[base + c * d + x]));
      }
      out[checked * d + x] = acc / sum;
    }
  }
  return out;
}

absl::StatusOr<ExampleProblem> MakeProblem() {
  FlashAttentionShape shape;
  shape.batch = absl::GetFlag(FLAGS_batch);
  shape.heads = absl::GetFlag(FLAGS_heads);
  shape.seq = absl::GetFlag(FLAGS_seq);
  shape.head_dim = absl::GetFlag(FLAGS_head_dim);
  shape.causal = absl::GetFlag(FLAGS_causal);
  shape.pingpong = absl::GetFlag(FLAGS_pingpong);
  shape.overlap = absl::GetFlag(FLAGS_overlap);
  shape.producer_delay = absl::GetFlag(FLAGS_producer_delay);
  shape.consumer_delay = absl::GetFlag(FLAGS_consumer_delay);
  absl::StatusOr<Kernel> kernel = FlashAttention(shape);
  if (!kernel.ok()) return kernel.status();

  struct Data {
    std::vector<uint16_t> q, k, v, o;
    std::vector<float> got;
    std::vector<double> reference;  // the checked rows of O, one after the other
    std::vector<uint32_t> rows;     // which rows of O ([batch * heads * seq, head_dim]) those are
  };
  auto data = std::make_shared<Data>();
  const uint64_t bh = uint64_t{shape.batch} * shape.heads, s = shape.seq, d = shape.head_dim;
  const uint64_t elements = bh * s * d;
  for (float x : RandomFloats(elements, 11)) data->q.push_back(FloatToBf16(x));
  for (float x : RandomFloats(elements, 12)) data->k.push_back(FloatToBf16(x));
  for (float x : RandomFloats(elements, 13)) data->v.push_back(FloatToBf16(x));
  data->o.assign(elements, 0);
  // The reference of the checked query rows: every row while the reference costs at most
  // kFullCheckMacs multiply-adds (2 seq head_dim per row), else a sample (CheckedRows: one
  // row per band, so every 128-row query tile of every head at the GPU sizes).
  data->rows = CheckedRows(static_cast<uint32_t>(bh * s), static_cast<uint32_t>(s),
                           static_cast<uint32_t>(2 * d));
  data->reference = ReferenceRows(data->q, data->k, data->v, data->rows, s, d, shape.causal);

  ExampleProblem problem;
  const double rel = RelTolerance(), abs = AbsTolerance(shape);
  problem.description = absl::StrFormat(
      "O = softmax(Q K^T / sqrt(%u)%s) V, bf16 [%u, %u, %u, %u] (batch, heads, seq, head_dim), "
      "tiles 128 x 128, 2 stages, %s%s, TMA 128B swizzle + wgmma m64n128k16 / m64n%uk16 (P "
      "from registers); checked to |error| <= %.3g |O| + %.3g (bf16 P and O, fp32 sums of %u "
      "keys)%s",
      shape.head_dim, shape.causal ? " + causal mask" : "", shape.batch, shape.heads, shape.seq,
      shape.head_dim, shape.pingpong ? "ping-pong consumers" : "cooperative consumers",
      shape.overlap ? ", intra-warpgroup overlap" : "", shape.head_dim, rel, abs, shape.seq,
      CheckedRowsNote(data->rows, static_cast<uint32_t>(bh * s)));
  if (shape.producer_delay > 0 || shape.consumer_delay > 0) {
    absl::StrAppendFormat(&problem.description, ", delays: producer %u, consumer %u cycles",
                          shape.producer_delay, shape.consumer_delay);
  }
  problem.kernel = *std::move(kernel);
  auto map = [&](const std::vector<uint16_t>& values) {
    TensorMapSpec spec;
    spec.type = TensorMapDataType::kBFloat16;
    spec.dims = {d, bh * s};
    spec.strides_bytes = {d * 2};
    spec.box = {kFlashAttentionBoxCols, kFlashAttentionBlockM};
    spec.swizzle = TensorMapSwizzle::k128B;
    return KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(values)), spec);
  };
  problem.args = {map(data->q), map(data->k), map(data->v),
                  KernelArg::Out(absl::MakeSpan(data->o))};
  problem.check = [data, rel, abs, d] {
    data->got.clear();
    for (uint32_t row : data->rows) {
      for (uint64_t x = uint64_t{row} * d; x < (uint64_t{row} + 1) * d; ++x) {
        data->got.push_back(Bf16ToFloat(data->o[x]));
      }
    }
    return CompareSampledRows("O", data->got, data->reference, data->rows,
                              static_cast<uint32_t>(d), rel, abs);
  };
  problem.storage = data;
  return problem;
}

}  // namespace
}  // namespace warptrace::examples

int main(int argc, char** argv) {
  return warptrace::examples::RunExampleMain(argc, argv, "flash_attention",
                                             warptrace::examples::kUsage,
                                             warptrace::examples::MakeProblem);
}
