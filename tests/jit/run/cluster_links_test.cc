// Hand-off links across the CTAs of a cluster (LinkScope::kCluster): a consumer in each CTA
// releases a stage in rank 0 with ArriveRemote (mbarrier.arrive.release.cluster.shared::
// cluster), as CUTLASS's consumers release a multicast stage in every CTA that shares it;
// rank 0's producer waits for both releases. The trace links each remote arrival to the wait
// it released in the other CTA: an arrow between units of different blocks.
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "format/links.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "profiler/analysis/analysis.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr uint32_t kRounds = 3;

// Per round k: every CTA's thread 0 writes its value into rank 0's slot (DSMEM) and
// releases rank 0's barrier `released` (2 arrivals: one per CTA); rank 0 waits for the
// phase, sums the slots, and the next round begins after a cluster barrier.
Kernel ReleaseKernel(uint32_t clusters) {
  KernelBuilder b("remote_release");
  b.Param("unsigned int*", "out").Grid({2 * clusters, 1, 1}).Block({32, 1, 1});
  b.Cluster({2, 1, 1});
  b.PhaseBarriers("released", 1, 2);
  b.SharedArray("unsigned int", "slots", 2);
  b.Stmt("const unsigned int rank = warptrace_cluster_ctarank();");
  b.ClusterSync("barriers ready");
  b.For("k", 0, static_cast<int64_t>(kRounds), TripCount::Exact(kRounds), [&] {
    b.If("threadIdx.x == 0", [&] {
      b.Stmt("warptrace_cluster_map(slots, 0)[rank] = (k + 1) * 10 + rank;");
    });
    b.ArriveRemote("released", 0, "k", "0");
    b.If("rank == 0",
         [&] {
           b.WaitPhase("released", 0, "k");
           b.Stmt("if (threadIdx.x == 0) out[warptrace_cluster_id_x() * 3 + k] = "
                  "slots[0] + slots[1];");
         },
         Uniform::kBlock);
    b.ClusterSync("round done");
  });
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return *kernel;
}

class ClusterLinksTest : public testing::HostRunTest {};

TEST_F(ClusterLinksTest, RemoteArrivalsLinkToTheWaitTheyReleasedInThePeer) {
  const Kernel kernel = ReleaseKernel(2);
  std::vector<uint32_t> out(2 * kRounds, 0);
  RunOptions options;
  options.check_gpu_compile = true;
  options.profile.unit = UnitSpec::Warp();
  absl::StatusOr<RunResult> run =
      RunKernel(device(), kernel, {KernelArg::Out(absl::MakeSpan(out))}, options);
  ASSERT_THAT(run, IsOk());
  for (uint32_t k = 0; k < kRounds; ++k) {
    for (uint32_t c = 0; c < 2; ++c) EXPECT_EQ(out[c * 3 + k], 2 * (k + 1) * 10 + 1);
  }
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok()) << run->trace->report.findings.size() << " findings";
  const TraceLayout& layout = run->trace->layout;
  EXPECT_EQ(LinkScopeOf(layout), LinkScope::kCluster);
  // Cluster-wide barrier ids: released[0] of rank 0 is id 0, of rank 1 id 1.
  ASSERT_EQ(layout.barriers.size(), 2u);
  EXPECT_EQ(layout.barriers[1].name, "released[0] of CTA rank 1");
  // Count the arrows: per cluster and round, rank 0's own arrival and rank 1's remote one
  // both link to rank 0's wait; the remote one crosses CTAs.
  std::set<uint64_t> seen;
  uint32_t cross = 0, local = 0;
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    for (const Flow& flow : unit.flows) {
      if (flow.kind != FlowKind::kArrivalToRelease || !seen.insert(flow.id).second) continue;
      const uint32_t from_block = run->trace->timeline.units[flow.from.record_index].block_linear;
      const uint32_t to_block = run->trace->timeline.units[flow.to.record_index].block_linear;
      EXPECT_EQ(to_block % 2, 0u) << "every release is of rank 0's barrier";
      (from_block != to_block ? cross : local) += 1;
    }
  }
  EXPECT_EQ(cross, 2 * kRounds) << "rank 1's remote arrivals, per cluster and round";
  EXPECT_EQ(local, 2 * kRounds);
}

TEST_F(ClusterLinksTest, RemoteArrivalWithoutAClusterFailsBuild) {
  KernelBuilder b("no_cluster_remote");
  b.Param("unsigned int*", "out").Grid({2, 1, 1}).Block({32, 1, 1});
  b.PhaseBarriers("released", 1, 1);
  b.ArriveRemote("released", 0, 0, "0");
  b.WaitPhase("released", 0, 0);
  EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("a remote arrival on 'released' needs the kernel's "
                                            "cluster shape")));
}

// Clusters whose CTAs are not consecutive blocks: a 1x2 cluster in a grid 3 wide (CTAs (x,0)
// and (x,1)), a 2x2 cluster in a 4x4 grid. Per round every CTA writes its value into rank 0's
// slot (DSMEM) and arrives remotely on rank 0's barrier; rank 0 waits for all of them. The
// link scope follows the real cluster membership (ClusterOfBlock: %cluster_ctarank, x
// fastest): every arrival links to the wait of rank 0 of its own cluster.
struct Shape2d {
  const char* label;
  Dim3 grid;
  Dim3 cluster;
};

Kernel GatherKernel(const Shape2d& shape) {
  const uint32_t ctas = static_cast<uint32_t>(shape.cluster.Count());
  KernelBuilder b("gather_2d");
  b.Param("unsigned int*", "out").Grid(shape.grid).Block({32, 1, 1});
  b.Cluster(shape.cluster);
  b.PhaseBarriers("released", 1, ctas);
  b.SharedArray("unsigned int", "slots", ctas);
  b.Stmt("const unsigned int rank = warptrace_cluster_ctarank();");
  b.Stmt("const unsigned int cluster = warptrace_cluster_id_x() + "
         "gridDim.x / warptrace_cluster_dim_x() * warptrace_cluster_id_y();");
  b.ClusterSync("barriers ready");
  b.For("k", 0, static_cast<int64_t>(kRounds), TripCount::Exact(kRounds), [&] {
    b.If("threadIdx.x == 0", [&] {
      b.Stmt("warptrace_cluster_map(slots, 0)[rank] = (k + 1) * 10 + rank;");
    });
    b.ArriveRemote("released", 0, "k", "0");
    b.If("rank == 0",
         [&] {
           b.WaitPhase("released", 0, "k");
           b.Stmt(absl::StrCat("if (threadIdx.x == 0) { unsigned int sum = 0; for (unsigned int "
                               "r = 0; r < ", ctas, "u; ++r) sum += slots[r]; out[cluster * ",
                               kRounds, "u + k] = sum; }"));
         },
         Uniform::kBlock);
    b.ClusterSync("round done");
  });
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return *kernel;
}

class ClusterLinks2dTest : public testing::HostRunTest,
                           public ::testing::WithParamInterface<Shape2d> {};

TEST_P(ClusterLinks2dTest, RemoteArrivalsLandInRankZeroOfTheirOwnCluster) {
  const Shape2d& shape = GetParam();
  const uint32_t ctas = static_cast<uint32_t>(shape.cluster.Count());
  const uint32_t clusters = static_cast<uint32_t>(shape.grid.Count()) / ctas;
  std::vector<uint32_t> out(size_t{clusters} * kRounds, 0);
  RunOptions options;
  options.check_gpu_compile = true;
  options.profile.unit = UnitSpec::Warp();
  options.dump.analysis = true;
  absl::StatusOr<RunResult> run =
      RunKernel(device(), GatherKernel(shape), {KernelArg::Out(absl::MakeSpan(out))}, options);
  ASSERT_THAT(run, IsOk());
  for (uint32_t c = 0; c < clusters; ++c) {
    for (uint32_t k = 0; k < kRounds; ++k) {
      EXPECT_EQ(out[c * kRounds + k], ctas * (k + 1) * 10 + ctas * (ctas - 1) / 2)
          << "cluster " << c << " round " << k;
    }
  }
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok()) << run->trace->report.findings.size() << " findings";
  const TraceLayout& layout = run->trace->layout;
  EXPECT_FALSE(ClusterIsContiguous(layout));
  EXPECT_EQ(LinkScopeOf(layout), LinkScope::kCluster);
  ASSERT_EQ(layout.barriers.size(), ctas);
  EXPECT_EQ(layout.barriers[1].name, "released[0] of CTA rank 1");
  const std::vector<UnitTimeline>& units = run->trace->timeline.units;
  std::set<uint64_t> seen;
  uint32_t cross = 0, local = 0;
  std::set<uint32_t> waiting_clusters;
  for (const UnitTimeline& unit : units) {
    for (const Flow& flow : unit.flows) {
      if (flow.kind != FlowKind::kArrivalToRelease || !seen.insert(flow.id).second) continue;
      const Dim3 from = units[flow.from.record_index].block_index;
      const Dim3 to = units[flow.to.record_index].block_index;
      const ClusterPosition from_pos = ClusterOfBlock(layout, from);
      const ClusterPosition to_pos = ClusterOfBlock(layout, to);
      EXPECT_EQ(from_pos.cluster, to_pos.cluster)
          << "block (" << from.x << "," << from.y << ") links into block (" << to.x << ","
          << to.y << "), another cluster";
      EXPECT_EQ(to_pos.rank, 0u) << "every release is of rank 0's barrier";
      // Rank 0 of the arriving CTA's cluster: the block at the cluster's corner.
      EXPECT_EQ(to, (Dim3{from_pos.cluster.x * shape.cluster.x,
                          from_pos.cluster.y * shape.cluster.y, 0}));
      waiting_clusters.insert(ClusterLinear(layout, to));
      (from_pos.rank != 0 ? cross : local) += 1;
    }
  }
  std::printf("%s: %u cross-CTA and %u local arrival -> release arrows over %u clusters\n",
              shape.label, cross, local, clusters);
  EXPECT_EQ(cross, clusters * kRounds * (ctas - 1)) << "each peer's remote arrival, per round";
  EXPECT_EQ(local, clusters * kRounds);
  EXPECT_EQ(waiting_clusters.size(), clusters);
  // One critical path per cluster.
  ASSERT_TRUE(run->dump.analysis.has_value());
  const CriticalPathAnalysis& path = run->dump.analysis->critical_path;
  EXPECT_TRUE(path.cluster_scope);
  EXPECT_EQ(path.blocks, clusters);
  for (const PathCrossing& x : path.slowest_block_crossings) {
    EXPECT_NE(x.from_rank, x.to_rank);
    EXPECT_EQ(x.to_rank, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    NonConsecutive, ClusterLinks2dTest,
    ::testing::Values(Shape2d{"cluster_1x2_in_3x2", {3, 2, 1}, {1, 2, 1}},
                      Shape2d{"cluster_2x2_in_4x4", {4, 4, 1}, {2, 2, 1}}),
    [](const ::testing::TestParamInfo<Shape2d>& info) { return std::string(info.param.label); });

}  // namespace
}  // namespace warptrace
