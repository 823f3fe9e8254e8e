// The sm_90 pipeline compiles to the hardware's asynchronous machinery: the SASS NVRTC makes
// of it (read back with cuobjdump, which tools/setup.sh installs) holds mbarrier
// instructions (SYNCS.*: init, arrive with expected transactions, phase check) and bulk
// copies (UBLKCP), profiled or not; the cp.async variant on sm_80 holds LDGSTS and
// ATOMS.ARRIVE (mbarrier.arrive).
#include <cctype>
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
#include "jit/emitter.h"
#include "jit/kernels/warp_specialized_pipeline.h"
#include "profiler/tools/recorder_cost.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;

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

// The opcodes in the SASS of `shape`'s kernel for `arch`, profiled or not.
std::string Sass(const PipelineShape& shape, bool profiled, const std::string& arch,
                 const std::string& cuobjdump) {
  absl::StatusOr<Kernel> kernel = WarpSpecializedPipeline(shape);
  EXPECT_THAT(kernel, IsOk());
  if (!kernel.ok()) return "";
  ProfileOptions options;
  options.enabled = profiled;
  absl::StatusOr<KernelSource> source = EmitKernel(*kernel, options);
  EXPECT_THAT(source, IsOk());
  if (!source.ok()) return "";
  // recorder_cost's NVRTC helper knows the recorder's headers; the primitives go inline.
  std::string text = source->source;
  const std::string include = "#include \"warptrace_primitives.cuh\"";
  for (const EmbeddedFile& header : source->headers) {
    if (header.name == "warptrace_primitives.cuh") {
      text.replace(text.find(include), include.size(), header.contents);
    }
  }
  absl::StatusOr<CompiledKernel> compiled = CompileForCost(text, arch);
  EXPECT_THAT(compiled, IsOk());
  if (!compiled.ok()) return "";
  EXPECT_EQ(compiled->log, "");
  const std::string cubin = TestTempPath(absl::StrCat("pipeline_", arch, ".cubin"));
  EXPECT_THAT(WriteFileAtomically(cubin, compiled->cubin, {.role = "cubin"}), IsOk());
  absl::StatusOr<ProgramResult> sass = RunProgram({cuobjdump, "-sass", cubin});
  EXPECT_THAT(sass, IsOk());
  if (!sass.ok()) return "";
  EXPECT_EQ(sass->exit_code, 0) << sass->output << sass->error_output;
  return Opcodes(sass->output);
}

TEST(WarpSpecializedPipelineSassTest, Sm90PipelineHasMbarrierAndBulkCopyInstructions) {
  const std::string cuobjdump = FindCuobjdump("");
  ASSERT_FALSE(cuobjdump.empty())
      << "no cuobjdump: run tools/setup.sh (installs the PyPI wheels nvidia-cuda-cuobjdump and "
         "nvidia-cuda-nvdisasm), or set CUOBJDUMP";
  PipelineShape shape{32, 64, 256, 3, 2};
  shape.copy = CopyKind::kBulk;
  for (bool persistent : {false, true}) {
    shape.persistent_blocks = persistent ? 3 : 0;
    for (bool profiled : {false, true}) {
      SCOPED_TRACE(absl::StrCat(persistent ? "persistent" : "plain",
                                profiled ? " profiled" : " unprofiled"));
      const std::string sass = Sass(shape, profiled, "sm_90", cuobjdump);
      EXPECT_THAT(sass, HasSubstr("SYNCS.EXCH.64"));           // mbarrier.init
      EXPECT_THAT(sass, HasSubstr("SYNCS.ARRIVE.TRANS64"));    // arrive (expect_tx)
      EXPECT_THAT(sass, HasSubstr("SYNCS.PHASECHK.TRANS64"));  // try_wait.parity
      EXPECT_THAT(sass, HasSubstr("UBLKCP.S.G"));              // cp.async.bulk global->shared
    }
  }
}

TEST(WarpSpecializedPipelineSassTest, Sm80PipelineHasCpAsyncAndMbarrierInstructions) {
  const std::string cuobjdump = FindCuobjdump("");
  ASSERT_FALSE(cuobjdump.empty()) << "no cuobjdump: run tools/setup.sh";
  const std::string sass = Sass(PipelineShape{32, 64, 256, 3, 2}, true, "sm_80", cuobjdump);
  EXPECT_THAT(sass, HasSubstr("LDGSTS.E.BYPASS.128"));  // cp.async.cg, 16 bytes
  EXPECT_THAT(sass, HasSubstr("LDGDEPBAR"));  // commit group
  EXPECT_THAT(sass, HasSubstr("ATOMS.ARRIVE.64"));  // mbarrier.arrive on sm_80
}

}  // namespace
}  // namespace warptrace
