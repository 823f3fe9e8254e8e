// The tensor-core primitives (jit/primitives/tensor_core_sm80.cuh) and the kernels the host
// tests run compile under NVRTC with empty logs, to the tensor-core and matrix-movement
// instructions (read back with cuobjdump, which tools/setup.sh installs): HMMA for mma.sync,
// LDSM for ldmatrix on sm_80, STSM for stmatrix on sm_90. A kernel using an sm_90 primitive
// compiled for sm_80 fails, saying what it needs. No GPU needed.
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
#include "tests/jit/nvrtc_batch.h"
#include "tests/jit/primitives/primitive_kernels.h"
#include "tests/jit/primitives/tensor_core_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::CompileNvrtcBatches;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::NvrtcBatchMember;
using ::warptrace::testing::NvrtcBatchResult;
using ::warptrace::testing::PrimitiveKernel;
using ::warptrace::testing::PrimitiveKernelSource;
using ::warptrace::testing::TensorCoreKernels;

const std::vector<std::string> kFlags = {"-lineinfo", "-I/usr/local/cuda/include"};

NvrtcBatchMember Member(const PrimitiveKernel& kernel) {
  const KernelSource source = PrimitiveKernelSource(kernel);
  return {kernel.name, source.source, source.kernel_name, source.headers};
}

// The SASS of every kernel for `arch` (by kernel name), each checked to compile cleanly.
std::map<std::string, std::string> CompileAndDisassemble(const std::string& arch) {
  std::map<std::string, std::string> out;
  const std::string cuobjdump = FindCuobjdump("");
  EXPECT_FALSE(cuobjdump.empty())
      << "no cuobjdump: run tools/setup.sh (installs the PyPI wheels nvidia-cuda-cuobjdump and "
         "nvidia-cuda-nvdisasm), or set CUOBJDUMP";
  std::vector<NvrtcBatchMember> members;
  for (const PrimitiveKernel& kernel : TensorCoreKernels()) {
    if (kernel.needs_sm90 && arch == "sm_80") continue;
    members.push_back(Member(kernel));
  }
  absl::StatusOr<std::vector<NvrtcBatchResult>> results =
      CompileNvrtcBatches(members, arch, kFlags);
  EXPECT_THAT(results, IsOk());
  if (!results.ok()) return out;
  std::map<std::string, std::string> sass_of_cubin;
  for (const NvrtcBatchResult& result : *results) {
    SCOPED_TRACE(result.label);
    EXPECT_THAT(result.status, IsOk());
    EXPECT_EQ(result.log, "");
    EXPECT_EQ(result.batch_log, "");
    EXPECT_THAT(result.ptx, HasSubstr(".entry " + result.entry + "("));
    if (!result.status.ok() || cuobjdump.empty()) continue;
    auto [sass, is_new] = sass_of_cubin.emplace(result.cubin, "");
    if (is_new) {
      const std::string cubin =
          TestTempPath(absl::StrCat("tensor_core_", arch, "_", sass_of_cubin.size(), ".cubin"));
      EXPECT_THAT(WriteFileAtomically(cubin, result.cubin, {.role = "cubin"}), IsOk());
      absl::StatusOr<ProgramResult> listed = RunProgram({cuobjdump, "-sass", cubin});
      EXPECT_THAT(listed, IsOk());
      if (!listed.ok()) continue;
      EXPECT_EQ(listed->exit_code, 0) << listed->output << listed->error_output;
      sass->second = listed->output;
    }
    absl::StatusOr<absl::string_view> function = SassFunction(sass->second, result.entry);
    EXPECT_THAT(function, IsOk());
    if (function.ok()) out[result.label] = std::string(*function);
  }
  return out;
}

TEST(TensorCoreNvrtcTest, Sm80KernelsCompileCleanlyToHmmaAndLdsm) {
  std::map<std::string, std::string> sass = CompileAndDisassemble("sm_80");
  EXPECT_THAT(sass["mma_bf16_registers"], HasSubstr("HMMA.16816.F32.BF16"));
  EXPECT_THAT(sass["mma_f16_registers"], HasSubstr("HMMA.16816.F32"));
  EXPECT_THAT(sass["mma_f16_registers"], Not(HasSubstr("BF16")));
  EXPECT_THAT(sass["ldmatrix_forms"], HasSubstr("LDSM.16.M88.4"));
  EXPECT_THAT(sass["ldmatrix_forms"], HasSubstr("LDSM.16.MT88.4"));  // .trans
  EXPECT_THAT(sass["mma_gemm_bf16"], HasSubstr("HMMA.16816.F32.BF16"));
  EXPECT_THAT(sass["mma_gemm_bf16"], HasSubstr("LDSM.16.MT88.2"));
}

TEST(TensorCoreNvrtcTest, Sm90KernelsCompileCleanlyToStsmAndElect) {
  std::map<std::string, std::string> sass = CompileAndDisassemble("sm_90");
  EXPECT_THAT(sass["stmatrix_forms"], HasSubstr("STSM.16.M88.4"));
  EXPECT_THAT(sass["stmatrix_forms"], HasSubstr("STSM.16.MT88.4"));  // .trans
  EXPECT_THAT(sass["elect_one"], HasSubstr("ELECT"));
  EXPECT_THAT(sass["mma_gemm_bf16"], HasSubstr("HMMA.16816.F32.BF16"));
}

TEST(TensorCoreNvrtcTest, AnSm90PrimitiveInAKernelForSm80IsACompileErrorSayingSo) {
  for (const char* name : {"stmatrix_forms", "elect_one"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<std::vector<NvrtcBatchResult>> results = CompileNvrtcBatches(
        {Member(::warptrace::testing::FindTensorCoreKernel(name))}, "sm_80", kFlags);
    ASSERT_THAT(results, IsOk());
    ASSERT_EQ(results->size(), 1u);
    EXPECT_THAT((*results)[0].status.message(), HasSubstr("needs sm_90 or newer"));
  }
}

}  // namespace
}  // namespace warptrace
