#include "jit/host/host_compiler.h"

#include <cstdlib>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "base/temp_dir.h"
#include "jit/diagnostics.h"
#include "jit/host/embedded_host_headers.h"
#include "jit/host/host_abi.h"
#include "jit/host/source_lowering.h"

namespace warptrace::host {
namespace {

absl::StatusOr<std::string> FindCompiler(const HostCompilerOptions& options) {
  std::vector<std::string> candidates;
  std::string origin;
  if (!options.compiler.empty()) {
    candidates = {options.compiler};
    origin = "HostDeviceOptions::compiler";
  } else if (const char* env = std::getenv("WARPTRACE_HOST_CXX"); env != nullptr && *env) {
    candidates = {env};
    origin = "WARPTRACE_HOST_CXX";
  } else {
    candidates = {"g++", "clang++", "c++"};
    origin = "PATH";
  }
  for (const std::string& candidate : candidates) {
    if (absl::StatusOr<std::string> path = FindProgram(candidate); path.ok()) return path;
  }
  return absl::NotFoundError(absl::StrCat(
      "no C++ compiler for the host backend: looked for ", absl::StrJoin(candidates, ", "),
      " (from ", origin, "); install g++ or clang++, or set WARPTRACE_HOST_CXX to one"));
}

// The host backend's own headers, which are not lowered.
bool IsHostHeader(const std::string& name) {
  for (const EmbeddedFile& header : EmbeddedHostHeaders()) {
    if (header.name == name) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HostCompiler>> HostCompiler::Create(HostCompilerOptions options) {
  ASSIGN_OR_RETURN(std::string compiler, FindCompiler(options));
  ASSIGN_OR_RETURN(ProgramResult version, RunProgram({compiler, "--version"}));
  if (version.exit_code != 0) {
    return absl::UnavailableError(absl::StrCat("the host compiler ", compiler,
                                               " failed to report its version (exit ",
                                               version.exit_code, "): ", version.output));
  }
  std::string version_line(absl::StripAsciiWhitespace(
      std::vector<absl::string_view>(absl::StrSplit(version.output, '\n'))[0]));
  return std::unique_ptr<HostCompiler>(
      new HostCompiler(std::move(options), std::move(compiler), std::move(version_line)));
}

std::string HostCompiler::Version() const {
  return absl::StrCat("host c++ ", path_, " (", version_line_, ") abi ",
                      WARPTRACE_HOST_ABI_VERSION, " [", absl::StrJoin(options_.extra_flags, " "),
                      "]");
}

absl::StatusOr<CompiledKernel> HostCompiler::Compile(const CompileRequest& request) {
  const absl::Time start = absl::Now();
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("warptrace-host"));
  uint32_t next_site = 0;
  // Lowering keeps lines in place: diagnostics quote the files as the caller wrote them.
  std::vector<SourceFile> files = {{request.name, request.source}};
  const WriteOptions input = {.role = "host compiler input"};
  RETURN_IF_ERROR(WriteFileAtomically(dir.File(request.name),
                                      LowerForHost(request.source, &next_site), input));
  for (const EmbeddedFile& header : request.headers) {
    RETURN_IF_ERROR(WriteFileAtomically(dir.File(header.name),
                                        IsHostHeader(header.name)
                                            ? header.contents
                                            : LowerForHost(header.contents, &next_site),
                                        input));
    files.push_back({header.name, header.contents});
  }
  std::vector<std::string> argv = {path_,
                                   absl::StrCat("-std=", request.options.cpp_standard),
                                   "-O1",
                                   "-shared",
                                   "-fPIC",
                                   "-pthread",
                                   "-DWARPTRACE_HOST_BACKEND",
                                   "-include",
                                   dir.File("cuda_on_cpu.h"),
                                   absl::StrCat("-I", dir.path())};
  argv.insert(argv.end(), request.options.extra_flags.begin(), request.options.extra_flags.end());
  argv.insert(argv.end(), options_.extra_flags.begin(), options_.extra_flags.end());
  const std::string output = dir.File("kernel.so");
  argv.insert(argv.end(), {"-o", output, dir.File(request.name)});
  ASSIGN_OR_RETURN(ProgramResult result, RunProgram(argv));
  const std::string kernel_name(absl::StripSuffix(request.name, ".cc"));
  if (result.exit_code != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "host compiler failed on kernel ", kernel_name, " (exit ", result.exit_code, "): ",
        absl::StrJoin(argv, " "), "\n", QuoteOffendingLines(result.output, files),
        "compiler output:\n", result.output));
  }
  CompiledKernel compiled;
  ASSIGN_OR_RETURN(compiled.cubin,
                   ReadFile(output, {.role = "host compiler output", .register_as_input = false}));
  compiled.log = std::move(result.output);
  compiled.arch = "host";
  compiled.compile_time = absl::Now() - start;
  return compiled;
}

CompileRequest HostCompileRequest(const KernelSource& source) {
  CompileRequest request;
  request.name = absl::StrCat(source.kernel_name, ".cc");
  request.source = source.source;
  request.headers = source.headers;
  for (const EmbeddedFile& header : EmbeddedHostHeaders()) request.headers.push_back(header);
  // CUDA's header names resolve to stand-ins: cuda_on_cpu.h already defines their content.
  for (const char* name : {"cuda_fp16.h", "cuda_bf16.h", "cuda_pipeline.h", "mma.h",
                           "cuda_runtime.h", "vector_types.h"}) {
    request.headers.push_back(
        {name, "// Host backend: provided by cuda_on_cpu.h (force-included).\n"});
  }
  request.options.cpp_standard = "c++17";
  request.options.line_info = false;
  return request;
}

}  // namespace warptrace::host
