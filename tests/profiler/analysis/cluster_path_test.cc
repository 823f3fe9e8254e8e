// The critical path under a cluster link scope (AnalysisSink, analysis_sink.h): one path per
// cluster over the units of all its CTAs, following a remote arrival from one CTA into the
// wait it released in another; and the same units without a cluster keep one path per block.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "nlohmann/json.hpp"
#include "profiler/analysis/analysis_json.h"
#include "profiler/analysis/analysis_sink.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;

// A 2x1 cluster of two CTAs, each a producer (unit 0) and a consumer (unit 1). CTA 1's
// consumer is slow: mma 0..200, then it arrives remotely on CTA 0's empty[0] at 200, the
// phase's last arrival. CTA 0's producer waits on empty[0] 10..201, then loads 201..260: the
// last event of the cluster. CTA 0's consumer runs mma 0..100, CTA 1's producer loads 0..50.
struct ClusterTrace {
  TraceLayout layout;
  std::vector<UnitTimeline> units;
};

UnitTimeline Unit(uint64_t record, std::vector<Slice> slices, const Dim3& grid = {2, 1, 1}) {
  UnitTimeline u;
  u.record_index = record;
  u.block_linear = static_cast<uint32_t>(record / 2);
  u.block_index = BlockIndex(grid, u.block_linear);
  u.unit_index = static_cast<uint32_t>(record % 2);
  u.sm_id = u.block_linear;
  u.start_ns = 0;
  u.end_ns = slices.front().end_ns;
  u.events = 4;
  u.slices = std::move(slices);
  return u;
}

ClusterTrace SlowPeerConsumer(bool cluster) {
  ClusterTrace t;
  t.layout.grid = {2, 1, 1};
  t.layout.block = {256, 1, 1};
  t.layout.cluster = cluster ? Dim3{2, 1, 1} : Dim3{1, 1, 1};
  t.layout.capacity = 16;
  t.layout.sites = {{0, "kernel", SiteKind::kKernel, ""},
                    {1, "wait empty", SiteKind::kPhaseWait, ""},
                    {2, "load", SiteKind::kRegion, ""},
                    {3, "mma", SiteKind::kRegion, ""}};
  t.layout.barriers = {{0, "empty[0]", 2}, {1, "empty[0] of CTA rank 1", 2}};
  t.layout.unit_roles = {"producer", "consumer"};
  t.units = {Unit(0, {{0, 0, 0, 260}, {1, 1, 10, 201}, {2, 1, 201, 260}}),
             Unit(1, {{0, 0, 0, 100}, {3, 1, 0, 100}}),
             Unit(2, {{0, 0, 0, 50}, {2, 1, 0, 50}}),
             Unit(3, {{0, 0, 0, 200}, {3, 1, 0, 200}})};
  if (cluster) {
    Flow flow;
    flow.kind = FlowKind::kArrivalToRelease;
    flow.from = {3, 3, 200};
    flow.to = {0, 2, 201};
    flow.to.released_wait = 1;  // the producer's wait empty
    flow.barrier = 0;
    flow.completing = true;
    t.units[0].flows = {flow};
    t.units[3].flows = {flow};
  }
  return t;
}

Analysis Analyze(const ClusterTrace& t) {
  AnalysisSink sink;
  TraceBegin begin;
  begin.layout = &t.layout;
  begin.units = t.units.size();
  EXPECT_THAT(sink.Begin(begin), IsOk());
  for (const UnitTimeline& unit : t.units) {
    UnitView view;
    view.timeline = &unit;
    EXPECT_THAT(sink.AddUnit(view), IsOk());
  }
  EXPECT_THAT(sink.End(TraceEnd()), IsOk());
  return sink.result();
}

nlohmann::json CriticalPathJson(const Analysis& a) {
  std::string out;
  llvm::raw_string_ostream os(out);
  WriteAnalysisJson(a, os);
  os.flush();
  return nlohmann::json::parse(out)["critical_path"];
}

using Step = std::pair<std::string, int64_t>;

std::vector<Step> Steps(const Analysis& a) {
  std::vector<Step> steps;
  for (const PathStepRef& s : a.critical_path.slowest_block_path) {
    steps.push_back({"CTA " + std::to_string(s.cta_rank) + " " + s.role + " " + s.name, s.ns});
  }
  return steps;
}

TEST(ClusterPathTest, TheClustersPathCrossesFromTheSlowPeerIntoTheWaitItReleased) {
  const Analysis a = Analyze(SlowPeerConsumer(/*cluster=*/true));
  const CriticalPathAnalysis& c = a.critical_path;
  EXPECT_TRUE(c.cluster_scope);
  EXPECT_EQ(c.blocks, 1u) << "one path for the cluster";
  EXPECT_EQ(c.handoffs, 1u);
  EXPECT_EQ(c.cross_cta_handoffs, 1u);
  EXPECT_EQ(c.trace_links, 1u);
  EXPECT_EQ(c.slowest_block.block_linear, 0u);
  EXPECT_EQ(c.slowest_block.ns, 260);
  EXPECT_THAT(Steps(a), ElementsAre(Step("CTA 1 consumer mma", 200),
                                    Step("CTA 0 producer (hand-off)", 1),
                                    Step("CTA 0 producer load", 59)));
  ASSERT_EQ(c.slowest_block_crossings.size(), 1u);
  const PathCrossing& x = c.slowest_block_crossings[0];
  EXPECT_EQ(x.from_rank, 1u);
  EXPECT_EQ(x.from_role, "consumer");
  EXPECT_EQ(x.from_unit, 1u);
  EXPECT_EQ(x.to_rank, 0u);
  EXPECT_EQ(x.to_role, "producer");
  EXPECT_EQ(x.to_unit, 0u);
  EXPECT_EQ(x.wait, "wait empty");
  EXPECT_EQ(x.at_ns, 201);
  // Regions carry their CTA: CTA 1's consumer's mma, CTA 0's producer's load.
  bool mma = false, load = false;
  for (const PathRegion& r : c.regions) {
    mma |= r.role == "consumer" && r.name == "mma" && r.cta_rank == 1 && r.path_ns == 200;
    load |= r.role == "producer" && r.name == "load" && r.cta_rank == 0 && r.path_ns == 59;
  }
  EXPECT_TRUE(mma);
  EXPECT_TRUE(load);
  bool bound = false;
  for (const Diagnosis& d : a.diagnosis) {
    if (d.kind != "bound") continue;
    bound = true;
    EXPECT_THAT(d.text, HasSubstr("CTA rank 1's consumer `mma` is on the cluster's critical "
                                  "path in 100% of clusters"));
    EXPECT_THAT(d.text, HasSubstr("crosses CTAs 1 time, from CTA rank 1's consumer into CTA "
                                  "rank 0's producer (`wait empty`)"));
  }
  EXPECT_TRUE(bound);
  const nlohmann::json j = CriticalPathJson(a);
  EXPECT_EQ(j["scope"], "cluster");
  EXPECT_EQ(j["cross_cta_handoffs"], 1);
  EXPECT_EQ(j["slowest_block_path"][0]["cta_rank"], 1);
  EXPECT_EQ(j["slowest_block_path"][2]["cta_rank"], 0);
  EXPECT_EQ(j["slowest_block_crossings"],
            nlohmann::json::parse(R"([{"from_rank": 1, "from_role": "consumer", "from_unit": 1,
                                       "to_rank": 0, "to_role": "producer", "to_unit": 0,
                                       "wait": "wait empty", "at_ns": 201}])"));
}

// The same units without a cluster (a 1x1 cluster is none): a path per block, each its
// unit that finished last, and none of the cluster fields in the JSON.
TEST(ClusterPathTest, WithoutAClusterEachBlockKeepsItsOwnPath) {
  const Analysis a = Analyze(SlowPeerConsumer(/*cluster=*/false));
  const CriticalPathAnalysis& c = a.critical_path;
  EXPECT_FALSE(c.cluster_scope);
  EXPECT_EQ(c.blocks, 2u);
  EXPECT_TRUE(c.per_unit_only);
  EXPECT_EQ(c.cross_cta_handoffs, 0u);
  EXPECT_TRUE(c.slowest_block_crossings.empty());
  EXPECT_EQ(c.slowest_block.block_linear, 0u);
  EXPECT_THAT(Steps(a), ElementsAre(Step("CTA 0 producer kernel", 10),
                                    Step("CTA 0 producer wait empty", 191),
                                    Step("CTA 0 producer load", 59)));
  for (const PathRegion& r : c.regions) EXPECT_EQ(r.cta_rank, 0u);
  const nlohmann::json j = CriticalPathJson(a);
  EXPECT_FALSE(j.contains("scope"));
  EXPECT_FALSE(j.contains("cross_cta_handoffs"));
  EXPECT_FALSE(j.contains("slowest_block_crossings"));
  for (const nlohmann::json& r : j["regions"]) EXPECT_FALSE(r.contains("cta_rank"));
  for (const nlohmann::json& s : j["slowest_block_path"]) EXPECT_FALSE(s.contains("cta_rank"));
}

// Two 1x2 clusters in a (2,2,1) grid: cluster 0 is blocks 0 (rank 0) and 2 (rank 1), cluster
// 1 blocks 1 and 3, so the buffer interleaves them (records 0-1, 2-3, 4-5, 6-7 are blocks
// 0..3). In each, rank 1's consumer (mma 0..m) releases rank 0's producer's wait on empty
// (10..m+1), which then loads for 59 ns; cluster 1's consumer is the slower (m 300 vs 200).
ClusterTrace InterleavedClusters() {
  ClusterTrace t = SlowPeerConsumer(/*cluster=*/true);
  const Dim3 grid{2, 2, 1};
  t.layout.grid = grid;
  t.layout.cluster = {1, 2, 1};
  t.units.clear();
  for (uint32_t c = 0; c < 2; ++c) {
    const int64_t m = c == 0 ? 200 : 300;
    const uint64_t producer = 2 * c, consumer = 2 * (c + 2) + 1;
    Flow flow;
    flow.id = c;
    flow.kind = FlowKind::kArrivalToRelease;
    flow.from = {consumer, 3, m};
    flow.to = {producer, 2, m + 1};
    flow.to.released_wait = 1;
    flow.barrier = 0;
    flow.completing = true;
    t.units.push_back(Unit(producer, {{0, 0, 0, m + 60}, {1, 1, 10, m + 1}, {2, 1, m + 1, m + 60}},
                           grid));
    t.units.back().flows = {flow};
    t.units.push_back(Unit(producer + 1, {{0, 0, 0, 100}, {3, 1, 0, 100}}, grid));
    t.units.push_back(Unit(consumer - 1, {{0, 0, 0, 50}, {2, 1, 0, 50}}, grid));
    t.units.push_back(Unit(consumer, {{0, 0, 0, m}, {3, 1, 0, m}}, grid));
    t.units.back().flows = {flow};
  }
  std::sort(t.units.begin(), t.units.end(), [](const UnitTimeline& a, const UnitTimeline& b) {
    return a.record_index < b.record_index;
  });
  return t;
}

TEST(ClusterPathTest, ClustersWhoseCtasAreNotConsecutiveBlocksEachGetTheirOwnPath) {
  const Analysis a = Analyze(InterleavedClusters());
  const CriticalPathAnalysis& c = a.critical_path;
  EXPECT_TRUE(c.cluster_scope);
  EXPECT_EQ(c.blocks, 2u) << "one path per cluster, not per row or per block";
  EXPECT_EQ(c.handoffs, 2u);
  EXPECT_EQ(c.cross_cta_handoffs, 2u);
  EXPECT_EQ(c.slowest_block.block_linear, 1u) << "cluster 1, by its rank-0 block";
  EXPECT_EQ(c.slowest_block.ns, 360);
  EXPECT_THAT(Steps(a), ElementsAre(Step("CTA 1 consumer mma", 300),
                                    Step("CTA 0 producer (hand-off)", 1),
                                    Step("CTA 0 producer load", 59)));
  ASSERT_EQ(c.slowest_block_crossings.size(), 1u);
  EXPECT_EQ(c.slowest_block_crossings[0].from_rank, 1u);
  EXPECT_EQ(c.slowest_block_crossings[0].to_rank, 0u);
  // Each cluster's consumer mma of rank 1 is on its path: 200 + 300 ns.
  bool mma = false;
  for (const PathRegion& r : c.regions) {
    mma |= r.role == "consumer" && r.name == "mma" && r.cta_rank == 1 && r.path_ns == 500 &&
           r.blocks == 2;
  }
  EXPECT_TRUE(mma);
}

}  // namespace
}  // namespace warptrace
