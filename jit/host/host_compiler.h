// HostCompiler: the host backend's Compiler. Turns a CUDA translation unit into a shared
// object for the CPU with the system C++ compiler, behind the same interface (and so the
// same CachingCompiler decorator) as NVRTC.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<HostCompiler> cxx, HostCompiler::Create({}));
//   ASSIGN_OR_RETURN(std::unique_ptr<CachingCompiler> compiler,
//                    CachingCompiler::Create(std::move(cxx)));
//   CompileRequest request = HostCompileRequest(kernel_source);
//   ASSIGN_OR_RETURN(CompiledKernel k, compiler->Compile(request));
//   // k.cubin holds the shared object's bytes (an ELF image, like a cubin); k.arch "host".
//
// Compile lowers the source and its headers for the host (jit/host/source_lowering.h),
// writes them into a temporary directory (removed afterwards) and runs
//   <cxx> -std=<cpp_standard> -O1 -shared -fPIC -pthread -DWARPTRACE_HOST_BACKEND
//         -include cuda_on_cpu.h -I<dir> <options.extra_flags> <compiler extra_flags>
//         -o <dir>/kernel.so <dir>/<name>
// The request must carry the host headers (HostCompileRequest adds them). The compiler is
// HostCompilerOptions::compiler, else env WARPTRACE_HOST_CXX, else the first of g++,
// clang++, c++ on PATH. Version() names the compiler's path, its `--version` line, the host
// ABI version and the compiler's extra flags, so all of them are part of a cache key.
//
// Thread-safe.
#ifndef WARPTRACE_JIT_HOST_HOST_COMPILER_H_
#define WARPTRACE_JIT_HOST_HOST_COMPILER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/compiler.h"
#include "jit/kernel_source.h"

namespace warptrace::host {

struct HostCompilerOptions {
  // A path, or a name looked up on PATH. Empty: env WARPTRACE_HOST_CXX, else g++, clang++,
  // c++.
  std::string compiler;
  // Appended to every command line (e.g. {"-O2"}, {"-fsanitize=thread"}).
  std::vector<std::string> extra_flags;
};

class HostCompiler final : public Compiler {
 public:
  // Finds the compiler and asks its version. Errors: NotFound when no compiler is found (the
  // message says what was looked for and how to set one); Unavailable when it cannot be run.
  static absl::StatusOr<std::unique_ptr<HostCompiler>> Create(HostCompilerOptions options);

  // Errors: InvalidArgument when the source does not compile (the command line, the
  // compiler's output with the offending lines quoted); Unavailable when the compiler cannot
  // be run or the temporary directory written.
  absl::StatusOr<CompiledKernel> Compile(const CompileRequest& request) override;
  // "host c++ <path> (<version line>) abi <N> [flags]".
  std::string Version() const override;

  const std::string& path() const { return path_; }
  const std::string& version_line() const { return version_line_; }

 private:
  HostCompiler(HostCompilerOptions options, std::string path, std::string version_line)
      : options_(std::move(options)), path_(std::move(path)),
        version_line_(std::move(version_line)) {}

  HostCompilerOptions options_;
  std::string path_;
  std::string version_line_;
};

// The request that compiles `source` for the host: "<kernel_name>.cc", the source's headers
// followed by the host backend's (cuda_on_cpu.h, host_abi.h, warptrace_primitives.cuh, and
// the CUDA header names they stand in for), C++17.
CompileRequest HostCompileRequest(const KernelSource& source);

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_HOST_COMPILER_H_
