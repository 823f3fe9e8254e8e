#include "base/subprocess.h"

#include <cmath>
#include <cstdlib>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/file.h"
#include "base/status_adapters.h"
#include "base/temp_dir.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

namespace warptrace {
namespace {

unsigned TimeoutSeconds(absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) return 0;  // ExecuteAndWait: wait forever
  const double seconds = std::ceil(absl::ToDoubleSeconds(timeout));
  return seconds < 1 ? 1u : static_cast<unsigned>(std::min(seconds, 1e9));
}

}  // namespace

absl::StatusOr<ProgramResult> RunProgram(absl::Span<const std::string> argv,
                                         const RunProgramOptions& options) {
  if (argv.empty()) return absl::InvalidArgumentError("RunProgram: empty command line");
  const std::string command = absl::StrJoin(argv, " ");
  if (!llvm::sys::fs::can_execute(argv[0])) {
    return absl::NotFoundError(
        absl::StrCat("cannot run ", command, ": ", argv[0], " is not an executable file"));
  }
  absl::StatusOr<TempDir> dir = TempDir::Create("warptrace-run");
  if (!dir.ok()) return dir.status();
  const std::string out_path = dir->File("stdout");
  const std::string err_path = options.merge_stderr ? out_path : dir->File("stderr");
  const llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""),
                                                       llvm::StringRef(out_path),
                                                       llvm::StringRef(err_path)};
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  llvm::Optional<llvm::ArrayRef<llvm::StringRef>> env;
  std::vector<llvm::StringRef> env_refs;
  if (options.env.has_value()) {
    env_refs.assign(options.env->begin(), options.env->end());
    env = env_refs;
  }
  std::string error;
  bool execution_failed = false;
  const int rc = llvm::sys::ExecuteAndWait(argv[0], args, env, redirects,
                                           TimeoutSeconds(options.timeout), /*MemoryLimit=*/0,
                                           &error, &execution_failed);
  if (execution_failed) {
    return absl::UnavailableError(absl::StrCat("cannot run ", command, ": ", error));
  }
  const ReadOptions scratch = {.role = "program output", .register_as_input = false};
  ProgramResult result;
  result.exit_code = rc;
  absl::StatusOr<std::string> out = ReadFile(out_path, scratch);
  if (!out.ok()) return out.status();
  result.output = *std::move(out);
  if (!options.merge_stderr) {
    absl::StatusOr<std::string> err = ReadFile(err_path, scratch);
    if (!err.ok()) return err.status();
    result.error_output = *std::move(err);
  }
  if (rc < 0) {
    const std::string output = absl::StrCat(result.output, result.error_output);
    if (absl::StrContains(error, "timed out")) {
      return absl::DeadlineExceededError(
          absl::StrCat(command, " did not finish within ", absl::FormatDuration(options.timeout),
                       " and was killed; its output:\n", output));
    }
    return absl::InternalError(
        absl::StrCat(command, " terminated abnormally (", error, "); its output:\n", output));
  }
  return result;
}

absl::StatusOr<std::string> FindProgram(absl::string_view name,
                                        absl::Span<const std::string> extra_dirs) {
  const llvm::StringRef ref(name.data(), name.size());
  if (absl::StrContains(name, '/')) {
    if (llvm::sys::fs::can_execute(ref)) return std::string(name);
    return absl::NotFoundError(absl::StrCat(name, " is not an executable file"));
  }
  if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(ref)) return *path;
  if (!extra_dirs.empty()) {
    std::vector<llvm::StringRef> dirs(extra_dirs.begin(), extra_dirs.end());
    if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(ref, dirs)) return *path;
  }
  const char* path_env = std::getenv("PATH");
  return absl::NotFoundError(absl::StrCat(
      "cannot find the program ", name, " on PATH (", path_env == nullptr ? "" : path_env, ")",
      extra_dirs.empty() ? "" : absl::StrCat(" or in ", absl::StrJoin(extra_dirs, ", "))));
}

}  // namespace warptrace
