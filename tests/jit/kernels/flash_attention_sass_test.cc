// Every FlashAttention variant compiles with NVRTC for sm_90a with an empty log, profiled
// or not, and its SASS (cuobjdump, which tools/setup.sh installs) uses the hardware: HGMMA
// (wgmma.mma_async, both the SS qk and the RS pv shapes), UTMALDG (the TMA loads),
// USETMAXREG (setmaxnreg), SYNCS (mbarriers), and with --pingpong BAR.SYNC / BAR.ARV
// (the named barriers of the turns).
#include <cstdio>
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
#include "jit/kernels/flash_attention.h"
#include "tests/jit/kernels/sm90a_compile.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;

struct Variant {
  std::string label;
  FlashAttentionShape shape;
  bool profiled = true;
};

std::vector<Variant> Variants() {
  std::vector<Variant> out;
  for (uint32_t head_dim : {64u, 128u}) {
    FlashAttentionShape shape;
    shape.head_dim = head_dim;
    const std::string d = absl::StrCat("d", head_dim);
    out.push_back({d, shape});
    FlashAttentionShape causal = shape;
    causal.causal = true;
    out.push_back({d + " causal", causal});
    FlashAttentionShape pingpong = shape;
    pingpong.pingpong = true;
    out.push_back({d + " pingpong", pingpong});
    FlashAttentionShape overlap = shape;
    overlap.overlap = true;
    out.push_back({d + " overlap", overlap});
    FlashAttentionShape all = shape;
    all.causal = all.pingpong = all.overlap = true;
    out.push_back({d + " causal pingpong overlap", all});
  }
  out.push_back({"d64 unprofiled", FlashAttentionShape{}, false});
  return out;
}

TEST(FlashAttentionSassTest, EveryVariantCompilesForSm90aToHgmmaAndUtmaldg) {
  const std::string cuobjdump = FindCuobjdump("");
  ASSERT_FALSE(cuobjdump.empty())
      << "no cuobjdump: run tools/setup.sh (installs the PyPI wheels nvidia-cuda-cuobjdump and "
         "nvidia-cuda-nvdisasm), or set CUOBJDUMP";
  // Each alone, as CudaDevice compiles it: the kernel has __launch_bounds__ (setmaxnreg
  // needs it), which tests/jit/nvrtc_batch.h's batching does not rename.
  const std::vector<Variant> variants = Variants();
  for (size_t i = 0; i < variants.size(); ++i) {
    const Variant& v = variants[i];
    SCOPED_TRACE(v.label);
    absl::StatusOr<Kernel> kernel = FlashAttention(v.shape);
    ASSERT_THAT(kernel, IsOk());
    ProfileOptions options;
    options.enabled = v.profiled;
    absl::StatusOr<KernelSource> source = EmitKernel(*kernel, options);
    ASSERT_THAT(source, IsOk());
    absl::StatusOr<testing::Sm90aCubin> compiled = testing::CompileForSm90(*source);
    ASSERT_THAT(compiled, IsOk());
    EXPECT_EQ(compiled->log, "");
    const std::string cubin = TestTempPath(absl::StrCat("flash_attention_", i, ".cubin"));
    ASSERT_THAT(WriteFileAtomically(cubin, compiled->cubin, {.role = "cubin"}), IsOk());
    absl::StatusOr<ProgramResult> listed = RunProgram({cuobjdump, "-sass", cubin});
    ASSERT_THAT(listed, IsOk());
    ASSERT_EQ(listed->exit_code, 0) << listed->output << listed->error_output;
    absl::StatusOr<absl::string_view> function =
        SassFunction(listed->output, source->kernel_name);
    ASSERT_THAT(function, IsOk());
    const std::string sass(*function);
    const uint32_t d = v.shape.head_dim;
    EXPECT_THAT(sass, HasSubstr("HGMMA.64x128x16.F32.BF16"));  // qk: m64n128k16
    EXPECT_THAT(sass, HasSubstr(absl::StrCat("HGMMA.64x", d, "x16.F32.BF16")));  // pv
    EXPECT_THAT(sass, HasSubstr("UTMALDG.2D"));
    EXPECT_THAT(sass, HasSubstr("USETMAXREG.DEALLOC"));
    EXPECT_THAT(sass, HasSubstr("USETMAXREG.TRY_ALLOC"));
    EXPECT_THAT(sass, HasSubstr("SYNCS.PHASECHK"));
    if (v.shape.pingpong) {
      EXPECT_THAT(sass, HasSubstr("BAR.SYNC"));
      EXPECT_THAT(sass, HasSubstr("BAR.ARV"));
    }
    // Reported, not asserted: whether ptxas spilled to local memory.
    const bool spills = sass.find("STL") != std::string::npos;
    std::printf("%s: %s\n", v.label.c_str(), spills ? "local stores (STL)" : "no STL");
  }
}

}  // namespace
}  // namespace warptrace
