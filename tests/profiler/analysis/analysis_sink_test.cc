#include "profiler/analysis/analysis_sink.h"

#include <functional>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis_json.h"
#include "profiler/analysis/critical_path.h"
#include "base/status_macros.h"
#include "profiler/dump/dump.h"
#include "profiler/testing/pipeline_synthesizer.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::DoubleEq;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::PipelineSpec;
using ::warptrace::testing::PipelineTrace;
using ::warptrace::testing::StatusIs;
using ::warptrace::testing::SynthesizePipeline;

Analysis AnalyzePipeline(const PipelineSpec& spec, bool with_links) {
  absl::StatusOr<PipelineTrace> pipeline = SynthesizePipeline(spec);
  EXPECT_THAT(pipeline, IsOk());
  AnalysisOptions options;
  if (with_links) options.handoffs = pipeline->links;
  AnalysisSink sink(options);
  TraceSink* sinks[] = {&sink};
  DumpResult result;
  EXPECT_THAT(DumpTrace(pipeline->layout, pipeline->words, {}, sinks, result), IsOk());
  return sink.result();
}

const RoleAnalysis& Role(const Analysis& a, const std::string& name) {
  for (const RoleAnalysis& role : a.roles) {
    if (role.role == name) return role;
  }
  ADD_FAILURE() << "no role " << name;
  return a.roles.front();
}

const PathRegion* OnPath(const Analysis& a, const std::string& role, const std::string& name) {
  for (const PathRegion& r : a.critical_path.regions) {
    if (r.role == role && r.name == name) return &r;
  }
  return nullptr;
}

PipelineSpec ProducerBound() {
  PipelineSpec spec;
  spec.load_cycles = 300;
  spec.mma_cycles = 100;
  return spec;
}

PipelineSpec ConsumerBound() {
  PipelineSpec spec;
  spec.load_cycles = 100;
  spec.mma_cycles = 300;
  return spec;
}

TEST(AnalysisSinkTest, WaitingSharesAreExactPerRoleAndBarrierFamily) {
  const PipelineSpec spec = ProducerBound();
  const Analysis a = AnalyzePipeline(spec, /*with_links=*/true);
  const int64_t n = spec.iterations, l = 300, m = 100;
  const int64_t block = n * l + m;
  const int64_t consumer_wait = l + (n - 1) * (l - m);
  const RoleAnalysis& consumer = Role(a, "consumer");
  EXPECT_EQ(consumer.units, spec.blocks);
  EXPECT_EQ(consumer.unit_time_ns, spec.blocks * block);
  EXPECT_EQ(consumer.waiting_ns, spec.blocks * consumer_wait);
  EXPECT_THAT(consumer.waiting_share, DoubleEq(static_cast<double>(consumer_wait) / block));
  ASSERT_EQ(consumer.waits.size(), 1u);
  EXPECT_EQ(consumer.waits[0].family, "full[*]");
  EXPECT_EQ(consumer.waits[0].count, spec.blocks * n);
  EXPECT_EQ(consumer.waits[0].wait_ns, spec.blocks * consumer_wait);
  const RoleAnalysis& producer = Role(a, "producer");
  EXPECT_EQ(producer.unit_time_ns, spec.blocks * n * l);
  EXPECT_EQ(producer.waiting_ns, 0);
  ASSERT_EQ(producer.waits.size(), 1u);
  EXPECT_EQ(producer.waits[0].family, "empty[*]");
  EXPECT_EQ(producer.waits[0].count, spec.blocks * (n - spec.stages));
}

TEST(AnalysisSinkTest, RegionsReportTheWaitingInsideThemByFamily) {
  const PipelineSpec spec = ConsumerBound();
  const Analysis a = AnalyzePipeline(spec, /*with_links=*/true);
  const RoleAnalysis& producer = Role(a, "producer");
  // Iteration i >= 2 waits on empty[i % 2] from the end of load i-1, at (i-1)M - L, until
  // mma i-2 ends, at L + (i-1)M: 2L.
  const int64_t n = spec.iterations;
  const int64_t wait = 2 * 100;
  ASSERT_FALSE(producer.sites.empty());
  const SiteTime& kernel = producer.sites.front();
  EXPECT_EQ(kernel.name, "pipeline");
  EXPECT_EQ(kernel.waiting_ns, spec.blocks * (n - 2) * wait);
  ASSERT_EQ(kernel.waits.size(), 1u);
  EXPECT_EQ(kernel.waits[0].family, "empty[*]");
  EXPECT_THAT(kernel.waits[0].share,
              DoubleEq(static_cast<double>((n - 2) * wait) / ((n - 1) * 300 - 100)));
  for (const SiteTime& site : producer.sites) {
    if (site.name == "load") {
      EXPECT_EQ(site.count, spec.blocks * n);
      EXPECT_EQ(site.total_ns, spec.blocks * n * 100);
      EXPECT_EQ(site.self_ns, site.total_ns);
      EXPECT_EQ(site.waiting_ns, 0);
    }
  }
}

TEST(AnalysisSinkTest, ProducerBoundCriticalPathIsTheLoadsThenTheLastMma) {
  const PipelineSpec spec = ProducerBound();
  const Analysis a = AnalyzePipeline(spec, /*with_links=*/true);
  const int64_t n = spec.iterations, block = n * 300 + 100;
  EXPECT_FALSE(a.critical_path.per_unit_only);
  EXPECT_EQ(a.critical_path.blocks, spec.blocks);
  EXPECT_EQ(a.critical_path.handoffs, spec.blocks);  // only the last full wait really waited
  ASSERT_EQ(a.critical_path.regions.size(), 2u);
  const PathRegion* load = OnPath(a, "producer", "load");
  const PathRegion* mma = OnPath(a, "consumer", "mma");
  ASSERT_NE(load, nullptr);
  ASSERT_NE(mma, nullptr);
  EXPECT_EQ(load->path_ns, spec.blocks * n * 300);
  EXPECT_THAT(load->block_fraction, DoubleEq(1.0));
  EXPECT_THAT(load->mean_share, DoubleEq(static_cast<double>(n * 300) / block));
  EXPECT_EQ(mma->path_ns, spec.blocks * 100);
  ASSERT_EQ(a.critical_path.slowest_block_path.size(), 2u);
  EXPECT_EQ(a.critical_path.slowest_block_path[0].name, "load");
  EXPECT_EQ(a.critical_path.slowest_block_path[0].role, "producer");
  EXPECT_EQ(a.critical_path.slowest_block_path[1].name, "mma");
  EXPECT_EQ(a.critical_path.slowest_block_path[1].unit_index, 1u);
}

TEST(AnalysisSinkTest, ConsumerBoundCriticalPathIsTheFirstLoadThenEveryMma) {
  const PipelineSpec spec = ConsumerBound();
  const Analysis a = AnalyzePipeline(spec, /*with_links=*/true);
  const int64_t n = spec.iterations, block = 100 + n * 300;
  const PathRegion* load = OnPath(a, "producer", "load");
  const PathRegion* mma = OnPath(a, "consumer", "mma");
  ASSERT_NE(load, nullptr);
  ASSERT_NE(mma, nullptr);
  EXPECT_EQ(a.critical_path.regions.front().name, "mma");
  EXPECT_EQ(mma->path_ns, spec.blocks * n * 300);
  EXPECT_THAT(mma->mean_share, DoubleEq(static_cast<double>(n * 300) / block));
  EXPECT_EQ(load->path_ns, spec.blocks * 100);
}

TEST(AnalysisSinkTest, WithoutLinksTheCriticalPathIsPerUnitOnly) {
  const PipelineSpec spec = ProducerBound();
  const Analysis a = AnalyzePipeline(spec, /*with_links=*/false);
  EXPECT_TRUE(a.critical_path.per_unit_only);
  EXPECT_EQ(a.critical_path.handoffs, 0u);
  // The consumer finishes last: its own program order, waits included.
  EXPECT_EQ(OnPath(a, "producer", "load"), nullptr);
  const PathRegion* mma = OnPath(a, "consumer", "mma");
  ASSERT_NE(mma, nullptr);
  EXPECT_EQ(mma->path_ns, spec.blocks * spec.iterations * 100);
  ASSERT_FALSE(a.diagnosis.empty());
  EXPECT_THAT(a.diagnosis.front().text, HasSubstr("critical path is per unit only"));
}

TEST(AnalysisSinkTest, DiagnosisNamesTheBoundRoleFirst) {
  const Analysis producer_bound = AnalyzePipeline(ProducerBound(), /*with_links=*/true);
  ASSERT_FALSE(producer_bound.diagnosis.empty());
  EXPECT_THAT(producer_bound.diagnosis.front().text,
              StartsWith("producer-bound: consumer units idle 68% waiting on full[*]; the "
                         "producer's `load` is on the critical path in 100% of blocks (96% of "
                         "block time)"));
  const Analysis consumer_bound = AnalyzePipeline(ConsumerBound(), /*with_links=*/true);
  ASSERT_FALSE(consumer_bound.diagnosis.empty());
  EXPECT_THAT(consumer_bound.diagnosis.front().text,
              StartsWith("consumer-bound: producer units idle 60% waiting on empty[*]; the "
                         "consumer's `mma` is on the critical path in 100% of blocks (96% of "
                         "block time)"));
  EXPECT_EQ(consumer_bound.diagnosis.back().kind, "overhead");
}

TEST(AnalysisSinkTest, PlantedSlowBlockIsFoundWithItsCoordinatesAndSm) {
  PipelineSpec spec = ProducerBound();
  spec.blocks = 8;
  spec.block_scale[6] = 3;  // block 6 runs on SM 6 % 4 = 2
  const Analysis a = AnalyzePipeline(spec, /*with_links=*/true);
  const int64_t block = spec.iterations * 300 + 100;
  const GridAnalysis& g = a.grid;
  EXPECT_EQ(g.blocks, 8u);
  EXPECT_EQ(g.span_ns, 3 * block);
  ASSERT_EQ(g.outlier_blocks.size(), 1u);
  EXPECT_EQ(g.outlier_blocks[0].block_linear, 6u);
  EXPECT_EQ(g.outlier_blocks[0].block_index, (Dim3{6, 0, 0}));
  EXPECT_EQ(g.outlier_blocks[0].sm_id, 2u);
  EXPECT_THAT(g.outlier_blocks[0].ratio, DoubleEq(3.0));
  EXPECT_EQ(g.busiest_sm.sm_id, 2u);
  EXPECT_EQ(g.busiest_sm.busy_ns, 3 * block);
  EXPECT_EQ(g.mean_sm_busy_ns, (3 * block + 3 * block) / 4);
  EXPECT_THAT(g.sm_imbalance, DoubleEq(2.0));
  EXPECT_EQ(g.tail_ns, 2 * block);
  EXPECT_EQ(g.last_block.block_linear, 6u);
  EXPECT_EQ(g.max_concurrent_blocks, 8u);  // every block starts at once
  EXPECT_THAT(g.waves, DoubleEq(1.0));
  bool tail = false, sm = false;
  for (const Diagnosis& d : a.diagnosis) {
    if (d.kind == "tail") {
      tail = true;
      EXPECT_THAT(d.text, HasSubstr("block (6,0,0) #6 on SM 2"));
    }
    if (d.kind == "sm_imbalance") {
      sm = true;
      EXPECT_THAT(d.text, StartsWith("SM imbalance: SM 2 was busy"));
    }
  }
  EXPECT_TRUE(tail);
  EXPECT_TRUE(sm);
}

TEST(AnalysisSinkTest, PlantedSlowUnitIsNamedWithinItsRole) {
  PipelineSpec spec = ConsumerBound();
  spec.consumers = 2;
  spec.blocks = 4;
  spec.unit_extra[(uint64_t{1} << 32) | 2] = 200;  // block 1, consumer unit 2: mma + 200
  const Analysis a = AnalyzePipeline(spec, /*with_links=*/true);
  const RoleAnalysis& consumer = Role(a, "consumer");
  EXPECT_EQ(consumer.units, 8u);
  EXPECT_EQ(consumer.slowest_unit.block_linear, 1u);
  EXPECT_EQ(consumer.slowest_unit.unit_index, 2u);
  EXPECT_EQ(consumer.slowest_unit.sm_id, 1u);
  EXPECT_GT(consumer.slowest_unit.ratio, 1.5);
}

TEST(AnalysisSinkTest, OverheadIsMeasuredPerEventAndBoundsTheWaits) {
  PipelineSpec spec = ProducerBound();
  spec.event_cost_cycles = 10;
  const Analysis a = AnalyzePipeline(spec, /*with_links=*/true);
  EXPECT_THAT(a.overhead.cycles_per_event, DoubleEq(10.0));
  EXPECT_THAT(a.overhead.ns_per_event, DoubleEq(10.0));
  const uint64_t events_per_block = 2 * (2 + 4 * spec.iterations) - 2 * 2;  // no empty wait at i < 2
  EXPECT_EQ(a.overhead.events, spec.blocks * events_per_block);
  const RoleAnalysis& consumer = Role(a, "consumer");
  ASSERT_EQ(consumer.waits.size(), 1u);
  EXPECT_EQ(consumer.waits[0].overhead_ns, spec.blocks * spec.iterations * 2 * 10);
  EXPECT_THAT(consumer.waits[0].overhead_fraction,
              DoubleEq(static_cast<double>(consumer.waits[0].overhead_ns) /
                       static_cast<double>(consumer.waits[0].wait_ns)));
  EXPECT_THAT(a.diagnosis.back().text, StartsWith("overhead: 10 ns (10 cycles) per event"));
}

TEST(AnalysisSinkTest, UnitsOfABlockMustArriveConsecutively) {
  TraceLayout layout;
  layout.grid = {2, 1, 1};
  layout.block = {128, 1, 1};
  layout.capacity = 2;
  layout.sites = {{0, "k", SiteKind::kKernel, ""}};
  AnalysisSink sink;
  TraceBegin begin;
  begin.layout = &layout;
  ASSERT_THAT(sink.Begin(begin), IsOk());
  UnitTimeline unit;
  UnitView view;
  view.timeline = &unit;
  unit.block_linear = 0;
  ASSERT_THAT(sink.AddUnit(view), IsOk());
  unit.block_linear = 1;
  ASSERT_THAT(sink.AddUnit(view), IsOk());
  unit.block_linear = 0;
  EXPECT_THAT(sink.AddUnit(view), StatusIs(absl::StatusCode::kFailedPrecondition,
                                           HasSubstr("block 0")));
}

TEST(AnalysisSinkTest, UnsortedHandoffLinksAreRejectedAsTheBlocksPass) {
  TraceLayout layout;
  layout.block = {128, 1, 1};
  layout.capacity = 2;
  layout.sites = {{0, "k", SiteKind::kKernel, ""}};
  UnitTimeline unit;
  UnitView view;
  view.timeline = &unit;
  TraceBegin begin;
  begin.layout = &layout;
  // Out of order after the last block (found by End), and among the blocks (found when
  // block 2 finishes, before End).
  const HandoffLink after_last[] = {{1, 0, 0, 0, 0}, {0, 0, 0, 0, 0}};
  const HandoffLink among[] = {{1, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, {2, 0, 0, 0, 0}};
  for (absl::Span<const HandoffLink> links :
       {absl::MakeConstSpan(after_last), absl::MakeConstSpan(among)}) {
    AnalysisOptions options;
    options.handoffs = links;
    AnalysisSink sink(options);
    ASSERT_THAT(sink.Begin(begin), IsOk());
    unit.block_linear = 0;
    ASSERT_THAT(sink.AddUnit(view), IsOk());
    absl::Status status = absl::OkStatus();
    if (links.size() == 3) {
      unit.block_linear = 2;
      ASSERT_THAT(sink.AddUnit(view), IsOk());
      unit.block_linear = 3;
      status = sink.AddUnit(view);  // finishes block 2
    } else {
      status = sink.End(TraceEnd());
    }
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("sorted by block: link 1 (block 0) follows block 1")));
  }
}

// A block of a producer (unit 0) and a consumer (unit 1) whose hand-off is recorded (trace
// v2): the producer loads 0..60 and arrives on full[1] at 60; the consumer waits on full[1]
// 0..61, then runs mma 61..101. The timeline's flow names the arrival and the release.
struct HandoffBlock {
  TraceLayout layout;
  std::vector<UnitTimeline> units;
};

HandoffBlock HandBuiltHandoff() {
  HandoffBlock b;
  b.layout.block = {256, 1, 1};
  b.layout.capacity = 16;
  b.layout.sites = {{0, "kernel", SiteKind::kKernel, ""},
                    {1, "load", SiteKind::kRegion, ""},
                    {2, "mma", SiteKind::kRegion, ""},
                    {3, "wait full", SiteKind::kPhaseWait, ""},
                    {4, "arrive full", SiteKind::kBarrierArrive, ""}};
  b.layout.barriers = {{0, "full[0]", 1}, {1, "full[1]", 1}};
  b.layout.unit_roles = {"producer", "consumer"};
  UnitTimeline p;
  p.record_index = 0;
  p.unit_index = 0;
  p.start_ns = 0;
  p.end_ns = 100;
  p.events = 5;
  p.slices = {{0, 0, 0, 100}, {1, 1, 0, 60}};
  p.instants = {{4, 4, 60, 1, 0}};
  UnitTimeline c = p;
  c.record_index = 1;
  c.unit_index = 1;
  c.instants.clear();
  c.end_ns = 101;
  c.slices = {{0, 0, 0, 101}, {3, 1, 0, 61}, {2, 1, 61, 101}};
  Flow flow;
  flow.id = 0;
  flow.kind = FlowKind::kArrivalToRelease;
  flow.from = {0, 4, 60};
  flow.to = {1, 4, 61};
  flow.to.released_wait = 1;  // c.slices[1], the wait that ends at 61
  flow.barrier = 1;
  flow.completing = true;
  p.flows = {flow};
  c.flows = {flow};
  b.units = {p, c};
  return b;
}

absl::Status Feed(AnalysisSink& sink, const HandoffBlock& b) {
  TraceBegin begin;
  begin.layout = &b.layout;
  begin.units = b.units.size();
  if (absl::Status s = sink.Begin(begin); !s.ok()) return s;
  for (const UnitTimeline& unit : b.units) {
    UnitView view;
    view.timeline = &unit;
    if (absl::Status s = sink.AddUnit(view); !s.ok()) return s;
  }
  return sink.End(TraceEnd());
}

TEST(AnalysisSinkTest, TheTimelinesArrivalFlowsBecomeTheBlocksHandoffLinks) {
  const HandoffBlock b = HandBuiltHandoff();
  AnalysisSink sink;  // no links passed in
  ASSERT_THAT(Feed(sink, b), IsOk());
  const Analysis& a = sink.result();
  EXPECT_FALSE(a.critical_path.per_unit_only);
  EXPECT_EQ(a.critical_path.trace_links, 1u);
  EXPECT_EQ(a.critical_path.handoffs, 1u);
  std::vector<std::pair<std::string, int64_t>> path;
  for (const PathStepRef& step : a.critical_path.slowest_block_path) {
    path.push_back({step.role + " " + step.name, step.ns});
  }
  EXPECT_THAT(path, ::testing::ElementsAre(std::pair<std::string, int64_t>("producer load", 60),
                                           std::pair<std::string, int64_t>("consumer (hand-off)", 1),
                                           std::pair<std::string, int64_t>("consumer mma", 40)));
}

TEST(AnalysisSinkTest, AWaitAFlowReleasesCountsUnderItsBarriersNameAndFamily) {
  const HandoffBlock b = HandBuiltHandoff();
  AnalysisSink sink;
  ASSERT_THAT(Feed(sink, b), IsOk());
  const RoleAnalysis& consumer = Role(sink.result(), "consumer");
  ASSERT_EQ(consumer.waits.size(), 1u);
  EXPECT_EQ(consumer.waits[0].family, "full[*]");  // not the site's "wait full"
  EXPECT_EQ(consumer.waits[0].wait_ns, 61);
  ASSERT_EQ(consumer.barriers.size(), 1u);
  EXPECT_EQ(consumer.barriers[0].family, "full[1]");
  EXPECT_EQ(consumer.barriers[0].count, 1u);
  EXPECT_EQ(consumer.barriers[0].wait_ns, 61);
  EXPECT_THAT(consumer.barriers[0].share, DoubleEq(61.0 / 101));
  EXPECT_TRUE(Role(sink.result(), "producer").barriers.empty());
}

TEST(AnalysisSinkTest, AFlowThatReleasesNoWaitOfItsUnitIsRejected) {
  HandoffBlock b = HandBuiltHandoff();
  b.units[1].flows[0].to.ns = 50;  // no wait of the consumer ends there: the timeline
  b.units[1].flows[0].to.released_wait = FlowEnd::kNone;  // found none
  AnalysisSink sink;
  EXPECT_THAT(Feed(sink, b), StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("releases no wait slice")));
}

// Trace version 2: the hand-offs are in the trace (payloads), the sink links them itself.
TEST(AnalysisSinkTest, AVersion2TraceGetsItsCriticalPathFromItsOwnHandoffs) {
  PipelineSpec spec = ProducerBound();
  spec.handoff_payloads = true;
  absl::StatusOr<PipelineTrace> pipeline = SynthesizePipeline(spec);
  ASSERT_THAT(pipeline, IsOk());
  const Analysis a = AnalyzePipeline(spec, /*with_links=*/false);
  EXPECT_FALSE(a.critical_path.per_unit_only);
  EXPECT_EQ(a.critical_path.trace_links, pipeline->links.size());
  // The same answer as the version-1 trace with the links passed in by hand.
  PipelineSpec v1 = ProducerBound();
  const Analysis expected = AnalyzePipeline(v1, /*with_links=*/true);
  EXPECT_EQ(a.critical_path.handoffs, expected.critical_path.handoffs);
  const int64_t n = spec.iterations, block = n * 300 + 100;
  const PathRegion* load = OnPath(a, "producer", "load");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->path_ns, spec.blocks * n * 300);
  EXPECT_DOUBLE_EQ(load->block_fraction, 1.0);
  const PathRegion* mma = OnPath(a, "consumer", "mma");
  ASSERT_NE(mma, nullptr);
  EXPECT_EQ(mma->path_ns, spec.blocks * 100);
  EXPECT_EQ(a.critical_path.slowest_block.ns, block);
  ASSERT_FALSE(a.diagnosis.empty());
  EXPECT_THAT(a.diagnosis.front().text, StartsWith("producer-bound: consumer units idle"));
  EXPECT_THAT(a.diagnosis.front().text, HasSubstr("waiting on full[*], most on full[0]"));
  EXPECT_THAT(a.diagnosis.front().text, HasSubstr("`load` is on the critical path in 100%"));
}

TEST(AnalysisSinkTest, Version2WaitsBreakDownByTheBarrierTheirPayloadNames) {
  PipelineSpec spec = ProducerBound();
  spec.handoff_payloads = true;
  const Analysis a = AnalyzePipeline(spec, /*with_links=*/false);
  // Stage 0 serves iterations 0, 2, 4, 6: the first waits a whole load L, the others L - M;
  // stage 1 serves 1, 3, 5, 7, each waiting L - M.
  const int64_t n = spec.iterations, l = 300, m = 100;
  const RoleAnalysis& consumer = Role(a, "consumer");
  ASSERT_EQ(consumer.waits.size(), 1u);
  EXPECT_EQ(consumer.waits[0].family, "full[*]");
  EXPECT_EQ(consumer.waits[0].wait_ns, spec.blocks * (l + (n - 1) * (l - m)));
  ASSERT_EQ(consumer.barriers.size(), 2u);
  EXPECT_EQ(consumer.barriers[0].family, "full[0]");
  EXPECT_EQ(consumer.barriers[0].count, spec.blocks * n / 2);
  EXPECT_EQ(consumer.barriers[0].wait_ns, spec.blocks * (l + (n / 2 - 1) * (l - m)));
  EXPECT_EQ(consumer.barriers[1].family, "full[1]");
  EXPECT_EQ(consumer.barriers[1].wait_ns, spec.blocks * (n / 2) * (l - m));
  EXPECT_THAT(consumer.barriers[0].share,
              DoubleEq(static_cast<double>(l + (n / 2 - 1) * (l - m)) / (n * l + m)));
  const RoleAnalysis& producer = Role(a, "producer");
  ASSERT_EQ(producer.waits.size(), 1u);
  EXPECT_EQ(producer.waits[0].family, "empty[*]");
  ASSERT_EQ(producer.barriers.size(), 2u);
  EXPECT_EQ(producer.barriers[0].count + producer.barriers[1].count,
            spec.blocks * (n - spec.stages));
  // The region the consumer waits in reports it by family, as for a version-1 trace.
  const SiteTime& kernel = consumer.sites.front();
  EXPECT_EQ(kernel.name, "pipeline");
  ASSERT_EQ(kernel.waits.size(), 1u);
  EXPECT_EQ(kernel.waits[0].family, "full[*]");
}

TEST(AnalysisSinkTest, AConsumerBoundVersion2TraceIsDiagnosedConsumerBound) {
  PipelineSpec spec = ConsumerBound();
  spec.handoff_payloads = true;
  const Analysis a = AnalyzePipeline(spec, /*with_links=*/false);
  ASSERT_FALSE(a.diagnosis.empty());
  EXPECT_THAT(a.diagnosis.front().text, StartsWith("consumer-bound: producer units idle"));
  EXPECT_THAT(a.diagnosis.front().text, HasSubstr("waiting on empty[*]"));
  const PathRegion* mma = OnPath(a, "consumer", "mma");
  ASSERT_NE(mma, nullptr);
  EXPECT_EQ(mma->path_ns, spec.blocks * spec.iterations * 300);
}

// Parts (sink.h): the analysis of a trace fed to parts is the one a single sink makes, to
// the last bit of its JSON, however the blocks are dealt out.

std::string AnalysisJson(const Analysis& a) {
  std::string json;
  llvm::raw_string_ostream os(json);
  WriteAnalysisJson(a, os);
  os.flush();
  return json;
}

// An unlinked pipeline (no hand-off flows: parts apply) with jitter, a measured per-event
// cost (overheads: fractional ns per wait) and a few planted slow blocks and units.
PipelineSpec PartsSpec(uint32_t jitter) {
  PipelineSpec spec;
  spec.blocks = 90;
  spec.consumers = 2;
  spec.iterations = 6;
  spec.jitter_cycles = jitter;
  spec.seed = 7;
  spec.event_cost_cycles = 3;
  spec.num_virtual_sms = 8;
  spec.block_scale = {{17, 3}, {60, 3}};
  spec.unit_extra = {{(uint64_t{40} << 32) | 1, 500}};
  return spec;
}

// Deals each block's units to parts[deal(block)] (run on one thread), then merges and ends.
class DealingSink : public TraceSink {
 public:
  DealingSink(AnalysisSink& sink, size_t parts, std::function<size_t(uint32_t)> deal)
      : sink_(sink), count_(parts), deal_(std::move(deal)) {}
  absl::string_view Name() const override { return "dealing"; }
  absl::Status Begin(const TraceBegin& begin) override {
    RETURN_IF_ERROR(sink_.Begin(begin));
    for (size_t i = 0; i < count_; ++i) {
      parts_.push_back(sink_.NewPart());
      if (parts_.back() == nullptr) return absl::InternalError("no part");
    }
    return absl::OkStatus();
  }
  absl::Status AddUnit(const UnitView& unit) override {
    return parts_[deal_(unit.timeline->block_linear) % count_]->AddUnit(unit);
  }
  absl::Status End(const TraceEnd& end) override {
    RETURN_IF_ERROR(sink_.MergeParts(std::move(parts_)));
    return sink_.End(end);
  }

 private:
  AnalysisSink& sink_;
  size_t count_;
  std::function<size_t(uint32_t)> deal_;
  std::vector<std::unique_ptr<SinkPart>> parts_;
};

// Counts the parts the driver asks for.
class CountingAnalysisSink : public AnalysisSink {
 public:
  std::unique_ptr<SinkPart> NewPart() override {
    ++parts;
    return AnalysisSink::NewPart();
  }
  int parts = 0;
};

TEST(AnalysisSinkPartsTest, BlocksDealtToPartsInAnyWayGiveTheAnalysisOfOneSink) {
  // Without jitter, blocks tie on their durations and spans: the order decides the named
  // slowest and outlier blocks; with it, fractional per-event overheads add up differently
  // in every order (in floating point).
  for (uint32_t jitter : {0u, 40u}) {
    absl::StatusOr<PipelineTrace> pipeline = SynthesizePipeline(PartsSpec(jitter));
    ASSERT_THAT(pipeline, IsOk());
    AnalysisSink one;
    TraceSink* one_sinks[] = {&one};
    DumpResult result;
    ASSERT_THAT(DumpTrace(pipeline->layout, pipeline->words, {}, one_sinks, result), IsOk());
    const std::string expected = AnalysisJson(one.result());
    ASSERT_GT(one.result().grid.blocks, 0u);
    const std::vector<std::pair<size_t, std::function<size_t(uint32_t)>>> deals = {
        {1, [](uint32_t) { return size_t{0}; }},
        {2, [](uint32_t b) { return size_t{b % 2}; }},
        {3, [](uint32_t b) { return size_t{(b * 7919u) % 5}; }},  // some parts get none
        {4, [](uint32_t b) { return size_t{b < 45 ? 3u : b % 3}; }},
    };
    for (const auto& [count, deal] : deals) {
      AnalysisSink parted;
      DealingSink dealing(parted, count, deal);
      TraceSink* sinks[] = {&dealing};
      ASSERT_THAT(DumpTrace(pipeline->layout, pipeline->words, {}, sinks, result), IsOk());
      EXPECT_EQ(AnalysisJson(parted.result()), expected)
          << "jitter " << jitter << ", " << count << " parts";
    }
    // The driver's own parts: one per prepare worker, from two workers on.
    for (int threads : {2, 3, 5}) {
      CountingAnalysisSink parted;
      TraceSink* sinks[] = {&parted};
      DumpOptions options;
      options.threads = threads;
      options.sink_threads = 0;
      ASSERT_THAT(DumpTrace(pipeline->layout, pipeline->words, options, sinks, result), IsOk());
      EXPECT_EQ(parted.parts, threads > 2 ? threads - 1 : 0);
      EXPECT_EQ(AnalysisJson(parted.result()), expected) << "threads " << threads;
    }
  }
}

TEST(AnalysisSinkPartsTest, ABlockSplitBetweenPartsIsRefusedAtTheMerge) {
  absl::StatusOr<PipelineTrace> pipeline = SynthesizePipeline(PartsSpec(0));
  ASSERT_THAT(pipeline, IsOk());
  AnalysisSink parted;
  // Block 5's units go to different parts: it would be two blocks.
  uint32_t calls = 0;
  DealingSink dealing(parted, 2, [&](uint32_t b) { return size_t{b == 5 ? calls++ : 0u}; });
  TraceSink* sinks[] = {&dealing};
  DumpResult result;
  EXPECT_THAT(DumpTrace(pipeline->layout, pipeline->words, {}, sinks, result),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("units of block 5 do not arrive consecutively")));
}

TEST(AnalysisSinkPartsTest, PartsAreRefusedWhereTheirOrderWouldShow) {
  absl::StatusOr<PipelineTrace> pipeline = SynthesizePipeline(PartsSpec(0));
  ASSERT_THAT(pipeline, IsOk());
  TraceBegin begin;
  begin.layout = &pipeline->layout;
  // Before Begin, and with explicit hand-off links (checked in order as blocks pass): none.
  AnalysisSink unbegun;
  EXPECT_EQ(unbegun.NewPart(), nullptr);
  AnalysisOptions linked;
  linked.handoffs = pipeline->links;
  AnalysisSink with_links(linked);
  ASSERT_THAT(with_links.Begin(begin), IsOk());
  EXPECT_EQ(with_links.NewPart(), nullptr);
  // A part takes no unit with hand-off flows (barriers are numbered as they arrive).
  const HandoffBlock b = HandBuiltHandoff();
  AnalysisSink sink;
  TraceBegin handoff_begin;
  handoff_begin.layout = &b.layout;
  ASSERT_THAT(sink.Begin(handoff_begin), IsOk());
  std::unique_ptr<SinkPart> part = sink.NewPart();
  ASSERT_NE(part, nullptr);
  UnitView view;
  view.timeline = &b.units.back();
  ASSERT_FALSE(b.units.back().flows.empty());
  EXPECT_THAT(part->AddUnit(view), StatusIs(absl::StatusCode::kFailedPrecondition,
                                            HasSubstr("hand-off flows")));
  // Another sink's part, and a merge into a sink that took units itself.
  AnalysisSink other;
  ASSERT_THAT(other.Begin(handoff_begin), IsOk());
  std::vector<std::unique_ptr<SinkPart>> foreign;
  foreign.push_back(sink.NewPart());
  EXPECT_THAT(other.MergeParts(std::move(foreign)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("did not make")));
  view.timeline = &b.units.front();
  ASSERT_THAT(other.AddUnit(view), IsOk());
  std::vector<std::unique_ptr<SinkPart>> own;
  own.push_back(other.NewPart());
  EXPECT_THAT(other.MergeParts(std::move(own)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("through AddUnit")));
}

TEST(WaitFamilyTest, ReplacesBracketedStageNumbers) {
  EXPECT_EQ(WaitFamily("full[2]"), "full[*]");
  EXPECT_EQ(WaitFamily("bar[12][3]"), "bar[*][*]");
  EXPECT_EQ(WaitFamily("sync"), "sync");
  EXPECT_EQ(WaitFamily("x[a1]"), "x[a1]");
}

TEST(WaitFamilyTest, PutsEveryCtaRanksElementInOneFamily) {
  EXPECT_EQ(WaitFamily("full[0] of CTA rank 1"), "full[*]");
  EXPECT_EQ(WaitFamily("empty[3] of CTA rank 12"), "empty[*]");
  EXPECT_EQ(WaitFamily("full[0] of CTA rank x"), "full[*] of CTA rank x");
  EXPECT_EQ(WaitFamily("of CTA rank "), "of CTA rank ");
}

}  // namespace
}  // namespace warptrace
