// ArriveBy::kOneThreadPerWarpgroup: a role of two consumer warpgroups whose warpgroups each
// arrive once per step. With the construct the plan is exact per trace unit and equals what
// the units recorded; with the old workaround (an every-thread arrival under
// `if (threadIdx.x % 128 == 0)`) the plan can only bound the count.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "format/layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr int kSteps = 4;

// Warpgroup 0 produces, warpgroups 1-2 consume: per step k the producer arrives on `full`
// (one thread), each consumer warpgroup waits for it, adds 1 and arrives on `done` (2
// arrivals per phase: once per consumer warpgroup); the producer waits for `done` phase k.
KernelBuilder TwoConsumerWarpgroups(bool per_warpgroup) {
  KernelBuilder b("two_consumers");
  b.Param("float*", "out").Grid({1, 1, 1}).Block({384, 1, 1});
  b.PhaseBarriers("full", 1, 1);
  b.PhaseBarriers("done", 1, 2);
  b.Roles(RoleAxis::kWarpgroup,
          {Role{"producer", 1, "",
                [&] {
                  b.For("k", 0, kSteps, TripCount::Exact(kSteps), [&] {
                    b.Arrive("full", 0, "k", ArriveBy::kOneThread);
                    b.WaitPhase("done", 0, "k");
                  });
                }},
           Role{"consumer", 2, "", [&] {
                  b.For("k", 0, kSteps, TripCount::Exact(kSteps), [&] {
                    b.WaitPhase("full", 0, "k");
                    b.Stmt("out[threadIdx.x] += 1.0f;");
                    if (per_warpgroup) {
                      b.Arrive("done", 0, "k", ArriveBy::kOneThreadPerWarpgroup);
                    } else {
                      b.If("threadIdx.x % 128 == 0",
                           [&] { b.Arrive("done", 0, "k", ArriveBy::kEveryThread); });
                    }
                  });
                }}});
  return b;
}

class ArriveByTest : public testing::HostRunTest {
 protected:
  absl::StatusOr<RunResult> Run(const Kernel& kernel) {
    const std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out_))};
    RunOptions options;
    options.profile.unit = UnitSpec::Warp();  // 12 units: 3 of every 4 do not arrive
    return RunKernel(device(), kernel, args, options);
  }
  std::vector<float> out_ = std::vector<float>(384, 0.0f);
};

TEST_F(ArriveByTest, OneThreadPerWarpgroupKeepsThePlanExactAndEqualToTheRecordedCount) {
  absl::StatusOr<Kernel> kernel = TwoConsumerWarpgroups(true).Build();
  ASSERT_THAT(kernel, IsOk());
  absl::StatusOr<RunResult> run = Run(*kernel);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(out_[128], static_cast<float>(kSteps));
  EXPECT_EQ(out_[383], static_cast<float>(kSteps));
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok());
  const std::vector<DecodedRecord>& records = run->trace->decoded.records;
  ASSERT_EQ(records.size(), 12u);
  for (const DecodedRecord& r : records) {
    SCOPED_TRACE(r.unit_index);
    absl::StatusOr<uint64_t> planned = run->plan->ExactEventsForUnit(r.unit_index);
    ASSERT_THAT(planned, IsOk());
    EXPECT_EQ(*planned, r.attempted);
    EXPECT_EQ(r.dropped(), 0u);  // the capacity is the largest unit's count
  }
  // The first warp of a consumer warpgroup records its 4 arrivals (2 slots each) more than
  // the other three warps of it.
  EXPECT_EQ(records[4].attempted, records[5].attempted + 2 * kSteps);
  EXPECT_EQ(records[8].attempted, records[9].attempted + 2 * kSteps);
  // The barrier table knows each phase's recorded arrivals: one per consumer warpgroup.
  bool found = false;
  for (const BarrierInfo& barrier : run->trace->layout.barriers) {
    if (barrier.name != "done[0]") continue;
    found = true;
    EXPECT_EQ(barrier.arrivals_per_phase, 2u);
  }
  EXPECT_TRUE(found);
}

TEST_F(ArriveByTest, TheOldWorkaroundUnderAThreadIfLeavesThePlanOnlyABound) {
  absl::StatusOr<Kernel> kernel = TwoConsumerWarpgroups(false).Build();
  ASSERT_THAT(kernel, IsOk());
  absl::StatusOr<RunResult> run = Run(*kernel);
  ASSERT_THAT(run, IsOk());
  const DecodedRecord& second_warp = run->trace->decoded.records[5];
  EXPECT_FALSE(run->plan->ExactEventsForUnit(5).ok());
  EXPECT_LT(second_warp.attempted, run->plan->EventsForUnit(5).max);
}

TEST_F(ArriveByTest, BuildRejectsOneThreadPerWarpgroupInARoleOfSingleWarps) {
  KernelBuilder b("per_warpgroup_of_warps");
  b.Param("float*", "out").Block({64, 1, 1});
  b.PhaseBarriers("done", 1, 1);
  b.Roles(RoleAxis::kWarp,
          {Role{"a", 1, "", [&] { b.Arrive("done", 0, 0, ArriveBy::kOneThreadPerWarpgroup); }},
           Role{"b", 1, "", [&] { b.WaitPhase("done", 0, 0); }}});
  EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("one thread per warpgroup of role 'a' arrives on "
                                            "'done', but role 'a' has 32 threads, not a whole "
                                            "number of warpgroups")));
}

}  // namespace
}  // namespace warptrace
