#include "jit/builder/kernel_builder.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

// A minimal valid kernel to start each misuse from.
KernelBuilder Minimal(const std::string& name = "k") {
  KernelBuilder b(name);
  b.Param("float*", "out").Grid({2, 1, 1}).Block({128, 1, 1});
  return b;
}

TEST(KernelBuilderTest, BuildsTreeWithPathsAndPreorderOrdinals) {
  KernelBuilder b = Minimal("gemm");
  b.For("k", 0, 4, TripCount::Exact(4), [&] {
    b.Region("load", [&] { b.Stmt("out[0] = 1.0f;"); });
    b.Barrier("sync");
  });
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  ASSERT_THAT(kernel->body, SizeIs(1));
  const KernelNode& loop = kernel->body[0];
  EXPECT_EQ(loop.kind, KernelNode::Kind::kLoop);
  EXPECT_EQ(loop.path, "kernel gemm > loop k");
  ASSERT_THAT(loop.body, SizeIs(2));
  EXPECT_EQ(loop.body[0].path, "kernel gemm > loop k > region load");
  EXPECT_EQ(loop.body[0].body[0].path, "kernel gemm > loop k > region load > statement `out[0] = 1.0f;`");
  EXPECT_EQ(loop.body[1].path, "kernel gemm > loop k > barrier sync");
  EXPECT_EQ(loop.ordinal, 0u);
  EXPECT_EQ(loop.body[0].ordinal, 1u);
  EXPECT_EQ(loop.body[0].body[0].ordinal, 2u);
  EXPECT_EQ(loop.body[1].ordinal, 3u);
  EXPECT_EQ(kernel->num_nodes, 4u);
}

// Unsigned counts (a uint32_t tile count, a size_t) convert to Expr without ambiguity (a
// uint32_t used to match both the int and the int64_t constructor: a compile error).
TEST(KernelBuilderTest, ExprTakesUnsignedCountsAsLiterals) {
  const uint32_t tiles = 8;
  const size_t bytes = 4096;
  const Expr a = tiles, b = bytes;
  EXPECT_TRUE(a.is_literal());
  EXPECT_EQ(a.literal(), 8);
  EXPECT_EQ(a.text(), "8");
  EXPECT_EQ(b.literal(), 4096);
  KernelBuilder k("unsigned_bounds");
  k.Param("float*", "out").Block({32, 1, 1});
  k.For("i", 0u, tiles, TripCount::Exact(tiles), [&] { k.Stmt("out[i] = 0;"); });
  EXPECT_THAT(k.Build(), IsOk());
}

// A constant is declared before the kernel, as a Preamble, and kept by name.
TEST(KernelBuilderTest, ConstantsAreConstexprDeclarationsKeptByName) {
  KernelBuilder k("constants");
  k.Constant("kTile", 128).Constant("kHuge", int64_t{1} << 40);
  k.Param("float*", "out").Block({32, 1, 1});
  k.Stmt("out[0] = kTile;");
  absl::StatusOr<Kernel> kernel = k.Build();
  ASSERT_THAT(kernel, IsOk());
  ASSERT_EQ(kernel->constants.size(), 2u);
  EXPECT_EQ(kernel->constants[0], (std::pair<std::string, int64_t>{"kTile", 128}));
  ASSERT_EQ(kernel->preamble.size(), 2u);
  EXPECT_EQ(kernel->preamble[0].code, "constexpr int kTile = 128;");
  EXPECT_EQ(kernel->preamble[1].code, "constexpr long long kHuge = 1099511627776LL;");
}

TEST(KernelBuilderTest, ParamsGetSizesAndPointerness) {
  KernelBuilder b("k");
  b.Param("const  float *", "a").Param("int", "n").Param("double", "x");
  b.Stmt(";");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  ASSERT_THAT(kernel->params, SizeIs(3));
  EXPECT_EQ(kernel->params[0], (KernelParam{"const float*", "a", 8, true}));
  EXPECT_EQ(kernel->params[1], (KernelParam{"int", "n", 4, false}));
  EXPECT_EQ(kernel->params[2], (KernelParam{"double", "x", 8, false}));
}

TEST(KernelBuilderTest, AcceptsCvQualifiedScalarParams) {
  KernelBuilder b("k");
  b.Param("const int", "n").Param("unsigned int const", "m").Param("const volatile float", "x");
  b.Param("volatile const float*", "p");
  b.Stmt(";");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  ASSERT_THAT(kernel->params, SizeIs(4));
  // The qualifiers stay in the signature; ValueType() is what sizes and signedness read.
  EXPECT_EQ(kernel->params[0], (KernelParam{"const int", "n", 4, false}));
  EXPECT_EQ(kernel->params[0].ValueType(), "int");
  EXPECT_EQ(kernel->params[1], (KernelParam{"unsigned int const", "m", 4, false}));
  EXPECT_EQ(kernel->params[1].ValueType(), "unsigned int");
  EXPECT_EQ(kernel->params[2], (KernelParam{"const volatile float", "x", 4, false}));
  EXPECT_EQ(kernel->params[2].ValueType(), "float");
  EXPECT_EQ(kernel->params[3], (KernelParam{"volatile const float*", "p", 8, true}));
}

TEST(KernelBuilderTest, RejectsCvQualifiedUnknownScalar) {
  KernelBuilder b("k");
  b.Param("const size_t", "n").Stmt(";");
  EXPECT_THAT(b.Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("parameter 'n' has unknown scalar type 'const size_t'")));
}

TEST(KernelBuilderTest, BuildErrorsAreMarkedAndOtherStatusesAreNot) {
  KernelBuilder bad("k");
  bad.Param("int", "1x").Stmt(";");
  const absl::Status status = bad.Build().status();
  EXPECT_TRUE(IsBuildError(status)) << status;
  KernelBuilder good("k");
  good.Param("int", "n").Stmt(";");
  EXPECT_TRUE(good.Build().ok());
  EXPECT_FALSE(IsBuildError(absl::InvalidArgumentError(status.message())));
  EXPECT_FALSE(IsBuildError(absl::OkStatus()));
}

TEST(KernelBuilderTest, PreambleIsKeptInOrderWithItsPath) {
  KernelBuilder b("k");
  b.Preamble("#include <math_constants.h>").Stmt(";");
  b.Preamble("__device__ int Twice(int x) { return 2 * x; }");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  ASSERT_THAT(kernel->preamble, SizeIs(2));
  EXPECT_EQ(kernel->preamble[0].code, "#include <math_constants.h>");
  EXPECT_EQ(kernel->preamble[0].path, "kernel k > preamble 1");
  EXPECT_EQ(kernel->preamble[1].path, "kernel k > preamble 2");
}

// Constants are named by their constant; Preamble calls are numbered among themselves (the
// only Preamble call after four constants used to be "preamble 5").
TEST(KernelBuilderTest, PreamblesAreNumberedAmongThemselvesAndConstantsNamed) {
  KernelBuilder b("k");
  b.Constant("kA", 1).Constant("kB", 2).Constant("kC", 3).Constant("kD", 4);
  b.Preamble("__device__ int Twice(int x) { return 2 * x; }").Stmt(";");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  ASSERT_THAT(kernel->preamble, SizeIs(5));
  EXPECT_EQ(kernel->preamble[0].path, "kernel k > constant kA");
  EXPECT_EQ(kernel->preamble[3].path, "kernel k > constant kD");
  EXPECT_EQ(kernel->preamble[4].path, "kernel k > preamble 1");
}

TEST(KernelBuilderTest, RejectsAPreambleThatIsNotSelfContainedKernelLevelCode) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"__device__ int f() { return 1;", "kernel k > preamble 1: '{' on line 1 is never closed"},
      {"/* open", "kernel k > preamble 1: "},
      {"__global__ void other() {}", "defines a __global__ function"},
      {"__shared__ float s[4];", "declares __shared__ memory; use SharedArray()"},
      {"extern __shared__ float s[];", "declares extern shared memory; use DynamicShared()"},
  };
  for (const auto& [code, message] : bad) {
    SCOPED_TRACE(code);
    KernelBuilder b("k");
    b.Preamble(code).Stmt(";");
    EXPECT_THAT(b.Build().status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)));
  }
}

TEST(KernelBuilderTest, FluentFormBuildsTheSameTreeAsLambdaForm) {
  KernelBuilder lambda = Minimal();
  lambda.If("out[0] > 0", [&] { lambda.Region("a", [&] { lambda.Stmt("out[0] = 0;"); }); },
            [&] { lambda.Return(); });
  KernelBuilder fluent = Minimal();
  fluent.BeginIf("out[0] > 0").BeginRegion("a").Stmt("out[0] = 0;").EndRegion("a");
  fluent.Else().Return().EndIf();
  absl::StatusOr<Kernel> a = lambda.Build();
  absl::StatusOr<Kernel> b = fluent.Build();
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  ASSERT_THAT(a->body, SizeIs(1));
  ASSERT_THAT(b->body, SizeIs(1));
  EXPECT_EQ(a->body[0].body[0].path, b->body[0].body[0].path);
  EXPECT_TRUE(b->body[0].has_else);
  EXPECT_EQ(b->body[0].else_body[0].path, "kernel k > if (out[0] > 0) > else > return");
}

TEST(KernelBuilderTest, RolesAreLaidOutInOrder) {
  KernelBuilder b("pipe");
  b.Block({384, 1, 1});
  b.Roles(RoleAxis::kWarpgroup, {{"producer", 1, "", [&] { b.Stmt(";"); }},
                                 {"consumer", 2, "cwg", [&] { b.Stmt("(void)cwg;"); }}});
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  const KernelNode& roles = kernel->body[0];
  ASSERT_THAT(roles.roles, SizeIs(2));
  EXPECT_EQ(roles.roles[0].first, 0u);
  EXPECT_EQ(roles.roles[1].first, 1u);
  EXPECT_EQ(roles.roles[1].count, 2u);
  EXPECT_EQ(roles.roles[1].index_var, "cwg");
  EXPECT_EQ(roles.roles[1].path, "kernel pipe > roles by warpgroup > role consumer");
}

// ---- Misuse: one test each ----

TEST(KernelBuilderTest, RejectsUnclosedRegion) {
  KernelBuilder b = Minimal();
  b.For("k", 0, 2, TripCount::Exact(2), [&] { b.BeginRegion("mma").Stmt(";"); });
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("kernel k > loop k > region mma")));
}

TEST(KernelBuilderTest, RejectsRegionLeftOpenAtBuild) {
  KernelBuilder b = Minimal();
  b.BeginRegion("load").Stmt(";");
  EXPECT_THAT(b.Build(),
              StatusIs(kInvalid, HasSubstr("region load is still open at Build()")));
}

TEST(KernelBuilderTest, RejectsEndRegionWithNothingOpen) {
  KernelBuilder b = Minimal();
  b.Stmt(";").EndRegion();
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("EndRegion with nothing open")));
}

TEST(KernelBuilderTest, RejectsEndRegionOfAnotherName) {
  KernelBuilder b = Minimal();
  b.BeginRegion("load").Stmt(";").EndRegion("mma");
  EXPECT_THAT(b.Build(),
              StatusIs(kInvalid, HasSubstr("EndRegion(\"mma\") closes region load")));
}

TEST(KernelBuilderTest, RejectsClosingOutOfOrder) {
  KernelBuilder b = Minimal();
  b.BeginRegion("load").BeginFor("i", 0, 2, 1, TripCount::Exact(2)).EndRegion();
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("while loop i is the innermost")));
}

TEST(KernelBuilderTest, RejectsRegionNameReusedAsBarrier) {
  KernelBuilder b = Minimal();
  b.Region("sync", [&] { b.Stmt(";"); });
  b.Barrier("sync");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("'sync' is used as a barrier here but "
                                                      "as a region at kernel k > region sync")));
}

TEST(KernelBuilderTest, RejectsRegionNestedInItself) {
  KernelBuilder b = Minimal();
  b.Region("load", [&] { b.Region("load", [&] { b.Stmt(";"); }); });
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("nested inside a region of the same")));
}

TEST(KernelBuilderTest, RejectsRegionNamedAfterTheKernel) {
  KernelBuilder b = Minimal("gemm");
  b.Region("gemm", [&] { b.Stmt(";"); });
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("used as a region here but as a kernel")));
}

TEST(KernelBuilderTest, RejectsBlockNotCoveredByRoles) {
  KernelBuilder b = Minimal();
  b.Block({256, 1, 1});
  b.Roles(RoleAxis::kWarpgroup, {{"producer", 1, "", [&] { b.Stmt(";"); }},
                                 {"consumer", 2, "", [&] { b.Stmt(";"); }}});
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("cover 3 warpgroups = 384 threads but "
                                                      "the block has 256 threads")));
}

TEST(KernelBuilderTest, RejectsBlockNotWholeWarpgroupsForRoles) {
  KernelBuilder b = Minimal();
  b.Block({96, 1, 1});
  b.Roles(RoleAxis::kWarpgroup, {{"all", 1, "", [&] { b.Stmt(";"); }}});
  EXPECT_THAT(b.Build(),
              StatusIs(kInvalid, HasSubstr("96 threads are not a whole number of warpgroups")));
}

TEST(KernelBuilderTest, RejectsNestedRoleSplit) {
  KernelBuilder b = Minimal();
  b.Roles(RoleAxis::kWarpgroup, {{"all", 1, "", [&] {
                                    b.Roles(RoleAxis::kWarp,
                                            {{"w", 4, "", [&] { b.Stmt(";"); }}});
                                  }}});
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("role splits do not nest")));
}

TEST(KernelBuilderTest, RejectsBarrierInsideRole) {
  KernelBuilder b = Minimal();
  b.Block({256, 1, 1});
  b.Roles(RoleAxis::kWarpgroup, {{"producer", 1, "", [&] { b.Barrier(); }},
                                 {"consumer", 1, "", [&] { b.Stmt(";"); }}});
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("role producer > barrier barrier: a "
                                                      "barrier inside role 'producer' would "
                                                      "deadlock")));
}

TEST(KernelBuilderTest, RejectsABarrierUnderAnIfThatMayDifferBetweenThreads) {
  KernelBuilder b = Minimal();
  b.If("threadIdx.x < 16", [&] { b.Barrier("sync"); });
  EXPECT_THAT(b.Build(),
              StatusIs(kInvalid, AllOf(HasSubstr("if (threadIdx.x < 16) > barrier sync: the "
                                                 "barrier is under `if (threadIdx.x < 16)`"),
                                       HasSubstr("Uniform::kBlock"))));
  // In the else side, and deeper in a region, likewise.
  KernelBuilder e = Minimal();
  e.If("threadIdx.x < 16", [&] { e.Stmt(";"); },
       [&] { e.Region("r", [&] { e.Barrier(); }); });
  EXPECT_THAT(e.Build(), StatusIs(kInvalid, HasSubstr("region r > barrier barrier: the "
                                                      "barrier is under")));
}

TEST(KernelBuilderTest, AcceptsABarrierUnderAnIfDeclaredBlockUniform) {
  KernelBuilder b = Minimal();
  b.If("blockIdx.x > 0", [&] { b.Barrier(); }, Uniform::kBlock);
  b.If("blockIdx.x > 1", [&] { b.Stmt(";"); }, [&] { b.Barrier(); }, Uniform::kBlock);
  b.BeginIf("blockIdx.x > 2", Uniform::kBlock).Barrier().EndIf();
  EXPECT_THAT(b.Build().status(), IsOk());
  // A uniform if inside a divergent one is still under the divergent one.
  KernelBuilder d = Minimal();
  d.If("threadIdx.x == 0", [&] { d.If("blockIdx.x > 0", [&] { d.Barrier(); }, Uniform::kBlock); });
  EXPECT_THAT(d.Build(), StatusIs(kInvalid, HasSubstr("under `if (threadIdx.x == 0)`")));
}

TEST(KernelBuilderTest, RejectsARawSyncthreadsUnderABranchOfItsStatementOrADivergentIf) {
  KernelBuilder b = Minimal();
  b.Stmt("if (threadIdx.x < 16) __syncthreads();");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("`__syncthreads` on line 1 is under an "
                                                      "if/else or switch of the raw statement")));
  KernelBuilder d = Minimal();
  d.If("threadIdx.x < 16", [&] { d.Stmt("__syncthreads();"); });
  EXPECT_THAT(d.Build(), StatusIs(kInvalid, HasSubstr("the raw statement's `__syncthreads` on "
                                                      "line 1 is under `if (threadIdx.x < 16)`")));
  KernelBuilder ok = Minimal();
  ok.Stmt("for (int i = 0; i < 2; ++i) __syncthreads();");
  ok.If("blockIdx.x == 0", [&] { ok.Stmt("__syncthreads();"); }, Uniform::kBlock);
  EXPECT_THAT(ok.Build().status(), IsOk());
}

TEST(KernelBuilderTest, RejectsStatementOutsideARoleInASplit) {
  KernelBuilder b = Minimal();
  b.BeginRoles(RoleAxis::kWarp).Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("open a role first")));
}

TEST(KernelBuilderTest, RejectsInvalidIdentifier) {
  KernelBuilder b("k");
  b.Param("float*", "2x").Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("parameter name '2x' is not a C identifier")));
}

TEST(KernelBuilderTest, RejectsInvalidKernelName) {
  KernelBuilder b("my-kernel");
  b.Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("kernel name 'my-kernel'")));
}

TEST(KernelBuilderTest, RejectsReservedWarptraceName) {
  KernelBuilder b("k");
  b.Param("unsigned int*", "warptrace_trace").Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("'warptrace_trace' is reserved")));
}

TEST(KernelBuilderTest, RejectsKeywordAsName) {
  KernelBuilder b("k");
  b.Param("int", "threadIdx").Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("keyword or built-in")));
}

TEST(KernelBuilderTest, RejectsParameterNameClash) {
  KernelBuilder b("k");
  b.Param("int", "n").Param("float", "n").Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("clashes with the parameter 'n'")));
}

TEST(KernelBuilderTest, RejectsLoopVariableClashingWithParameter) {
  KernelBuilder b = Minimal();
  b.For("out", 0, 2, TripCount::Exact(2), [&] { b.Stmt(";"); });
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("kernel k > loop out: loop variable name "
                                                      "'out' clashes with the parameter")));
}

TEST(KernelBuilderTest, RejectsSharedArrayClashingWithParameter) {
  KernelBuilder b = Minimal();
  b.SharedArray("float", "out", 4).Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("shared array name 'out' clashes")));
}

TEST(KernelBuilderTest, AcceptsATensorMapParameterOfOneHundredTwentyEightBytes) {
  KernelBuilder b("k");
  b.Param("CUtensorMap", "tmA").Param("float*", "out").Stmt(";");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  EXPECT_EQ(kernel->params[0], (KernelParam{"CUtensorMap", "tmA", 128, false}));
  EXPECT_TRUE(kernel->params[0].is_tensor_map());
  EXPECT_FALSE(kernel->params[1].is_tensor_map());
}

TEST(KernelBuilderTest, RejectsATensorMapSpelledAnyOtherWay) {
  for (const char* type : {"const __grid_constant__ CUtensorMap", "CUtensorMap*",
                           "const CUtensorMap"}) {
    KernelBuilder b("k");
    b.Param(type, "tmA").Stmt(";");
    EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("a tensor map parameter is declared "
                                                        "Param(\"CUtensorMap\", name)")))
        << type;
  }
}

TEST(KernelBuilderTest, RejectsUnknownParameterType) {
  KernelBuilder b("k");
  b.Param("float4", "v").Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("unknown scalar type 'float4'")));
}

TEST(KernelBuilderTest, RejectsEmptyKernel) {
  KernelBuilder b = Minimal();
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("kernel k: the kernel is empty")));
}

TEST(KernelBuilderTest, RejectsZeroBlockDimension) {
  KernelBuilder b = Minimal();
  b.Block({0, 1, 1}).Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("need every dimension >= 1")));
}

TEST(KernelBuilderTest, RejectsBlockOver1024Threads) {
  KernelBuilder b = Minimal();
  b.Block({64, 32, 1}).Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("2048 threads; CUDA allows at most 1024")));
}

TEST(KernelBuilderTest, RejectsExactTripCountContradictingLiteralBounds) {
  KernelBuilder b = Minimal();
  b.For("i", 0, 10, 2, TripCount::Exact(4), [&] { b.Stmt(";"); });
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("Exact(4) but the bounds [0, 10) step 2 "
                                                      "run 5 iterations")));
}

TEST(KernelBuilderTest, RejectsUpperBoundBelowLiteralBounds) {
  KernelBuilder b = Minimal();
  b.For("i", 0, 10, TripCount::UpperBound(8), [&] { b.Stmt(";"); });
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("UpperBound(8)")));
}

TEST(KernelBuilderTest, RejectsStatementsAfterReturn) {
  KernelBuilder b = Minimal();
  b.Return().Stmt("out[0] = 1;");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("comes after the return at kernel k > "
                                                      "return")));
}

TEST(KernelBuilderTest, RejectsRawReturn) {
  KernelBuilder b = Minimal();
  b.Stmt("if (out == 0) return;");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("use Return()")));
}

TEST(KernelBuilderTest, AcceptsIdentifiersContainingReturn) {
  KernelBuilder b = Minimal();
  b.Stmt("int returned = 1; out[0] = returned;");
  EXPECT_THAT(b.Build(), IsOk());
}

TEST(KernelBuilderTest, AcceptsAReturnInsideALambdaOfARawStatement) {
  KernelBuilder b = Minimal();
  b.Region("r", [&] {
    b.Stmt("auto twice = [](float v) { return 2.0f * v; };\nout[0] = twice(out[0]);");
  });
  EXPECT_THAT(b.Build(), IsOk());
}

TEST(KernelBuilderTest, StillRejectsAKernelReturnNextToALambda) {
  KernelBuilder b = Minimal();
  b.Stmt("auto f = [] { return 1; }; if (f()) return;");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("kernel k > statement `auto f = [] { return "
                                                      "1; }; if...`: a raw statement may not "
                                                      "return")));
}

TEST(KernelBuilderTest, IgnoresKeywordsInCommentsAndStringLiterals) {
  KernelBuilder b = Minimal();
  b.Stmt("// return early? no: break the habit\nconst char* s = \"return; goto x;\";\n"
         "/* continue */ out[0] = s[0];");
  EXPECT_THAT(b.Build(), IsOk());
}

TEST(KernelBuilderTest, RejectsBreakOutOfARawStatementInsideARegion) {
  KernelBuilder b = Minimal();
  b.For("i", 0, 4, TripCount::Exact(4), [&] {
    b.Region("body", [&] { b.Stmt("if (out[i] < 0) break;"); });
  });
  EXPECT_THAT(b.Build(),
              StatusIs(kInvalid, HasSubstr("kernel k > loop i > region body > statement `if "
                                           "(out[i] < 0) break;`: `break` jumps out of the raw "
                                           "statement")));
}

TEST(KernelBuilderTest, RejectsContinueAndGotoOutOfARawStatement) {
  KernelBuilder continues = Minimal();
  continues.For("i", 0, 4, TripCount::Exact(4), [&] {
    continues.Region("body", [&] { continues.Stmt("if (out[i] < 0) continue;"); });
  });
  EXPECT_THAT(continues.Build(), StatusIs(kInvalid, HasSubstr("`continue` jumps out")));
  KernelBuilder gotos = Minimal();
  gotos.Region("body", [&] { gotos.Stmt("if (out[0] < 0) goto done;"); });
  gotos.Stmt("done: out[0] = 0;");
  EXPECT_THAT(gotos.Build(), StatusIs(kInvalid, HasSubstr("`goto done` jumps out")));
}

TEST(KernelBuilderTest, AcceptsJumpsThatStayInsideTheRawStatement) {
  KernelBuilder b = Minimal();
  b.Region("body", [&] {
    b.Stmt("for (int j = 0; j < 4; ++j) { if (j == 2) continue; if (out[j] < 0) break; }\n"
           "while (true) break;\n"
           "do { if (out[0] > 1) break; } while (false);\n"
           "switch (threadIdx.x) { case 0: out[0] = 1; break; default: break; }\n"
           "if (out[1] < 0) goto skip; out[1] = 1; skip: ;");
  });
  EXPECT_THAT(b.Build(), IsOk());
}

TEST(KernelBuilderTest, RejectsARawStatementWithUnbalancedBraces) {
  KernelBuilder b = Minimal();
  b.Region("body", [&] { b.Stmt("if (out[0] > 0) { out[0] = 0;"); });
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("kernel k > region body > statement `if "
                                                      "(out[0] > 0) { out[0] = 0;`: a raw "
                                                      "statement has unbalanced brackets ('{' "
                                                      "on line 1 is never closed)")));
}

TEST(KernelBuilderTest, RejectsABarrierThatMayRunAfterAConditionalReturn) {
  KernelBuilder b = Minimal();
  b.If("out[threadIdx.x] < 0", [&] { b.Return(); });
  b.Barrier("sync");
  EXPECT_THAT(b.Build(),
              StatusIs(kInvalid, HasSubstr("kernel k > barrier sync: may run after the return "
                                           "at kernel k > if (out[threadIdx.x] < 0) > return")));
}

// The block-uniform rule as it is (issue 54): a read of memory every thread reads alike is
// block-uniform too; the message used to say "depends only on blockIdx, gridDim and kernel
// arguments".
TEST(KernelBuilderTest, TheBarrierAfterAReturnMessageStatesTheBlockUniformRuleAsItIs) {
  KernelBuilder b = Minimal();
  b.If("out[blockIdx.x] < 0", [&] { b.Return(); });
  b.Barrier("sync");
  EXPECT_THAT(b.Build(),
              StatusIs(kInvalid, AllOf(HasSubstr("its condition has one value in the whole "
                                                 "block: it reads blockIdx, gridDim, blockDim, "
                                                 "kernel arguments, memory every thread reads "
                                                 "alike such as seq_lens[blockIdx.y]"),
                                       Not(HasSubstr("depends only on")))));
}

// Two loops of one variable in one body (issue 54): the second's path is "loop k #2".
TEST(KernelBuilderTest, ASecondLoopOfOneVariableInOneBodyIsNumberedInItsPath) {
  KernelBuilder b = Minimal();
  b.For("k", 0, 4, TripCount::Exact(4), [&] { b.Stmt("out[k] = 0;"); });
  b.For("k", 0, 4, TripCount::Exact(4), [&] { b.Stmt("out[k] += 1;"); });
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  ASSERT_EQ(kernel->body.size(), 2u);
  EXPECT_EQ(kernel->body[0].path, "kernel k > loop k");
  EXPECT_EQ(kernel->body[1].path, "kernel k > loop k #2");
}

TEST(KernelBuilderTest, RejectsABarrierEarlierInALoopBodyThanAReturn) {
  // The barrier of the next iteration runs after this iteration's return.
  KernelBuilder b = Minimal();
  b.For("i", 0, 4, TripCount::Exact(4), [&] {
    b.Barrier("top");
    b.If("out[i] < 0", [&] { b.Return(); });
  });
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("kernel k > loop i > barrier top: may run "
                                                      "after the return")));
}

TEST(KernelBuilderTest, RejectsABarrierAfterAReturnInsideARole) {
  KernelBuilder b = Minimal();
  b.Roles(RoleAxis::kWarp, {{"lead", 1, "", [&] { b.If("out[0] < 0", [&] { b.Return(); }); }},
                            {"rest", 3, "", [&] { b.Stmt(";"); }}});
  b.Barrier("after");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("barrier after: may run after the return")));
}

TEST(KernelBuilderTest, AcceptsABarrierAfterABlockWideReturnAndBeforeAThreadReturn) {
  KernelBuilder b = Minimal();
  b.If("blockIdx.x >= 1", [&] { b.Return(ReturnScope::kBlock); });
  b.Barrier("sync");
  b.If("out[threadIdx.x] < 0", [&] { b.Return(); });
  b.Stmt("out[threadIdx.x] = 1;");
  EXPECT_THAT(b.Build(), IsOk());
}

TEST(KernelBuilderTest, RejectsABlockWideReturnInsideARole) {
  KernelBuilder b = Minimal();
  b.Roles(RoleAxis::kWarp,
          {{"lead", 1, "", [&] { b.If("blockIdx.x > 0", [&] { b.Return(ReturnScope::kBlock); }); }},
           {"rest", 3, "", [&] { b.Stmt(";"); }}});
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("role lead > if (blockIdx.x > 0) > return: "
                                                      "a block-wide return inside role 'lead'")));
}

TEST(KernelBuilderTest, RejectsRawExternShared) {
  KernelBuilder b = Minimal();
  b.Stmt("extern __shared__ float smem[];");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("DynamicShared()")));
}

TEST(KernelBuilderTest, RejectsDynamicSharedDeclaredTwice) {
  KernelBuilder b = Minimal();
  b.DynamicShared("float", "a", 64).DynamicShared("float", "b", 64).Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("declared twice")));
}

TEST(KernelBuilderTest, RejectsStaticSharedOverLimit) {
  KernelBuilder b = Minimal();
  b.SharedArray("float", "big", 13 * 1024).Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("static shared arrays take 53248 bytes")));
}

TEST(KernelBuilderTest, RejectsInvalidRegionName) {
  KernelBuilder b = Minimal();
  b.Region("a*/b", [&] { b.Stmt(";"); });
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("may hold only letters")));
}

TEST(KernelBuilderTest, RejectsElseWithoutIf) {
  KernelBuilder b = Minimal();
  b.Stmt(";").Else();
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("Else without an open if")));
}

TEST(KernelBuilderTest, ReportsOnlyTheFirstMisuse) {
  KernelBuilder b = Minimal();
  b.EndFor().EndIf();
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("EndFor with nothing open")));
}

// ---- Warp specialization: named barriers, phase barriers, async copies ----

// A producer warpgroup and a consumer warpgroup (256 threads) handing one stage over
// through full[2] / empty[2] (ids 0-1, 2-3).
KernelBuilder Handoff(uint32_t full_arrivals = 1) {
  KernelBuilder b("k");
  b.Param("const float*", "in").Param("float*", "out").Grid({1, 1, 1}).Block({256, 1, 1});
  b.SharedArray("float", "tile", 64);
  b.PhaseBarriers("full", 2, full_arrivals);
  b.PhaseBarriers("empty", 2, 128);
  return b;
}

AsyncCopySpec TileCopy() {
  AsyncCopySpec copy;
  copy.name = "fill";
  copy.dst = "tile";
  copy.src = "in";
  copy.rows = 2;
  copy.row_bytes = 128;
  return copy;
}

TEST(KernelBuilderTest, AcceptsPhaseBarriersNamedBarriersAndCopiesInsideRoles) {
  KernelBuilder b = Handoff(128);
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] {
              b.WaitPhase("empty", 0, 0);
              b.AsyncCopy(TileCopy());
              b.WaitAsyncCopies();
              b.Arrive("full", 0, 0);
              b.NamedBarrierSync("producer sync", 1, 128);
            }},
           {"consumer", 1, "", [&] {
              b.Arrive("empty", 0, 0);
              b.WaitPhase("full", 0, 0);
              b.NamedBarrierArrive("consumer done", 2, 128);
            }}});
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  ASSERT_THAT(kernel->phase_barriers, SizeIs(2));
  EXPECT_EQ(kernel->phase_barriers[1].first_id, 2u);  // full takes ids 0-1
  EXPECT_EQ(kernel->StaticSharedBytes(), 64u * 4 + 4 * 8);
}

TEST(KernelBuilderTest, StillRejectsASyncthreadsBarrierInsideARole) {
  KernelBuilder b = Handoff();
  b.Roles(RoleAxis::kWarpgroup, {{"producer", 1, "", [&] { b.Barrier("sync"); }},
                                 {"consumer", 1, "", [&] { b.Stmt(";"); }}});
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("barrier inside role 'producer'")));
}

TEST(KernelBuilderTest, RejectsAWaitOnABarrierNoRoleArrivesOn) {
  KernelBuilder b = Handoff();
  b.Roles(RoleAxis::kWarpgroup, {{"producer", 1, "", [&] { b.Arrive("empty", 1, 0); }},
                                 {"consumer", 1, "", [&] { b.WaitPhase("full", 1, 0); }}});
  EXPECT_THAT(b.Build(),
              StatusIs(kInvalid, HasSubstr("kernel k > roles by warpgroup > role consumer > "
                                           "wait full[1]: waits on phase barrier array 'full', "
                                           "but no role arrives on it")));
}

TEST(KernelBuilderTest, RejectsArrivalsOfMoreThreadsThanAPhaseCounts) {
  KernelBuilder b = Handoff(/*full_arrivals=*/1);
  b.Roles(RoleAxis::kWarpgroup, {{"producer", 1, "", [&] { b.Arrive("full", 0, 0); }},
                                 {"consumer", 1, "", [&] { b.WaitPhase("full", 0, 0); }}});
  EXPECT_THAT(b.Build(),
              StatusIs(kInvalid, HasSubstr("role producer > arrive full[0]: every thread of "
                                           "role 'producer' (128 threads) arrives on 'full', "
                                           "but its phases complete after 1 arrivals")));
}

TEST(KernelBuilderTest, RejectsAnArrivalCountThatIsNotAMultipleOfTheArrivingThreads) {
  KernelBuilder b = Handoff(/*full_arrivals=*/192);
  b.Roles(RoleAxis::kWarpgroup, {{"producer", 1, "", [&] { b.Arrive("full", 0, 0); }},
                                 {"consumer", 1, "", [&] { b.WaitPhase("full", 0, 0); }}});
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("not a multiple of them")));
}

TEST(KernelBuilderTest, AcceptsOneThreadArrivingOnAPhaseOfOne) {
  KernelBuilder b = Handoff(/*full_arrivals=*/1);
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] { b.Arrive("full", 0, 0, ArriveBy::kOneThread); }},
           {"consumer", 1, "", [&] { b.WaitPhase("full", 0, 0); }}});
  EXPECT_THAT(b.Build(), IsOk());
}

TEST(KernelBuilderTest, RejectsACpAsyncCopyNeverAwaited) {
  KernelBuilder b = Handoff();
  b.Roles(RoleAxis::kWarpgroup, {{"producer", 1, "", [&] { b.AsyncCopy(TileCopy()); }},
                                 {"consumer", 1, "", [&] { b.WaitAsyncCopies(); }}});
  EXPECT_THAT(b.Build(),
              StatusIs(kInvalid, HasSubstr("role producer > copy fill: the completion of async "
                                           "copy 'fill' is never awaited: no WaitAsyncCopies() "
                                           "follows it in its role")));
}

TEST(KernelBuilderTest, AcceptsACpAsyncCopyAwaitedInALaterIterationOfItsLoop) {
  KernelBuilder b = Handoff();
  b.For("k", 0, 4, TripCount::Exact(4), [&] {
    b.WaitAsyncCopies();
    b.AsyncCopy(TileCopy());
  });
  EXPECT_THAT(b.Build(), IsOk());
}

TEST(KernelBuilderTest, RejectsABulkCopyOnABarrierNobodyWaitsOn) {
  KernelBuilder b = Handoff();
  AsyncCopySpec copy = TileCopy();
  copy.barrier = "full";
  copy.barrier_phase = "0";
  b.ArriveExpectTx("full", 0, 0, 256);
  b.AsyncCopy(copy);
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("no role waits on phase barrier array "
                                                      "'full' (WaitPhase)")));
}

TEST(KernelBuilderTest, RejectsAnArrivalOrAPhaseWaitWithoutItsPhase) {
  KernelBuilder b = Handoff(128);
  b.Arrive("full", 0, "");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("kernel k > arrive full[0]: an arrival "
                                                      "needs its phase number")));
  KernelBuilder c = Handoff(128);
  c.Roles(RoleAxis::kWarpgroup, {{"producer", 1, "", [&] { c.Arrive("full", 0, 0); }},
                                 {"consumer", 1, "", [&] { c.WaitPhase("full", 0, ""); }}});
  EXPECT_THAT(c.Build(), StatusIs(kInvalid, HasSubstr("role consumer > wait full[0]: a phase "
                                                      "wait needs its phase number")));
}

TEST(KernelBuilderTest, RejectsAnExpectTxArrivalWithoutItsBytes) {
  KernelBuilder b = Handoff();
  b.ArriveExpectTx("full", 0, 0, "");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("kernel k: ArriveExpectTx on 'full' has "
                                                      "an empty byte count")));
}

TEST(KernelBuilderTest, RejectsACopyWithoutItsSourceRowStride) {
  KernelBuilder b = Handoff();
  AsyncCopySpec copy = TileCopy();
  copy.src_row_stride_bytes = "";
  b.AsyncCopy(copy).WaitAsyncCopies();
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("kernel k > copy fill: async copy 'fill' "
                                                      "needs a destination and a source "
                                                      "pointer and a source row stride")));
}

TEST(KernelBuilderTest, RejectsALiteralIndexOutsideTheBarrierArray) {
  KernelBuilder b = Handoff();
  b.Arrive("empty", 2, 0);
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("kernel k > arrive empty[2]: index 2 is "
                                                      "outside phase barrier array 'empty' of "
                                                      "2 elements")));
  KernelBuilder c = Handoff();
  c.Arrive("empty", 0, 0, ArriveBy::kOneThread).WaitPhase("empty", -1, 0);
  EXPECT_THAT(c.Build(), StatusIs(kInvalid, HasSubstr("index -1 is outside")));
}

TEST(KernelBuilderTest, AcceptsARuntimeIndexItCannotCheck) {
  KernelBuilder b = Handoff(256);
  b.For("k", 0, 8, TripCount::Exact(8), [&] { b.Arrive("full", "k % 2", "k / 2"); });
  b.WaitPhase("full", "1", 3);
  EXPECT_THAT(b.Build(), IsOk());
}

TEST(KernelBuilderTest, RejectsAnUndeclaredBarrierArray) {
  KernelBuilder b = Handoff();
  b.Arrive("ready", 0, 0);
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("no phase barrier array 'ready' is "
                                                      "declared")));
}

TEST(KernelBuilderTest, RejectsPhaseBarriersDeclaredInsideTheBody) {
  KernelBuilder b = Handoff();
  b.For("k", 0, 2, TripCount::Exact(2), [&] { b.PhaseBarriers("late", 1, 1); });
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("declared inside a construct")));
}

TEST(KernelBuilderTest, RejectsAPhaseBarrierArrayOfNoArrivals) {
  KernelBuilder b = Handoff();
  b.PhaseBarriers("none", 1, 0).Stmt(";");
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("'none' has 1 elements of 0 arrivals")));
}

TEST(KernelBuilderTest, RejectsNamedBarrierIdsOutsideOneToFifteenAndPartialWarps) {
  KernelBuilder b = Handoff();
  b.NamedBarrierSync("zero", 0, 256);
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("named barrier id 0 is outside 1..15")));
  KernelBuilder c = Handoff();
  c.NamedBarrierSync("odd", 3, 100);
  EXPECT_THAT(c.Build(), StatusIs(kInvalid, HasSubstr("positive multiple of 32")));
  KernelBuilder d = Handoff();
  d.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] { d.NamedBarrierSync("half", 4, 64); }},
           {"consumer", 1, "", [&] { d.Stmt(";"); }}});
  EXPECT_THAT(d.Build(), StatusIs(kInvalid, HasSubstr("all 128 threads of role 'producer' "
                                                      "reach named barrier 4")));
}

TEST(KernelBuilderTest, RejectsAnEveryThreadArrivalAfterAThreadReturnInItsRole) {
  KernelBuilder b = Handoff();
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] { b.WaitPhase("empty", 0, 0); }},
           {"consumer", 1, "", [&] {
              b.If("threadIdx.x % 2 == 0", [&] { b.Return(); });
              b.Arrive("empty", 0, 0);
            }}});
  EXPECT_THAT(b.Build(),
              StatusIs(kInvalid, HasSubstr("role consumer > arrive empty[0]: may run after the "
                                           "return at kernel k > roles by warpgroup > role "
                                           "consumer > if (threadIdx.x % 2 == 0) > return")));
}

TEST(KernelBuilderTest, AcceptsAReturnInAnotherRoleThanTheArrivals) {
  KernelBuilder b = Handoff();
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] {
              b.WaitPhase("empty", 0, 0);
              b.NamedBarrierSync("producer sync", 1, 128);
              b.If("threadIdx.x % 2 == 0", [&] { b.Return(); });
            }},
           {"consumer", 1, "", [&] {
              b.Arrive("empty", 0, 0);
              b.NamedBarrierSync("consumer sync", 2, 128);
            }}});
  EXPECT_THAT(b.Build(), IsOk());
}

TEST(KernelBuilderTest, RejectsANamedBarrierAcrossRolesAfterAReturnInTheOtherRole) {
  KernelBuilder b = Handoff();
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] {
              b.If("threadIdx.x % 2 == 0", [&] { b.Return(); });
              b.NamedBarrierArrive("handoff", 1, 256);
            }},
           {"consumer", 1, "", [&] { b.NamedBarrierSync("handoff", 1, 256); }}});
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("named barrier 1 never completes")));
}

TEST(KernelBuilderTest, RejectsACopyRowThatIsNotWholeChunks) {
  KernelBuilder b = Handoff();
  AsyncCopySpec copy = TileCopy();
  copy.row_bytes = 40;
  b.AsyncCopy(copy).WaitAsyncCopies();
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("a positive multiple of 16 bytes")));
}

TEST(KernelBuilderTest, RejectsABulkCopyWithoutItsPhase) {
  KernelBuilder b = Handoff();
  AsyncCopySpec copy = TileCopy();
  copy.barrier = "full";
  b.ArriveExpectTx("full", 0, 0, 256).AsyncCopy(copy).WaitPhase("full", 0, 0);
  EXPECT_THAT(b.Build(), StatusIs(kInvalid, HasSubstr("names no phase")));
}

}  // namespace
}  // namespace warptrace
