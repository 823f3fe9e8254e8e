// StatusOfCurrentException: the exception being handled, as the Status a caller can act on.
// The boundaries where C++ exceptions stop (the C API's guard, the CLI's main) use it, so that
// running out of memory reads the same everywhere:
//
//   try {
//     return Dump();
//   } catch (...) {
//     const absl::Status status = StatusOfCurrentException();  // only inside a catch
//     ...
//   }
//
// Codes: ResourceExhausted for std::bad_alloc ("out of memory") and for a thread that could
// not be started for lack of memory (std::system_error EAGAIN or ENOMEM: "out of memory: could
// not start a thread ..."); Internal ("internal error: ...") for any other exception.
// IsOutOfMemory tells the two ResourceExhausted cases apart from the dump's other
// ResourceExhausted (events dropped: VerifyReport::ToStatus): its message starts with
// kOutOfMemory.
#ifndef WARPTRACE_BASE_EXCEPTION_STATUS_H_
#define WARPTRACE_BASE_EXCEPTION_STATUS_H_

#include "absl/status/status.h"

namespace warptrace {

inline constexpr char kOutOfMemory[] = "out of memory";

// Must be called from a catch block (std::current_exception() is not null).
absl::Status StatusOfCurrentException();

// Whether `status` is StatusOfCurrentException's out-of-memory error.
bool IsOutOfMemory(const absl::Status& status);

}  // namespace warptrace

#endif  // WARPTRACE_BASE_EXCEPTION_STATUS_H_
