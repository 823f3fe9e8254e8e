// Adapters from the error types of the C++ standard library and LLVM to absl::Status.
//
// One mapping from errno values to canonical codes, used by every file, directory and
// process operation in the project, so the same failure has the same code everywhere:
//
//   errno                                        absl::StatusCode
//   ENOENT, ENOTDIR                              kNotFound
//   EACCES, EPERM, EROFS                         kPermissionDenied
//   ENOSPC, EDQUOT, EFBIG, ENOMEM, EMFILE,       kResourceExhausted
//   ENFILE
//   EEXIST                                       kAlreadyExists
//   EISDIR, ENOTEMPTY, EXDEV, ETXTBSY, ELOOP     kFailedPrecondition
//   EINVAL, ENAMETOOLONG                         kInvalidArgument
//   ETIMEDOUT                                    kDeadlineExceeded
//   anything else (EIO, EINTR, EAGAIN, EBUSY...) kUnavailable
//
// An llvm::Error that carries no error code (llvm::inconvertibleErrorCode(), e.g. a parse
// error made with createStringError) becomes kUnknown; callers that know better (a JSON
// parse error is bad input) should build their own Status instead.
//
// Messages are "<context>: <what the system said>", so the context should name the
// operation and its object, e.g.
//
//   if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
//     return ToStatus(ec, absl::StrCat("creating the output directory ", dir));
//   }
//   // NotFound: "creating the output directory /a/b: No such file or directory"
//
// Thread-safe (pure functions).
#ifndef WARPTRACE_BASE_STATUS_ADAPTERS_H_
#define WARPTRACE_BASE_STATUS_ADAPTERS_H_

#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/Error.h"

namespace warptrace {

// The canonical code for `ec` (the table above). kOk for a default (success) error_code.
absl::StatusCode StatusCodeFromErrorCode(const std::error_code& ec);

// `ec` as a Status with context; OkStatus() when `ec` is success.
absl::Status ToStatus(const std::error_code& ec, absl::string_view context);

// Consumes `error` (every payload of a list) and returns it as a Status with context; the
// code is the first payload's, through the table above. OkStatus() for Error::success().
absl::Status ToStatus(llvm::Error error, absl::string_view context);

}  // namespace warptrace

#endif  // WARPTRACE_BASE_STATUS_ADAPTERS_H_
