// The sm_90 pipeline compiles to the hardware's asynchronous machinery: the SASS NVRTC makes
// of it (read back with cuobjdump, which tools/setup.sh installs) holds mbarrier
// instructions (SYNCS.*: init, arrive with expected transactions, phase check) and bulk
// copies (UBLKCP), profiled or not; the cp.async variant on sm_80 holds LDGSTS and
// ATOMS.ARRIVE (mbarrier.arrive).
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/file.h"
#include "base/subprocess.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/cost/recorder_cost.h"
#include "jit/emit/emitter.h"
#include "jit/kernels/warp_specialized_pipeline.h"
#include "tests/jit/nvrtc_batch.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::CompileNvrtcBatches;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::NvrtcBatchMember;
using ::warptrace::testing::NvrtcBatchResult;

// The distinct opcodes ("SYNCS.EXCH.64", "BRA", ...) of `cuobjdump -sass` text, sorted and
// joined by spaces, so a failure shows what the kernel compiled to.
std::string Opcodes(const std::string& sass) {
  std::set<std::string> opcodes;
  for (absl::string_view line : absl::StrSplit(sass, '\n')) {
    const size_t address_end = line.find("*/");
    if (!absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "/*") ||
        address_end == absl::string_view::npos) {
      continue;
    }
    std::vector<absl::string_view> words =
        absl::StrSplit(line.substr(address_end + 2), ' ', absl::SkipWhitespace());
    if (words.empty()) continue;
    absl::string_view op = words[0];
    if (absl::StartsWith(op, "@") && words.size() > 1) op = words[1];
    op = absl::StripSuffix(op, ";");
    if (!op.empty() && std::isupper(static_cast<unsigned char>(op[0]))) {
      opcodes.insert(std::string(op));
    }
  }
  return absl::StrJoin(opcodes, " ");
}

// The pipeline for `shape`, profiled (default options) or not, labelled for failures.
NvrtcBatchMember Variant(const PipelineShape& shape, bool profiled, const std::string& label) {
  absl::StatusOr<Kernel> kernel = WarpSpecializedPipeline(shape);
  EXPECT_THAT(kernel, IsOk()) << label;
  if (!kernel.ok()) return {};
  ProfileOptions options;
  options.enabled = profiled;
  absl::StatusOr<KernelSource> source = EmitKernel(*kernel, options);
  EXPECT_THAT(source, IsOk()) << label;
  if (!source.ok()) return {};
  return {label, source->source, source->kernel_name, source->headers};
}

// The opcodes in the SASS of each of `variants` for `arch`. The variants are compiled as
// few NVRTC programs (tests/jit/nvrtc_batch.h) and cuobjdump runs once per cubin (starting
// it costs ~0.45 s: it starts nvdisasm), each kernel read from its "Function :" section.
std::vector<std::string> SassOpcodes(const std::vector<NvrtcBatchMember>& variants,
                                     const std::string& arch, const std::string& cuobjdump) {
  std::vector<std::string> out(variants.size());
  absl::StatusOr<std::vector<NvrtcBatchResult>> compiled = CompileNvrtcBatches(variants, arch);
  EXPECT_THAT(compiled, IsOk());
  if (!compiled.ok()) return out;
  std::map<std::string, std::string> sass_of_cubin;
  for (size_t i = 0; i < variants.size(); ++i) {
    const NvrtcBatchResult& result = (*compiled)[i];
    SCOPED_TRACE(result.label);
    EXPECT_THAT(result.status, IsOk());
    EXPECT_EQ(result.log, "");
    EXPECT_EQ(result.batch_log, "");
    if (!result.status.ok()) continue;
    auto [sass, is_new] = sass_of_cubin.emplace(result.cubin, "");
    if (is_new) {
      const std::string cubin =
          TestTempPath(absl::StrCat("pipeline_", arch, "_", sass_of_cubin.size(), ".cubin"));
      EXPECT_THAT(WriteFileAtomically(cubin, result.cubin, {.role = "cubin"}), IsOk());
      absl::StatusOr<ProgramResult> listed = RunProgram({cuobjdump, "-sass", cubin});
      EXPECT_THAT(listed, IsOk());
      if (!listed.ok()) continue;
      EXPECT_EQ(listed->exit_code, 0) << listed->output << listed->error_output;
      sass->second = listed->output;
    }
    absl::StatusOr<absl::string_view> function = SassFunction(sass->second, result.entry);
    EXPECT_THAT(function, IsOk());
    if (function.ok()) out[i] = Opcodes(std::string(*function));
  }
  return out;
}

TEST(WarpSpecializedPipelineSassTest, Sm90PipelineHasMbarrierAndBulkCopyInstructions) {
  const std::string cuobjdump = FindCuobjdump("");
  ASSERT_FALSE(cuobjdump.empty())
      << "no cuobjdump: run tools/setup.sh (installs the PyPI wheels nvidia-cuda-cuobjdump and "
         "nvidia-cuda-nvdisasm), or set CUOBJDUMP";
  PipelineShape shape{32, 64, 256, 3, 2};
  shape.copy = CopyKind::kBulk;
  std::vector<NvrtcBatchMember> variants;
  for (bool persistent : {false, true}) {
    shape.persistent_blocks = persistent ? 3 : 0;
    for (bool profiled : {false, true}) {
      variants.push_back(Variant(shape, profiled,
                                 absl::StrCat(persistent ? "persistent" : "plain",
                                              profiled ? " profiled" : " unprofiled")));
    }
  }
  const std::vector<std::string> opcodes = SassOpcodes(variants, "sm_90", cuobjdump);
  for (size_t i = 0; i < variants.size(); ++i) {
    SCOPED_TRACE(variants[i].label);
    const std::string& sass = opcodes[i];
    EXPECT_THAT(sass, HasSubstr("SYNCS.EXCH.64"));           // mbarrier.init
    EXPECT_THAT(sass, HasSubstr("SYNCS.ARRIVE.TRANS64"));    // arrive (expect_tx)
    EXPECT_THAT(sass, HasSubstr("SYNCS.PHASECHK.TRANS64"));  // try_wait.parity
    EXPECT_THAT(sass, HasSubstr("UBLKCP.S.G"));              // cp.async.bulk global->shared
  }
}

TEST(WarpSpecializedPipelineSassTest, Sm80PipelineHasCpAsyncAndMbarrierInstructions) {
  const std::string cuobjdump = FindCuobjdump("");
  ASSERT_FALSE(cuobjdump.empty()) << "no cuobjdump: run tools/setup.sh";
  const std::vector<std::string> opcodes = SassOpcodes(
      {Variant(PipelineShape{32, 64, 256, 3, 2}, true, "profiled")}, "sm_80", cuobjdump);
  const std::string& sass = opcodes[0];
  EXPECT_THAT(sass, HasSubstr("LDGSTS.E.BYPASS.128"));  // cp.async.cg, 16 bytes
  EXPECT_THAT(sass, HasSubstr("LDGDEPBAR"));  // commit group
  EXPECT_THAT(sass, HasSubstr("ATOMS.ARRIVE.64"));  // mbarrier.arrive on sm_80
}

}  // namespace
}  // namespace warptrace
