#include "base/exception_status.h"

#include <cerrno>
#include <exception>
#include <new>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace warptrace {

absl::Status StatusOfCurrentException() {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(
        kOutOfMemory,
        ": an allocation failed (the process's memory limit, e.g. ulimit -v, or the "
        "machine's memory): raise the limit, or ask for less (one thread, fewer outputs)"));
  } catch (const std::system_error& e) {
    const int code = e.code().value();
    if (e.code().category() == std::generic_category() ||
        e.code().category() == std::system_category()) {
      if (code == EAGAIN || code == ENOMEM) {
        return absl::ResourceExhaustedError(absl::StrCat(
            kOutOfMemory, ": could not start a thread (", e.what(),
            "): raise the memory or thread limit, or ask for fewer threads"));
      }
    }
    return absl::InternalError(absl::StrCat("internal error: ", e.what()));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("internal error: ", e.what()));
  } catch (...) {
    return absl::InternalError("internal error: an unknown exception");
  }
}

bool IsOutOfMemory(const absl::Status& status) {
  return absl::IsResourceExhausted(status) && absl::StartsWith(status.message(), kOutOfMemory);
}

}  // namespace warptrace
