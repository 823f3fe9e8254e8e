// CudaDevice without a GPU: a clean Unavailable, and the NVRTC side of Load. The GPU runs
// are in cuda_device_gpu_test (tagged "gpu").
#include "jit/cuda/cuda_device.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/compile/nvrtc_compiler.h"
#include "jit/cuda/cuda_driver.h"
#include "tests/jit/test_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

TEST(CudaDeviceTest, CreateReportsUnavailableCleanlyWithoutADriver) {
  if (CudaDriver::Get().ok()) GTEST_SKIP() << "a CUDA driver is present on this machine";
  EXPECT_THAT(CudaDevice::Create(),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("no CUDA driver: libcuda.so.1 not found"),
                             HasSubstr("use the host backend"))));
}

TEST(CudaDeviceTest, TheHostTestKernelCompilesForSm90WithDynamicSharedMemory) {
  const KernelSource source = ::warptrace::testing::BlockStatsKernel(2, 8, /*shared=*/true);
  NvrtcCompiler nvrtc;
  absl::StatusOr<CompiledKernel> compiled = nvrtc.Compile(*CudaCompileRequest(source, CudaTarget::Default()));
  ASSERT_THAT(compiled, IsOk());
  EXPECT_EQ(compiled->cubin.substr(1, 3), "ELF");
  EXPECT_THAT(compiled->ptx, AllOf(HasSubstr(".entry block_stats"), HasSubstr(".extern .shared"),
                                   HasSubstr("%globaltimer"), HasSubstr("%smid")));
}

TEST(CudaDeviceTest, CompileRequestKeepsTheSourceHeadersAndFlags) {
  const KernelSource source = ::warptrace::testing::SimpleKernel("k", "out[0] = 1;");
  const CompileRequest request = *CudaCompileRequest(source, CudaTarget(8, 0), {"-DX=1"});
  EXPECT_EQ(request.name, "k.cu");
  EXPECT_EQ(request.source, source.source);
  EXPECT_EQ(request.options.target.ToString(), "sm_80");
  std::vector<std::string> expected = {"--pre-include=warptrace_cuda_prelude.h"};
  if (!CudaToolkitIncludeDir().empty()) expected.push_back("-I" + CudaToolkitIncludeDir());
  expected.push_back("-DX=1");
  EXPECT_EQ(request.options.extra_flags, expected);
  // The source's headers, the pre-included prelude, the device prelude and the eight
  // standard headers that resolve to it under NVRTC.
  ASSERT_EQ(request.headers.size(), source.headers.size() + 2 + 8);
  const EmbeddedFile& pre = request.headers[source.headers.size()];
  EXPECT_EQ(pre.name, "warptrace_cuda_prelude.h");
  EXPECT_THAT(pre.contents,
              HasSubstr("#define WARPTRACE_DYNAMIC_SHARED(type, name) extern __shared__"));
  EXPECT_THAT(pre.contents, HasSubstr("#include \"warptrace_device_prelude.cuh\""));
  EXPECT_EQ(request.headers[source.headers.size() + 1].name, "warptrace_device_prelude.cuh");
  EXPECT_EQ(request.headers.back().name, "float.h");
  EXPECT_THAT(request.headers.back().contents,
              HasSubstr("#include \"warptrace_device_prelude.cuh\""));
}

}  // namespace
}  // namespace warptrace
