// The Ampere tensor-core GEMM (jit/kernels/ampere_gemm.h) compiles for sm_80 with NVRTC, with
// an empty log, to the tensor-core, ldmatrix and cp.async instructions (read back with
// cuobjdump, which tools/setup.sh installs): HMMA, LDSM (.x4 and .x4.trans) and LDGSTS,
// profiled or not.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/subprocess.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/cost/recorder_cost.h"
#include "jit/emit/emitter.h"
#include "jit/kernels/ampere_gemm.h"
#include "tests/jit/nvrtc_batch.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::CompileNvrtcBatches;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::NvrtcBatchMember;
using ::warptrace::testing::NvrtcBatchResult;

TEST(AmpereGemmSassTest, CompilesForSm80ToHmmaLdsmAndCpAsyncProfiledOrNot) {
  const std::string cuobjdump = FindCuobjdump("");
  ASSERT_FALSE(cuobjdump.empty()) << "no cuobjdump: run tools/setup.sh";
  absl::StatusOr<Kernel> kernel = AmpereGemm({.m = 256, .n = 256, .k = 128});
  ASSERT_THAT(kernel, IsOk());
  std::vector<NvrtcBatchMember> members;
  for (bool profiled : {false, true}) {
    ProfileOptions options;
    options.enabled = profiled;
    absl::StatusOr<KernelSource> source = EmitKernel(*kernel, options);
    ASSERT_THAT(source, IsOk());
    members.push_back({profiled ? "profiled" : "unprofiled", source->source,
                       source->kernel_name, source->headers});
  }
  absl::StatusOr<std::vector<NvrtcBatchResult>> results =
      CompileNvrtcBatches(members, "sm_80", {"-lineinfo"});
  ASSERT_THAT(results, IsOk());
  std::map<std::string, std::string> sass_of_cubin;
  for (const NvrtcBatchResult& result : *results) {
    SCOPED_TRACE(result.label);
    ASSERT_THAT(result.status, IsOk());
    EXPECT_EQ(result.log, "");
    EXPECT_EQ(result.batch_log, "");
    auto [sass, is_new] = sass_of_cubin.emplace(result.cubin, "");
    if (is_new) {
      const std::string cubin =
          TestTempPath(absl::StrCat("ampere_gemm_", sass_of_cubin.size(), ".cubin"));
      ASSERT_THAT(WriteFileAtomically(cubin, result.cubin, {.role = "cubin"}), IsOk());
      absl::StatusOr<ProgramResult> listed = RunProgram({cuobjdump, "-sass", cubin});
      ASSERT_THAT(listed, IsOk());
      ASSERT_EQ(listed->exit_code, 0) << listed->output << listed->error_output;
      sass->second = listed->output;
    }
    absl::StatusOr<absl::string_view> function = SassFunction(sass->second, result.entry);
    ASSERT_THAT(function, IsOk());
    EXPECT_THAT(*function, HasSubstr("HMMA.16816.F32.BF16"));
    EXPECT_THAT(*function, HasSubstr("LDSM.16.M88.4"));   // A: ldmatrix.x4
    EXPECT_THAT(*function, HasSubstr("LDSM.16.MT88.4"));  // B: ldmatrix.x4.trans
    EXPECT_THAT(*function, HasSubstr("LDGSTS"));          // cp.async
  }
}

}  // namespace
}  // namespace warptrace
