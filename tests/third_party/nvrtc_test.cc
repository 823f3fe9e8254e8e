// NVRTC from /usr/local/cuda links and compiles a kernel to PTX and to an sm_90 cubin,
// with no GPU present.
#include <nvrtc.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;

constexpr char kKernel[] = R"(
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

std::string Log(nvrtcProgram prog) {
  size_t size = 0;
  nvrtcGetProgramLogSize(prog, &size);
  std::string log(size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  return log;
}

TEST(NvrtcTest, CompilesKernelToSm90CubinAndPtx) {
  nvrtcProgram prog;
  ASSERT_EQ(nvrtcCreateProgram(&prog, kKernel, "axpy.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  const char* options[] = {"-arch=sm_90"};
  nvrtcResult result = nvrtcCompileProgram(prog, 1, options);
  ASSERT_EQ(result, NVRTC_SUCCESS) << Log(prog);

  size_t cubin_size = 0;
  ASSERT_EQ(nvrtcGetCUBINSize(prog, &cubin_size), NVRTC_SUCCESS);
  std::vector<char> cubin(cubin_size);
  ASSERT_EQ(nvrtcGetCUBIN(prog, cubin.data()), NVRTC_SUCCESS);
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(std::string(cubin.data() + 1, 3), "ELF");

  size_t ptx_size = 0;
  ASSERT_EQ(nvrtcGetPTXSize(prog, &ptx_size), NVRTC_SUCCESS);
  std::string ptx(ptx_size, '\0');
  ASSERT_EQ(nvrtcGetPTX(prog, ptx.data()), NVRTC_SUCCESS);
  EXPECT_THAT(ptx, HasSubstr(".target sm_90"));
  EXPECT_THAT(ptx, HasSubstr(".entry axpy"));
  nvrtcDestroyProgram(&prog);
}

TEST(NvrtcTest, ReportsCompileErrorInLog) {
  nvrtcProgram prog;
  ASSERT_EQ(nvrtcCreateProgram(&prog, "__global__ void k() { undefined_name = 1; }", "bad.cu",
                               0, nullptr, nullptr),
            NVRTC_SUCCESS);
  const char* options[] = {"-arch=sm_90"};
  EXPECT_EQ(nvrtcCompileProgram(prog, 1, options), NVRTC_ERROR_COMPILATION);
  EXPECT_THAT(Log(prog), HasSubstr("undefined_name"));
  nvrtcDestroyProgram(&prog);
}

TEST(NvrtcTest, ReportsItsVersion) {
  int major = 0, minor = 0;
  ASSERT_EQ(nvrtcVersion(&major, &minor), NVRTC_SUCCESS);
  EXPECT_GE(major, 12);
}

}  // namespace
