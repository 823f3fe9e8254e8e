#include "jit/compile/nvrtc_status.h"

#include "absl/strings/str_cat.h"

namespace warptrace {
namespace {

absl::StatusCode CodeFor(nvrtcResult result) {
  switch (result) {
    case NVRTC_SUCCESS:
      return absl::StatusCode::kOk;
    case NVRTC_ERROR_COMPILATION:
    case NVRTC_ERROR_INVALID_OPTION:
    case NVRTC_ERROR_INVALID_INPUT:
    case NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID:
      return absl::StatusCode::kInvalidArgument;
    case NVRTC_ERROR_OUT_OF_MEMORY:
      return absl::StatusCode::kResourceExhausted;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status ToStatus(nvrtcResult result, absl::string_view context, absl::string_view log) {
  if (result == NVRTC_SUCCESS) return absl::OkStatus();
  return absl::Status(CodeFor(result),
                      absl::StrCat("NVRTC error: ", context, ": ", nvrtcGetErrorString(result),
                                   log.empty() ? "" : "\nNVRTC log:\n", log));
}

}  // namespace warptrace
