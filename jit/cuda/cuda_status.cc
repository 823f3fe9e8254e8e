#include "jit/cuda/cuda_status.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "base/enum_table.h"

namespace warptrace {
namespace {

using DescribeFn = CUresult (*)(CUresult, const char**);
std::atomic<DescribeFn> g_get_name{nullptr};
std::atomic<DescribeFn> g_get_string{nullptr};

// The driver's names of the codes warptrace meets, for when no driver is loaded to name them
// (cuGetErrorName): the build machine has none.
#define WARPTRACE_CODE(code) {code, #code}
constexpr EnumTable<CUresult, 22> kBuiltinNames{"CUresult", {{
    WARPTRACE_CODE(CUDA_ERROR_INVALID_VALUE),
    WARPTRACE_CODE(CUDA_ERROR_OUT_OF_MEMORY),
    WARPTRACE_CODE(CUDA_ERROR_NOT_INITIALIZED),
    WARPTRACE_CODE(CUDA_ERROR_DEINITIALIZED),
    WARPTRACE_CODE(CUDA_ERROR_NO_DEVICE),
    WARPTRACE_CODE(CUDA_ERROR_INVALID_DEVICE),
    WARPTRACE_CODE(CUDA_ERROR_INVALID_IMAGE),
    WARPTRACE_CODE(CUDA_ERROR_INVALID_CONTEXT),
    WARPTRACE_CODE(CUDA_ERROR_NO_BINARY_FOR_GPU),
    WARPTRACE_CODE(CUDA_ERROR_INVALID_PTX),
    WARPTRACE_CODE(CUDA_ERROR_INVALID_HANDLE),
    WARPTRACE_CODE(CUDA_ERROR_NOT_FOUND),
    WARPTRACE_CODE(CUDA_ERROR_ILLEGAL_ADDRESS),
    WARPTRACE_CODE(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
    WARPTRACE_CODE(CUDA_ERROR_LAUNCH_TIMEOUT),
    WARPTRACE_CODE(CUDA_ERROR_LAUNCH_FAILED),
    WARPTRACE_CODE(CUDA_ERROR_ASSERT),
    WARPTRACE_CODE(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH),
    WARPTRACE_CODE(CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
    WARPTRACE_CODE(CUDA_ERROR_ILLEGAL_INSTRUCTION),
    WARPTRACE_CODE(CUDA_ERROR_MISALIGNED_ADDRESS),
    WARPTRACE_CODE(CUDA_ERROR_UNKNOWN),
}}};
#undef WARPTRACE_CODE

const char* BuiltinName(CUresult result) { return kBuiltinNames.Name(result, nullptr); }

absl::StatusCode CodeFor(CUresult result) {
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return absl::StatusCode::kResourceExhausted;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      return absl::StatusCode::kUnavailable;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return absl::StatusCode::kInvalidArgument;
    case CUDA_ERROR_NOT_FOUND:
      return absl::StatusCode::kNotFound;
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status ToStatus(CUresult result, absl::string_view context) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* text = nullptr;
  if (DescribeFn get_name = g_get_name.load(); get_name == nullptr || get_name(result, &name) != CUDA_SUCCESS) {
    name = nullptr;
  }
  if (DescribeFn get_string = g_get_string.load();
      get_string == nullptr || get_string(result, &text) != CUDA_SUCCESS) {
    text = nullptr;
  }
  if (name == nullptr) name = BuiltinName(result);
  const std::string name_text =
      name != nullptr ? std::string(name) : absl::StrCat("CUDA_ERROR_", static_cast<int>(result));
  return absl::Status(CodeFor(result),
                      absl::StrCat("CUDA error: ", context, ": ", name_text, ": ",
                                   text != nullptr ? text : "(no driver loaded to describe it)"));
}

namespace internal {
void SetCudaErrorDescriber(CUresult (*get_name)(CUresult, const char**),
                           CUresult (*get_string)(CUresult, const char**)) {
  g_get_name.store(get_name);
  g_get_string.store(get_string);
}
}  // namespace internal

}  // namespace warptrace
