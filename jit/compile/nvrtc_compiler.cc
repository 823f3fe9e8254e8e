#include "jit/compile/nvrtc_compiler.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "base/temp_dir.h"
#include "jit/compile/diagnostics.h"
#include "jit/compile/nvrtc_program.h"
#include "jit/compile/nvrtc_status.h"

namespace warptrace {
namespace {

// A failed program's source and headers, written to a directory that stays, so the lines
// the message quotes can be looked at in context: "the source and headers are kept in
// <dir>\n", or "" when they could not be written (the message has the log either way).
std::string KeepInputs(const std::vector<EmbeddedFile>& files) {
  absl::StatusOr<TempDir> dir = TempDir::Create("warptrace-nvrtc");
  if (!dir.ok()) return "";
  for (const EmbeddedFile& file : files) {
    if (file.name.find('/') != std::string::npos ||
        !WriteFileAtomically(dir->File(file.name), file.contents, {.role = "NVRTC input"})
             .ok()) {
      return "";  // the directory goes with `dir`
    }
  }
  return absl::StrCat("the source and headers are kept in ", dir->Keep(), "\n");
}

}  // namespace

std::vector<std::string> NvrtcOptions(const CompileOptions& options) {
  std::vector<std::string> out = {absl::StrCat("-arch=", options.target.ToString()),
                                  absl::StrCat("-std=", options.cpp_standard)};
  if (options.line_info) out.push_back("-lineinfo");
  out.insert(out.end(), options.extra_flags.begin(), options.extra_flags.end());
  return out;
}

NvrtcCompiler::NvrtcCompiler() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS) {
    version_ = absl::StrCat("nvrtc ", major, ".", minor);
  } else {
    version_ = "nvrtc unknown";
  }
}

absl::StatusOr<CompiledKernel> NvrtcCompiler::Compile(const CompileRequest& request) {
  const absl::Time start = absl::Now();
  const std::string what = absl::StrCat(request.name, " for ", request.options.target.ToString());
  std::vector<const char*> header_contents, header_names;
  for (const EmbeddedFile& header : request.headers) {
    header_contents.push_back(header.contents.c_str());
    header_names.push_back(header.name.c_str());
  }
  NvrtcProgram program;
  RETURN_IF_ERROR(ToStatus(
      nvrtcCreateProgram(program.out(), request.source.c_str(), request.name.c_str(),
                         static_cast<int>(header_contents.size()), header_contents.data(),
                         header_names.data()),
      absl::StrCat("creating the program for ", what)));

  const std::vector<std::string> options = NvrtcOptions(request.options);
  std::vector<const char*> option_ptrs;
  for (const std::string& option : options) option_ptrs.push_back(option.c_str());

  const nvrtcResult compiled = nvrtcCompileProgram(
      program.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());
  ASSIGN_OR_RETURN(std::string log, program.Log(what));
  if (compiled != NVRTC_SUCCESS) {
    std::vector<EmbeddedFile> files = {{request.name, request.source}};
    for (const EmbeddedFile& header : request.headers) files.push_back({header.name, header.contents});
    const absl::Status status = ToStatus(compiled, absl::StrCat("compiling ", what));
    // Each error once: the quoted ones with their source line, then whatever else the log
    // says (notes, caret lines, errors without a line) as "the rest of the NVRTC log".
    const std::string quoted = QuoteOffendingLines(log, files);
    std::string rest;
    if (quoted.empty()) {
      rest = absl::StrCat("NVRTC log:\n", log);
      // The log may end without a newline ("Compilation terminated."): what follows starts
      // a line of its own.
      if (!rest.empty() && rest.back() != '\n') rest += '\n';
    } else {
      const std::set<absl::string_view> shown = absl::StrSplit(quoted, '\n', absl::SkipEmpty());
      for (absl::string_view line : absl::StrSplit(log, '\n', absl::SkipEmpty())) {
        if (!shown.contains(line)) absl::StrAppend(&rest, line, "\n");
      }
      if (!rest.empty()) rest = absl::StrCat("the rest of the NVRTC log:\n", rest);
    }
    return absl::Status(
        status.code(),
        absl::StrCat(status.message(), " (options: ", absl::StrJoin(options, " "), ")\n",
                     quoted, rest, KeepInputs(files)));
  }

  // ptxas compiles a kernel whose setmaxnreg it cannot honour, and warns; the kernel would
  // then run with the registers it started with: a silent loss the author must hear about.
  if (absl::StrContains(log, "C7508")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compiling ", what, ": ptxas ignored setmaxnreg (C7508): the register count at the "
        "kernel's entry is not fixed; give the kernel __launch_bounds__(threads, 1) "
        "(KernelBuilder::SetMaxRegisters does) and keep every setmaxnreg warpgroup-uniform\n"
        "NVRTC log:\n", log));
  }
  CompiledKernel out;
  out.arch = request.options.target.ToString();
  out.log = std::move(log);
  size_t size = 0;
  RETURN_IF_ERROR(ToStatus(nvrtcGetCUBINSize(program.get(), &size),
                              absl::StrCat("reading the cubin size of ", what)));
  out.cubin.resize(size);
  RETURN_IF_ERROR(ToStatus(nvrtcGetCUBIN(program.get(), out.cubin.data()),
                              absl::StrCat("reading the cubin of ", what)));
  RETURN_IF_ERROR(ToStatus(nvrtcGetPTXSize(program.get(), &size),
                              absl::StrCat("reading the PTX size of ", what)));
  out.ptx.resize(size);
  RETURN_IF_ERROR(ToStatus(nvrtcGetPTX(program.get(), out.ptx.data()),
                              absl::StrCat("reading the PTX of ", what)));
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  if (out.cubin.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NVRTC produced no cubin for ", what, ": the arch must be a real architecture sm_XY, "
        "not a virtual compute_XY"));
  }
  out.compile_time = absl::Now() - start;
  return out;
}

}  // namespace warptrace
