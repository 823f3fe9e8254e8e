// Compiler: turns one CUDA translation unit into a cubin (and PTX) for one GPU architecture.
//
// The interface the devices compile through. Implementations: NvrtcCompiler (NVRTC, no GPU
// needed) and CachingCompiler (a decorator that remembers results in memory and on disk).
//
//   NvrtcCompiler nvrtc;
//   CompileRequest request;
//   request.name = "axpy.cu";
//   request.source = kernel_source.source;
//   request.headers = kernel_source.headers;     // in-memory #include "..." files
//   request.options.target = CudaTarget::Default();  // sm_90
//   ASSIGN_OR_RETURN(CompiledKernel compiled, nvrtc.Compile(request));
//   // compiled.cubin is an ELF image for cuModuleLoadData.
//
// Thread-safety: every implementation's Compile and Version may be called concurrently.
#ifndef WARPTRACE_JIT_COMPILE_COMPILER_H_
#define WARPTRACE_JIT_COMPILE_COMPILER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "format/embedded_headers.h"
#include "jit/target/cuda_target.h"

namespace warptrace {

struct CompileOptions {
  // Target architecture (a cubin for it). The default is the H100/H200's
  // (CudaTarget::Default()); CudaDevice passes its own.
  CudaTarget target = CudaTarget::Default();
  // Emit line information (-lineinfo) so profilers and sanitizers can map SASS to source.
  bool line_info = true;
  // Language standard passed as -std=<cpp_standard>.
  std::string cpp_standard = "c++17";
  // Appended verbatim after the options above, e.g. {"-DTILE=64", "--use_fast_math"}.
  std::vector<std::string> extra_flags;
  friend bool operator==(const CompileOptions&, const CompileOptions&) = default;
};

struct CompileRequest {
  // The translation unit's file name as it appears in diagnostics ("gemm.cu").
  std::string name;
  std::string source;
  // Headers resolvable by `#include "<name>"` (and -include), never read from disk.
  std::vector<EmbeddedFile> headers;
  CompileOptions options;
};

struct CompiledKernel {
  std::string cubin;  // ELF image for `arch`, loadable with cuModuleLoadData
  std::string ptx;    // the PTX it was assembled from (for inspection)
  std::string log;    // the compiler's log: warnings on success (often empty)
  std::string arch;   // the architecture compiled for, as named (CudaTarget::ToString, "sm_90a")
  // Wall time of the compilation that produced this result; for a cache hit, the time the
  // cache lookup took.
  absl::Duration compile_time;
  bool from_cache = false;
};

class Compiler {
 public:
  virtual ~Compiler() = default;

  // Compiles `request`. Errors: InvalidArgument when the source does not compile (the
  // message carries the compiler's log and quotes the offending lines) or an option is
  // rejected; other codes for failures of the compiler itself.
  virtual absl::StatusOr<CompiledKernel> Compile(const CompileRequest& request) = 0;

  // Identifies the compiler and its version ("nvrtc 13.0"); part of every cache key, so a
  // new compiler never serves an old compiler's output.
  virtual std::string Version() const = 0;
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COMPILE_COMPILER_H_
