// Running another program: a compiler, a disassembler, a tool under test.
//
//   ASSIGN_OR_RETURN(std::string cxx, FindProgram("g++"));
//   ASSIGN_OR_RETURN(ProgramResult r, RunProgram({cxx, "--version"}));
//   if (r.exit_code != 0) return absl::InternalError(absl::StrCat("g++ failed:\n", r.output));
//
// The program's standard input is /dev/null; its standard output (and standard error, merged
// or separate) is captured through a temporary file, so output of any size is safe.
//
// Thread-safe: concurrent calls run concurrent processes.
#ifndef WARPTRACE_BASE_SUBPROCESS_H_
#define WARPTRACE_BASE_SUBPROCESS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace warptrace {

struct RunProgramOptions {
  // The program is killed after this long (rounded up to whole seconds).
  absl::Duration timeout = absl::InfiniteDuration();
  // true: standard error goes to ProgramResult::output with standard output, interleaved as
  // written; false: to ProgramResult::error_output.
  bool merge_stderr = true;
  // The environment ("NAME=value" entries) instead of this process's.
  std::optional<std::vector<std::string>> env = std::nullopt;
};

struct ProgramResult {
  int exit_code = 0;         // the program's exit status (0..255)
  std::string output;        // standard output (and standard error when merged)
  std::string error_output;  // standard error when not merged
};

// Runs argv[0] (a path, e.g. from FindProgram) with arguments argv[1...] and waits for it.
// A non-zero exit status is not an error: it is in ProgramResult::exit_code.
// InvalidArgument: argv is empty. NotFound: argv[0] is not an executable file.
// Unavailable: the program could not be started. DeadlineExceeded: it ran past the timeout
// and was killed. Internal: it died from a signal (the message has the signal and its
// output). Messages show the command line.
absl::StatusOr<ProgramResult> RunProgram(absl::Span<const std::string> argv,
                                         const RunProgramOptions& options = {});

// The absolute path of program `name`: `name` itself when it contains a '/' and is
// executable, else the first executable `name` on $PATH, else in `extra_dirs` (searched in
// order). NotFound naming what was searched otherwise.
absl::StatusOr<std::string> FindProgram(absl::string_view name,
                                        absl::Span<const std::string> extra_dirs = {});

}  // namespace warptrace

#endif  // WARPTRACE_BASE_SUBPROCESS_H_
