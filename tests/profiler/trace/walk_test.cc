#include "profiler/trace/walk.h"

#include <cstdint>
#include <vector>

#include "format/layout.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/trace/decode.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::IsOk;

TraceLayout OneWarp(uint32_t capacity) {
  TraceLayout layout;
  layout.kernel_name = "k";
  layout.grid = {1, 1, 1};
  layout.block = {32, 1, 1};
  layout.unit = UnitSpec::Warp();
  layout.capacity = capacity;
  layout.clock.num_sms = 8;
  layout.sites = {{0, "outer", SiteKind::kRegion, ""}, {1, "inner", SiteKind::kRegion, ""}};
  return layout;
}

std::vector<uint32_t> OneRecord(uint32_t version, uint32_t capacity,
                                const std::vector<uint32_t>& slot_words) {
  const uint32_t attempted = static_cast<uint32_t>(slot_words.size() / 2);
  std::vector<uint32_t> words = {
      abi::kTraceMagic, version, 3, 0, 0, attempted, capacity, abi::kFlagComplete,
      /*start clock*/ 100, /*end clock*/ 900, 0x10, 0x1, 0x500, 0x1, abi::kHeaderWords,
      abi::HeaderChecksum(abi::kTraceMagic, version, 3, 0, 0, capacity)};
  words.insert(words.end(), slot_words.begin(), slot_words.end());
  words.resize(abi::RecordWords(capacity), 0u);
  return words;
}

TEST(WalkTest, PayloadSlotsAreSteppedOverAsPartOfTheirEvent) {
  // The payloads' words look like an exit of site 0 and like a clock far back: neither may
  // be read as an event.
  const std::vector<uint32_t> slots = {
      abi::MakeTag(0, false), 200,
      abi::MakePayloadTag(1, false), 300, abi::MakeTag(0, true), 1,
      abi::MakePayloadTag(1, true), 400, abi::MakeTag(0, true), 2,
      abi::MakeTag(0, true), 500};
  const TraceLayout layout = OneWarp(6);
  const std::vector<uint32_t> words = OneRecord(2, 6, slots);
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  UnitWalk walk;
  WalkUnit(decoded->records[0], layout, walk);
  EXPECT_EQ(walk.error, WalkError::kNone);
  EXPECT_EQ(walk.walked, 6u);
  ASSERT_EQ(walk.cycles.size(), 6u);
  EXPECT_EQ(walk.cycles[2], walk.cycles[1]);  // the payload slot takes its event's time
  EXPECT_EQ(walk.cycles[5] - walk.cycles[0], 300);
  EXPECT_TRUE(walk.back_steps.empty());
  EXPECT_EQ(walk.min_gap, 100u);
  ASSERT_EQ(walk.slices.size(), 2u);
  EXPECT_EQ(walk.slices[0].site, 0u);
  EXPECT_EQ(walk.slices[0].end_event, 5u);
  EXPECT_EQ(walk.slices[1].site, 1u);
  EXPECT_EQ(walk.slices[1].begin_event, 1u);
  EXPECT_EQ(walk.slices[1].end_event, 3u);
  EXPECT_TRUE(walk.open.empty());
}

TEST(WalkTest, VersionOneTagWithBitThirtyIsAnUnknownSiteNotAPayload) {
  const std::vector<uint32_t> slots = {abi::MakeTag(0, false), 200,
                                       abi::kPayloadFlag | 1u, 300};
  const TraceLayout layout = OneWarp(2);
  const std::vector<uint32_t> words = OneRecord(1, 2, slots);
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  UnitWalk walk;
  WalkUnit(decoded->records[0], layout, walk);
  EXPECT_EQ(walk.error, WalkError::kUnknownSite);
  EXPECT_EQ(walk.error_site, abi::kPayloadFlag | 1u);
  EXPECT_EQ(walk.walked, 1u);
}

TEST(WalkTest, InstantsAndAsyncSpansAreTimedButNeverNest) {
  TraceLayout layout = OneWarp(8);
  layout.sites.push_back({2, "full arrive", SiteKind::kBarrierArrive, ""});
  layout.sites.push_back({3, "load", SiteKind::kAsyncCopy, ""});
  // The copy is issued inside region 0 and completes after it closed; an arrival in
  // between has no exit.
  const std::vector<uint32_t> slots = {
      abi::MakeTag(0, false), 200,
      abi::MakePayloadTag(3, false), 210, 0, 0xffffffffu,
      abi::MakePayloadTag(2, false), 220, 5, 0,
      abi::MakeTag(0, true), 230,
      abi::MakePayloadTag(3, true), 240, 0, 0xffffffffu};
  const std::vector<uint32_t> words = OneRecord(2, 8, slots);
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  UnitWalk walk;
  WalkUnit(decoded->records[0], layout, walk);
  EXPECT_EQ(walk.error, WalkError::kNone);
  EXPECT_EQ(walk.walked, 8u);
  ASSERT_EQ(walk.slices.size(), 1u);
  EXPECT_EQ(walk.slices[0].end_event, 5u);
  EXPECT_TRUE(walk.open.empty());
  EXPECT_EQ(walk.cycles[6] - walk.cycles[0], 40);
}

}  // namespace
}  // namespace warptrace
