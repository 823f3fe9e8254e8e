// TMA multicast (AsyncCopySpec::multicast_mask) end to end on the host backend: in each
// 2-CTA cluster, CTA rank r loads rows [16 r, 16 r + 16) of the cluster's 32-row tile and
// multicasts them to both CTAs (PTX ISA cp.async.bulk.tensor ".multicast::cluster": the box
// lands at the same shared-memory offset of every CTA in ctaMask, and each destination's
// mbarrier at the same offset gets its bytes), so each CTA holds the whole tile after one
// wait; each stores it back (128B swizzle in and out: the matrix round-trips exactly). The
// kernel needs sm_90a (the NVRTC check compiles it so) and no cluster barrier before exit: a
// multicast delivery completes before its destination's wait returns.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "format/layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/platform/tensor_map.h"
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

constexpr uint32_t kCols = 64, kRows = 64, kTileRows = 32, kSliceRows = 16;

KernelBuilder MulticastKernel(const std::string& mask) {
  KernelBuilder b("tma_multicast");
  b.Param("CUtensorMap", "tm_in").Param("CUtensorMap", "tm_out0").Param("CUtensorMap",
                                                                        "tm_out1");
  b.Grid({2 * kRows / kTileRows, 1, 1}).Block({128, 1, 1}).Cluster({2, 1, 1});
  b.PhaseBarriers("full", 1, 1);
  b.Stmt("__shared__ __align__(1024) unsigned char tile[4096];");
  // Every CTA's barrier is initialized before a peer's copy completes bytes on it.
  b.ClusterSync("barriers ready");
  AsyncCopySpec load;
  load.name = "load slice";
  load.tensor_map = "tm_in";
  load.dst = "tile + warptrace_cluster_ctarank() * 2048";
  load.coords = {"0", "warptrace_cluster_id_x() * 32 + warptrace_cluster_ctarank() * 16"};
  load.box = {kCols, kSliceRows};
  load.element_bytes = 2;
  load.barrier = "full";
  load.barrier_index = "0";
  load.barrier_phase = "0";
  load.multicast_mask = mask;
  b.AsyncCopy(load);
  b.Arrive("full", 0, 0, ArriveBy::kOneThread);
  b.WaitPhase("full", 0, 0);
  AsyncCopySpec store;
  store.src = "tile";
  store.coords = {"0", "warptrace_cluster_id_x() * 32"};
  b.If("warptrace_cluster_ctarank() == 0",
       [&] {
         store.name = "store rank 0";
         store.tensor_map = "tm_out0";
         b.TmaStore(store);
       },
       [&] {
         store.name = "store rank 1";
         store.tensor_map = "tm_out1";
         b.TmaStore(store);
       },
       Uniform::kBlock);
  b.WaitTmaStores(0);
  return b;
}

TensorMapSpec Map(uint32_t box_rows) {
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kBFloat16;
  spec.dims = {kCols, kRows};
  spec.strides_bytes = {kCols * 2};
  spec.box = {kCols, box_rows};
  spec.swizzle = TensorMapSwizzle::k128B;
  return spec;
}

class ClusterMulticastTest : public testing::HostRunTest {};

TEST_F(ClusterMulticastTest, EveryCtaOfTheMaskReceivesTheSliceAndItsBytes) {
  absl::StatusOr<Kernel> kernel = MulticastKernel("0x3").Build();
  ASSERT_THAT(kernel, IsOk());
  const std::string* multicast = kernel->requirements.FirstUse(TargetFeature::kMulticast);
  ASSERT_NE(multicast, nullptr);
  EXPECT_EQ(*multicast, "kernel tma_multicast > copy load slice");
  absl::StatusOr<CudaTarget> target = kernel->requirements.Resolve(CudaTarget::Default());
  ASSERT_THAT(target, IsOk());
  EXPECT_EQ(target->ToString(), "sm_90a");
  std::vector<uint16_t> in(kCols * kRows), out0(kCols * kRows, 0), out1(kCols * kRows, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(i * 2654435761u >> 9);
  const std::vector<KernelArg> args = {
      KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(in)), Map(kSliceRows)),
      KernelArg::TensorMap(KernelArg::Out(absl::MakeSpan(out0)), Map(kTileRows)),
      KernelArg::TensorMap(KernelArg::Out(absl::MakeSpan(out1)), Map(kTileRows))};
  RunOptions options;
  options.check_gpu_compile = true;  // NVRTC, for sm_90a (the multicast's target)
  options.profile.unit = UnitSpec::Warpgroup();
  absl::StatusOr<RunResult> run = RunKernel(device(), *kernel, args, options);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(out0, in) << "rank 0 of each cluster holds the whole tile";
  EXPECT_EQ(out1, in) << "rank 1 of each cluster holds the whole tile";
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok()) << run->trace->report.findings.size();
  EXPECT_EQ(run->trace->layout.cluster, (Dim3{2, 1, 1}));
  // kernel 2 + load 2 + arrival 2 + wait 3 + store 2: exactly, per CTA (trace version 4:
  // the wait's enter and the store group's events carry no payload; version 5: the load
  // records its begin alone).
  EXPECT_EQ(run->plan->ExactEventsForUnit(0).value_or(0), 11u);
  ASSERT_EQ(run->trace->timeline.units.size(), 4u);
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    ASSERT_EQ(unit.async_spans.size(), 2u);  // the multicast load and the store
    EXPECT_TRUE(unit.async_spans[0].completed);
  }
}

TEST_F(ClusterMulticastTest, MaskNamingACtaOutsideTheClusterFails) {
  absl::StatusOr<Kernel> kernel = MulticastKernel("0x5").Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint16_t> in(kCols * kRows, 1), out0(kCols * kRows), out1(kCols * kRows);
  const std::vector<KernelArg> args = {
      KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(in)), Map(kSliceRows)),
      KernelArg::TensorMap(KernelArg::Out(absl::MakeSpan(out0)), Map(kTileRows)),
      KernelArg::TensorMap(KernelArg::Out(absl::MakeSpan(out1)), Map(kTileRows))};
  EXPECT_THAT(RunKernel(device(), *kernel, args, RunOptions{}).status(),
              StatusIs(absl::StatusCode::kAborted,
                       HasSubstr("multicast::cluster: ctaMask 0x0005 names CTAs outside of CTA "
                                 "rank 0's cluster of 2 CTAs (ranks 0-1)")));
}

// An expect-tx that counts only the CTA's own box, in a 2-CTA multicast where each CTA
// receives both boxes: a phase may complete before the peer's box lands (a race on a GPU),
// and a barrier is left with more bytes completed than it expected once all its arrivals
// are in, so its phase never completes. The host backend fails at that moment (not at the
// later deadlock), naming the barrier's CTA rank, the multicasting ranks and the copy.
TEST_F(ClusterMulticastTest, ExpectTxNotCountingEveryMulticastSliceFails) {
  KernelBuilder b("short_expect");
  b.Param("CUtensorMap", "tm_in").Param("unsigned int*", "out");
  b.Grid({2, 1, 1}).Block({32, 1, 1}).Cluster({2, 1, 1});
  b.SharedArray("unsigned long long", "bar", 1);
  b.Stmt("__shared__ __align__(1024) unsigned char tile[4096];\n"
         "const unsigned int rank = warptrace_cluster_ctarank();\n"
         "if (threadIdx.x == 0) { warptrace_mbarrier_init(bar, 1); "
         "warptrace_fence_mbarrier_init(); }");
  b.Stmt("warptrace_cluster_sync();");
  b.Stmt("if (threadIdx.x == 0) {\n"
         "  warptrace_mbarrier_expect_tx(bar, 2048);  // its own box only: 1 of the 2 it gets\n"
         "  warptrace_tma_load_2d_multicast(tile + rank * 2048, &tm_in, 0, rank * 16, bar, "
         "0x3);\n"
         "  warptrace_mbarrier_arrive(bar);\n"
         "}\n"
         "warptrace_mbarrier_wait_parity(bar, 0);\n"
         "out[rank * 32 + threadIdx.x] = tile[threadIdx.x];");
  b.Stmt("warptrace_cluster_sync();");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint16_t> in(kCols * kRows, 1);
  std::vector<uint32_t> out(64, 0);
  const std::vector<KernelArg> args = {
      KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(in)), Map(kSliceRows)),
      KernelArg::Out(absl::MakeSpan(out))};
  const absl::Status status = RunKernel(device(), *kernel, args, RunOptions{}).status();
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("kernel short_expect > statement"),
                             HasSubstr(": multicast expect-tx: the mbarrier at shared memory "
                                       "offset 0 of CTA rank "),
                             HasSubstr("has all 1 arrivals of its phase "),
                             HasSubstr("but its copies completed 2048 bytes more than its "
                                       "expect_tx counted, so the phase can never complete. "
                                       "Multicast copies from CTA rank(s) "),
                             HasSubstr("(ctaMask 0x0003, 2048 bytes to each CTA of the mask)"),
                             HasSubstr("so its expect_tx must count them all"))));
  std::printf("%s\n", std::string(status.message()).c_str());
}

TEST_F(ClusterMulticastTest, BuildRejectsMulticastWithoutTmaOrCluster) {
  KernelBuilder b("no_cluster");
  b.Param("CUtensorMap", "tm_in").Grid({2, 1, 1}).Block({128, 1, 1});
  b.PhaseBarriers("full", 1, 1);
  b.Stmt("__shared__ __align__(1024) unsigned char tile[2048];");
  AsyncCopySpec load;
  load.name = "load";
  load.tensor_map = "tm_in";
  load.dst = "tile";
  load.coords = {"0", "0"};
  load.box = {kCols, kSliceRows};
  load.barrier = "full";
  load.barrier_phase = "0";
  load.multicast_mask = "0x3";
  b.AsyncCopy(load);
  b.Arrive("full", 0, 0, ArriveBy::kOneThread);
  b.WaitPhase("full", 0, 0);
  EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("kernel no_cluster > copy load: async copy 'load' "
                                            "multicasts to a CTA mask but the kernel has no "
                                            "cluster shape")));
}

}  // namespace
}  // namespace warptrace
