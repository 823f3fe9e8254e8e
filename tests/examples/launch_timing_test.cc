// Tests of examples/launch_timing.h on the host backend (CUDA event timing is covered by
// tests/jit/cuda/cuda_device_gpu_test.cc on a GPU).
#include "examples/launch_timing.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/emit/emitter.h"
#include "jit/host/host_device.h"
#include "jit/kernels/reduction.h"
#include "tests/status_matchers.h"

namespace warptrace::examples {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

std::unique_ptr<HostDevice> Host() {
  HostDeviceOptions options;
  options.cache_directory = TestTempPath("cache");
  absl::StatusOr<std::unique_ptr<HostDevice>> host = HostDevice::Create(options);
  EXPECT_THAT(host.status(), IsOk());
  return host.ok() ? *std::move(host) : nullptr;
}

TEST(LaunchTimesTest, MedianIsTheLowerMiddleAndMinTheSmallest) {
  EXPECT_EQ((LaunchTimes{{5, 1, 3}, ""}).Median(), 3);
  EXPECT_EQ((LaunchTimes{{4, 1, 3, 2}, ""}).Median(), 2);
  EXPECT_EQ((LaunchTimes{{4, 1, 3, 2}, ""}).Min(), 1);
  EXPECT_EQ(LaunchTimes{}.Median(), 0);
}

TEST(TimeLaunchesTest, TimesEveryLaunchOfAProfiledAndAnUnprofiledKernel) {
  std::unique_ptr<HostDevice> host = Host();
  ASSERT_NE(host, nullptr);
  absl::StatusOr<Kernel> kernel = Reduction({.n = 256, .blocks = 2, .threads = 32});
  ASSERT_THAT(kernel.status(), IsOk());
  std::vector<float> x(256, 1.0f), out(1, 0.0f);
  const std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(x)),
                                       KernelArg::Out(absl::MakeSpan(out))};
  for (bool profiled : {true, false}) {
    ProfileOptions profile;
    profile.enabled = profiled;
    profile.unit = UnitSpec::Warp();
    absl::StatusOr<KernelSource> source = EmitKernel(*kernel, profile);
    ASSERT_THAT(source.status(), IsOk());
    absl::StatusOr<LaunchTimes> times = TimeLaunches(*host, *source, args, 4);
    ASSERT_THAT(times.status(), IsOk());
    EXPECT_EQ(times->micros.size(), 4u);
    EXPECT_EQ(times->clock, "host steady clock");
    for (double us : times->micros) EXPECT_GT(us, 0.0);
  }
  EXPECT_EQ(out[0], 0.0f) << "timing never copies outputs back";
}

TEST(TimeLaunchesTest, RejectsZeroLaunchesAndArgumentsThatDoNotMatch) {
  std::unique_ptr<HostDevice> host = Host();
  ASSERT_NE(host, nullptr);
  absl::StatusOr<Kernel> kernel = Reduction({.n = 64, .blocks = 1, .threads = 32});
  ASSERT_THAT(kernel.status(), IsOk());
  const KernelSource source = EmitUnprofiledKernel(*kernel);
  std::vector<float> x(64, 1.0f), out(1);
  const std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(x)),
                                       KernelArg::Out(absl::MakeSpan(out))};
  EXPECT_THAT(TimeLaunches(*host, source, args, 0).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at least 1")));
  EXPECT_THAT(TimeLaunches(*host, source, absl::MakeConstSpan(args).subspan(0, 1), 1).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("takes 2 arguments")));
}

}  // namespace
}  // namespace warptrace::examples
