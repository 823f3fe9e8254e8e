// Loops of any head (KernelBuilder::LoopHead, issue 54 item 4): halving, shifting and
// counting-down loops with builder constructs inside, run on the host backend, compiled by
// NVRTC (RunOptions::check_gpu_compile), their barriers in the plan and on the timeline; the
// declared trip count checked by running the head; RunLoopHead itself.
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/builder/loop_head.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

class LoopHeadTest : public ::warptrace::testing::HostRunTest {};

// A block reduction as the original kernels write it: `for (int s = 128; s > 0; s >>= 1)`
// with a barrier per halving step (8 steps for 256 threads), then a countdown loop.
absl::StatusOr<Kernel> HalvingSum(TripCount halving) {
  KernelBuilder b("halving_sum");
  b.Param("const float*", "x").Param("float*", "out").Block({256, 1, 1}).Grid({2, 1, 1});
  b.SharedArray("float", "red", 256);
  b.Stmt("const int t = threadIdx.x;\nred[t] = x[blockIdx.x * 256 + t];");
  b.Barrier("loaded");
  b.For({"s", 128, "s > 0", "s >>= 1"}, halving, [&] {
    b.Region("step", [&] { b.Stmt("if (t < s) red[t] += red[t + s];"); });
    b.Barrier("halved", BarrierRecord::kAlways);
  });
  b.For({"k", 3, "k >= 1", "--k"}, TripCount::Exact(3), [&] {
    b.Region("countdown", [&] { b.Stmt("if (t == 0) out[blockIdx.x * 4 + k] = red[0] * k;"); });
  });
  b.Stmt("if (t == 0) out[blockIdx.x * 4] = red[0];");
  return b.Build();
}

TEST_F(LoopHeadTest, AHalvingReductionRunsWithItsBarriersInThePlanAndTheTrace) {
  absl::StatusOr<Kernel> kernel = HalvingSum(TripCount::Exact(8));
  ASSERT_THAT(kernel, IsOk());
  std::vector<float> x(512);
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<float> out(8, -1.0f);
  RunOptions options;
  options.profile.unit = UnitSpec::Warp();
  absl::StatusOr<RunResult> run =
      RunKernel(device(), *kernel,
                {KernelArg::In(absl::MakeConstSpan(x)), KernelArg::Out(absl::MakeSpan(out))},
                options);  // also compiles it with NVRTC
  ASSERT_THAT(run, IsOk());
  for (int block = 0; block < 2; ++block) {
    const float sum = 256.0f * 255.0f / 2.0f + 256.0f * 256.0f * block;
    EXPECT_EQ(out[block * 4], sum) << block;
    for (int k = 1; k <= 3; ++k) EXPECT_EQ(out[block * 4 + k], sum * k) << block << " " << k;
  }
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok());
  // Per warp: kernel (2) + 8 x (step 2 + halved wait 2) + 3 x countdown 2.
  EXPECT_EQ(run->plan->ExactEventsForUnit(0).value_or(0), 2u + 8 * 4 + 3 * 2);
  EXPECT_THAT(run->plan->Explain(), HasSubstr("loop s"));
  const TraceLayout& layout = run->trace->layout;
  ASSERT_EQ(run->trace->timeline.units.size(), 16u);  // 8 warps x 2 blocks
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    int halved = 0, steps = 0, countdowns = 0;
    for (const Slice& slice : unit.slices) {
      const std::string& name = layout.sites[slice.site].name;
      halved += name == "halved";
      steps += name == "step";
      countdowns += name == "countdown";
    }
    EXPECT_EQ(halved, 8);
    EXPECT_EQ(steps, 8);
    EXPECT_EQ(countdowns, 3);
  }
}

TEST(LoopHeadBuildTest, AWrongDeclaredCountIsABuildErrorWithTheRunCount) {
  EXPECT_THAT(HalvingSum(TripCount::Exact(7)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("halving_sum > loop s: TripCount::Exact(7) but `for (int s = "
                                 "128; s > 0; s >>= 1)` runs 8 iterations")));
  EXPECT_THAT(HalvingSum(TripCount::UpperBound(6)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("runs 8 iterations")));
  EXPECT_THAT(HalvingSum(TripCount::UpperBound(8)), IsOk());
  KernelBuilder b("k");
  b.Param("float*", "out");
  b.For({"i", 0, "i < 4", "i++"}, TripCount::PerBlock(), [&] { b.Stmt(";"); });
  EXPECT_THAT(b.Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("a loop head of its own has none; give PerBlock(expr)")));
}

TEST(LoopHeadBuildTest, AHeadItCannotRunIsTakenAsDeclared) {
  KernelBuilder b("k");
  b.Param("float*", "out").Param("int", "n");
  b.For({"i", "n", "i > 1", "i /= 2"}, TripCount::UpperBound(31), [&] { b.Stmt(";"); });
  EXPECT_THAT(b.Build(), IsOk());
}

uint64_t Runs(const std::string& init, const std::string& condition, const std::string& update) {
  std::optional<absl::StatusOr<uint64_t>> ran = RunLoopHead("i", init, condition, update, 1000);
  EXPECT_TRUE(ran.has_value()) << condition << "; " << update;
  if (!ran.has_value() || !ran->ok()) return ~uint64_t{0};
  return **ran;
}

TEST(RunLoopHeadTest, CountsHalvingShiftingAndCountingDown) {
  EXPECT_EQ(Runs("8", "i > 1", "i /= 2"), 3u);       // 8 4 2
  EXPECT_EQ(Runs("32", "i >= 1", "i >>= 1"), 6u);    // 32 16 8 4 2 1
  EXPECT_EQ(Runs("1", "i < 256", "i <<= 1"), 8u);
  EXPECT_EQ(Runs("10", "i > 0", "i--"), 10u);
  EXPECT_EQ(Runs("0", "i != 12", "i += 3"), 4u);
  EXPECT_EQ(Runs("3", "0 < i", "--i"), 3u);          // literal first, turned around
  EXPECT_EQ(Runs("1", "i <= 1000", "i *= 10"), 4u);
  EXPECT_EQ(Runs("5", "i < 5", "++i"), 0u);
}

TEST(RunLoopHeadTest, RefusesUndefinedHeadsAndGivesUpOnOthers) {
  auto error = [](const std::string& init, const std::string& cond, const std::string& up) {
    std::optional<absl::StatusOr<uint64_t>> ran = RunLoopHead("i", init, cond, up, 1000);
    return ran.has_value() && !ran->ok() ? std::string(ran->status().message()) : "";
  };
  EXPECT_THAT(error("1", "i > 0", "i <<= 1"), HasSubstr("past int's range"));
  EXPECT_THAT(error("0", "i < 8", "i /= 0"), HasSubstr("divides by 0"));
  EXPECT_THAT(error("1", "i < 8", "i <<= 32"), HasSubstr("shifts by 32"));
  EXPECT_THAT(error("0", "i >= 0", "i *= 1"), HasSubstr("runs more than 1000 iterations"));
  EXPECT_FALSE(RunLoopHead("i", "n", "i > 1", "i /= 2", 1000).has_value());
  EXPECT_FALSE(RunLoopHead("i", "8", "i * 2 > 1", "i /= 2", 1000).has_value());
  EXPECT_FALSE(RunLoopHead("i", "8", "i > 1", "i = i / 2", 1000).has_value());
}

}  // namespace
}  // namespace warptrace
