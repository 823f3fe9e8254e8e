#include "jit/run/gpu_compile_check.h"

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jit/compile/nvrtc_compiler.h"
#include "jit/cuda/cuda_device.h"

namespace warptrace {

CachingCompiler& GpuCheckCompiler() {
  static CachingCompiler* const compiler = [] {
    absl::StatusOr<std::unique_ptr<CachingCompiler>> cached =
        CachingCompiler::Create(std::make_unique<NvrtcCompiler>());
    if (!cached.ok()) {
      // No cache directory can be derived (no HOME, XDG_CACHE_HOME or WARPTRACE_CACHE_DIR):
      // the memory level still makes repeated kernels free within the process.
      CompileCacheOptions memory_only;
      memory_only.use_disk = false;
      cached = CachingCompiler::Create(std::make_unique<NvrtcCompiler>(), memory_only);
    }
    return cached->release();
  }();
  return *compiler;
}

absl::Status CheckCompilesForGpu(const KernelSource& source, const CudaTarget& target) {
  absl::StatusOr<CompileRequest> request = CudaCompileRequest(source, target, {});
  if (!request.ok()) {
    return absl::Status(request.status().code(),
                        absl::StrCat("kernel ", source.kernel_name, " cannot be compiled for ",
                                     target.ToString(), ": ", request.status().message()));
  }
  absl::StatusOr<CompiledKernel> compiled = GpuCheckCompiler().Compile(*request);
  if (compiled.ok()) return absl::OkStatus();
  return absl::Status(
      compiled.status().code(),
      absl::StrCat("kernel ", source.kernel_name, " compiles on the host but not for the GPU "
                   "(NVRTC, ", request->options.target.ToString(),
                   "; RunOptions::check_gpu_compile = false skips this "
                   "check): ", compiled.status().message()));
}

}  // namespace warptrace
