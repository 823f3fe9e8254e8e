#include "examples/bf16_gemm_problem.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "examples/example_data.h"

namespace warptrace::examples {

uint16_t FloatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float Bf16ToFloat(uint16_t bits) {
  const uint32_t wide = uint32_t{bits} << 16;
  float f;
  std::memcpy(&f, &wide, 4);
  return f;
}

double Bf16GemmRelTolerance(const Bf16GemmShape& shape) {
  return shape.out_f32 ? std::ldexp(1.0, -22) : std::ldexp(1.0, -8);
}

double Bf16GemmAbsTolerance(const Bf16GemmShape& shape) {
  return shape.k * std::ldexp(1.0, -22);
}

ExampleProblem Bf16GemmProblem(Kernel kernel, const Bf16GemmShape& shape,
                               const Bf16Operands& operands, uint64_t seed,
                               std::string description) {
  struct Data {
    std::vector<uint16_t> a, b, c_bf16;
    std::vector<float> c_f32, got;
    std::vector<double> reference;  // the checked rows of C, one after the other
    std::vector<uint32_t> rows;     // which rows those are
  };
  auto data = std::make_shared<Data>();
  const uint64_t m = shape.m, n = shape.n, k = shape.k;
  for (float x : RandomFloats(m * k, seed)) data->a.push_back(FloatToBf16(x));
  for (float x : RandomFloats(n * k, seed + 1)) data->b.push_back(FloatToBf16(x));
  // The reference of the checked rows (every row up to kFullCheckMacs, see CheckedRows).
  data->rows = CheckedRows(shape.m, shape.n, shape.k);
  data->reference.assign(data->rows.size() * n, 0.0);
  for (size_t r = 0; r < data->rows.size(); ++r) {
    const uint64_t i = data->rows[r];
    for (uint64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (uint64_t p = 0; p < k; ++p) {
        sum += static_cast<double>(Bf16ToFloat(data->a[i * k + p])) *
               static_cast<double>(Bf16ToFloat(data->b[j * k + p]));
      }
      data->reference[r * n + j] = sum;
    }
  }
  ExampleProblem problem;
  const double rel = Bf16GemmRelTolerance(shape), abs = Bf16GemmAbsTolerance(shape);
  problem.description = absl::StrCat(
      std::move(description),
      absl::StrFormat("; checked to |error| <= %.3g |C| + %.3g (%s output, K = %d fp32 sums)%s",
                      rel, abs, shape.out_f32 ? "f32" : "bf16", shape.k,
                      CheckedRowsNote(data->rows, shape.m)));
  problem.kernel = std::move(kernel);
  KernelArg a = KernelArg::In(absl::MakeConstSpan(data->a));
  KernelArg b = KernelArg::In(absl::MakeConstSpan(data->b));
  if (operands.tensor_maps) {
    auto map = [&](uint64_t rows, const std::vector<uint32_t>& box) {
      TensorMapSpec spec;
      spec.type = TensorMapDataType::kBFloat16;
      spec.dims = {k, rows};
      spec.strides_bytes = {k * 2};
      spec.box = box;
      spec.swizzle = operands.swizzle;
      return spec;
    };
    a = KernelArg::TensorMap(a, map(m, operands.box_a));
    b = KernelArg::TensorMap(b, map(n, operands.box_b));
  }
  problem.args = {a, b};
  if (shape.out_f32) {
    data->c_f32.assign(m * n, 0.0f);
    problem.args.push_back(KernelArg::Out(absl::MakeSpan(data->c_f32)));
  } else {
    data->c_bf16.assign(m * n, 0);
    problem.args.push_back(KernelArg::Out(absl::MakeSpan(data->c_bf16)));
  }
  const bool f32 = shape.out_f32;
  problem.check = [data, f32, rel, abs, n = shape.n] {
    data->got.clear();
    for (uint32_t row : data->rows) {
      const uint64_t begin = uint64_t{row} * n;
      for (uint64_t j = begin; j < begin + n; ++j) {
        data->got.push_back(f32 ? data->c_f32[j] : Bf16ToFloat(data->c_bf16[j]));
      }
    }
    Comparison c = CompareToReference("C", data->got, data->reference, rel, abs, n);
    // The worst element's index in C, not in the checked rows.
    if (n > 0 && c.worst_index / n < data->rows.size()) {
      c.worst_index = uint64_t{data->rows[c.worst_index / n]} * n + c.worst_index % n;
    }
    return c;
  };
  problem.storage = data;
  return problem;
}

}  // namespace warptrace::examples
