// CudaTarget: parsing, names, the features each architecture has (PTX ISA "Target ISA
// notes"), and TargetRequirements resolving a kernel's target or naming what is missing.
#include "jit/target/cuda_target.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

CudaTarget T(const char* name) { return *CudaTarget::Parse(name); }

TEST(CudaTargetTest, ParsesAndPrintsEveryForm) {
  for (const char* name : {"sm_80", "sm_86", "sm_90", "sm_90a", "sm_100a", "sm_100f", "sm_120",
                           "sm_103a", "sm_110f"}) {
    absl::StatusOr<CudaTarget> t = CudaTarget::Parse(name);
    ASSERT_THAT(t, IsOk()) << name;
    EXPECT_EQ(t->ToString(), name);
  }
  EXPECT_EQ(T("sm_90a").ComputeCapability(), 90);
  EXPECT_EQ(T("sm_100f").major(), 10);
  EXPECT_EQ(T("sm_86").minor(), 6);
  EXPECT_EQ(T("sm_90a").variant(), CudaTarget::Variant::kArchSpecific);
  EXPECT_EQ(CudaTarget::Default().ToString(), "sm_90");
}

TEST(CudaTargetTest, RejectsWhatIsNotAnArchitecture) {
  for (const char* name : {"", "sm_", "sm_9", "90", "sm_90b", "compute_90", "sm_9x", "sm_1000",
                           "SM_90", "sm_90aa", "sm_05"}) {
    EXPECT_THAT(CudaTarget::Parse(name),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr(std::string("CUDA architecture '") + name + "'"),
                               HasSubstr("expected sm_<major><minor>"))))
        << name;
  }
}

TEST(CudaTargetTest, FeaturesFollowThePtxIsaTargetNotes) {
  EXPECT_TRUE(T("sm_80").Has(TargetFeature::kCpAsync));
  EXPECT_FALSE(T("sm_75").Has(TargetFeature::kCpAsync));
  EXPECT_FALSE(T("sm_80").Has(TargetFeature::kTma));
  EXPECT_TRUE(T("sm_90").Has(TargetFeature::kTma));
  EXPECT_TRUE(T("sm_90").Has(TargetFeature::kClusters));
  EXPECT_TRUE(T("sm_100").Has(TargetFeature::kBulkCopy));
  // wgmma: sm_90a only.
  EXPECT_FALSE(T("sm_90").Has(TargetFeature::kWgmma));
  EXPECT_TRUE(T("sm_90a").Has(TargetFeature::kWgmma));
  EXPECT_FALSE(T("sm_100a").Has(TargetFeature::kWgmma));
  EXPECT_FALSE(T("sm_120a").Has(TargetFeature::kWgmma));
  // setmaxnreg: sm_90a and the a/f variants after it.
  EXPECT_TRUE(T("sm_90a").Has(TargetFeature::kSetMaxNReg));
  EXPECT_FALSE(T("sm_100").Has(TargetFeature::kSetMaxNReg));
  EXPECT_TRUE(T("sm_100a").Has(TargetFeature::kSetMaxNReg));
  EXPECT_TRUE(T("sm_120f").Has(TargetFeature::kSetMaxNReg));
  // tcgen05: the a/f variants of sm_100, sm_103, sm_110; not consumer Blackwell (sm_120).
  EXPECT_TRUE(T("sm_100a").Has(TargetFeature::kTcgen05));
  EXPECT_TRUE(T("sm_103f").Has(TargetFeature::kTcgen05));
  EXPECT_FALSE(T("sm_100").Has(TargetFeature::kTcgen05));
  EXPECT_FALSE(T("sm_120a").Has(TargetFeature::kTcgen05));
  EXPECT_FALSE(T("sm_90a").Has(TargetFeature::kTcgen05));
}

TEST(CudaTargetTest, WithFeatureChoosesTheArchitectureSpecificVariant) {
  EXPECT_EQ(T("sm_90").WithFeature(TargetFeature::kWgmma)->ToString(), "sm_90a");
  EXPECT_EQ(T("sm_90a").WithFeature(TargetFeature::kTma)->ToString(), "sm_90a");
  EXPECT_EQ(T("sm_100").WithFeature(TargetFeature::kTcgen05)->ToString(), "sm_100a");
  EXPECT_FALSE(T("sm_100").WithFeature(TargetFeature::kWgmma).has_value());
  EXPECT_FALSE(T("sm_80").WithFeature(TargetFeature::kTma).has_value());
}

TEST(TargetRequirementsTest, KeepsTheFirstUseOfEachFeatureInOrder) {
  TargetRequirements r;
  EXPECT_TRUE(r.empty());
  r.Add(TargetFeature::kTma, "kernel k > loop k > tma copy a");
  r.Add(TargetFeature::kWgmma, "kernel k > loop k > mma group mma");
  r.Add(TargetFeature::kTma, "kernel k > loop k > tma copy b");
  ASSERT_EQ(r.uses().size(), 2u);
  EXPECT_EQ(*r.FirstUse(TargetFeature::kTma), "kernel k > loop k > tma copy a");
  EXPECT_EQ(r.FirstUse(TargetFeature::kCpAsync), nullptr);
  EXPECT_TRUE(r.Has(TargetFeature::kWgmma));
}

TEST(TargetRequirementsTest, ResolvesTheVariantAndSaysWhichUseNeedsIt) {
  TargetRequirements r;
  r.Add(TargetFeature::kTma, "kernel k > tma copy a");
  r.Add(TargetFeature::kWgmma, "kernel k > mma group mma");
  EXPECT_THAT(r.Resolve(T("sm_90")), IsOkAndHolds(T("sm_90a")));
  EXPECT_THAT(r.Resolve(T("sm_90a")), IsOkAndHolds(T("sm_90a")));
  ASSERT_NE(r.FirstVariantUse(T("sm_90")), nullptr);
  EXPECT_EQ(r.FirstVariantUse(T("sm_90"))->path, "kernel k > mma group mma");
  EXPECT_EQ(r.FirstVariantUse(T("sm_90a")), nullptr);
  TargetRequirements none;
  EXPECT_THAT(none.Resolve(T("sm_80")), IsOkAndHolds(T("sm_80")));
}

// A wgmma kernel on a Blackwell GPU used to stay sm_100 and fail inside NVRTC on a
// static_assert saying "compile with sm_90a", which cannot run there.
TEST(TargetRequirementsTest, AFeatureTheGenerationLacksNamesTheConstructAndTheTarget) {
  TargetRequirements r;
  r.Add(TargetFeature::kWgmma, "kernel gemm > role consumer > mma group mma");
  EXPECT_THAT(r.Resolve(T("sm_100")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("kernel gemm > role consumer > mma group mma: uses wgmma, "
                                       "which exists on sm_90a only"),
                             HasSubstr("the target is sm_100"))));
  TargetRequirements tma;
  tma.Add(TargetFeature::kTma, "kernel k > tma copy a");
  EXPECT_THAT(tma.Resolve(T("sm_80")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("uses TMA, which exists on sm_90 and later; the target is "
                                 "sm_80")));
}

}  // namespace
}  // namespace warptrace
