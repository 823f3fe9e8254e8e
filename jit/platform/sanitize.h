// The host backend's sanitizer modes (HostDeviceOptions::sanitize, RunOptions::sanitize,
// the examples' --sanitize): which checks a kernel run on the host backend gets.
//
//   ASSIGN_OR_RETURN(SanitizeOptions checks, ParseSanitize("bounds,init"));
//   options.sanitize = checks;
//
// bounds: every shared-memory array (static, with redzones between them; the dynamic
//         shared memory against its extent) and every device buffer per allocation; a
//         message names the array or kernel argument, the index, its extent, the thread
//         and the builder statement.
// init:   a read of shared memory no thread of the block wrote.
// Races (a happens-before model over barriers, phases and async completions) are not
// checked yet: "races" is refused with a message saying so (docs/sanitizer.md).
// On a GPU (CudaDevice) sanitizing is not available: RunKernel ignores it there and says so
// in RunResult::device_reason.
#ifndef WARPTRACE_JIT_PLATFORM_SANITIZE_H_
#define WARPTRACE_JIT_PLATFORM_SANITIZE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace warptrace {

struct SanitizeOptions {
  bool bounds = false;
  bool init = false;

  bool any() const { return bounds || init; }
  bool operator==(const SanitizeOptions& o) const {
    return bounds == o.bounds && init == o.init;
  }
  bool operator!=(const SanitizeOptions& o) const { return !(*this == o); }
};

// "bounds,init" (either or both, comma-separated, in any order), "all" (both), or "none" /
// "". InvalidArgument naming the accepted values otherwise, and for "races" (not checked
// yet).
absl::StatusOr<SanitizeOptions> ParseSanitize(absl::string_view text);

// The checks as ParseSanitize reads them: "none", "all", or e.g. "bounds,init".
std::string SanitizeName(const SanitizeOptions& options);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_PLATFORM_SANITIZE_H_
