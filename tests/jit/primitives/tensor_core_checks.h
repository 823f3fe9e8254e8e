// Conformance and numeric checks of the tensor-core primitives (tensor_core_kernels.h), on
// any Device: tests/jit/host/tensor_core_test.cc runs them on HostDevice,
// tests/jit/cuda/tensor_core_gpu_test.cc on a GPU. Each runs its kernel and adds gtest
// failures for every difference from tables derived here from the PTX ISA's formulas (quoted
// in the .cc), never from the host emulation's code.
#ifndef WARPTRACE_TESTS_JIT_PRIMITIVES_TENSOR_CORE_CHECKS_H_
#define WARPTRACE_TESTS_JIT_PRIMITIVES_TENSOR_CORE_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "jit/platform/device.h"

namespace warptrace::testing {

// Runs TensorCoreKernels()'s `name` on one block of `threads` with `in` (copied to the
// device); `*out` gets `out_ints` ints of `out` (zeroed first), also when the launch failed.
absl::Status RunTensorCoreKernel(Device& device, const std::string& name, uint32_t threads,
                                 const std::vector<int>& in, size_t out_ints,
                                 std::vector<int>* out);

// The mma.sync patterns: one-hot A (D reveals B's layout), one-hot B (A's), zero A and B
// (C's), and small random integers (all of it); D must be exact. bf16 or f16.
void ExpectMmaLayouts(Device& device, bool bf16);
// Every ldmatrix form / every stmatrix form (sm_90) against the ISA's distribution.
void ExpectLdmatrixForms(Device& device);
void ExpectStmatrixForms(Device& device);
// elect.sync (sm_90) elects exactly one lane per warp.
void ExpectElectElectsOneLanePerWarp(Device& device);
// A 64 x 64 x 64 bf16 GEMM through ldmatrix and mma.sync within a tolerance derived from K.
void ExpectBf16GemmMatchesReference(Device& device);

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_PRIMITIVES_TENSOR_CORE_CHECKS_H_
