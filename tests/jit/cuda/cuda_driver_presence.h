// The skip policy of GPU test suites: a GPU suite skips only on a machine without a CUDA
// driver. Where the driver loads, a device that fails to open is a test failure, never a
// skip — a broken CudaDevice::Create on a GPU machine must not pass as "skipped".
//
//   absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Create();
//   if (!device.ok()) {
//     if (std::optional<std::string> why = NoCudaDriver()) GTEST_SKIP() << *why;
//     FAIL() << "a CUDA driver is present, yet: " << device.status();
//   }
//
// Test-only. Thread-safe.
#ifndef WARPTRACE_TESTS_JIT_CUDA_CUDA_DRIVER_PRESENCE_H_
#define WARPTRACE_TESTS_JIT_CUDA_CUDA_DRIVER_PRESENCE_H_

#include <optional>
#include <string>

namespace warptrace::testing {

// Why libcuda.so.1 did not load ("no CUDA driver: ...") when this machine has no CUDA driver;
// nullopt when the driver loads.
std::optional<std::string> NoCudaDriver();

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_CUDA_CUDA_DRIVER_PRESENCE_H_
