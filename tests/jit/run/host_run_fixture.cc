#include "tests/jit/run/host_run_fixture.h"

#include <cstdlib>
#include <utility>

#include "base/testing/temp_path.h"
#include "tests/status_matchers.h"

namespace warptrace::testing {

absl::StatusOr<std::unique_ptr<HostDevice>> CreateSandboxedHostDevice(
    const HostDeviceOptions& options) {
  setenv("WARPTRACE_CACHE_DIR", TestTempPath("warptrace_cache").c_str(), 0);
  return HostDevice::Create(options);
}

void HostRunTest::SetUp() {
  absl::StatusOr<std::unique_ptr<HostDevice>> device = CreateSandboxedHostDevice();
  ASSERT_THAT(device, IsOk());
  device_ = *std::move(device);
}

}  // namespace warptrace::testing
