// Tests of jit/emitter.h: golden files for the three example kernels, and the rules of the
// emitted source (profiling on and off, early returns, placement, determinism).
//
// Goldens live in tests/golden/*.cu. Regenerate them after an intended change with
//   WARPTRACE_UPDATE_GOLDENS=1 bazel run //tests/jit:emitter_test
// (bazel run sets BUILD_WORKSPACE_DIRECTORY, where the files are written), then review the
// diff.
#include "jit/emitter.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/kernels/reduction.h"
#include "jit/kernels/tiled_gemm.h"
#include "jit/kernels/warp_specialized_pipeline.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr char kRegenerate[] =
    "// Regenerate: WARPTRACE_UPDATE_GOLDENS=1 bazel run //tests/jit:emitter_test";

Kernel MustBuild(absl::StatusOr<Kernel> kernel) {
  EXPECT_THAT(kernel, IsOk());
  return kernel.ok() ? *kernel : Kernel{};
}

KernelSource MustEmit(const Kernel& kernel, const ProfileOptions& options) {
  absl::StatusOr<KernelSource> source = EmitKernel(kernel, options);
  EXPECT_THAT(source, IsOk());
  return source.ok() ? *source : KernelSource{};
}

// Compares `source` with tests/golden/<name> below its two provenance lines, or rewrites
// the golden under WARPTRACE_UPDATE_GOLDENS=1.
void ExpectGolden(const std::string& name, const std::string& description,
                  const std::string& source) {
  const std::string provenance =
      absl::StrCat("// Golden: jit/emitter output for ", description, ".\n", kRegenerate, "\n");
  const char* update = std::getenv("WARPTRACE_UPDATE_GOLDENS");
  if (update != nullptr && std::string(update) == "1") {
    const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
    ASSERT_NE(workspace, nullptr) << "run with `bazel run` to update goldens";
    std::ofstream out(absl::StrCat(workspace, "/tests/golden/", name), std::ios::binary);
    out << provenance << source;
    ASSERT_TRUE(out.good()) << "could not write tests/golden/" << name;
    return;
  }
  std::ifstream in(absl::StrCat("tests/golden/", name), std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing tests/golden/" << name << "; " << kRegenerate;
  std::stringstream golden;
  golden << in.rdbuf();
  const std::string text = golden.str();
  ASSERT_TRUE(absl::StartsWith(text, provenance))
      << "tests/golden/" << name << " lacks its provenance lines";
  EXPECT_EQ(text.substr(provenance.size()), source)
      << "emitted source differs from tests/golden/" << name << "; " << kRegenerate;
}

TEST(EmitterGoldenTest, TiledGemmProfiledPerWarpgroup) {
  const Kernel kernel = MustBuild(TiledGemm({64, 64, 128, 16}));
  ProfileOptions options;  // warpgroup units, auto placement, kernel site
  ExpectGolden("tiled_gemm.cu", "TiledGemm(M=64, N=64, K=128, tile=16), warpgroup units, auto",
               MustEmit(kernel, options).source);
}

TEST(EmitterGoldenTest, TiledGemmUnprofiled) {
  const Kernel kernel = MustBuild(TiledGemm({64, 64, 128, 16}));
  ExpectGolden("tiled_gemm_unprofiled.cu", "TiledGemm(M=64, N=64, K=128, tile=16), unprofiled",
               EmitUnprofiledKernel(kernel).source);
}

TEST(EmitterGoldenTest, WarpSpecializedPipelineProfiledPerWarpWithBarrierWaits) {
  const Kernel kernel = MustBuild(WarpSpecializedPipeline({32, 64, 256, 3, 2}));
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  options.policy.barrier_waits = true;
  ExpectGolden("warp_specialized_pipeline.cu",
               "WarpSpecializedPipeline(M=32, N=64, K=256, stages=3, consumers=2), warp units, "
               "barrier waits, auto",
               MustEmit(kernel, options).source);
}

TEST(EmitterGoldenTest, ReductionProfiledPerWarpInGlobalMemoryWithLoopIterations) {
  const Kernel kernel = MustBuild(Reduction({4096, 8, 256}));
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  options.placement = Placement::kGlobal;
  options.policy.loop_iterations = true;
  ExpectGolden("reduction.cu",
               "Reduction(n=4096, blocks=8, threads=256), warp units, global, loop iterations",
               MustEmit(kernel, options).source);
}

// ---- Rules of the emitted source ----

TEST(EmitterTest, UnprofiledSourceHasNoTraceParameterIncludeOrRecordCode) {
  const Kernel kernel = MustBuild(TiledGemm({32, 32, 32, 16}));
  ProfileOptions options;
  options.enabled = false;
  const KernelSource source = MustEmit(kernel, options);
  EXPECT_FALSE(source.profiled);
  EXPECT_FALSE(source.layout.has_value());
  EXPECT_TRUE(source.headers.empty());
  EXPECT_EQ(source.params, kernel.params);
  EXPECT_THAT(source.source, Not(HasSubstr("warptrace_trace")));
  EXPECT_THAT(source.source, Not(HasSubstr("#include")));
  EXPECT_THAT(source.source, Not(HasSubstr("warptrace::")));
  EXPECT_THAT(source.source, HasSubstr("extern \"C\" void warptrace_host_entry_tiled_gemm(void** args)"));
}

TEST(EmitterTest, ProfiledSourceAppendsTheTraceBufferAndCarriesTheLayout) {
  const Kernel kernel = MustBuild(TiledGemm({32, 32, 32, 16}));
  const KernelSource source = MustEmit(kernel, {});
  EXPECT_TRUE(source.profiled);
  ASSERT_EQ(source.params.size(), 4u);
  EXPECT_EQ(source.params.back(), (KernelParam{"unsigned int*", "warptrace_trace", 8, true}));
  EXPECT_THAT(source.source,
              HasSubstr("tiled_gemm(const float* A, const float* B, float* C, unsigned int* "
                        "warptrace_trace)"));
  EXPECT_THAT(source.source, HasSubstr("#include \"recorder.cuh\""));
  ASSERT_TRUE(source.layout.has_value());
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(kernel, {});
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(*source.layout, plan->layout());
  std::vector<std::string> header_names;
  for (const EmbeddedFile& f : source.headers) header_names.push_back(f.name);
  EXPECT_THAT(header_names, ::testing::Contains("recorder.cuh"));
  EXPECT_THAT(source.source,
              HasSubstr("*static_cast<unsigned int**>(args[3])"));
}

TEST(EmitterTest, EarlyReturnClosesOpenSitesInnermostFirstThenRunsTheEpilogue) {
  KernelBuilder b("early");
  b.Param("int*", "flag").Block({32, 1, 1});
  b.Region("outer", [&] {
    b.Region("inner", [&] { b.If("flag[0] != 0", [&] { b.Return(); }); });
  });
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  const std::string src = MustEmit(MustBuild(b.Build()), options).source;
  EXPECT_THAT(src, HasSubstr(
                       "      if (flag[0] != 0) {\n"
                       "        warptrace::device::Record(warptrace_unit, 0x80000002u);  // exit "
                       "inner (early return)\n"
                       "        warptrace::device::Record(warptrace_unit, 0x80000001u);  // exit "
                       "outer (early return)\n"
                       "        warptrace::device::Record(warptrace_unit, 0x80000000u);  // exit "
                       "early (early return)\n"
                       "        warptrace::device::Epilogue(warptrace_unit, warptrace_config);\n"
                       "        return;\n"));
  // The epilogue runs on both exits: the return and the end of the kernel.
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(src, "Epilogue(")).size(), 3u);
}

TEST(EmitterTest, UnprofiledEarlyReturnIsAPlainReturn) {
  KernelBuilder b("early");
  b.Param("int*", "flag").Block({32, 1, 1});
  b.If("flag[0] != 0", [&] { b.Return(); });
  const std::string src = EmitUnprofiledKernel(MustBuild(b.Build())).source;
  EXPECT_THAT(src, HasSubstr("  if (flag[0] != 0) {\n    return;\n  }\n"));
}

TEST(EmitterTest, SharedPlacementStagesEventsInAStaticSharedArray) {
  const Kernel kernel = MustBuild(TiledGemm({32, 32, 32, 16}));
  ProfileOptions options;
  options.placement = Placement::kShared;
  options.capacity_override = 7;
  const std::string src = MustEmit(kernel, options).source;
  // 2 warpgroup units x 7 events.
  EXPECT_THAT(src, HasSubstr("__shared__ unsigned long long warptrace_staging[14];"));
  EXPECT_THAT(src, HasSubstr("reinterpret_cast<unsigned int*>(warptrace_staging)"));
  EXPECT_THAT(src, HasSubstr("/*units_per_block=*/2u, /*capacity=*/7u, /*shared=*/1u,"));
}

TEST(EmitterTest, GlobalPlacementPassesNoStagingArray) {
  const Kernel kernel = MustBuild(TiledGemm({32, 32, 32, 16}));
  ProfileOptions options;
  options.placement = Placement::kGlobal;
  const std::string src = MustEmit(kernel, options).source;
  EXPECT_THAT(src, Not(HasSubstr("warptrace_staging")));
  EXPECT_THAT(src, HasSubstr("warptrace_trace, nullptr, warptrace_tid"));
}

TEST(EmitterTest, DynamicSharedMacroIsDefinedOnlyWhenUsed) {
  const std::string with = MustEmit(MustBuild(WarpSpecializedPipeline({})), {}).source;
  EXPECT_THAT(with, HasSubstr("#ifndef WARPTRACE_DYNAMIC_SHARED\n"
                              "#define WARPTRACE_DYNAMIC_SHARED(T, name) extern __shared__ T "
                              "name[]\n#endif\n"));
  EXPECT_THAT(with, HasSubstr("WARPTRACE_DYNAMIC_SHARED(float, stages);"));
  const std::string without = MustEmit(MustBuild(Reduction({})), {}).source;
  EXPECT_THAT(without, Not(HasSubstr("WARPTRACE_DYNAMIC_SHARED")));
}

TEST(EmitterTest, SameKernelAndOptionsGiveIdenticalSource) {
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  const std::string a = MustEmit(MustBuild(WarpSpecializedPipeline({})), options).source;
  const std::string b = MustEmit(MustBuild(WarpSpecializedPipeline({})), options).source;
  EXPECT_EQ(a, b);
}

TEST(EmitterTest, RejectsAPlanMadeForAnotherKernel) {
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(MustBuild(Reduction({})), {});
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(EmitKernel(MustBuild(TiledGemm({})), *plan),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("plan was made for kernel reduction")));
}

TEST(EmitterTest, ProfilingErrorsComeFromThePlan) {
  KernelBuilder b("loop");
  b.Param("int", "n").Block({32, 1, 1});
  b.For("i", 0, "n", TripCount::Unknown(), [&] { b.Region("r", [&] { b.Stmt(";"); }); });
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  EXPECT_THAT(EmitKernel(MustBuild(b.Build()), options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("loop i, whose trip count")));
}

TEST(EmitterTest, RolesBecomeAnIfChainOnTheWarpgroupIndex) {
  const std::string src = MustEmit(MustBuild(WarpSpecializedPipeline({})), {}).source;
  EXPECT_THAT(src, HasSubstr("const unsigned int warptrace_role = warptrace_tid / 128u;\n"));
  EXPECT_THAT(src, HasSubstr("if (warptrace_role < 1u) {\n"));
  EXPECT_THAT(src, HasSubstr("const int cwg = static_cast<int>(warptrace_role - 1u);"));
}

}  // namespace
}  // namespace warptrace
