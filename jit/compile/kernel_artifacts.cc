#include "jit/compile/kernel_artifacts.h"

#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/status_adapters.h"
#include "base/status_macros.h"
#include "jit/compile/compiler.h"
#include "jit/compile/nvrtc_compiler.h"
#include "jit/compile/cuobjdump.h"
#include "llvm/Support/FileSystem.h"

namespace warptrace {

absl::StatusOr<KernelArtifacts> KeepKernelArtifacts(CompileRequest request,
                                                    absl::string_view stem_name,
                                                    absl::string_view dir,
                                                    const std::string& cuobjdump) {
  const std::string directory(dir);
  if (std::error_code ec = llvm::sys::fs::create_directories(directory)) {
    return ToStatus(ec, absl::StrCat("creating the kernel artifacts directory ", directory));
  }
  NvrtcCompiler compiler;
  // ptxas's report on every compile: NVRTC's own cache would skip ptxas.
  for (const char* flag : {"--ptxas-options=-v", "--no-cache"}) {
    request.options.extra_flags.push_back(flag);
  }
  ASSIGN_OR_RETURN(CompiledKernel compiled, compiler.Compile(request));
  KernelArtifacts kept;
  kept.log = compiled.log;
  const std::string stem = absl::StrCat(directory, "/", stem_name);
  auto write = [&](std::string path, absl::string_view contents) -> absl::Status {
    RETURN_IF_ERROR(WriteFileAtomically(path, contents));
    kept.files.push_back(std::move(path));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(write(stem + ".cu", request.source));
  for (const EmbeddedFile& header : request.headers) {
    RETURN_IF_ERROR(write(absl::StrCat(directory, "/", header.name), header.contents));
  }
  RETURN_IF_ERROR(write(stem + ".log", compiled.log));
  RETURN_IF_ERROR(write(stem + ".ptx", compiled.ptx));
  RETURN_IF_ERROR(write(stem + ".cubin", compiled.cubin));
  if (!cuobjdump.empty()) {
    ASSIGN_OR_RETURN(CubinListing listing, DisassembleCubin(compiled.cubin, cuobjdump));
    RETURN_IF_ERROR(write(stem + ".sass", listing.sass));
    kept.sass = true;
  }
  return kept;
}

}  // namespace warptrace
