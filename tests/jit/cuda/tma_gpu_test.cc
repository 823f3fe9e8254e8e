// TMA on a real GPU: the driver's cuTensorMapEncodeTiled encodes the KernelArg::TensorMap,
// the kernel loads boxes (every swizzle, partly out of bounds) and stores a partial box, and
// the bytes match the same reference the host emulation is checked against
// (tests/jit/primitives/tma_kernels.h) — so the two backends agree. Also: a map the driver
// would reject fails before the launch with the same message as on the host. Skips itself,
// saying why, only where there is no CUDA driver (tools/gpu_check.sh runs it on a GPU).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/cuda/cuda_device.h"
#include "jit/run/run.h"
#include "tests/jit/cuda/cuda_driver_presence.h"
#include "tests/jit/primitives/tma_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::ReferenceLoad;
using ::warptrace::testing::ReferenceStore;
using ::warptrace::testing::StatusIs;

std::unique_ptr<CudaDevice> DeviceOrNull(std::string* why) {
  CudaDeviceOptions options;
  options.cache_directory = TestTempPath("cache");
  options.target = CudaTarget(9, 0, CudaTarget::Variant::kArchSpecific);
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

std::vector<uint8_t> Pattern(uint64_t bytes) {
  std::vector<uint8_t> v(bytes);
  for (uint64_t i = 0; i < bytes; ++i) v[i] = static_cast<uint8_t>(1 + (i * 7 + i / 251) % 255);
  return v;
}

TensorMapSpec Bf16Matrix(TensorMapSwizzle swizzle) {
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kBFloat16;
  spec.dims = {100, 40};
  spec.strides_bytes = {208};
  const uint32_t span = SwizzleBytes(swizzle) == 0 ? 64 : SwizzleBytes(swizzle);
  spec.box = {span / 2, 16};
  spec.swizzle = swizzle;
  return spec;
}

constexpr uint64_t kTensorBytes = 39 * 208 + 200;

TEST(TmaGpuTest, DriverEncodedMapsLoadTheBoxesTheReferenceSays) {
  std::string why;
  std::unique_ptr<CudaDevice> device = DeviceOrNull(&why);
  if (device == nullptr) GTEST_SKIP() << why;
  absl::StatusOr<Kernel> kernel = testing::TmaLoad2dKernel();
  ASSERT_THAT(kernel, IsOk());
  const std::vector<uint8_t> tensor = Pattern(kTensorBytes);
  for (TensorMapSwizzle swizzle : {TensorMapSwizzle::kNone, TensorMapSwizzle::k32B,
                                   TensorMapSwizzle::k64B, TensorMapSwizzle::k128B}) {
    const TensorMapSpec spec = Bf16Matrix(swizzle);
    const uint32_t bytes = static_cast<uint32_t>(BoxBytes(spec));
    const int w = static_cast<int>(spec.box[0]);
    for (const std::vector<int>& c : std::vector<std::vector<int>>{
             {0, 0}, {8, 5}, {100 - w / 2, 40 - 5}, {-4, -3}, {110, 50}}) {
      SCOPED_TRACE(absl::StrCat("swizzle ", SwizzleName(swizzle), " at (", c[0], ", ", c[1], ")"));
      std::vector<uint8_t> out(bytes);
      RunOptions options;
      ASSERT_THAT(RunKernel(*device, *kernel,
                            {KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(tensor)), spec),
                             KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(c[0]),
                             KernelArg::Scalar<int>(c[1]), KernelArg::Scalar<unsigned>(bytes),
                             KernelArg::Scalar<unsigned>(0), KernelArg::Scalar<unsigned>(bytes)},
                            options)
                      .status(),
                  IsOk());
      EXPECT_EQ(out, ReferenceLoad(tensor, spec, c));
    }
  }
}

TEST(TmaGpuTest, APartialBoxStoreWritesOnlyInBoundsElements) {
  std::string why;
  std::unique_ptr<CudaDevice> device = DeviceOrNull(&why);
  if (device == nullptr) GTEST_SKIP() << why;
  absl::StatusOr<Kernel> kernel = testing::TmaStore2dKernel();
  ASSERT_THAT(kernel, IsOk());
  const TensorMapSpec spec = Bf16Matrix(TensorMapSwizzle::k128B);
  const uint32_t bytes = static_cast<uint32_t>(BoxBytes(spec));
  const std::vector<uint8_t> smem = Pattern(bytes);
  const std::vector<int> c = {70, 30};
  std::vector<uint8_t> tensor(kTensorBytes, 0xab);
  const std::vector<uint8_t> want = ReferenceStore(tensor, spec, c, smem);
  RunOptions options;
  ASSERT_THAT(RunKernel(*device, *kernel,
                        {KernelArg::TensorMap(KernelArg::InOut(absl::MakeSpan(tensor)), spec),
                         KernelArg::In(absl::MakeConstSpan(smem)), KernelArg::Scalar<int>(c[0]),
                         KernelArg::Scalar<int>(c[1]), KernelArg::Scalar<unsigned>(bytes)},
                        options)
                  .status(),
              IsOk());
  EXPECT_EQ(tensor, want);
}

TEST(TmaGpuTest, AMapTheDriverWouldRejectFailsBeforeTheLaunchAsOnTheHost) {
  std::string why;
  std::unique_ptr<CudaDevice> device = DeviceOrNull(&why);
  if (device == nullptr) GTEST_SKIP() << why;
  absl::StatusOr<Kernel> kernel = testing::TmaLoad2dKernel();
  ASSERT_THAT(kernel, IsOk());
  TensorMapSpec spec = Bf16Matrix(TensorMapSwizzle::k32B);
  spec.box = {32, 16};  // 64 bytes: more than the 32-byte swizzle span
  const std::vector<uint8_t> tensor = Pattern(kTensorBytes);
  std::vector<uint8_t> out(1024);
  RunOptions options;
  EXPECT_THAT(RunKernel(*device, *kernel,
                        {KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(tensor)), spec),
                         KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(0),
                         KernelArg::Scalar<int>(0), KernelArg::Scalar<unsigned>(1024),
                         KernelArg::Scalar<unsigned>(0), KernelArg::Scalar<unsigned>(1024)},
                        options)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("more than the 32-byte span of swizzle 32B")));
}

}  // namespace
}  // namespace warptrace
