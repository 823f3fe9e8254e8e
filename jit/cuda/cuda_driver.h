// CudaDriver: the CUDA driver API (libcuda.so.1) loaded at run time with dlopen, so warptrace
// binaries start, and fall back to the host backend, on machines without a driver. Nothing
// links against libcuda.
//
//   ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
//   const CudaDriverApi& cu = driver->api();
//   RETURN_IF_ERROR(ToStatus(cu.cuDeviceGetCount(&count), "counting devices"));
//
// CudaDriverApi has one function pointer per entry point used, named and typed as in
// cuda.h: cuda.h's own macros map names like cuMemAlloc to the versioned symbols
// (cuMemAlloc_v2), and those are the symbols resolved.
#ifndef WARPTRACE_JIT_CUDA_CUDA_DRIVER_H_
#define WARPTRACE_JIT_CUDA_CUDA_DRIVER_H_

#include <cuda.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace warptrace {

// X(function): every driver entry point warptrace uses.
#define WARPTRACE_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuInit)                                \
  X(cuDriverGetVersion)                    \
  X(cuGetErrorName)                        \
  X(cuGetErrorString)                      \
  X(cuDeviceGetCount)                      \
  X(cuDeviceGet)                           \
  X(cuDeviceGetName)                       \
  X(cuDeviceGetAttribute)                  \
  X(cuDevicePrimaryCtxRetain)              \
  X(cuDevicePrimaryCtxRelease)             \
  X(cuCtxSetCurrent)                       \
  X(cuCtxSynchronize)                      \
  X(cuModuleLoadData)                      \
  X(cuModuleUnload)                        \
  X(cuModuleGetFunction)                   \
  X(cuFuncSetAttribute)                    \
  X(cuLaunchKernel)                        \
  X(cuMemAlloc)                            \
  X(cuMemFree)                             \
  X(cuMemcpyHtoD)                          \
  X(cuMemcpyDtoH)                          \
  X(cuMemsetD8)

// X(function): entry points only some features need (CUDA event timing, tensor maps,
// cluster launches).
// Resolved from the versioned symbol, else the plain name (the same signature in older
// drivers); a driver without one still loads, with that field left null
// (CudaDevice::TimeLaunches and EncodeTensorMap then return Unavailable).
#define WARPTRACE_CUDA_DRIVER_OPTIONAL_FUNCTIONS(X) \
  X(cuEventCreate)                                  \
  X(cuEventDestroy)                                 \
  X(cuEventRecord)                                  \
  X(cuEventSynchronize)                             \
  X(cuEventElapsedTime)                             \
  X(cuTensorMapEncodeTiled)                         \
  X(cuLaunchKernelEx)

struct CudaDriverApi {
#define WARPTRACE_CUDA_DRIVER_FIELD(name) decltype(&::name) name = nullptr;
  WARPTRACE_CUDA_DRIVER_FUNCTIONS(WARPTRACE_CUDA_DRIVER_FIELD)
  WARPTRACE_CUDA_DRIVER_OPTIONAL_FUNCTIONS(WARPTRACE_CUDA_DRIVER_FIELD)
#undef WARPTRACE_CUDA_DRIVER_FIELD
};

class CudaDriver {
 public:
  // The process-wide driver from libcuda.so.1, loaded and initialized (cuInit) once and
  // never unloaded; also makes ToStatus describe errors with the driver's texts. Returns the
  // same result (success or error) on every call. Errors as Open.
  static absl::StatusOr<const CudaDriver*> Get();

  // Loads `library`, resolves every entry point and calls cuInit(0). The handle is closed
  // when the result is destroyed. Errors, all Unavailable and ending with what to do:
  //   "no CUDA driver: libcuda.so.1 not found (<dlerror>); install the NVIDIA driver or use
  //    the host backend"
  //   "... <library> lacks <symbol> ..." (a driver too old for this build's cuda.h)
  //   "CUDA error: initializing the driver (cuInit): ..." (no device, driver mismatch)
  static absl::StatusOr<std::unique_ptr<CudaDriver>> Open(absl::string_view library);

  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;
  ~CudaDriver();

  const CudaDriverApi& api() const { return api_; }
  // cuDriverGetVersion: 1000 * major + 10 * minor (e.g. 12040).
  int version() const { return version_; }
  const std::string& library() const { return library_; }

 private:
  CudaDriver(void* handle, std::string library) : handle_(handle), library_(std::move(library)) {}

  void* handle_;
  std::string library_;
  CudaDriverApi api_;
  int version_ = 0;
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_CUDA_CUDA_DRIVER_H_
