// What-if predictions (profiler/analysis/whatif.h, profiler/frontend/whatif_files.h) checked
// against planted runs: the examples run on the host backend's deterministic clock
// (WARPTRACE_HOST_CLOCK=deterministic), where work costs only its planted busy-work delays, so
// a run planted (P, C) predicts the kernel time of the run planted (P, C/2) or (P/2, C), which
// is measured too: the prediction must be within 5% of it (it is exact to a few ns) and its
// diagnosis must name the bottleneck that run's diagnosis names. Then the causal profile's
// ranking, and every bad input.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/subprocess.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "nlohmann/json.hpp"
#include "profiler/analysis/whatif.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/frontend/whatif_files.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// The ns a delay of `cycles` adds to each instance (tests/examples/examples_test.cc): the
// loop's reads, 3 cycles (2 ns) apart, until `cycles` passed, after its first read.
constexpr int64_t DelayNs(int64_t cycles) { return (cycles + 2) / 3 * 2 + 2; }

struct Kernel {
  std::string example;
  std::vector<std::string> args;
  std::string consumer_work;  // the region the consumer delay is planted in
  std::string producer_work;
  // The what-if that halves the producer's planted delay: shortening each instance by P/2's
  // time, or (FlashAttention, whose `load` also covers the undelayed Q and V loads, a few ns
  // each: shortening those is an error) a factor of 0.5, off by a few ns per instance.
  bool producer_by_factor = false;
};

const Kernel& KernelNamed(const std::string& name) {
  static const auto* kernels = new std::map<std::string, Kernel>{
      {"pipeline",
       {"warp_specialized_pipeline", {"--k=512", "--stages=4"}, "consumer:mma", "producer:load"}},
      {"hopper", {"hopper_gemm", {"--m=128", "--n=128", "--k=512"}, "consumer:mma",
                  "producer:load"}},
      {"flash", {"flash_attention", {}, "consumer:softmax", "producer:load", true}},
  };
  return kernels->at(name);
}

// The diagnosis' bound finding ("producer-bound: ...", or "waiting: ..." when no other role
// can be named); "" when there is none. A tail or the overhead may rank above it.
std::string BoundFinding(const std::vector<Diagnosis>& diagnosis) {
  for (const Diagnosis& d : diagnosis) {
    if (d.kind == "bound" || d.kind == "waiting") return d.text;
  }
  return "";
}

class WhatIfTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("WARPTRACE_CACHE_DIR", TestTempPath("cache").c_str(), 1);
    setenv("WARPTRACE_HOST_CLOCK", "deterministic", 1);
    unsetenv("BUILD_WORKING_DIRECTORY");
  }

  // Runs the example planted (producer, consumer) cycles and returns its trace prefix.
  static std::string Run(const Kernel& k, int64_t producer, int64_t consumer) {
    static int counter = 0;
    const std::string dir = TestTempPath(absl::StrCat(k.example, "_", ++counter));
    EXPECT_FALSE(llvm::sys::fs::create_directories(dir));
    std::vector<std::string> argv = {
        absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/examples/", k.example),
        "--device=host", absl::StrCat("--producer_delay=", producer),
        absl::StrCat("--consumer_delay=", consumer), absl::StrCat("--out=", dir)};
    argv.insert(argv.end(), k.args.begin(), k.args.end());
    absl::StatusOr<ProgramResult> ran =
        RunProgram(argv, {.timeout = absl::Seconds(600), .merge_stderr = false});
    EXPECT_THAT(ran, IsOk());
    if (ran.ok()) {
      EXPECT_EQ(ran->exit_code, 0) << ran->output << ran->error_output;
    }
    return absl::StrCat(dir, "/", k.example);
  }

  static Timeline Measured(const std::string& prefix) {
    absl::StatusOr<LoadedDump> loaded = LoadForDump(prefix, 0);
    EXPECT_THAT(loaded, IsOk());
    DumpRequest request;
    request.collect = true;
    request.analysis = true;
    DumpOutcome outcome = DumpToFiles(loaded->trace.layout, loaded->trace.words, request);
    EXPECT_THAT(outcome.status, IsOk());
    measured_diagnosis() = BoundFinding(outcome.analysis->diagnosis);
    return *std::move(outcome.timeline);
  }
  static std::string& measured_diagnosis() {
    static std::string text;
    return text;
  }

  static WhatIfPrediction Predict(const Timeline& t, const std::string& spec) {
    absl::StatusOr<std::vector<Speedup>> speedups = ParseSpeedups({spec});
    EXPECT_THAT(speedups, IsOk());
    absl::StatusOr<WhatIfPrediction> p = PredictWhatIf(t, *speedups);
    EXPECT_THAT(p, IsOk()) << spec;
    return p.ok() ? *std::move(p) : WhatIfPrediction{};
  }
};

// The first word of a bound diagnosis: "producer-bound", "consumer-bound", "waiting", ...
std::string Bound(const std::string& text) { return text.substr(0, text.find(':')); }

constexpr int64_t kP = 45000, kC = 60000;  // cycles: C > P, C/2 < P

class PlantedTest : public WhatIfTest, public ::testing::WithParamInterface<std::string> {};

// (P, C) -> shorten each consumer work instance by C/2's time -> the (P, C/2) run: within 5%
// and the same bottleneck (producer-bound: C/2 < P).
TEST_P(PlantedTest, ShorteningTheConsumerPredictsTheRunPlantedWithHalfItsDelay) {
  const Kernel& k = KernelNamed(GetParam());
  const Timeline pc = Measured(Run(k, kP, kC));
  const Timeline half = Measured(Run(k, kP, kC / 2));
  const std::string half_diagnosis = measured_diagnosis();
  const int64_t cut = DelayNs(kC) - DelayNs(kC / 2);
  const WhatIfPrediction p = Predict(pc, absl::StrCat(k.consumer_work, "=-", cut, "ns"));
  const int64_t measured = p.measured_ns;
  // The (P, C/2) run's kernel time, as the prediction measures one.
  absl::StatusOr<WhatIfPrediction> identity =
      PredictWhatIf(half, *ParseSpeedups({absl::StrCat(k.consumer_work, "=1")}));
  ASSERT_THAT(identity, IsOk());
  const int64_t target = identity->measured_ns;
  EXPECT_EQ(identity->predicted_ns, target) << "factor 1 must change nothing";
  EXPECT_LT(p.predicted_ns, measured);
  EXPECT_NEAR(static_cast<double>(p.predicted_ns), static_cast<double>(target), 0.05 * target)
      << "predicted " << p.predicted_ns << " ns, the planted run measured " << target << " ns";
  EXPECT_THAT(half_diagnosis, StartsWith("producer-bound"));
  EXPECT_EQ(Bound(BoundFinding(p.analysis.diagnosis)), Bound(half_diagnosis))
      << BoundFinding(p.analysis.diagnosis);
}

// (P, C) -> shorten the producer's work by P/2's time -> the (P/2, C) run: it barely moves
// (the consumer still bounds it), within 5%, and consumer-bound as that run is.
TEST_P(PlantedTest, ShorteningTheProducerPredictsTheRunPlantedWithHalfItsDelay) {
  const Kernel& k = KernelNamed(GetParam());
  const Timeline pc = Measured(Run(k, kP, kC));
  const Timeline half = Measured(Run(k, kP / 2, kC));
  const std::string half_diagnosis = measured_diagnosis();
  const int64_t cut = DelayNs(kP) - DelayNs(kP / 2);
  const WhatIfPrediction p =
      Predict(pc, k.producer_by_factor ? absl::StrCat(k.producer_work, "=0.5")
                                       : absl::StrCat(k.producer_work, "=-", cut, "ns"));
  absl::StatusOr<WhatIfPrediction> identity =
      PredictWhatIf(half, *ParseSpeedups({absl::StrCat(k.producer_work, "=1")}));
  ASSERT_THAT(identity, IsOk());
  const int64_t target = identity->measured_ns;
  EXPECT_NEAR(static_cast<double>(p.predicted_ns), static_cast<double>(target), 0.05 * target)
      << "predicted " << p.predicted_ns << " ns, the planted run measured " << target << " ns";
  EXPECT_GT(p.predicted_ns, 0.8 * p.measured_ns) << "the consumer still bounds the kernel";
  EXPECT_FALSE(half_diagnosis.empty());
  EXPECT_EQ(Bound(BoundFinding(p.analysis.diagnosis)), Bound(half_diagnosis))
      << BoundFinding(p.analysis.diagnosis) << " vs " << half_diagnosis;
}

// The causal profile ranks the consumer's work first and the producer's load far below;
// planted the other way round (P > C), the producer's load first.
TEST_P(PlantedTest, CausalProfileRanksTheBottleneckSideFirst) {
  const Kernel& k = KernelNamed(GetParam());
  for (const bool consumer_bound : {true, false}) {
    SCOPED_TRACE(consumer_bound ? "consumer-bound" : "producer-bound");
    const Timeline t =
        consumer_bound ? Measured(Run(k, kP / 3, kC)) : Measured(Run(k, kC, kP / 3));
    absl::StatusOr<CausalProfile> profile = ComputeCausalProfile(t);
    ASSERT_THAT(profile, IsOk());
    ASSERT_GE(profile->rows.size(), 2u);
    auto label = [](const CausalRow& r) {
      return r.role.empty() ? r.name : absl::StrCat(r.role, ":", r.name);
    };
    const std::string first = consumer_bound ? k.consumer_work : k.producer_work;
    const std::string other = consumer_bound ? k.producer_work : k.consumer_work;
    EXPECT_EQ(label(profile->rows[0]), first);
    EXPECT_GT(profile->rows[0].saving[2], 0.2);
    for (const CausalRow& row : profile->rows) {
      if (label(row) != other) continue;
      EXPECT_LT(row.saving[2], 0.1) << "speeding up the side that waits buys little";
      EXPECT_GT(profile->rows[0].saving[2], 3 * row.saving[2]);
    }
    // Savings never decrease with the speedup, and flat rows say so.
    for (const CausalRow& row : profile->rows) {
      for (int i = 1; i < 4; ++i) EXPECT_GE(row.saving[i], row.saving[i - 1] - 1e-9);
      EXPECT_EQ(row.flat, row.saving[3] < kFlatSaving);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, PlantedTest,
                         ::testing::Values("pipeline", "hopper", "flash"));

// The front end writes the predicted launch as Perfetto and JSON, diffs it against the
// measured one, and `warptrace whatif` prints the same.
TEST_F(WhatIfTest, FrontEndWritesThePredictedTraceTheJsonAndTheDiff) {
  const std::string prefix = Run(KernelNamed("pipeline"), kP, kC);
  absl::StatusOr<LoadedDump> loaded = LoadForDump(prefix, 0);
  ASSERT_THAT(loaded, IsOk());
  WhatIfRequest request;
  request.speedups = {"consumer:mma=0.5"};
  request.diff = true;
  request.perfetto_path = TestTempPath("pred.pftrace");
  request.json_path = TestTempPath("whatif.json");
  const WhatIfOutcome out = WhatIfToFiles(loaded->trace.layout, loaded->trace.words, request);
  ASSERT_THAT(out.status, IsOk());
  EXPECT_EQ(out.written.size(), 2u);
  EXPECT_TRUE(llvm::sys::fs::exists(request.perfetto_path));
  std::ifstream in(request.json_path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str());
  EXPECT_EQ(j["format"], "warptrace-whatif");
  EXPECT_EQ(j["measured_ns"].get<int64_t>(), out.prediction.measured_ns);
  EXPECT_EQ(j["predicted_ns"].get<int64_t>(), out.prediction.predicted_ns);
  EXPECT_LT(out.prediction.predicted_ns, out.prediction.measured_ns);
  ASSERT_TRUE(j.contains("causal_profile"));
  EXPECT_FALSE(j["causal_profile"]["rows"].empty());
  EXPECT_EQ(j["speedups"][0]["role"], "consumer");
  EXPECT_EQ(j["speedups"][0]["factor"], 0.5);
  ASSERT_TRUE(out.diff.has_value());
  ASSERT_FALSE(out.diff->rows.empty());
  EXPECT_EQ(out.diff->rows[0].name, "mma");  // what changed most: the re-timed region
  EXPECT_EQ(nlohmann::json::parse(out.json), j);

  absl::StatusOr<ProgramResult> cli = RunProgram(
      {absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/profiler/cli/warptrace"), "whatif",
       "--input=" + prefix, "--speedup=consumer:mma=0.5", "--diff"},
      {.timeout = absl::Seconds(600), .merge_stderr = false});
  ASSERT_THAT(cli, IsOk());
  EXPECT_EQ(cli->exit_code, 0) << cli->error_output;
  EXPECT_THAT(cli->output, HasSubstr("what-if: consumer:mma=0.5"));
  EXPECT_THAT(cli->output, HasSubstr("causal profile"));
  EXPECT_THAT(cli->output, HasSubstr("diff (before: measured, after: predicted)"));
  absl::StatusOr<ProgramResult> dump = RunProgram(
      {absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/profiler/cli/warptrace"), "dump",
       "--input=" + prefix, "--summary", "--causal-profile=true"},
      {.timeout = absl::Seconds(600), .merge_stderr = false});
  ASSERT_THAT(dump, IsOk());
  EXPECT_EQ(dump->exit_code, 0) << dump->error_output;
  EXPECT_THAT(dump->output, HasSubstr("causal profile (predicted kernel time"));
  EXPECT_THAT(dump->output, HasSubstr("speeding this up buys nothing: it is not on the "
                                      "critical path"));
}

// Every bad input is an error that says what is wrong, never a number.
TEST_F(WhatIfTest, BadInputIsAClearError) {
  const Timeline t = Measured(Run(KernelNamed("pipeline"), kP, kC));
  auto predict = [&](const std::string& spec) -> absl::Status {
    absl::StatusOr<std::vector<Speedup>> s = ParseSpeedups({spec});
    if (!s.ok()) return s.status();
    return PredictWhatIf(t, *s).status();
  };
  EXPECT_THAT(predict("nosuch=0.5"), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("no region, loop body, async copy or "
                                                        "wgmma group is named 'nosuch'")));
  EXPECT_THAT(predict("mma=0"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be > 0")));
  EXPECT_THAT(predict("mma=-0.5"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("needs a unit")));
  EXPECT_THAT(predict("mma=fast"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is not a number")));
  EXPECT_THAT(predict("mma"), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("expected [ROLE:]NAME=FACTOR")));
  EXPECT_THAT(predict("consumer:mma=-1ms"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is longer than an instance of 'mma'")));
  EXPECT_THAT(predict("nobody:mma=0.5"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no role 'nobody'")));
  EXPECT_THAT(predict("producer:mma=0.5"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("has no instance on the producer units")));
  EXPECT_THAT(predict("wait full=0.5"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("waits are predicted")));
  EXPECT_THAT(PredictWhatIf(t, {}).status(), StatusIs(absl::StatusCode::kInvalidArgument));
  Speedup zero;
  zero.name = "mma";
  zero.factor = 0;
  zero.text = "mma=0";
  EXPECT_THAT(PredictWhatIf(t, {&zero, 1}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be > 0")));

  // A trace whose units the graph cannot link (no hand-offs: a version-1 trace, a Mosaic GPU
  // buffer) is refused, and the dump's causal profile says why instead of a table.
  Timeline unlinked = t;
  for (UnitTimeline& u : unlinked.units) u.flows.clear();
  EXPECT_THAT(PredictWhatIf(unlinked, *ParseSpeedups({"mma=0.5"})).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no recorded hand-offs")));
  EXPECT_THAT(ComputeCausalProfile(unlinked).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// The version-1 golden buffer (no payloads, so no links): the dump's causal profile is empty
// with the reason as its limitation, and the what-if front end refuses it.
TEST_F(WhatIfTest, AVersionOneTraceGetsAStatedLimitationNotANumber) {
  const std::string prefix =
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/tests/golden/v1_pipeline_warp");
  absl::StatusOr<LoadedDump> loaded = LoadForDump(prefix, 0);
  ASSERT_THAT(loaded, IsOk());
  DumpRequest request;
  request.causal_profile = true;
  const DumpOutcome outcome = DumpToFiles(loaded->trace.layout, loaded->trace.words, request);
  ASSERT_THAT(outcome.status, IsOk());
  ASSERT_TRUE(outcome.analysis.has_value());
  ASSERT_TRUE(outcome.analysis->has_causal_profile);
  EXPECT_TRUE(outcome.analysis->causal_profile.rows.empty());
  ASSERT_EQ(outcome.analysis->causal_profile.limitations.size(), 1u);
  EXPECT_THAT(outcome.analysis->causal_profile.limitations[0],
              HasSubstr("no recorded hand-offs"));
  WhatIfRequest what_if;
  what_if.speedups = {"mma=0.5"};
  EXPECT_THAT(WhatIfToFiles(loaded->trace.layout, loaded->trace.words, what_if).status,
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace warptrace
