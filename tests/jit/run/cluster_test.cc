// Thread-block clusters end to end on the host backend: kernels built with
// KernelBuilder::Cluster that call the cluster primitives (jit/primitives/cluster_sm90.cuh)
// compile with NVRTC for sm_90 (RunOptions::check_gpu_compile) and run on the CPU with the
// cluster's CTAs co-scheduled: a peer's shared memory is really the peer's, the cluster
// barrier and remote mbarrier arrivals behave as the PTX ISA says, and each misuse fails the
// launch naming the CTA ranks.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "jit/target/cuda_target.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr uint32_t kThreads = 64;

class ClusterTest : public testing::HostRunTest {
 protected:
  absl::Status Run(const Kernel& kernel, std::vector<uint32_t>& out) {
    RunOptions options;
    options.check_gpu_compile = true;  // NVRTC for sm_90 as well as the host compiler
    return RunKernel(device(), kernel, {KernelArg::Out(absl::MakeSpan(out))}, options)
        .status();
  }
};

// Each CTA writes rank * 1000 + tid into its shared memory; after a cluster barrier every
// thread reads its peer's (rank ^ 1) value through mapa (PTX ISA: "Get address in the CTA
// specified by operand b which corresponds to the address specified by operand a"), and a
// final cluster barrier keeps both CTAs alive until neither reads the other.
Kernel DsmemExchange(Dim3 grid, Dim3 cluster) {
  KernelBuilder b("dsmem_exchange");
  b.Param("unsigned int*", "out").Grid(grid).Block({kThreads, 1, 1}).Cluster(cluster);
  b.SharedArray("unsigned int", "mine", kThreads);
  b.Stmt("const unsigned int rank = warptrace_cluster_ctarank();\n"
         "mine[threadIdx.x] = rank * 1000u + threadIdx.x;");
  b.Stmt("warptrace_cluster_sync();");
  b.Stmt("const unsigned int* peer = warptrace_cluster_map(mine, rank ^ 1u);\n"
         "const unsigned int block = blockIdx.x + gridDim.x * blockIdx.y;\n"
         "out[block * 2 * blockDim.x + threadIdx.x] = peer[threadIdx.x];\n"
         "out[block * 2 * blockDim.x + blockDim.x + threadIdx.x] =\n"
         "    (warptrace_cluster_nctarank() << 24) | (warptrace_cluster_id_x() << 16) |\n"
         "    (warptrace_cluster_id_y() << 8) | rank;");
  b.Stmt("warptrace_cluster_sync();");
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return *kernel;
}

TEST_F(ClusterTest, PeersReadEachOthersSharedMemoryThroughMapa) {
  const Kernel kernel = DsmemExchange({4, 2, 1}, {2, 1, 1});
  std::vector<uint32_t> out(8 * 2 * kThreads, 0xffffffffu);
  ASSERT_THAT(Run(kernel, out), IsOk());
  for (uint32_t by = 0; by < 2; ++by) {
    for (uint32_t bx = 0; bx < 4; ++bx) {
      const uint32_t block = bx + 4 * by;
      const uint32_t rank = bx % 2;
      for (uint32_t t = 0; t < kThreads; ++t) {
        ASSERT_EQ(out[block * 2 * kThreads + t], (rank ^ 1u) * 1000u + t)
            << "block " << block << " thread " << t;
        ASSERT_EQ(out[block * 2 * kThreads + kThreads + t],
                  (2u << 24) | ((bx / 2) << 16) | (by << 8) | rank)
            << "block " << block << " thread " << t;
      }
    }
  }
}

TEST_F(ClusterTest, ClusterRanksRunXFastestInA2x2Cluster) {
  KernelBuilder b("rank_order");
  b.Param("unsigned int*", "out").Grid({4, 4, 1}).Block({32, 1, 1}).Cluster({2, 2, 1});
  b.Stmt("if (threadIdx.x == 0) out[blockIdx.x + 4 * blockIdx.y] = warptrace_cluster_ctarank()"
         " | (warptrace_cluster_dim_x() << 8) | (warptrace_cluster_dim_y() << 16);");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint32_t> out(16, 0xffffffffu);
  ASSERT_THAT(Run(*kernel, out), IsOk());
  for (uint32_t y = 0; y < 4; ++y) {
    for (uint32_t x = 0; x < 4; ++x) {
      EXPECT_EQ(out[x + 4 * y], (x % 2 + 2 * (y % 2)) | (2u << 8) | (2u << 16))
          << "block (" << x << "," << y << ")";
    }
  }
}

// shared::cluster addresses (mapa.shared::cluster) with st/red: every CTA of a 4-CTA cluster
// adds its rank + 1 into rank 0's counter and stores its rank into its right neighbour's
// slot.
TEST_F(ClusterTest, SharedClusterStoresAndReductionsReachThePeer) {
  KernelBuilder b("shared_cluster_red");
  b.Param("unsigned int*", "out").Grid({8, 1, 1}).Block({32, 1, 1}).Cluster({4, 1, 1});
  b.SharedArray("unsigned int", "counter", 1);
  b.SharedArray("unsigned int", "from_left", 1);
  b.Stmt("const unsigned int rank = warptrace_cluster_ctarank();\n"
         "if (threadIdx.x == 0) { counter[0] = 0; from_left[0] = 99; }");
  b.Stmt("warptrace_cluster_sync();");
  b.Stmt("if (threadIdx.x == 0) {\n"
         "  warptrace_red_shared_cluster_add_u32(warptrace_cluster_map_shared(counter, 0), "
         "rank + 1);\n"
         "  warptrace_st_shared_cluster_u32(\n"
         "      warptrace_cluster_map_shared(from_left, (rank + 1) % 4), rank);\n"
         "}");
  b.Stmt("warptrace_cluster_sync();");
  b.Stmt("if (threadIdx.x == 0) {\n"
         "  out[blockIdx.x * 2] = counter[0];\n"
         "  out[blockIdx.x * 2 + 1] = warptrace_ld_shared_cluster_u32(\n"
         "      warptrace_cluster_map_shared(from_left, rank));\n"
         "}");
  b.Stmt("warptrace_cluster_sync();");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint32_t> out(16, 0xffffffffu);
  ASSERT_THAT(Run(*kernel, out), IsOk());
  for (uint32_t block = 0; block < 8; ++block) {
    const uint32_t rank = block % 4;
    EXPECT_EQ(out[block * 2], rank == 0 ? 1u + 2u + 3u + 4u : 0u) << "block " << block;
    EXPECT_EQ(out[block * 2 + 1], (rank + 3) % 4) << "block " << block;
  }
}

// CUTLASS's release of a multicast stage: one thread of every CTA arrives on rank 0's
// mbarrier (mbarrier.arrive.release.cluster.shared::cluster.b64), initialized for as many
// arrivals as the cluster has CTAs and made visible to the cluster with
// fence.mbarrier_init.release.cluster and a cluster barrier; rank 0's threads wait for it.
TEST_F(ClusterTest, RemoteArrivalsCompleteThePeersMbarrierPhase) {
  KernelBuilder b("remote_arrive");
  b.Param("unsigned int*", "out").Grid({4, 1, 1}).Block({64, 1, 1}).Cluster({4, 1, 1});
  b.SharedArray("unsigned long long", "released", 1);
  b.SharedArray("unsigned int", "seen", 1);
  b.Stmt("const unsigned int rank = warptrace_cluster_ctarank();\n"
         "if (threadIdx.x == 0) {\n"
         "  warptrace_mbarrier_init(released, warptrace_cluster_nctarank());\n"
         "  warptrace_fence_mbarrier_init();\n"
         "  seen[0] = 0;\n"
         "}");
  b.Stmt("warptrace_cluster_sync();");
  b.Stmt("if (threadIdx.x == 0) {\n"
         "  warptrace_red_shared_cluster_add_u32(warptrace_cluster_map_shared(seen, 0), 1u);\n"
         "  warptrace_mbarrier_arrive_cluster(released, 0);\n"
         "}\n"
         "if (rank == 0) {\n"
         "  warptrace_mbarrier_wait_parity(released, 0);\n"
         "  out[threadIdx.x] = seen[0];\n"
         "}");
  b.Stmt("warptrace_cluster_sync();");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint32_t> out(64, 0);
  ASSERT_THAT(Run(*kernel, out), IsOk());
  for (uint32_t t = 0; t < 64; ++t) EXPECT_EQ(out[t], 4u) << "thread " << t;
}

// PTX ISA barrier.cluster: a wait waits for "all non-exited threads of the cluster": a CTA
// that exited does not hold the others.
TEST_F(ClusterTest, ClusterBarrierDoesNotWaitForExitedThreads) {
  KernelBuilder b("exited_peer");
  b.Param("unsigned int*", "out").Grid({2, 1, 1}).Block({32, 1, 1}).Cluster({2, 1, 1});
  b.If("warptrace_cluster_ctarank() == 1", [&] { b.Return(ReturnScope::kBlock); },
       Uniform::kBlock);
  b.Stmt("warptrace_cluster_sync();\nout[threadIdx.x] = 7;");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint32_t> out(32, 0);
  ASSERT_THAT(Run(*kernel, out), IsOk());
  EXPECT_THAT(out, ::testing::Each(7u));
}

// The classic cluster bug: CTA 1 reads CTA 0's shared memory after a cluster barrier, and
// nothing keeps CTA 0 alive until it is done (no cluster barrier before exit).
TEST_F(ClusterTest, CtaExitingWhileAPeerMappedItsSharedMemoryFails) {
  KernelBuilder b("exit_early");
  b.Param("unsigned int*", "out").Grid({2, 1, 1}).Block({32, 1, 1}).Cluster({2, 1, 1});
  b.SharedArray("unsigned int", "mine", 32);
  b.Stmt("mine[threadIdx.x] = threadIdx.x;\nwarptrace_cluster_sync();");
  b.Stmt("if (warptrace_cluster_ctarank() == 1) {\n"
         "  out[threadIdx.x] = warptrace_cluster_map(mine, 0)[threadIdx.x];\n"
         "}");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint32_t> out(32, 0);
  EXPECT_THAT(Run(*kernel, out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("CTA rank 0 (block (0,0,0)) exited while CTA rank 1 "
                                       "(block (1,0,0)), which mapped its shared memory"),
                             HasSubstr("End the kernel with a cluster barrier"))));
}

TEST_F(ClusterTest, MapaIntoACtaThatHasExitedFails) {
  KernelBuilder b("map_exited");
  b.Param("unsigned int*", "out").Grid({2, 1, 1}).Block({32, 1, 1}).Cluster({2, 1, 1});
  b.SharedArray("unsigned int", "mine", 32);
  b.Stmt("if (warptrace_cluster_ctarank() == 1) {\n"
         "  out[threadIdx.x] = warptrace_cluster_map(mine, 0)[threadIdx.x];\n"
         "}");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint32_t> out(32, 0);
  EXPECT_THAT(Run(*kernel, out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("block (1,0,0) thread (0,0,0)"),
                             HasSubstr("mapa.u64: thread 0 of CTA rank 1 (block (1,0,0)) maps "
                                       "shared memory of CTA rank 0 (block (0,0,0)), which "
                                       "has exited"))));
}

TEST_F(ClusterTest, MapaRankOutsideTheClusterFails) {
  KernelBuilder b("map_rank");
  b.Param("unsigned int*", "out").Grid({4, 1, 1}).Block({32, 1, 1}).Cluster({2, 1, 1});
  b.SharedArray("unsigned int", "mine", 32);
  b.Stmt("mine[threadIdx.x] = 1;\nwarptrace_cluster_sync();");
  b.Stmt("out[threadIdx.x] = *warptrace_cluster_map(mine, 2);");
  b.Stmt("warptrace_cluster_sync();");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint32_t> out(32, 0);
  EXPECT_THAT(Run(*kernel, out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("maps shared memory into CTA rank 2, outside its cluster of 2 "
                                 "CTAs (2x1x1; ranks 0-1)")));
}

TEST_F(ClusterTest, ClusterWaitWithoutArrivalFails) {
  KernelBuilder b("wait_only");
  b.Param("unsigned int*", "out").Grid({2, 1, 1}).Block({32, 1, 1}).Cluster({2, 1, 1});
  b.Stmt("warptrace_cluster_wait();\nout[threadIdx.x] = 1;");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint32_t> out(32, 0);
  EXPECT_THAT(Run(*kernel, out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("waits on the cluster barrier without having arrived")));
}

// Only one CTA of the cluster reaches the barrier while the other waits on an mbarrier
// nobody arrives on: the cluster, not one block, is deadlocked, and the report names both
// CTAs.
TEST_F(ClusterTest, ClusterDeadlockNamesEveryCta) {
  KernelBuilder b("cluster_deadlock");
  b.Param("unsigned int*", "out").Grid({2, 1, 1}).Block({32, 1, 1}).Cluster({2, 1, 1});
  b.SharedArray("unsigned long long", "never", 1);
  b.Stmt("if (threadIdx.x == 0) warptrace_mbarrier_init(never, 1);\n__syncthreads();");
  b.Stmt("if (warptrace_cluster_ctarank() == 0) {\n"
         "  warptrace_cluster_sync();\n"
         "} else {\n"
         "  warptrace_mbarrier_wait_parity(never, 0);\n"
         "}\n"
         "out[threadIdx.x] = 1;");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint32_t> out(32, 0);
  EXPECT_THAT(Run(*kernel, out),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       AllOf(HasSubstr("deadlock in the cluster of block"),
                             HasSubstr("CTA rank 0 (block (0,0,0)): threads 0-31: wait at "
                                       "barrier.cluster.arrive+wait (cluster barrier phase 0: "
                                       "32 of 64 non-exited threads of the cluster arrived)"),
                             HasSubstr("CTA rank 1 (block (1,0,0)): threads 0-31: wait at "
                                       "mbarrier"))));
}

// A peer's mbarrier is reached only by mbarrier.arrive.release.cluster.shared::cluster: a
// plain arrive through a mapped pointer is the wrong instruction (on a GPU, a shared::cta
// address of the wrong CTA).
TEST_F(ClusterTest, PlainArriveOnAPeersBarrierFails) {
  KernelBuilder b("local_arrive");
  b.Param("unsigned int*", "out").Grid({2, 1, 1}).Block({32, 1, 1}).Cluster({2, 1, 1});
  b.SharedArray("unsigned long long", "bar", 1);
  b.Stmt("if (threadIdx.x == 0) { warptrace_mbarrier_init(bar, 1); "
         "warptrace_fence_mbarrier_init(); }");
  b.Stmt("warptrace_cluster_sync();");
  b.Stmt("if (warptrace_cluster_ctarank() == 1 && threadIdx.x == 0) {\n"
         "  warptrace_mbarrier_arrive(warptrace_cluster_map(bar, 0));\n"
         "}\n"
         "out[threadIdx.x] = 1;");
  b.Stmt("warptrace_cluster_sync();");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint32_t> out(32, 0);
  EXPECT_THAT(Run(*kernel, out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("CTA rank 1 (block (1,0,0)) arrived on mbarrier bar (shared "
                                 "memory offset 0) of CTA rank 0 (block (0,0,0)) through a "
                                 "local (shared::cta) mbarrier operation")));
}

// fence.mbarrier_init.release.cluster and a cluster barrier must come between a barrier's
// init and a peer's first use of it.
TEST_F(ClusterTest, RemoteArrivalBeforeTheInitIsVisibleToTheClusterFails) {
  KernelBuilder b("early_remote");
  b.Param("unsigned int*", "out").Grid({2, 1, 1}).Block({32, 1, 1}).Cluster({2, 1, 1});
  b.SharedArray("unsigned long long", "bar", 1);
  b.Stmt("const unsigned int rank = warptrace_cluster_ctarank();\n"
         "if (rank == 0 && threadIdx.x == 0) warptrace_mbarrier_init(bar, 1);\n"
         "__syncthreads();\n"
         "if (rank == 1 && threadIdx.x == 0) warptrace_mbarrier_arrive_cluster(bar, 0);\n"
         "if (rank == 0) warptrace_mbarrier_wait_parity(bar, 0);\n"
         "out[threadIdx.x] = 1;");
  b.Stmt("warptrace_cluster_sync();");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint32_t> out(32, 0);
  EXPECT_THAT(Run(*kernel, out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("CTA rank 1 (block (1,0,0)) used mbarrier bar (shared memory "
                                 "offset 0) of CTA rank 0 (block (0,0,0)) before its init was "
                                 "made visible to the cluster")));
}

TEST_F(ClusterTest, WaitingOnAPeersBarrierFails) {
  KernelBuilder b("peer_wait");
  b.Param("unsigned int*", "out").Grid({2, 1, 1}).Block({32, 1, 1}).Cluster({2, 1, 1});
  b.SharedArray("unsigned long long", "bar", 1);
  b.Stmt("if (threadIdx.x == 0) { warptrace_mbarrier_init(bar, 1); "
         "warptrace_fence_mbarrier_init(); }");
  b.Stmt("warptrace_cluster_sync();");
  b.Stmt("if (warptrace_cluster_ctarank() == 1) {\n"
         "  warptrace_mbarrier_wait_parity(warptrace_cluster_map(bar, 0), 0);\n"
         "}\n"
         "out[threadIdx.x] = 1;");
  b.Stmt("warptrace_cluster_sync();");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint32_t> out(32, 0);
  EXPECT_THAT(Run(*kernel, out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("CTA rank 1 (block (1,0,0)) waits on mbarrier bar (shared "
                                 "memory offset 0) of CTA rank 0 (block (0,0,0)): a CTA waits "
                                 "only on its own mbarriers")));
}

// The constructs: ClusterSync / ClusterArrive / ClusterWait emit barrier.cluster and record
// a barrier-wait span (SiteKind::kBarrierWait) for the sync and the split wait, none for the
// arrival; the plan is exact and the trace of every CTA holds both spans.
TEST_F(ClusterTest, ClusterBarrierConstructsRecordTheirWaits) {
  KernelBuilder b("cluster_constructs");
  b.Param("unsigned int*", "out").Grid({4, 1, 1}).Block({64, 1, 1}).Cluster({2, 1, 1});
  b.SharedArray("unsigned int", "mine", 64);
  b.Stmt("mine[threadIdx.x] = blockIdx.x * 100u + threadIdx.x;");
  b.ClusterSync("written");
  b.Stmt("const unsigned int v = warptrace_cluster_map(mine, warptrace_cluster_ctarank() ^ 1u)"
         "[threadIdx.x];");
  b.ClusterArrive("read");
  b.Stmt("out[blockIdx.x * 64 + threadIdx.x] = v;");
  b.ClusterWait("read");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  EXPECT_NE(kernel->requirements.FirstUse(TargetFeature::kClusters), nullptr);
  std::vector<uint32_t> out(4 * 64, 0);
  RunOptions options;
  options.check_gpu_compile = true;
  options.profile.unit = UnitSpec::Warp();
  options.profile.policy.barrier_waits = true;  // as for Barrier(): recorded by policy
  absl::StatusOr<RunResult> run =
      RunKernel(device(), *kernel, {KernelArg::Out(absl::MakeSpan(out))}, options);
  ASSERT_THAT(run, IsOk());
  for (uint32_t block = 0; block < 4; ++block) {
    for (uint32_t t = 0; t < 64; ++t) {
      ASSERT_EQ(out[block * 64 + t], (block ^ 1u) * 100u + t) << block << " " << t;
    }
  }
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok());
  // kernel 2 + sync wait 2 + split wait 2, exactly.
  EXPECT_EQ(run->plan->ExactEventsForUnit(0).value_or(0), 6u);
  const TraceLayout& layout = run->trace->layout;
  ASSERT_EQ(run->trace->timeline.units.size(), 8u);  // 4 CTAs x 2 warps
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    std::vector<std::string> waits;
    for (const Slice& slice : unit.slices) {
      if (layout.sites[slice.site].kind == SiteKind::kBarrierWait) {
        waits.push_back(layout.sites[slice.site].name);
      }
    }
    EXPECT_THAT(waits, ::testing::ElementsAre("written", "read"))
        << "block " << unit.block_linear << " unit " << unit.unit_index;
  }
}

TEST_F(ClusterTest, ClusterBarrierWithoutAClusterShapeFailsBuild) {
  KernelBuilder b("no_shape");
  b.Param("unsigned int*", "out").Grid({2, 1, 1}).Block({32, 1, 1});
  b.ClusterSync("sync");
  EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("kernel no_shape > cluster barrier sync: a cluster "
                                            "barrier needs the kernel's cluster shape")));
}

KernelBuilder Shaped(Dim3 grid, Dim3 cluster, ClusterSize size = ClusterSize::kPortable) {
  KernelBuilder b("shaped");
  b.Param("unsigned int*", "out").Grid(grid).Block({32, 1, 1}).Cluster(cluster, size);
  b.Stmt("out[0] = 1;");
  return b;
}

TEST_F(ClusterTest, ClusterShapeIsChecked) {
  EXPECT_THAT(Shaped({6, 1, 1}, {4, 1, 1}).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kernel shaped > cluster 4x1x1: the cluster shape must divide "
                                 "the grid (6,1,1) in every dimension")));
  EXPECT_THAT(Shaped({16, 1, 1}, {0, 1, 1}).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("every dimension of a cluster must be >= 1")));
  EXPECT_THAT(Shaped({16, 1, 1}, {16, 1, 1}).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kernel shaped > cluster 16x1x1: 16 CTAs per cluster exceed 8, "
                                 "the portable cluster size")));
  absl::StatusOr<Kernel> sixteen =
      Shaped({16, 2, 1}, {8, 2, 1}, ClusterSize::kNonPortable).Build();
  ASSERT_THAT(sixteen, IsOk());
  EXPECT_TRUE(sixteen->non_portable_cluster);
  EXPECT_THAT(Shaped({32, 1, 1}, {32, 1, 1}, ClusterSize::kNonPortable).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("32 CTAs per cluster exceed 16, the most any GPU allows")));
  KernelBuilder twice = Shaped({4, 1, 1}, {2, 1, 1});
  twice.Cluster({4, 1, 1});
  EXPECT_THAT(twice.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("Cluster() called a second time")));
}

// Clusters exist from sm_90 on (PTX ISA: barrier.cluster, mapa "Requires sm_90 or higher"):
// resolving a cluster kernel for an older target names the builder path and the target.
TEST_F(ClusterTest, ClusterKernelOnAPreHopperTargetFailsNamingPathAndTarget) {
  absl::StatusOr<Kernel> kernel = Shaped({4, 1, 1}, {2, 1, 1}).Build();
  ASSERT_THAT(kernel, IsOk());
  ASSERT_NE(kernel->requirements.FirstUse(TargetFeature::kClusters), nullptr);
  EXPECT_EQ(*kernel->requirements.FirstUse(TargetFeature::kClusters),
            "kernel shaped > cluster 2x1x1");
  EXPECT_THAT(kernel->requirements.Resolve(CudaTarget(8, 0)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("kernel shaped > cluster 2x1x1"), HasSubstr("sm_80"))));
  EXPECT_THAT(kernel->requirements.Resolve(CudaTarget(9, 0)), IsOk());
}

}  // namespace
}  // namespace warptrace
