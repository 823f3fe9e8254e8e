// Kernels that exercise every device primitive (CUDA built-ins the host backend provides and
// warptrace_primitives.cuh), as complete translation units. The host tests
// (tests/jit/host/primitives_test.cc) run them; the NVRTC test
// (tests/jit/primitives/primitives_nvrtc_test.cc) compiles the same text for sm_80 and sm_90.
// Each kernel is `extern "C" __global__ void <name>(int* out, const int* in)`.
#ifndef WARPTRACE_TESTS_JIT_DEVICE_PRIMITIVE_KERNELS_H_
#define WARPTRACE_TESTS_JIT_DEVICE_PRIMITIVE_KERNELS_H_

#include <string>
#include <vector>

#include "jit/builder/kernel_source.h"

namespace warptrace::testing {

struct PrimitiveKernel {
  std::string name;
  std::string body;       // the kernel's body
  bool needs_sm90 = false;  // uses mbarrier transactions / try_wait / bulk copies
};

// Every kernel below (name -> body).
const std::vector<PrimitiveKernel>& PrimitiveKernels();
const PrimitiveKernel& FindPrimitiveKernel(const std::string& name);

// The translation unit of `kernel`: includes warptrace_primitives.cuh, defines the kernel and
// (under WARPTRACE_HOST_BACKEND) its host entry. Headers: the primitives header.
KernelSource PrimitiveKernelSource(const PrimitiveKernel& kernel);

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_DEVICE_PRIMITIVE_KERNELS_H_
