// Kernels for the sm_80 tensor-core primitives (jit/primitives/tensor_core_sm80.cuh: mma.sync,
// ldmatrix, stmatrix, elect.sync) and the 16-bit float types they consume (__half,
// __nv_bfloat16 and their pairs), as complete translation units in the form of
// primitive_kernels.h (`extern "C" __global__ void <name>(int* out, const int* in)`, built by
// PrimitiveKernelSource). The host tests (tests/jit/host/tensor_core_test.cc,
// half_types_test.cc) run them; tests/jit/primitives/tensor_core_nvrtc_test.cc compiles the
// same text for sm_80 / sm_90 and checks the SASS.
#ifndef WARPTRACE_TESTS_JIT_PRIMITIVES_TENSOR_CORE_KERNELS_H_
#define WARPTRACE_TESTS_JIT_PRIMITIVES_TENSOR_CORE_KERNELS_H_

#include <string>
#include <vector>

#include "tests/jit/primitives/primitive_kernels.h"

namespace warptrace::testing {

// Every kernel below; needs_sm90: uses stmatrix or elect.sync.
const std::vector<PrimitiveKernel>& TensorCoreKernels();
const PrimitiveKernel& FindTensorCoreKernel(const std::string& name);

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_PRIMITIVES_TENSOR_CORE_KERNELS_H_
