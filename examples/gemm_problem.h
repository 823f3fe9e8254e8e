// The GEMM problem both GEMM examples run: C = A x B (row-major; A is M x K, B is K x N)
// with deterministic random inputs, checked against ReferenceGemm
// (jit/kernels/tiled_gemm.h). Any kernel with parameters (const float* A, const float* B,
// float* C) computing that product can be plugged in.
#ifndef WARPTRACE_EXAMPLES_GEMM_PROBLEM_H_
#define WARPTRACE_EXAMPLES_GEMM_PROBLEM_H_

#include <cstdint>
#include <string>

#include "examples/example_main.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace::examples {

// A is RandomFloats(M*K, seed), B is RandomFloats(K*N, seed + 1), C starts at 0.
ExampleProblem GemmProblem(Kernel kernel, uint32_t m, uint32_t n, uint32_t k, uint64_t seed,
                           std::string description);

}  // namespace warptrace::examples

#endif  // WARPTRACE_EXAMPLES_GEMM_PROBLEM_H_
