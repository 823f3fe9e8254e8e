// compile_phases: NVRTC's time trace read back into front end / NVVM / ptxas, on fixed JSON
// (exact durations, both shapes a trace file takes, what a partial trace lacks) and on a
// real NVRTC compile of the tiled GEMM, unprofiled and profiled (every phase present, the
// trace file gone after it is read); `--cost`'s rows carry the phases and FormatKernelCost
// prints them. No test asserts how long a phase takes.
#include "jit/cost/compile_phases.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/cuda/cuda_device.h"
#include "jit/compile/nvrtc_compiler.h"
#include "jit/cost/kernel_cost.h"
#include "jit/emit/emitter.h"
#include "jit/kernels/tiled_gemm.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// The shape NVRTC 13 writes (events abridged): the front end's first event at 1000 us,
// libNVVM from 5000 for 7000 us with nested events, ptxas appended after it.
constexpr char kTrace[] = R"({"otherData": {}, "traceEvents": [
  {"ph": "X", "name": "Processing Header File", "pid": 0, "tid": 0, "ts": 1000, "dur": 2500},
  {"ph": "X", "name": "LibNVVM", "pid": 0, "tid": 0, "ts": 5000, "dur": 7000},
  {"ph": "X", "name": "NVVM Optimizer", "pid": 0, "tid": 0, "ts": 6000, "dur": 4000},
  {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "ts": 0},
  {"ph": "X", "name": "Total PTXAS Time", "pid": 0, "tid": 0, "ts": 12000, "dur": 3250},
  {"ph": "X", "name": "PTX parsing and setup time", "pid": 0, "tid": 0, "ts": 12000, "dur": 900}
]})";

TEST(ParseNvrtcTimeTraceTest, SplitsTheCompileAtLibNvvmAndPtxas) {
  absl::StatusOr<CompilePhases> phases = ParseNvrtcTimeTrace(kTrace);
  ASSERT_THAT(phases, IsOk());
  // The metadata event at ts 0 is not a phase's start: the front end starts at 1000 us.
  EXPECT_EQ(phases->front_end, absl::Microseconds(4000));
  EXPECT_EQ(phases->nvvm, absl::Microseconds(7000));
  EXPECT_EQ(phases->ptxas, absl::Microseconds(3250));
}

TEST(ParseNvrtcTimeTraceTest, ReadsABareArrayOfEvents) {
  absl::StatusOr<CompilePhases> phases = ParseNvrtcTimeTrace(R"([
    {"ph": "X", "name": "LibNVVM", "ts": 10, "dur": 20},
    {"ph": "X", "name": "Total PTXAS Time", "ts": 30, "dur": 40}])");
  ASSERT_THAT(phases, IsOk());
  EXPECT_EQ(phases->front_end, absl::ZeroDuration());
  EXPECT_EQ(phases->nvvm, absl::Microseconds(20));
  EXPECT_EQ(phases->ptxas, absl::Microseconds(40));
}

TEST(ParseNvrtcTimeTraceTest, APartialTraceNamesThePhaseItLacks) {
  // Compiled to PTX only (no ptxas), or a trace ptxas did not append to.
  EXPECT_THAT(ParseNvrtcTimeTrace(R"([{"ph": "X", "name": "LibNVVM", "ts": 1, "dur": 2}])"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Total PTXAS Time")));
  EXPECT_THAT(
      ParseNvrtcTimeTrace(R"([{"ph": "X", "name": "Total PTXAS Time", "ts": 1, "dur": 2}])"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("LibNVVM")));
  EXPECT_THAT(ParseNvrtcTimeTrace(R"({"otherData": {}})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("traceEvents")));
  EXPECT_THAT(ParseNvrtcTimeTrace("{\"traceEvents\": ["),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not valid JSON")));
}

TEST(CompileWithPhasesTest, AProfiledAndAnUnprofiledCompileEachHaveEveryPhase) {
  // CUDA 13's NVRTC (what this project builds against) writes time traces.
  ASSERT_TRUE(NvrtcWritesTimeTraces());
  absl::StatusOr<Kernel> kernel = TiledGemm({.m = 64, .n = 64, .k = 128});
  ASSERT_THAT(kernel, IsOk());
  absl::StatusOr<TempDir> dir = TempDir::Create("compile-phases-test");
  ASSERT_THAT(dir, IsOk());
  NvrtcCompiler compiler;
  for (bool profiled : {false, true}) {
    SCOPED_TRACE(profiled ? "profiled" : "unprofiled");
    ProfileOptions profile;
    profile.enabled = profiled;
    absl::StatusOr<KernelSource> source = EmitKernel(*kernel, profile);
    ASSERT_THAT(source, IsOk());
    absl::StatusOr<CompileRequest> request = CudaCompileRequest(*source, CudaTarget::Default());
    ASSERT_THAT(request, IsOk());
    absl::StatusOr<TimedCompile> timed = CompileWithPhases(compiler, *request, dir->path());
    ASSERT_THAT(timed, IsOk());
    EXPECT_FALSE(timed->kernel.cubin.empty());
    EXPECT_GT(timed->phases.front_end, absl::ZeroDuration());
    EXPECT_GT(timed->phases.nvvm, absl::ZeroDuration());
    EXPECT_GT(timed->phases.ptxas, absl::ZeroDuration());
    // The trace is read and removed: the next compile's ptxas must not append to it.
    EXPECT_TRUE(std::filesystem::is_empty(dir->path()));
  }
}

TEST(CompileWithPhasesTest, ATraceThatCannotBeWrittenIsAnErrorNamingIt) {
  absl::StatusOr<Kernel> kernel = TiledGemm({.m = 64, .n = 64, .k = 128});
  ASSERT_THAT(kernel, IsOk());
  absl::StatusOr<KernelSource> source = EmitKernel(*kernel, ProfileOptions{});
  ASSERT_THAT(source, IsOk());
  absl::StatusOr<CompileRequest> request = CudaCompileRequest(*source, CudaTarget::Default());
  ASSERT_THAT(request, IsOk());
  NvrtcCompiler compiler;
  // NVRTC itself would abort the process here ("Failed to write time profiler data").
  EXPECT_THAT(CompileWithPhases(compiler, *request, "/nonexistent-warptrace-dir"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("cannot write NVRTC's time trace under "
                                 "/nonexistent-warptrace-dir")));
}

TEST(CompileWithPhasesTest, KernelCostRowsCarryThePhasesAndTheTablePrintsThem) {
  KernelCostOptions options;
  absl::StatusOr<std::vector<KernelCostVariant>> variants =
      FilterKernelCostVariants(ExampleKernelCostVariants(), "tiled_gemm");
  ASSERT_THAT(variants, IsOk());
  options.variants = *variants;
  options.repeats = 1;
  absl::StatusOr<std::vector<KernelCostRow>> rows = MeasureKernelCost(options);
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->size(), 1u);
  const KernelCostRow& row = rows->front();
  ASSERT_TRUE(row.off.phases.has_value());
  ASSERT_TRUE(row.on.phases.has_value());
  EXPECT_GT(row.on.phases->nvvm, absl::ZeroDuration());
  EXPECT_EQ(row.phases_unavailable, "");
  EXPECT_THAT(FormatKernelCost(*rows, options),
              HasSubstr(absl::StrCat("  ", row.name, " compile ms by phase off/on (extra): "
                                     "front end ")));
  // A row whose traced rounds failed says why instead.
  std::vector<KernelCostRow> failed = *rows;
  failed.front().off.phases.reset();
  failed.front().on.phases.reset();
  failed.front().phases_unavailable = "NVRTC time trace: disk full";
  EXPECT_THAT(FormatKernelCost(failed, options),
              HasSubstr(absl::StrCat("  ", row.name, " compile ms by phase: not measured: "
                                     "NVRTC time trace: disk full\n")));
  // Without timing rounds there are no phases, and no line.
  options.repeats = 0;
  rows = MeasureKernelCost(options);
  ASSERT_THAT(rows, IsOk());
  EXPECT_FALSE(rows->front().on.phases.has_value());
  EXPECT_THAT(FormatKernelCost(*rows, options), Not(HasSubstr("by phase")));
}

}  // namespace
}  // namespace warptrace
