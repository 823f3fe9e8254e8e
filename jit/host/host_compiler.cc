#include "jit/host/host_compiler.h"

#include <cstdlib>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "jit/diagnostics.h"
#include "jit/host/embedded_host_headers.h"
#include "jit/host/host_abi.h"
#include "jit/host/source_lowering.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/status_macros.h"

namespace warptrace::host {
namespace {

// A directory removed with everything in it when this goes out of scope.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Create(absl::string_view prefix) {
    llvm::SmallString<128> path;
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
            llvm::StringRef(prefix.data(), prefix.size()), path)) {
      return absl::UnavailableError(
          absl::StrCat("cannot create a temporary directory: ", ec.message()));
    }
    return TempDir(std::string(path.str()));
  }
  TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, "")) {}
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    if (!path_.empty()) llvm::sys::fs::remove_directories(path_);
  }
  std::string File(absl::string_view name) const { return absl::StrCat(path_, "/", name); }
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

absl::Status WriteFile(const std::string& path, absl::string_view contents) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (!ec) {
    out << llvm::StringRef(contents.data(), contents.size());
    out.close();
    ec = out.error();
  }
  if (ec) return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    return absl::UnavailableError(
        absl::StrCat("cannot read ", path, ": ", buffer.getError().message()));
  }
  return std::string((*buffer)->getBuffer());
}

struct ProgramResult {
  int exit_code = 0;
  std::string output;  // stdout and stderr together
};

// Runs `argv` (argv[0] is the program path) with stdout+stderr captured in `dir`.
absl::StatusOr<ProgramResult> RunProgram(const std::vector<std::string>& argv,
                                         const TempDir& dir) {
  const std::string log_path = dir.File("output.log");
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  llvm::StringRef log(log_path);
  const llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), log, log};
  std::string error;
  bool execution_failed = false;
  ProgramResult result;
  result.exit_code = llvm::sys::ExecuteAndWait(argv[0], args, /*Env=*/llvm::None, redirects,
                                               /*SecondsToWait=*/0, /*MemoryLimit=*/0, &error,
                                               &execution_failed);
  if (execution_failed) {
    return absl::UnavailableError(
        absl::StrCat("cannot run ", absl::StrJoin(argv, " "), ": ", error));
  }
  ASSIGN_OR_RETURN(result.output, ReadFile(log_path));
  return result;
}

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
    if (candidate.find('/') != std::string::npos) {
      if (llvm::sys::fs::can_execute(candidate)) return candidate;
      continue;
    }
    if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(candidate)) return *path;
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
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("warptrace-host-cxx"));
  ASSIGN_OR_RETURN(ProgramResult version, RunProgram({compiler, "--version"}, dir));
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
  RETURN_IF_ERROR(
      WriteFile(dir.File(request.name), LowerForHost(request.source, &next_site)));
  for (const EmbeddedFile& header : request.headers) {
    RETURN_IF_ERROR(WriteFile(dir.File(header.name),
                              IsHostHeader(header.name)
                                  ? header.contents
                                  : LowerForHost(header.contents, &next_site)));
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
  ASSIGN_OR_RETURN(ProgramResult result, RunProgram(argv, dir));
  const std::string kernel_name(absl::StripSuffix(request.name, ".cc"));
  if (result.exit_code != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "host compiler failed on kernel ", kernel_name, " (exit ", result.exit_code, "): ",
        absl::StrJoin(argv, " "), "\n", QuoteOffendingLines(result.output, files),
        "compiler output:\n", result.output));
  }
  CompiledKernel compiled;
  ASSIGN_OR_RETURN(compiled.cubin, ReadFile(output));
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
