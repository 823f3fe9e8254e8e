// The wgmma and setmaxnreg kernels (wgmma_kernels.h) compile under NVRTC for sm_90a with
// empty logs, and their SASS (cuobjdump, which tools/setup.sh installs) holds the hardware
// instructions: HGMMA (wgmma.mma_async), WARPGROUP.ARRIVE / WARPGROUP.DEPBAR (fence /
// wait_group) and USETMAXREG (setmaxnreg). Plain sm_90 refuses them with a message naming
// sm_90a. No GPU needed.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/subprocess.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/cost/recorder_cost.h"
#include "tests/jit/nvrtc_batch.h"
#include "tests/jit/primitives/wgmma_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::CompileNvrtcBatches;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::NvrtcBatchMember;
using ::warptrace::testing::NvrtcBatchResult;

std::vector<NvrtcBatchMember> GpuKernels() {
  std::vector<NvrtcBatchMember> members;
  for (const KernelSource& k : {testing::WgmmaLayoutKernel(), testing::WgmmaGemmKernel(),
                                testing::SetmaxnregRolesKernel()}) {
    members.push_back({k.kernel_name, k.source, k.kernel_name, k.headers});
  }
  return members;
}

TEST(WgmmaNvrtcTest, KernelsCompileForSm90aWithAnEmptyLogToHgmmaAndUsetmaxreg) {
  const std::string cuobjdump = FindCuobjdump("");
  ASSERT_FALSE(cuobjdump.empty())
      << "no cuobjdump: run tools/setup.sh (installs the PyPI wheels nvidia-cuda-cuobjdump and "
         "nvidia-cuda-nvdisasm), or set CUOBJDUMP";
  const std::vector<NvrtcBatchMember> members = GpuKernels();
  absl::StatusOr<std::vector<NvrtcBatchResult>> results =
      CompileNvrtcBatches(members, "sm_90a", {"-lineinfo"});
  ASSERT_THAT(results, IsOk());
  ASSERT_EQ(results->size(), members.size());
  for (size_t i = 0; i < results->size(); ++i) {
    const NvrtcBatchResult& result = (*results)[i];
    SCOPED_TRACE(result.label);
    ASSERT_THAT(result.status, IsOk());
    EXPECT_EQ(result.log, "");
    EXPECT_EQ(result.batch_log, "");
    const std::string cubin = TestTempPath(absl::StrCat("wgmma_", i, ".cubin"));
    ASSERT_THAT(WriteFileAtomically(cubin, result.cubin, {.role = "cubin"}), IsOk());
    absl::StatusOr<ProgramResult> listed = RunProgram({cuobjdump, "-sass", cubin});
    ASSERT_THAT(listed, IsOk());
    ASSERT_EQ(listed->exit_code, 0) << listed->output << listed->error_output;
    absl::StatusOr<absl::string_view> sass = SassFunction(listed->output, result.entry);
    ASSERT_THAT(sass, IsOk());
    if (result.label == "setmaxnreg_roles") {
      EXPECT_THAT(std::string(*sass), HasSubstr("USETMAXREG.DEALLOC"));    // .dec 40
      EXPECT_THAT(std::string(*sass), HasSubstr("USETMAXREG.TRY_ALLOC"));  // .inc 232
    } else {
      EXPECT_THAT(std::string(*sass), HasSubstr("HGMMA.64x"));
      EXPECT_THAT(std::string(*sass), HasSubstr("WARPGROUP.ARRIVE"));
      EXPECT_THAT(std::string(*sass), HasSubstr("WARPGROUP.DEPBAR"));
    }
  }
}

TEST(WgmmaNvrtcTest, PlainSm90RefusesThemNamingSm90a) {
  absl::StatusOr<std::vector<NvrtcBatchResult>> results =
      CompileNvrtcBatches(GpuKernels(), "sm_90", {"-lineinfo"});
  ASSERT_THAT(results, IsOk());
  for (const NvrtcBatchResult& result : *results) {
    SCOPED_TRACE(result.label);
    EXPECT_THAT(result.status,
                ::warptrace::testing::StatusIs(
                    absl::StatusCode::kInvalidArgument, HasSubstr("wgmma and setmaxnreg need sm_90a: compile with "
                                            "--gpu-architecture=sm_90a")));
  }
}

// Including the primitives stays free for every architecture: only uses are refused.
TEST(WgmmaNvrtcTest, TheHeaderAloneCompilesForSm80AndSm90) {
  const KernelSource layout = testing::WgmmaLayoutKernel();
  const std::string source =
      "#include \"warptrace_primitives.cuh\"\n"
      "extern \"C\" __global__ void plain(unsigned long long* out) {\n"
      "  __shared__ __align__(1024) unsigned tile[256];\n"
      "  tile[threadIdx.x] = threadIdx.x;\n"
      "  out[threadIdx.x] = warptrace_wgmma_desc(tile, 16, 1024, WARPTRACE_SWIZZLE_128B) + "
      "tile[255 - threadIdx.x];\n"
      "}\n";
  for (const std::string arch : {"sm_80", "sm_90"}) {
    SCOPED_TRACE(arch);
    absl::StatusOr<std::vector<NvrtcBatchResult>> results =
        CompileNvrtcBatches({{"plain", source, "plain", layout.headers}}, arch, {"-lineinfo"});
    ASSERT_THAT(results, IsOk());
    EXPECT_THAT((*results)[0].status, IsOk());
    EXPECT_EQ((*results)[0].log, "");
    EXPECT_THAT((*results)[0].ptx, Not(HasSubstr("wgmma")));
  }
}

}  // namespace
}  // namespace warptrace
