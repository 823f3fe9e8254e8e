// A checked-in version-1 trace buffer (tests/golden/v1_pipeline_warp.*, provenance beside it)
// still loads, decodes, verifies and dumps now that the recorder writes version 2: version 1
// has no payload slots and 31 site-id bits, and must be read by its own rules.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "nlohmann/json.hpp"
#include "profiler/analysis/summary.h"
#include "profiler/dump/dump.h"
#include "profiler/imports/sidecar.h"
#include "profiler/outputs/chrome_trace.h"
#include "profiler/outputs/chrome_trace_sink.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/verify.h"
#include "tests/profiler/chrome_trace_checker.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::IsEmpty;
using ::warptrace::testing::ChromeTraceViolations;
using ::warptrace::testing::IsOk;

constexpr char kPrefix[] = "tests/golden/v1_pipeline_warp";

TEST(TraceV1GoldenTest, EveryRecordDecodesAsVersionOneWithNoPayloads) {
  absl::StatusOr<LoadedTrace> loaded = LoadTrace(kPrefix);
  ASSERT_THAT(loaded, IsOk());
  absl::StatusOr<DecodedTrace> decoded = Decode(loaded->layout, loaded->words);
  ASSERT_THAT(decoded, IsOk());
  ASSERT_EQ(decoded->records.size(), NumRecords(loaded->layout));
  for (const DecodedRecord& r : decoded->records) {
    ASSERT_EQ(r.header_problem, HeaderProblem::kNone) << "record " << r.record_index;
    EXPECT_EQ(r.version, 1u);
    EXPECT_TRUE(r.complete());
    EXPECT_EQ(r.attempted, r.events.size());
    for (uint32_t i = 0; i < r.events.size(); ++i) {
      EXPECT_FALSE(r.HasPayload(r.events[i].tag));
      EXPECT_LT(r.SiteOf(r.events[i].tag), loaded->layout.sites.size());
    }
  }
}

TEST(TraceV1GoldenTest, VerifiesAndDumpsAChromeTraceTheViewersLoad) {
  absl::StatusOr<LoadedTrace> loaded = LoadTrace(kPrefix);
  ASSERT_THAT(loaded, IsOk());
  absl::StatusOr<DecodedTrace> decoded = Decode(loaded->layout, loaded->words);
  ASSERT_THAT(decoded, IsOk());
  // Enter events per site name, counted from the decoded buffer itself.
  std::map<std::string, uint64_t> enters;
  for (const DecodedRecord& r : decoded->records) {
    for (const abi::Event& e : r.events) {
      if (!abi::TagIsExit(e.tag)) ++enters[loaded->layout.sites[r.SiteOf(e.tag)].name];
    }
  }

  std::string chrome;
  llvm::raw_string_ostream stream(chrome);
  ChromeTraceSink chrome_sink(ChromeTraceOptions{}, stream);
  SummarySink summary_sink;
  TraceSink* sinks[] = {&chrome_sink, &summary_sink};
  DumpResult result;
  ASSERT_THAT(DumpTrace(loaded->layout, loaded->words, DumpOptions{}, sinks, result), IsOk());
  stream.flush();
  EXPECT_TRUE(result.report.ok());
  EXPECT_EQ(result.report.dropped_events, 0u);
  ASSERT_EQ(result.report.units.size(), decoded->records.size());
  for (const UnitVerdict& v : result.report.units) {
    EXPECT_EQ(v.verdict, Verdict::kComplete) << v.reason;
  }
  ASSERT_TRUE(summary_sink.summary().has_value());
  EXPECT_EQ(summary_sink.summary()->units, decoded->records.size());
  std::map<std::string, uint64_t> counted;
  for (const RegionStats& region : summary_sink.summary()->regions) {
    counted[region.name] = region.count;
  }
  EXPECT_EQ(counted, enters);

  const nlohmann::json trace = nlohmann::json::parse(chrome);
  EXPECT_THAT(ChromeTraceViolations(trace), IsEmpty());
  uint64_t slices = 0;
  for (const nlohmann::json& event : trace["traceEvents"]) slices += event["ph"] == "X";
  EXPECT_EQ(slices, result.slices);
  uint64_t total_enters = 0;
  for (const auto& [name, n] : enters) total_enters += n;
  EXPECT_EQ(result.slices, total_enters);
}

}  // namespace
}  // namespace warptrace
