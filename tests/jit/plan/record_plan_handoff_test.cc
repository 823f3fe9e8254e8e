// The record plan with warp specialization: phase-barrier handoffs (arrivals, waits, copies)
// count their slots where each unit's recorder runs them.
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

// ---- Warp specialization: payload events take 2 slots each ----

// A persistent producer/consumer pair of warpgroups: per tile and K-step the producer waits
// on empty, issues a bulk copy (one thread) and arrives on full (one thread); the consumer
// waits on full and every thread arrives on empty.
Kernel HandoffPipeline() {
  KernelBuilder b("ring");
  b.Param("const float*", "in").Param("int", "tiles").Grid({3, 1, 1}).Block({256, 1, 1});
  b.SharedArray("float", "stage", 2 * 32);
  b.PhaseBarriers("full", 2, 1);
  b.PhaseBarriers("empty", 2, 128);
  const TripCount per_block = TripCount::PerBlock(
      "blockIdx.x < tiles ? (tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0");
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] {
              b.For("t", "blockIdx.x", "tiles", "gridDim.x", per_block, [&] {
                b.For("k", 0, 4, TripCount::Exact(4), [&] {
                  b.WaitPhase("empty", "k % 2", "k / 2");
                  b.ArriveExpectTx("full", "k % 2", "k / 2", 128);
                  AsyncCopySpec copy;
                  copy.name = "load";
                  copy.dst = "stage + (k % 2) * 32";
                  copy.src = "in + k * 32";
                  copy.row_bytes = 128;
                  copy.barrier = "full";
                  copy.barrier_index = "k % 2";
                  copy.barrier_phase = "k / 2";
                  b.AsyncCopy(copy);
                });
              });
            }},
           {"consumer", 1, "", [&] {
              b.For("first", 0, 2, TripCount::Exact(2), [&] { b.Arrive("empty", "first", 0); });
              b.For("t", "blockIdx.x", "tiles", "gridDim.x", per_block, [&] {
                b.For("k", 0, 4, TripCount::Exact(4), [&] {
                  b.WaitPhase("full", "k % 2", "k / 2");
                  b.Arrive("empty", "k % 2", "k / 2 + 1");
                });
              });
            }}});
  return MustBuild(b);
}

TEST(RecordPlanTest, HandoffsCountTheirSlotsOnlyWhereTheRecorderRunsThem) {
  const Kernel kernel = HandoffPipeline();
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(kernel, options, {{"tiles", 7}});
  ASSERT_THAT(plan, IsOk());
  // Tiles per block: 3, 2, 2. Warp 0 (the producer's first thread): per K-step a wait (3:
  // its enter without a payload, its exit with one, trace version 4), an arrival (2) and a
  // bulk copy's begin (2: trace version 5 derives its end). Warps 1-3: only the wait. Consumer warps: 2 first
  // arrivals, per K-step a wait (3) and an arrival (2).
  const uint64_t tiles[] = {3, 2, 2};
  for (uint32_t block = 0; block < 3; ++block) {
    EXPECT_THAT(plan->ExactEventsForBlockUnit(block, 0),
                IsOkAndHolds(2 + tiles[block] * 4 * (3 + 2 + 2)));
    for (uint32_t warp = 1; warp < 4; ++warp) {
      EXPECT_THAT(plan->ExactEventsForBlockUnit(block, warp),
                  IsOkAndHolds(2 + tiles[block] * 4 * 3));
    }
    for (uint32_t warp = 4; warp < 8; ++warp) {
      EXPECT_THAT(plan->ExactEventsForBlockUnit(block, warp),
                  IsOkAndHolds(2 + 2 * 2 + tiles[block] * 4 * (3 + 2)));
    }
  }
  EXPECT_EQ(plan->capacity(), 2u + 3 * 4 * 7);
  std::vector<std::string> kinds;
  for (const SiteInfo& site : plan->sites()) {
    kinds.push_back(absl::StrCat(site.name, ":", SiteKindName(site.kind)));
  }
  EXPECT_THAT(kinds, ElementsAre("ring:kernel", "wait empty:phase_wait",
                                 "arrive full:barrier_arrive", "load:async_copy",
                                 "arrive empty:barrier_arrive", "wait full:phase_wait",
                                 "arrive empty:barrier_arrive"));
}

TEST(RecordPlanTest, BarrierTableNamesEveryElementWithTheArrivalsItsUnitsRecordPerPhase) {
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  absl::StatusOr<RecordPlan> plan =
      RecordPlan::Create(HandoffPipeline(), options, {{"tiles", 7}});
  ASSERT_THAT(plan, IsOk());
  // full: one arrival (the producer's first thread, warp 0's recorder) completes a phase;
  // empty: the 128 consumer threads, recorded by each of the 4 consumer warps.
  EXPECT_THAT(plan->layout().barriers,
              ElementsAre(BarrierInfo{0, "full[0]", 1}, BarrierInfo{1, "full[1]", 1},
                          BarrierInfo{2, "empty[0]", 4}, BarrierInfo{3, "empty[1]", 4}));
  // Warpgroup units: the consumer warpgroup records each of its arrivals once.
  options.unit = UnitSpec::Warpgroup();
  plan = RecordPlan::Create(HandoffPipeline(), options, {{"tiles", 7}});
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->layout().barriers[2].arrivals_per_phase, 1u);
  // Block units record only thread 0's events: no consumer arrival, so unknown (0).
  options.unit = UnitSpec::Block();
  plan = RecordPlan::Create(HandoffPipeline(), options, {{"tiles", 7}});
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->layout().barriers[0].arrivals_per_phase, 1u);
  EXPECT_EQ(plan->layout().barriers[2].arrivals_per_phase, 0u);
}

TEST(RecordPlanTest, BarrierTableDoesNotGuessArrivalsThatDependOnData) {
  KernelBuilder b("guarded");
  b.Param("float*", "out").Grid({1, 1, 1}).Block({128, 1, 1});
  b.PhaseBarriers("ready", 1, 4);
  b.If("threadIdx.x % 32 == 0", [&] { b.Arrive("ready", 0, 0); });
  b.WaitPhase("ready", 0, 0);
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  const RecordPlan plan = MustPlan(MustBuild(b), options);
  EXPECT_THAT(plan.layout().barriers, ElementsAre(BarrierInfo{0, "ready[0]", 0}));
  // No phase barriers, no table.
  EXPECT_TRUE(MustPlan(GemmLike()).layout().barriers.empty());
}

TEST(RecordPlanTest, HandoffRecordsCanBeTurnedOff) {
  ProfileOptions options;
  options.policy.handoffs = false;
  absl::StatusOr<RecordPlan> plan =
      RecordPlan::Create(HandoffPipeline(), options, {{"tiles", 7}});
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->sites().size(), 1u);  // the kernel's
  EXPECT_THAT(plan->ExactEventsForBlockUnit(0, 0), IsOkAndHolds(2u));
  // The table still names the barriers; no arrival is recorded, so no count.
  ASSERT_EQ(plan->layout().barriers.size(), 4u);
  EXPECT_EQ(plan->layout().barriers[3].name, "empty[1]");
  EXPECT_EQ(plan->layout().barriers[3].arrivals_per_phase, 0u);
}

TEST(RecordPlanTest, ExplainShowsHandoffSlots) {
  ProfileOptions options;
  absl::StatusOr<RecordPlan> plan =
      RecordPlan::Create(HandoffPipeline(), options, {{"tiles", 7}});
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(plan->Explain(), AllOf(HasSubstr("wait empty 3"), HasSubstr("arrive full 2"),
                                     HasSubstr("copy load 2")));
}

TEST(RecordPlanTest, NamedBarrierSyncsGetBarrierWaitSitesByPolicyAndArrivesNone) {
  KernelBuilder b("named");
  b.Param("float*", "out").Grid({1, 1, 1}).Block({256, 1, 1});
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] { b.NamedBarrierArrive("handoff", 1, 256); }},
           {"consumer", 1, "", [&] { b.NamedBarrierSync("handoff", 1, 256); }}});
  const Kernel kernel = MustBuild(b);
  ProfileOptions options;
  options.policy.barrier_waits = true;
  const RecordPlan plan = MustPlan(kernel, options);
  ASSERT_EQ(plan.sites().size(), 2u);
  EXPECT_EQ(plan.sites()[1].kind, SiteKind::kBarrierWait);
  EXPECT_THAT(plan.ExactEventsForUnit(0), IsOkAndHolds(2u));  // producer: kernel only
  EXPECT_THAT(plan.ExactEventsForUnit(1), IsOkAndHolds(4u));
}

}  // namespace
}  // namespace warptrace
