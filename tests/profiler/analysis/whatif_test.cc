// ParseSpeedups, PredictWhatIf and ComputeCausalProfile (profiler/analysis/whatif.h) on a
// hand-built two-unit timeline whose answers are worked out by hand: a producer warpgroup
// loads two tiles (100 ns each) and arrives on full after each; a consumer waits on full,
// then runs mma (50 ns) on each tile.
//
//   producer  [load 0..100] ^100 [load 100..200] ^200
//   consumer  [wait 0..100] [mma 100..150] [wait 150..200] [mma 200..250]
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/analysis/whatif.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

enum Site : uint32_t { kLoad, kMma, kWait, kArrive };

Timeline ProducerBoundTimeline() {
  Timeline t;
  TraceLayout& layout = t.layout;
  layout.grid = {1, 1, 1};
  layout.block = {256, 1, 1};
  layout.unit.kind = UnitKind::kWarpgroup;
  layout.unit_roles = {"producer", "consumer"};
  auto site = [&](const char* name, SiteKind kind) {
    SiteInfo s;
    s.id = static_cast<uint32_t>(layout.sites.size());
    s.name = name;
    s.kind = kind;
    layout.sites.push_back(s);
  };
  site("load", SiteKind::kRegion);
  site("mma", SiteKind::kRegion);
  site("wait full", SiteKind::kPhaseWait);
  site("arrive full", SiteKind::kBarrierArrive);
  UnitTimeline producer;
  producer.record_index = 0;
  producer.unit_index = 0;
  producer.start_ns = 0;
  producer.end_ns = 200;
  producer.slices = {{kLoad, 0, 0, 100}, {kLoad, 0, 100, 200}};
  producer.instants = {{kArrive, 2, 100, 0, 0}, {kArrive, 5, 200, 0, 1}};
  UnitTimeline consumer;
  consumer.record_index = 1;
  consumer.unit_index = 1;
  consumer.start_ns = 0;
  consumer.end_ns = 250;
  consumer.slices = {{kWait, 0, 0, 100}, {kMma, 0, 100, 150}, {kWait, 0, 150, 200},
                     {kMma, 0, 200, 250}};
  for (uint32_t i = 0; i < 2; ++i) {
    Flow f;
    f.id = i;
    f.kind = FlowKind::kArrivalToRelease;
    f.from = {0, i == 0 ? 2u : 5u, i == 0 ? 100 : 200, FlowEnd::kNone, false, FlowEnd::kNone};
    f.to = {1, i == 0 ? 1u : 5u, i == 0 ? 100 : 200, FlowEnd::kNone, false, i == 0 ? 0u : 2u};
    f.barrier = 0;
    f.phase = i;
    f.completing = true;
    producer.flows.push_back(f);
    consumer.flows.push_back(f);
  }
  t.units = {producer, consumer};
  t.origin_ns = 0;
  t.end_ns = 250;
  return t;
}

WhatIfPrediction Predict(const Timeline& t, const std::string& spec) {
  absl::StatusOr<std::vector<Speedup>> s = ParseSpeedups({spec});
  EXPECT_THAT(s, IsOk());
  absl::StatusOr<WhatIfPrediction> p = PredictWhatIf(t, *s, {.analyze = false});
  EXPECT_THAT(p, IsOk());
  return p.ok() ? *std::move(p) : WhatIfPrediction{};
}

TEST(ParseSpeedupsTest, ReadsFactorsShorteningsRolesAndSeveralSpecs) {
  absl::StatusOr<std::vector<Speedup>> s =
      ParseSpeedups({"mma=0.5; producer:load=-2us", "copy A tile = 0.8"});
  ASSERT_THAT(s, IsOk());
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0].name, "mma");
  EXPECT_EQ((*s)[0].role, "");
  EXPECT_EQ((*s)[0].factor, 0.5);
  EXPECT_EQ((*s)[1].role, "producer");
  EXPECT_EQ((*s)[1].name, "load");
  EXPECT_EQ((*s)[1].shorten_ns, 2000);
  EXPECT_EQ((*s)[2].name, "copy A tile");
  EXPECT_EQ((*s)[2].factor, 0.8);
}

TEST(ParseSpeedupsTest, RejectsMalformedSpecs) {
  for (const char* bad : {"mma", "=0.5", "mma=0", "mma=-1", "mma=x", "mma=-5xs", ":mma=0.5",
                          "mma=0.5;", "mma=inf"}) {
    EXPECT_THAT(ParseSpeedups({bad}).status(), StatusIs(absl::StatusCode::kInvalidArgument))
        << bad;
  }
}

TEST(PredictWhatIfTest, SpeedingUpTheBottleneckShrinksTheWaitsBehindIt) {
  const WhatIfPrediction p = Predict(ProducerBoundTimeline(), "producer:load=0.5");
  EXPECT_EQ(p.measured_ns, 250);
  EXPECT_EQ(p.predicted_ns, 150);  // loads 0..50, 50..100; mma 50..100, 100..150
  EXPECT_EQ(p.instances, 2u);
  EXPECT_EQ(p.handoff_edges, 2u);
  ASSERT_EQ(p.roles.size(), 2u);
  EXPECT_EQ(p.roles[1].role, "consumer");
  EXPECT_EQ(p.roles[1].measured_wait_ns, 150);
  EXPECT_EQ(p.roles[1].predicted_wait_ns, 50);  // the first wait only; the second returns
  const UnitTimeline& consumer = p.timeline.units[1];
  EXPECT_EQ(consumer.slices[1].begin_ns, 50);
  EXPECT_EQ(consumer.slices[3].end_ns, 150);
  EXPECT_EQ(consumer.flows[1].to.ns, 100);  // the predicted release
}

TEST(PredictWhatIfTest, SpeedingUpTheWaitingSideOnlyLengthensItsWaits) {
  const WhatIfPrediction p = Predict(ProducerBoundTimeline(), "mma=0.5");
  EXPECT_EQ(p.predicted_ns, 225);  // the last mma still starts when the last load lands
  EXPECT_EQ(p.roles[1].predicted_wait_ns, 175);
}

TEST(PredictWhatIfTest, ShorteningByADurationAndItsLimit) {
  EXPECT_EQ(Predict(ProducerBoundTimeline(), "load=-40ns").predicted_ns, 170);
  absl::StatusOr<WhatIfPrediction> p =
      PredictWhatIf(ProducerBoundTimeline(), *ParseSpeedups({"load=-101ns"}));
  EXPECT_THAT(p.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr("is longer than an instance of 'load'")));
}

TEST(PredictWhatIfTest, AFactorOfOneChangesNothing) {
  const Timeline t = ProducerBoundTimeline();
  const WhatIfPrediction p = Predict(t, "load=1");
  EXPECT_EQ(p.predicted_ns, p.measured_ns);
  for (size_t u = 0; u < t.units.size(); ++u) {
    EXPECT_EQ(p.timeline.units[u].slices, t.units[u].slices);
  }
}

TEST(PredictWhatIfTest, WithoutHandOffsItRefusesToGuess) {
  Timeline t = ProducerBoundTimeline();
  for (UnitTimeline& u : t.units) u.flows.clear();
  EXPECT_THAT(PredictWhatIf(t, *ParseSpeedups({"load=0.5"})).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no recorded hand-offs")));
}

TEST(CausalProfileTest, RanksTheBottleneckFirstAndSaysTheRestBuysNothing) {
  absl::StatusOr<CausalProfile> profile = ComputeCausalProfile(ProducerBoundTimeline());
  ASSERT_THAT(profile, IsOk());
  ASSERT_EQ(profile->rows.size(), 2u);
  EXPECT_EQ(profile->rows[0].role, "producer");
  EXPECT_EQ(profile->rows[0].name, "load");
  // 10%: loads 90 ns, the last mma ends at 230; 100%: the loads take no time, 100 ns.
  EXPECT_EQ(profile->rows[0].predicted_ns[0], 230);
  EXPECT_EQ(profile->rows[0].predicted_ns[3], 100);
  EXPECT_DOUBLE_EQ(profile->rows[0].saving[3], 0.6);
  EXPECT_FALSE(profile->rows[0].flat);
  EXPECT_EQ(profile->rows[1].name, "mma");
  // Only the last mma is on the path: 100% faster saves its 50 ns of 250.
  EXPECT_DOUBLE_EQ(profile->rows[1].saving[3], 0.2);
}

}  // namespace
}  // namespace warptrace
