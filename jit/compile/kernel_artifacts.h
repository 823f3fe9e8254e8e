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
//   ASSIGN_OR_RETURN(KernelArtifacts kept, KeepKernelArtifacts(source, CudaTarget::Default(), "/tmp/k"));
//   // kept.ptxas.registers, kept.files
//
// Thread-safe (each call compiles with its own NVRTC program); two calls writing one
// kernel's files in one directory leave one complete version of each (atomic renames).
#ifndef WARPTRACE_JIT_COST_KERNEL_ARTIFACTS_H_
#define WARPTRACE_JIT_COST_KERNEL_ARTIFACTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/builder/kernel_source.h"
#include "jit/target/cuda_target.h"

namespace warptrace {

struct KernelArtifacts {
  std::vector<std::string> files;  // the paths written, in the order above
  std::string log;                 // NVRTC's log (ptxas's -v report)
  bool sass = false;               // whether K.<mode>.sass was written
};

// Compiles `source` as CudaDevice::Load would for `target` (a wgmma kernel asked for sm_90
// gets sm_90a), with ptxas's report and NVRTC's compile cache off, and
// writes the files above under `dir` (created if missing). `cuobjdump`: its path, or empty
// for no SASS. Errors: InvalidArgument with NVRTC's log when the source does not compile;
// the file system's errors naming the path; Internal when cuobjdump fails.
absl::StatusOr<KernelArtifacts> KeepKernelArtifacts(const KernelSource& source,
                                                    const CudaTarget& target,
                                                    absl::string_view dir,
                                                    const std::string& cuobjdump);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COST_KERNEL_ARTIFACTS_H_
