// The host backend as the tests of //jit/run launch on it, with every compiled kernel (the
// host compiler's shared objects and the NVRTC check's cubins) cached inside the test's
// sandbox rather than in the user's cache directory. Testonly.
//
//   class MyTest : public HostRunTest {};
//   TEST_F(MyTest, Runs) { EXPECT_THAT(RunKernel(device(), kernel, args, {}), IsOk()); }
#ifndef WARPTRACE_TESTS_JIT_RUN_HOST_RUN_FIXTURE_H_
#define WARPTRACE_TESTS_JIT_RUN_HOST_RUN_FIXTURE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "jit/host/host_device.h"

namespace warptrace::testing {

// Points WARPTRACE_CACHE_DIR (unless already set) at the test's temporary directory, then
// creates a HostDevice with `options` (e.g. the deterministic clock). Errors:
// HostDevice::Create's.
absl::StatusOr<std::unique_ptr<HostDevice>> CreateSandboxedHostDevice(
    const HostDeviceOptions& options = {});

// A fixture holding one sandboxed HostDevice (created in SetUp; the test fails there if it
// cannot be).
class HostRunTest : public ::testing::Test {
 protected:
  void SetUp() override;
  HostDevice& device() { return *device_; }

  std::unique_ptr<HostDevice> device_;
};

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_JIT_RUN_HOST_RUN_FIXTURE_H_
