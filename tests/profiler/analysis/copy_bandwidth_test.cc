// A copy site that says what it is (SiteInfo::copy_engine, copy_bytes): AnalysisSink's copy
// bandwidth per role (analysis.h, "copy bandwidth"), and the engine and bytes on the copy's
// slice in the Chrome trace (args) and the Perfetto trace (debug annotations), on a
// synthesized trace whose times are known exactly.
#include <cstdint>
#include <string>
#include <vector>

#include "format/layout.h"
#include "format/links.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "nlohmann/json.hpp"
#include "profiler/analysis/analysis_sink.h"
#include "profiler/analysis/diagnosis.h"
#include "profiler/dump/dump.h"
#include "profiler/outputs/chrome_trace_sink.h"
#include "profiler/outputs/perfetto/perfetto_sink.h"
#include "profiler/outputs/perfetto/perfetto_trace.pb.h"
#include "profiler/testing/trace_synthesizer.h"
#include "tests/profiler/outputs/perfetto/perfetto_packets.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::DoubleEq;
using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::SynthOptions;
using ::warptrace::testing::TraceSynthesizer;
using ::warptrace::testing::UnitScript;

constexpr uint32_t kKernel = 0, kTma = 1, kUnknown = 2;

TraceLayout Layout(bool host_backend) {
  TraceLayout layout;
  layout.kernel_name = "copies";
  layout.grid = {2, 1, 1};
  layout.block = {128, 1, 1};
  layout.unit = UnitSpec::Warpgroup();
  layout.sites = {{kKernel, "kernel", SiteKind::kKernel, "copies"},
                  {kTma, "A tile", SiteKind::kAsyncCopy, "copies > copy A tile"},
                  {kUnknown, "other", SiteKind::kAsyncCopy, "copies > copy other"}};
  layout.sites[kTma].copy_engine = CopyEngine::kTma2d;
  layout.sites[kTma].copy_bytes = 8192;
  layout.capacity = 64;
  layout.clock.host_backend = host_backend;
  return layout;
}

struct Outputs {
  Analysis analysis;
  std::string diagnosis;
  std::string chrome;
  std::string perfetto;
};

// Per unit, in cycles (1.5 per ns): TMA copy 0 in flight [0, 300), copy 1 [150, 450) overlaps
// it; a copy of unknown engine [450, 750) (not counted); the unit ends at 900.
Outputs Dump(bool host_backend) {
  SynthOptions options;
  options.cycles_per_ns = 1.5;
  options.event_cost_cycles = 0;
  options.prologue_cycles = 0;
  options.epilogue_cycles = 0;
  // Version 4: its TMA copies record their ends (from version 5 the dump derives them from
  // the waits on their phase, which this trace has none of).
  options.version = 4;
  UnitScript s;
  s.Begin(kKernel);
  s.AsyncBegin(kTma, 0, kNoBarrier).Work(150);
  s.AsyncBegin(kTma, 1, kNoBarrier).Work(150);
  s.AsyncEnd(kTma, 0, kNoBarrier).Work(150);
  s.AsyncEnd(kTma, 1, kNoBarrier);
  s.AsyncBegin(kUnknown, 0, kNoBarrier).Work(300);
  s.AsyncEnd(kUnknown, 0, kNoBarrier).Work(150);
  s.End(kKernel);
  TraceSynthesizer synth(Layout(host_backend), options);
  synth.SetScript(s);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  EXPECT_THAT(words, IsOk());
  Outputs out;
  if (!words.ok()) return out;
  AnalysisSink analysis;
  llvm::raw_string_ostream chrome_os(out.chrome);
  ChromeTraceSink chrome({}, chrome_os);
  llvm::raw_string_ostream perfetto_os(out.perfetto);
  PerfettoTraceSink perfetto(perfetto_os);
  TraceSink* sinks[] = {&analysis, &chrome, &perfetto};
  DumpResult result;
  EXPECT_THAT(DumpTrace(synth.layout(), *words, {}, sinks, result), IsOk());
  chrome_os.flush();
  perfetto_os.flush();
  out.analysis = analysis.result();
  llvm::raw_string_ostream os(out.diagnosis);
  PrintDiagnosis(out.analysis, os);
  os.flush();
  return out;
}

TEST(CopyBandwidthTest, IsTheRolesCopyBytesOverTheUnionOfItsCopySpans) {
  const Outputs out = Dump(/*host_backend=*/false);
  ASSERT_EQ(out.analysis.roles.size(), 1u);
  const RoleAnalysis& role = out.analysis.roles[0];
  EXPECT_EQ(role.copies, 2u * 2u);  // 2 blocks x 2 TMA copies; the unknown one is not counted
  EXPECT_EQ(role.copy_bytes, 4u * 8192u);
  EXPECT_EQ(role.copy_engines, std::vector<CopyEngine>{CopyEngine::kTma2d});
  // [0, 450) cycles = 300 ns per unit.
  EXPECT_EQ(role.copy_in_flight_ns, 2 * 300);
  EXPECT_THAT(role.copy_gb_per_s_in_flight, DoubleEq(4.0 * 8192 / 600));
  ASSERT_GT(out.analysis.grid.span_ns, 0);
  EXPECT_THAT(role.copy_gb_per_s_over_span,
              DoubleEq(4.0 * 8192 / static_cast<double>(out.analysis.grid.span_ns)));
  EXPECT_THAT(out.diagnosis,
              HasSubstr("copy bandwidth: all units moved 32768 bytes in 4 copies (tma_2d): "
                        "54.61 GB/s per unit while a copy was in flight (50% of their time)"));
  EXPECT_THAT(out.diagnosis, Not(HasSubstr("host time")));
}

TEST(CopyBandwidthTest, OnTheHostBackendTheLineSaysItIsHostTime) {
  EXPECT_THAT(Dump(/*host_backend=*/true).diagnosis,
              HasSubstr("GB/s over the kernel's span (host time on the host backend, not a "
                        "GPU's bandwidth)"));
}

TEST(CopyBandwidthTest, TheChromeSliceOfACopyCarriesItsEngineAndBytes) {
  const nlohmann::json trace = nlohmann::json::parse(Dump(false).chrome);
  int tma = 0, unknown = 0;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event.value("ph", "") != "X") continue;
    if (event["name"] == "A tile") {
      ++tma;
      EXPECT_EQ(event["args"]["engine"], "tma_2d");
      EXPECT_EQ(event["args"]["bytes"], 8192);
    } else if (event["name"] == "other") {
      ++unknown;
      EXPECT_FALSE(event["args"].contains("engine"));
    }
  }
  EXPECT_EQ(tma, 4);
  EXPECT_EQ(unknown, 2);
}

TEST(CopyBandwidthTest, ThePerfettoSliceOfACopyCarriesItsEngineAndBytes) {
  // As Perfetto reads it: the compressed packets inflated in place.
  const std::vector<perfetto::TracePacket> packets = ReadPerfettoPackets(Dump(false).perfetto);
  ASSERT_FALSE(packets.empty());
  int annotated = 0;
  for (const perfetto::TracePacket& packet : packets) {
    if (!packet.has_track_event()) continue;
    std::string engine;
    uint64_t bytes = 0;
    for (const perfetto::DebugAnnotation& a : packet.track_event().debug_annotations()) {
      if (a.name() == "engine") engine = a.string_value();
      if (a.name() == "bytes") bytes = a.uint_value();
    }
    if (engine.empty()) continue;
    ++annotated;
    EXPECT_EQ(engine, "tma_2d");
    EXPECT_EQ(bytes, 8192u);
  }
  EXPECT_EQ(annotated, 4);  // each TMA copy's begin; the unknown copy has none
}

}  // namespace
}  // namespace warptrace
