// The host backend's promise that a kernel which runs on the CPU also compiles for the GPU:
// RunKernel on a host device compiles the emitted source with NVRTC too (no GPU needed), the
// way CudaDevice would (CudaCompileRequest: the same prelude, headers and options), and
// fails with NVRTC's log when it does not compile. The host compiler accepts C++ that NVRTC
// does not (INFINITY, M_PI, host-only library calls), so without this a kernel could pass
// every host test and fail on its first GPU.
//
//   RETURN_IF_ERROR(CheckCompilesForGpu(source, CudaTarget::Default()));
//
// Compiles go through one process-wide CachingCompiler (memory, and the disk cache of
// jit/compile/compile_cache.h when a cache directory can be derived), so a kernel is
// compiled once per machine, not once per launch; NVRTC costs ~0.2-0.5 s a kernel.
//
// Thread-safe.
#ifndef WARPTRACE_JIT_RUN_GPU_COMPILE_CHECK_H_
#define WARPTRACE_JIT_RUN_GPU_COMPILE_CHECK_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "jit/builder/kernel_source.h"
#include "jit/compile/compile_cache.h"
#include "jit/target/cuda_target.h"

namespace warptrace {

// OK when `source` compiles with NVRTC for `target` (as CudaDevice would: the target its
// requirements resolve to). InvalidArgument when it does not: "kernel K compiles on the host
// but not for the GPU (NVRTC, sm_90a): ..." with NVRTC's message, quoted lines and log, or
// naming the construct that needs a feature `target` lacks. Other codes when NVRTC itself
// fails.
absl::Status CheckCompilesForGpu(const KernelSource& source,
                                 const CudaTarget& target = CudaTarget::Default());

// The process-wide cache the check compiles through (for its statistics in tests).
CachingCompiler& GpuCheckCompiler();

}  // namespace warptrace

#endif  // WARPTRACE_JIT_RUN_GPU_COMPILE_CHECK_H_
