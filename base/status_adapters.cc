#include "base/status_adapters.h"

#include <cerrno>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace warptrace {

absl::StatusCode StatusCodeFromErrorCode(const std::error_code& ec) {
  if (!ec) return absl::StatusCode::kOk;
  // std::errc values compare equal to system errors of the same errno (generic category
  // equivalence), so this works for errors from both std:: and llvm::sys calls.
  const std::error_condition c = ec.default_error_condition();
  if (c.category() != std::generic_category()) return absl::StatusCode::kUnknown;
  switch (c.value()) {
    case ENOENT:
    case ENOTDIR:
      return absl::StatusCode::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::StatusCode::kPermissionDenied;
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case ENOMEM:
    case EMFILE:
    case ENFILE:
      return absl::StatusCode::kResourceExhausted;
    case EEXIST:
      return absl::StatusCode::kAlreadyExists;
    case EISDIR:
    case ENOTEMPTY:
    case EXDEV:
    case ETXTBSY:
    case ELOOP:
      return absl::StatusCode::kFailedPrecondition;
    case EINVAL:
    case ENAMETOOLONG:
      return absl::StatusCode::kInvalidArgument;
    case ETIMEDOUT:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      return absl::StatusCode::kUnavailable;
  }
}

absl::Status ToStatus(const std::error_code& ec, absl::string_view context) {
  if (!ec) return absl::OkStatus();
  return absl::Status(StatusCodeFromErrorCode(ec), absl::StrCat(context, ": ", ec.message()));
}

absl::Status ToStatus(llvm::Error error, absl::string_view context) {
  if (!error) return absl::OkStatus();
  absl::StatusCode code = absl::StatusCode::kOk;
  std::string text;
  llvm::handleAllErrors(std::move(error), [&](const llvm::ErrorInfoBase& info) {
    if (code == absl::StatusCode::kOk) {
      const std::error_code ec = info.convertToErrorCode();
      code = ec == llvm::inconvertibleErrorCode() ? absl::StatusCode::kUnknown
                                                  : StatusCodeFromErrorCode(ec);
      if (code == absl::StatusCode::kOk) code = absl::StatusCode::kUnknown;
    }
    if (!text.empty()) text += "; ";
    text += info.message();
  });
  return absl::Status(code, absl::StrCat(context, ": ", text));
}

}  // namespace warptrace
