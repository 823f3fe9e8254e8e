// Tests of jit/platform/device.h: the Device interface's default launch timing, on a fake device
// whose launches and synchronizations are recorded.
#include "jit/platform/device.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::Each;
using ::testing::Ge;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

class FakeKernel final : public LoadedKernel {
 public:
  const std::string& name() const override { return name_; }

 private:
  std::string name_ = "spin";
};

// Launch is instant; Synchronize takes `sync_time` (the kernel "runs" until it is waited
// for, as on a GPU). Every call is logged.
class FakeDevice final : public Device {
 public:
  std::string Name() const override { return "fake"; }
  DeviceKind Kind() const override { return DeviceKind::kHost; }
  ClockInfo Clock() const override { return {}; }
  absl::StatusOr<void*> Allocate(uint64_t) override { return nullptr; }
  absl::Status Free(void*) override { return absl::OkStatus(); }
  absl::Status CopyToDevice(void*, const void*, uint64_t) override { return absl::OkStatus(); }
  absl::Status CopyToHost(void*, const void*, uint64_t) override { return absl::OkStatus(); }
  absl::Status Memset(void*, uint8_t, uint64_t) override { return absl::OkStatus(); }
  absl::StatusOr<TensorMapBytes> EncodeTensorMap(const TensorMapSpec&, void*,
                                                 absl::string_view) override {
    return TensorMapBytes{};
  }
  absl::StatusOr<std::unique_ptr<LoadedKernel>> Load(const KernelSource&) override {
    return std::make_unique<FakeKernel>();
  }
  absl::Status Launch(LoadedKernel& kernel, Dim3 grid, Dim3, uint32_t, void** args) override {
    log.push_back("launch " + kernel.name() + " " + std::to_string(grid.x) + " " +
                  std::to_string(*static_cast<int*>(args[0])));
    if (fail_launch == static_cast<int>(log.size())) {
      return absl::ResourceExhaustedError("launching spin: out of resources");
    }
    return absl::OkStatus();
  }
  absl::Status Synchronize() override {
    log.push_back("sync");
    std::this_thread::sleep_for(sync_time);
    return absl::OkStatus();
  }

  std::vector<std::string> log;
  std::chrono::microseconds sync_time{0};
  int fail_launch = 0;  // the 1-based log entry whose launch fails; 0: none
};

TEST(DeviceTimeLaunchesTest, DefaultTimesEachLaunchAndItsSynchronizeOnTheHostSteadyClock) {
  FakeDevice device;
  device.sync_time = std::chrono::milliseconds(3);
  FakeKernel kernel;
  int arg = 7;
  void* args[] = {&arg};
  absl::StatusOr<Device::LaunchDurations> times =
      device.TimeLaunches(kernel, {2, 1, 1}, {32, 1, 1}, 0, args, 3);
  ASSERT_THAT(times.status(), IsOk());
  EXPECT_EQ(times->clock, "host steady clock");
  ASSERT_EQ(times->micros.size(), 3u);
  // Each duration includes the 3 ms wait in Synchronize.
  EXPECT_THAT(times->micros, Each(Ge(3000.0)));
  EXPECT_THAT(device.log, ElementsAre("launch spin 2 7", "sync", "launch spin 2 7", "sync",
                                      "launch spin 2 7", "sync"));
}

TEST(DeviceTimeLaunchesTest, DefaultRejectsACountBelowOneWithoutLaunching) {
  FakeDevice device;
  FakeKernel kernel;
  int arg = 0;
  void* args[] = {&arg};
  EXPECT_THAT(device.TimeLaunches(kernel, {1, 1, 1}, {32, 1, 1}, 0, args, 0).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("timing kernel spin")));
  EXPECT_TRUE(device.log.empty());
}

TEST(DeviceTimeLaunchesTest, DefaultStopsAtTheFirstFailedLaunchAndReturnsItsError) {
  FakeDevice device;
  device.fail_launch = 3;  // the second launch (log: launch, sync, launch)
  FakeKernel kernel;
  int arg = 0;
  void* args[] = {&arg};
  EXPECT_THAT(device.TimeLaunches(kernel, {1, 1, 1}, {32, 1, 1}, 0, args, 5).status(),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("out of resources")));
  EXPECT_EQ(device.log.size(), 3u);
}

TEST(DeviceBufferTest, AnEmptyBufferCopiesZeroBytesAndRejectsMore) {
  DeviceBuffer empty;  // no device: a copy must not reach one
  char byte = 0;
  EXPECT_THAT(empty.CopyFrom(&byte, 0), IsOk());
  EXPECT_THAT(empty.CopyTo(&byte, 0), IsOk());
  EXPECT_THAT(empty.CopyFrom(&byte, 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("0 bytes: 1 bytes requested")));
  EXPECT_THAT(empty.Zero(), IsOk());
}

}  // namespace
}  // namespace warptrace
