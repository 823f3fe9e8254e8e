// AnalysisSink's tensor-core time (analysis.h, "mma in flight"): the union of a unit's wgmma
// group spans (SiteKind::kMmaGroup), on a synthesized trace whose times are known exactly.
#include <cstdint>
#include <string>
#include <vector>

#include "format/layout.h"
#include "format/links.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis_sink.h"
#include "profiler/analysis/diagnosis.h"
#include "profiler/dump/dump.h"
#include "profiler/testing/trace_synthesizer.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::DoubleEq;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::SynthOptions;
using ::warptrace::testing::TraceSynthesizer;
using ::warptrace::testing::UnitScript;

constexpr uint32_t kKernel = 0, kGroup = 1, kSoftmax = 2, kCopy = 3;

TraceLayout Layout() {
  TraceLayout layout;
  layout.kernel_name = "mma";
  layout.grid = {2, 1, 1};
  layout.block = {128, 1, 1};
  layout.unit = UnitSpec::Warpgroup();
  layout.sites = {{kKernel, "kernel", SiteKind::kKernel, "mma"},
                  {kGroup, "qk", SiteKind::kMmaGroup, "mma > mma group qk"},
                  {kSoftmax, "softmax", SiteKind::kRegion, "mma > region softmax"},
                  {kCopy, "load", SiteKind::kAsyncCopy, "mma > copy load"}};
  layout.capacity = 64;
  return layout;
}

// The share as PrintDiagnosis words it, for a GPU trace and for a host-backend one.
std::string TensorCoreLine(bool host_backend) {
  Analysis a;
  a.host_backend = host_backend;
  RoleAnalysis& role = a.roles.emplace_back();
  role.role = "consumer";
  role.mma_groups = 6;
  role.mma_in_flight_share = 0.6;
  std::string text;
  llvm::raw_string_ostream os(text);
  PrintDiagnosis(a, os);
  os.flush();
  return text;
}

TEST(MmaInFlightTest, OnTheHostBackendTheShareIsLabelledHostTime) {
  EXPECT_THAT(TensorCoreLine(false),
              HasSubstr("tensor cores: consumer units had a wgmma group in flight 60% of their "
                        "time (6 groups)\n"));
  EXPECT_THAT(TensorCoreLine(true),
              HasSubstr("tensor cores: consumer units had a wgmma group in flight 60% of their "
                        "host time (6 groups; host backend: emulated wgmma, not a GPU's tensor "
                        "cores)\n"));
}

TEST(MmaInFlightTest, TheAnalysisKnowsItsTraceRanOnTheHostBackend) {
  TraceLayout layout = Layout();
  layout.clock.host_backend = true;
  TraceSynthesizer synth(layout, SynthOptions{});
  UnitScript s;
  s.Begin(kKernel).Work(100);
  s.End(kKernel);
  synth.SetScript(s);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  ASSERT_THAT(words, IsOk());
  AnalysisSink sink;
  TraceSink* sinks[] = {&sink};
  DumpResult result;
  ASSERT_THAT(DumpTrace(synth.layout(), *words, {}, sinks, result), IsOk());
  EXPECT_TRUE(sink.result().host_backend);
}

TEST(MmaInFlightTest, UnionOfGroupSpansPerRole) {
  SynthOptions options;
  options.cycles_per_ns = 1.5;  // the timeline's ns: cycles / 1.5
  options.event_cost_cycles = 0;
  options.prologue_cycles = 0;
  options.epilogue_cycles = 0;
  UnitScript s;
  // In cycles: t=0 kernel; group 0 in flight [0, 300); group 1 [100, 500) overlaps it; a
  // copy (not tensor-core work) [500, 900); group 2 [600, 700); the unit ends at 1000.
  s.Begin(kKernel);
  s.AsyncBegin(kGroup, 0, kNoBarrier).Work(100);
  s.AsyncBegin(kGroup, 1, kNoBarrier).Work(200);
  s.AsyncEnd(kGroup, 0, kNoBarrier).Work(200);
  s.AsyncEnd(kGroup, 1, kNoBarrier);
  s.AsyncBegin(kCopy, 0, kNoBarrier).Work(100);
  s.AsyncBegin(kGroup, 2, kNoBarrier);
  s.Region(kSoftmax, 100);
  s.AsyncEnd(kGroup, 2, kNoBarrier).Work(200);
  s.AsyncEnd(kCopy, 0, kNoBarrier).Work(100);
  s.End(kKernel);
  TraceSynthesizer synth(Layout(), options);
  synth.SetScript(s);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  ASSERT_THAT(words, IsOk());
  AnalysisSink sink;
  TraceSink* sinks[] = {&sink};
  DumpResult result;
  ASSERT_THAT(DumpTrace(synth.layout(), *words, {}, sinks, result), IsOk());
  const Analysis& a = sink.result();
  ASSERT_EQ(a.roles.size(), 1u);
  const RoleAnalysis& role = a.roles[0];
  EXPECT_EQ(role.mma_groups, 2u * 3u);  // 2 blocks x 3 groups; the copy is not counted
  // [0, 500) and [600, 700): 600 cycles = 400 ns of 1000 cycles = 666 ns per unit (the
  // globaltimer rounds the end down).
  EXPECT_EQ(role.mma_in_flight_ns, 2 * 400);
  EXPECT_EQ(role.unit_time_ns, 2 * 667);
  EXPECT_THAT(role.mma_in_flight_share, DoubleEq(400.0 / 667.0));
  std::string text;
  llvm::raw_string_ostream os(text);
  PrintDiagnosis(a, os);
  os.flush();
  EXPECT_THAT(text, HasSubstr("tensor cores: all units had a wgmma group in flight 60% of their time (6 groups)"));
}

}  // namespace
}  // namespace warptrace
