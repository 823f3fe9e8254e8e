#include "tests/jit/cuda/cuda_driver_presence.h"

#include "jit/cuda/cuda_driver.h"

namespace warptrace::testing {

std::optional<std::string> NoCudaDriver() {
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Get();
  if (driver.ok()) return std::nullopt;
  return std::string(driver.status().message());  // "no CUDA driver: libcuda.so.1 ..."
}

}  // namespace warptrace::testing
