// Diagnose (profiler/analysis/diagnosis.h) on hand-built Analyses: the cross-CTA stall
// finding of a cluster kernel (its end-to-end case on real traces is in
// tests/examples/examples_test.cc, the cluster GEMM with one CTA's consumer slowed).
#include "profiler/analysis/diagnosis.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/analysis/analysis.h"

namespace warptrace {
namespace {

CrossCtaWait Held(uint32_t waiter_rank, uint32_t releaser_rank, double share) {
  CrossCtaWait w;
  w.waiter_role = "producer";
  w.waiter_rank = waiter_rank;
  w.releaser_role = "consumer";
  w.releaser_rank = releaser_rank;
  w.family = "empty[*]";
  w.waits = 12;
  w.waited_ns = 1000;
  w.share = share;
  return w;
}

TEST(DiagnosisTest, NamesTheCtaWhoseReleasesHeldItsPeerMost) {
  Analysis a;
  a.cluster_size = 2;
  a.cross_cta_waits = {Held(1, 0, 0.08), Held(0, 1, 0.41)};
  const std::vector<Diagnosis> findings = Diagnose(a);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].kind, "cross_cta");
  EXPECT_DOUBLE_EQ(findings[0].score, 0.41);
  EXPECT_EQ(findings[0].text,
            "cross-CTA stall: CTA 1's consumer held CTA 0's producer: the shared stage "
            "(empty[*]) waited for both CTAs to release it; CTA rank 0's producer units spent "
            "41% of their time waiting for CTA rank 1's consumer after their own CTA's release "
            "(12 empty[*] phases completed by its remote arrivals)");
}

TEST(DiagnosisTest, CountsTheCtasOfALargerCluster) {
  Analysis a;
  a.cluster_size = 4;
  a.cross_cta_waits = {Held(2, 3, 0.2)};
  const std::vector<Diagnosis> findings = Diagnose(a);
  ASSERT_FALSE(findings.empty());
  EXPECT_THAT(findings[0].text, ::testing::HasSubstr("waited for the 4 CTAs to release it"));
}

// The producer waits 45% of its time (consumer-bound), 41% of it held by the peer CTA: the
// cross-CTA stall says why, so it comes first although its score is lower.
TEST(DiagnosisTest, PutsACrossCtaStallExplainingTheBoundRolesWaitsBeforeIt) {
  Analysis a;
  a.cluster_size = 2;
  RoleAnalysis producer;
  producer.role = "producer";
  producer.waiting_share = 0.45;
  producer.waits.push_back({"empty[*]", 10, 100, 0.45});
  RoleAnalysis consumer;
  consumer.role = "consumer";
  a.roles = {producer, consumer};
  a.critical_path.per_unit_only = true;
  a.cross_cta_waits = {Held(0, 1, 0.41)};
  const std::vector<Diagnosis> findings = Diagnose(a);
  ASSERT_GE(findings.size(), 2u);
  EXPECT_EQ(findings[0].kind, "cross_cta");
  EXPECT_EQ(findings[1].kind, "bound");
  a.cross_cta_waits = {Held(0, 1, 0.2)};  // less than half of the waits: ranked by score
  const std::vector<Diagnosis> ranked = Diagnose(a);
  ASSERT_GE(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].kind, "bound");
  EXPECT_EQ(ranked[1].kind, "cross_cta");
}

TEST(DiagnosisTest, NamesNoCrossCtaStallBelowTheWaitShare) {
  Analysis a;
  a.cluster_size = 2;
  a.cross_cta_waits = {Held(0, 1, kMinWaitShare / 2)};
  for (const Diagnosis& d : Diagnose(a)) EXPECT_NE(d.kind, "cross_cta") << d.text;
}

}  // namespace
}  // namespace warptrace
