#include "profiler/trace/links.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/trace/decode.h"
#include "profiler/device/trace_abi.h"
#include "profiler/trace/layout.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::IsOk;

constexpr uint32_t kCapacity = 8;
enum Site : uint32_t { kKernel = 0, kArrive = 1, kWait = 2, kCopy = 3 };

// 2 blocks x 2 warps; sites: kernel, "full arrive", "wait full", "load".
TraceLayout TwoWarps() {
  TraceLayout layout;
  layout.kernel_name = "k";
  layout.grid = {2, 1, 1};
  layout.block = {64, 1, 1};
  layout.unit = UnitSpec::Warp();
  layout.capacity = kCapacity;
  layout.sites = {{kKernel, "k", SiteKind::kKernel, ""},
                  {kArrive, "full arrive", SiteKind::kBarrierArrive, ""},
                  {kWait, "wait full", SiteKind::kPhaseWait, ""},
                  {kCopy, "load", SiteKind::kAsyncCopy, ""}};
  return layout;
}

// A finished version-2 record of (block, unit) holding `slots` (2 words each).
void AppendRecord(std::vector<uint32_t>& words, uint32_t block, uint32_t unit,
                  const std::vector<uint32_t>& slots) {
  const uint32_t attempted = static_cast<uint32_t>(slots.size() / 2);
  std::vector<uint32_t> r = {abi::kTraceMagic, 2, 1, block, unit, attempted, kCapacity,
                             abi::kFlagComplete, 0, 1000, 0x10, 0x1, 0x500, 0x1,
                             abi::kHeaderWords,
                             abi::HeaderChecksum(abi::kTraceMagic, 2, 1, block, unit, kCapacity)};
  r.insert(r.end(), slots.begin(), slots.end());
  r.resize(abi::RecordWords(kCapacity), 0u);
  words.insert(words.end(), r.begin(), r.end());
}

uint32_t P(uint32_t site, bool exit) { return abi::MakePayloadTag(site, exit); }

TEST(LinksTest, ArrivalsLinkToTheReleasesOfTheirPhaseWithinTheBlockOnly) {
  const TraceLayout layout = TwoWarps();
  std::vector<uint32_t> words;
  // Block 0, producer warp: issue copy 0 on barrier 5, see it complete, arrive on (5, 0).
  AppendRecord(words, 0, 0,
               {P(kCopy, false), 10, 0, 5, P(kCopy, true), 40, 0, 5, P(kArrive, false), 50, 5, 0});
  // Block 0, consumer warp: also arrives on (5, 0) (earlier), then waits for phase 0 of 5.
  AppendRecord(words, 0, 1,
               {P(kArrive, false), 20, 5, 0, P(kWait, false), 30, 5, 0, P(kWait, true), 60, 5, 0});
  // Block 1: the same barrier id and phase, in another block: its own phase.
  AppendRecord(words, 1, 0, {P(kArrive, false), 70, 5, 0});
  AppendRecord(words, 1, 1, {P(kWait, false), 30, 5, 0, P(kWait, true), 80, 5, 0});
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  const DecodedTrace& d = *decoded;
  const Links links = FindLinks(d, layout, {}, [&](const EventRef& e) {
    return int64_t{d.records[e.record].events[e.slot].clock};
  });

  ASSERT_EQ(links.links.size(), 4u);
  // Block 0's release (record 1, slot 4) from both arrivals; the producer's (later) one
  // completed the phase.
  const Link& copy = links.links[0];
  EXPECT_EQ(copy.kind, LinkKind::kIssueToCompletion);
  EXPECT_EQ(copy.from, (EventRef{0, 0}));
  EXPECT_EQ(copy.to, (EventRef{0, 2}));
  EXPECT_EQ(copy.barrier, 5u);
  const Link& a = links.links[1];
  const Link& b = links.links[2];
  EXPECT_EQ(a.kind, LinkKind::kArrivalToRelease);
  EXPECT_EQ(a.to, (EventRef{1, 4}));
  EXPECT_EQ(b.to, (EventRef{1, 4}));
  EXPECT_EQ(a.from, (EventRef{0, 4}));
  EXPECT_TRUE(a.completing);
  EXPECT_EQ(b.from, (EventRef{1, 0}));
  EXPECT_FALSE(b.completing);
  const Link& c = links.links[3];
  EXPECT_EQ(c.from, (EventRef{2, 0}));
  EXPECT_EQ(c.to, (EventRef{3, 2}));
  EXPECT_TRUE(c.completing);

  ASSERT_EQ(links.phases.size(), 2u);
  EXPECT_EQ(links.phases[0].block_linear, 0u);
  EXPECT_EQ(links.phases[0].arrivals.size(), 2u);
  EXPECT_EQ(links.phases[1].block_linear, 1u);
  EXPECT_EQ(links.phases[1].arrivals.size(), 1u);
  EXPECT_TRUE(links.unpaired.empty());
}

TEST(LinksTest, AsyncEndWithoutBeginAndBeginNeverEndedAreUnpaired) {
  const TraceLayout layout = TwoWarps();
  std::vector<uint32_t> words;
  AppendRecord(words, 0, 0, {P(kCopy, true), 10, 3, kNoBarrier, P(kCopy, false), 20, 4,
                             kNoBarrier});
  AppendRecord(words, 0, 1, {});
  AppendRecord(words, 1, 0, {});
  AppendRecord(words, 1, 1, {});
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  const Links links = FindLinks(*decoded, layout, {}, [](const EventRef&) { return 0; });
  EXPECT_TRUE(links.links.empty());
  ASSERT_EQ(links.unpaired.size(), 2u);
  EXPECT_FALSE(links.unpaired[0].is_begin);
  EXPECT_EQ(links.unpaired[0].issue, 3u);
  EXPECT_EQ(links.unpaired[0].event, (EventRef{0, 0}));
  EXPECT_TRUE(links.unpaired[1].is_begin);
  EXPECT_EQ(links.unpaired[1].issue, 4u);
}

TEST(LinksTest, OnlyTheKeptPrefixIsRead) {
  const TraceLayout layout = TwoWarps();
  std::vector<uint32_t> words;
  AppendRecord(words, 0, 0, {P(kArrive, false), 10, 5, 0});
  AppendRecord(words, 0, 1, {P(kWait, false), 5, 5, 0, P(kWait, true), 20, 5, 0});
  AppendRecord(words, 1, 0, {});
  AppendRecord(words, 1, 1, {});
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  ASSERT_THAT(decoded, IsOk());
  const auto zero = [](const EventRef&) { return int64_t{0}; };
  EXPECT_EQ(FindLinks(*decoded, layout, {}, zero).links.size(), 1u);
  // The consumer's kept prefix ends before its release.
  EXPECT_TRUE(FindLinks(*decoded, layout, {2, 2, 0, 0}, zero).links.empty());
}

}  // namespace
}  // namespace warptrace
