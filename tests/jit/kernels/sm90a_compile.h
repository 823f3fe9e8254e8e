// Compiles an emitted kernel with NVRTC exactly as CudaDevice::Load would (CudaCompileRequest:
// sm_90a for sm_90a constructs, the toolkit's include directory for <cuda_bf16.h>), without a
// GPU. Its own translation unit, so the test reading the SASS needs only this header.
#ifndef WARPTRACE_TESTS_JIT_KERNELS_SM90A_COMPILE_H_
#define WARPTRACE_TESTS_JIT_KERNELS_SM90A_COMPILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "jit/builder/kernel_source.h"

namespace warptrace::testing {

struct Sm90aCubin {
  std::string cubin;
  std::string log;  // NVRTC's log on success (warnings)
};

absl::StatusOr<Sm90aCubin> CompileForSm90(const KernelSource& source);

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_KERNELS_SM90A_COMPILE_H_
