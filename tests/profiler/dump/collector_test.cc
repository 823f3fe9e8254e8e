#include "profiler/dump/collector.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/outputs/chrome_trace.h"
#include "profiler/testing/trace_synthesizer.h"
#include "profiler/timeline/timeline.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/verify.h"
#include "tests/profiler/buffer_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

std::string ChromeText(const Timeline& timeline) {
  std::string text;
  llvm::raw_string_ostream os(text);
  EXPECT_THAT(WriteChromeTrace(timeline, {}, os), IsOk());
  os.flush();
  return text;
}

TEST(CollectTraceTest, CollectsTheWholeTimelineTheStepByStepPathBuilds) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(3000);
  ASSERT_THAT(buffer, IsOk());
  absl::StatusOr<DecodedTrace> decoded = Decode(buffer->layout, buffer->words);
  ASSERT_THAT(decoded, IsOk());
  const VerifyReport report = Verify(*decoded);
  absl::StatusOr<Timeline> expected = BuildTimeline(*decoded, report);
  ASSERT_THAT(expected, IsOk());

  absl::StatusOr<std::unique_ptr<Trace>> trace = CollectTrace(buffer->layout, buffer->words);
  ASSERT_THAT(trace, IsOk());
  const Trace& t = **trace;
  EXPECT_TRUE(t.report.ok());
  ASSERT_TRUE(t.has_timeline);
  EXPECT_EQ(t.timeline.units.size(), expected->units.size());
  EXPECT_EQ(t.timeline.origin_ns, expected->origin_ns);
  EXPECT_EQ(t.timeline.end_ns, expected->end_ns);
  EXPECT_EQ(t.timeline.clock_note, expected->clock_note);
  EXPECT_EQ(t.timeline.layout, expected->layout);
  for (size_t i = 0; i < expected->units.size(); ++i) {
    EXPECT_EQ(t.timeline.units[i].slices, expected->units[i].slices) << "unit " << i;
  }
  EXPECT_EQ(ChromeText(t.timeline), ChromeText(*expected));
  EXPECT_EQ(t.decoded.records.size(), decoded->records.size());
  EXPECT_EQ(t.decoded.layout, &t.layout);
  EXPECT_EQ(t.report.kept_events, report.kept_events);
}

TEST(CollectTraceTest, AFailedVerificationStillGivesTheTraceWithItsReportButNoTimeline) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(2000);
  ASSERT_THAT(buffer, IsOk());
  ASSERT_THAT(testing::InjectCorruption(buffer->layout, {testing::Corruption::kUnknownSite, 3},
                                        absl::MakeSpan(buffer->words)),
              IsOk());
  absl::StatusOr<std::unique_ptr<Trace>> trace = CollectTrace(buffer->layout, buffer->words);
  ASSERT_THAT(trace, IsOk());
  EXPECT_FALSE((*trace)->report.ok());
  EXPECT_EQ((*trace)->report.units.size(), 10u);
  EXPECT_FALSE((*trace)->has_timeline);
  EXPECT_TRUE((*trace)->timeline.units.empty());

  DumpOptions repair;
  repair.verify.allow_truncated = true;
  trace = CollectTrace(buffer->layout, buffer->words, repair);
  ASSERT_THAT(trace, IsOk());
  EXPECT_TRUE((*trace)->report.ok());
  ASSERT_TRUE((*trace)->has_timeline);
  EXPECT_EQ((*trace)->timeline.units[3].verdict, Verdict::kTruncated);
}

TEST(CollectTraceTest, ABufferThatCannotFitTheLayoutIsAnError) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(2000);
  ASSERT_THAT(buffer, IsOk());
  buffer->words.pop_back();
  EXPECT_THAT(CollectTrace(buffer->layout, buffer->words),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("words")));
}

TEST(CollectTraceTest, ANominalClockOfZeroIsAnErrorNotAnEmptyTrace) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(2000);
  ASSERT_THAT(buffer, IsOk());
  buffer->layout.clock.nominal_sm_clock_khz = 0;
  EXPECT_THAT(CollectTrace(buffer->layout, buffer->words),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("0 kHz")));
}

}  // namespace
}  // namespace warptrace
