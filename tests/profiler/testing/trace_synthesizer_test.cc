#include "profiler/testing/trace_synthesizer.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/device/trace_abi.h"
#include "profiler/trace/layout.h"
#include "tests/status_matchers.h"

namespace warptrace::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

TraceLayout OneWarp(uint32_t capacity) {
  TraceLayout layout;
  layout.grid = {1, 1, 1};
  layout.block = {32, 1, 1};
  layout.unit = UnitSpec::Warp();
  layout.capacity = capacity;
  layout.sites = {{0, "a", SiteKind::kRegion, ""}};
  return layout;
}

const abi::RecordHeader& Header(const std::vector<uint32_t>& words) {
  return *reinterpret_cast<const abi::RecordHeader*>(words.data());
}

TEST(UnitScriptTest, RepeatCarriesTrailingWorkIntoTheNextIteration) {
  UnitScript body;
  body.Region(0, 5).Work(7);
  UnitScript script;
  script.Work(3).Repeat(2, body);
  ASSERT_THAT(script.steps(), SizeIs(4));
  EXPECT_EQ(script.steps()[0].gap_cycles, 3u);
  EXPECT_EQ(script.steps()[1].gap_cycles, 5u);
  EXPECT_EQ(script.steps()[2].gap_cycles, 7u);
  EXPECT_EQ(script.steps()[3].gap_cycles, 5u);
  EXPECT_EQ(script.trailing_cycles(), 7u);
  EXPECT_TRUE(abi::TagIsExit(script.steps()[3].tag));
}

TEST(TraceSynthesizerTest, WritesAHeaderTheDeviceWouldWrite) {
  SynthOptions options;
  options.cycles_per_ns = 2.0;
  options.start_clock = 100;
  options.start_globaltimer_ns = 4000;
  TraceSynthesizer synth(OneWarp(4), options);
  UnitScript script;
  script.Region(0, 80);
  synth.SetScript(script);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  ASSERT_THAT(words, IsOk());
  ASSERT_THAT(*words, SizeIs(abi::RecordWords(4)));
  const abi::RecordHeader& h = Header(*words);
  EXPECT_EQ(h.magic, abi::kTraceMagic);
  EXPECT_EQ(h.attempted, 2u);
  EXPECT_EQ(h.flags, abi::kFlagComplete);
  EXPECT_EQ(h.start_clock, 100u);
  // prologue 10 + (0 + 20) + (80 + 20) + epilogue 10 = 140 cycles = 70 ns.
  EXPECT_EQ(h.end_clock, 240u);
  EXPECT_EQ(h.start_globaltimer_lo, 4000u);
  EXPECT_EQ(h.end_globaltimer_lo, 4070u);
  EXPECT_EQ(h.checksum, abi::HeaderChecksum(h.magic, h.version, h.sm_id, h.block_linear,
                                            h.unit_index, h.capacity));
  EXPECT_THAT(std::vector<uint32_t>(words->begin() + abi::kHeaderWords, words->end()),
              ElementsAre(0u, 130u, abi::kExitFlag, 230u, 0u, 0u, 0u, 0u));
  EXPECT_DOUBLE_EQ(synth.ElapsedNs(0), 70.0);
}

TEST(TraceSynthesizerTest, CountsEventsPastCapacityWithoutWritingThem) {
  TraceSynthesizer synth(OneWarp(1));
  UnitScript script;
  script.Region(0, 1).Region(0, 1);
  synth.SetScript(script);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  ASSERT_THAT(words, IsOk());
  EXPECT_EQ(Header(*words).attempted, 4u);
  EXPECT_THAT(*words, SizeIs(abi::RecordWords(1)));
}

TEST(TraceSynthesizerTest, RejectsGapsTheClockCannotRepresent) {
  TraceSynthesizer synth(OneWarp(2));
  UnitScript script;
  script.Work(uint64_t{1} << 32).Begin(0);
  synth.SetScript(script);
  EXPECT_THAT(synth.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("less than 2^32 cycles apart")));
}

TEST(InjectCorruptionTest, RefusesWhatItCannotApply) {
  TraceLayout layout = OneWarp(4);
  TraceSynthesizer synth(layout);
  UnitScript script;
  script.Region(0, 1);
  synth.SetScript(script);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  ASSERT_THAT(words, IsOk());
  const std::vector<uint32_t> before = *words;
  EXPECT_THAT(InjectCorruption(layout, {Corruption::kMismatchedNesting, 0}, absl::MakeSpan(*words)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("fewer than 2 sites")));
  EXPECT_THAT(InjectCorruption(layout, {Corruption::kSmIdOutOfRange, 0}, absl::MakeSpan(*words)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("num_sms is 0")));
  EXPECT_THAT(InjectCorruption(layout, {Corruption::kDroppedEvents, 0}, absl::MakeSpan(*words)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("recorded 2 of 4 slots")));
  EXPECT_THAT(InjectCorruption(layout, {Corruption::kBadMagic, 1}, absl::MakeSpan(*words)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has 1 records")));
  EXPECT_EQ(*words, before);
}

}  // namespace
}  // namespace warptrace::testing
