// A kernel that faults on the GPU (CUDA_ERROR_ILLEGAL_ADDRESS, reported asynchronously at
// the synchronize): the error names the kernel that was launched. Its own binary: the error
// is sticky, the process's primary context is unusable after it. Skips itself where there
// is no CUDA driver.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/cuda/cuda_device.h"
#include "tests/jit/cuda/cuda_driver_presence.h"
#include "tests/jit/test_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;

TEST(CudaIllegalAddressTest, TheErrorOfAFaultingKernelNamesTheKernel) {
  CudaDeviceOptions options;
  options.cache_directory = TestTempPath("cache");
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Create(options);
  if (!device.ok()) {
    std::optional<std::string> no_driver = ::warptrace::testing::NoCudaDriver();
    if (no_driver.has_value()) GTEST_SKIP() << *no_driver;
    FAIL() << "a CUDA driver is present but CudaDevice::Create failed: " << device.status();
  }
  const KernelSource source = ::warptrace::testing::SimpleKernel(
      "wild_store", "if (threadIdx.x == 3) *(volatile int*)(out + (1ll << 40)) = 1;");
  std::vector<int> out;
  const absl::Status status =
      ::warptrace::testing::RunSimpleKernel(**device, source, {1, 1, 1}, {32, 1, 1}, 32, &out);
  EXPECT_THAT(status, Not(IsOk()));
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("kernel wild_store on grid (1,1,1) x block (32,1,1)"),
                    HasSubstr("CUDA_ERROR_")));
}

}  // namespace
}  // namespace warptrace
