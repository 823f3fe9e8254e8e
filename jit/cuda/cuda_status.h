// The one adapter from the CUDA driver API's CUresult to absl::Status, always with context:
//
//   RETURN_IF_ERROR(ToStatus(api.cuModuleLoadData(&module, cubin.data()),
//                            "loading the module of kernel gemm"));
//   // -> "CUDA error: loading the module of kernel gemm: CUDA_ERROR_INVALID_IMAGE: device
//   //     kernel image is invalid"
//
// Names and texts come from the driver's cuGetErrorName / cuGetErrorString once the
// process-wide driver (CudaDriver::Get) is loaded; before that, from a built-in table of
// names, with the text "(no driver loaded to describe it)".
//
// Codes: ResourceExhausted for out-of-memory and launch-out-of-resources; Unavailable for
// no device / no or mismatched driver / not initialized; InvalidArgument for invalid values,
// images, PTX and handles; NotFound for CUDA_ERROR_NOT_FOUND (e.g. a kernel name missing
// from a module); DeadlineExceeded for a launch timeout; Internal for everything else
// (illegal address, launch failure, ...).
#ifndef WARPTRACE_JIT_CUDA_CUDA_STATUS_H_
#define WARPTRACE_JIT_CUDA_CUDA_STATUS_H_

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace warptrace {

absl::Status ToStatus(CUresult result, absl::string_view context);

namespace internal {
// Called by CudaDriver::Get() with the loaded driver's functions (which stay loaded for the
// life of the process).
void SetCudaErrorDescriber(CUresult (*get_name)(CUresult, const char**),
                           CUresult (*get_string)(CUresult, const char**));
}  // namespace internal

}  // namespace warptrace

#endif  // WARPTRACE_JIT_CUDA_CUDA_STATUS_H_
