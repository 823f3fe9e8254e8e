// Tests of examples/example_main.h: the result check that makes an example fail loudly,
// output directory resolution, and the common flags' validation.
#include "examples/example_main.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "absl/flags/flag.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "tests/status_matchers.h"

namespace warptrace::examples {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::StatusIs;

TEST(CompareToReferenceTest, NamesTheWorstElementItsIndexAndErrorWhenOneIsWrong) {
  const std::vector<float> got = {1.0f, 2.0f, 3.5f, 4.0f, 5.0f, 6.01f};
  const std::vector<double> expected = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  const Comparison c = CompareToReference("C", got, expected, 1e-4, 1e-4, /*row_length=*/3);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.count, 6u);
  EXPECT_EQ(c.mismatches, 2u);
  EXPECT_EQ(c.worst_index, 2u);
  EXPECT_DOUBLE_EQ(c.worst_error, 0.5);
  EXPECT_EQ(c.Describe(),
            "C differs from the CPU reference in 2 of 6 values; worst at C[0][2]: got 3.5, "
            "expected 3, |error| 0.5 > tolerance 0.0004");
}

TEST(CompareToReferenceTest, AcceptsErrorsWithinTheTolerance) {
  const std::vector<float> got = {100.005f, -2.0f};
  const std::vector<double> expected = {100.0, -2.0};
  const Comparison c = CompareToReference("y", got, expected, 1e-4, 0.0);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.worst_index, 0u);
  EXPECT_THAT(c.Describe(), HasSubstr("y matches the CPU reference: 2 values, worst |error| "));
  EXPECT_THAT(c.Describe(), HasSubstr(" at y[0]"));
}

TEST(CompareToReferenceTest, NanNeverMatchesAndIsTheWorst) {
  const std::vector<float> got = {1.5f, std::numeric_limits<float>::quiet_NaN(), 0.0f};
  const std::vector<double> expected = {1.0, 2.0, 3.0};
  const Comparison c = CompareToReference("sum", got, expected, 1e-5, 1e-5);
  EXPECT_EQ(c.mismatches, 3u);
  EXPECT_EQ(c.worst_index, 1u);
  EXPECT_TRUE(std::isinf(c.worst_error));
}

TEST(CompareToReferenceTest, ALengthMismatchCountsTheMissingElements) {
  const std::vector<float> got = {1.0f};
  const std::vector<double> expected = {1.0, 2.0, 3.0};
  const Comparison c = CompareToReference("C", got, expected, 1e-4, 1e-4);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.count, 3u);
  EXPECT_EQ(c.mismatches, 2u);
}

TEST(CompareToReferenceTest, NothingComparedIsNotASuccess) {
  const Comparison c = CompareToReference("C", {}, {}, 1e-4, 1e-4);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.Describe(), "C: nothing was compared");
}

TEST(ResolveOutputDirectoryTest, RelativePathsAreTakenFromTheBazelRunDirectory) {
  setenv("BUILD_WORKING_DIRECTORY", "/home/me/src", 1);
  EXPECT_EQ(ResolveOutputDirectory(""), "/home/me/src/warptrace_out");
  EXPECT_EQ(ResolveOutputDirectory("traces/today"), "/home/me/src/traces/today");
  EXPECT_EQ(ResolveOutputDirectory("../traces"), "/home/me/traces");
  EXPECT_EQ(ResolveOutputDirectory("/tmp/t"), "/tmp/t");
  unsetenv("BUILD_WORKING_DIRECTORY");
}

TEST(ResolveOutputDirectoryTest, WithoutBazelRunRelativePathsAreTakenFromTheCurrentDirectory) {
  unsetenv("BUILD_WORKING_DIRECTORY");
  const std::string resolved = ResolveOutputDirectory("");
  EXPECT_EQ(resolved.front(), '/');
  EXPECT_THAT(resolved, ::testing::EndsWith("/warptrace_out"));
}

TEST(ExitStatusOfMakeErrorTest, ABuildFailureHasItsOwnStatusNotTheBadFlagOne) {
  KernelBuilder b("broken");
  b.BeginRegion("open");  // left open: Build() rejects it
  const absl::Status build = b.Build().status();
  ASSERT_TRUE(absl::IsInvalidArgument(build)) << build;
  EXPECT_EQ(ExitStatusOfMakeError(build), kExitBuildFailed);
  EXPECT_NE(kExitBuildFailed, kExitUsage);
  // A shape the kernel library rejects before building is a bad flag value.
  EXPECT_EQ(ExitStatusOfMakeError(absl::InvalidArgumentError("m must be positive")), kExitUsage);
  EXPECT_EQ(ExitStatusOfMakeError(absl::InternalError("x")), kExitFailed);
}

class OptionsFromFlagsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    absl::SetFlag(&FLAGS_unit, "auto");
    absl::SetFlag(&FLAGS_placement, "auto");
    absl::SetFlag(&FLAGS_device, "auto");
    absl::SetFlag(&FLAGS_arch, "");
    absl::SetFlag(&FLAGS_out, "");
    absl::SetFlag(&FLAGS_profile, true);
    absl::SetFlag(&FLAGS_barrier_waits, false);
  }
};

TEST_F(OptionsFromFlagsTest, TranslatesTheCommonFlagsIntoRunOptions) {
  absl::SetFlag(&FLAGS_unit, "warp");
  absl::SetFlag(&FLAGS_placement, "shared");
  absl::SetFlag(&FLAGS_device, "host");
  absl::SetFlag(&FLAGS_arch, "sm_90a");
  absl::SetFlag(&FLAGS_out, "/tmp/x");
  absl::SetFlag(&FLAGS_profile, false);
  absl::SetFlag(&FLAGS_barrier_waits, true);
  absl::StatusOr<ExampleOptions> options = OptionsFromFlags("gemm");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->run.profile.unit, UnitSpec::Warp());
  EXPECT_EQ(options->run.profile.placement, Placement::kShared);
  EXPECT_EQ(options->run.device, DeviceChoice::kHost);
  EXPECT_EQ(options->run.device_options.cuda.arch, "sm_90a");
  EXPECT_FALSE(options->run.profile.enabled);
  EXPECT_TRUE(options->run.profile.policy.barrier_waits);
  EXPECT_FALSE(options->run.profile.policy.loop_iterations);
  EXPECT_EQ(options->TracePath(), "/tmp/x/gemm.trace.json");
  EXPECT_EQ(options->PerfettoPath(), "/tmp/x/gemm.pftrace");
  EXPECT_EQ(options->SavePrefix(), "/tmp/x/gemm");
  EXPECT_EQ(options->VerdictPath(), "/tmp/x/gemm.verdict.json");
}

TEST_F(OptionsFromFlagsTest, UnitAutoLeavesTheChoiceToThePlan) {
  absl::StatusOr<ExampleOptions> options = OptionsFromFlags("gemm");  // the default: auto
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_FALSE(options->run.profile.unit.has_value());
  absl::SetFlag(&FLAGS_unit, "warpgroup");
  options = OptionsFromFlags("gemm");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->run.profile.unit, UnitSpec::Warpgroup());
}

TEST_F(OptionsFromFlagsTest, RejectsACustomUnitAndMalformedArchitectures) {
  absl::SetFlag(&FLAGS_unit, "custom");
  EXPECT_THAT(OptionsFromFlags("gemm").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--unit=custom")));
  absl::SetFlag(&FLAGS_unit, "warp");
  for (const char* arch : {"sm_", "90", "sm_9x0", "compute_90", "sm_a"}) {
    absl::SetFlag(&FLAGS_arch, arch);
    EXPECT_THAT(OptionsFromFlags("gemm").status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--arch=")))
        << arch;
  }
}

}  // namespace
}  // namespace warptrace::examples
