#include "profiler/dump.h"

#include <algorithm>
#include <fstream>
#include <vector>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "nlohmann/json.hpp"
#include "profiler/chrome_trace.h"
#include "profiler/decode.h"
#include "profiler/summary.h"
#include "profiler/testing/trace_synthesizer.h"
#include "profiler/timeline.h"
#include "profiler/verify.h"
#include "tests/profiler/buffer_fixture.h"
#include "tests/profiler/chrome_trace_checker.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::warptrace::testing::ChromeTraceViolations;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

std::string TempPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return nlohmann::json::parse(s.str());
}

std::vector<std::string> Sorted(const nlohmann::json& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.dump());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Slices(const nlohmann::json& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    if (e["ph"] != "M") out.push_back(e.dump());
  }
  return out;
}

// The whole-Timeline path the chunked dump must reproduce.
nlohmann::json WholeTimelineTrace(const testing::SyntheticBuffer& buffer,
                                  const TimelineOptions& options, Timeline* out = nullptr) {
  absl::StatusOr<DecodedTrace> decoded = Decode(buffer.layout, buffer.words);
  EXPECT_THAT(decoded, IsOk());
  const VerifyReport report = Verify(*decoded);
  absl::StatusOr<Timeline> timeline = BuildTimeline(*decoded, report, options);
  EXPECT_THAT(timeline, IsOk());
  std::string text;
  llvm::raw_string_ostream os(text);
  EXPECT_THAT(WriteChromeTrace(*timeline, {}, os), IsOk());
  os.flush();
  if (out != nullptr) *out = *std::move(timeline);
  return nlohmann::json::parse(text);
}

TEST(DumpTest, ChunkedDumpWritesTheSameEventsAsTheWholeTimeline) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(8000);
  ASSERT_THAT(buffer, IsOk());
  for (bool compensate : {false, true}) {
    DumpOptions options;
    options.chrome_trace_path = TempPath("chunked.json");
    options.chunk_events = 3 * testing::kSyntheticEventsPerUnit;  // 40 records: 14 chunks
    options.timeline.compensate_overhead = compensate;
    DumpResult result;
    ASSERT_THAT(DumpTrace(buffer->layout, buffer->words, options, result), IsOk());
    const nlohmann::json chunked = ReadJson(options.chrome_trace_path);
    const nlohmann::json whole = WholeTimelineTrace(*buffer, options.timeline);
    EXPECT_THAT(ChromeTraceViolations(chunked), IsEmpty());
    // The same events; slices in the same order. (Thread metadata comes per chunk.)
    EXPECT_EQ(Sorted(chunked["traceEvents"]), Sorted(whole["traceEvents"]));
    EXPECT_EQ(Slices(chunked["traceEvents"]), Slices(whole["traceEvents"]));
    nlohmann::json a = chunked["otherData"], b = whole["otherData"];
    EXPECT_THAT(a["clock"].get<std::string>(),
                HasSubstr("calibrated per unit from its globaltimer pair (40 units"));
    a.erase("clock");
    b.erase("clock");
    EXPECT_EQ(a, b);
    EXPECT_EQ(result.slices, 4000u);
  }
}

TEST(DumpTest, AStreamGetsTheSameTraceAsTheFile) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(2000);
  ASSERT_THAT(buffer, IsOk());
  DumpOptions options;
  options.chunk_events = 3 * testing::kSyntheticEventsPerUnit;
  options.chrome_trace_path = TempPath("to_file.json");
  DumpResult to_file;
  ASSERT_THAT(DumpTrace(buffer->layout, buffer->words, options, to_file), IsOk());
  std::string text;
  llvm::raw_string_ostream os(text);
  options.chrome_trace_path = TempPath("not_written.json");
  options.chrome_trace_stream = &os;
  DumpResult to_stream;
  ASSERT_THAT(DumpTrace(buffer->layout, buffer->words, options, to_stream), IsOk());
  os.flush();
  EXPECT_EQ(nlohmann::json::parse(text), ReadJson(TempPath("to_file.json")));
  EXPECT_FALSE(llvm::sys::fs::exists(options.chrome_trace_path));
  EXPECT_EQ(to_stream.slices, to_file.slices);
}

TEST(DumpTest, SingleChunkKeepsBuildTimelinesClockNote) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(2000);
  ASSERT_THAT(buffer, IsOk());
  Timeline whole;
  WholeTimelineTrace(*buffer, {}, &whole);
  DumpOptions options;
  DumpResult result;
  ASSERT_THAT(DumpTrace(buffer->layout, buffer->words, options, result), IsOk());
  EXPECT_EQ(result.clock_note, whole.clock_note);
  EXPECT_EQ(result.origin_ns, whole.origin_ns);
  EXPECT_EQ(result.end_ns, whole.end_ns);
}

TEST(DumpTest, ChunkedSummaryEqualsTheWholeTimelinesSummary) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(4000);
  ASSERT_THAT(buffer, IsOk());
  Timeline whole;
  WholeTimelineTrace(*buffer, {}, &whole);
  absl::StatusOr<Summary> expected = Summarize(whole);
  ASSERT_THAT(expected, IsOk());
  DumpOptions options;
  options.summary = true;
  options.chunk_events = 7 * testing::kSyntheticEventsPerUnit + 5;  // 7 records
  DumpResult result;
  ASSERT_THAT(DumpTrace(buffer->layout, buffer->words, options, result), IsOk());
  ASSERT_TRUE(result.summary.has_value());
  EXPECT_EQ(result.summary->regions, expected->regions);
  EXPECT_EQ(result.summary->units, expected->units);
  EXPECT_EQ(result.summary->unit_time_ns, expected->unit_time_ns);
  EXPECT_EQ(result.summary->wall_ns, expected->wall_ns);
}

TEST(DumpTest, FailedVerificationReturnsTheReportAndWritesNothing) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(2000);
  ASSERT_THAT(buffer, IsOk());
  ASSERT_THAT(testing::InjectCorruption(buffer->layout,
                                        {testing::Corruption::kDroppedEvents, /*record=*/4,
                                         -1, /*amount=*/6},
                                        absl::MakeSpan(buffer->words)),
              IsOk());
  DumpOptions options;
  options.chrome_trace_path = TempPath("never.json");
  DumpResult result;
  EXPECT_THAT(DumpTrace(buffer->layout, buffer->words, options, result),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("206")));
  EXPECT_FALSE(result.report.ok());
  EXPECT_EQ(result.report.units.size(), 10u);
  EXPECT_FALSE(llvm::sys::fs::exists(options.chrome_trace_path));
}

TEST(DumpTest, ABufferOfTheWrongSizeIsDataLoss) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(2000);
  ASSERT_THAT(buffer, IsOk());
  buffer->words.pop_back();
  DumpResult result;
  EXPECT_THAT(DumpTrace(buffer->layout, buffer->words, {}, result),
              StatusIs(absl::StatusCode::kDataLoss, ::testing::_));
  EXPECT_TRUE(result.report.units.empty());
}

}  // namespace
}  // namespace warptrace
