// jit/plan/event_counter.h by name: saturating arithmetic, the ranges of paths, and the
// counter over built kernels (regions, exact and upper-bound loops, branches, early returns).
#include "jit/plan/event_counter.h"

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace::plan_internal {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

TEST(EventCounterArithmeticTest, SaturatesInsteadOfWrapping) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(SatAdd(max - 1, 5), kSaturated);
  EXPECT_EQ(SatAdd(2, 3), 5u);
  EXPECT_EQ(SatMul(uint64_t{1} << 40, uint64_t{1} << 40), kSaturated);
  EXPECT_EQ(SatMul(0, max), 0u);
  EXPECT_EQ(SatMul(6, 7), 42u);
}

TEST(EventCounterRangeTest, AddNeedsBothPathsAndUnionTakesEither) {
  EXPECT_FALSE(Add(Range::Of(2), Range{}).possible);
  const Range sum = Add(Range::Of(2), Range{true, 1, 5});
  EXPECT_EQ(sum.min, 3u);
  EXPECT_EQ(sum.max, 7u);
  const Range either = Union(Range::Of(4), Range{true, 1, 2});
  EXPECT_EQ(either.min, 1u);
  EXPECT_EQ(either.max, 4u);
  EXPECT_EQ(Union(Range{}, Range::Of(3)).max, 3u);
  EXPECT_EQ(Join({}), "0");
  EXPECT_EQ(Join({"a 2", "b 4"}), "a 2 + b 4");
}

// Every node of the kernel records (a region or loop site for each), as a plan assigns them.
std::vector<std::optional<uint32_t>> AllSites(const Kernel& kernel) {
  std::vector<std::optional<uint32_t>> sites(kernel.num_nodes);
  for (uint32_t i = 0; i < kernel.num_nodes; ++i) sites[i] = i;
  return sites;
}

TEST(EventCounterTest, CountsRegionsLoopsAndTheLargerSideOfABranch) {
  KernelBuilder b("count");
  b.Param("int", "n").Grid({1, 1, 1}).Block({32, 1, 1});
  b.Region("load", [&] { b.Stmt("int x = 0;"); });
  b.For("j", 0, 4, TripCount::Exact(4), [&] {
    b.Region("step", [&] { b.Stmt("(void)j;"); });
  });
  b.If("n > 0", [&] { b.Region("then", [&] { b.Stmt("(void)n;"); }); });
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const std::vector<std::optional<uint32_t>> sites = AllSites(*kernel);
  PerBlockTrips trips;
  trips.trip.assign(kernel->num_nodes, 0);
  trips.how.assign(kernel->num_nodes, "");
  std::vector<std::string> lines;
  Counter counter(sites, std::nullopt, trips, &lines);
  const Flow flow = counter.Body(kernel->body, 1, nullptr);
  // load 2 + 4 iterations x (the loop body's own site 2 + region step 2) + the if's sides
  // (then 2, else 0): statements record nothing.
  ASSERT_TRUE(flow.fall.possible);
  EXPECT_EQ(flow.fall.max, 2u + 4u * (2u + 2u) + 2u);
  EXPECT_EQ(flow.fall.min, 2u + 4u * (2u + 2u) + 0u);
  EXPECT_THAT(counter.data_dependent(), HasSubstr("if (n > 0)"));
  EXPECT_THAT(lines, Contains(HasSubstr("loop j x4 -> (loop j 2 + region step 2) x 4 = 16")));
}

TEST(EventCounterTest, AnUpperBoundLoopCountsUpToItsBound) {
  KernelBuilder b("bounded");
  b.Param("int", "n").Grid({1, 1, 1}).Block({32, 1, 1});
  b.For("j", 0, "n", TripCount::UpperBound(3), [&] {
    b.Region("step", [&] { b.Stmt("(void)j;"); });
  });
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  PerBlockTrips trips;
  trips.trip.assign(kernel->num_nodes, 0);
  trips.how.assign(kernel->num_nodes, "");
  // The counter keeps a reference to the site table: it must outlive it.
  const std::vector<std::optional<uint32_t>> sites = AllSites(*kernel);
  Counter counter(sites, std::nullopt, trips, nullptr);
  const Flow flow = counter.Body(kernel->body, 1, nullptr);
  EXPECT_EQ(flow.fall.min, 0u);
  EXPECT_EQ(flow.fall.max, 3u * (2u + 2u));
}

}  // namespace
}  // namespace warptrace::plan_internal
