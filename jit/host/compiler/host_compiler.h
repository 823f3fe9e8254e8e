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
// Compile lowers the source and its headers for the host (jit/host/compiler/source_lowering.h),
// writes them into a temporary directory (removed afterwards) and runs
//   <cxx> -std=<cpp_standard> -O1 -shared -fPIC -pthread -DWARPTRACE_HOST_BACKEND
//         -include cuda_on_cpu.h -I<dir> <options.extra_flags> <compiler extra_flags>
//         [-fuse-ld=gold -Wl,-soname,<kernel>.so]
//         -o <dir>/kernel.so <dir>/<name>
// With g++, cuda_on_cpu.h (and the host headers it includes, which are not lowered and so
// the same for every kernel) is parsed once into a precompiled header built with exactly
// those flags (jit/host/compiler/precompiled_header.h), and the compile force-includes that instead:
// `-include <pch entry>/cuda_on_cpu.h -Winvalid-pch`. The shared object is the same with
// or without it. A PCH that cannot be built is not used; a compile the PCH troubled (the
// compiler rejected or could not read it, or crashed) is run again without it, and that
// PCH is dropped. clang++ gets its own PCH the same way (a .pch, which it also finds beside
// the -include'd header); its shared object has the same functions, possibly in another
// order. Any other compiler compiles without a PCH.
// The request must carry the host headers (HostCompileRequest adds them). The compiler is
// HostCompilerOptions::compiler, else env WARPTRACE_HOST_CXX, else the first of g++,
// clang++, c++ on PATH. Version() names the compiler's path, its `--version` line, the host
// ABI version, the linker when it is not the default and the compiler's extra flags, so all
// of them are part of a cache key.
//
// Thread-safe.
#ifndef WARPTRACE_JIT_HOST_HOST_COMPILER_H_
#define WARPTRACE_JIT_HOST_HOST_COMPILER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/builder/kernel_source.h"
#include "jit/compile/compiler.h"
#include "jit/host/compiler/precompiled_header.h"

namespace warptrace::host {

struct HostCompilerOptions {
  // A path, or a name looked up on PATH. Empty: env WARPTRACE_HOST_CXX, else g++, clang++,
  // c++.
  std::string compiler;
  // Appended to every command line (e.g. {"-O2"}, {"-fsanitize=thread"}).
  std::vector<std::string> extra_flags;
  // The sanitizer's checks (host_abi.h WARPTRACE_HOST_SANITIZE_* bits; 0: off): compiles
  // with -fsanitize=thread's instrumentation (every load and store calls the runtime; the
  // object is linked apart, with no sanitizer runtime), -DWARPTRACE_HOST_SANITIZE=<checks>
  // and a statement marker before each builder statement (source_lowering.h
  // MarkStatements). Part of the flags, so of the cache key and the precompiled header's.
  uint32_t sanitize = 0;
  // Precompile cuda_on_cpu.h (g++ and clang++, see above). Results are the same either way.
  bool use_precompiled_header = true;
  // Link with gold (-fuse-ld=gold) when ld.gold is on PATH: a third of the default ld's
  // time per kernel. False: the compiler's default linker.
  bool fast_linker = true;
  // Where precompiled headers are kept for later processes (HostDevice passes its cache
  // directory); empty: this process only.
  std::string precompiled_header_directory;
  // The store; nullptr: PrecompiledHeaders::ForProcess(). Not owned: must outlive the
  // compiler.
  PrecompiledHeaders* precompiled_headers = nullptr;
};

struct HostCompilerStats {
  uint64_t compiles = 0;           // runs of Compile that reached the compiler
  uint64_t with_pch = 0;           // of those, compiled with a precompiled header
  uint64_t pch_builds = 0;         // precompiled headers this compiler built
  uint64_t pch_fallbacks = 0;      // compiles run again without a PCH that troubled them
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
  // Whether compiles use a precompiled header (the option, and the compiler is GCC).
  bool uses_precompiled_header() const { return pch_store_ != nullptr; }
  HostCompilerStats stats() const;

 private:
  HostCompiler(HostCompilerOptions options, std::string path, std::string version_line,
               std::string linker, PrecompiledHeaders* pch_store, std::string pch_suffix)
      : options_(std::move(options)), path_(std::move(path)),
        version_line_(std::move(version_line)), linker_(std::move(linker)),
        pch_store_(pch_store), pch_suffix_(std::move(pch_suffix)) {}

  // The precompiled header for a compile of `request` with `flags`, or nullopt to compile
  // without one.
  std::optional<PrecompiledHeader> PchFor(const CompileRequest& request,
                                          const std::vector<std::string>& flags);

  HostCompilerOptions options_;
  std::string path_;
  std::string version_line_;
  std::string linker_;  // -fuse-ld=<linker_> when not empty
  PrecompiledHeaders* const pch_store_;  // null: no PCH
  const std::string pch_suffix_;         // ".gch" (g++), ".pch" (clang++), "" (neither)
  std::atomic<uint64_t> compiles_{0}, with_pch_{0}, pch_builds_{0}, pch_fallbacks_{0};
};

// The request that compiles `source` for the host: "<kernel_name>.cc", the source's headers
// followed by the host backend's (cuda_on_cpu.h, host_abi.h, warptrace_primitives.cuh, and
// the CUDA header names they stand in for), C++17.
CompileRequest HostCompileRequest(const KernelSource& source);

// The flags sanitize mode adds for the checks `checks` (HostCompilerOptions::sanitize) with
// the compiler whose --version printed `version` (the switches it has: host_compiler.cc).
std::vector<std::string> SanitizeFlags(uint32_t checks, absl::string_view version);

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_HOST_COMPILER_H_
