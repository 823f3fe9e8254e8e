#include "jit/compile/cuobjdump.h"

#include <glob.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "base/temp_dir.h"
#include "llvm/Support/FileSystem.h"

namespace warptrace {
namespace {

std::string Trim(absl::string_view s) { return std::string(absl::StripAsciiWhitespace(s)); }

// Runs `program args...` and returns its standard output and error.
absl::StatusOr<std::string> RunAndCapture(const std::string& program,
                                          const std::vector<std::string>& args) {
  std::vector<std::string> argv = {program};
  argv.insert(argv.end(), args.begin(), args.end());
  ASSIGN_OR_RETURN(ProgramResult result, RunProgram(argv, {.timeout = absl::Seconds(120)}));
  if (result.exit_code != 0) {
    return absl::InternalError(absl::StrFormat("running %s: exit code %d: %s",
                                               absl::StrJoin(argv, " "), result.exit_code,
                                               result.output));
  }
  return std::move(result.output);
}

}  // namespace

absl::StatusOr<CubinListing> DisassembleCubin(const std::string& cubin,
                                                const std::string& cuobjdump) {
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("cuobjdump"));
  const std::string path = dir.File("kernel.cubin");
  RETURN_IF_ERROR(WriteFileAtomically(path, cubin, {.role = "cubin"}));
  CubinListing listing;
  ASSIGN_OR_RETURN(listing.sass, RunAndCapture(cuobjdump, {"-sass", path}));
  ASSIGN_OR_RETURN(listing.res_usage, RunAndCapture(cuobjdump, {"-res-usage", path}));
  return listing;
}

namespace {

// The PyPI wheel nvidia-cuda-cuobjdump installs <site-packages>/nvidia/<cuXX>/bin/cuobjdump
// (tools/setup.sh: /usr/bin/python3 -m pip install, so /usr/local/lib/python3.X/
// dist-packages; a venv or `pip install --user` puts it under its own site-packages).
std::vector<std::string> KnownWheelPatterns() {
  std::vector<std::string> roots = {"/usr/local/lib/python3*/dist-packages",
                                    "/usr/lib/python3/dist-packages",
                                    "/usr/local/lib/python3*/site-packages"};
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv != nullptr && *venv != '\0') {
    roots.insert(roots.begin(), absl::StrCat(venv, "/lib/python3*/site-packages"));
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    roots.push_back(absl::StrCat(home, "/.local/lib/python3*/site-packages"));
  }
  std::vector<std::string> out;
  for (const std::string& root : roots) out.push_back(root + "/nvidia/*/bin/cuobjdump");
  return out;
}

// Every executable python3 on $PATH (in PATH order), then /usr/bin/python3 (the one
// tools/setup.sh installs the wheel for), without repeats.
std::vector<std::string> Pythons() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    dirs = absl::StrSplit(path, ':', absl::SkipEmpty());
  }
  dirs.push_back("/usr/bin");
  dirs.push_back("/usr/local/bin");
  std::vector<std::string> out;
  for (const std::string& dir : dirs) {
    const std::string candidate = dir + "/python3";
    if (!llvm::sys::fs::can_execute(candidate)) continue;
    if (std::find(out.begin(), out.end(), candidate) == out.end()) out.push_back(candidate);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> LocateCuobjdump(const std::string& flag) {
  if (!flag.empty()) {
    if (llvm::sys::fs::can_execute(flag)) return flag;
    return absl::NotFoundError(
        absl::StrCat("--cuobjdump=", flag, " is not an executable file"));
  }
  if (const char* env = std::getenv("CUOBJDUMP"); env != nullptr && *env != '\0') {
    if (llvm::sys::fs::can_execute(env)) return std::string(env);
    return absl::NotFoundError(
        absl::StrCat("$CUOBJDUMP=", env, " is not an executable file"));
  }
  std::vector<std::string> tried = {"$CUOBJDUMP (unset)"};
  if (absl::StatusOr<std::string> found =
          FindProgram("cuobjdump", {std::string("/usr/local/cuda/bin")});
      found.ok()) {
    return *found;
  }
  tried.push_back("cuobjdump on $PATH");
  tried.push_back("/usr/local/cuda/bin/cuobjdump");
  for (const std::string& pattern : KnownWheelPatterns()) {
    glob_t matches{};
    if (glob(pattern.c_str(), 0, nullptr, &matches) == 0) {
      for (size_t i = 0; i < matches.gl_pathc; ++i) {
        const std::string candidate = matches.gl_pathv[i];
        if (llvm::sys::fs::can_execute(candidate)) {
          globfree(&matches);
          return candidate;
        }
      }
    }
    globfree(&matches);
    tried.push_back(pattern);
  }
  for (const std::string& python : Pythons()) {
    absl::StatusOr<std::string> out = RunAndCapture(
        python, {"-c",
                 "import glob, nvidia\n"
                 "for d in nvidia.__path__:\n"
                 "  for p in sorted(glob.glob(d + '/*/bin/cuobjdump')): print(p)"});
    tried.push_back(absl::StrCat("the nvidia package of ", python,
                                 out.ok() ? "" : " (no `nvidia` package)"));
    if (!out.ok()) continue;
    for (absl::string_view line : absl::StrSplit(*out, '\n')) {
      const std::string candidate = Trim(line);
      if (!candidate.empty() && llvm::sys::fs::can_execute(candidate)) return candidate;
    }
  }
  return absl::NotFoundError(absl::StrCat(
      "no cuobjdump found; tried: ", absl::StrJoin(tried, ", "),
      ". Run tools/setup.sh (installs the PyPI wheels nvidia-cuda-cuobjdump and "
      "nvidia-cuda-nvdisasm for /usr/bin/python3), or pass --cuobjdump=PATH / set CUOBJDUMP"));
}

std::string FindCuobjdump(const std::string& flag) {
  absl::StatusOr<std::string> found = LocateCuobjdump(flag);
  return found.ok() ? *found : "";
}

}  // namespace warptrace
