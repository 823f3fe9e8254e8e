// warptrace_primitives.cuh and the primitive kernels the host tests run compile under NVRTC
// with empty logs: the host and GPU paths are one source (no GPU needed).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/nvrtc_compiler.h"
#include "tests/jit/device/primitive_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::IsOk;
using ::warptrace::testing::PrimitiveKernel;
using ::warptrace::testing::PrimitiveKernels;
using ::warptrace::testing::PrimitiveKernelSource;

class PrimitivesNvrtcTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PrimitivesNvrtcTest, EveryPrimitiveKernelCompilesWithAnEmptyLog) {
  const std::string arch = GetParam();
  NvrtcCompiler nvrtc;
  for (const PrimitiveKernel& kernel : PrimitiveKernels()) {
    if (kernel.needs_sm90 && arch == "sm_80") continue;  // mbarrier transactions are sm_90
    SCOPED_TRACE(kernel.name);
    const KernelSource source = PrimitiveKernelSource(kernel);
    CompileRequest request;
    request.name = kernel.name + ".cu";
    request.source = source.source;
    request.headers = source.headers;
    request.options.arch = arch;
    request.options.extra_flags = {"-I/usr/local/cuda/include"};  // cuda_fp16.h, cuda_bf16.h
    absl::StatusOr<CompiledKernel> compiled = nvrtc.Compile(request);
    ASSERT_THAT(compiled, IsOk());
    EXPECT_EQ(compiled->log, "");
    EXPECT_FALSE(compiled->cubin.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, PrimitivesNvrtcTest, ::testing::Values("sm_80", "sm_90"));

}  // namespace
}  // namespace warptrace
