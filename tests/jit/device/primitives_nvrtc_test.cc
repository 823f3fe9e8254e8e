// warptrace_primitives.cuh and the primitive kernels the host tests run compile under NVRTC
// with empty logs: the host and GPU paths are one source (no GPU needed).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/nvrtc_batch.h"
#include "tests/jit/primitives/primitive_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::CompileNvrtcBatches;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::NvrtcBatchMember;
using ::warptrace::testing::NvrtcBatchResult;
using ::warptrace::testing::PrimitiveKernel;
using ::warptrace::testing::PrimitiveKernels;
using ::warptrace::testing::PrimitiveKernelSource;

class PrimitivesNvrtcTest : public ::testing::TestWithParam<std::string> {};

// The kernels of one arch are compiled as one NVRTC program (tests/jit/nvrtc_batch.h): each
// includes cuda_fp16.h and cuda_bf16.h, which NVRTC then parses once instead of per kernel.
TEST_P(PrimitivesNvrtcTest, EveryPrimitiveKernelCompilesWithAnEmptyLog) {
  const std::string arch = GetParam();
  std::vector<NvrtcBatchMember> members;
  for (const PrimitiveKernel& kernel : PrimitiveKernels()) {
    if (kernel.needs_sm90 && arch == "sm_80") continue;  // mbarrier transactions are sm_90
    const KernelSource source = PrimitiveKernelSource(kernel);
    members.push_back({kernel.name, source.source, source.kernel_name, source.headers});
  }
  // As NvrtcCompiler's defaults (-lineinfo) and cuda_fp16.h, cuda_bf16.h from the toolkit.
  absl::StatusOr<std::vector<NvrtcBatchResult>> results =
      CompileNvrtcBatches(members, arch, {"-lineinfo", "-I/usr/local/cuda/include"});
  ASSERT_THAT(results, IsOk());
  ASSERT_EQ(results->size(), members.size());
  for (const NvrtcBatchResult& result : *results) {
    SCOPED_TRACE(result.label);
    EXPECT_THAT(result.status, IsOk());
    EXPECT_EQ(result.log, "");
    EXPECT_EQ(result.batch_log, "");
    EXPECT_FALSE(result.cubin.empty());
    EXPECT_THAT(result.ptx, ::testing::HasSubstr(".entry " + result.entry + "("));
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, PrimitivesNvrtcTest, ::testing::Values("sm_80", "sm_90"));

}  // namespace
}  // namespace warptrace
