// CudaDevice on a real GPU: the same hand-written profiled kernel as the host tests, checked
// the same way. Skips itself, saying why, only where there is no CUDA driver; fails where a
// driver is present but the device does not open.
#include "jit/cuda/cuda_device.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/cuda/cuda_driver_presence.h"
#include "tests/jit/test_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::BlockStatsRun;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::kBlockStatsEvents;

// The device, or null with `why`: skip where there is no CUDA driver, fail anywhere else
// (a driver that loads but a device that does not open is a broken GPU setup, not a skip).
std::unique_ptr<CudaDevice> DeviceOrNull(std::string* why) {
  CudaDeviceOptions options;
  options.cache_directory = TestTempPath("cache");
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Create(options);
  if (!device.ok()) {
    std::optional<std::string> no_driver = ::warptrace::testing::NoCudaDriver();
    if (!no_driver.has_value()) {
      ADD_FAILURE() << "a CUDA driver is present but CudaDevice::Create failed: "
                    << device.status();
    }
    *why = no_driver.value_or("CudaDevice::Create failed on a machine with a CUDA driver");
    return nullptr;
  }
  return *std::move(device);
}

class CudaDeviceGpuTest : public ::testing::TestWithParam<std::tuple<uint32_t, bool>> {};

TEST_P(CudaDeviceGpuTest, RunsTheProfiledKernelAndRecordsEveryEvent) {
  std::string why;
  std::unique_ptr<CudaDevice> device = DeviceOrNull(&why);
  if (device == nullptr) GTEST_SKIP() << why;  // "no CUDA driver: ..." on machines without one
  const auto [capacity, shared] = GetParam();
  absl::StatusOr<BlockStatsRun> run = ::warptrace::testing::RunBlockStats(*device, 6, capacity, shared);
  ASSERT_THAT(run, IsOk());
  ::warptrace::testing::ExpectBlockStatsOutputs(*run, 6);
  ::warptrace::testing::ExpectBlockStatsRecords(*run, 6, capacity, shared, device->Clock().num_sms,
                                                /*host=*/false);
  EXPECT_EQ(device->Kind(), DeviceKind::kCuda);
  EXPECT_GT(device->Clock().nominal_sm_clock_khz, 0u);
}

INSTANTIATE_TEST_SUITE_P(CapacityAndPlacement, CudaDeviceGpuTest,
                         ::testing::Values(std::make_tuple(kBlockStatsEvents, false),
                                           std::make_tuple(kBlockStatsEvents, true),
                                           std::make_tuple(5u, false)));

TEST(CudaDeviceGpuLimitsTest, LaunchesWithMoreThan48KiBOfDynamicSharedMemory) {
  std::string why;
  std::unique_ptr<CudaDevice> device = DeviceOrNull(&why);
  if (device == nullptr) GTEST_SKIP() << why;
  const KernelSource source = ::warptrace::testing::SimpleKernel(
      "big_shared", R"(
  WARPTRACE_DYNAMIC_SHARED(int, smem);
  smem[threadIdx.x * 512] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = smem[(31 - threadIdx.x) * 512];)");
  std::vector<int> got;
  ASSERT_THAT(::warptrace::testing::RunSimpleKernel(*device, source, {1, 1, 1}, {32, 1, 1}, 32,
                                                    &got, 100 * 1024),
              IsOk());
  for (int i = 0; i < 32; ++i) EXPECT_EQ(got[i], 31 - i);
}

TEST(CudaDeviceGpuTimingTest, TimesEveryLaunchWithCudaEventsAndRejectsAZeroCount) {
  std::string why;
  std::unique_ptr<CudaDevice> device = DeviceOrNull(&why);
  if (device == nullptr) GTEST_SKIP() << why;
  const KernelSource source = ::warptrace::testing::SimpleKernel(
      "spin", R"(
  long long start = clock64();
  while (clock64() - start < 100000) {}
  out[threadIdx.x] = threadIdx.x;)");
  absl::StatusOr<std::unique_ptr<LoadedKernel>> kernel = device->Load(source);
  ASSERT_THAT(kernel, IsOk());
  absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(*device, 32 * 4);
  ASSERT_THAT(out, IsOk());
  void* out_ptr = out->get();
  void* args[] = {&out_ptr};
  // Through the Device interface: the CUDA override, not the host-clock default.
  Device& as_device = *device;
  absl::StatusOr<Device::LaunchDurations> times =
      as_device.TimeLaunches(**kernel, {1, 1, 1}, {32, 1, 1}, 0, args, 5);
  ASSERT_THAT(times, IsOk());
  EXPECT_EQ(times->clock, "CUDA events");
  ASSERT_EQ(times->micros.size(), 5u);
  // 100000 cycles is at least 25 us below 4 GHz, and far less than a second above 0.1 GHz.
  for (double us : times->micros) {
    EXPECT_GT(us, 25.0);
    EXPECT_LT(us, 1e6);
  }
  EXPECT_THAT(device->TimeLaunches(**kernel, {1, 1, 1}, {32, 1, 1}, 0, args, 0).status(),
              ::warptrace::testing::StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace warptrace
