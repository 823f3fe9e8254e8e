// The tensor-core conformance and numeric checks of tests/jit/host/tensor_core_test.cc
// (tests/jit/primitives/tensor_core_checks.h) on a real GPU through CudaDevice: the host
// emulation and the hardware must agree with the same PTX ISA tables. Skips itself only
// where there is no CUDA driver; stmatrix and elect.sync need sm_90.
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "base/testing/temp_path.h"
#include "gtest/gtest.h"
#include "jit/cuda/cuda_device.h"
#include "tests/jit/cuda/cuda_driver_presence.h"
#include "tests/jit/primitives/tensor_core_checks.h"

namespace warptrace {
namespace {

class TensorCoreGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CudaDeviceOptions options;
    options.cache_directory = TestTempPath("cache");
    // The kernels include the toolkit's cuda_fp16.h / cuda_bf16.h.
    options.extra_flags = {"-I/usr/local/cuda/include"};
    absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Create(options);
    if (!device.ok()) {
      if (std::optional<std::string> why = ::warptrace::testing::NoCudaDriver()) {
        GTEST_SKIP() << *why;
      }
      FAIL() << "a CUDA driver is present, yet: " << device.status();
    }
    device_ = *std::move(device);
  }
  bool Sm90() const {  // "sm_XY[a]": compute capability X.Y
    return device_->target().IsAtLeastHopper();
  }
  std::unique_ptr<CudaDevice> device_;
};

TEST_F(TensorCoreGpuTest, MmaSyncLayoutsMatchThePtxIsa) {
  ::warptrace::testing::ExpectMmaLayouts(*device_, /*bf16=*/true);
  ::warptrace::testing::ExpectMmaLayouts(*device_, /*bf16=*/false);
}

TEST_F(TensorCoreGpuTest, LdmatrixFormsMatchThePtxIsa) {
  ::warptrace::testing::ExpectLdmatrixForms(*device_);
}

TEST_F(TensorCoreGpuTest, StmatrixFormsAndElectSyncMatchThePtxIsa) {
  if (!Sm90()) GTEST_SKIP() << "stmatrix and elect.sync need sm_90; this GPU is " << device_->target().ToString();
  ::warptrace::testing::ExpectStmatrixForms(*device_);
  ::warptrace::testing::ExpectElectElectsOneLanePerWarp(*device_);
}

TEST_F(TensorCoreGpuTest, Bf16GemmMatchesTheReference) {
  ::warptrace::testing::ExpectBf16GemmMatchesReference(*device_);
}

}  // namespace
}  // namespace warptrace
