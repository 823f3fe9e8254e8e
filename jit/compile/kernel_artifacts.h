// What NVRTC makes of one emitted kernel, kept on disk for its author: RunKernel writes it
// when RunOptions::artifacts_dir is set, so "did my kernel get HGMMA / UTMALDG, does it
// spill, what does profiling add?" needs no GPU and no cutting cubins out of the compile
// cache (whose entries start with a header cuobjdump rejects). Under `dir`, for kernel K
// run profiled ("on") or not ("off"):
//
//   K.on.cu      the emitted source (its in-memory headers, recorder.cuh ..., beside it)
//   K.on.log     NVRTC's log with ptxas's report (--ptxas-options=-v: registers, spills,
//                stack frame)
//   K.on.ptx     the PTX
//   K.on.cubin   the plain ELF cubin (cuobjdump -sass K.on.cubin, nvdisasm K.on.cubin)
//   K.on.sass    cuobjdump -sass of it, when cuobjdump is found (FindCuobjdump: tools/setup.sh
//                installs the nvidia-cuda-cuobjdump wheel)
//
//   ASSIGN_OR_RETURN(CompileRequest request, CudaCompileRequest(source, target));
//   ASSIGN_OR_RETURN(KernelArtifacts kept,
//                    KeepKernelArtifacts(request, "gemm.on", "/tmp/k", FindCuobjdump("")));
//   // kept.log (ptxas's report), kept.files
//
// Thread-safe (each call compiles with its own NVRTC program); two calls writing one
// kernel's files in one directory leave one complete version of each (atomic renames).
#ifndef WARPTRACE_JIT_COMPILE_KERNEL_ARTIFACTS_H_
#define WARPTRACE_JIT_COMPILE_KERNEL_ARTIFACTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/compile/compiler.h"

namespace warptrace {

struct KernelArtifacts {
  std::vector<std::string> files;  // the paths written, in the order above
  std::string log;                 // NVRTC's log (ptxas's -v report)
  bool sass = false;               // whether K.<mode>.sass was written
};

// Compiles `request` with NVRTC (CudaCompileRequest makes the one CudaDevice::Load
// compiles), with ptxas's report on and NVRTC's compile cache off, and writes the files
// above under `dir` (created if missing), named `stem` + ".cu", ".log" ... ("K.on"). The
// headers are written under their own names. `cuobjdump`: its path, or empty for no SASS.
// Errors: InvalidArgument with NVRTC's log when the source does not compile; the file
// system's errors naming the path; Internal when cuobjdump fails.
absl::StatusOr<KernelArtifacts> KeepKernelArtifacts(CompileRequest request,
                                                    absl::string_view stem,
                                                    absl::string_view dir,
                                                    const std::string& cuobjdump);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COMPILE_KERNEL_ARTIFACTS_H_
