// Tests of examples/example_main.h: the result check that makes an example fail loudly,
// output directory resolution, the common flags' validation, and one run of an example (one
// decode of its buffer, the files the dump front end writes).
#include "examples/example_main.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/kernels/reduction.h"
#include "jit/kernels/warp_specialized_pipeline.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/trace/decode.h"
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

TEST(CompareSampledRowsTest, NamesTheWorstElementWhereItIsInTheWholeMatrix) {
  // Rows 3 and 7 of a 10 x 4 matrix were checked; the worst is column 2 of the second one.
  const std::vector<float> got = {1, 1, 1, 1, 2, 2, 2.5f, 2};
  const std::vector<double> expected = {1, 1, 1, 1, 2, 2, 2, 2};
  const std::vector<uint32_t> rows = {3, 7};
  const Comparison c = CompareSampledRows("C", got, expected, rows, 4, 0, 1e-3);
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_EQ(c.worst_index, 7u * 4u + 2u);
  EXPECT_THAT(c.Describe(), HasSubstr("worst at C[7][2]: got 2.5, expected 2"));
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
  ASSERT_TRUE(options->run.device_options.cuda.target.has_value());
  EXPECT_EQ(options->run.device_options.cuda.target->ToString(), "sm_90a");
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


// RunExample as the example binaries run it, on the host backend: the launch's buffer is
// decoded once (by RunKernel's one dump, which writes the traces and the report and hands the
// summary and the analysis back), and what it wrote is what the dump front end writes from
// the saved buffer.
class RunExampleTest : public ::testing::TestWithParam<const char*> {};

absl::StatusOr<ExampleProblem> ProblemNamed(absl::string_view name) {
  absl::StatusOr<Kernel> kernel =
      name == "reduction"
          ? Reduction(ReductionShape{.n = 2048, .blocks = 4, .threads = 128})
          : WarpSpecializedPipeline(PipelineShape{});
  if (!kernel.ok()) return kernel.status();
  struct Data {
    std::vector<float> a, b, c;
  };
  auto data = std::make_shared<Data>();
  ExampleProblem problem;
  problem.description = std::string(name);
  problem.kernel = *std::move(kernel);
  if (name == "reduction") {
    data->a.assign(2048, 0.5f);
    data->c.assign(1, 0.0f);
    problem.args = {KernelArg::In(absl::MakeConstSpan(data->a)),
                    KernelArg::Out(absl::MakeSpan(data->c))};
    problem.check = [data] {
      return CompareToReference("sum", data->c, std::vector<double>{1024.0}, 1e-6, 1e-6);
    };
  } else {
    const PipelineShape shape;
    data->a.assign(shape.m * shape.k, 0.25f);
    data->b.assign(shape.k * shape.n, 2.0f);
    data->c.assign(shape.m * shape.n, 0.0f);
    problem.args = {KernelArg::In(absl::MakeConstSpan(data->a)),
                    KernelArg::In(absl::MakeConstSpan(data->b)),
                    KernelArg::Out(absl::MakeSpan(data->c))};
    problem.check = [data, shape] {
      return CompareToReference("C", data->c,
                                std::vector<double>(data->c.size(), 0.5 * shape.k), 1e-5,
                                1e-5);
    };
  }
  problem.storage = data;
  return problem;
}

std::string Slurp(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path, {.register_as_input = false});
  return text.ok() ? *text : "(unreadable: " + std::string(text.status().message()) + ")";
}

TEST_P(RunExampleTest, DecodesTheBufferOnceAndWritesWhatTheFrontEndWrites) {
  const std::string name = GetParam();
  ExampleOptions options;
  options.name = name;
  options.run.device = DeviceChoice::kHost;
  options.run.device_options.host.num_virtual_sms = 2;
  options.out_dir = TestTempPath(absl::StrCat("run_example_", name));
  // The host backend's compile cache (and the NVRTC check's) live in the test's directory.
  setenv("WARPTRACE_CACHE_DIR", TestTempPath("cache").c_str(), 1);
  absl::StatusOr<ExampleProblem> problem = ProblemNamed(name);
  ASSERT_TRUE(problem.ok()) << problem.status();

  const uint64_t decodes_before = DecodeCount();
  ASSERT_EQ(RunExample(options, *problem), kExitOk);
  EXPECT_EQ(DecodeCount() - decodes_before, 1u) << "decodes of the buffer in one example run";

  // The saved buffer, dumped again by the front end, gives the same files byte for byte.
  absl::StatusOr<LoadedDump> loaded = LoadForDump(options.SavePrefix(), 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  DumpRequest again;
  const std::string dir = options.out_dir;
  again.traces.resize(2);
  again.traces[0].format = TraceFormat::kPerfetto;
  again.traces[0].path = dir + "/again.pftrace";
  again.traces[1].path = dir + "/again.json";
  again.report_path = dir + "/again.verdict.json";
  const DumpOutcome outcome = DumpToFiles(loaded->trace.layout, loaded->trace.words, again);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.written.size(), 3u);
  const std::string chrome = Slurp(options.TracePath());
  EXPECT_THAT(chrome, HasSubstr("\"traceEvents\""));
  EXPECT_EQ(chrome, Slurp(dir + "/again.json"));
  EXPECT_EQ(Slurp(options.PerfettoPath()), Slurp(dir + "/again.pftrace"));
  EXPECT_EQ(Slurp(options.VerdictPath()), Slurp(dir + "/again.verdict.json"));
}

INSTANTIATE_TEST_SUITE_P(Examples, RunExampleTest,
                         ::testing::Values("reduction", "warp_specialized_pipeline"));

}  // namespace
}  // namespace warptrace::examples
