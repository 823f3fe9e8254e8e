// SelectDevice (jit/run/device_select.h): explicit choices, auto's fallback and its reasons, and
// the errors when a device cannot be had. An out-of-range CUDA ordinal makes the GPU
// unavailable on every machine, with or without a driver, so the fallback paths are
// exercised everywhere; the one machine-dependent case asserts either branch.
#include "jit/run/device_select.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/cuda/cuda_driver_presence.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

constexpr int kNoSuchGpu = 9999;

// Compiled kernels stay in the test's directory.
DeviceSelectOptions Options() {
  DeviceSelectOptions options;
  options.host.cache_directory = TestTempPath("host_cache");
  options.cuda.cache_directory = TestTempPath("cuda_cache");
  return options;
}

DeviceSelectOptions NoGpu() {
  DeviceSelectOptions options = Options();
  options.cuda.ordinal = kNoSuchGpu;
  return options;
}

TEST(DeviceSelectTest, ParsesEachChoiceByNameAndRejectsOthers) {
  for (DeviceChoice choice : {DeviceChoice::kAuto, DeviceChoice::kCuda, DeviceChoice::kHost}) {
    EXPECT_THAT(ParseDeviceChoice(DeviceChoiceName(choice)), IsOkAndHolds(choice));
  }
  EXPECT_THAT(ParseDeviceChoice("gpu"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("\"gpu\""), HasSubstr("auto, cuda or host"))));
  EXPECT_THAT(ParseDeviceChoice("Host"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(DeviceSelectTest, HostChoiceRunsOnTheHostBackendAndSaysItWasRequested) {
  absl::StatusOr<SelectedDevice> selected = SelectDevice(DeviceChoice::kHost, Options());
  ASSERT_THAT(selected.status(), IsOk());
  EXPECT_EQ(selected->device->Kind(), DeviceKind::kHost);
  EXPECT_THAT(selected->reason,
              AllOf(StartsWith("host backend requested: "), HasSubstr(selected->device->Name())));
}

TEST(DeviceSelectTest, HostChoiceReturnsTheHostBackendsErrorUnchanged) {
  DeviceSelectOptions options = Options();
  options.host.compiler = "/nonexistent/warptrace-c++";
  EXPECT_THAT(SelectDevice(DeviceChoice::kHost, options),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/warptrace-c++")));
}

TEST(DeviceSelectTest, CudaChoiceReturnsTheGpusErrorInsteadOfFallingBack) {
  absl::StatusOr<SelectedDevice> selected = SelectDevice(DeviceChoice::kCuda, NoGpu());
  EXPECT_FALSE(selected.ok()) << "ordinal " << kNoSuchGpu << " opened: " << selected->reason;
}

TEST(DeviceSelectTest, AutoFallsBackToTheHostWithTheGpusErrorInTheReason) {
  absl::StatusOr<SelectedDevice> cuda = SelectDevice(DeviceChoice::kCuda, NoGpu());
  ASSERT_FALSE(cuda.ok());
  absl::StatusOr<SelectedDevice> selected = SelectDevice(DeviceChoice::kAuto, NoGpu());
  ASSERT_THAT(selected.status(), IsOk());
  EXPECT_EQ(selected->device->Kind(), DeviceKind::kHost);
  EXPECT_THAT(selected->reason,
              AllOf(HasSubstr(cuda.status().message()),
                    HasSubstr(absl::StrCat("running on the ", selected->device->Name()))));
}

TEST(DeviceSelectTest, AutoFailsNamingBothDevicesWhenNeitherOpens) {
  DeviceSelectOptions options = NoGpu();
  options.host.compiler = "/nonexistent/warptrace-c++";
  EXPECT_THAT(SelectDevice(DeviceChoice::kAuto, options),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("no device to run on"), HasSubstr("the GPU is unavailable"),
                             HasSubstr("/nonexistent/warptrace-c++"))));
}

TEST(DeviceSelectTest, AutoPicksTheGpuWhereThereIsADriverElseSaysThereIsNone) {
  absl::StatusOr<SelectedDevice> selected = SelectDevice(DeviceChoice::kAuto, Options());
  ASSERT_THAT(selected.status(), IsOk());
  if (std::optional<std::string> no_driver = ::warptrace::testing::NoCudaDriver()) {
    EXPECT_EQ(selected->device->Kind(), DeviceKind::kHost);
    EXPECT_THAT(selected->reason, AllOf(StartsWith("no CUDA GPU available"),
                                        HasSubstr("running on the host backend")));
    EXPECT_THAT(SelectDevice(DeviceChoice::kCuda, Options()),
                StatusIs(absl::StatusCode::kUnavailable, HasSubstr("libcuda.so.1")));
  } else {
    EXPECT_EQ(selected->device->Kind(), DeviceKind::kCuda) << selected->reason;
    EXPECT_THAT(selected->reason, StartsWith("CUDA device 0: "));
  }
}

}  // namespace
}  // namespace warptrace
