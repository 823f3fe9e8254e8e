// NvrtcCompiler: the Compiler backed by NVRTC (CUDA's runtime compiler library). Needs no GPU
// and no driver: it always really compiles, to PTX and to a cubin for the requested arch.
//
//   NvrtcCompiler nvrtc;
//   ASSIGN_OR_RETURN(CompiledKernel k, nvrtc.Compile(request));
//
// NVRTC options used: -arch=<arch> (sm_XY: a cubin is produced), -std=<cpp_standard>,
// -lineinfo when line_info, then extra_flags. Headers are passed in memory.
//
// Errors (Compile): InvalidArgument when the source does not compile or an option is
// invalid; the message names the request, the architecture and quotes each offending line,
// followed by NVRTC's full log. ResourceExhausted when NVRTC runs out of memory; Internal for
// any other NVRTC failure (the adapter is ToStatus in jit/compile/nvrtc_status.h).
//
// Thread-safe: NVRTC programs are independent; the object holds no mutable state.
#ifndef WARPTRACE_JIT_COMPILE_NVRTC_COMPILER_H_
#define WARPTRACE_JIT_COMPILE_NVRTC_COMPILER_H_

#include <nvrtc.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "jit/compile/compiler.h"

namespace warptrace {

// The NVRTC option list Compile passes for `options`, in order: -arch=<arch>,
// -std=<cpp_standard>, -lineinfo when line_info, then extra_flags. Exposed so that tools
// that drive NVRTC directly (tests/jit/compile_benchmark) compile exactly as Compile does.
std::vector<std::string> NvrtcOptions(const CompileOptions& options);

class NvrtcCompiler final : public Compiler {
 public:
  NvrtcCompiler();

  // A program NVRTC rejects: its status (InvalidArgument for a compile error) carries the
  // quoted error lines (jit/compile/diagnostics.h), the log, and the directory its source
  // and headers were written to and kept in ("the source and headers are kept in <dir>").
  absl::StatusOr<CompiledKernel> Compile(const CompileRequest& request) override;
  // "nvrtc <major>.<minor>".
  std::string Version() const override { return version_; }

 private:
  std::string version_;
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COMPILE_NVRTC_COMPILER_H_
