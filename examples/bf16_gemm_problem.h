// The bf16 GEMM problem the tensor-core examples run: C = A * B^T with A (M x K) and B
// (N x K) both K-major bf16 (deterministic random values in [-1, 1) rounded to bf16), fp32
// accumulation, C bf16 or f32, checked against a double-precision reference computed from
// the same bf16 inputs, with a tolerance derived from K and the output type:
//   |error| <= rel * |expected| + abs,  rel = 2^-8 (a bf16 output's rounding; 2^-22 for f32),
//                                       abs = K x 2^-22 (fp32 accumulation of K products <= 1)
#ifndef WARPTRACE_EXAMPLES_BF16_GEMM_PROBLEM_H_
#define WARPTRACE_EXAMPLES_BF16_GEMM_PROBLEM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "examples/example_main.h"
#include "jit/builder/kernel_builder.h"
#include "jit/platform/tensor_map.h"

namespace warptrace::examples {

// IEEE float -> bf16 bits, round to nearest even (NaN stays NaN); and back.
uint16_t FloatToBf16(float f);
float Bf16ToFloat(uint16_t bits);

struct Bf16GemmShape {
  uint32_t m = 0, n = 0, k = 0;
  bool out_f32 = false;
};

// The tolerance above.
double Bf16GemmRelTolerance(const Bf16GemmShape& shape);
double Bf16GemmAbsTolerance(const Bf16GemmShape& shape);

// How the kernel takes A and B: as plain pointers (In buffers), or as tensor maps over them
// with the given boxes (innermost first) and swizzle.
struct Bf16Operands {
  bool tensor_maps = false;
  std::vector<uint32_t> box_a, box_b;
  TensorMapSwizzle swizzle = TensorMapSwizzle::k128B;
};

// Arguments in order: A, B (buffers or tensor maps), C (Out). `description` gets the
// tolerance appended.
ExampleProblem Bf16GemmProblem(Kernel kernel, const Bf16GemmShape& shape,
                               const Bf16Operands& operands, uint64_t seed,
                               std::string description);

}  // namespace warptrace::examples

#endif  // WARPTRACE_EXAMPLES_BF16_GEMM_PROBLEM_H_
