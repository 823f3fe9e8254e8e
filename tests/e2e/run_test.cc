// Whole pipelines: builder -> plan -> emit -> compile -> launch -> copy back -> decode ->
// verify -> timeline, on one device per test binary. The same suite is built twice
// (tests/e2e/BUILD): on the host backend everywhere, and on a CUDA GPU (tagged gpu, skipping
// with a message where there is no driver).
//
// The central property: the events every trace unit records equal what the plan predicts
// for that unit — per unit, not in total — and, for random builder trees, what an
// independent simulation of the tree on the unit's recorder thread predicts.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/clock.h"
#include "base/testing/temp_path.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/cuda/cuda_device.h"
#include "jit/kernels/reduction.h"
#include "jit/kernels/tiled_gemm.h"
#include "jit/kernels/warp_specialized_pipeline.h"
#include "jit/plan/record_plan.h"
#include "jit/run/device_select.h"
#include "jit/run/run.h"
#include "profiler/dump/collector.h"
#include "profiler/imports/sidecar.h"
#include "profiler/trace/links.h"
#include "tests/jit/cuda/cuda_driver_presence.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/status_matchers.h"


namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Field;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

using ::warptrace::testing::E2eTest;

std::vector<float> Iota(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7919) % 23) * scale - 0.5f;
  return v;
}

TEST_F(E2eTest, GemmMatchesReferenceWithProfilingOnAndOff) {
  const TiledGemmShape shape{.m = 32, .n = 32, .k = 64, .tile = 16};
  absl::StatusOr<Kernel> gemm = TiledGemm(shape);
  ASSERT_THAT(gemm.status(), IsOk());
  const std::vector<float> a = Iota(shape.m * shape.k, 0.25f);
  const std::vector<float> b = Iota(shape.k * shape.n, 0.5f);
  const std::vector<float> reference = ReferenceGemm(a, b, shape);
  for (bool profile : {false, true}) {
    std::vector<float> c(shape.m * shape.n, -1.0f);
    std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(a)),
                                   KernelArg::In(absl::MakeConstSpan(b)),
                                   KernelArg::Out(absl::MakeSpan(c))};
    RunOptions options;
    options.profile.enabled = profile;
    if (profile) {
      RunAndCheckExact(*gemm, args, options);
    } else {
      absl::StatusOr<RunResult> run = RunKernel(*device_, *gemm, args, options);
      ASSERT_THAT(run.status(), IsOk());
      EXPECT_EQ(run->trace, nullptr);
      EXPECT_THAT(run->source.source, ::testing::Not(HasSubstr("warptrace_trace")));
    }
    for (size_t i = 0; i < c.size(); ++i) {
      ASSERT_NEAR(c[i], reference[i], 1e-3f * (1.0f + std::abs(reference[i])))
          << "C[" << i << "] with profiling " << (profile ? "on" : "off");
    }
  }
}

// The host clocks of the launch sit next to the trace's globaltimer: the anchor lies within
// the launch (host backend: its globaltimer is CLOCK_MONOTONIC, read with the others).
TEST_F(E2eTest, TraceCarriesTheHostTimeAnchorOfItsLaunch) {
  const TiledGemmShape shape{.m = 32, .n = 32, .k = 64, .tile = 16};
  absl::StatusOr<Kernel> gemm = TiledGemm(shape);
  ASSERT_THAT(gemm.status(), IsOk());
  const std::vector<float> a = Iota(shape.m * shape.k, 0.25f);
  const std::vector<float> b = Iota(shape.k * shape.n, 0.5f);
  std::vector<float> c(shape.m * shape.n);
  std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(a)),
                                 KernelArg::In(absl::MakeConstSpan(b)),
                                 KernelArg::Out(absl::MakeSpan(c))};
  const int64_t boot_before = ReadClockNs(CLOCK_BOOTTIME);
  const int64_t real_before = ReadClockNs(CLOCK_REALTIME);
  RunResult run = RunAndCheckExact(*gemm, args, RunOptions{});
  const int64_t boot_after = ReadClockNs(CLOCK_BOOTTIME);
  ASSERT_NE(run.trace, nullptr);
  const HostTimeAnchor& anchor = run.trace->layout.host_anchor;
  ASSERT_TRUE(anchor.known);
  EXPECT_EQ(run.trace->timeline.layout.host_anchor, anchor);
  EXPECT_GE(anchor.boottime_ns, boot_before);
  EXPECT_LE(anchor.boottime_ns, boot_after);
  EXPECT_GE(anchor.realtime_ns, real_before);
  EXPECT_GE(anchor.uncertainty_ns, 0);
  // The kernel ran after the anchor and within the launch on the globaltimer axis.
  EXPECT_LE(anchor.globaltimer_ns - anchor.uncertainty_ns, run.trace->timeline.origin_ns);
  EXPECT_LE(run.trace->timeline.origin_ns - anchor.globaltimer_ns, boot_after - boot_before);
  if (run.device_kind == DeviceKind::kHost) {
    // The host's anchor is its clocks read back to back during the run: their spread lies
    // within the window the test measured around it (a bound from the run, not a wall time).
    EXPECT_LE(2 * anchor.uncertainty_ns, boot_after - boot_before + 1)
        << "clocks read back to back";
  }
}

TEST_F(E2eTest, ReductionMatchesReferenceWithProfilingOnAndOff) {
  const ReductionShape shape{.n = 5000, .blocks = 4, .threads = 128};
  absl::StatusOr<Kernel> sum = Reduction(shape);
  ASSERT_THAT(sum.status(), IsOk());
  const std::vector<float> x = Iota(shape.n, 0.125f);
  const double reference = ReferenceSum(x);
  for (bool profile : {false, true}) {
    std::vector<float> out(1, 0.0f);
    std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(x)),
                                   KernelArg::Out(absl::MakeSpan(out))};
    RunOptions options;
    options.profile.enabled = profile;
    options.profile.policy.barrier_waits = true;
    if (profile) {
      RunAndCheckExact(*sum, args, options);
    } else {
      ASSERT_THAT(RunKernel(*device_, *sum, args, options).status(), IsOk());
    }
    EXPECT_NEAR(out[0], reference, 1e-3 * std::abs(reference) + 1e-3)
        << "profiling " << (profile ? "on" : "off");
  }
}

TEST_F(E2eTest, PipelineRolesRecordExactlyThePlanPerUnitInEveryUnitKindAndPlacement) {
  const PipelineShape shape{.m = 8, .n = 32, .k = 128, .stages = 3, .consumers = 2};
  absl::StatusOr<Kernel> pipeline = WarpSpecializedPipeline(shape);
  ASSERT_THAT(pipeline.status(), IsOk());
  const std::vector<float> a = Iota(shape.m * shape.k, 0.25f);
  const std::vector<float> b = Iota(shape.k * shape.n, 0.5f);
  const std::vector<float> reference =
      ReferenceGemm(a, b, TiledGemmShape{.m = shape.m, .n = shape.n, .k = shape.k});
  for (UnitSpec unit : {UnitSpec::Warp(), UnitSpec::Warpgroup(), UnitSpec::Block()}) {
    for (Placement placement : {Placement::kGlobal, Placement::kShared}) {
      SCOPED_TRACE(absl::StrCat(UnitKindName(unit.kind), " ", PlacementName(placement)));
      std::vector<float> c(shape.m * shape.n, 0.0f);
      std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(a)),
                                     KernelArg::In(absl::MakeConstSpan(b)),
                                     KernelArg::Out(absl::MakeSpan(c))};
      RunOptions options;
      options.profile.unit = unit;
      options.profile.placement = placement;
      RunResult run = RunAndCheckExact(*pipeline, args, options);
      if (run.plan && unit.kind == UnitKind::kWarpgroup) {
        // Producer warpgroup: kernel + per K-tile a wait on empty (an enter, an exit with
        // its payload: 3 slots), a load region, two cp.async copies (begin and end, numbered
        // by order: no payloads, trace version 4) and an arrival on full (1 event with
        // payload). Consumers: kernel, the first arrival on each empty[s], per K-tile a wait
        // on full, an mma and an arrival on empty, a store.
        const uint64_t kt = shape.k / 32;
        EXPECT_THAT(run.plan->ExactEventsForUnit(0),
                    testing::IsOkAndHolds(2 + kt * (3 + 2 + 2 + 2 + 2)));
        EXPECT_THAT(run.plan->ExactEventsForUnit(1),
                    testing::IsOkAndHolds(2 + 2 * shape.stages + kt * (3 + 2 + 2) + 2));
      }
      for (size_t i = 0; i < c.size(); ++i) {
        ASSERT_NEAR(c[i], reference[i], 1e-3f * (1.0f + std::abs(reference[i]))) << i;
      }
    }
  }
}

// Events of a block compare by their SM clock (one SM runs the block).
int64_t BlockClock(const DecodedTrace& decoded, const EventRef& e) {
  return int64_t{decoded.records[e.record].events[e.slot].clock};
}

// The real pipeline (full/empty phase barriers, producer ahead), plain and persistent, with
// cp.async and bulk copies and several ring depths: every unit records exactly the plan's
// count for its block (persistent blocks take different numbers of tiles), and the trace's
// own payloads show each wait released after every arrival of the phase it waited for, each
// phase completed by exactly the arrivals its count needs, and every copy's issue paired
// with its completion.
TEST_F(E2eTest, WarpSpecializedPipelineReleasesEveryWaitAfterTheArrivalsOfItsPhase) {
  struct Case {
    CopyKind copy;
    uint32_t stages;
    uint32_t persistent_blocks;
    UnitSpec unit;
  };
  const Case cases[] = {
      {CopyKind::kCpAsync, 2, 0, UnitSpec::Warpgroup()},
      {CopyKind::kBulk, 3, 0, UnitSpec::Warp()},
      {CopyKind::kCpAsync, 4, 3, UnitSpec::Warp()},
      {CopyKind::kBulk, 2, 3, UnitSpec::Warpgroup()},
  };
  // Bulk copies need sm_90; the GPU suite's device may be older.
  const auto* cuda = dynamic_cast<const CudaDevice*>(device_);
  const bool bulk_ok = cuda == nullptr || cuda->target().Has(TargetFeature::kBulkCopy);
  for (const Case& c : cases) {
    if (c.copy == CopyKind::kBulk && !bulk_ok) {
      std::cout << "not run: a bulk-copy case (the GPU is " << cuda->target().ToString() << ")\n";
      continue;
    }
    PipelineShape shape{.m = 16, .n = 64, .k = 128, .stages = c.stages, .consumers = 2};
    shape.copy = c.copy;
    shape.persistent_blocks = c.persistent_blocks;
    SCOPED_TRACE(absl::StrCat(c.copy == CopyKind::kBulk ? "bulk" : "cp.async", ", ", c.stages,
                              " stages, ", c.persistent_blocks, " persistent blocks, ",
                              UnitKindName(c.unit.kind), " units"));
    absl::StatusOr<Kernel> pipeline = WarpSpecializedPipeline(shape);
    ASSERT_THAT(pipeline.status(), IsOk());
    const std::vector<float> a = Iota(shape.m * shape.k, 0.25f);
    const std::vector<float> b = Iota(shape.k * shape.n, 0.5f);
    const std::vector<float> reference =
        ReferenceGemm(a, b, TiledGemmShape{.m = shape.m, .n = shape.n, .k = shape.k});
    std::vector<float> out(shape.m * shape.n, 0.0f);
    std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(a)),
                                   KernelArg::In(absl::MakeConstSpan(b)),
                                   KernelArg::Out(absl::MakeSpan(out))};
    RunOptions options;
    options.profile.unit = c.unit;
    RunResult run = RunAndCheckExact(*pipeline, args, options);
    ASSERT_NE(run.trace, nullptr);
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_NEAR(out[i], reference[i], 1e-3f * (1.0f + std::abs(reference[i]))) << i;
    }
    const uint32_t unit_threads = c.unit.kind == UnitKind::kWarp ? 32 : 128;
    const uint32_t producer_units = 128 / unit_threads;
    const uint32_t consumer_units = shape.consumers * 128 / unit_threads;
    const uint64_t kt = shape.k / 32;
    const uint32_t tiles = PipelineTiles(shape);
    // Per-block tile counts: the grid-stride share of a persistent block, else 1.
    const uint32_t blocks = c.persistent_blocks > 0 ? c.persistent_blocks : tiles;
    for (uint32_t block = 0; block < blocks; ++block) {
      const uint64_t t = c.persistent_blocks > 0 ? (tiles - 1 - block) / blocks + 1 : 1;
      // A consumer unit's count by hand (the plan's by RunAndCheckExact).
      EXPECT_THAT(run.plan->ExactEventsForBlockUnit(block, producer_units),
                  testing::IsOkAndHolds(2 + 2 * shape.stages + t * (kt * (3 + 2 + 2) + 2)))
          << "block " << block;
    }

    const Trace& trace = *run.trace;
    const Links links = FindLinks(trace.decoded, trace.layout, {}, [&](const EventRef& e) {
      return BlockClock(trace.decoded, e);
    });
    // Arrivals recorded per phase: full[s] (ids 0..S-1) by every producer unit with
    // cp.async (each of its 128 threads arrives) or the first one with bulk copies; empty[s]
    // (ids S..2S-1) by every consumer unit.
    const uint32_t full_arrivals = c.copy == CopyKind::kBulk ? 1 : producer_units;
    // The layout's barrier table (from the plan) says the same.
    ASSERT_EQ(trace.layout.barriers.size(), 2 * shape.stages);
    for (uint32_t s = 0; s < shape.stages; ++s) {
      EXPECT_EQ(trace.layout.barriers[s].name, absl::StrCat("full[", s, "]"));
      EXPECT_EQ(trace.layout.barriers[s].arrivals_per_phase, full_arrivals);
      EXPECT_EQ(trace.layout.barriers[shape.stages + s].name, absl::StrCat("empty[", s, "]"));
      EXPECT_EQ(trace.layout.barriers[shape.stages + s].arrivals_per_phase, consumer_units);
    }
    uint64_t releases = 0;
    for (const PhaseRecord& phase : links.phases) {
      if (phase.releases.empty()) continue;  // the consumers' last releases: nobody waits
      const bool full = phase.barrier < shape.stages;
      EXPECT_EQ(phase.arrivals.size(), full ? full_arrivals : consumer_units)
          << "block " << phase.block_linear << " barrier " << phase.barrier << " phase "
          << phase.phase;
      EXPECT_EQ(phase.releases.size(), full ? consumer_units : producer_units);
      for (const EventRef& release : phase.releases) {
        ++releases;
        for (const EventRef& arrival : phase.arrivals) {
          EXPECT_GE(BlockClock(trace.decoded, release), BlockClock(trace.decoded, arrival))
              << "block " << phase.block_linear << " barrier " << phase.barrier << " phase "
              << phase.phase;
        }
      }
    }
    // Every wait of every unit was released on a phase whose arrivals are in the trace: each
    // K-tile of each tile has one wait per consumer unit (full) and per producer unit (empty).
    EXPECT_EQ(releases, uint64_t{tiles} * kt * (consumer_units + producer_units));
    EXPECT_TRUE(links.unpaired.empty()) << links.unpaired.size() << " unpaired copies";
    uint64_t copies = 0;
    for (const Link& link : links.links) copies += link.kind == LinkKind::kIssueToCompletion;
    const uint64_t issuing_units = c.copy == CopyKind::kBulk ? 1 : producer_units;
    EXPECT_EQ(copies, uint64_t{tiles} * kt * 2 * issuing_units);
  }
}

// A multi-stage cp.async loop: copy k is issued, then WaitAsyncCopies(1) leaves it in flight
// and completes copy k - 1, which is then read. Each copy's end is recorded at the wait that
// completed it (after the next copy's issue), exactly the plan's count, and the data is right.
TEST_F(E2eTest, CpAsyncWaitWithCopiesInFlightEndsEachCopyAtTheWaitThatCompletesIt) {
  KernelBuilder b("cp_async_ring");
  b.Param("const int*", "src").Param("int*", "out").Grid({2, 1, 1}).Block({64, 1, 1});
  b.DynamicShared("int", "buf", 4 * 4 * 4);
  b.Stmt("int acc = 0;");
  b.For("k", 0, 4, TripCount::Exact(4), [&] {
    AsyncCopySpec copy;
    copy.name = "stage";
    copy.dst = "buf + k * 4";
    copy.src = "src + blockIdx.x * 16 + k * 4";
    b.AsyncCopy(copy);
    b.WaitAsyncCopies(1);
    b.If("k > 0", [&] { b.Stmt("acc += buf[(k - 1) * 4 + threadIdx.x % 4];"); });
  });
  b.WaitAsyncCopies(0);
  b.Stmt("acc += buf[3 * 4 + threadIdx.x % 4];\nout[blockIdx.x * 64 + threadIdx.x] = acc;");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel.status(), IsOk());
  std::vector<int> src(32);
  for (int i = 0; i < 32; ++i) src[i] = 10 * i + 1;
  std::vector<int> out(128, -1);
  std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(src)),
                                 KernelArg::InOut(absl::MakeSpan(out))};
  RunOptions options;
  options.profile.unit = UnitSpec::Warp();
  RunResult run = RunAndCheckExact(*kernel, args, options);
  ASSERT_NE(run.trace, nullptr);
  // Trace version 5, the copy's ends derived at the waits (SiteInfo::ends_at_waits): kernel
  // 2 + 4 x (begin 1 + the wait after it with its payload 2) + the last wait(0) 2 + the
  // exit's wait(0) 2.
  for (const SiteInfo& site : run.trace->layout.sites) {
    if (site.name == "stage") {
      EXPECT_TRUE(site.ends_at_waits);
    }
  }
  EXPECT_THAT(run.plan->ExactEventsForUnit(0), testing::IsOkAndHolds(2u + 4 * 3 + 2 + 2));
  for (int t = 0; t < 128; ++t) {
    int expected = 0;
    for (int k = 0; k < 4; ++k) expected += src[(t / 64) * 16 + k * 4 + t % 4];
    ASSERT_EQ(out[t], expected) << t;
  }
  const Trace& trace = *run.trace;
  const Links links = FindLinks(trace.decoded, trace.layout, {}, [&](const EventRef& e) {
    return BlockClock(trace.decoded, e);
  });
  EXPECT_TRUE(links.unpaired.empty());
  // Per unit: the end of copy i comes after the begin of copy i + 1 (it stayed in flight).
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> begin_slot;  // (record, issue) -> slot
  for (const Link& link : links.links) begin_slot[{link.from.record, link.issue}] = link.from.slot;
  int checked = 0;
  for (const Link& link : links.links) {
    ASSERT_EQ(link.kind, LinkKind::kIssueToCompletion);
    const auto next = begin_slot.find({link.from.record, link.issue + 1});
    if (next == begin_slot.end()) continue;
    EXPECT_GT(link.to.slot, next->second) << "record " << link.from.record << " issue "
                                          << link.issue;
    ++checked;
  }
  EXPECT_EQ(checked, 2 * 2 * 3);  // 2 blocks x 2 warps x copies 0-2
}

// Named barriers hand data from one role to another without stopping the producer: it
// writes, arrives (bar.arrive) and goes on; the consumer syncs (bar.sync) on the same id
// for both roles' threads, then reads. The second id is the producer's own sync. The
// consumers' waits are recorded by barrier_waits, exactly as planned.
TEST_F(E2eTest, NamedBarrierArriveAndSyncHandOffBetweenRoles) {
  KernelBuilder b("named_handoff");
  b.Param("int*", "out").Grid({2, 1, 1}).Block({256, 1, 1});
  b.SharedArray("int", "value", 1);
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] {
              b.If("threadIdx.x == 0u", [&] { b.Stmt("value[0] = 7 + blockIdx.x;"); });
              b.NamedBarrierSync("producer sync", 2, 128);
              b.NamedBarrierArrive("handoff", 1, 256);
            }},
           {"consumer", 1, "", [&] {
              b.NamedBarrierSync("handoff", 1, 256);
              b.Stmt("out[blockIdx.x * 128 + threadIdx.x - 128] = value[0];");
            }}});
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel.status(), IsOk());
  std::vector<int> out(2 * 128, -1);
  std::vector<KernelArg> args = {KernelArg::InOut(absl::MakeSpan(out))};
  RunOptions options;
  options.profile.unit = UnitSpec::Warp();
  options.profile.policy.barrier_waits = true;
  RunResult run = RunAndCheckExact(*kernel, args, options);
  ASSERT_TRUE(run.plan.has_value());
  // Producer warps: kernel + their own sync; consumer warps: kernel + the hand-off sync.
  EXPECT_THAT(run.plan->ExactEventsForUnit(0), testing::IsOkAndHolds(4u));
  EXPECT_THAT(run.plan->ExactEventsForUnit(4), testing::IsOkAndHolds(4u));
  for (int i = 0; i < 256; ++i) ASSERT_EQ(out[i], 7 + i / 128) << i;
}

TEST_F(E2eTest, BlockSampleRecordsOnlyTheSampledBlocksAndUnsampledOnesStillCompute) {
  const TiledGemmShape shape{.m = 48, .n = 32, .k = 32, .tile = 16};  // 6 blocks
  absl::StatusOr<Kernel> gemm = TiledGemm(shape);
  ASSERT_THAT(gemm.status(), IsOk());
  const std::vector<float> a = Iota(shape.m * shape.k, 0.25f);
  const std::vector<float> b = Iota(shape.k * shape.n, 0.5f);
  const std::vector<float> reference = ReferenceGemm(a, b, shape);
  std::vector<float> c(shape.m * shape.n, -1.0f);
  std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(a)),
                                 KernelArg::In(absl::MakeConstSpan(b)),
                                 KernelArg::Out(absl::MakeSpan(c))};
  RunOptions options;
  options.profile.unit = UnitSpec::Warp();
  options.profile.sample = BlockSample{.begin = 1, .end = 100, .stride = 2};
  RunResult run = RunAndCheckExact(*gemm, args, options);
  ASSERT_NE(run.trace, nullptr);
  // Blocks 1, 3, 5 of 6, 8 warps each; nothing else in the buffer.
  ASSERT_EQ(run.trace->decoded.records.size(), 3u * 8u);
  for (const DecodedRecord& record : run.trace->decoded.records) {
    EXPECT_EQ(record.block_linear % 2, 1u) << record.record_index;
    EXPECT_EQ(record.block_linear, 1 + 2 * (record.record_index / 8));
  }
  EXPECT_EQ(run.plan->buffer_bytes(), 3u * 8u * abi::RecordBytes(run.plan->capacity()));
  for (size_t i = 0; i < c.size(); ++i) {
    ASSERT_NEAR(c[i], reference[i], 1e-3f * (1.0f + std::abs(reference[i]))) << i;
  }
}

// A kernel whose loop runs `actual` times but is declared with an upper bound of `bound`.
absl::StatusOr<Kernel> UnderBoundedLoop(int actual, uint64_t bound) {
  KernelBuilder b("under_bounded");
  b.Param("int*", "out").Param("int", "n").Grid({3, 1, 1}).Block({128, 1, 1});
  b.Stmt("int acc = 0;");
  b.For("i", 0, "n", TripCount::UpperBound(bound), [&] {
    b.Region("step", [&] { b.Stmt("acc += i;"); });
  });
  b.Stmt("out[blockIdx.x * blockDim.x + threadIdx.x] = acc;");
  (void)actual;
  return b.Build();
}

TEST_F(E2eTest, TooSmallCapacityCountsDroppedEventsExactlyAndLeavesNeighboursIntact) {
  absl::StatusOr<Kernel> kernel = UnderBoundedLoop(6, 6);
  ASSERT_THAT(kernel.status(), IsOk());
  std::vector<int> out(3 * 128);
  std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(6)};
  RunOptions options;
  options.profile.unit = UnitSpec::Warp();
  options.profile.capacity_override = 5;  // the plan says 2 + 6 x 2 = 14
  for (Placement placement : {Placement::kGlobal, Placement::kShared}) {
    options.profile.placement = placement;
    options.dump.verify.allow_truncated = false;
    EXPECT_THAT(RunKernel(*device_, *kernel, args, options).status(),
                StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("14")));
    options.dump.verify.allow_truncated = true;
    absl::StatusOr<RunResult> run = RunKernel(*device_, *kernel, args, options);
    ASSERT_THAT(run.status(), IsOk());
    const Trace& trace = *run->trace;
    EXPECT_EQ(trace.report.dropped_events, trace.decoded.records.size() * (14 - 5));
    EXPECT_EQ(trace.report.required_capacity(), 14u);
    for (const DecodedRecord& record : trace.decoded.records) {
      // Every header is intact (no neighbour wrote over it) and holds exactly 5 events:
      // the kernel's enter, then step enter/exit pairs.
      EXPECT_EQ(record.header_problem, HeaderProblem::kNone) << record.record_index;
      EXPECT_EQ(record.attempted, 14u);
      EXPECT_EQ(record.capacity, 5u);
      ASSERT_EQ(record.events.size(), 5u);
      EXPECT_FALSE(abi::TagIsExit(record.events[0].tag));
      for (int e = 1; e < 5; ++e) {
        EXPECT_EQ(abi::TagIsExit(record.events[e].tag), e % 2 == 0) << "event " << e;
      }
    }
    for (const UnitVerdict& verdict : trace.report.units) {
      EXPECT_EQ(verdict.verdict, Verdict::kOverflowed);
      EXPECT_EQ(verdict.dropped, 9u);
    }
    for (int t = 0; t < 3 * 128; ++t) ASSERT_EQ(out[t], 15) << t;  // 0+1+...+5
  }
}

TEST_F(E2eTest, WrongUpperBoundIsRetriedOnceWithTheCapacityTheDumpComputed) {
  absl::StatusOr<Kernel> kernel = UnderBoundedLoop(9, 4);
  ASSERT_THAT(kernel.status(), IsOk());
  std::vector<int> out(3 * 128);
  std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(9)};
  RunOptions options;
  options.profile.unit = UnitSpec::Warpgroup();
  EXPECT_THAT(RunKernel(*device_, *kernel, args, options).status(),
              StatusIs(absl::StatusCode::kResourceExhausted));
  options.retry_on_dropped = true;
  absl::StatusOr<RunResult> run = RunKernel(*device_, *kernel, args, options);
  ASSERT_THAT(run.status(), IsOk());
  EXPECT_TRUE(run->retried);
  EXPECT_THAT(run->retry_note, HasSubstr("20"));  // 2 + 9 x 2
  EXPECT_TRUE(run->trace->report.ok());
  EXPECT_EQ(run->trace->layout.capacity, 20u);
  for (const DecodedRecord& record : run->trace->decoded.records) {
    EXPECT_EQ(record.attempted, 20u);
  }
  EXPECT_EQ(out[0], 36);
}

TEST_F(E2eTest, ALoopPastItsUpperBoundIsNamedWithItsDeclaredAndObservedCounts) {
  absl::StatusOr<Kernel> kernel = UnderBoundedLoop(9, 4);
  ASSERT_THAT(kernel.status(), IsOk());
  std::vector<int> out(3 * 128);
  std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(9)};
  RunOptions options;
  options.profile.unit = UnitSpec::Warpgroup();
  // Capacity 10 (2 + 4 x 2) holds the kernel's enter and 4.5 iterations: the fifth
  // iteration's entry is recorded, so the trace shows the loop running past its bound.
  EXPECT_THAT(RunKernel(*device_, *kernel, args, options).status(),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       AllOf(HasSubstr("loop kernel under_bounded > loop i was declared "
                                       "TripCount::UpperBound(4) but ran at least 5 "
                                       "iterations within one 'under_bounded'"),
                             HasSubstr("20 events per unit"))));
  options.retry_on_dropped = true;
  absl::StatusOr<RunResult> run = RunKernel(*device_, *kernel, args, options);
  ASSERT_THAT(run.status(), IsOk());
  EXPECT_THAT(run->retry_note, HasSubstr("loop kernel under_bounded > loop i"));
  // The retried run has room for every iteration: the loop is a warning with its count.
  EXPECT_THAT(run->trace->report.findings,
              Contains(Field(&Finding::message,
                             HasSubstr("TripCount::UpperBound(4) but ran 9 iterations"))));
}

absl::StatusOr<Kernel> OverDeclaredExactLoop(uint64_t declared) {
  KernelBuilder b("over_declared");
  b.Param("int*", "out").Param("int", "n").Grid({2, 1, 1}).Block({128, 1, 1});
  b.Stmt("int acc = 0;");
  b.For("i", 0, "n", TripCount::Exact(declared), [&] {
    b.Region("step", [&] { b.Stmt("acc += i;"); });
  });
  b.Stmt("out[blockIdx.x * blockDim.x + threadIdx.x] = acc;");
  return b.Build();
}

TEST_F(E2eTest, AnExactTripCountLargerThanTheRealOneIsAFindingNamingTheLoop) {
  absl::StatusOr<Kernel> kernel = OverDeclaredExactLoop(8);
  ASSERT_THAT(kernel.status(), IsOk());
  std::vector<int> out(2 * 128);
  std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(3)};
  RunOptions options;
  options.profile.unit = UnitSpec::Warpgroup();
  // The trace's check, as on a GPU (the host backend's per-thread check would fail the
  // launch first: tests/e2e/trip_check_test.cc).
  options.profile.host_trip_checks = false;
  for (Placement placement : {Placement::kGlobal, Placement::kShared}) {
    options.profile.placement = placement;
    EXPECT_THAT(
        RunKernel(*device_, *kernel, args, options).status(),
        StatusIs(absl::StatusCode::kDataLoss,
                 AllOf(HasSubstr("loop kernel over_declared > loop i was declared "
                                 "TripCount::Exact(8) but ran 3 iterations within one "
                                 "'over_declared'"),
                       HasSubstr("recorded 8 event slots but the plan counts exactly 18"),
                       // Both units are complete, and both have the errors: the count used
                       // to say "in 0 of 2 units" (units whose verdict is not complete).
                       HasSubstr(" in 2 of 2 units"))));
  }
  // The real count verifies.
  args[1] = KernelArg::Scalar<int>(8);
  EXPECT_THAT(RunKernel(*device_, *kernel, args, options).status(), IsOk());
}

TEST_F(E2eTest, ASavedBufferCarriesThePlanSoItsDumpReportsTheLoopToo) {
  absl::StatusOr<Kernel> kernel = OverDeclaredExactLoop(8);
  ASSERT_THAT(kernel.status(), IsOk());
  std::vector<int> out(2 * 128);
  std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(3)};
  RunOptions options;
  options.dump.verify.allow_truncated = true;  // hand back the trace
  options.profile.host_trip_checks = false;    // see above
  absl::StatusOr<RunResult> run = RunKernel(*device_, *kernel, args, options);
  ASSERT_THAT(run.status(), IsOk());
  const std::string prefix = TestTempPath("over_declared");
  ASSERT_THAT(SaveTrace(prefix, run->trace->layout, run->trace->words), IsOk());
  absl::StatusOr<LoadedTrace> loaded = LoadTrace(prefix);
  ASSERT_THAT(loaded.status(), IsOk());
  EXPECT_EQ(loaded->layout.site_trips, run->trace->layout.site_trips);
  EXPECT_EQ(loaded->layout.exact_events, run->trace->layout.exact_events);
  absl::StatusOr<std::unique_ptr<Trace>> dumped =
      CollectTrace(std::move(loaded->layout), loaded->words.ToVector());
  ASSERT_THAT(dumped.status(), IsOk());
  EXPECT_THAT((*dumped)->report.ToStatus(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("TripCount::Exact(8) but ran 3 iterations")));
}

TEST_F(E2eTest, AFlippedByteOfAnEventClockInASavedBufferIsDataLossNamingTheUnit) {
  absl::StatusOr<Kernel> kernel = OverDeclaredExactLoop(4);
  ASSERT_THAT(kernel.status(), IsOk());
  std::vector<int> out(2 * 128);
  std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(4)};
  RunOptions options;
  options.profile.unit = UnitSpec::Warpgroup();
  for (Placement placement : {Placement::kGlobal, Placement::kShared}) {
    options.profile.placement = placement;
    absl::StatusOr<RunResult> run = RunKernel(*device_, *kernel, args, options);
    ASSERT_THAT(run.status(), IsOk());
    std::vector<uint32_t> words = run->trace->words;
    // Record 1 (block 1, warpgroup 0), event 3's clock word: one byte flipped.
    const uint64_t record_words = abi::RecordWords(run->trace->layout.capacity);
    words[record_words + abi::kHeaderWords + 2 * 3 + 1] ^= 0x00010000u;
    absl::StatusOr<std::unique_ptr<Trace>> dumped =
        CollectTrace(run->trace->layout, std::move(words));
    ASSERT_THAT(dumped.status(), IsOk());
    const VerifyReport& report = (*dumped)->report;
    EXPECT_THAT(report.ToStatus(),
                StatusIs(absl::StatusCode::kDataLoss,
                         AllOf(HasSubstr("block (1,0,0) warpgroup 0"),
                               HasSubstr("does not match its identity words and its 10 "
                                         "stored event slots"))));
    EXPECT_EQ(report.kind_counts[static_cast<int>(FindingKind::kBadChecksum)], 1u);
    EXPECT_EQ(report.errors, 1u);
  }
}

TEST_F(E2eTest, PersistentTileLoopRecordsThePlansExactPerBlockCountsPerLaunch) {
  // A persistent kernel: 4 blocks stride over num_tiles tiles, so block b takes
  // ceil((num_tiles - b) / 4) tiles, a count known only at launch.
  KernelBuilder b("persistent_scale");
  b.Param("const int*", "in").Param("int*", "out").Param("int", "num_tiles");
  b.Grid({4, 1, 1}).Block({128, 1, 1});
  b.For("tile", "blockIdx.x", "num_tiles", "gridDim.x",
        TripCount::PerBlock("max(0, (num_tiles - blockIdx.x + gridDim.x - 1) / gridDim.x)"), [&] {
          b.Region("scale", [&] {
            b.Stmt("const int i = tile * blockDim.x + threadIdx.x;");
            b.Stmt("out[i] = 3 * in[i];");
          });
        });
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel.status(), IsOk());
  for (int tiles : {0, 3, 9, 14}) {
    for (const UnitSpec& unit : {UnitSpec::Warp(), UnitSpec::Warpgroup()}) {
      SCOPED_TRACE(absl::StrCat(tiles, " tiles, ", UnitKindName(unit.kind), " units"));
      std::vector<int> in(static_cast<size_t>(tiles) * 128 + 1), out(in.size(), -1);
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i % 1000);
      std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(in)),
                                     KernelArg::Out(absl::MakeSpan(out)),
                                     KernelArg::Scalar<int>(tiles)};
      RunOptions options;
      options.profile.unit = unit;
      const RunResult run = RunAndCheckExact(*kernel, args, options);
      ASSERT_NE(run.trace, nullptr);
      uint64_t largest = 0;
      for (const DecodedRecord& record : run.trace->decoded.records) {
        uint64_t taken = 0;  // counted here, independently of the plan's expression
        for (int t = static_cast<int>(record.block_linear); t < tiles; t += 4) ++taken;
        EXPECT_EQ(record.attempted, 2 + 2 * taken)
            << "block " << record.block_linear << " unit " << record.unit_index;
        largest = std::max(largest, 2 + 2 * taken);
      }
      // The buffer is sized for this launch: the busiest block, not a guessed bound.
      EXPECT_EQ(run.plan->capacity(), largest);
      for (int i = 0; i < tiles * 128; ++i) ASSERT_EQ(out[i], 3 * in[i]) << "element " << i;
      EXPECT_EQ(out[tiles * 128], 0);
    }
  }
}

TEST_F(E2eTest, ArgumentsThatDoNotMatchTheParametersAreRejectedByName) {
  absl::StatusOr<Kernel> kernel = UnderBoundedLoop(1, 1);
  ASSERT_THAT(kernel.status(), IsOk());
  std::vector<int> out(3 * 128);
  std::vector<KernelArg> swapped = {KernelArg::Scalar<int>(1), KernelArg::Out(absl::MakeSpan(out))};
  EXPECT_THAT(RunKernel(*device_, *kernel, swapped, RunOptions{}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("out")));
  std::vector<KernelArg> wide = {KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<double>(1)};
  EXPECT_THAT(RunKernel(*device_, *kernel, wide, RunOptions{}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("8-byte")));
  std::vector<KernelArg> few = {KernelArg::Out(absl::MakeSpan(out))};
  EXPECT_THAT(RunKernel(*device_, *kernel, few, RunOptions{}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("takes 2 arguments")));
}

}  // namespace
}  // namespace warptrace
