// The TMA primitives compile under NVRTC for sm_90 and sm_90a with empty logs, profiled or
// not, and their SASS (read back with cuobjdump, which tools/setup.sh installs) holds the
// tensor-memory-access instructions: UTMALDG for cp.async.bulk.tensor loads, UTMASTG for the
// store, UTMACCTL.PF for prefetch.tensormap. Compiled for sm_80 they fail, saying they need
// sm_90. No GPU needed.
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
#include "tests/jit/nvrtc_batch.h"
#include "tests/jit/primitives/tma_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::CompileNvrtcBatches;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::NvrtcBatchMember;
using ::warptrace::testing::NvrtcBatchResult;

struct Variant {
  NvrtcBatchMember member;
  bool stores = false;
  bool prefetches = false;
};

std::vector<Variant> Variants() {
  std::vector<Variant> out;
  struct Made {
    const char* name;
    absl::StatusOr<Kernel> kernel;
    bool stores;
    bool prefetches;
  };
  Made made[] = {{"load_2d", testing::TmaLoad2dKernel(), false, true},
                 {"load_3d", testing::TmaLoad3dKernel(), false, false},
                 {"store_2d", testing::TmaStore2dKernel(), true, false}};
  for (Made& m : made) {
    EXPECT_THAT(m.kernel, IsOk()) << m.name;
    if (!m.kernel.ok()) continue;
    for (bool profiled : {false, true}) {
      ProfileOptions options;
      options.enabled = profiled;
      absl::StatusOr<KernelSource> source = EmitKernel(*m.kernel, options);
      EXPECT_THAT(source, IsOk()) << m.name;
      if (!source.ok()) continue;
      // The parameter as the driver's encoding needs it: in parameter space, by value.
      EXPECT_THAT(source->source, HasSubstr("const __grid_constant__ CUtensorMap tm"));
      out.push_back({{absl::StrCat(m.name, profiled ? " profiled" : " unprofiled"),
                      source->source, source->kernel_name, source->headers},
                     m.stores,
                     m.prefetches});
    }
  }
  return out;
}

class TmaNvrtcTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TmaNvrtcTest, TmaKernelsCompileWithAnEmptyLogAndUseTheTmaUnit) {
  const std::string arch = GetParam();
  const std::string cuobjdump = FindCuobjdump("");
  ASSERT_FALSE(cuobjdump.empty())
      << "no cuobjdump: run tools/setup.sh (installs the PyPI wheels nvidia-cuda-cuobjdump and "
         "nvidia-cuda-nvdisasm), or set CUOBJDUMP";
  const std::vector<Variant> variants = Variants();
  std::vector<NvrtcBatchMember> members;
  for (const Variant& v : variants) members.push_back(v.member);
  absl::StatusOr<std::vector<NvrtcBatchResult>> results = CompileNvrtcBatches(members, arch);
  ASSERT_THAT(results, IsOk());
  ASSERT_EQ(results->size(), members.size());
  std::map<std::string, std::string> sass_of_cubin;
  for (size_t i = 0; i < results->size(); ++i) {
    const NvrtcBatchResult& result = (*results)[i];
    SCOPED_TRACE(result.label);
    ASSERT_THAT(result.status, IsOk());
    EXPECT_EQ(result.log, "");
    EXPECT_EQ(result.batch_log, "");
    auto [sass, fresh] = sass_of_cubin.try_emplace(result.cubin);
    if (fresh) {
      const std::string cubin =
          TestTempPath(absl::StrCat("tma_", arch, "_", sass_of_cubin.size(), ".cubin"));
      ASSERT_THAT(WriteFileAtomically(cubin, result.cubin, {.role = "cubin"}), IsOk());
      absl::StatusOr<ProgramResult> listed = RunProgram({cuobjdump, "-sass", cubin});
      ASSERT_THAT(listed, IsOk());
      ASSERT_EQ(listed->exit_code, 0) << listed->output << listed->error_output;
      sass->second = listed->output;
    }
    absl::StatusOr<absl::string_view> function = SassFunction(sass->second, result.entry);
    ASSERT_THAT(function, IsOk());
    const std::string text(*function);
    if (variants[i].stores) {
      EXPECT_THAT(text, HasSubstr("UTMASTG"));     // cp.async.bulk.tensor.2d.global.shared::cta
      EXPECT_THAT(text, Not(HasSubstr("UTMALDG")));
    } else {
      EXPECT_THAT(text, HasSubstr("UTMALDG"));     // cp.async.bulk.tensor.*.shared::cluster
      EXPECT_THAT(text, Not(HasSubstr("UTMASTG")));
    }
    if (variants[i].prefetches) {
      EXPECT_THAT(text, HasSubstr("UTMACCTL.PF"));  // prefetch.tensormap
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, TmaNvrtcTest, ::testing::Values("sm_90", "sm_90a"));

TEST(TmaNvrtcTest, TmaOnSm80IsACompileErrorThatSaysSo) {
  const std::vector<Variant> variants = Variants();
  ASSERT_FALSE(variants.empty());
  absl::StatusOr<std::vector<NvrtcBatchResult>> results =
      CompileNvrtcBatches({variants[0].member}, "sm_80");
  ASSERT_THAT(results, IsOk());
  ASSERT_EQ(results->size(), 1u);
  EXPECT_THAT((*results)[0].status.message(),
              HasSubstr("warptrace_tma_load_2d (TMA, cp.async.bulk.tensor) needs sm_90 or later"));
}

}  // namespace
}  // namespace warptrace
