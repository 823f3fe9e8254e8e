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
    // The redirects do not truncate: a shorter output would keep the last one's tail.
    llvm::sys::fs::remove(out_path);
    llvm::sys::fs::remove(err_path);
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

TEST_F(WarptraceAnalysisCliTest, SummaryAndAnalysisCarryTheCausalProfileUnlessTurnedOff) {
  PipelineSpec spec = Noisy(3);
  spec.handoff_payloads = true;
  const std::string prefix = Save("linked", spec);
  RunResult r = Run({"dump", "--input=" + prefix, "--summary",
                     "--analysis=" + Path("analysis.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t diagnosis = r.out.find("diagnosis:\n");
  const size_t profile = r.out.find("causal profile (predicted kernel time");
  ASSERT_NE(profile, std::string::npos) << r.out;
  EXPECT_GT(profile, diagnosis);  // under the diagnosis
  nlohmann::json j = nlohmann::json::parse(ReadFile(Path("analysis.json")));
  ASSERT_TRUE(j.contains("causal_profile"));
  EXPECT_FALSE(j["causal_profile"]["rows"].empty());

  r = Run({"dump", "--input=" + prefix, "--summary", "--analysis=" + Path("off.json"),
           "--causal-profile=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("causal profile")));
  EXPECT_THAT(r.out, HasSubstr("diagnosis:\n"));
  j = nlohmann::json::parse(ReadFile(Path("off.json")));
  EXPECT_FALSE(j.contains("causal_profile"));
  r = Run({"dump", "--input=" + prefix, "--summary", "--causal-profile=maybe"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--causal-profile=maybe: expected true or false"));
}

TEST_F(WarptraceAnalysisCliTest, ATraceWithoutHandOffsGetsALimitationLineNotAFailedDump) {
  // Two Mosaic GPU warpgroup traces of one block (Mosaic records no hand-offs), each
  // [globaltimer lo, smid, traces_used (event words), (tag, clock) pairs]: region "a".
  const std::string mosaic = Path("mosaic");
  {
    std::ofstream json(mosaic + ".json");
    json << R"({"format": "mosaic-gpu", "grid": [1], "block": [256],
                "entries_per_warpgroup": 7, "trace_scope": "warpgroup", "names": ["a"]})";
    const uint32_t words[14] = {5000, 3, 4, 0, 100, 0x80000000u, 1100,
                                5000, 3, 4, 0, 150, 0x80000000u, 900};
    std::ofstream bin(mosaic + ".bin", std::ios::binary);
    bin.write(reinterpret_cast<const char*>(words), sizeof(words));
  }
  // And a saved pipeline without hand-off payloads (a version-1 style trace).
  const std::string unlinked = Save("unlinked", Noisy(4));
  for (const std::string& prefix : {mosaic, unlinked}) {
    const RunResult r = Run({"dump", "--input=" + prefix, "--summary",
                             "--analysis=" + Path("analysis.json"), "--sm-clock-khz=1000000"});
    ASSERT_EQ(r.exit_code, 0) << prefix << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("causal profile: none\n"
                                 "  limitation: no causal profile: what-if: the trace has "
                                 "several units per block but no recorded hand-offs"))
        << prefix;
    EXPECT_THAT(r.out, Not(HasSubstr("(no region with time)"))) << prefix;
    const nlohmann::json j = nlohmann::json::parse(ReadFile(Path("analysis.json")));
    EXPECT_TRUE(j["causal_profile"]["rows"].empty()) << prefix;
    ASSERT_EQ(j["causal_profile"]["limitations"].size(), 1u) << prefix;
  }
}

TEST_F(WarptraceAnalysisCliTest, DiffComparesATraceWithItsWhatIfPrediction) {
  PipelineSpec spec = Noisy(5);
  spec.handoff_payloads = true;
  const std::string prefix = Save("measured", spec);
  RunResult r = Run({"diff", "--before=" + prefix, "--what-if=consumer:mma=0.5",
                     "--json=" + Path("diff.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("regions ("));
  const nlohmann::json j = nlohmann::json::parse(ReadFile(Path("diff.json")));
  ASSERT_FALSE(j["rows"].empty());
  EXPECT_EQ(j["rows"][0]["role"], "consumer");
  EXPECT_EQ(j["rows"][0]["name"], "mma");  // the re-timed region changed most
  EXPECT_EQ(j["rows"][0]["significant"], true);
  EXPECT_NEAR(j["rows"][0]["change"].get<double>(), -0.5, 0.05);
  // --input names the measured trace too; a predicted slowdown trips the gate.
  r = Run({"diff", "--input=" + prefix, "--what-if=mma=2", "--fail-if-slower=5",
           "--regions=mma"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("consumer mma got "));
  // Bad input: an --after beside the prediction, an unknown region, no measured trace.
  r = Run({"diff", "--before=" + prefix, "--after=" + prefix, "--what-if=mma=0.5"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("give no --after"));
  r = Run({"diff", "--before=" + prefix, "--what-if=nosuch=0.5"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("no region, loop body, async copy or wgmma group is named"));
  r = Run({"diff", "--what-if=mma=0.5"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--before=PREFIX is required"));
}

// A predicted launch is a written trace, not a buffer: diff given one says how to compare a
// launch with its prediction instead of failing on PREFIX.bin.
TEST_F(WarptraceAnalysisCliTest, DiffGivenAWrittenTraceNamesTheWhatIfRoute) {
  PipelineSpec spec = Noisy(6);
  spec.handoff_payloads = true;
  const std::string prefix = Save("measured", spec);
  for (const std::string name : {"pred.pftrace", "pred.json"}) {
    SCOPED_TRACE(name);
    RunResult r = Run({"whatif", "--input=" + prefix, "--speedup=consumer:mma=0.5",
                       "--output=" + Path(name), "--causal-profile=false"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = Run({"diff", "--before=" + prefix, "--after=" + Path(name)});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr("is a written "));
    EXPECT_THAT(r.err, HasSubstr("--what-if=\"SPEC\""));
  }
  // A prefix that merely ends in .json is still a prefix.
  const std::string odd = Save("odd.json", spec);
  const RunResult r = Run({"diff", "--before=" + prefix, "--after=" + odd});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace warptrace
