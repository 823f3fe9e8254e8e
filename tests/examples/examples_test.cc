// Runs every example binary (a data dependency, found under $TEST_SRCDIR) with small sizes
// on the host backend, as a user would: checks the exit status, what it prints (the
// device and why, the plan, the result check, where the trace went), and the files it
// writes — the Chrome trace parsed with an independent JSON parser and checked against the
// viewers' invariants, the saved buffer re-loaded and re-analyzed, the verdict report.
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/subprocess.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "nlohmann/json.hpp"
#include "profiler/dump/collector.h"
#include "profiler/imports/sidecar.h"
#include "tests/profiler/chrome_trace_checker.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::warptrace::testing::ChromeTraceViolations;
using ::warptrace::testing::IsOk;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Exists(const std::string& path) { return llvm::sys::fs::exists(path); }

struct Ran {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A fresh output directory under the test's temporary directory.
std::string FreshDir(const std::string& name) {
  static int counter = 0;
  const std::string dir = TestTempPath(absl::StrCat(name, "_", ++counter));
  EXPECT_FALSE(llvm::sys::fs::create_directories(dir));
  return dir;
}

// Runs the binary at `path` in the runfiles (e.g. "examples/tiled_gemm") with `args`,
// capturing stdout and stderr.
Ran RunBinary(const std::string& path, const std::vector<std::string>& args) {
  const std::string program = absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/", path);
  std::vector<std::string> argv = {program};
  argv.insert(argv.end(), args.begin(), args.end());
  absl::StatusOr<ProgramResult> result =
      RunProgram(argv, {.timeout = absl::Seconds(600), .merge_stderr = false});
  EXPECT_THAT(result, IsOk()) << program;
  Ran ran;
  if (!result.ok()) return ran;
  ran.exit_code = result->exit_code;
  ran.out = std::move(result->output);
  ran.err = std::move(result->error_output);
  return ran;
}

// Runs examples/<binary> with `args`.
Ran RunExample(const std::string& binary, const std::vector<std::string>& args) {
  return RunBinary(absl::StrCat("examples/", binary), args);
}

// The first finding under "diagnosis:" in an example's output ("" when there is none).
std::string FirstDiagnosis(const std::string& out) {
  const size_t at = out.find("\ndiagnosis:\n");
  if (at == std::string::npos) return "";
  const size_t begin = at + std::string("\ndiagnosis:\n").size();
  return out.substr(begin, out.find('\n', begin) - begin);
}

class ExamplesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Compiled kernels stay in the sandbox; the binaries inherit the environment. One cache
    // for every suite of the binary, so all of its example runs share the kernels and the
    // precompiled header they compiled.
    static const bool set = [] {
      setenv("WARPTRACE_CACHE_DIR", TestTempPath("cache").c_str(), 1);
      unsetenv("BUILD_WORKING_DIRECTORY");
      return true;
    }();
    (void)set;
  }
};

// Checks everything a profiled run of `name` must leave in `dir` and say on stdout.
void ExpectProfiledRun(const Ran& ran, const std::string& name, const std::string& dir,
                       const std::string& unit) {
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.err, IsEmpty());
  const std::string trace_path = absl::StrCat(dir, "/", name, ".trace.json");
  const std::string perfetto_path = absl::StrCat(dir, "/", name, ".pftrace");
  EXPECT_THAT(ran.out, AllOf(HasSubstr("device: host backend"),
                             HasSubstr("why: host backend requested"),
                             HasSubstr("record plan"), HasSubstr(absl::StrCat("per ", unit, " unit")),
                             HasSubstr("verdicts:"), HasSubstr("0 dropped events"),
                             HasSubstr("summary:"), HasSubstr("\ndiagnosis:\n  1. "),
                             HasSubstr(trace_path),
                             HasSubstr(perfetto_path),
                             HasSubstr("https://ui.perfetto.dev"), HasSubstr("chrome://tracing"),
                             HasSubstr("matches the CPU reference")));
  // Issue 9, defect 7: host times never pass for GPU times.
  EXPECT_THAT(ran.out, AllOf(HasSubstr("times: from the host backend (the CPU's steady clock)"),
                             HasSubstr("times come from the host backend")));

  // The Perfetto trace is there and not empty (its contents: tests/profiler/perfetto).
  ASSERT_TRUE(Exists(perfetto_path)) << perfetto_path;
  EXPECT_GT(ReadFile(perfetto_path).size(), 100u);

  // The Chrome trace: valid JSON that holds every invariant the viewers rely on.
  ASSERT_TRUE(Exists(trace_path)) << trace_path;
  const nlohmann::json trace = nlohmann::json::parse(ReadFile(trace_path));
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  int slices = 0, async_spans = 0, process_names = 0, thread_names = 0;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event["ph"] == "X") {
      // Async copies and wgmma groups are X events on their unit's async lanes, not slices
      // of its track.
      ++(event["cat"] == "async_copy" || event["cat"] == "mma_group" ? async_spans : slices);
      EXPECT_TRUE(event["ts"].is_number()) << event.dump();
      EXPECT_TRUE(event["dur"].is_number()) << event.dump();
      EXPECT_TRUE(event["pid"].is_number_integer()) << event.dump();
      EXPECT_TRUE(event["tid"].is_number_integer()) << event.dump();
    } else if (event["ph"] == "M" && event["name"] == "process_name") {
      ++process_names;
    } else if (event["ph"] == "M" && event["name"] == "thread_name") {
      ++thread_names;
    }
  }
  EXPECT_GT(slices, 0);
  EXPECT_GT(process_names, 0);
  EXPECT_GT(thread_names, 0);
  EXPECT_EQ(trace["otherData"]["kernel"], name);
  EXPECT_EQ(trace["otherData"]["trace_unit"], unit);
  EXPECT_EQ(trace["otherData"]["units_complete"], trace["otherData"]["units"]);
  EXPECT_EQ(trace["otherData"]["slices"], slices);
  EXPECT_EQ(trace["otherData"]["async_spans"], async_spans);

  // The saved buffer re-loads and re-analyzes to the same slices, as `warptrace dump` would.
  absl::StatusOr<LoadedTrace> loaded = LoadTrace(absl::StrCat(dir, "/", name));
  ASSERT_THAT(loaded.status(), IsOk());
  EXPECT_EQ(loaded->layout.kernel_name, name);
  absl::StatusOr<std::unique_ptr<Trace>> analyzed =
      CollectTrace(loaded->layout, loaded->words.ToVector());
  ASSERT_THAT(analyzed.status(), IsOk());
  EXPECT_TRUE((*analyzed)->report.ok());
  uint64_t reanalyzed_slices = 0;
  for (const UnitTimeline& u : (*analyzed)->timeline.units) reanalyzed_slices += u.slices.size();
  EXPECT_EQ(reanalyzed_slices, static_cast<uint64_t>(slices));

  // The verdict report.
  const nlohmann::json verdict =
      nlohmann::json::parse(ReadFile(absl::StrCat(dir, "/", name, ".verdict.json")));
  EXPECT_EQ(verdict["format"], "warptrace-verdict");
  EXPECT_EQ(verdict["ok"], true);
  EXPECT_EQ(verdict["dropped_events"], 0);
}

struct Case {
  std::string label;  // names the case's test
  std::string binary;
  std::vector<std::string> sizes;
};

const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>{
      {"tiled_gemm", "tiled_gemm", {"--m=32", "--n=32", "--k=32", "--tile=16"}},
      {"warp_specialized_pipeline", "warp_specialized_pipeline",
       {"--m=8", "--n=32", "--k=64", "--stages=2", "--consumers=1"}},
      // Bulk copies on the mbarrier ring, a persistent grid of 2 blocks for 4 tiles, delays.
      {"bulk_persistent_pipeline", "warp_specialized_pipeline",
       {"--m=16", "--n=64", "--k=64", "--stages=3", "--consumers=2", "--copy=bulk",
        "--persistent", "--blocks=2", "--producer_delay=100", "--consumer_delay=100"}},
      {"reduction", "reduction", {"--n=1000", "--blocks=2", "--threads=64", "--barrier_waits"}},
      // TMA + wgmma, cooperative; then ping-pong on a persistent grid with f32 output and
      // BN 64; then BN 256.
      {"hopper_gemm", "hopper_gemm", {"--m=128", "--n=128", "--k=128", "--stages=2"}},
      {"hopper_gemm_pingpong_persistent", "hopper_gemm",
       {"--m=256", "--n=128", "--k=128", "--bn=64", "--pingpong", "--persistent", "--blocks=2",
        "--out_type=f32"}},
      {"hopper_gemm_bn256", "hopper_gemm",
       {"--m=128", "--n=256", "--k=128", "--bn=256", "--stages=2", "--consumer_delay=100"}},
      // 2-CTA clusters: B multicast (2x1) and A multicast (1x2), one cluster each.
      {"hopper_gemm_cluster_2x1", "hopper_gemm",
       {"--m=256", "--n=128", "--k=128", "--stages=2", "--cluster=2x1"}},
      {"hopper_gemm_cluster_1x2", "hopper_gemm",
       {"--m=128", "--n=256", "--k=128", "--stages=2", "--cluster=1x2"}},
      // FlashAttention-3-style forward: TMA producer, wgmma qk (SS) and pv (RS, V MN-major),
      // online softmax; head_dim 64 and 128, causal, ping-pong consumers, intra-warpgroup
      // overlap.
      {"flash_attention", "flash_attention", {"--seq=256", "--heads=2", "--head_dim=64"}},
      {"flash_attention_d128_causal", "flash_attention",
       {"--seq=256", "--heads=1", "--head_dim=128", "--causal"}},
      {"flash_attention_pingpong", "flash_attention", {"--seq=256", "--pingpong"}},
      {"flash_attention_overlap_causal", "flash_attention",
       {"--seq=384", "--heads=1", "--causal", "--overlap", "--consumer_delay=100"}},
      {"flash_attention_pingpong_overlap_d128", "flash_attention",
       {"--seq=256", "--heads=1", "--head_dim=128", "--pingpong", "--overlap"}},
      // The builder-level TMA ring + wgmma pipeline (constructs only).
      {"tma_wgmma_ring", "tma_wgmma_ring", {"--m=128", "--n=128", "--k=256"}},
      {"tma_wgmma_ring_bn128", "tma_wgmma_ring", {"--m=64", "--n=256", "--k=128", "--bn=128"}},
      // Tensor cores: mma.sync and ldmatrix emulated on the host, a 3-stage cp.async ring.
      {"ampere_gemm", "ampere_gemm", {"--m=128", "--n=128", "--k=96", "--warps=4", "--stages=3"}},
  };
  return *cases;
}

// One test per case (shards share them out).
class EveryExampleTest : public ExamplesTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(EveryExampleTest, RunsProfilesAndChecksItsResultForSeveralUnitsAndPlacements) {
  const Case& c = Cases()[GetParam()];
  const std::vector<std::pair<std::string, std::string>> combos = {
      {"warp", "global"}, {"block", "shared"}, {"warpgroup", "auto"}};
  for (const auto& [unit, placement] : combos) {
    if (c.binary == "reduction" && unit == "warpgroup") continue;  // 64-thread blocks
    SCOPED_TRACE(absl::StrCat(c.binary, " --unit=", unit, " --placement=", placement));
    const std::string dir = FreshDir(c.binary);
    std::vector<std::string> args = c.sizes;
    args.insert(args.end(), {"--device=host", "--unit=" + unit, "--placement=" + placement,
                             "--out=" + dir});
    ExpectProfiledRun(RunExample(c.binary, args), c.binary, dir, unit);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, EveryExampleTest, ::testing::Range<size_t>(0, Cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return Cases()[info.param].label;
                         });

// Every case above, and every host line of the GPU bundle (tools/gpu_bundle/run.sh
// host_parts: the examples at their defaults, PIPELINE_VARIANTS with --unit=warp).
const std::vector<Case>& SanitizeCases() {
  static const auto* cases = [] {
    auto* all = new std::vector<Case>(Cases());
    for (const char* example : {"tiled_gemm", "warp_specialized_pipeline", "reduction",
                                "cluster_reduction", "hopper_gemm", "ampere_gemm",
                                "flash_attention", "first_kernel", "split_softmax"}) {
      all->push_back({absl::StrCat("bundle_", example), example, {}});
    }
    const std::vector<std::vector<std::string>> pipeline_variants = {
        {"--copy=cp_async", "--stages=3"},
        {"--copy=cp_async", "--stages=4", "--persistent"},
        {"--copy=bulk", "--stages=3", "--arch=sm_90"},
        {"--copy=bulk", "--stages=2", "--persistent", "--arch=sm_90"},
        {"--copy=bulk", "--stages=4", "--persistent", "--k=1024", "--producer_delay=20000",
         "--arch=sm_90"},
        {"--copy=cp_async", "--stages=4", "--persistent", "--k=1024", "--consumer_delay=20000"},
    };
    for (size_t i = 0; i < pipeline_variants.size(); ++i) {
      std::vector<std::string> flags = {"--unit=warp"};
      flags.insert(flags.end(), pipeline_variants[i].begin(), pipeline_variants[i].end());
      all->push_back({absl::StrCat("bundle_pipeline_", i + 1), "warp_specialized_pipeline",
                      std::move(flags)});
    }
    return all;
  }();
  return *cases;
}

class SanitizedExampleTest : public ExamplesTest,
                             public ::testing::WithParamInterface<size_t> {};

// No false alarm: the sanitizer (docs/sanitizer.md) with every check finds nothing in legal
// kernels, whose results still match the CPU reference.
TEST_P(SanitizedExampleTest, FindsNothingWithEveryCheck) {
  const Case& c = SanitizeCases()[GetParam()];
  std::vector<std::string> args = c.sizes;
  args.insert(args.end(), {"--device=host", "--sanitize=all", "--out=" + FreshDir(c.binary)});
  const Ran ran = RunExample(c.binary, args);
  EXPECT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("sanitize=all)"));  // the device's name says it checks
  EXPECT_THAT(ran.err, Not(HasSubstr("sanitizer")));
}

INSTANTIATE_TEST_SUITE_P(Cases, SanitizedExampleTest,
                         ::testing::Range<size_t>(0, SanitizeCases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return SanitizeCases()[info.param].label;
                         });

TEST_F(ExamplesTest, TheTmaRingsAnalysisGivesTheProducersCopyBandwidthAsHostTime) {
  const std::string dir = FreshDir("tma_wgmma_ring");
  const Ran ran = RunExample("tma_wgmma_ring", {"--m=128", "--n=128", "--k=256",
                                                "--device=host", "--out=" + dir});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  // 4 blocks x 4 K-blocks x (A 64x64 + B 64x64 bf16 = 2 TMA boxes of 8192 bytes).
  EXPECT_THAT(ran.out, HasSubstr("copy bandwidth: producer units moved 262144 bytes in 32 "
                                 "copies (tma_2d): "));
  EXPECT_THAT(ran.out, HasSubstr("(host time on the host backend, not a GPU's bandwidth)"));
  EXPECT_THAT(ran.out, HasSubstr("C matches the CPU reference"));
}

TEST_F(ExamplesTest, CostPrintsTheKernelsTableProfiledAndNotAndKeepsAPlainCubin) {
  const std::string dir = FreshDir("tma_wgmma_ring_cost");
  const Ran ran = RunExample("tma_wgmma_ring", {"--cost", "--out=" + dir});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("What recording costs kernel tma_wgmma_ring"));
  EXPECT_THAT(ran.out, HasSubstr("tma_wgmma_ring                             sm_90a"));
  // The instructions that matter, unprofiled/profiled: wgmma and TMA loads in both.
  EXPECT_THAT(ran.out, ContainsRegex("tma_wgmma_ring SASS off/on: HGMMA [1-9][0-9]*/[1-9]"));
  EXPECT_THAT(ran.out, ContainsRegex("UTMALDG [1-9][0-9]*/[1-9]"));
  const std::string kept = dir + "/tma_wgmma_ring.cost/tma_wgmma_ring";
  for (const char* mode : {".off", ".on"}) {
    for (const char* ext : {".cu", ".log", ".sass", ".cubin"}) {
      EXPECT_TRUE(Exists(kept + mode + ext)) << kept << mode << ext;
    }
    EXPECT_EQ(ReadFile(kept + mode + ".cubin").substr(0, 4), "\x7f" "ELF") << mode;
  }
  EXPECT_THAT(ReadFile(kept + ".on.log"), HasSubstr("Used"));
}

TEST_F(ExamplesTest, ProfileFalseRunsUninstrumentedChecksTheResultAndWritesNoTrace) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.binary);
    const std::string dir = FreshDir(c.binary);
    std::vector<std::string> args = c.sizes;
    args.insert(args.end(), {"--device=host", "--profile=false", "--out=" + dir});
    const Ran ran = RunExample(c.binary, args);
    ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
    EXPECT_THAT(ran.out, AllOf(HasSubstr("why: host backend requested"),
                               HasSubstr("profiling off"), HasSubstr("matches the CPU reference"),
                               Not(HasSubstr("record plan")), Not(HasSubstr(".trace.json"))));
    EXPECT_FALSE(Exists(absl::StrCat(dir, "/", c.binary, ".trace.json")));
    EXPECT_FALSE(Exists(absl::StrCat(dir, "/", c.binary, ".pftrace")));
    EXPECT_FALSE(Exists(absl::StrCat(dir, "/", c.binary, ".bin")));
  }
}

TEST_F(ExamplesTest, RepeatTimesTheLaunchesAndPrintsTheMedian) {
  const std::string dir = FreshDir("repeat");
  const Ran ran = RunExample("tiled_gemm", {"--m=16", "--n=16", "--k=16", "--tile=16",
                                            "--device=host", "--repeat=3", "--out=" + dir});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("timing: 3 launches with profiling on: median "));
  EXPECT_THAT(ran.out, HasSubstr("(host steady clock)"));
}

TEST_F(ExamplesTest, ABadUnitFailsWithExitCode2AndOneLineNamingTheFlagAndTheChoices) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.binary);
    const Ran ran = RunExample(c.binary, {"--unit=bogus", "--device=host"});
    EXPECT_EQ(ran.exit_code, 2);
    EXPECT_EQ(ran.err, absl::StrCat(c.binary, ": error: --unit=bogus: unknown trace unit; "
                                              "expected warp, warpgroup or block\n"));
    EXPECT_THAT(ran.out, IsEmpty());
  }
}

TEST_F(ExamplesTest, BadPlacementDeviceArchAndSizesAreUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--placement=everywhere"}, "--placement=everywhere: unknown placement"},
      {{"--device=tpu"}, "--device=tpu: unknown device"},
      {{"--arch=90"}, "--arch=90: expected a CUDA architecture"},
      {{"--repeat=-1"}, "--repeat=-1"},
      {{"--m=60"}, "must be positive multiples of the tile 16"},
  };
  for (const auto& [args, message] : bad) {
    SCOPED_TRACE(args[0]);
    const Ran ran = RunExample("tiled_gemm", args);
    EXPECT_EQ(ran.exit_code, 2);
    EXPECT_THAT(ran.err, AllOf(HasSubstr("tiled_gemm: error: "), HasSubstr(message)));
  }
}

TEST_F(ExamplesTest, BadPipelineCopyAndPersistentFlagsAreUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--copy=tma"}, "--copy=tma: use auto, cp_async or bulk"},
      {{"--blocks=2"}, "--blocks needs --persistent"},
      {{"--persistent", "--blocks=99"}, "99 persistent blocks for 8 tiles"},
  };
  for (const auto& [args, message] : bad) {
    SCOPED_TRACE(args.back());
    std::vector<std::string> all = args;
    all.push_back("--device=host");
    const Ran ran = RunExample("warp_specialized_pipeline", all);
    EXPECT_EQ(ran.exit_code, 2);
    EXPECT_THAT(ran.err, AllOf(HasSubstr("warp_specialized_pipeline: error: "),
                               HasSubstr(message)));
  }
}

TEST_F(ExamplesTest, PipelineCopyAutoChoosesBulkCopiesForSm90AndLater) {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"sm_80", "cp.async copies"}, {"sm_90a", "bulk copies"}, {"sm_100", "bulk copies"}};
  for (const auto& [arch, copies] : expected) {
    SCOPED_TRACE(arch);
    const Ran ran = RunExample("warp_specialized_pipeline",
                               {"--m=8", "--n=32", "--k=64", "--stages=2", "--consumers=1",
                                "--device=host", "--profile=false", "--arch=" + arch});
    EXPECT_EQ(ran.exit_code, 0) << ran.err;
    EXPECT_THAT(ran.out, HasSubstr(absl::StrCat("2 stages, ", copies)));
  }
}

TEST_F(ExamplesTest, DeviceCudaWithoutAGpuFailsSayingWhyInsteadOfFallingBack) {
  const Ran ran = RunExample("reduction", {"--device=cuda", "--n=64", "--blocks=1",
                                           "--threads=32", "--out=" + FreshDir("cuda")});
  if (ran.exit_code == 0) GTEST_SKIP() << "this machine has a GPU: " << ran.out;
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_THAT(ran.err, HasSubstr("reduction: error: "));
  if (!Exists("/usr/lib/x86_64-linux-gnu/libcuda.so.1")) {
    EXPECT_THAT(ran.err, HasSubstr("no CUDA driver"));
  }
}

TEST_F(ExamplesTest, HelpDocumentsTheCommonAndTheProblemSizeFlags) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.binary);
    const Ran ran = RunExample(c.binary, {"--help"});
    EXPECT_EQ(ran.exit_code, 0) << ran.err;  // absl's own --help exits 1
    for (const char* flag : {"--out", "--device", "--unit", "--placement", "--profile",
                             "--arch", "--loop_iterations", "--barrier_waits", "--repeat"}) {
      EXPECT_THAT(ran.out, HasSubstr(flag));
    }
    const std::string size_flag = c.sizes[0].substr(0, c.sizes[0].find('='));
    EXPECT_THAT(ran.out, HasSubstr(absl::StrCat(size_flag, " (")));
  }
}

TEST_F(ExamplesTest, TheDefaultOutputDirectoryIsWarptraceOutUnderTheBazelRunDirectory) {
  const std::string base = FreshDir("bazel_run_dir");
  setenv("BUILD_WORKING_DIRECTORY", base.c_str(), 1);
  const Ran ran = RunExample("reduction", {"--device=host", "--n=256", "--blocks=1",
                                           "--threads=32", "--unit=warp"});
  unsetenv("BUILD_WORKING_DIRECTORY");
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  const std::string trace = base + "/warptrace_out/reduction.trace.json";
  EXPECT_TRUE(Exists(trace));
  EXPECT_THAT(ran.out, HasSubstr(trace));
}

// first_kernel runs docs/builder.md's kernel through the door every example uses: the
// common flags, the check of y, and the four outputs named after the example.
TEST_F(ExamplesTest, FirstKernelRunsTheBuilderPagesKernelLikeEveryExample) {
  const std::string dir = FreshDir("first_kernel");
  const Ran ran = RunExample("first_kernel", {"--device=host", "--out=" + dir});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, AllOf(HasSubstr("kernel smooth -> "),
                             HasSubstr("y matches the CPU reference: 1024 values")));
  const nlohmann::json trace =
      nlohmann::json::parse(ReadFile(dir + "/first_kernel.trace.json"));
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  // The barrier's wait is recorded without --barrier_waits (BarrierRecord::kAlways).
  EXPECT_THAT(trace.dump(), HasSubstr("tile ready"));
  for (const char* file : {".pftrace", ".bin", ".json", ".verdict.json"}) {
    EXPECT_TRUE(Exists(dir + "/first_kernel" + file)) << file;
  }
}

// --help prints the usage and exits 0 writing nothing; a positional argument (how its output
// directory was given before it took the common flags) is a usage error.
TEST_F(ExamplesTest, FirstKernelHelpPrintsItsUsageAndWritesNothing) {
  const std::string dir = FreshDir("first_kernel_help");
  ASSERT_FALSE(llvm::sys::fs::create_directories(dir));
  setenv("BUILD_WORKING_DIRECTORY", dir.c_str(), 1);
  const Ran help = RunExample("first_kernel", {"--help"});
  const Ran bad = RunExample("first_kernel", {"some_dir"});
  unsetenv("BUILD_WORKING_DIRECTORY");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_THAT(help.out, HasSubstr("bazel run //examples:first_kernel -- [--out=DIR]"));
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("unexpected argument \"some_dir\""));
  EXPECT_FALSE(Exists(dir + "/warptrace_out"));
  EXPECT_FALSE(Exists(dir + "/some_dir"));
}

// A program of two kernels (issue 54): each launch's own files, one pipeline timeline with
// both launches' tracks, the early-exit blocks counted apart and labelled by row/partition.
TEST_F(ExamplesTest, SplitSoftmaxRunsTwoKernelsAndWritesOnePipelineTimeline) {
  const std::string dir = FreshDir("split_softmax");
  const Ran ran = RunExample("split_softmax", {"--device=host", "--out=" + dir});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, AllOf(HasSubstr("== launch 1 of 2: partition (kernel softmax_partition)"),
                             HasSubstr("== launch 2 of 2: reduce (kernel softmax_reduce)"),
                             HasSubstr("call block_max"), HasSubstr("call block_sum"),
                             HasSubstr("6 of 16 blocks returned early"),
                             HasSubstr("y matches the CPU reference: 8192 values")));
  for (const char* launch : {"partition", "reduce"}) {
    for (const char* file : {".pftrace", ".trace.json", ".bin", ".json", ".verdict.json"}) {
      EXPECT_TRUE(Exists(absl::StrCat(dir, "/split_softmax.", launch, file))) << launch << file;
    }
  }
  EXPECT_TRUE(Exists(dir + "/split_softmax.pftrace"));
  const nlohmann::json trace = nlohmann::json::parse(ReadFile(dir + "/split_softmax.trace.json"));
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  std::set<std::string> launches, threads;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      const std::string name = e["args"]["name"];
      launches.insert(name.substr(0, name.find(':')));
    }
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"]);
  }
  EXPECT_EQ(launches, (std::set<std::string>{"launch 1 partition", "launch 2 reduce"}));
  // The block labels name each block's row and partition (reduce: its row).
  EXPECT_EQ(threads.count("block (0,3,0) [row 3 / partition 0] warpgroup 1"), 1u);
  EXPECT_EQ(threads.count("block (2,0,0) [row 2] warpgroup 0"), 1u);
  ASSERT_EQ(trace["otherData"]["pipeline"].size(), 2u);
  EXPECT_GT(trace["otherData"]["pipeline"][1]["offset_ns"].get<int64_t>(), 0);
  EXPECT_EQ(RunExample("split_softmax", {"--device=host", "--what_if=load=0.5"}).exit_code, 2);
}

TEST_F(ExamplesTest, RecordCostRunsOnTheHostBackendAndReportsBothPlacements) {
  const Ran ran = RunExample("record_cost_gpu",
                             {"--device=host", "--iterations=50", "--runs=1"});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, AllOf(HasSubstr("placement global: "), HasSubstr("placement shared: "),
                             HasSubstr("SM cycles per event (loop of 50 iterations")));
  EXPECT_EQ(RunExample("record_cost_gpu", {"--iterations=0"}).exit_code, 2);
}

// The statistical tests below run the examples with the host backend's deterministic clock
// (WARPTRACE_HOST_CLOCK=deterministic, jit/host/host_device.h): a thread's time advances
// only by its clock reads (2 ns = 3 cycles each) and synchronization, so a planted delay of
// N cycles (`while (clock64() - start < N)`) takes exactly N / 1.5 ns plus the loop's first
// read, and everything else is the same on every run whatever the machine's load. Their
// results are exact, not tolerances.
class DeterministicExamplesTest : public ExamplesTest {
 protected:
  void SetUp() override { setenv("WARPTRACE_HOST_CLOCK", "deterministic", 1); }
  void TearDown() override { unsetenv("WARPTRACE_HOST_CLOCK"); }
};

// The ns a `--producer_delay` / `--consumer_delay` of `cycles` adds to each load / mma: the
// loop's reads, 3 cycles apart, until `cycles` passed, after its first read.
constexpr int64_t DelayNs(int64_t cycles) { return (cycles + 2) / 3 * 2 + 2; }
static_assert(DelayNs(60000) == 40002 && DelayNs(30000) == 20002);

// A known bottleneck, made with the pipeline's busy-work delays, is what the first line of
// the diagnosis names. The waits are named by the barrier family their hand-off flows say
// they waited on (the layout's barrier table). With the deterministic clock the delayed side
// is the whole critical path and the other side does nothing but wait for it: the line is
// exact.
struct DelayCase {
  std::string delay;
  std::string diagnosis;
};

class PipelineDelayTest : public DeterministicExamplesTest,
                          public ::testing::WithParamInterface<DelayCase> {};

TEST_P(PipelineDelayTest, IsDiagnosedAsTheBottleneckItCreates) {
  const DelayCase& c = GetParam();
  std::vector<std::string> args = {"--device=host", "--k=512", "--stages=4", c.delay};
  args.push_back(absl::StrCat("--out=", FreshDir("delay")));
  const Ran ran = RunExample("warp_specialized_pipeline", args);
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("virtual SMs, deterministic clock)"));
  EXPECT_EQ(FirstDiagnosis(ran.out), c.diagnosis) << ran.out;
}

INSTANTIATE_TEST_SUITE_P(
    Delays, PipelineDelayTest,
    ::testing::Values(
        DelayCase{"--producer_delay=60000",
                  "  1. producer-bound: consumer units idle 100% waiting on full[*], most on "
                  "full[1] (25% of their time); the producer's `load` is on the critical path "
                  "in 100% of blocks (100% of block time); the producer waited 0.0% of its "
                  "time (on empty[*])"},
        DelayCase{"--consumer_delay=60000",
                  "  1. consumer-bound: producer units idle 100% waiting on empty[*], most on "
                  "empty[1] (25% of their time); the consumer's `mma` is on the critical path "
                  "in 100% of blocks (100% of block time); the consumer waited 0.0% of its "
                  "time (on full[*])"}),
    [](const ::testing::TestParamInfo<DelayCase>& info) {
      return info.param.delay.find("producer") != std::string::npos ? std::string("producer")
                                                                     : std::string("consumer");
    });

// The same for the Hopper GEMM (TMA + wgmma, cooperative consumers): the delayed side is the
// bottleneck the diagnosis names first.
class HopperGemmDelayTest : public DeterministicExamplesTest,
                            public ::testing::WithParamInterface<DelayCase> {};

TEST_P(HopperGemmDelayTest, IsDiagnosedAsTheBottleneckItCreates) {
  const DelayCase& c = GetParam();
  std::vector<std::string> args = {"--device=host", "--m=128", "--n=128", "--k=512", c.delay};
  args.push_back(absl::StrCat("--out=", FreshDir("hopper_delay")));
  const Ran ran = RunExample("hopper_gemm", args);
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(FirstDiagnosis(ran.out), ::testing::StartsWith(c.diagnosis)) << ran.out;
  EXPECT_THAT(ran.out, HasSubstr("tensor cores: consumer units had a wgmma group in flight "));
}

INSTANTIATE_TEST_SUITE_P(
    Delays, HopperGemmDelayTest,
    ::testing::Values(DelayCase{"--producer_delay=60000",
                                "  1. producer-bound: consumer units idle 100% waiting on "
                                "full[*], most on full[0] (25% of their time)"},
                      DelayCase{"--consumer_delay=60000",
                                "  1. consumer-bound: producer units idle 100% waiting on "
                                "empty[*], most on empty[1] (25% of their time); the "
                                "consumer's `mma` is on the critical path in 100% of blocks"}),
    [](const ::testing::TestParamInfo<DelayCase>& info) {
      return info.param.delay.find("producer") != std::string::npos ? std::string("producer")
                                                                     : std::string("consumer");
    });

// The cluster GEMM with one CTA's consumers slowed (--consumer_delay_rank): the peer's
// producer cannot refill a multicast stage until both CTAs released it, so the diagnosis
// names the cross-CTA stall first, with the slowed CTA as the one that held the other.
TEST_F(DeterministicExamplesTest, ClusterGemmWithOneCtasConsumerSlowedNamesTheCrossCtaStall) {
  for (const char* cluster : {"2x1", "1x2"}) {
    for (const int slowed : {1, 0}) {
      SCOPED_TRACE(absl::StrCat(cluster, " slowed rank ", slowed));
      const std::string dir = FreshDir("hopper_cluster_slow");
      const Ran ran = RunExample(
          "hopper_gemm", {"--device=host", "--k=512", absl::StrCat("--cluster=", cluster),
                          "--consumer_delay=60000",
                          absl::StrCat("--consumer_delay_rank=", slowed), "--out=" + dir});
      ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
      EXPECT_THAT(ran.out, HasSubstr("C matches the CPU reference"));
      // The Chrome JSON's thread metadata carries each unit's cluster and CTA rank.
      const nlohmann::json trace = nlohmann::json::parse(ReadFile(dir + "/hopper_gemm.trace.json"));
      int ranked = 0;
      for (const nlohmann::json& e : trace["traceEvents"]) {
        if (e["name"] != "thread_name" || !e["args"].contains("cluster_rank")) continue;
        const std::string name = e["args"]["name"];
        EXPECT_THAT(name, HasSubstr(absl::StrCat(" rank ", e["args"]["cluster_rank"].get<int>(),
                                                 " ")));
        EXPECT_EQ(e["args"]["cluster"].size(), 3u);
        ++ranked;
      }
      EXPECT_EQ(ranked, 12) << "4 CTAs x 3 warpgroups";
      const int held = 1 - slowed;
      EXPECT_EQ(FirstDiagnosis(ran.out),
                absl::StrCat("  1. cross-CTA stall: CTA ", slowed, "'s consumer held CTA ", held,
                             "'s producer: the shared stage (empty[*]) waited for both CTAs to "
                             "release it; CTA rank ",
                             held, "'s producer units spent 50% of their time waiting for CTA "
                             "rank ",
                             slowed, "'s consumer after their own CTA's release (16 empty[*] "
                             "phases completed by its remote arrivals)"))
          << ran.out;
    }
  }
}

// Without a slowed CTA, no cross-CTA stall is named: the equal consumers release each stage
// together, so the peer's (last) arrival holds the producer no longer than its own CTA's.
TEST_F(DeterministicExamplesTest, ClusterGemmWithEqualCtasNamesNoCrossCtaStall) {
  const Ran ran = RunExample("hopper_gemm", {"--device=host", "--k=512", "--cluster=2x1",
                                             "--consumer_delay=60000",
                                             absl::StrCat("--out=", FreshDir("hopper_cluster"))});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("C matches the CPU reference"));
  EXPECT_THAT(ran.out, Not(HasSubstr("cross-CTA stall")));
}

// FlashAttention with --pingpong: the consumers' wgmma issues take turns through named
// barriers, so while one consumer runs its softmax the other's wgmma group is in flight. The
// analysis reports, per consumer role, the share of its time with a wgmma group in flight,
// and in the saved trace (re-read as `warptrace dump` would) a softmax slice of one consumer
// overlaps a wgmma span ("qk" or "pv") of the other consumer of the same block, in every
// block, in both directions. The deterministic clock makes each softmax last its planted
// delay (3000 cycles) while the issues and waits around it take only their clock reads.
TEST_F(DeterministicExamplesTest, FlashAttentionPingpongOverlapsOneConsumersSoftmaxWithTheOthersWgmma) {
  const std::string dir = FreshDir("flash_pingpong");
  const Ran ran = RunExample("flash_attention", {"--device=host", "--pingpong", "--seq=256",
                                                 "--consumer_delay=3000", "--out=" + dir});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, AllOf(HasSubstr("matches the CPU reference"),
                             HasSubstr("tensor cores: consumer0 units had a wgmma group in "
                                       "flight "),
                             HasSubstr("tensor cores: consumer1 units had a wgmma group in "
                                       "flight ")));
  absl::StatusOr<LoadedTrace> loaded = LoadTrace(dir + "/flash_attention");
  ASSERT_THAT(loaded.status(), IsOk());
  const TraceLayout layout = loaded->layout;
  ASSERT_EQ(layout.unit_roles.size(), 3u);
  EXPECT_EQ(layout.unit_roles[1], "consumer0");
  EXPECT_EQ(layout.unit_roles[2], "consumer1");
  absl::StatusOr<std::unique_ptr<Trace>> trace =
      CollectTrace(loaded->layout, loaded->words.ToVector());
  ASSERT_THAT(trace.status(), IsOk());
  // Per block: the consumers' softmax slices and wgmma spans.
  struct Consumers {
    std::vector<std::pair<int64_t, int64_t>> softmax[2], wgmma[2];
  };
  std::map<uint32_t, Consumers> blocks;
  for (const UnitTimeline& u : (*trace)->timeline.units) {
    if (u.unit_index == 0) continue;
    Consumers& c = blocks[u.block_linear];
    const int consumer = static_cast<int>(u.unit_index) - 1;
    for (const Slice& s : u.slices) {
      if (layout.sites[s.site].name == "softmax") {
        c.softmax[consumer].push_back({s.begin_ns, s.end_ns});
      }
    }
    for (const AsyncSpan& a : u.async_spans) {
      if (layout.sites[a.site].kind == SiteKind::kMmaGroup) {
        c.wgmma[consumer].push_back({a.begin_ns, a.end_ns});
      }
    }
  }
  ASSERT_FALSE(blocks.empty());
  for (const auto& [block, c] : blocks) {
    SCOPED_TRACE(absl::StrCat("block ", block));
    for (int consumer = 0; consumer < 2; ++consumer) {
      EXPECT_EQ(c.softmax[consumer].size(), 2u);  // 2 KV tiles
      EXPECT_EQ(c.wgmma[consumer].size(), 4u);    // qk + pv per KV tile
      int overlapping = 0;
      for (const auto& [begin, end] : c.softmax[consumer]) {
        for (const auto& [wbegin, wend] : c.wgmma[1 - consumer]) {
          if (wbegin < end && begin < wend) ++overlapping;
        }
      }
      EXPECT_GT(overlapping, 0) << "consumer " << consumer << "'s softmax overlaps none of "
                                << "the other consumer's wgmma groups";
    }
  }
}

// `warptrace diff` between a plain pipeline run and one whose consumers do 30000 cycles of
// extra work per MMA ranks the consumers' mma region first (rows are ranked significant
// first, then by |change of self time per block|): each mma takes exactly the delay longer,
// 16 of them per block. The producer then waits longer on empty[*], second; the regions
// the delay does not touch (the producer's load, the consumers' store) do not change at all.
TEST_F(DeterministicExamplesTest, DiffOfAPlainAndAConsumerDelayedPipelineRanksTheConsumersMmaFirst) {
  std::string prefixes[2];
  const char* delays[2] = {"--consumer_delay=0", "--consumer_delay=30000"};
  for (int i = 0; i < 2; ++i) {
    const std::string dir = FreshDir("diff");
    const Ran ran = RunExample("warp_specialized_pipeline",
                               {"--device=host", delays[i], absl::StrCat("--out=", dir)});
    ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
    prefixes[i] = dir + "/warp_specialized_pipeline";
  }
  const std::string json_path = FreshDir("diff_json") + "/diff.json";
  const Ran diff = RunBinary("profiler/cli/warptrace",
                             {"diff", "--before=" + prefixes[0], "--after=" + prefixes[1],
                              "--json=" + json_path});
  ASSERT_EQ(diff.exit_code, 0) << diff.out << diff.err;
  const nlohmann::json report = nlohmann::json::parse(ReadFile(json_path));
  const nlohmann::json& rows = report["rows"];
  ASSERT_GE(rows.size(), 5u) << diff.out;
  auto label = [&](const nlohmann::json& row) {
    return absl::StrCat(row["role"].get<std::string>(), " ", row["name"].get<std::string>());
  };
  const nlohmann::json& mma = rows[0];
  ASSERT_EQ(label(mma), "consumer mma") << diff.out;
  EXPECT_EQ(mma["significant"], true) << diff.out;
  EXPECT_EQ(mma["count_before"], 128) << diff.out;  // 8 blocks x 2 consumers x 8 K-tiles
  EXPECT_EQ(mma["count_after"], 128) << diff.out;
  EXPECT_EQ(mma["mean_after_ns"].get<double>() - mma["mean_before_ns"].get<double>(),
            DelayNs(30000))
      << diff.out;
  EXPECT_EQ(mma["p95_after_ns"].get<double>() - mma["p95_before_ns"].get<double>(),
            DelayNs(30000))
      << diff.out;
  EXPECT_EQ(mma["self_delta_per_block_ns"].get<double>(), 16 * DelayNs(30000)) << diff.out;
  EXPECT_EQ(label(rows[1]), "producer wait empty") << diff.out;
  EXPECT_GT(rows[1]["self_delta_per_block_ns"].get<double>(), 0) << diff.out;
  for (const nlohmann::json& row : rows) {
    if (label(row) == "producer load" || label(row) == "consumer store") {
      EXPECT_EQ(row["mean_after_ns"], row["mean_before_ns"]) << label(row) << "\n" << diff.out;
      EXPECT_EQ(row["significant"], false) << label(row) << "\n" << diff.out;
    }
  }
}

}  // namespace
}  // namespace warptrace
