#include "profiler/trace/decode.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "format/layout.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/testing/trace_synthesizer.h"
#include "tests/profiler/buffer_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::Corruption;
using ::warptrace::testing::InjectCorruption;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;
using ::warptrace::testing::SynthOptions;
using ::warptrace::testing::TraceSynthesizer;
using ::warptrace::testing::UnitScript;

// 3 sampled blocks (1, 3, 5 of a 6-block grid) x 2 warps, capacity 4.
TraceLayout SmallLayout() {
  TraceLayout layout;
  layout.kernel_name = "k";
  layout.grid = {6, 1, 1};
  layout.block = {64, 1, 1};
  layout.unit = UnitSpec::Warp();
  layout.capacity = 4;
  layout.sample = {1, UINT32_MAX, 2};
  layout.clock.num_sms = 8;
  layout.sites = {{0, "outer", SiteKind::kRegion, ""}, {1, "inner", SiteKind::kRegion, ""}};
  return layout;
}

UnitScript OuterInner() {
  UnitScript s;
  s.Begin(0).Work(10).Region(1, 100).Work(10).End(0);
  return s;
}

std::vector<uint32_t> Synthesize(const TraceLayout& layout, const UnitScript& script,
                                 SynthOptions options = {}) {
  TraceSynthesizer synth(layout, options);
  synth.SetScript(script);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  EXPECT_THAT(words, IsOk());
  return words.ok() ? *std::move(words) : std::vector<uint32_t>();
}

TEST(DecodeTest, HandBuiltRecordDecodesEveryHeaderField) {
  TraceLayout layout = SmallLayout();
  layout.grid = {1, 1, 1};
  layout.block = {32, 1, 1};
  layout.sample = {};
  layout.capacity = 2;
  const uint32_t checksum = abi::HeaderChecksum(abi::kTraceMagic, 1, 7, 0, 0, 2);
  const std::vector<uint32_t> words = {
      abi::kTraceMagic, 1, /*sm*/ 7, /*block*/ 0, /*unit*/ 0, /*attempted*/ 2, /*capacity*/ 2,
      abi::kFlagComplete, /*start clock*/ 100, /*end clock*/ 900,
      /*start gt*/ 0x10, 0x1, /*end gt*/ 0x500, 0x1, abi::kHeaderWords, checksum,
      /*event 0*/ 1, 200, /*event 1*/ 1u | abi::kExitFlag, 300};
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  ASSERT_EQ(decoded->records.size(), 1u);
  const DecodedRecord& r = decoded->records[0];
  EXPECT_EQ(r.header_problem, HeaderProblem::kNone);
  EXPECT_EQ(r.sm_id, 7u);
  EXPECT_EQ(r.attempted, 2u);
  EXPECT_EQ(r.capacity, 2u);
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.start_clock, 100u);
  EXPECT_EQ(r.end_clock, 900u);
  EXPECT_EQ(r.start_globaltimer, 0x100000010u);
  EXPECT_EQ(r.end_globaltimer, 0x100000500u);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].tag, 1u);
  EXPECT_EQ(r.events[0].clock, 200u);
  EXPECT_TRUE(abi::TagIsExit(r.events[1].tag));
  EXPECT_EQ(r.events[1].clock, 300u);
  EXPECT_EQ(decoded->total_events, 2u);
}

TEST(DecodeTest, RecordsCarryCoordinatesFromTheirPosition) {
  const TraceLayout layout = SmallLayout();
  const std::vector<uint32_t> words = Synthesize(layout, OuterInner());
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  ASSERT_EQ(decoded->records.size(), 6u);
  const uint32_t blocks[] = {1, 1, 3, 3, 5, 5};
  for (uint64_t r = 0; r < 6; ++r) {
    EXPECT_EQ(decoded->records[r].record_index, r);
    EXPECT_EQ(decoded->records[r].block_linear, blocks[r]);
    EXPECT_EQ(decoded->records[r].unit_index, r % 2);
    EXPECT_EQ(decoded->records[r].sm_id, blocks[r] % 4);  // SynthOptions::num_virtual_sms
    EXPECT_EQ(decoded->records[r].events.size(), 4u);
  }
  EXPECT_EQ(decoded->total_events, 24u);
  EXPECT_EQ(decoded->layout, &layout);
}

TEST(DecodeTest, EventsPointIntoTheCallersBuffer) {
  const TraceLayout layout = SmallLayout();
  const std::vector<uint32_t> words = Synthesize(layout, OuterInner());
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  const uint64_t record_words = abi::RecordWords(layout.capacity);
  for (const DecodedRecord& r : decoded->records) {
    EXPECT_EQ(static_cast<const void*>(r.events.data()),
              static_cast<const void*>(words.data() + r.record_index * record_words +
                                       abi::kHeaderWords));
  }
}

TEST(DecodeTest, OverflowedRecordExposesOnlyCapacityEvents) {
  const TraceLayout layout = SmallLayout();
  UnitScript script = OuterInner();
  script.Region(1, 5);  // 6 events into 4 slots
  const std::vector<uint32_t> words = Synthesize(layout, script);
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->records[0].attempted, 6u);
  EXPECT_EQ(decoded->records[0].events.size(), 4u);
  EXPECT_EQ(decoded->records[0].dropped(), 2u);
}

TEST(DecodeTest, UnfinishedUnitRecoversItsWrittenEvents) {
  const TraceLayout layout = SmallLayout();
  UnitScript script;
  script.Region(0, 10).Begin(1);  // 3 events, slot 3 stays zero
  std::vector<uint32_t> words = Synthesize(layout, script);
  ASSERT_THAT(InjectCorruption(layout, {Corruption::kIncompleteUnit, 2}, absl::MakeSpan(words)),
              IsOk());
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  const DecodedRecord& r = decoded->records[2];
  EXPECT_FALSE(r.complete());
  EXPECT_TRUE(r.events_recovered);
  EXPECT_EQ(r.attempted, 0u);
  EXPECT_EQ(r.events.size(), 3u);
}

TEST(DecodeTest, RejectsBufferOfTheWrongSize) {
  const TraceLayout layout = SmallLayout();
  std::vector<uint32_t> words = Synthesize(layout, OuterInner());
  words.pop_back();
  EXPECT_THAT(Decode(layout, words),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("has 143 words"), HasSubstr("needs 144"),
                             HasSubstr("6 records x 24 words"))));
}

TEST(DecodeTest, RejectsAnInvalidLayout) {
  TraceLayout layout = SmallLayout();
  layout.capacity = 0;
  EXPECT_THAT(Decode(layout, {}), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("capacity is 0")));
}

TEST(DecodeTest, FailsWhenAConsistentHeaderSaysAnotherCapacity) {
  const TraceLayout layout = SmallLayout();
  std::vector<uint32_t> words = Synthesize(layout, OuterInner());
  ASSERT_THAT(InjectCorruption(layout, {Corruption::kWrongCapacity, 3}, absl::MakeSpan(words)),
              IsOk());
  EXPECT_THAT(Decode(layout, words),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("record 3 (block (3,0,0) warp 1)"),
                             HasSubstr("written with capacity 3 but the layout says 4"))));
}

TEST(DecodeTest, ReadingTheBufferWithAShiftedLayoutIsCaught) {
  // Two warp records of capacity 12 (2 x 40 words) read as one block-wide record of capacity
  // 32 (80 words): the size matches by accident, the header gives it away.
  TraceLayout real;
  real.grid = {1, 1, 1};
  real.block = {64, 1, 1};
  real.unit = UnitSpec::Warp();
  real.capacity = 12;  // 2 records x 40 words = 80 words
  real.sites = {{0, "a", SiteKind::kRegion, ""}};
  UnitScript script;
  script.Region(0, 10);
  const std::vector<uint32_t> words = Synthesize(real, script);
  TraceLayout wrong = real;
  wrong.capacity = 32;  // 1 record x 80 words
  wrong.unit = UnitSpec::Block();
  EXPECT_THAT(Decode(wrong, words),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("capacity 12")));
}

struct HeaderCase {
  Corruption corruption;
  HeaderProblem problem;
};

class DecodeHeaderProblemTest : public ::testing::TestWithParam<HeaderCase> {};

TEST_P(DecodeHeaderProblemTest, MarksOnlyTheDamagedRecord) {
  const TraceLayout layout = SmallLayout();
  std::vector<uint32_t> words = Synthesize(layout, OuterInner());
  ASSERT_THAT(InjectCorruption(layout, {GetParam().corruption, 4}, absl::MakeSpan(words)), IsOk());
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  for (const DecodedRecord& r : decoded->records) {
    if (r.record_index == 4) {
      EXPECT_EQ(r.header_problem, GetParam().problem) << HeaderProblemName(r.header_problem);
      EXPECT_TRUE(r.events.empty());
      EXPECT_EQ(r.block_linear, 5u);  // from the position, not the header
      EXPECT_EQ(r.unit_index, 0u);
      EXPECT_EQ(r.header.size(), abi::kHeaderWords);
    } else {
      EXPECT_EQ(r.header_problem, HeaderProblem::kNone);
    }
  }
  EXPECT_EQ(decoded->total_events, 20u);
}

INSTANTIATE_TEST_SUITE_P(
    EachClass, DecodeHeaderProblemTest,
    ::testing::Values(HeaderCase{Corruption::kMissingUnit, HeaderProblem::kMissing},
                      HeaderCase{Corruption::kBadMagic, HeaderProblem::kBadMagic},
                      HeaderCase{Corruption::kBadVersion, HeaderProblem::kBadVersion},
                      HeaderCase{Corruption::kBadHeaderWords, HeaderProblem::kBadHeaderWords},
                      HeaderCase{Corruption::kBadChecksum, HeaderProblem::kBadChecksum},
                      HeaderCase{Corruption::kWrongBlock, HeaderProblem::kWrongBlock},
                      HeaderCase{Corruption::kWrongUnit, HeaderProblem::kWrongUnit},
                      HeaderCase{Corruption::kBadGlobaltimer, HeaderProblem::kBadGlobaltimer}),
    [](const ::testing::TestParamInfo<HeaderCase>& info) {
      std::string name = HeaderProblemName(info.param.problem);
      name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
      return name;
    });

// 2000 blocks x 2 warps of capacity 600: ~4.9 Mi words, decoded on up to 18 threads.
TraceLayout BigLayout() {
  TraceLayout layout = SmallLayout();
  layout.grid = {2000, 1, 1};
  layout.sample = {};
  layout.capacity = 600;
  return layout;
}

TEST(DecodeTest, ThreadsDecodeTheSameRecords) {
  const TraceLayout layout = BigLayout();
  std::vector<uint32_t> words = Synthesize(layout, OuterInner());
  // Damaged records in different threads' ranges.
  for (auto [corruption, record] : {std::pair{Corruption::kBadChecksum, 10u},
                                    std::pair{Corruption::kMissingUnit, 1999u},
                                    std::pair{Corruption::kWrongUnit, 3001u}}) {
    ASSERT_THAT(InjectCorruption(layout, {corruption, record}, absl::MakeSpan(words)), IsOk());
  }
  DecodedTrace one;
  ASSERT_THAT(DecodeInto(layout, words, one, 1), IsOk());
  ASSERT_EQ(one.records.size(), 4000u);
  for (int threads : {2, 3, 8}) {
    DecodedTrace many;
    ASSERT_THAT(DecodeInto(layout, words, many, threads), IsOk());
    EXPECT_EQ(many.total_events, one.total_events) << threads << " threads";
    ASSERT_EQ(many.records.size(), one.records.size());
    for (size_t i = 0; i < one.records.size(); ++i) {
      const DecodedRecord& a = one.records[i];
      const DecodedRecord& b = many.records[i];
      ASSERT_EQ(b.record_index, a.record_index);
      ASSERT_EQ(b.header_problem, a.header_problem) << "record " << i;
      ASSERT_EQ(b.block_linear, a.block_linear);
      ASSERT_EQ(b.unit_index, a.unit_index);
      ASSERT_EQ(b.expected_checksum, a.expected_checksum);
      ASSERT_EQ(b.events.data(), a.events.data());
      ASSERT_EQ(b.events.size(), a.events.size());
      ASSERT_EQ(b.start_globaltimer, a.start_globaltimer);
      ASSERT_EQ(b.sm_id, a.sm_id);
    }
  }
  EXPECT_EQ(one.records[10].header_problem, HeaderProblem::kBadChecksum);
  EXPECT_EQ(one.records[3001].header_problem, HeaderProblem::kWrongUnit);
}

TEST(DecodeTest, ThreadsReportTheFirstBadRecordInBufferOrder) {
  const TraceLayout layout = BigLayout();
  std::vector<uint32_t> words = Synthesize(layout, OuterInner());
  ASSERT_THAT(InjectCorruption(layout, {Corruption::kWrongCapacity, 3500}, absl::MakeSpan(words)),
              IsOk());
  ASSERT_THAT(InjectCorruption(layout, {Corruption::kWrongCapacity, 701}, absl::MakeSpan(words)),
              IsOk());
  for (int threads : {1, 2, 5}) {
    DecodedTrace out;
    EXPECT_THAT(DecodeInto(layout, words, out, threads),
                StatusIs(absl::StatusCode::kDataLoss,
                         HasSubstr("record 701 (block (350,0,0) warp 1)")))
        << threads << " threads";
  }
}

TEST(DecodeTest, DecodeIntoReusesItsStorage) {
  const TraceLayout layout = SmallLayout();
  const std::vector<uint32_t> words = Synthesize(layout, OuterInner());
  DecodedTrace decoded;
  ASSERT_THAT(DecodeInto(layout, words, decoded), IsOk());
  const DecodedRecord* storage = decoded.records.data();
  ASSERT_THAT(DecodeInto(layout, words, decoded), IsOk());
  EXPECT_EQ(decoded.records.data(), storage);
  EXPECT_EQ(decoded.total_events, 24u);
}

// ---- Trace versions: v1 (no payloads) and v2 (payload slots) ------------------------------

// One finished warp record of `version` with the given event slots (2 words each).
std::vector<uint32_t> OneRecord(uint32_t version, uint32_t capacity, uint32_t attempted,
                                uint32_t flags, const std::vector<uint32_t>& slot_words) {
  std::vector<uint32_t> words = {
      abi::kTraceMagic, version, /*sm*/ 3, /*block*/ 0, /*unit*/ 0, attempted, capacity, flags,
      /*start clock*/ 100, /*end clock*/ 900, /*start gt*/ 0x10, 0x1, /*end gt*/ 0x500, 0x1,
      abi::kHeaderWords, abi::HeaderChecksum(abi::kTraceMagic, version, 3, 0, 0, capacity)};
  words.insert(words.end(), slot_words.begin(), slot_words.end());
  words.resize(abi::RecordWords(capacity), 0u);
  return words;
}

TraceLayout OneWarp(uint32_t capacity) {
  TraceLayout layout = SmallLayout();
  layout.grid = {1, 1, 1};
  layout.block = {32, 1, 1};
  layout.sample = {};
  layout.capacity = capacity;
  return layout;
}

TEST(DecodeTest, VersionTwoEventWithPayloadIsFollowedByItsPayloadSlot) {
  const std::vector<uint32_t> words =
      OneRecord(2, 6, 6, abi::kFlagComplete,
                {0, 200,                                   // enter site 0
                 abi::MakePayloadTag(1, false), 300, 7, 1,  // enter site 1, payload (7, 1)
                 abi::MakePayloadTag(1, true), 400, 0, 0,   // exit site 1, payload (0, 0)
                 abi::kExitFlag, 500});                     // exit site 0
  const TraceLayout layout = OneWarp(6);
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  const DecodedRecord& r = decoded->records[0];
  ASSERT_EQ(r.header_problem, HeaderProblem::kNone);
  EXPECT_EQ(r.version, 2u);
  ASSERT_EQ(r.events.size(), 6u);  // slots, payloads included
  std::vector<uint32_t> sites, event_slots;
  for (uint32_t i = 0; i < r.events.size(); i = r.NextEvent(i)) {
    event_slots.push_back(i);
    sites.push_back(r.SiteOf(r.events[i].tag));
  }
  EXPECT_EQ(event_slots, (std::vector<uint32_t>{0, 1, 3, 5}));
  EXPECT_EQ(sites, (std::vector<uint32_t>{0, 1, 1, 0}));
  ASSERT_NE(r.PayloadOf(1), nullptr);
  EXPECT_EQ(r.PayloadOf(1)->a, 7u);
  EXPECT_EQ(r.PayloadOf(1)->b, 1u);
  ASSERT_NE(r.PayloadOf(3), nullptr);
  EXPECT_EQ(r.PayloadOf(3)->a, 0u);
  EXPECT_EQ(r.PayloadOf(0), nullptr);
  EXPECT_TRUE(abi::TagIsExit(r.events[3].tag));
}

TEST(DecodeTest, EventWhosePayloadFellPastCapacityHasNoPayload) {
  // Capacity 2: the event's slot was written, its payload was counted but not stored.
  const std::vector<uint32_t> words =
      OneRecord(2, 2, 3, abi::kFlagComplete, {0, 200, abi::MakePayloadTag(1, false), 300});
  absl::StatusOr<DecodedTrace> decoded = Decode(OneWarp(2), words);
  ASSERT_THAT(decoded, IsOk());
  const DecodedRecord& r = decoded->records[0];
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_TRUE(r.HasPayload(r.events[1].tag));
  EXPECT_EQ(r.PayloadOf(1), nullptr);
  EXPECT_EQ(r.dropped(), 1u);
}

TEST(DecodeTest, UnfinishedUnitRecoveryKeepsAnAllZeroPayloadWithItsEvent) {
  // No kFlagComplete: events are recovered up to the first all-zero slot, but a zero
  // payload slot (barrier 0, phase 0) belongs to the event before it.
  const std::vector<uint32_t> words =
      OneRecord(2, 6, 0, 0, {0, 200, abi::MakePayloadTag(1, false), 300, 0, 0, 1, 400});
  absl::StatusOr<DecodedTrace> decoded = Decode(OneWarp(6), words);
  ASSERT_THAT(decoded, IsOk());
  const DecodedRecord& r = decoded->records[0];
  EXPECT_TRUE(r.events_recovered);
  EXPECT_EQ(r.events.size(), 4u);
}

TEST(DecodeTest, VersionOneTagsHaveNoPayloadFlagAndThirtyOneSiteBits) {
  // In version 1, bit 30 is part of the site id (an unknown site), not a payload flag.
  const uint32_t tag = abi::kPayloadFlag | 1u;
  const std::vector<uint32_t> words =
      OneRecord(1, 2, 2, abi::kFlagComplete, {tag, 200, 0, 300});
  absl::StatusOr<DecodedTrace> decoded = Decode(OneWarp(2), words);
  ASSERT_THAT(decoded, IsOk());
  const DecodedRecord& r = decoded->records[0];
  ASSERT_EQ(r.header_problem, HeaderProblem::kNone);
  EXPECT_EQ(r.version, 1u);
  EXPECT_FALSE(r.HasPayload(tag));
  EXPECT_EQ(r.NextEvent(0), 1u);
  EXPECT_EQ(r.SiteOf(tag), (1u << 30) | 1u);
  EXPECT_GE(r.SiteOf(tag), abi::kMaxSites);
}

TEST(DecodeTest, VersionsOutsideTheReadableRangeAreBadVersion) {
  for (uint32_t version : {0u, abi::kTraceVersion + 1}) {
    const std::vector<uint32_t> words = OneRecord(version, 2, 0, abi::kFlagComplete, {});
    absl::StatusOr<DecodedTrace> decoded = Decode(OneWarp(2), words);
    ASSERT_THAT(decoded, IsOk());
    EXPECT_EQ(decoded->records[0].header_problem, HeaderProblem::kBadVersion)
        << "version " << version;
  }
}

// A buffer another thread writes while it is decoded (issue 55: Python buffers are read in
// place). A writer flips the capacity and attempted words of a one-block buffer to
// 0xFFFFFFFF and back as fast as it can while it is decoded many times: the decode judges
// each record on one read of its header, so a record it accepts never has more events than
// the layout's capacity, nor events outside the buffer. It used to read capacity again after
// checking it (n = 0xFFFFFFFF: a 32 GiB reserve in the walk under ASan, an out-of-bounds
// span otherwise).
TEST(DecodeTest, ABufferChangedDuringTheDecodeGivesVerdictsNeverReadsOutsideIt) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(400);
  ASSERT_THAT(buffer, IsOk());
  const TraceLayout& layout = buffer->layout;
  std::vector<uint32_t>& words = buffer->words;
  const uint64_t record_words = abi::RecordWords(layout.capacity);
  const uint64_t records = words.size() / record_words;
  constexpr size_t kCapacityWord = offsetof(abi::RecordHeader, capacity) / 4;
  constexpr size_t kAttemptedWord = offsetof(abi::RecordHeader, attempted) / 4;
  const uint32_t good_attempted = words[kAttemptedWord];
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      for (uint64_t r = 0; r < records; ++r) {
        std::atomic_ref<uint32_t> capacity(words[r * record_words + kCapacityWord]);
        std::atomic_ref<uint32_t> attempted(words[r * record_words + kAttemptedWord]);
        capacity.store(0xFFFFFFFFu, std::memory_order_relaxed);
        attempted.store(0xFFFFFFFFu, std::memory_order_relaxed);
        capacity.store(layout.capacity, std::memory_order_relaxed);
        attempted.store(good_attempted, std::memory_order_relaxed);
      }
    }
  });
  const uint32_t* const begin = words.data();
  const uint32_t* const end = begin + words.size();
  uint64_t accepted = 0, damaged = 0, outside = 0, statuses = 0;
  DecodedTrace decoded;
  for (int round = 0; round < 200'000; ++round) {
    const absl::Status s = DecodeInto(layout, words, decoded, /*threads=*/1);
    if (!s.ok()) {  // a sound header that says another capacity: the whole buffer's verdict
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("capacity")));
      ++statuses;
      continue;
    }
    for (const DecodedRecord& r : decoded.records) {
      if (r.header_problem != HeaderProblem::kNone) {
        ++damaged;
        continue;
      }
      ++accepted;
      const uint32_t* first = reinterpret_cast<const uint32_t*>(r.events.data());
      const bool inside = r.capacity == layout.capacity &&
                          r.events.size() <= layout.capacity && first >= begin &&
                          first + 2 * r.events.size() <= end;
      if (!inside) ++outside;
    }
  }
  stop = true;
  writer.join();
  std::cout << accepted << " records accepted, " << damaged << " judged damaged, " << statuses
            << " decodes refused the buffer\n";
  EXPECT_GT(accepted, 0u);
  EXPECT_EQ(outside, 0u) << "records whose events reach outside their slots, of " << accepted
                         << " accepted (" << statuses << " decodes refused the buffer)";
}

// The same, deterministically: the buffer changes at the worst moment, after the header was
// judged sound and before the record's fields are taken (the decode's test seam). The
// record keeps the header it was judged on.
TEST(DecodeTest, AHeaderChangedAfterItWasJudgedDoesNotChangeTheRecord) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(400);
  ASSERT_THAT(buffer, IsOk());
  const TraceLayout& layout = buffer->layout;
  internal::SetDecodeRecordHookForTesting([](const uint32_t* record) {
    uint32_t* words = const_cast<uint32_t*>(record);  // the test's own buffer
    words[offsetof(abi::RecordHeader, capacity) / 4] = 0xFFFFFFFFu;
    words[offsetof(abi::RecordHeader, attempted) / 4] = 0xFFFFFFFFu;
  });
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, buffer->words);
  internal::SetDecodeRecordHookForTesting(nullptr);
  ASSERT_THAT(decoded, IsOk());
  ASSERT_FALSE(decoded->records.empty());
  for (const DecodedRecord& r : decoded->records) {
    EXPECT_EQ(r.header_problem, HeaderProblem::kNone);
    EXPECT_EQ(r.capacity, layout.capacity);
    EXPECT_EQ(r.attempted, 200u);
    EXPECT_EQ(r.events.size(), 200u);
  }
}

}  // namespace
}  // namespace warptrace
