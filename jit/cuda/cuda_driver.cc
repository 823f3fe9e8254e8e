#include "jit/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "jit/cuda/cuda_status.h"

namespace warptrace {
namespace {

// The symbol a cuda.h name maps to (cuMemAlloc -> "cuMemAlloc_v2"): stringified after
// macro expansion.
#define WARPTRACE_SYMBOL_NAME_INNER(x) #x
#define WARPTRACE_SYMBOL_NAME(x) WARPTRACE_SYMBOL_NAME_INNER(x)

constexpr char kFallbackAdvice[] = "install the NVIDIA driver, or use the host backend";

}  // namespace

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Open(absl::string_view library) {
  const std::string name(library);
  dlerror();
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::UnavailableError(absl::StrCat("no CUDA driver: ", name, " not found (",
                                               error != nullptr ? error : "dlopen failed",
                                               "); ", kFallbackAdvice));
  }
  std::unique_ptr<CudaDriver> driver(new CudaDriver(handle, name));
#define WARPTRACE_CUDA_DRIVER_RESOLVE(fn)                                                  \
  driver->api_.fn = reinterpret_cast<decltype(&::fn)>(dlsym(handle, WARPTRACE_SYMBOL_NAME(fn))); \
  if (driver->api_.fn == nullptr) {                                                        \
    return absl::UnavailableError(absl::StrCat(                                            \
        "no usable CUDA driver: ", name, " lacks ", WARPTRACE_SYMBOL_NAME(fn),             \
        " (a driver older than this build's CUDA headers, or not a CUDA driver); update the " \
        "NVIDIA driver, or use the host backend"));                                        \
  }
  WARPTRACE_CUDA_DRIVER_FUNCTIONS(WARPTRACE_CUDA_DRIVER_RESOLVE)
#undef WARPTRACE_CUDA_DRIVER_RESOLVE
#define WARPTRACE_CUDA_DRIVER_RESOLVE_OPTIONAL(fn)                                           \
  {                                                                                         \
    void* symbol = dlsym(handle, WARPTRACE_SYMBOL_NAME(fn));                                \
    if (symbol == nullptr) symbol = dlsym(handle, #fn);                                     \
    driver->api_.fn = reinterpret_cast<decltype(&::fn)>(symbol);                            \
  }
  WARPTRACE_CUDA_DRIVER_OPTIONAL_FUNCTIONS(WARPTRACE_CUDA_DRIVER_RESOLVE_OPTIONAL)
#undef WARPTRACE_CUDA_DRIVER_RESOLVE_OPTIONAL
  RETURN_IF_ERROR(ToStatus(driver->api_.cuInit(0), "initializing the driver (cuInit)"));
  RETURN_IF_ERROR(
      ToStatus(driver->api_.cuDriverGetVersion(&driver->version_), "reading the driver version"));
  return driver;
}

CudaDriver::~CudaDriver() {
  if (handle_ != nullptr) dlclose(handle_);
}

absl::StatusOr<const CudaDriver*> CudaDriver::Get() {
  static const absl::StatusOr<const CudaDriver*>* const driver = [] {
    absl::StatusOr<std::unique_ptr<CudaDriver>> opened = Open("libcuda.so.1");
    if (!opened.ok()) return new absl::StatusOr<const CudaDriver*>(opened.status());
    const CudaDriver* loaded = opened->release();  // process lifetime
    internal::SetCudaErrorDescriber(loaded->api().cuGetErrorName, loaded->api().cuGetErrorString);
    return new absl::StatusOr<const CudaDriver*>(loaded);
  }();
  return *driver;
}

}  // namespace warptrace
