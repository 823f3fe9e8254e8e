// Exact trip counts verified beyond the recorder threads (issue 54, item 6): every thread's
// count on the host backend, and a loop that ran 0 times where it always runs.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

class TripCheckTest : public ::warptrace::testing::HostRunTest {};

// Each warp takes its own KV blocks, as paged attention's do: warp w of the warpgroup runs
// `counts[w]` iterations of a loop declared Exact(8). The trace holds warp 0's recorder.
absl::StatusOr<Kernel> PerWarpLoop() {
  KernelBuilder b("per_warp");
  b.Param("const int*", "counts").Param("int*", "out").Grid({2, 1, 1}).Block({128, 1, 1});
  b.Stmt("const int n = counts[threadIdx.x / 32];");
  b.Stmt("int acc = 0;");
  b.For("i", 0, "n", TripCount::Exact(8), [&] {
    b.Region("kv block", [&] { b.Stmt("acc += i;"); });
  });
  b.Stmt("out[blockIdx.x * blockDim.x + threadIdx.x] = acc;");
  return b.Build();
}

// Before, warp 2's 7 iterations passed unseen with warpgroup units (warp 0 ran 8).
TEST_F(TripCheckTest, AWarpThatRanFewerIterationsThanItsUnitsRecorderIsFoundOnTheHost) {
  absl::StatusOr<Kernel> kernel = PerWarpLoop();
  ASSERT_THAT(kernel, IsOk());
  std::vector<int> counts = {8, 8, 7, 8};
  std::vector<int> out(2 * 128);
  std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(counts)),
                                 KernelArg::Out(absl::MakeSpan(out))};
  RunOptions options;
  options.profile.unit = UnitSpec::Warpgroup();
  EXPECT_THAT(RunKernel(device(), *kernel, args, options).status(),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("loop kernel per_warp > loop i was declared "
                                       "TripCount::Exact(8) but this thread (warp 2, lane 0) "
                                       "ran 7 iterations"),
                             HasSubstr("thread (64,0,0)"))));
  counts = {8, 8, 8, 8};
  EXPECT_THAT(RunKernel(device(), *kernel, args, options), IsOk());
  EXPECT_EQ(out[0], 28);
}

// Unprofiled, the kernel carries no check: the declaration is the plan's.
TEST_F(TripCheckTest, AnUnprofiledKernelCountsNothing) {
  absl::StatusOr<Kernel> kernel = PerWarpLoop();
  ASSERT_THAT(kernel, IsOk());
  std::vector<int> counts = {8, 8, 7, 8};
  std::vector<int> out(2 * 128);
  std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(counts)),
                                 KernelArg::Out(absl::MakeSpan(out))};
  RunOptions options;
  options.profile.enabled = false;
  EXPECT_THAT(RunKernel(device(), *kernel, args, options), IsOk());
}

// An upper-bounded loop before it makes the unit's count inexact, so the plan's exact event
// count cannot catch an Exact(8) loop that ran 0 times in block 1. `under_branch`: the loop
// sits under an if that block 1 does not take (running 0 times is then right).
absl::StatusOr<Kernel> ZeroInBlockOne(bool under_branch) {
  KernelBuilder b(under_branch ? "maybe" : "never_ran");
  b.Param("int*", "out").Param("int", "m").Grid({2, 1, 1}).Block({64, 1, 1});
  b.Stmt("int acc = 0;");
  b.For("j", 0, "m", TripCount::UpperBound(4), [&] {
    b.Region("pre", [&] { b.Stmt("acc += j;"); });
  });
  const auto loop = [&](const std::string& end) {
    b.For("i", 0, end, TripCount::Exact(8), [&] {
      b.Region("step", [&] { b.Stmt("acc += i;"); });
    });
  };
  if (under_branch) {
    b.If("blockIdx.x == 0u", [&] { loop("8"); });
  } else {
    loop("blockIdx.x == 1u ? 0 : 8");
  }
  b.Stmt("out[blockIdx.x * blockDim.x + threadIdx.x] = acc;");
  return b.Build();
}

// Before, 0 iterations were never a finding ("it may sit under a branch"): this loop is under
// none, so the kernel's span closing without its site means it ran 0 times. The host's
// per-thread check finds it first; with that off, the trace's check (the GPU's) does.
TEST_F(TripCheckTest, AnExactLoopThatRanZeroTimesWhereItAlwaysRunsIsAFinding) {
  absl::StatusOr<Kernel> kernel = ZeroInBlockOne(/*under_branch=*/false);
  ASSERT_THAT(kernel, IsOk());
  std::vector<int> out(2 * 64);
  std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(2)};
  RunOptions options;
  options.profile.unit = UnitSpec::Warp();
  EXPECT_THAT(RunKernel(device(), *kernel, args, options).status(),
              StatusIs(absl::StatusCode::kAborted,
                       HasSubstr("loop kernel never_ran > loop i was declared "
                                 "TripCount::Exact(8) but this thread (warp 0, lane 0) ran 0 "
                                 "iterations")));
  options.profile.host_trip_checks = false;
  EXPECT_THAT(RunKernel(device(), *kernel, args, options).status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("loop kernel never_ran > loop i was declared "
                                       "TripCount::Exact(8) but ran 0 iterations within one "
                                       "'never_ran' (site 'step' never entered)"),
                             HasSubstr("block (1,0,0) warp 0"),
                             Not(HasSubstr("block (0,0,0)")))));
}

// A loop under a branch may rightly run 0 times: no finding.
TEST_F(TripCheckTest, AnExactLoopUnderABranchNotTakenIsNoFinding) {
  absl::StatusOr<Kernel> kernel = ZeroInBlockOne(/*under_branch=*/true);
  ASSERT_THAT(kernel, IsOk());
  std::vector<int> out(2 * 64);
  std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(2)};
  RunOptions options;
  options.profile.unit = UnitSpec::Warp();
  options.profile.host_trip_checks = false;
  EXPECT_THAT(RunKernel(device(), *kernel, args, options), IsOk());
}

// A finding every unit shares is one line with its units and their count (issue 54): this
// used to be two lines per unit, 16 here ("every unit saying the same").
TEST_F(TripCheckTest, AFindingEveryUnitSharesIsOneLineWithItsUnitsAndCount) {
  KernelBuilder b("over_declared");
  b.Param("int*", "out").Param("int", "n").Grid({8, 1, 1}).Block({64, 1, 1});
  b.Stmt("int acc = 0;");
  b.For("i", 0, "n", TripCount::Exact(8), [&] {
    b.Region("step", [&] { b.Stmt("acc += i;"); });
  });
  b.Stmt("out[blockIdx.x * blockDim.x + threadIdx.x] = acc;");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<int> out(8 * 64);
  std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(3)};
  RunOptions options;
  options.profile.unit = UnitSpec::Block();
  options.profile.host_trip_checks = false;
  const absl::Status status = RunKernel(device(), *kernel, args, options).status();
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("found 16 errors in 8 of 8 units"),
                             HasSubstr("but ran 3 iterations within one 'over_declared' (site "
                                       "'step' entered 3 times): the declared exact count did "
                                       "not happen (in 8 units: block (0,0,0) block 0 event "),
                             HasSubstr("block (2,0,0) block 0 event 7 and 5 more)"),
                             HasSubstr("recorded 8 event slots but the plan counts exactly 18 "
                                       "for this unit"))));
  const std::string message(status.message());
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 2) << message;
}

}  // namespace
}  // namespace warptrace
