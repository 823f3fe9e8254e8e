#include "profiler/testing/trace_synthesizer.h"

#include <cstdint>
#include <vector>

#include "format/layout.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr uint32_t kNoBarrierForTest = 0xffffffffu;  // links.h's kNoBarrier

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
  // Version 3: the checksum folds the two stored events in (trace_abi.h).
  EXPECT_EQ(h.checksum,
            abi::FoldEventSlots(abi::HeaderChecksum(h.magic, h.version, h.sm_id,
                                                    h.block_linear, h.unit_index, h.capacity),
                                words->data() + abi::kHeaderWords, 2));
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

// A warp with the three version-2 hand-off site kinds (links.h).
TraceLayout HandoffWarp(uint32_t capacity) {
  TraceLayout layout = OneWarp(capacity);
  layout.sites = {{0, "a", SiteKind::kRegion, ""},
                  {1, "arrive", SiteKind::kBarrierArrive, ""},
                  {2, "wait", SiteKind::kPhaseWait, ""},
                  {3, "copy", SiteKind::kAsyncCopy, ""}};
  return layout;
}

std::vector<uint32_t> Slots(const std::vector<uint32_t>& words) {
  return std::vector<uint32_t>(words.begin() + abi::kHeaderWords, words.end());
}

TEST(TraceSynthesizerTest, WritesPayloadEventsAsTheRecorderDoesTwoSlotsEach) {
  SynthOptions options;
  options.start_clock = 0;
  options.prologue_cycles = 0;
  TraceSynthesizer synth(HandoffWarp(8), options);
  UnitScript script;
  script.Arrive(1, /*barrier=*/5, /*phase=*/2)
      .WaitPhase(2, 6, 3, /*cycles=*/100)
      .AsyncBegin(3, /*issue=*/7, /*barrier=*/kNoBarrierForTest);
  EXPECT_EQ(script.size(), 4u);
  EXPECT_EQ(script.slots(), 8u);
  synth.SetScript(script);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  ASSERT_THAT(words, IsOk());
  EXPECT_EQ(Header(*words).version, abi::kTraceVersion);
  EXPECT_EQ(Header(*words).attempted, 8u);
  // Each event: (tag | payload flag, clock), then its payload (a, b). Event cost 20 cycles.
  EXPECT_THAT(Slots(*words),
              ElementsAre(abi::MakePayloadTag(1, false), 20u, 5u, 2u,  //
                          abi::MakePayloadTag(2, false), 40u, 6u, 3u,  //
                          abi::MakePayloadTag(2, true), 160u, 6u, 3u,  //
                          abi::MakePayloadTag(3, false), 180u, 7u, kNoBarrierForTest));
}

TEST(TraceSynthesizerTest, WritesAnEventWithoutItsPayloadAtTheCapacityEdge) {
  SynthOptions options;
  options.start_clock = 0;
  options.prologue_cycles = 0;
  TraceSynthesizer synth(HandoffWarp(3), options);
  UnitScript script;
  script.Begin(0).Arrive(1, 4, 9).Arrive(1, 4, 10);
  synth.SetScript(script);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  ASSERT_THAT(words, IsOk());
  EXPECT_EQ(Header(*words).attempted, 5u) << "every slot counted, written or not";
  // Slot 2 holds the first arrival's payload; the second arrival is past capacity.
  EXPECT_THAT(Slots(*words), ElementsAre(0u, 20u, abi::MakePayloadTag(1, false), 40u, 4u, 9u));
  TraceSynthesizer edge(HandoffWarp(2), options);
  edge.SetScript(script);
  words = edge.Build();
  ASSERT_THAT(words, IsOk());
  // The arrival's event fits in the last slot, its payload does not: the event alone.
  EXPECT_THAT(Slots(*words), ElementsAre(0u, 20u, abi::MakePayloadTag(1, false), 40u));
}

TEST(InjectCorruptionTest, HandoffCorruptionsChangeOnlyTheirEventsPayloadOrRemoveIt) {
  TraceLayout layout = HandoffWarp(16);
  UnitScript script;
  script.Begin(0).Arrive(1, 0, 0).WaitPhase(2, 0, 0, 10).AsyncBegin(3, 1, 0).AsyncEnd(3, 1, 0)
      .End(0);
  TraceSynthesizer synth(layout);
  synth.SetScript(script);
  absl::StatusOr<std::vector<uint32_t>> clean = synth.Build();
  ASSERT_THAT(clean, IsOk());
  auto injected = [&](Corruption kind) {
    std::vector<uint32_t> words = *clean;
    EXPECT_THAT(InjectCorruption(layout, {kind, 0}, absl::MakeSpan(words)), IsOk())
        << CorruptionName(kind);
    return words;
  };
  // Slots: 0 kernel, 1-2 arrive, 3-4 wait enter, 5-6 wait exit, 7-8 begin, 9-10 end, 11 exit.
  std::vector<uint32_t> w = injected(Corruption::kReleaseBeforeArrivals);
  EXPECT_EQ(Slots(w)[2 * 4 + 1], 1u) << "wait enter's phase";
  EXPECT_EQ(Slots(w)[2 * 6 + 1], 1u) << "wait exit's phase";
  EXPECT_EQ(Slots(w)[2 * 2 + 1], 0u) << "the arrival keeps its phase";
  w = injected(Corruption::kArrivalCountMismatch);
  EXPECT_EQ(Slots(w)[2 * 2 + 1], 1u);
  EXPECT_EQ(Slots(w)[2 * 4 + 1], 0u);
  w = injected(Corruption::kAsyncEndWithoutBegin);
  EXPECT_EQ(Header(w).attempted, 10u);
  EXPECT_EQ(Slots(w)[2 * 7], abi::MakePayloadTag(3, true)) << "the end moved up";
  EXPECT_EQ(Slots(w)[2 * 9], abi::MakeTag(0, true));
  EXPECT_EQ(Slots(w)[2 * 10], 0u);
  w = injected(Corruption::kAsyncNeverCompleted);
  EXPECT_EQ(Header(w).attempted, 10u);
  EXPECT_EQ(Slots(w)[2 * 7], abi::MakePayloadTag(3, false));
  EXPECT_EQ(Slots(w)[2 * 9], abi::MakeTag(0, true));
  // Picks never land on a payload slot.
  std::vector<uint32_t> words = *clean;
  EXPECT_THAT(InjectCorruption(layout, {Corruption::kUnknownSite, 0, /*event=*/2},
                               absl::MakeSpan(words)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("payload slot")));
  EXPECT_THAT(InjectCorruption(layout, {Corruption::kAsyncNeverCompleted, 0, /*event=*/1},
                               absl::MakeSpan(words)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is no async copy end")));
  EXPECT_EQ(words, *clean);
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
