// Runs the warptrace binary (a data dependency) on saved synthesized pipeline traces: the
// analysis and diagnosis of `dump`, and `diff` with its table, JSON and regression gate.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/ADT/Optional.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "nlohmann/json.hpp"
#include "profiler/imports/sidecar.h"
#include "profiler/testing/pipeline_synthesizer.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::PipelineSpec;
using ::warptrace::testing::PipelineTrace;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

PipelineSpec Noisy(uint32_t seed) {
  PipelineSpec spec;
  spec.blocks = 8;
  spec.consumers = 2;
  spec.load_cycles = 100;
  spec.mma_cycles = 300;
  spec.jitter_cycles = 20;
  spec.seed = seed;
  return spec;
}

class WarptraceAnalysisCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_FALSE(llvm::sys::fs::create_directories(dir_));
  }

  std::string Path(const std::string& name) const { return absl::StrCat(dir_, "/", name); }

  std::string Save(const std::string& name, const PipelineSpec& spec) {
    absl::StatusOr<PipelineTrace> pipeline = testing::SynthesizePipeline(spec);
    EXPECT_THAT(pipeline, IsOk());
    const std::string prefix = Path(name);
    EXPECT_THAT(SaveTrace(prefix, pipeline->layout, pipeline->words), IsOk());
    return prefix;
  }

  RunResult Run(const std::vector<std::string>& args) {
    const std::string binary =
        absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/profiler/cli/warptrace");
    const std::string out_path = Path("stdout.txt"), err_path = Path("stderr.txt");
    std::vector<llvm::StringRef> argv = {binary};
    for (const std::string& a : args) argv.push_back(a);
    const llvm::Optional<llvm::StringRef> redirects[] = {llvm::None, llvm::StringRef(out_path),
                                                         llvm::StringRef(err_path)};
    std::string error;
    RunResult r;
    r.exit_code = llvm::sys::ExecuteAndWait(binary, argv, llvm::None, redirects, 60, 0, &error);
    EXPECT_THAT(error, IsEmpty()) << "could not run " << binary;
    r.out = ReadFile(out_path);
    r.err = ReadFile(err_path);
    return r;
  }

  std::string dir_;
};

TEST_F(WarptraceAnalysisCliTest, SummaryPrintsTheDiagnosisAfterTheTable) {
  PipelineSpec spec;
  spec.load_cycles = 300;
  spec.mma_cycles = 100;
  const RunResult r = Run({"dump", "--input=" + Save("pb", spec), "--summary"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t at = r.out.find("diagnosis:\n  1. ");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_GT(at, r.out.find("region"));
  // A saved buffer carries no hand-off links: the critical path is per unit only.
  EXPECT_THAT(r.out.substr(at), HasSubstr("1. producer-bound: consumer units idle 68% waiting "
                                          "on full[*]; the producer's busiest region is `load`"));
  EXPECT_THAT(r.out.substr(at), HasSubstr("critical path is per unit only"));
  EXPECT_THAT(r.out.substr(at), HasSubstr("overhead: "));
}

TEST_F(WarptraceAnalysisCliTest, AnalysisFlagWritesTheDocumentedJson) {
  PipelineSpec spec = Noisy(1);
  spec.block_scale[5] = 3;
  const RunResult r = Run({"dump", "--input=" + Save("slow_block", spec),
                           "--analysis=" + Path("analysis.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("diagnosis:")));  // only with --summary
  const nlohmann::json j = nlohmann::json::parse(ReadFile(Path("analysis.json")));
  EXPECT_EQ(j["format"], "warptrace-analysis");
  EXPECT_EQ(j["kernel"], "pipeline");
  EXPECT_EQ(j["units"], 8 * 3);
  EXPECT_EQ(j["roles"].size(), 2u);
  EXPECT_EQ(j["critical_path"]["per_unit_only"], true);
  ASSERT_EQ(j["grid"]["outlier_blocks"].size(), 1u);
  EXPECT_EQ(j["grid"]["outlier_blocks"][0]["block"], 5);
  EXPECT_EQ(j["grid"]["outlier_blocks"][0]["sm"], 1);
  EXPECT_EQ(j["grid"]["busiest_sm"]["sm"], 1);
  EXPECT_FALSE(j["diagnosis"].empty());
}

TEST_F(WarptraceAnalysisCliTest, DiffRanksTheSlowerRegionFirstAndGatesOnIt) {
  PipelineSpec slower = Noisy(2);
  slower.mma_cycles = 330;
  const std::string before = Save("before", Noisy(1));
  const std::string after = Save("after", slower);
  RunResult r = Run({"diff", "--before=" + before, "--after=" + after,
                     "--json=" + Path("diff.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t table = r.out.find("regions (");
  ASSERT_NE(table, std::string::npos) << r.out;
  const size_t first_row = r.out.find('\n', r.out.find('\n', table) + 1) + 1;
  EXPECT_EQ(r.out.substr(first_row, r.out.find('\n', first_row) - first_row).substr(0, 13),
            "consumer  mma");
  const nlohmann::json j = nlohmann::json::parse(ReadFile(Path("diff.json")));
  EXPECT_EQ(j["rows"][0]["name"], "mma");
  EXPECT_EQ(j["rows"][0]["significant"], true);
  EXPECT_LT(j["rows"][0]["p_value"].get<double>(), 0.01);

  r = Run({"diff", "--before=" + before, "--after=" + after, "--fail-if-slower=5"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("consumer mma got "));
  r = Run({"diff", "--before=" + before, "--after=" + after, "--fail-if-slower=5",
           "--regions=load"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Run({"diff", "--before=" + before, "--after=" + after, "--fail-if-slower=50"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(WarptraceAnalysisCliTest, DiffOfTwoRunsOfTheSameKernelFindsNothing) {
  const RunResult r = Run({"diff", "--before=" + Save("a", Noisy(1)),
                           "--after=" + Save("b", Noisy(2)), "--fail-if-slower=1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("regions (0 of "));
}

TEST_F(WarptraceAnalysisCliTest, DiffNeedsBothTraces) {
  const RunResult r = Run({"diff", "--before=" + Save("a", Noisy(1))});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--after=PREFIX is required"));
  const RunResult missing = Run({"diff", "--before=" + Path("nope"), "--after=" + Path("nope")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("warptrace: error: "));
}

}  // namespace
}  // namespace warptrace
