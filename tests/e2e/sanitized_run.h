// The fixture of the sanitizer's end-to-end tests (sanitizer_test, races_test): a sandboxed
// HostDevice created with the checks under test, and a run of a kernel over one input and
// one output buffer of floats with the device's checks.
#ifndef WARPTRACE_TESTS_E2E_SANITIZED_RUN_H_
#define WARPTRACE_TESTS_E2E_SANITIZED_RUN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "jit/host/host_device.h"
#include "jit/platform/sanitize.h"
#include "jit/platform/tensor_map.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace::testing {

class SanitizedRunTest : public ::testing::Test {
 protected:
  // `compiler`: the host compiler (empty: the default, g++).
  explicit SanitizedRunTest(SanitizeOptions checks, std::string compiler = "")
      : checks_(checks), compiler_(std::move(compiler)) {}

  void SetUp() override {
    HostDeviceOptions options;
    options.compiler = compiler_;
    options.num_virtual_sms = 2;
    options.sanitize = checks_;
    absl::StatusOr<std::unique_ptr<HostDevice>> device = CreateSandboxedHostDevice(options);
    ASSERT_THAT(device, IsOk());
    device_ = *std::move(device);
  }

  // Runs `kernel` (in: `in_floats` ones, out: `out_floats` zeros before the run).
  absl::StatusOr<RunResult> Run(const absl::StatusOr<Kernel>& kernel, size_t in_floats,
                                size_t out_floats, bool profile = true) {
    if (!kernel.ok()) return kernel.status();
    in_.assign(in_floats, 1.0f);
    out_.assign(out_floats, 0.0f);
    std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(in_)),
                                   KernelArg::Out(absl::MakeSpan(out_))};
    RunOptions options;
    options.profile.enabled = profile;
    options.sanitize = device_->sanitize();
    return RunKernel(*device_, *kernel, args, options);
  }

  // Runs `kernel` with one argument: a tensor map described by `spec` over `out` (bf16
  // bits), with the device's checks.
  absl::Status RunTensorMapOut(const absl::StatusOr<Kernel>& kernel, std::vector<uint16_t>& out,
                               const TensorMapSpec& spec) {
    if (!kernel.ok()) return kernel.status();
    const std::vector<KernelArg> args = {
        KernelArg::TensorMap(KernelArg::Out(absl::MakeSpan(out)), spec)};
    RunOptions options;
    options.sanitize = device_->sanitize();
    return RunKernel(*device_, *kernel, args, options).status();
  }

  const SanitizeOptions checks_;
  const std::string compiler_;
  std::unique_ptr<HostDevice> device_;
  std::vector<float> in_, out_;
};

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_E2E_SANITIZED_RUN_H_
