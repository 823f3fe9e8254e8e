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
// races:  two accesses of a shared-memory byte, at least one a write, that no barrier,
//         mbarrier phase or async completion (TMA, cp.async, wgmma, bulk store) orders
//         (jit/host/runtime/races.h): both accesses and the missing ordering named.
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
  bool races = false;

  bool any() const { return bounds || init || races; }
  bool operator==(const SanitizeOptions& o) const {
    return bounds == o.bounds && init == o.init && races == o.races;
  }
  bool operator!=(const SanitizeOptions& o) const { return !(*this == o); }
};

// "bounds,races,init" (any of them, comma-separated, in any order), "all" (every check), or
// "none" / "". InvalidArgument naming the accepted values otherwise.
absl::StatusOr<SanitizeOptions> ParseSanitize(absl::string_view text);

// The checks as ParseSanitize reads them: "none", "all", or e.g. "bounds,init".
std::string SanitizeName(const SanitizeOptions& options);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_PLATFORM_SANITIZE_H_
