// bazel run //examples:ampere_gemm -- [--m=256 --n=256 --k=128 --warps=4 --stages=3] [common flags]
//
// A bf16 GEMM on Ampere tensor cores (jit/kernels/ampere_gemm.h): 128 x 128 block tiles, K
// in steps of 32 through a cp.async ring ("prologue", "load" regions, "tile ready" /
// "tile consumed" barriers), ldmatrix (.x4, .x4.trans for B) and mma.sync m16n8k16 with fp32
// accumulation in the "mma" region, then a "store" region. Runs and profiles it end to end
// (sm_80 or newer on a GPU; the host backend emulates the tensor cores), checks C against a
// double-precision reference of the same bf16 inputs within a tolerance derived from K
// (printed), and writes the trace.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "examples/example_data.h"
#include "examples/example_main.h"
#include "jit/kernels/ampere_gemm.h"

ABSL_FLAG(uint32_t, m, 256, "rows of A and C (a multiple of 128)");
ABSL_FLAG(uint32_t, n, 256, "columns of B and C (a multiple of 128)");
ABSL_FLAG(uint32_t, k, 128, "columns of A, rows of B (a multiple of 32)");
ABSL_FLAG(uint32_t, warps, 4, "warps per block: 4 (64 x 64 each) or 8 (64 x 32 each)");
ABSL_FLAG(uint32_t, stages, 3, "cp.async stages of the K ring (2..4)");
ABSL_FLAG(uint32_t, producer_delay, 0, "cycles of busy work added to every load region");
ABSL_FLAG(uint32_t, consumer_delay, 0, "cycles of busy work added to every mma region");

namespace warptrace::examples {
namespace {

constexpr char kUsage[] =
    "runs, profiles and checks a bf16 tensor-core GEMM (mma.sync, ldmatrix, cp.async ring), "
    "C = A x B, on a GPU or the host backend.\n"
    "  bazel run //examples:ampere_gemm -- [--m=256 --n=256 --k=128 --warps=4 --stages=3] "
    "[--producer_delay=CYCLES] [--consumer_delay=CYCLES]\n"
    "  [--device=host] [--unit=warp|warpgroup|block] [--placement=global|shared|auto] "
    "[--profile=false]";

absl::StatusOr<ExampleProblem> MakeProblem() {
  const AmpereGemmShape shape{.m = absl::GetFlag(FLAGS_m),
                              .n = absl::GetFlag(FLAGS_n),
                              .k = absl::GetFlag(FLAGS_k),
                              .warps = absl::GetFlag(FLAGS_warps),
                              .stages = absl::GetFlag(FLAGS_stages),
                              .producer_delay = absl::GetFlag(FLAGS_producer_delay),
                              .consumer_delay = absl::GetFlag(FLAGS_consumer_delay)};
  absl::StatusOr<Kernel> kernel = AmpereGemm(shape);
  if (!kernel.ok()) return kernel.status();
  struct Data {
    std::vector<uint16_t> a, b;
    std::vector<float> c;
    std::vector<double> reference;  // the checked rows of C, one after the other
    std::vector<uint32_t> rows;     // which rows those are
    std::vector<float> got;
  };
  auto data = std::make_shared<Data>();
  for (const auto& [out, count, seed] :
       {std::make_tuple(&data->a, uint64_t{shape.m} * shape.k, uint64_t{1}),
        std::make_tuple(&data->b, uint64_t{shape.k} * shape.n, uint64_t{2})}) {
    const std::vector<float> values = RandomFloats(count, seed);
    out->resize(count);
    std::transform(values.begin(), values.end(), out->begin(), FloatToBf16);
  }
  data->c.assign(uint64_t{shape.m} * shape.n, 0.0f);
  // The reference of the checked rows (every row up to kFullCheckMacs, see CheckedRows):
  // those rows of A times B.
  data->rows = CheckedRows(shape.m, shape.n, shape.k);
  std::vector<uint16_t> checked_a;
  checked_a.reserve(data->rows.size() * shape.k);
  for (uint32_t row : data->rows) {
    const auto begin = data->a.begin() + static_cast<ptrdiff_t>(uint64_t{row} * shape.k);
    checked_a.insert(checked_a.end(), begin, begin + shape.k);
  }
  AmpereGemmShape checked_shape = shape;
  checked_shape.m = static_cast<uint32_t>(data->rows.size());
  AmpereGemmReference reference = ReferenceBf16Gemm(checked_a, data->b, checked_shape);
  data->reference = std::move(reference.c);
  // The inputs are exactly bf16 on both sides, so the error is the fp32 accumulation's: K
  // additions, at most gamma_K sum |a b| (gamma_K = K u / (1 - K u), u = 2^-24); allow 4x
  // for the hardware's unspecified order, at the largest such sum of any element.
  const double u = std::ldexp(1.0, -24);
  const double gamma = shape.k * u / (1 - shape.k * u);
  const double tolerance =
      4 * gamma * *std::max_element(reference.magnitude.begin(), reference.magnitude.end());

  ExampleProblem problem;
  problem.description = absl::StrFormat(
      "C = A x B, %u x %u x %u (M x N x K), bf16 in, fp32 out, %u warps, %u stages; "
      "tolerance %.3g (4 gamma_K max sum |a b|)%s",
      shape.m, shape.n, shape.k, shape.warps, shape.stages, tolerance,
      CheckedRowsNote(data->rows, shape.m));
  problem.kernel = *std::move(kernel);
  problem.args = {KernelArg::In(absl::MakeConstSpan(data->a)),
                  KernelArg::In(absl::MakeConstSpan(data->b)),
                  KernelArg::Out(absl::MakeSpan(data->c))};
  const uint32_t n = shape.n;
  problem.check = [data, n, tolerance] {
    data->got.clear();
    for (uint32_t row : data->rows) {
      const auto begin = data->c.begin() + static_cast<ptrdiff_t>(uint64_t{row} * n);
      data->got.insert(data->got.end(), begin, begin + n);
    }
    return CompareSampledRows("C", data->got, data->reference, data->rows, n,
                              /*rel_tolerance=*/0, /*abs_tolerance=*/tolerance);
  };
  problem.storage = data;
  return problem;
}

}  // namespace
}  // namespace warptrace::examples

int main(int argc, char** argv) {
  return warptrace::examples::RunExampleMain(argc, argv, "ampere_gemm",
                                             warptrace::examples::kUsage,
                                             warptrace::examples::MakeProblem);
}
