// Tests of jit/emit/emitter.h: golden files for the three example kernels, and the rules of the
// emitted source (profiling on and off, early returns, placement, determinism).
//
// Goldens live in tests/golden/*.cu. Regenerate them after an intended change with
//   WARPTRACE_UPDATE_GOLDENS=1 bazel run //tests/jit/emit:emitter_test
// (bazel run sets BUILD_WORKSPACE_DIRECTORY, where the files are written), then review the
// diff.
#include "jit/emit/emitter.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/kernels/reduction.h"
#include "jit/kernels/tiled_gemm.h"
#include "jit/kernels/warp_specialized_pipeline.h"
#include "jit/plan/record_plan.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr char kRegenerate[] =
    "// Regenerate: WARPTRACE_UPDATE_GOLDENS=1 bazel run //tests/jit/emit:emitter_test";

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

TEST(EmitterTest, ATensorMapParameterIsAGridConstantPassedByValueWithThePrimitives) {
  KernelBuilder b("tma");
  b.Param("CUtensorMap", "tmA").Param("int*", "out").Grid({1, 1, 1}).Block({128, 1, 1});
  b.Stmt("out[threadIdx.x] = 0;");
  const Kernel kernel = MustBuild(b.Build());
  ProfileOptions options;
  options.enabled = false;
  const KernelSource source = MustEmit(kernel, options);
  EXPECT_THAT(source.source, HasSubstr("extern \"C\" __global__ void tma(const __grid_constant__ "
                                       "CUtensorMap tmA, int* out)"));
  // The host entry passes the 128 bytes its argument slot points at, by value.
  EXPECT_THAT(source.source, HasSubstr("tma(*static_cast<CUtensorMap*>(args[0]), "
                                       "*static_cast<int**>(args[1]));"));
  // CUtensorMap comes with the primitives header.
  EXPECT_THAT(source.source, HasSubstr("#include \"warptrace_primitives.cuh\""));
  EXPECT_FALSE(source.headers.empty());
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
                       "        warptrace::recorder::RecordAt<0u>(warptrace_unit, 0x80000002u);  // "
                       "exit inner (early return)\n"
                       "        warptrace::recorder::RecordAt<1u>(warptrace_unit, 0x80000001u);  // "
                       "exit outer (early return)\n"
                       "        warptrace::recorder::RecordAt<2u>(warptrace_unit, 0x80000000u);  // "
                       "exit early (early return)\n"
                       "        warptrace::recorder::Advance<3u>(warptrace_unit);  // past the run's "
                       "3 slots\n"
                       "        warptrace::recorder::Epilogue(warptrace_unit, warptrace_config, warptrace_trace, WARPTRACE_THREAD_LINEAR_NOW, WARPTRACE_BLOCK_LINEAR_NOW, warptrace::abi::kFlagEarlyReturn);\n"
                       "        return;\n"));
  // The epilogue runs on both exits: the return and the end of the kernel, which sets no
  // early-return flag.
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(src, "Epilogue(")).size(), 3u);
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(src, "kFlagEarlyReturn")).size(), 2u);
}

TEST(EmitterTest, AReturnThatEndsTheKernelIsItsEndNotAnEarlyReturn) {
  KernelBuilder b("ends_with_return");
  b.Param("int*", "flag").Block({32, 1, 1});
  b.Region("work", [&] { b.Stmt("flag[0] = 1;"); });
  b.Return();
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  const std::string src = MustEmit(MustBuild(b.Build()), options).source;
  EXPECT_THAT(src, HasSubstr("// exit ends_with_return (kernel end)"));
  EXPECT_THAT(src, Not(HasSubstr("kFlagEarlyReturn")));
}

TEST(EmitterTest, UnprofiledEarlyReturnIsAPlainReturn) {
  KernelBuilder b("early");
  b.Param("int*", "flag").Block({32, 1, 1});
  b.If("flag[0] != 0", [&] { b.Return(); });
  const std::string src = EmitUnprofiledKernel(MustBuild(b.Build())).source;
  EXPECT_THAT(src, HasSubstr("  if (flag[0] != 0) {\n    return;\n  }\n"));
}

// Builder constructs' code sits under `#line 1 "<builder path>"`; the generated line after
// it under `#line <its real line> "<kernel>.cu"`, so diagnostics in generated code (and
// __LINE__ there) give the line of the source as emitted.
TEST(EmitterTest, LineDirectivesNameBuilderPathsAndGiveGeneratedCodeItsRealLines) {
  KernelBuilder b("lines");
  b.Param("float*", "out").Block({64, 1, 1});
  b.Preamble("__device__ float Half(float x) {\n  return x / 2.0f;\n}");
  b.Stmt("float v = 1.0f;");
  b.Region("r", [&] {
    b.Stmt("v = Half(v);\nv += 1.0f;");
    b.Barrier("b");
    b.Stmt("out[threadIdx.x] = v;");
  });
  const Kernel kernel = MustBuild(b.Build());
  for (const KernelSource& source :
       {EmitUnprofiledKernel(kernel), MustEmit(kernel, ProfileOptions{})}) {
    std::vector<std::string> lines = absl::StrSplit(source.source, '\n');
    std::vector<std::string> attributed;
    int restores = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& line = lines[i];
      if (!absl::StartsWith(line, "#line ")) continue;
      ASSERT_LT(i + 1, lines.size());
      if (absl::EndsWith(line, " \"lines.cu\"")) {
        // The directive is physical line i + 1: the line after it is i + 2.
        EXPECT_EQ(line, absl::StrCat("#line ", i + 2, " \"lines.cu\"")) << source.source;
        ++restores;
      } else {
        attributed.push_back(absl::StrCat(line, " -> ", lines[i + 1]));
      }
    }
    EXPECT_THAT(attributed,
                ElementsAre("#line 1 \"kernel lines > preamble 1\" -> __device__ float "
                            "Half(float x) {",
                            "#line 1 \"kernel lines > statement `float v = 1.0f;`\" -> "
                            "  float v = 1.0f;",
                            "#line 1 \"kernel lines > region r > statement `v = Half(v); v += "
                            "1.0f;`\" ->     v = Half(v);",
                            "#line 1 \"kernel lines > region r > barrier b\" ->     "
                            "__syncthreads();  // barrier b",
                            "#line 1 \"kernel lines > region r > statement `out[threadIdx.x] = "
                            "v;`\" ->     out[threadIdx.x] = v;"))
        << source.source;
    EXPECT_GE(restores, 3) << source.source;  // after the preamble, v and the region
  }
}

// A path's quotes and backslashes are escaped in the directive's string literal.
TEST(EmitterTest, LineDirectiveNamesEscapeQuotesAndBackslashes) {
  KernelBuilder b("quoted");
  b.Param("char*", "out").Block({32, 1, 1});
  b.Stmt("out[0] = \"\\\\\"[0];");
  const std::string src = EmitUnprofiledKernel(MustBuild(b.Build())).source;
  EXPECT_THAT(src,
              HasSubstr("#line 1 \"kernel quoted > statement `out[0] = \\\"\\\\\\\\\\\"[0];`\"\n"))
      << src;
}

TEST(EmitterTest, PreambleComesBeforeTheKernelInOrderWithTheMathConstantsHeader) {
  KernelBuilder b("helpers");
  b.Param("float*", "out").Block({32, 1, 1});
  b.Preamble("#include <math_constants.h>");
  b.Stmt("out[0] = Twice(CUDART_PI_F);");
  b.Preamble("__device__ float Twice(float x) { return 2.0f * x; }\n");
  const Kernel kernel = MustBuild(b.Build());
  for (const KernelSource& source : {EmitUnprofiledKernel(kernel),
                                     MustEmit(kernel, ProfileOptions{})}) {
    const std::string& src = source.source;
    // Each under a #line naming it (compiler errors in it name the preamble).
    const size_t first =
        src.find("#line 1 \"kernel helpers > preamble 1\"\n#include <math_constants.h>\n");
    const size_t second = src.find(
        "#line 1 \"kernel helpers > preamble 2\"\n"
        "__device__ float Twice(float x) { return 2.0f * x; }\n");
    const size_t kernel_at = src.find("extern \"C\" __global__ void helpers(");
    ASSERT_NE(first, std::string::npos) << src;
    ASSERT_NE(second, std::string::npos) << src;
    EXPECT_LT(first, second);
    EXPECT_LT(second, kernel_at);
    bool has_constants = false;
    for (const EmbeddedFile& header : source.headers) {
      has_constants |= header.name == "math_constants.h";
    }
    EXPECT_TRUE(has_constants);
  }
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
  EXPECT_THAT(with, HasSubstr("#ifndef WARPTRACE_DYNAMIC_SHARED_ALIGNED\n"
                              "#define WARPTRACE_DYNAMIC_SHARED_ALIGNED(T, name, align) extern "
                              "__shared__ __align__(align) T name[]\n#endif\n"));
  EXPECT_THAT(with, HasSubstr("WARPTRACE_DYNAMIC_SHARED_ALIGNED(float, stages, 128);"));
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

// ---- Warp specialization ----

// `conditional`: the cp.async copy is issued under an if, so the number of its groups in
// flight at the wait is not the same on every path (the emitter counts them).
Kernel HandoffKernel(bool bulk, bool conditional = false) {
  KernelBuilder b("handoff");
  b.Param("const float*", "in").Param("float*", "out").Grid({1, 1, 1}).Block({256, 1, 1});
  b.SharedArray("float", "tile", 64);
  b.PhaseBarriers("ready", 1, bulk ? 1 : 128);
  b.PhaseBarriers("done", 2, 1);
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] {
              AsyncCopySpec copy;
              copy.name = "fill";
              copy.dst = "tile";
              copy.src = "in";
              copy.rows = 2;
              copy.row_bytes = 128;
              copy.src_row_stride_bytes = "256";
              if (bulk) {
                copy.barrier = "ready";
                copy.barrier_phase = "0";
                b.ArriveExpectTx("ready", 0, 0, 256);
                b.AsyncCopy(copy);
              } else if (conditional) {
                b.If("in != nullptr", [&] { b.AsyncCopy(copy); });
                b.WaitAsyncCopies();
                b.Arrive("ready", 0, 0);
              } else {
                b.AsyncCopy(copy);
                b.WaitAsyncCopies();
                b.Arrive("ready", 0, 0);
              }
              b.WaitPhase("done", 1, 0);
            }},
           {"consumer", 1, "", [&] {
              b.WaitPhase("ready", 0, 0);
              b.Stmt("out[threadIdx.x % 128] = tile[threadIdx.x % 64];");
              b.Arrive("done", 1, 0, ArriveBy::kOneThread);
            }}});
  return MustBuild(b.Build());
}

TEST(EmitterTest, PhaseBarriersAreDeclaredAndInitializedByThreadZeroBeforeTheBody) {
  const KernelSource source = MustEmit(HandoffKernel(false), {});
  EXPECT_THAT(source.source, HasSubstr("#include \"warptrace_primitives.cuh\"\n"));
  EXPECT_THAT(source.source,
              HasSubstr("__shared__ unsigned long long ready[1];  // phase barriers 0-0\n"));
  EXPECT_THAT(source.source,
              HasSubstr("__shared__ unsigned long long done[2];  // phase barriers 1-2\n"));
  EXPECT_THAT(source.source,
              HasSubstr("  if (warptrace_tid == 0u) {\n"
                        "    for (int warptrace_i = 0; warptrace_i < 1; ++warptrace_i) "
                        "warptrace_mbarrier_init(&ready[warptrace_i], 128u);\n"
                        "    for (int warptrace_i = 0; warptrace_i < 2; ++warptrace_i) "
                        "warptrace_mbarrier_init(&done[warptrace_i], 1u);\n"
                        "    warptrace_fence_mbarrier_init();\n"
                        "  }\n"
                        "  __syncthreads();\n"));
  std::vector<std::string> names;
  for (const EmbeddedFile& header : source.headers) names.push_back(header.name);
  EXPECT_THAT(names, ::testing::Contains("warptrace_primitives.cuh"));
  EXPECT_THAT(names, ::testing::Contains("recorder.cuh"));
  // Unprofiled, the primitives are still there, the recorder is not.
  const KernelSource plain = EmitUnprofiledKernel(HandoffKernel(false));
  EXPECT_THAT(plain.source, HasSubstr("warptrace_mbarrier_init(&done[warptrace_i], 1u);"));
  EXPECT_THAT(plain.source, Not(HasSubstr("RecordWithPayload")));
  // The primitives (and the headers they include) and the math constants a preamble may
  // include, no recorder.
  std::vector<std::string> plain_names;
  for (const EmbeddedFile& header : plain.headers) plain_names.push_back(header.name);
  ASSERT_FALSE(plain_names.empty());
  EXPECT_EQ(plain_names[0], "warptrace_primitives.cuh");
  EXPECT_THAT(plain_names, ::testing::Contains("tensor_core_sm80.cuh"));
  EXPECT_THAT(plain_names, ::testing::Contains("math_constants.h"));
  EXPECT_THAT(plain_names, ::testing::Contains("tma_sm90.cuh"));
  EXPECT_THAT(plain_names, ::testing::Contains("wgmma_sm90.cuh"));
  EXPECT_THAT(plain_names, Not(::testing::Contains("recorder.cuh")));
}

TEST(EmitterTest, ArrivalsAreRecordedBeforeAndWaitReleasesAfterWithTheirPayloads) {
  const KernelSource source = MustEmit(HandoffKernel(false), {});
  const RecordPlan plan = *RecordPlan::Create(HandoffKernel(false), {});
  auto site = [&](const std::string& name) {
    for (const SiteInfo& s : plan.sites()) {
      if (s.name == name) return s.id;
    }
    ADD_FAILURE() << "no site " << name;
    return 0u;
  };
  // Element 1 of `done` (whose first id is 1) is barrier 2; an arrival by one thread is
  // guarded by the role's first thread (128).
  EXPECT_THAT(source.source,
              HasSubstr(absl::StrFormat(
                  "if (warptrace_tid == 128u) {\n"
                  "          const unsigned int warptrace_bar = static_cast<unsigned int>(1);\n"
                  "          warptrace::recorder::RecordWithPayload(warptrace_unit, 0x%08xu, 1u + "
                  "warptrace_bar, static_cast<unsigned int>(0));  // arrival arrive done\n"
                  "          (void)warptrace_mbarrier_arrive(&done[warptrace_bar]);\n",
                  site("arrive done"))));
  // The wait itself under a #line naming it (the host's deadlock report names the path);
  // its enter carries no payload (trace version 4), its exit does.
  EXPECT_THAT(source.source,
              HasSubstr(absl::StrFormat(
                  "warptrace::recorder::RecordAt<0u>(warptrace_unit, 0x%08xu);  // enter wait "
                  "ready\n"
                  "#line 1 \"kernel handoff > roles by warpgroup > role consumer > wait "
                  "ready[0]\"\n"
                  "        warptrace_mbarrier_wait_parity(&ready[warptrace_bar], warptrace_phase & "
                  "1u);\n#line ",
                  site("wait ready"))));
  EXPECT_THAT(source.source,
              HasSubstr(absl::StrFormat(
                  " \"handoff.cu\"\n"
                  "        warptrace::recorder::RecordWithPayloadAt<1u>(warptrace_unit, 0x%08xu, "
                  "warptrace_bar, warptrace_phase);  // exit wait ready\n",
                  site("wait ready") | abi::kExitFlag)));
}

TEST(EmitterTest, CpAsyncCopiesShareChunksOverTheRoleAndEndAtTheWait) {
  const std::string src = MustEmit(HandoffKernel(false, /*conditional=*/true), {}).source;
  EXPECT_THAT(src, HasSubstr("for (unsigned int warptrace_i = warptrace_tid - 0u; warptrace_i < "
                             "16u; warptrace_i += 128u) {"));
  EXPECT_THAT(src, HasSubstr("warptrace_cp_async_commit();"));
  EXPECT_THAT(src, HasSubstr("warptrace_cp_async_wait_prior(0u);  // wait async copies\n"));
  // The copy (node 3 of the tree, under its if) keeps its issue numbers in warptrace_copy3_*, per trace
  // unit in shared memory, kept by the unit's recorder alone (no register of any thread).
  EXPECT_THAT(src, HasSubstr("__shared__ warptrace_unit_track warptrace_track[2];"));
  EXPECT_THAT(src, HasSubstr("const unsigned int warptrace_rec = "
                             "warptrace::recorder::RecordedUnit(warptrace_config, warptrace_tid, "));
  // At the wait, at most one fill group is in flight (GroupBounds): one conditional
  // record, no loop (issue 51). The site's counts are read into registers once and the
  // done count written back once (not a shared-memory access at every test).
  EXPECT_THAT(src, HasSubstr("warptrace_cp_async_wait_prior(0u);  // wait async copies\n"
                             "      if (warptrace_rec < 2u) {\n"
                             "        {  // end of fill\n"
                             "          unsigned int warptrace_done = "
                             "warptrace_track[warptrace_rec].warptrace_copy3_done;\n"
                             "          const unsigned int warptrace_ended = "
                             "warptrace_track[warptrace_rec].warptrace_copy3_issued;\n"
                             "          if (warptrace_done < warptrace_ended) {  // 1 of 1 "
                             "at most\n"));
  EXPECT_THAT(src, HasSubstr("            ++warptrace_done;\n"
                             "          }\n"
                             "          warptrace_track[warptrace_rec].warptrace_copy3_done = "
                             "warptrace_done;\n"
                             "        }\n"));
  // Before the exit, where nothing bounds them, the loop.
  EXPECT_THAT(src, HasSubstr("      for (; warptrace_done < warptrace_ended; ++warptrace_done) {"));
  // A cp.async group's begin and end carry no payload (trace version 4): the dump numbers
  // them by their order in the unit.
  EXPECT_THAT(src, HasSubstr("warptrace::recorder::Record(warptrace_unit, 0x00000001u);  // begin "
                             "of fill"));
  EXPECT_THAT(src, HasSubstr("warptrace::recorder::Record(warptrace_unit, 0x80000001u);  // end of "
                             "fill"));
  EXPECT_THAT(src, Not(HasSubstr("0xffffffffu")));
}

TEST(EmitterTest, GroupsInFlightInAKnownNumberAreRecordedWithoutCounters) {
  // One group committed and waited for on every path: its begin and its end are plain
  // record points (no issue or retirement counter, no recorder-only guard, no loop before
  // the exit), so they join the runs around them (issue 51). The same events, in the same
  // order, as the counted code records.
  const std::string src = MustEmit(HandoffKernel(false), {}).source;
  EXPECT_THAT(src, Not(HasSubstr("warptrace_unit_track")));
  EXPECT_THAT(src, Not(HasSubstr("warptrace_copy2_issued")));
  EXPECT_THAT(src, HasSubstr("      {  // copy fill: 2 rows x 128 bytes, cp.async by 128 threads\n"
                             "        warptrace::recorder::RecordAt<0u>(warptrace_unit, "
                             "0x00000001u);  // begin of fill\n"));
  EXPECT_THAT(src, HasSubstr("      warptrace_cp_async_wait_prior(0u);  // wait async copies\n"
                             "      warptrace::recorder::RecordAt<1u>(warptrace_unit, "
                             "0x80000001u);  // end of fill\n"));
}

TEST(EmitterTest, AHistoryTooWideForOneHotKeepsBinarySiteIndices) {
  // Five recorded cp.async sites and a wait leaving seven groups in flight: one-hot entries
  // would take 35 bits, binary ones 3 x 7 = 21, so the history stays binary (all ones:
  // "no recorded site") in a 32-bit word, each site's open groups counted by compares.
  KernelBuilder b("five_sites");
  b.Param("const float*", "in").Grid({1, 1, 1}).Block({128, 1, 1});
  b.SharedArray("float", "tile", 64);
  // An early return keeps the counted ends (the plan cannot derive them at the waits).
  b.If("in == nullptr", [&] { b.Return(); });
  b.For("k", 0, 4, TripCount::Exact(4), [&] {
    for (int i = 0; i < 5; ++i) {
      AsyncCopySpec copy;
      copy.name = absl::StrCat("fill", i);
      copy.dst = "tile + (k % 2) * 32";
      copy.src = "in + k * 32";
      copy.row_bytes = 128;
      b.AsyncCopy(copy);
    }
    b.WaitAsyncCopies(7);
  });
  b.WaitAsyncCopies();
  const std::string src = MustEmit(MustBuild(b.Build()), {}).source;
  EXPECT_THAT(src, HasSubstr("unsigned int warptrace_group_sites;  // sites of the last 7 "
                             "cp.async groups, 3 bits each\n"));
  EXPECT_THAT(src, HasSubstr("warptrace_track[warptrace_rec].warptrace_group_sites = ~0u;"));
  EXPECT_THAT(src, HasSubstr("warptrace_group_sites << 3) | 4u;\n"));
  EXPECT_THAT(src, HasSubstr("(((warptrace_track[warptrace_rec].warptrace_group_sites >> 18u) "
                             "& 7u) == 4u ? 1u : 0u))"));
  EXPECT_THAT(src, Not(HasSubstr("__popc")));
}

TEST(EmitterTest, AWaitWithGroupsInFlightKeepsTheMostRecentCopiesOpen) {
  KernelBuilder b("pipelined");
  b.Param("const float*", "in").Grid({1, 1, 1}).Block({128, 1, 1});
  b.SharedArray("float", "tile", 64);
  // An early return keeps the counted ends (the plan cannot derive them at the waits).
  b.If("in == nullptr", [&] { b.Return(); });
  b.For("k", 0, 4, TripCount::Exact(4), [&] {
    AsyncCopySpec copy;
    copy.name = "fill";
    copy.dst = "tile + (k % 2) * 32";
    copy.src = "in + k * 32";
    copy.row_bytes = 128;
    b.AsyncCopy(copy);
    b.WaitAsyncCopies(1);
  });
  b.WaitAsyncCopies();
  const std::string src = MustEmit(MustBuild(b.Build()), {}).source;
  // The history is a shift register of one-hot site entries (one recorded cp.async site:
  // 1 bit, 0 is "no recorded site"), one entry deep: the most this kernel's waits leave in
  // flight. The groups a wait keeps open are one popcount of a mask. No array indexed at
  // run time (local memory).
  EXPECT_THAT(src, HasSubstr("unsigned int warptrace_group_sites;  // sites of the last 1 "
                             "cp.async groups, 1 bits each, one-hot"));
  EXPECT_THAT(src, HasSubstr("warptrace_track[warptrace_rec].warptrace_group_sites = 0u;"));
  EXPECT_THAT(src, HasSubstr("if (warptrace_rec < 1u) warptrace_track[warptrace_rec]."
                             "warptrace_group_sites = (warptrace_track[warptrace_rec]."
                             "warptrace_group_sites << 1) | 1u;\n"));
  EXPECT_THAT(src, HasSubstr("warptrace_cp_async_wait_prior(1u);  // wait async copies\n"));
  EXPECT_THAT(src, HasSubstr("_issued - static_cast<unsigned int>(__popc(warptrace_track["
                             "warptrace_rec].warptrace_group_sites & 0x1u));"));
  EXPECT_THAT(src, Not(HasSubstr("[8]")));
  // Without such a wait, no history.
  EXPECT_THAT(MustEmit(HandoffKernel(false), {}).source, Not(HasSubstr("warptrace_group_site")));
  // More than cp.async.wait_group allows.
  KernelBuilder c("too_many");
  c.Param("float*", "out").Grid({1, 1, 1}).Block({128, 1, 1});
  c.WaitAsyncCopies(8);
  EXPECT_THAT(c.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("WaitAsyncCopies(8) leaves more groups in flight")));
}

TEST(EmitterTest, BulkCopiesAreIssuedByTheRolesFirstThreadAndRecordOnlyTheirBegin) {
  const std::string src = MustEmit(HandoffKernel(true), {}).source;
  EXPECT_THAT(src, HasSubstr("warptrace_mbarrier_arrive_expect_tx(&ready[warptrace_bar], "
                             "static_cast<unsigned int>(256));"));
  EXPECT_THAT(src, HasSubstr("warptrace_bulk_copy_g2s(warptrace_dst + warptrace_r * 128u, "
                             "warptrace_src + warptrace_r * static_cast<unsigned long "
                             "long>(256), 128u, &ready[warptrace_bar]);"));
  // Trace version 5: the begin carries the barrier and the phase the copy completes, and
  // that is all the copy records (format/links.h): the dump derives its end from the first
  // recorded wait exit on that phase.
  EXPECT_THAT(src, HasSubstr("warptrace::recorder::RecordWithPayload(warptrace_unit, "
                             "0x00000002u, warptrace_bar, static_cast<unsigned int>(0));  "
                             "// begin of fill"));
  EXPECT_THAT(src, Not(HasSubstr("0x80000002u")));  // no end of the copy's site
  // No state, no polls, no drains: every wait is the plain primitive, the producer's too.
  EXPECT_THAT(src, Not(HasSubstr("warptrace_copies")));
  EXPECT_THAT(src, Not(HasSubstr("warptrace_copy_track")));
  EXPECT_THAT(src, Not(HasSubstr("_pending")));
  EXPECT_THAT(src, Not(HasSubstr("RecordCopyEnds")));
  EXPECT_THAT(src, Not(HasSubstr("warptrace_mbarrier_try_wait_parity")));
  EXPECT_THAT(src, Not(HasSubstr("warptrace_mbarrier_test_wait_parity")));
  EXPECT_THAT(src, HasSubstr("warptrace_mbarrier_wait_parity(&done[warptrace_bar], "
                             "warptrace_phase & 1u);"));
  EXPECT_THAT(src, HasSubstr("warptrace_mbarrier_wait_parity(&ready[warptrace_bar], "
                             "warptrace_phase & 1u);"));
}

// With block units the one recorder is the producer (thread 0), and the waits on `ready`
// run in the consumer: no recorded wait gives the copy's end, so the plan marks the site
// end_observed and its issuer observes the end as trace version 4 did.
TEST(EmitterTest, ABulkCopyNoRecorderWaitsOnIsObservedByItsIssuer) {
  ProfileOptions options;
  options.unit = UnitSpec::Block();
  const KernelSource source = MustEmit(HandoffKernel(true), options);
  ASSERT_TRUE(source.layout.has_value());
  const std::string& src = source.source;
  for (const SiteInfo& site : source.layout->sites) {
    EXPECT_EQ(site.end_observed, site.name == "fill") << site.name;
  }
  // The begin carries (issue, barrier), the end the same (format/links.h).
  EXPECT_THAT(src, HasSubstr("warptrace::recorder::RecordWithPayload(warptrace_unit, "
                             "0x00000002u, warptrace_copies.warptrace_copy3_issued, "
                             "warptrace_bar);  // begin of fill"));
  // While the producer waits on `done`, it polls its copy in flight (test_wait) and records
  // the end as soon as it sees the phase complete.
  EXPECT_THAT(src, HasSubstr("while (!warptrace_mbarrier_try_wait_parity(&done[warptrace_bar], "
                             "warptrace_phase & 1u)) {"));
  // Its state is in shared memory, one struct for the block's observed copies, touched by
  // the issuing thread only.
  EXPECT_THAT(src, HasSubstr("__shared__ warptrace_copy_track warptrace_copies;"));
  EXPECT_THAT(src, HasSubstr("if (warptrace_copies.warptrace_copy3_pending[warptrace_e] != 0u && "
                             "warptrace_mbarrier_test_wait_parity(&ready[warptrace_e], "
                             "warptrace_copies.warptrace_copy3_phase[warptrace_e] & 1u)) {"));
  // The consumer, which issues no copy, waits plainly.
  EXPECT_THAT(src, HasSubstr("warptrace_mbarrier_wait_parity(&ready[warptrace_bar], "
                             "warptrace_phase & 1u);"));
  // Still in flight at the end: the copy ends before the kernel's exits, after a wait for
  // its phase. On a GPU, straight-line code for a barrier array this small.
  EXPECT_THAT(src, HasSubstr("  if (warptrace_tid == 0u) {\n#if defined(__CUDA_ARCH__)\n"
                             "    warptrace::recorder::RecordCopyEnds<true, 0x80000002u, 1u, 1u>("
                             "warptrace_unit, &warptrace_copies.warptrace_copy3_pending[0u], "
                             "&ready[0u], 0u);  // end of fill"));
  // The consumer's wait does not look at the producer's copies.
  const size_t consumer = src.find("// role consumer");
  ASSERT_NE(consumer, std::string::npos);
  const size_t kernel_exit = src.find("  if (warptrace_tid == 0u) {\n#if", consumer);
  ASSERT_NE(kernel_exit, std::string::npos);
  EXPECT_THAT(src.substr(consumer, kernel_exit - consumer), Not(HasSubstr("warptrace_copies.")));
  // The plan counts its begin and its end, each with a payload.
  const absl::StatusOr<RecordPlan> plan = RecordPlan::Create(HandoffKernel(true), options);
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(plan->Explain(), HasSubstr("copy fill 4"));
}

TEST(EmitterTest, RolesBecomeAnIfChainOnTheWarpgroupIndex) {
  const std::string src = MustEmit(MustBuild(WarpSpecializedPipeline({})), {}).source;
  EXPECT_THAT(src, HasSubstr("const unsigned int warptrace_role = warptrace_tid / 128u;\n"));
  EXPECT_THAT(src, HasSubstr("if (warptrace_role < 1u) {\n"));
  EXPECT_THAT(src, HasSubstr("const int cwg = static_cast<int>(warptrace_role - 1u);"));
}

TEST(EmitterTest, PipelinedCpAsyncGroupsRecordTheirBeginsAndEachWaitAloneFromVersion5) {
  // Every cp.async commit is a recorded site's begin and a wait leaves groups in flight:
  // the plan marks the sites ends_at_waits, and the emitter keeps no issue or retirement
  // counter, no history and no drain loop (issue 51). Each wait records one event with
  // the groups it leaves in flight; the dump ends the others there. A wait(0) before the
  // exit, recorded the same way, retires whatever is still in flight.
  KernelBuilder b("pipelined");
  b.Param("const float*", "in").Grid({1, 1, 1}).Block({128, 1, 1});
  b.SharedArray("float", "tile", 64);
  b.For("k", 0, 4, TripCount::Exact(4), [&] {
    AsyncCopySpec copy;
    copy.name = "fill";
    copy.dst = "tile + (k % 2) * 32";
    copy.src = "in + k * 32";
    copy.row_bytes = 128;
    b.AsyncCopy(copy);
    b.WaitAsyncCopies(1);
  });
  const Kernel kernel = MustBuild(b.Build());
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(kernel, {});
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->layout().sites[1].ends_at_waits);
  // kernel 2 + 4 x (begin 1 + wait and payload 2) + the exit's wait 2.
  EXPECT_EQ(plan->ExactEventsForUnit(0).value_or(0), 16u);
  const std::string src = MustEmit(kernel, {}).source;
  for (const char* gone : {"warptrace_done", "_issued", "warptrace_group_sites",
                           "warptrace_unit_track", "warptrace_rec", "warptrace_ended"}) {
    EXPECT_THAT(src, Not(HasSubstr(gone))) << gone;
  }
  EXPECT_THAT(src, HasSubstr("0x00000001u);  // begin of fill"));
  EXPECT_THAT(src, HasSubstr("warptrace_cp_async_wait_prior(1u);  // wait async copies\n"));
  EXPECT_THAT(src, HasSubstr("0x80000001u, 1u, 0xffffffffu);  // wait (1 left in flight) "
                             "ending cp.async groups, under fill"));
  EXPECT_THAT(src, HasSubstr("warptrace_cp_async_wait_prior(0u);\n"));
  EXPECT_THAT(src, HasSubstr("0x80000001u, 0u, 0xffffffffu);  // wait (0 left in flight) "
                             "ending cp.async groups, under fill"));
}

}  // namespace
}  // namespace warptrace
