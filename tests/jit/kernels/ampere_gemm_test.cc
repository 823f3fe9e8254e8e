// The Ampere tensor-core GEMM (jit/kernels/ampere_gemm.h): its shape checks, its result on
// the host backend (the tensor cores emulated) against the double reference of the same bf16
// inputs for each warp layout and ring depth (its SASS: ampere_gemm_sass_test.cc).
#include "jit/kernels/ampere_gemm.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

TEST(AmpereGemmTest, RejectsShapesItCannotTile) {
  EXPECT_THAT(AmpereGemm({.m = 64, .n = 128, .k = 32}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("M=64 and N=128 must be positive multiples of 128, K=32 of 32")));
  EXPECT_THAT(AmpereGemm({.m = 128, .n = 128, .k = 32, .warps = 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("warps 2 must be 4 or 8")));
  EXPECT_THAT(AmpereGemm({.m = 128, .n = 128, .k = 32, .stages = 5}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("stages 5 must be 2..4")));
}

TEST(AmpereGemmTest, Bf16RoundsToNearestEven) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBf16(1.0f / 3.0f), 0x3eab);
  EXPECT_EQ(FloatToBf16(1.00390625f), 0x3f80);  // halfway, to even
  EXPECT_EQ(FloatToBf16(1.01171875f), 0x3f82);  // halfway, to even (up)
  EXPECT_EQ(FloatToBf16(std::nanf("")), 0x7fff);
  EXPECT_EQ(Bf16ToFloat(0xbf80), -1.0f);
}

class AmpereGemmRunTest : public ::testing::TestWithParam<AmpereGemmShape> {};

TEST_P(AmpereGemmRunTest, RunsOnTheHostBackendAndMatchesTheReference) {
  const AmpereGemmShape shape = GetParam();
  absl::StatusOr<Kernel> kernel = AmpereGemm(shape);
  ASSERT_THAT(kernel, IsOk());
  HostDeviceOptions device_options;
  device_options.cache_directory = TestTempPath("cache");
  absl::StatusOr<std::unique_ptr<HostDevice>> device = HostDevice::Create(device_options);
  ASSERT_THAT(device, IsOk());
  std::vector<uint16_t> a(size_t{shape.m} * shape.k), b(size_t{shape.k} * shape.n);
  uint32_t state = 7;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return FloatToBf16(static_cast<float>(static_cast<int>(state >> 16) % 2001 - 1000) / 997.0f);
  };
  for (uint16_t& v : a) v = next();
  for (uint16_t& v : b) v = next();
  std::vector<float> c(size_t{shape.m} * shape.n, -1.0f);
  const std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(a)),
                                       KernelArg::In(absl::MakeConstSpan(b)),
                                       KernelArg::Out(absl::MakeSpan(c))};
  RunOptions options;
  options.check_gpu_compile = false;  // the NVRTC compile is the test below
  absl::StatusOr<RunResult> run = RunKernel(**device, *kernel, args, options);
  ASSERT_THAT(run, IsOk());
  const AmpereGemmReference reference = ReferenceBf16Gemm(a, b, shape);
  const double u = std::ldexp(1.0, -24);
  const double gamma = shape.k * u / (1 - shape.k * u);  // fp32 accumulation of K exact products
  int bad = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    const double tolerance = 4 * gamma * reference.magnitude[i];
    if (!(std::fabs(c[i] - reference.c[i]) <= tolerance) && ++bad <= 8) {
      ADD_FAILURE() << "C[" << i / shape.n << "][" << i % shape.n << "] = " << c[i] << ", want "
                    << reference.c[i] << " within " << tolerance;
    }
  }
  EXPECT_EQ(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AmpereGemmRunTest,
    ::testing::Values(AmpereGemmShape{.m = 256, .n = 128, .k = 128, .warps = 4, .stages = 3},
                      AmpereGemmShape{.m = 128, .n = 256, .k = 64, .warps = 8, .stages = 2},
                      AmpereGemmShape{.m = 128, .n = 128, .k = 32, .warps = 4, .stages = 4}),
    [](const ::testing::TestParamInfo<AmpereGemmShape>& info) {
      return absl::StrCat(info.param.m, "x", info.param.n, "x", info.param.k, "_",
                          info.param.warps, "warps_", info.param.stages, "stages");
    });

}  // namespace
}  // namespace warptrace
