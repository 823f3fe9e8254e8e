// The Hopper GEMM (jit/kernels/hopper_gemm.h) with 2-CTA clusters: the shape checks, and
// runs on the host backend (NVRTC compiles each for sm_90a too) whose C matches the exact
// reference, whose trace holds the arrows across the cluster's CTAs, and whose plan is
// exact; with block units, whose loads keep the ends their producer observed (trace version
// 5: no recorder waits on `full`). Inputs are multiples of 1/4 in [-2, 2] and C is f32,
// so every product and sum is exact in fp32: C must equal the reference bit for bit.
#include "jit/kernels/hopper_gemm.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "format/links.h"
#include "format/trace_abi.h"
#include "profiler/analysis/analysis.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/platform/tensor_map.h"
#include "jit/host/host_device.h"
#include "jit/plan/record_plan.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

TEST(HopperGemmClusterShapeTest, RejectsClustersItDoesNotBuild) {
  EXPECT_THAT(HopperGemm({.cluster_m = 2, .cluster_n = 2}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cluster 2x2; use 1x1, 2x1 (B multicast) or 1x2 (A multicast)")));
  EXPECT_THAT(HopperGemm({.pingpong = true, .cluster_m = 2}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cluster 2x1 is built for the cooperative, one-tile-per-block "
                                 "kernel; drop --pingpong and --persistent")));
  EXPECT_THAT(HopperGemm({.m = 384, .cluster_m = 2}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cluster 2x1 pairs the tiles along M, but there are 3 tiles "
                                 "along it (M=384 / 128, N=256 / BN=128); make it even")));
  EXPECT_THAT(HopperGemm({.consumer_delay = 10, .consumer_delay_rank = 1}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("consumer delay in CTA rank 1 of a 1x1 cluster; the rank "
                                 "needs a 2x1 or 1x2 cluster and is 0 or 1")));
}

TEST(HopperGemmClusterShapeTest, BoxesHalveTheMulticastOperand) {
  EXPECT_EQ(HopperGemmBoxRowsA({.bn = 128, .cluster_m = 2}), 128u);
  EXPECT_EQ(HopperGemmBoxRowsB({.bn = 128, .cluster_m = 2}), 64u);
  EXPECT_EQ(HopperGemmBoxRowsA({.bn = 128, .cluster_n = 2}), 64u);
  EXPECT_EQ(HopperGemmBoxRowsB({.bn = 128, .cluster_n = 2}), 128u);
}

uint16_t Bf16(float x) {  // exact for the multiples of 1/4 used here
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return static_cast<uint16_t>(bits >> 16);
}

TensorMapSpec OperandMap(uint32_t rows, uint32_t k, uint32_t box_rows) {
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kBFloat16;
  spec.dims = {k, rows};
  spec.strides_bytes = {uint64_t{k} * 2};
  spec.box = {kHopperGemmBk, box_rows};
  spec.swizzle = TensorMapSwizzle::k128B;
  return spec;
}

// The GEMM's arguments: A and B through their tensor maps (the boxes the shape loads), C.
std::vector<KernelArg> GemmArgs(const HopperGemmShape& shape, const std::vector<uint16_t>& a,
                                const std::vector<uint16_t>& b, std::vector<float>& out) {
  return {KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(a)),
                               OperandMap(shape.m, shape.k, HopperGemmBoxRowsA(shape))),
          KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(b)),
                               OperandMap(shape.n, shape.k, HopperGemmBoxRowsB(shape))),
          KernelArg::Out(absl::MakeSpan(out))};
}

// Inputs that are multiples of 1/4 in [-2, 2]: exact in bf16, and every product and sum of
// the GEMM exact in fp32. `fa` and `fb` are their values, `a` and `b` their bf16 bits.
struct GemmInputs {
  std::vector<uint16_t> a, b;
  std::vector<float> fa, fb;
};

GemmInputs MakeInputs(const HopperGemmShape& shape) {
  GemmInputs in;
  in.a.resize(size_t{shape.m} * shape.k);
  in.b.resize(size_t{shape.n} * shape.k);
  in.fa.resize(in.a.size());
  in.fb.resize(in.b.size());
  for (size_t i = 0; i < in.a.size(); ++i) {
    in.fa[i] = static_cast<float>(static_cast<int>(i * 2654435761u >> 7) % 17 - 8) / 4;
    in.a[i] = Bf16(in.fa[i]);
  }
  for (size_t i = 0; i < in.b.size(); ++i) {
    in.fb[i] = static_cast<float>(static_cast<int>(i * 40503u >> 3) % 13 - 6) / 4;
    in.b[i] = Bf16(in.fb[i]);
  }
  return in;
}

// The entries of C (f32) that differ from the exact reference A x B^T, the first 5 reported.
size_t WrongEntries(const HopperGemmShape& shape, const GemmInputs& in,
                    const std::vector<float>& out) {
  size_t wrong = 0;
  for (uint32_t i = 0; i < shape.m; ++i) {
    for (uint32_t j = 0; j < shape.n; ++j) {
      float ref = 0;
      for (uint32_t kk = 0; kk < shape.k; ++kk) {
        ref += in.fa[size_t{i} * shape.k + kk] * in.fb[size_t{j} * shape.k + kk];
      }
      if (out[size_t{i} * shape.n + j] != ref && ++wrong <= 5) {
        ADD_FAILURE() << "C[" << i << "][" << j << "] = " << out[size_t{i} * shape.n + j]
                      << ", reference " << ref;
      }
    }
  }
  return wrong;
}

struct ClusterCase {
  const char* label;
  uint32_t cluster_m, cluster_n;
};

class HopperGemmClusterRunTest : public testing::HostRunTest,
                                 public ::testing::WithParamInterface<ClusterCase> {};

// M = N = 256 (4 tiles of 128 x 128, 2 clusters), K = 256 on 2 stages: 4 K-blocks, so each
// producer waits on empty[s] for phases 0 and 1 of both stages. Each such phase completes
// after 4 arrivals (2 consumer warpgroups x 2 CTAs), 2 of them remote: 4 waits x 2 remote
// arrivals = 8 arrows into each CTA from its peer, 32 over the grid. And each multicast
// half lands in the peer: an arrow from the copy to each consumer's wait it released there.
TEST_P(HopperGemmClusterRunTest, MatchesTheReferenceAndLinksTheCtas) {
  const ClusterCase& c = GetParam();
  HopperGemmShape shape{.m = 256, .n = 256, .k = 256, .bn = 128, .stages = 2,
                        .out_f32 = true, .cluster_m = c.cluster_m, .cluster_n = c.cluster_n};
  absl::StatusOr<Kernel> kernel = HopperGemm(shape);
  ASSERT_THAT(kernel, IsOk());
  const GemmInputs in = MakeInputs(shape);
  std::vector<float> out(size_t{shape.m} * shape.n, -1.0f);
  const std::vector<KernelArg> args = GemmArgs(shape, in.a, in.b, out);
  RunOptions options;
  options.check_gpu_compile = true;  // NVRTC, sm_90a (wgmma, multicast)
  options.profile.unit = UnitSpec::Warpgroup();
  absl::StatusOr<RunResult> run = RunKernel(device(), *kernel, args, options);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(WrongEntries(shape, in, out), 0u);
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok()) << run->trace->report.findings.size() << " findings";
  const TraceLayout& layout = run->trace->layout;
  EXPECT_EQ(layout.cluster, (Dim3{2, 1, 1}));
  EXPECT_EQ(LinkScopeOf(layout), LinkScope::kCluster);
  std::set<uint64_t> seen;
  uint32_t cross = 0, local = 0, landings = 0;
  const std::vector<UnitTimeline>& units = run->trace->timeline.units;
  for (const UnitTimeline& unit : units) {
    for (const Flow& flow : unit.flows) {
      if (!seen.insert(flow.id).second) continue;
      const UnitTimeline& from = units[flow.from.record_index];
      const UnitTimeline& to = units[flow.to.record_index];
      EXPECT_EQ(from.block_linear / 2, to.block_linear / 2) << "links stay in the cluster";
      switch (flow.kind) {
        case FlowKind::kArrivalToRelease:
          (from.block_linear != to.block_linear ? cross : local) += 1;
          break;
        case FlowKind::kIssueToCompletion:
          EXPECT_EQ(from.block_linear, to.block_linear);
          break;
        case FlowKind::kMulticastLanding:
          // From the producer's copy to a consumer's wait on full[s] in the peer.
          ++landings;
          EXPECT_NE(from.block_linear, to.block_linear);
          EXPECT_EQ(from.unit_index, 0u);
          EXPECT_NE(to.unit_index, 0u);
          EXPECT_TRUE(flow.from.on_async);
          ASSERT_LT(flow.to.released_wait, to.slices.size());
          EXPECT_EQ(layout.sites[to.slices[flow.to.released_wait].site].name, "wait full");
          EXPECT_EQ(BarrierName(layout, flow.barrier).substr(0, 5), "full[");
          break;
      }
    }
  }
  std::printf("cluster %ux%u: %u cross-CTA and %u local arrival -> release arrows, %u "
              "multicast landing arrows\n",
              c.cluster_m, c.cluster_n, cross, local, landings);
  EXPECT_EQ(cross, 32u) << "the consumers' remote releases of the peer's empty[s]";
  // Each CTA's 4 multicast halves land in its peer, where 2 consumer warpgroups wait on
  // that full[s] phase: 4 CTAs x 4 copies x 2 waits.
  EXPECT_EQ(landings, 32u);
}

INSTANTIATE_TEST_SUITE_P(Clusters, HopperGemmClusterRunTest,
                         ::testing::Values(ClusterCase{"b_multicast_2x1", 2, 1},
                                           ClusterCase{"a_multicast_1x2", 1, 2}),
                         [](const ::testing::TestParamInfo<ClusterCase>& info) {
                           return std::string(info.param.label);
                         });

// Block units (trace version 5): the one recorder per block is thread 0, the producer,
// which waits on `empty` but never on `full`, the barrier its TMA loads complete on. No
// recorded wait gives their ends, so the plan keeps an observed end for both load sites:
// every load's span ends at an event of the producer's own record and its flow is recorded,
// not derived; the trace verifies clean and C matches the reference. With and without
// multicast clusters (a multicast half has no recorded landing: no unit records `full`).
class HopperGemmBlockUnitTest : public testing::HostRunTest,
                                public ::testing::WithParamInterface<ClusterCase> {};

TEST_P(HopperGemmBlockUnitTest, ObservesEveryLoadsEndWhereNoRecorderWaitsOnFull) {
  HopperGemmShape shape{.m = 256, .n = 256, .k = 256, .bn = 128, .stages = 2,
                        .out_f32 = true, .cluster_m = GetParam().cluster_m,
                        .cluster_n = GetParam().cluster_n};
  absl::StatusOr<Kernel> kernel = HopperGemm(shape);
  ASSERT_THAT(kernel, IsOk());
  const GemmInputs in = MakeInputs(shape);
  std::vector<float> out(size_t{shape.m} * shape.n, -1.0f);
  RunOptions options;
  options.check_gpu_compile = true;  // NVRTC, sm_90a: the polls' PTX compiles
  options.profile.unit = UnitSpec::Block();
  absl::StatusOr<RunResult> run =
      RunKernel(device(), *kernel, GemmArgs(shape, in.a, in.b, out), options);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(WrongEntries(shape, in, out), 0u);
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok()) << run->trace->report.findings.size() << " findings";
  const TraceLayout& layout = run->trace->layout;
  std::set<std::string> observed;
  for (const SiteInfo& site : layout.sites) {
    if (site.kind != SiteKind::kAsyncCopy || !CompletesOnBarrier(site.copy_engine)) continue;
    EXPECT_FALSE(CopyEndDerived(site, abi::kTraceVersion)) << site.name;
    if (site.end_observed) observed.insert(site.name);
  }
  EXPECT_EQ(observed.size(), 2u) << "the A and the B load";
  // Every block's producer issues an A and a B load per K-block.
  const uint32_t loads = HopperGemmTiles(shape) * (shape.k / kHopperGemmBk) * 2;
  uint32_t spans = 0, recorded = 0, derived = 0, landings = 0;
  std::set<uint64_t> seen;
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    for (const AsyncSpan& span : unit.async_spans) {
      if (!CompletesOnBarrier(layout.sites[span.site].copy_engine)) continue;
      ++spans;
      EXPECT_TRUE(span.completed);
      EXPECT_FALSE(span.end_derived);
      EXPECT_NE(span.end_event, AsyncSpan::kNoEvent);
      EXPECT_LE(span.begin_ns, span.end_ns);
    }
    for (const Flow& flow : unit.flows) {
      if (!seen.insert(flow.id).second) continue;
      landings += flow.kind == FlowKind::kMulticastLanding ? 1 : 0;
      if (flow.kind == FlowKind::kIssueToCompletion) (flow.derived ? derived : recorded) += 1;
    }
  }
  EXPECT_EQ(spans, loads);
  EXPECT_EQ(recorded, loads);
  EXPECT_EQ(derived, 0u);
  EXPECT_EQ(landings, 0u);
}

INSTANTIATE_TEST_SUITE_P(Clusters, HopperGemmBlockUnitTest,
                         ::testing::Values(ClusterCase{"no_cluster", 1, 1},
                                           ClusterCase{"b_multicast_2x1", 2, 1}),
                         [](const ::testing::TestParamInfo<ClusterCase>& info) {
                           return std::string(info.param.label);
                         });

// The critical path across CTAs: CTA rank 1's consumer slowed (busy work per mma) on the
// deterministic host clock, so CTA 0's producer waits on the shared stage (empty[s]) for the
// peer's remote release. One path per cluster walks that remote arrival: it runs in CTA 1's
// consumer, then crosses into CTA 0's producer at the wait it released.
class HopperGemmClusterPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HostDeviceOptions options;
    options.clock = host::ClockMode::kDeterministic;
    absl::StatusOr<std::unique_ptr<HostDevice>> device =
        testing::CreateSandboxedHostDevice(options);
    ASSERT_THAT(device, IsOk());
    device_ = *std::move(device);
  }

  // The analysis of a 2-cluster GEMM (4 tiles), CTA rank `slow_rank`'s consumers slowed
  // (none: -1), with clusters of cluster_m x cluster_n (1x1: no cluster).
  CriticalPathAnalysis Path(uint32_t cluster_m, uint32_t cluster_n, int32_t slow_rank) {
    HopperGemmShape shape{.m = 256, .n = 256, .k = 256, .bn = 128, .stages = 2,
                          .out_f32 = true, .cluster_m = cluster_m, .cluster_n = cluster_n};
    shape.consumer_delay = 20000;
    shape.consumer_delay_rank = slow_rank;
    absl::StatusOr<Kernel> kernel = HopperGemm(shape);
    EXPECT_THAT(kernel, IsOk());
    if (!kernel.ok()) return {};
    std::vector<uint16_t> a(size_t{shape.m} * shape.k, 0), b(size_t{shape.n} * shape.k, 0);
    std::vector<float> out(size_t{shape.m} * shape.n, -1.0f);
    const std::vector<KernelArg> args = GemmArgs(shape, a, b, out);
    RunOptions options;
    options.check_gpu_compile = false;  // the run above compiles the cluster GEMM with NVRTC
    options.profile.unit = UnitSpec::Warpgroup();
    options.dump.analysis = true;
    absl::StatusOr<RunResult> run = RunKernel(*device_, *kernel, args, options);
    EXPECT_THAT(run, IsOk());
    if (!run.ok() || !run->dump.analysis.has_value()) {
      ADD_FAILURE() << "no analysis";
      return {};
    }
    return run->dump.analysis->critical_path;
  }

  std::unique_ptr<HostDevice> device_;
};

std::vector<std::string> Describe(const CriticalPathAnalysis& c) {
  std::vector<std::string> out;
  for (const PathRegion& r : c.regions) {
    out.push_back(absl::StrCat("region CTA ", r.cta_rank, " ", r.role, " ", r.name, " ",
                               r.path_ns, " ns in ", r.blocks));
  }
  for (const PathStepRef& s : c.slowest_block_path) {
    out.push_back(absl::StrCat("step CTA ", s.cta_rank, " ", s.role, " ", s.name, " ", s.ns));
  }
  for (const PathCrossing& x : c.slowest_block_crossings) {
    out.push_back(absl::StrCat("crossing CTA ", x.from_rank, " ", x.from_role, " -> CTA ",
                               x.to_rank, " ", x.to_role, " ", x.wait, " at ", x.at_ns));
  }
  return out;
}

TEST_F(HopperGemmClusterPathTest, TheSlowPeersPathCrossesCtasTheSameOnEveryRun) {
  const CriticalPathAnalysis c = Path(2, 1, /*slow_rank=*/1);
  EXPECT_TRUE(c.cluster_scope);
  EXPECT_EQ(c.blocks, 2u) << "one path per cluster";
  EXPECT_FALSE(c.per_unit_only);
  std::printf("cluster 2x1, CTA 1's consumer slowed: %llu cross-CTA edges on the clusters' "
              "paths (%llu hand-offs)\n",
              static_cast<unsigned long long>(c.cross_cta_handoffs),
              static_cast<unsigned long long>(c.handoffs));
  for (const std::string& line : Describe(c)) std::printf("  %s\n", line.c_str());
  // Per cluster: the first stage's release by CTA 0's consumer into CTA 1's producer (the
  // kernel's start), then the slowed consumer's release of CTA 0's stage that held CTA 0's
  // producer: 2 crossings a cluster, each a consumer's remote arrival on a peer's empty[s].
  EXPECT_EQ(c.cross_cta_handoffs, 4u);
  ASSERT_EQ(c.slowest_block_crossings.size(), 2u);
  for (const PathCrossing& x : c.slowest_block_crossings) {
    EXPECT_EQ(x.from_role, "consumer");
    EXPECT_EQ(x.to_role, "producer");
    EXPECT_NE(x.from_rank, x.to_rank);
    EXPECT_EQ(x.wait, "wait empty");
  }
  const PathCrossing& held = c.slowest_block_crossings.back();
  EXPECT_EQ(held.from_rank, 1u) << "the slowed CTA's consumer";
  EXPECT_EQ(held.to_rank, 0u);
  EXPECT_GT(held.at_ns, c.slowest_block.ns / 3) << "after the slowed mma";
  std::set<uint32_t> ranks;
  for (const PathStepRef& s : c.slowest_block_path) ranks.insert(s.cta_rank);
  EXPECT_EQ(ranks, (std::set<uint32_t>{0, 1})) << "the path runs in both CTAs";
  // The slowed work itself is on every cluster's path.
  bool slow_mma = false;
  for (const PathRegion& r : c.regions) {
    slow_mma |= r.cta_rank == 1 && r.role == "consumer" && r.name == "mma" && r.blocks == 2;
  }
  EXPECT_TRUE(slow_mma);
  // Deterministic: the same path, to the ns, on a second run.
  EXPECT_EQ(Describe(Path(2, 1, 1)), Describe(c));
}

TEST_F(HopperGemmClusterPathTest, WithoutAClusterEachBlockKeepsItsOwnPath) {
  const CriticalPathAnalysis c = Path(1, 1, /*slow_rank=*/-1);
  EXPECT_FALSE(c.cluster_scope);
  EXPECT_EQ(c.blocks, 4u);
  EXPECT_EQ(c.cross_cta_handoffs, 0u);
  EXPECT_TRUE(c.slowest_block_crossings.empty());
  for (const PathRegion& r : c.regions) EXPECT_EQ(r.cta_rank, 0u);
  for (const PathStepRef& s : c.slowest_block_path) EXPECT_EQ(s.cta_rank, 0u);
}

}  // namespace
}  // namespace warptrace
