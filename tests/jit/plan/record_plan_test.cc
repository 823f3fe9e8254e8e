#include "jit/plan/record_plan.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/kernels/hopper_gemm.h"
#include "jit/kernels/warp_specialized_pipeline.h"
#include "tests/jit/plan/plan_test_util.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::GemmLike;
using ::warptrace::testing::MustBuild;
using ::warptrace::testing::MustPlan;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;


TEST(RecordPlanTest, LoopMultipliesRegionsByTripCount) {
  RecordPlan plan = MustPlan(GemmLike());
  // kernel 2 + 64 x (load 2 + mma 2) = 258.
  EXPECT_EQ(plan.max_events(), 258u);
  EXPECT_EQ(plan.capacity(), 258u);
  EXPECT_EQ(plan.units_per_block(), 2u);
  EXPECT_THAT(plan.ExactEventsForUnit(0), IsOkAndHolds(258u));
  EXPECT_THAT(plan.ExactEventsForUnit(1), IsOkAndHolds(258u));
}

TEST(RecordPlanTest, PolicyAddsLoopIterationAndBarrierWaitSites) {
  ProfileOptions options;
  options.policy.loop_iterations = true;
  options.policy.barrier_waits = true;
  RecordPlan plan = MustPlan(GemmLike(), options);
  // kernel 2 + 64 x (iteration 2 + load 2 + sync 2 + mma 2) = 514.
  EXPECT_EQ(plan.max_events(), 514u);
}

TEST(RecordPlanTest, KernelSiteCanBeTurnedOff) {
  ProfileOptions options;
  options.policy.kernel = false;
  RecordPlan plan = MustPlan(GemmLike(), options);
  EXPECT_EQ(plan.max_events(), 256u);
  EXPECT_FALSE(plan.kernel_site().has_value());
}

TEST(RecordPlanTest, SiteTableNamesKindsAndOrigins) {
  ProfileOptions options;
  options.policy.loop_iterations = true;
  options.policy.barrier_waits = true;
  RecordPlan plan = MustPlan(GemmLike(), options);
  EXPECT_THAT(plan.sites(),
              ElementsAre(SiteInfo{0, "gemm", SiteKind::kKernel, "kernel gemm"},
                          SiteInfo{1, "loop k", SiteKind::kLoopBody, "kernel gemm > loop k"},
                          SiteInfo{2, "load", SiteKind::kRegion,
                                   "kernel gemm > loop k > region load"},
                          SiteInfo{3, "sync", SiteKind::kBarrierWait,
                                   "kernel gemm > loop k > barrier sync"},
                          SiteInfo{4, "mma", SiteKind::kRegion,
                                   "kernel gemm > loop k > region mma"}));
}

// Two loops of one variable (paged attention's `block_idx` in two regions, issue 54) were
// two sites named "loop block_idx", told apart only by their origin: the site names are now
// their paths below the kernel; a second loop of k in one body is "loop k #2".
TEST(RecordPlanTest, LoopSitesOfOneVariableAreNamedByTheirPaths) {
  KernelBuilder b("attn");
  b.Param("float*", "c").Grid({4, 1, 1}).Block({128, 1, 1});
  b.Region("qk", [&] {
    b.For("block_idx", 0, 4, TripCount::Exact(4), [&] { b.Stmt("c[0] += 1;"); });
  });
  b.Region("pv", [&] {
    b.For("block_idx", 0, 4, TripCount::Exact(4), [&] { b.Stmt("c[1] += 1;"); });
    b.For("block_idx", 0, 2, TripCount::Exact(2), [&] { b.Stmt("c[2] += 1;"); });
  });
  ProfileOptions options;
  options.policy.loop_iterations = true;
  std::vector<std::string> loops;
  const RecordPlan plan = MustPlan(MustBuild(b), options);
  for (const SiteInfo& site : plan.sites()) {
    if (site.kind == SiteKind::kLoopBody) loops.push_back(site.name);
  }
  EXPECT_THAT(loops, ElementsAre("region qk > loop block_idx", "region pv > loop block_idx",
                                 "loop block_idx #2"));
}

// Paged attention's warps take different KV blocks (issue 54, item 8): with the default
// warpgroup unit only warp 0's iterations are recorded, and Explain() used to say nothing
// of the other warps.
TEST(RecordPlanTest, ExplainSaysWhenTheWarpsOfAUnitMayRunDifferentTripCounts) {
  KernelBuilder b("kv");
  b.Param("const int*", "n").Param("float*", "c").Grid({2, 1, 1}).Block({128, 1, 1});
  b.For("block_idx", "threadIdx.x / 32", "n[0]", 4, TripCount::UpperBound(8), [&] {
    b.Region("kv block", [&] { b.Stmt("c[0] += 1;"); });
  });
  b.For("i", 0, 4, TripCount::Exact(4), [&] { b.Region("fixed", [&] { b.Stmt(";"); }); });
  const Kernel kernel = MustBuild(b);
  EXPECT_THAT(MustPlan(kernel).Explain(),
              HasSubstr("unit warpgroup chosen (no unit given): the block of 128 threads is a "
                        "multiple of 128\nwarps of one unit may run different trip counts: "
                        "kernel kv > loop block_idx (TripCount::UpperBound: data-dependent); a "
                        "warpgroup unit records its recorder's warp only, so the other 3 "
                        "warps' iterations are not on the timeline"));
  ProfileOptions warps;
  warps.unit = UnitSpec::Warp();
  EXPECT_THAT(MustPlan(kernel, warps).Explain(), Not(HasSubstr("warps of one unit")));
}

// The async copy sites of `kernel`, as (name, engine, bytes).
std::vector<std::tuple<std::string, CopyEngine, uint64_t>> CopySites(
    const absl::StatusOr<Kernel>& kernel) {
  EXPECT_THAT(kernel, IsOk());
  std::vector<std::tuple<std::string, CopyEngine, uint64_t>> copies;
  if (!kernel.ok()) return copies;
  // The plan outlives the loop: sites() of a temporary would dangle (ASan: stack use after
  // scope).
  const RecordPlan plan = MustPlan(*kernel, {});
  for (const SiteInfo& site : plan.sites()) {
    if (site.kind == SiteKind::kAsyncCopy) {
      copies.emplace_back(site.name, site.copy_engine, site.copy_bytes);
    } else {
      EXPECT_EQ(site.copy_engine, CopyEngine::kNone) << site.name;
      EXPECT_EQ(site.copy_bytes, 0u) << site.name;
    }
  }
  return copies;
}

TEST(RecordPlanTest, EachCopySiteSaysItsEngineAndTheBytesOneCopyMoves) {
  PipelineShape pipeline;  // BM 32 rows (M = 32) x 32 floats of A, 32 x 32 of B per stage
  pipeline.copy = CopyKind::kCpAsync;
  const auto cp_async = CopySites(WarpSpecializedPipeline(pipeline));
  ASSERT_FALSE(cp_async.empty());
  for (const auto& [name, engine, bytes] : cp_async) {
    EXPECT_EQ(engine, CopyEngine::kCpAsync) << name;
    EXPECT_GT(bytes, 0u) << name;
  }
  pipeline.copy = CopyKind::kBulk;
  for (const auto& [name, engine, bytes] : CopySites(WarpSpecializedPipeline(pipeline))) {
    EXPECT_EQ(engine, CopyEngine::kBulk) << name;
  }
  HopperGemmShape gemm;  // 128-row A boxes and BN = 128 B boxes of 64 bf16
  gemm.m = gemm.n = gemm.k = 256;
  gemm.bn = 128;
  EXPECT_THAT(CopySites(HopperGemm(gemm)),
              ElementsAre(std::make_tuple("A tile", CopyEngine::kTma2d, 128u * 64u * 2u),
                          std::make_tuple("B tile", CopyEngine::kTma2d, 128u * 64u * 2u)));
}

TEST(RecordPlanTest, NestedLoopsWithUpperBoundGiveARange) {
  KernelBuilder b("nest");
  b.Param("int", "n").Block({32, 1, 1});
  b.For("i", 0, 3, TripCount::Exact(3), [&] {
    b.Region("a", [&] { b.Stmt(";"); });
    b.For("j", 0, "n", TripCount::UpperBound(5), [&] { b.Region("b", [&] { b.Stmt(";"); }); });
  });
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  RecordPlan plan = MustPlan(MustBuild(b), options);
  // max: 2 + 3 x (2 + 5 x 2) = 38; min: 2 + 3 x (2 + 0) = 8.
  EXPECT_EQ(plan.EventsForUnit(0), (EventRange{8, 38}));
  EXPECT_EQ(plan.capacity(), 38u);
  EXPECT_THAT(plan.ExactEventsForUnit(0),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("kernel nest: warp 0 of each block records between 8 and 38 "
                                 "events (recorder thread 0; depends on data at kernel nest > "
                                 "loop i > loop j)")));
  EXPECT_THAT(plan.ExactEventsForBlockUnit(0, 0),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("kernel nest: block (0,0,0) warp 0 records between 8 and 38 "
                                 "events")));
}

TEST(RecordPlanTest, BranchTakesTheLargerSide) {
  KernelBuilder b("branch");
  b.Param("int", "n").Block({128, 1, 1});
  b.If("n > 0",
       [&] {
         b.Region("a", [&] { b.Stmt(";"); });
         b.Region("b", [&] { b.Stmt(";"); });
       },
       [&] { b.Region("c", [&] { b.Stmt(";"); }); });
  RecordPlan plan = MustPlan(MustBuild(b));
  EXPECT_EQ(plan.EventsForUnit(0), (EventRange{4, 6}));
  EXPECT_THAT(plan.Explain(), HasSubstr("if (n > 0) -> max(then 4, else 2) = 4"));
}

TEST(RecordPlanTest, BranchWithEqualSidesIsExact) {
  KernelBuilder b("branch");
  b.Param("int", "n").Block({128, 1, 1});
  b.If("n > 0", [&] { b.Region("a", [&] { b.Stmt(";"); }); },
       [&] { b.Region("b", [&] { b.Stmt(";"); }); });
  EXPECT_THAT(MustPlan(MustBuild(b)).ExactEventsForUnit(0), IsOkAndHolds(4u));
}

// Three warpgroups, producer 1 + consumer 2, traced per warp: each warp records its
// warpgroup's role.
Kernel ProducerConsumer() {
  KernelBuilder b("pc");
  b.Param("float*", "x").Block({384, 1, 1});
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] {
              b.For("s", 0, 8, TripCount::Exact(8), [&] { b.Region("load", [&] { b.Stmt(";"); }); });
            }},
           {"consumer", 2, "", [&] {
              b.For("s", 0, 8, TripCount::Exact(8), [&] {
                b.Region("mma", [&] { b.Stmt(";"); });
                b.Region("epilogue", [&] { b.Stmt(";"); });
              });
            }}});
  return MustBuild(b);
}

TEST(RecordPlanTest, WarpUnitsRecordTheirWarpgroupsRole) {
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  RecordPlan plan = MustPlan(ProducerConsumer(), options);
  ASSERT_EQ(plan.units_per_block(), 12u);
  for (uint32_t warp = 0; warp < 12; ++warp) {
    // producer: 2 + 8 x 2 = 18; consumer: 2 + 8 x 4 = 34.
    EXPECT_THAT(plan.ExactEventsForUnit(warp), IsOkAndHolds(warp < 4 ? 18u : 34u))
        << "warp " << warp;
  }
  EXPECT_EQ(plan.capacity(), 34u);
  EXPECT_THAT(plan.Explain(), HasSubstr("roles by warpgroup -> max(producer 16, consumer 32) = 32"));
}

TEST(RecordPlanTest, LayoutNamesEachUnitsRoleForTheAnalysis) {
  RecordPlan plan = MustPlan(ProducerConsumer());  // warpgroup units
  EXPECT_EQ(plan.layout().unit_roles,
            (std::vector<std::string>{"producer", "consumer", "consumer"}));
  KernelBuilder b("plain");
  b.Param("int", "n").Block({128, 1, 1});
  b.Region("a", [&] { b.Stmt(";"); });
  EXPECT_TRUE(MustPlan(MustBuild(b)).layout().unit_roles.empty());
}

TEST(RecordPlanTest, WarpgroupUnitRecordsTheRoleOfItsRecorderWarp) {
  KernelBuilder b("split");
  b.Param("float*", "x").Block({256, 1, 1});
  b.Roles(RoleAxis::kWarp, {{"a", 1, "", [&] { b.Region("x", [&] { b.Stmt(";"); }); }},
                            {"b", 7, "", [&] {
                               b.Region("y", [&] { b.Stmt(";"); });
                               b.Region("z", [&] { b.Stmt(";"); });
                             }}});
  RecordPlan plan = MustPlan(MustBuild(b));  // warpgroup units; recorders are threads 0, 128
  EXPECT_THAT(plan.ExactEventsForUnit(0), IsOkAndHolds(4u));  // warp 0: role a
  EXPECT_THAT(plan.ExactEventsForUnit(1), IsOkAndHolds(6u));  // warp 4: role b
  EXPECT_EQ(plan.capacity(), 6u);
}

TEST(RecordPlanTest, BlockUnitRecordsTheRoleOfThreadZero) {
  ProfileOptions options;
  options.unit = UnitSpec::Block();
  RecordPlan plan = MustPlan(ProducerConsumer(), options);
  EXPECT_EQ(plan.units_per_block(), 1u);
  EXPECT_THAT(plan.ExactEventsForUnit(0), IsOkAndHolds(18u));
}

TEST(RecordPlanTest, CustomUnitRecordsTheRoleOfItsRecorder) {
  ProfileOptions options;
  options.unit = UnitSpec::Custom(128, 64, 32);  // recorder is thread 160: consumer
  RecordPlan plan = MustPlan(ProducerConsumer(), options);
  EXPECT_THAT(plan.ExactEventsForUnit(0), IsOkAndHolds(34u));
}

TEST(RecordPlanTest, EarlyReturnCountsTheExitsItLeaves) {
  KernelBuilder b("early");
  b.Param("int", "n").Block({32, 1, 1});
  b.Region("outer", [&] {
    b.If("n > 0", [&] {
      b.Region("r", [&] { b.Stmt(";"); });
      b.Return();
    });
    b.Region("after", [&] { b.Stmt(";"); });
  });
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  // Returning: kernel 2 + outer 2 + r 2; falling through: kernel 2 + outer 2 + after 2.
  EXPECT_THAT(MustPlan(MustBuild(b), options).ExactEventsForUnit(0), IsOkAndHolds(6u));
}

TEST(RecordPlanTest, EarlyReturnInsideALoopBoundsByTheLastIteration) {
  KernelBuilder b("early");
  b.Param("int", "n").Block({32, 1, 1});
  b.For("i", 0, 4, TripCount::Exact(4), [&] {
    b.Region("a", [&] { b.Stmt(";"); });
    b.If("i == n", [&] { b.Return(); });
  });
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  // Fall through: 2 + 4 x 2 = 10. Return in iteration j: 2 + 2j + 2, so 4 .. 10.
  EXPECT_EQ(MustPlan(MustBuild(b), options).EventsForUnit(0), (EventRange{4, 10}));
}

TEST(RecordPlanTest, RejectsRegionInLoopOfUnknownTripCount) {
  KernelBuilder b("unbounded");
  b.Param("int", "n").Block({32, 1, 1});
  b.For("i", 0, "n", TripCount::Unknown(), [&] { b.Region("body", [&] { b.Stmt(";"); }); });
  EXPECT_THAT(RecordPlan::Create(MustBuild(b), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kernel unbounded > loop i > region body: region 'body' is "
                                 "inside kernel unbounded > loop i, whose trip count is "
                                 "unknown, so its events cannot be counted; give that loop "
                                 "TripCount::Exact(n) or TripCount::UpperBound(n)")));
}

TEST(RecordPlanTest, UnboundedLoopErrorNamesPerBlockBesideExactAndUpperBound) {
  KernelBuilder b("unbounded");
  b.Param("int", "n").Block({32, 1, 1});
  b.For("i", 0, "n", TripCount::Unknown(), [&] { b.Region("body", [&] { b.Stmt(";"); }); });
  EXPECT_THAT(RecordPlan::Create(MustBuild(b), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("(or TripCount::PerBlock(expr) for a count computed from "
                                 "blockIdx, gridDim, blockDim and integer scalar parameters; "
                                 "TripCount::PerBlock() takes it from the loop's own bounds)")));
}

TEST(RecordPlanTest, PerBlockWithoutExpressionCountsTheLoopFromItsBounds) {
  KernelBuilder b("bounds");
  b.Param("float*", "out").Param("const int", "n").Param("int", "first");
  b.Grid({2, 1, 1}).Block({32, 1, 1});
  // i = first + blockIdx.x, first + blockIdx.x + 3, ... < n: ceil((n - first - b) / 3).
  b.For("i", "first + blockIdx.x", "n", 3, TripCount::PerBlock(),
        [&] { b.Region("body", [&] { b.Stmt("out[i] = 0;"); }); });
  const Kernel kernel = MustBuild(b);
  ASSERT_THAT(kernel.body, ::testing::SizeIs(1));
  EXPECT_EQ(kernel.body[0].trip.expr(),
            "(n) > (first + blockIdx.x) ? ((n) - (first + blockIdx.x) + (3) - 1) / (3) : 0");
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  for (int64_t n : {0, 1, 2, 7, 11}) {
    SCOPED_TRACE(absl::StrCat("n = ", n));
    absl::StatusOr<RecordPlan> plan =
        RecordPlan::Create(kernel, options, LaunchScalars{{"n", n}, {"first", 1}});
    ASSERT_THAT(plan, IsOk());
    for (uint32_t block = 0; block < 2; ++block) {
      uint64_t trips = 0;
      for (int64_t i = 1 + block; i < n; i += 3) ++trips;
      EXPECT_THAT(plan->ExactEventsForBlockUnit(block, 0), IsOkAndHolds(2 + 2 * trips));
    }
  }
}

// The tile math is written once, as the kernel's constant, and the per-block trip count
// reads it by name (it used to accept only parameters, so a port repeated it as literals).
TEST(RecordPlanTest, PerBlockTripCountsReadTheKernelsConstants) {
  KernelBuilder b("tiles");
  b.Constant("kTile", 64).Param("float*", "out").Param("int", "m");
  b.Grid({4, 1, 1}).Block({32, 1, 1});
  b.For("t", "blockIdx.x", "(m + kTile - 1) / kTile", "gridDim.x",
        TripCount::PerBlock("blockIdx.x < (m + kTile - 1) / kTile ? "
                            "((m + kTile - 1) / kTile - blockIdx.x + gridDim.x - 1) / gridDim.x "
                            ": 0"),
        [&] { b.Region("tile", [&] { b.Stmt("out[t] = 0;"); }); });
  const Kernel kernel = MustBuild(b);
  ASSERT_EQ(kernel.constants.size(), 1u);
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(kernel, options, LaunchScalars{{"m", 300}});
  ASSERT_THAT(plan, IsOk());
  // 5 tiles over 4 blocks: 2, 1, 1, 1.
  const uint64_t trips[] = {2, 1, 1, 1};
  for (uint32_t block = 0; block < 4; ++block) {
    EXPECT_THAT(plan->ExactEventsForBlockUnit(block, 0), IsOkAndHolds(2 + 2 * trips[block]));
  }
}

TEST(RecordPlanTest, AConstantNamedLikeAParameterIsABuildError) {
  KernelBuilder b("clash");
  b.Param("int", "m").Constant("m", 1).Block({32, 1, 1});
  b.Stmt(";");
  EXPECT_THAT(b.Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("constant name 'm' clashes with the parameter 'm'")));
}

TEST(RecordPlanTest, PerBlockFromBoundsRejectsANonPositiveLiteralStep) {
  KernelBuilder b("bounds");
  b.Param("int", "n").Block({32, 1, 1});
  b.For("i", "n", 0, -1, TripCount::PerBlock(), [&] { b.Stmt(";"); });
  EXPECT_THAT(b.Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("loop 'i' takes TripCount::PerBlock() from its bounds but its "
                                 "step is -1")));
}

TEST(RecordPlanTest, UnsetUnitFitsTheBlockAndExplainSaysSo) {
  struct Case {
    Dim3 block;
    UnitKind kind;
    uint32_t units;
    const char* why;
  };
  for (const Case& c : {Case{{256, 1, 1}, UnitKind::kWarpgroup, 2, "a multiple of 128"},
                        Case{{64, 1, 1}, UnitKind::kWarp, 2, "a multiple of 32 but not of 128"},
                        Case{{16, 2, 1}, UnitKind::kWarp, 1, "a multiple of 32 but not of 128"},
                        Case{{20, 1, 1}, UnitKind::kBlock, 1, "not a multiple of 32"}}) {
    SCOPED_TRACE(absl::StrCat(c.block.Count(), " threads"));
    KernelBuilder b("small");
    b.Param("float*", "out").Block(c.block).Region("r", [&] { b.Stmt("out[0] = 1;"); });
    absl::StatusOr<RecordPlan> plan = RecordPlan::Create(MustBuild(b), ProfileOptions{});
    ASSERT_THAT(plan, IsOk());
    EXPECT_EQ(plan->layout().unit.kind, c.kind);
    EXPECT_EQ(plan->units_per_block(), c.units);
    EXPECT_THAT(plan->Explain(),
                HasSubstr(absl::StrCat("\nunit ", UnitKindName(c.kind),
                                       " chosen (no unit given): the block of ",
                                       c.block.Count(), " threads is ", c.why, "\n")));
  }
  // A unit that was given is used as given, and Explain adds nothing.
  KernelBuilder b("given");
  b.Param("float*", "out").Block({256, 1, 1}).Region("r", [&] { b.Stmt("out[0] = 1;"); });
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(MustBuild(b), options);
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(plan->Explain(), HasSubstr("per warp unit:\n"));
  EXPECT_THAT(plan->Explain(), Not(HasSubstr("chosen (no unit given)")));
}

TEST(RecordPlanTest, PolicySitesSkipLoopsOfUnknownTripCount) {
  KernelBuilder b("unbounded");
  b.Param("int", "n").Block({32, 1, 1});
  b.For("i", 0, "n", TripCount::Unknown(), [&] { b.Barrier(); });
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  options.policy.loop_iterations = true;
  options.policy.barrier_waits = true;
  RecordPlan plan = MustPlan(MustBuild(b), options);
  EXPECT_EQ(plan.sites().size(), 1u);  // the kernel only
  EXPECT_THAT(plan.ExactEventsForUnit(0), IsOkAndHolds(2u));
}

TEST(RecordPlanTest, RejectsABarrierAlwaysRecordedInALoopOfUnknownTripCount) {
  // BarrierRecord::kAlways asks for the wait site whatever the policy: it cannot be
  // silently dropped where its events cannot be counted.
  KernelBuilder b("unbounded");
  b.Param("int", "n").Block({32, 1, 1});
  b.For("i", 0, "n", TripCount::Unknown(), [&] { b.Barrier("sync", BarrierRecord::kAlways); });
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  EXPECT_THAT(RecordPlan::Create(MustBuild(b), options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kernel unbounded > loop i > barrier sync: barrier 'sync' asks "
                                 "for a wait record (BarrierRecord::kAlways) but is inside "
                                 "kernel unbounded > loop i, whose trip count is unknown")));
}

TEST(RecordPlanTest, RejectsANamedBarrierAlwaysRecordedInALoopOfUnknownTripCount) {
  // The same rule for a named barrier's sync (it used to lose its record silently there).
  KernelBuilder b("unbounded");
  b.Param("int", "n").Block({64, 1, 1});
  b.For("i", 0, "n", TripCount::Unknown(),
        [&] { b.NamedBarrierSync("pair", 1, 64, BarrierRecord::kAlways); });
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  EXPECT_THAT(RecordPlan::Create(MustBuild(b), options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kernel unbounded > loop i > named barrier pair: barrier 'pair' "
                                 "asks for a wait record (BarrierRecord::kAlways)")));
}

TEST(RecordPlanTest, RejectsProfiledKernelWithoutSites) {
  KernelBuilder b("bare");
  b.Param("float*", "x").Stmt("x[0] = 1;");
  ProfileOptions options;
  options.policy.kernel = false;
  options.unit = UnitSpec::Block();
  EXPECT_THAT(RecordPlan::Create(MustBuild(b), options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no record site")));
}

TEST(RecordPlanTest, RejectsUnitThatDoesNotFitTheBlock) {
  ProfileOptions options;
  options.unit = UnitSpec::Warpgroup();
  KernelBuilder b("small");
  b.Param("float*", "x").Block({96, 1, 1}).Stmt(";");
  EXPECT_THAT(RecordPlan::Create(MustBuild(b), options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not a multiple of the warpgroup size 128")));
}

TEST(RecordPlanTest, BufferBytesCoverSampledBlocks) {
  ProfileOptions options;
  options.sample = BlockSample{1, UINT32_MAX, 2};  // blocks 1, 3 of 4
  RecordPlan plan = MustPlan(GemmLike(), options);
  // 2 blocks x 2 units x (64 + 258 x 8) bytes.
  EXPECT_EQ(plan.buffer_bytes(), 2u * 2u * (64u + 258u * 8u));
  EXPECT_EQ(plan.layout().sample.end, 4u);
}

TEST(RecordPlanTest, AutoPlacementChoosesSharedWhenStagingFits) {
  RecordPlan plan = MustPlan(GemmLike());
  EXPECT_EQ(plan.placement(), Placement::kShared);
  EXPECT_EQ(plan.staging_bytes(), 2u * 258u * 8u);
}

TEST(RecordPlanTest, AutoPlacementChoosesGlobalWhenTheKernelsSharedLeavesNoRoom) {
  KernelBuilder b("big");
  b.Param("float*", "x").Block({128, 1, 1});
  b.SharedArray("float", "tile", 11 * 1024);  // 44 KiB of the 48 KiB budget
  b.DynamicShared("float", "dyn", 2048);      // and 2 KiB more
  b.For("k", 0, 200, TripCount::Exact(200), [&] { b.Region("r", [&] { b.Stmt("tile[0] = dyn[0];"); }); });
  RecordPlan plan = MustPlan(MustBuild(b));
  // Staging 402 x 8 = 3216 bytes > 2048 left.
  EXPECT_EQ(plan.placement(), Placement::kGlobal);
  EXPECT_EQ(plan.staging_bytes(), 0u);
  EXPECT_THAT(plan.Explain(), HasSubstr("auto -> global: staging 3216 bytes exceeds the 2048 left"));
}

TEST(RecordPlanTest, RejectsExplicitSharedPlacementOverTheStaticLimit) {
  KernelBuilder b("big");
  b.Param("float*", "x").Block({1024, 1, 1});
  b.For("k", 0, 400, TripCount::Exact(400), [&] { b.Region("r", [&] { b.Stmt(";"); }); });
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  options.placement = Placement::kShared;
  // 32 units x 802 events x 8 bytes = 205312 bytes.
  EXPECT_THAT(RecordPlan::Create(MustBuild(b), options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("205312-byte staging array (32 units x 802 events x 8)")));
}

TEST(RecordPlanTest, CapacityOverrideChangesTheBufferNotThePlan) {
  ProfileOptions options;
  options.capacity_override = 10;
  RecordPlan plan = MustPlan(GemmLike(), options);
  EXPECT_EQ(plan.capacity(), 10u);
  EXPECT_EQ(plan.max_events(), 258u);
  EXPECT_THAT(plan.Explain(), HasSubstr("overridden from 258"));
}

TEST(RecordPlanTest, ExplainShowsTheDerivation) {
  const std::string explanation = MustPlan(GemmLike()).Explain();
  EXPECT_THAT(explanation, HasSubstr("kernel gemm -> kernel 2 + loop k 256 = 258\n"
                                     "  loop k x64 -> (region load 2 + region mma 2) x 64 = 256\n"
                                     "    region load 2\n"
                                     "    region mma 2\n"));
  EXPECT_THAT(explanation, HasSubstr("per warpgroup unit:\n"
                                     "  warpgroup 0 (recorder thread 0): 258 exactly\n"
                                     "  warpgroup 1 (recorder thread 128): 258 exactly\n"));
  EXPECT_THAT(explanation, HasSubstr("buffer 8 records (4 sampled blocks x 2 units)"));
}

TEST(RecordPlanTest, RejectsUnitIndexPastTheBlock) {
  EXPECT_THAT(MustPlan(GemmLike()).ExactEventsForUnit(2),
              StatusIs(absl::StatusCode::kOutOfRange,
                       HasSubstr("kernel gemm: warpgroup 2 does not exist; a block has 2 "
                                 "warpgroup units")));
}


// ---- Per-block trip counts (persistent kernels) ------------------------------------------

constexpr char kTilesOfBlock[] =
    "blockIdx.x < num_tiles ? (num_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0";

// A persistent kernel: 5 blocks of 2 warpgroups stride over num_tiles tiles; warpgroup 0
// (producer) loads each tile, warpgroup 1 (consumer) computes it twice.
Kernel Persistent() {
  KernelBuilder b("persistent");
  b.Param("float*", "c").Param("int", "num_tiles").Grid({5, 1, 1}).Block({256, 1, 1});
  b.For("tile", "blockIdx.x", "num_tiles", "gridDim.x", TripCount::PerBlock(kTilesOfBlock), [&] {
    b.Roles(RoleAxis::kWarpgroup,
            {Role{"producer", 1, "", [&] { b.Region("load", [&] { b.Stmt("c[0] = 0;"); }); }},
             Role{"consumer", 1, "", [&] {
                    b.For("k", 0, 2, TripCount::Exact(2),
                          [&] { b.Region("mma", [&] { b.Stmt("c[1] = 0;"); }); });
                  }}});
  });
  return MustBuild(b);
}

uint64_t TilesOfBlock(uint64_t block, uint64_t grid, uint64_t tiles) {
  uint64_t n = 0;
  for (uint64_t t = block; t < tiles; t += grid) ++n;
  return n;
}

TEST(RecordPlanTest, PerBlockTripCountIsExactForEveryBlockAndUnitOfTheLaunch) {
  const Kernel kernel = Persistent();
  for (int64_t tiles : {0, 3, 5, 13, 40}) {
    SCOPED_TRACE(absl::StrCat(tiles, " tiles"));
    absl::StatusOr<RecordPlan> plan =
        RecordPlan::Create(kernel, ProfileOptions{}, LaunchScalars{{"num_tiles", tiles}});
    ASSERT_THAT(plan, IsOk());
    EXPECT_TRUE(plan->per_block());
    uint64_t largest = 0;
    for (uint32_t block = 0; block < 5; ++block) {
      const uint64_t n = TilesOfBlock(block, 5, tiles);
      // kernel 2 + n x load 2 (producer), kernel 2 + n x 2 x mma 2 (consumer).
      EXPECT_THAT(plan->ExactEventsForBlockUnit(block, 0), IsOkAndHolds(2 + 2 * n));
      EXPECT_THAT(plan->ExactEventsForBlockUnit(block, 1), IsOkAndHolds(2 + 4 * n));
      largest = std::max(largest, 2 + 4 * n);
    }
    EXPECT_EQ(plan->capacity(), std::max<uint64_t>(largest, 1));
    EXPECT_EQ(plan->max_events(), largest);
  }
}

TEST(RecordPlanTest, UnitCountThatDiffersPerBlockIsNotExactForTheWholeLaunch) {
  absl::StatusOr<RecordPlan> plan =
      RecordPlan::Create(Persistent(), ProfileOptions{}, LaunchScalars{{"num_tiles", 7}});
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->EventsForUnit(1), (EventRange{2 + 4 * 1, 2 + 4 * 2}));
  EXPECT_THAT(plan->ExactEventsForUnit(1),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("depends on the block"),
                             HasSubstr("ExactEventsForBlockUnit"))));
  // Equal across blocks (10 tiles over 5 blocks): exact for the launch.
  absl::StatusOr<RecordPlan> even =
      RecordPlan::Create(Persistent(), ProfileOptions{}, LaunchScalars{{"num_tiles", 10}});
  ASSERT_THAT(even, IsOk());
  EXPECT_THAT(even->ExactEventsForUnit(1), IsOkAndHolds(2u + 4 * 2));
}

TEST(RecordPlanTest, PerBlockCountsFollowTheBlockSample) {
  ProfileOptions options;
  options.sample = BlockSample{1, 5, 2};  // blocks 1 and 3
  absl::StatusOr<RecordPlan> plan =
      RecordPlan::Create(Persistent(), options, LaunchScalars{{"num_tiles", 9}});
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(plan->ExactEventsForBlockUnit(1, 1), IsOkAndHolds(2u + 4 * 2));
  EXPECT_THAT(plan->ExactEventsForBlockUnit(3, 1), IsOkAndHolds(2u + 4 * 2));
  EXPECT_EQ(plan->EventsForBlockUnit(2, 1), (EventRange{0, 0}));  // not sampled
  EXPECT_EQ(plan->capacity(), 2u + 4 * 2);
}

TEST(RecordPlanTest, ExplainShowsThePerBlockExpressionAndItsRange) {
  absl::StatusOr<RecordPlan> plan =
      RecordPlan::Create(Persistent(), ProfileOptions{}, LaunchScalars{{"num_tiles", 7}});
  ASSERT_THAT(plan, IsOk());
  const std::string explanation = plan->Explain();
  EXPECT_THAT(explanation,
              HasSubstr(absl::StrCat("loop tile x per-block(", kTilesOfBlock,
                                     ") in [1, 2], largest -> (roles 4) x 2 = 8")));
  EXPECT_THAT(explanation,
              HasSubstr("per-block trip counts evaluated for 5 sampled blocks: 2 distinct"));
  EXPECT_THAT(explanation, HasSubstr("warpgroup 1 (recorder thread 128, role consumer; depends "
                                     "on the block (per-block loop)): 6 to 10"));
}

TEST(RecordPlanTest, PerBlockTripCountNeedsTheLaunchScalarsItReads) {
  EXPECT_THAT(RecordPlan::Create(Persistent(), ProfileOptions{}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("kernel persistent > loop tile"),
                             HasSubstr("reads scalar 'num_tiles'"),
                             HasSubstr("plan for a launch"))));
}

TEST(RecordPlanTest, PerBlockTripCountErrorsNameTheLoop) {
  auto plan_with = [](const std::string& expr) {
    KernelBuilder b("k");
    b.Param("float*", "c").Param("float", "scale").Param("int", "n");
    b.Grid({4, 1, 1}).Block({128, 1, 1});
    b.For("t", "blockIdx.x", "n", "gridDim.x", TripCount::PerBlock(expr),
          [&] { b.Region("work", [&] { b.Stmt("c[0] = scale;"); }); });
    return RecordPlan::Create(MustBuild(b), ProfileOptions{},
                              LaunchScalars{{"n", 6}, {"scale", 1}});
  };
  EXPECT_THAT(plan_with("n -"), StatusIs(absl::StatusCode::kInvalidArgument,
                                         AllOf(HasSubstr("kernel k > loop t"),
                                               HasSubstr("expected"))));
  EXPECT_THAT(plan_with("scale"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("'scale', which is not an integer scalar parameter")));
  EXPECT_THAT(plan_with("c"), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("not an integer scalar parameter")));
  EXPECT_THAT(plan_with("tiles"), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("'tiles', which is not a parameter")));
  EXPECT_THAT(plan_with("n - 3 * blockIdx.x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("is -3 for block (3, 0, 0)"), HasSubstr("max(0,"))));
  EXPECT_THAT(plan_with("n / (2 - blockIdx.x)"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("for block (2, 0, 0)"), HasSubstr("divides by zero"))));
  EXPECT_THAT(plan_with("(n + gridDim.x - 1) / gridDim.x"), IsOk());
}

}  // namespace
}  // namespace warptrace
