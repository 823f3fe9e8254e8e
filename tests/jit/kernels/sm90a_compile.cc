#include "tests/jit/kernels/sm90a_compile.h"

#include "jit/compile/nvrtc_compiler.h"
#include "jit/cuda/cuda_device.h"

namespace warptrace::testing {

absl::StatusOr<Sm90aCubin> CompileForSm90(const KernelSource& source) {
  CompileRequest request = *CudaCompileRequest(source, CudaTarget::Default());
  request.options.line_info = false;
  absl::StatusOr<CompiledKernel> compiled = NvrtcCompiler().Compile(request);
  if (!compiled.ok()) return compiled.status();
  return Sm90aCubin{std::move(compiled->cubin), std::move(compiled->log)};
}

}  // namespace warptrace::testing
