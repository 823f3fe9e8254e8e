#include "jit/host/compiler/host_compiler.h"

#include <cstdlib>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "base/temp_dir.h"
#include "jit/compile/diagnostics.h"
#include "jit/host/device/embedded_host_headers.h"
#include "jit/host/device/host_abi.h"
#include "jit/host/compiler/source_lowering.h"

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

// The precompiled header suffix of the compiler whose `--version` printed this, "" when it
// is neither GCC (which names its copyright holder) nor clang.
std::string PchSuffix(absl::string_view version_output) {
  if (absl::StrContains(version_output, "clang")) return ".pch";
  if (absl::StrContains(version_output, "Free Software Foundation")) return ".gch";
  return "";
}

// The host headers as a compile writes them (the last of each name wins), cuda_on_cpu.h
// first; empty when the request has no cuda_on_cpu.h.
std::vector<EmbeddedFile> HostHeadersOf(const CompileRequest& request) {
  std::vector<EmbeddedFile> headers;
  for (const EmbeddedFile& host : EmbeddedHostHeaders()) {
    const EmbeddedFile* last = nullptr;
    for (const EmbeddedFile& header : request.headers) {
      if (header.name == host.name) last = &header;
    }
    if (last == nullptr) continue;
    if (last->name == "cuda_on_cpu.h") {
      headers.insert(headers.begin(), *last);
    } else {
      headers.push_back(*last);
    }
  }
  if (headers.empty() || headers[0].name != "cuda_on_cpu.h") headers.clear();
  return headers;
}

// Lowers the source and its headers into `dir` (host headers as they are); returns the
// files as the caller wrote them, for diagnostics. Lowering keeps lines in place.
// `sanitize`: with a statement marker before each builder statement of the source.
absl::StatusOr<std::vector<EmbeddedFile>> WriteInputs(const CompileRequest& request,
                                                    const TempDir& dir, bool sanitize) {
  uint32_t next_site = 0;
  std::vector<EmbeddedFile> files = {{request.name, request.source}};
  const WriteOptions input = {.role = "host compiler input"};
  std::string lowered = LowerForHost(request.source, &next_site);
  if (sanitize) lowered = MarkStatements(lowered);
  RETURN_IF_ERROR(WriteFileAtomically(dir.File(request.name), lowered, input));
  for (const EmbeddedFile& header : request.headers) {
    RETURN_IF_ERROR(WriteFileAtomically(dir.File(header.name),
                                        IsHostHeader(header.name)
                                            ? header.contents
                                            : LowerForHost(header.contents, &next_site),
                                        input));
    files.push_back({header.name, header.contents});
  }
  return files;
}

// A compile's flags: `base` before -include and -I, `extra` after them, then `link`, which
// only the link reads (not part of what a precompiled header must match).
struct Flags {
  std::vector<std::string> base;
  std::vector<std::string> extra;
  std::vector<std::string> link;
  // The flags that compile (a precompiled header is built with exactly these).
  std::vector<std::string> All() const {
    std::vector<std::string> all = base;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  }
};

Flags FlagsFor(const CompileRequest& request, const std::string& linker,
               const std::vector<std::string>& compiler_flags) {
  Flags flags;
  flags.base = {absl::StrCat("-std=", request.options.cpp_standard), "-O1", "-shared", "-fPIC",
                "-pthread", "-DWARPTRACE_HOST_BACKEND"};
  // The kernel is an extern "C" function named as the user chose: its calls bind to its own
  // definition, not to a same-named function the process has (curses' raw(), libc's
  // getpid()), which ELF interposition would otherwise call instead.
  flags.link.push_back("-Wl,-Bsymbolic-functions");
  if (!linker.empty()) {
    flags.link.push_back(absl::StrCat("-fuse-ld=", linker));
    // gold names the object's version definition after the output path (a temporary
    // directory) unless it has a soname: with one, the same kernel links to the same bytes.
    flags.link.push_back(absl::StrCat("-Wl,-soname,", absl::StripSuffix(request.name, ".cc"),
                                      ".so"));
  }
  flags.extra = request.options.extra_flags;
  flags.extra.insert(flags.extra.end(), compiler_flags.begin(), compiler_flags.end());
  return flags;
}

// <cxx> <base> -include <include> -I<dir> <extra> <link> [-Winvalid-pch] -o <output>
//   <dir>/<name>; with `object`: <link> becomes -c (the caller links with LinkArgv).
std::vector<std::string> Argv(const std::string& cxx, const Flags& flags,
                              const std::string& include, const TempDir& dir,
                              const std::string& output, const std::string& name, bool pch,
                              bool object) {
  std::vector<std::string> argv = {cxx};
  argv.insert(argv.end(), flags.base.begin(), flags.base.end());
  // __FILE__ (barrier and assert messages) names the kernel's file, not the temporary
  // directory it was compiled in (gone after a successful compile).
  argv.insert(argv.end(), {"-include", include, absl::StrCat("-I", dir.path()),
                           absl::StrCat("-fmacro-prefix-map=", dir.path(), "/=")});
  argv.insert(argv.end(), flags.extra.begin(), flags.extra.end());
  if (object) {
    argv.push_back("-c");
  } else {
    argv.insert(argv.end(), flags.link.begin(), flags.link.end());
  }
  if (pch) argv.push_back("-Winvalid-pch");
  argv.insert(argv.end(), {"-o", output, dir.File(name)});
  return argv;
}

// <cxx> -shared -fPIC -pthread <link> --wrap=mem* -o <output> <object>: links a
// sanitize-mode object without -fsanitize, so no sanitizer runtime comes with it (its
// callbacks are the kernel's own, sanitize_host.h, and so are the checks of the memcpy,
// memmove and memset calls the compiler kept, which --wrap sends to them).
std::vector<std::string> LinkArgv(const std::string& cxx, const Flags& flags,
                                  const std::string& object, const std::string& output) {
  std::vector<std::string> argv = {cxx, "-shared", "-fPIC", "-pthread",
                                   "-Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset"};
  argv.insert(argv.end(), flags.link.begin(), flags.link.end());
  argv.insert(argv.end(), {"-o", output, object});
  return argv;
}

// Whether a compile with a PCH says the PCH troubled it: the compiler rejected it (the
// -Winvalid-pch warning), could not read it, or crashed (exit codes other than 0 and 1, or
// no exit at all). An ordinary error in the kernel says none of that.
bool PchTroubled(const absl::StatusOr<ProgramResult>& result) {
  if (!result.ok()) return true;
  for (absl::string_view sign : {"-Winvalid-pch", "PCH", ".gch", "internal compiler error"}) {
    if (absl::StrContains(result->output, sign)) return true;
  }
  return result->exit_code != 0 && result->exit_code != 1;
}

}  // namespace

// gold when the system has it (binutils ships it beside ld): it links a kernel's shared
// object in 0.02 s against the default ld's 0.07 s (of a 0.21 s compile with the PCH; perf:
// ld was 27% of the e2e host suite's CPU). Empty: the compiler's default linker.
// The major version in a compiler's --version output ("g++ (Debian 12.2.0-14) 12.2.0": 12;
// "g++ (GCC) 8.5.0 20210514 (Red Hat 8.5.0-18)": 8; "Debian clang version 14.0.6": 14); 0
// when none is found.
int CompilerMajor(absl::string_view version) {
  absl::string_view first = version.substr(0, version.find('\n'));
  size_t at = first.find("clang version ");
  if (at != absl::string_view::npos) {
    first.remove_prefix(at + 14);
  } else if (const size_t paren = first.find(") "); paren != absl::string_view::npos) {
    first.remove_prefix(paren + 2);  // GCC: the word after "(<vendor> <package version>)"
  }
  int major = 0;
  for (const char c : first) {
    if (c < '0' || c > '9') break;
    major = major * 10 + (c - '0');
  }
  return major;
}

// Sanitize mode: the compiler's ThreadSanitizer instrumentation without function entry/exit
// hooks, so every load and store the optimizer keeps (a read-modify-write as a read and a
// write) calls a __tsan_{read,write}N callback, which sanitize_host.h defines; the object is
// linked without -fsanitize (Compile), so no sanitizer runtime comes with it. memcpy,
// memmove and memset stay calls, which the link sends to their checks (LinkArgv): the
// instrumentation does not see the copies the compiler would expand inline (the emulation's
// own copies are __builtin_memcpy). Older compilers lack some switches: GCC before 10 has no
// tsan-instrument-func-entry-exit (its hooks then call sanitize_host.h's no-ops); clang
// before 12 drops the read of a read-modify-write (no -tsan-instrument-read-before-write);
// clang before 14 has no disable_sanitizer_instrumentation, which keeps the atomic
// callbacks' own atomics uninstrumented, so its atomics are not instrumented at all (the
// CUDA atomics report themselves; a compiler builtin in a kernel then goes unseen).
std::vector<std::string> SanitizeFlags(uint32_t checks, absl::string_view version) {
  std::vector<std::string> flags = {absl::StrCat("-DWARPTRACE_HOST_SANITIZE=", checks),
                                    "-fsanitize=thread", "-fno-builtin-memcpy",
                                    "-fno-builtin-memmove", "-fno-builtin-memset"};
  const int major = CompilerMajor(version);
  if (absl::StrContains(version, "clang")) {
    flags.insert(flags.end(), {"-mllvm", "-tsan-instrument-func-entry-exit=0"});
    if (major >= 12) {
      flags.insert(flags.end(), {"-mllvm", "-tsan-instrument-read-before-write=1"});
    }
    if (major < 14) flags.insert(flags.end(), {"-mllvm", "-tsan-instrument-atomics=0"});
  } else if (major >= 10) {
    flags.insert(flags.end(), {"--param", "tsan-instrument-func-entry-exit=0"});
  }
  return flags;
}

std::string FastLinker() {
  return FindProgram("ld.gold").ok() ? "gold" : "";
}

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
  PrecompiledHeaders* pch_store = nullptr;
  std::string pch_suffix = PchSuffix(version.output);
  if (options.use_precompiled_header && !pch_suffix.empty()) {
    pch_store = options.precompiled_headers != nullptr ? options.precompiled_headers
                                                       : &PrecompiledHeaders::ForProcess();
  }
  std::string linker = options.fast_linker ? FastLinker() : "";
  if (options.sanitize != 0) {
    const std::vector<std::string> flags =
        SanitizeFlags(options.sanitize, version.output);
    options.extra_flags.insert(options.extra_flags.end(), flags.begin(), flags.end());
  }
  return std::unique_ptr<HostCompiler>(
      new HostCompiler(std::move(options), std::move(compiler), std::move(version_line),
                       std::move(linker), pch_store, std::move(pch_suffix)));
}

std::string HostCompiler::Version() const {
  return absl::StrCat("host c++ ", path_, " (", version_line_, ") abi ",
                      WARPTRACE_HOST_ABI_VERSION, linker_.empty() ? "" : " ld ", linker_, " [",
                      absl::StrJoin(options_.extra_flags, " "), "]");
}

namespace {

// The first line of compiler output whose location is a builder path of kernel `name`
// ("kernel gemm > loop k > statement `...`:1:7: error: ..." or "...: required from here"
// first, else any, such as "...: In function ..."), trimmed; "" when none.
std::string FirstBuilderPathLine(absl::string_view output, absl::string_view name) {
  const std::string prefix = absl::StrCat("kernel ", name, " >");
  std::string first;  // any line at a builder path ("...: In function ...")
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::StartsWith(line, prefix)) continue;
    if (absl::StrContains(line, ": error: ") || absl::StrContains(line, "required from")) {
      return std::string(line);
    }
    if (first.empty()) first = std::string(line);
  }
  return first;
}

}  // namespace

absl::StatusOr<CompiledKernel> HostCompiler::Compile(const CompileRequest& request) {
  const absl::Time start = absl::Now();
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("warptrace-host"));
  ASSIGN_OR_RETURN(std::vector<EmbeddedFile> files, WriteInputs(request, dir, options_.sanitize != 0));
  const Flags flags = FlagsFor(request, linker_, options_.extra_flags);
  const std::string output = dir.File("kernel.so");
  // Sanitize mode compiles an object and links it apart (LinkArgv).
  const bool link_apart = options_.sanitize != 0;
  const std::string object = link_apart ? dir.File("kernel.o") : output;
  ++compiles_;
  std::vector<std::string> argv;
  absl::StatusOr<ProgramResult> result = absl::UnknownError("the host compiler did not run");
  if (std::optional<PrecompiledHeader> pch = PchFor(request, flags.All())) {
    argv = Argv(path_, flags, pch->include_path, dir, object, request.name, /*pch=*/true,
                link_apart);
    result = RunProgram(argv);
    if (PchTroubled(result)) {
      // The plain compile decides; this PCH is not used again.
      pch_store_->Invalidate(*pch);
      ++pch_fallbacks_;
      argv.clear();
    } else {
      ++with_pch_;
    }
  }
  if (argv.empty()) {
    argv = Argv(path_, flags, dir.File("cuda_on_cpu.h"), dir, object, request.name, false,
                link_apart);
    result = RunProgram(argv);
  }
  if (link_apart && result.ok() && result->exit_code == 0) {
    argv = LinkArgv(path_, flags, object, output);
    std::string compile_output = std::move(result->output);
    result = RunProgram(argv);
    if (result.ok()) result->output = compile_output + result->output;
  }
  RETURN_IF_ERROR(result.status());
  const std::string kernel_name(absl::StripSuffix(request.name, ".cc"));
  if (result->exit_code != 0) {
    // The inputs stay where the command line says, with the full output beside them; the
    // message gives each error once, with its source line quoted, and the full output only
    // when no error line could be quoted.
    const std::string output_path = dir.File("compiler_output.txt");
    const bool saved = WriteFileAtomically(output_path, result->output).ok();
    const std::string kept = dir.Keep();
    const std::string quoted = QuoteOffendingLines(result->output, files);
    const bool output_inline = quoted.empty() || !saved;
    // First the line that names a builder path (the construct or raw statement at fault,
    // also when the error itself is inside a header it instantiated), then the rest; the
    // command line last.
    const std::string at = FirstBuilderPathLine(result->output, kernel_name);
    std::string rest = quoted;  // each error once: not again among the quoted ones
    if (const size_t pos = at.empty() ? std::string::npos : rest.find(at);
        pos != std::string::npos) {
      const size_t end = rest.find('\n', pos);
      rest.erase(pos, end == std::string::npos ? std::string::npos : end - pos + 1);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "host compiler failed on kernel ", kernel_name, " (exit ", result->exit_code, ")",
        at.empty() ? "" : ": ", at, "\n", rest, "compiler output:",
        output_inline ? absl::StrCat("\n", result->output) : absl::StrCat(" ", output_path),
        "\ncommand: ", absl::StrJoin(argv, " "), "\nthe source and headers are kept in ", kept,
        "\n"));
  }
  CompiledKernel compiled;
  ASSIGN_OR_RETURN(compiled.cubin,
                   ReadFile(output, {.role = "host compiler output", .register_as_input = false}));
  compiled.log = std::move(result->output);
  compiled.arch = "host";
  compiled.compile_time = absl::Now() - start;
  return compiled;
}

std::optional<PrecompiledHeader> HostCompiler::PchFor(const CompileRequest& request,
                                                      const std::vector<std::string>& flags) {
  if (pch_store_ == nullptr) return std::nullopt;
  PrecompiledHeaderRequest pch_request;
  pch_request.compiler = path_;
  pch_request.compiler_version = version_line_;
  pch_request.flags = flags;
  pch_request.headers = HostHeadersOf(request);
  pch_request.directory = options_.precompiled_header_directory;
  pch_request.suffix = pch_suffix_;
  if (pch_request.headers.empty()) return std::nullopt;
  // A PCH that cannot be had only costs time: the compile goes on without it.
  absl::StatusOr<PrecompiledHeader> pch = pch_store_->Get(pch_request);
  if (!pch.ok()) return std::nullopt;
  if (pch->built) ++pch_builds_;
  // In the plain compile, -I<dir> puts the kernel's own headers ahead of the system's: one
  // named like a system header the PCH read (a kernel's "math.h") would have been included
  // instead, so such a kernel compiles without the PCH.
  for (const EmbeddedFile& header : request.headers) {
    if (IsHostHeader(header.name)) continue;
    for (const std::string& dependency : pch->dependencies) {
      if (absl::EndsWith(dependency, absl::StrCat("/", header.name))) return std::nullopt;
    }
  }
  return *std::move(pch);
}

HostCompilerStats HostCompiler::stats() const {
  HostCompilerStats stats;
  stats.compiles = compiles_.load();
  stats.with_pch = with_pch_.load();
  stats.pch_builds = pch_builds_.load();
  stats.pch_fallbacks = pch_fallbacks_.load();
  return stats;
}

CompileRequest HostCompileRequest(const KernelSource& source) {
  CompileRequest request;
  request.name = absl::StrCat(source.kernel_name, ".cc");
  request.source = source.source;
  request.headers = source.headers;
  for (const EmbeddedFile& header : EmbeddedHostHeaders()) request.headers.push_back(header);
  // CUDA's header names resolve to stand-ins: cuda_on_cpu.h already defines their content,
  // but for the 16-bit float types, which exist (as with NVRTC) only once a kernel includes
  // <cuda_fp16.h> or <cuda_bf16.h>.
  for (const char* name : {"cuda_fp16.h", "cuda_bf16.h"}) {
    request.headers.push_back({name,
                               "// Host backend: __half and __nv_bfloat16 (and their pairs).\n"
                               "#define WARPTRACE_HOST_HALF_TYPES 1\n"
                               "#include \"half_types_on_cpu.h\"\n"});
  }
  for (const char* name : {"cuda_pipeline.h", "mma.h", "cuda_runtime.h", "vector_types.h"}) {
    request.headers.push_back(
        {name, "// Host backend: provided by cuda_on_cpu.h (force-included).\n"});
  }
  request.options.cpp_standard = "c++17";
  request.options.line_info = false;
  return request;
}

}  // namespace warptrace::host
