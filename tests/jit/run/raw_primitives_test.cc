// A kernel that calls the device primitives (jit/primitives/warptrace_primitives.cuh) only
// from raw statements: the emitter includes the primitives header for them, so the kernel
// compiles on both backends (the host compiler and RunKernel's NVRTC check for sm_90) and
// computes the right answer on the host.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/emit/emitter.h"
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::Each;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;

// One warp: A (16 x 16) and B (16 x 8, stored as 8 rows of 16: "col") all bf16 ones through
// ldmatrix into mma.m16n8k16: every element of D is 16.
Kernel RawMma() {
  KernelBuilder b("raw_mma");
  b.Param("float*", "out").Grid({1, 1, 1}).Block({32, 1, 1});
  b.Stmt(
      "__shared__ __align__(16) unsigned short a[16 * 16];\n"
      "__shared__ __align__(16) unsigned short bt[8 * 16];\n"
      "for (int i = threadIdx.x; i < 16 * 16; i += 32) a[i] = 0x3F80;\n"
      "for (int i = threadIdx.x; i < 8 * 16; i += 32) bt[i] = 0x3F80;\n"
      "__syncwarp();");
  b.Stmt(
      "unsigned int ra[4], rb[2];\n"
      "warptrace_ldmatrix_x4(ra[0], ra[1], ra[2], ra[3],\n"
      "                      &a[(threadIdx.x % 16) * 16 + (threadIdx.x / 16) * 8]);\n"
      "warptrace_ldmatrix_x2(rb[0], rb[1], &bt[(threadIdx.x % 8) * 16 + (threadIdx.x / 8) % 2 * 8]);\n"
      "float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n"
      "warptrace_mma_m16n8k16_f32_bf16(d, ra, rb, d);\n"
      "for (int k = 0; k < 4; ++k) out[threadIdx.x * 4 + k] = d[k];");
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return *kernel;
}

TEST(RawPrimitivesTest, KernelCallingPrimitivesOnlyFromRawStatementsRunsWithTheirHeader) {
  setenv("WARPTRACE_CACHE_DIR", TestTempPath("warptrace_cache").c_str(), 0);
  const Kernel kernel = RawMma();
  EXPECT_THAT(kernel.primitives_use, HasSubstr("kernel raw_mma > statement"));
  EXPECT_THAT(EmitUnprofiledKernel(kernel).source,
              HasSubstr("#include \"warptrace_primitives.cuh\""));
  absl::StatusOr<std::unique_ptr<HostDevice>> device = HostDevice::Create();
  ASSERT_THAT(device, IsOk());
  std::vector<float> out(32 * 4, 0.0f);
  const std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out))};
  RunOptions options;
  options.check_gpu_compile = true;  // NVRTC for sm_90 as well as the host compiler
  ASSERT_THAT(RunKernel(**device, kernel, args, options), IsOk());
  EXPECT_THAT(out, Each(16.0f));
}

}  // namespace
}  // namespace warptrace
