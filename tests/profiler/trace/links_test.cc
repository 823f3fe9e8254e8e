#include "profiler/trace/links.h"

#include <cstdint>
#include <vector>

#include "format/layout.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/testing/trace_synthesizer.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/walk.h"
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

// A finished record of (block, unit) holding `slots` (2 words each), version 2 unless
// `version` says otherwise (versions 3 and 4 then fold the slots into the checksum).
void AppendRecord(std::vector<uint32_t>& words, uint32_t block, uint32_t unit,
                  const std::vector<uint32_t>& slots, uint32_t version = 2) {
  const uint32_t attempted = static_cast<uint32_t>(slots.size() / 2);
  uint32_t checksum = abi::HeaderChecksum(abi::kTraceMagic, version, 1, block, unit, kCapacity);
  if (version >= abi::kEventChecksumVersion) {
    for (size_t i = 0; i + 1 < slots.size(); i += 2) {
      checksum = abi::EventChecksumStep(checksum, slots[i], slots[i + 1]);
    }
  }
  std::vector<uint32_t> r = {abi::kTraceMagic, version, 1, block, unit, attempted, kCapacity,
                             abi::kFlagComplete, 0, 1000, 0x10, 0x1, 0x500, 0x1,
                             abi::kHeaderWords, checksum};
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

// Trace version 4: in-order async groups (cp.async, wgmma) are recorded without payloads;
// the k-th begin and the k-th end of a site in the unit are group k. In a version-3 record
// the same payload-less events link nothing (that version always wrote the payload).
TEST(LinksTest, InOrderAsyncEventsWithoutPayloadsAreNumberedByTheirOrderFromVersion4) {
  const TraceLayout layout = TwoWarps();
  auto plain = [](uint32_t site, bool exit) { return abi::MakeTag(site, exit); };
  // Two groups in flight, then both retire; then a third, and an end with a payload (used
  // as it is: issue 2).
  const std::vector<uint32_t> slots = {plain(kCopy, false), 10, plain(kCopy, false), 20,
                                       plain(kCopy, true), 30, plain(kCopy, true), 40,
                                       plain(kCopy, false), 50, P(kCopy, true), 60, 2,
                                       kNoBarrier};
  for (uint32_t version : {3u, 4u}) {
    SCOPED_TRACE(version);
    std::vector<uint32_t> words;
    AppendRecord(words, 0, 0, slots, version);
    AppendRecord(words, 0, 1, {}, version);
    AppendRecord(words, 1, 0, {}, version);
    AppendRecord(words, 1, 1, {}, version);
    absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
    ASSERT_THAT(decoded, IsOk());
    const Links links = FindLinks(*decoded, layout, {}, [](const EventRef&) { return 0; });
    if (version == 3) {
      // Only the end with a payload: issue 2, never begun.
      ASSERT_EQ(links.unpaired.size(), 1u);
      EXPECT_EQ(links.unpaired[0].issue, 2u);
      EXPECT_TRUE(links.links.empty());
      continue;
    }
    EXPECT_TRUE(links.unpaired.empty());
    ASSERT_EQ(links.links.size(), 3u);
    const EventRef begins[] = {{0, 0}, {0, 1}, {0, 4}};
    const EventRef ends[] = {{0, 2}, {0, 3}, {0, 5}};
    for (uint32_t k = 0; k < 3; ++k) {
      EXPECT_EQ(links.links[k].kind, LinkKind::kIssueToCompletion);
      EXPECT_EQ(links.links[k].issue, k);
      EXPECT_EQ(links.links[k].from, begins[k]);
      EXPECT_EQ(links.links[k].to, ends[k]);
      EXPECT_EQ(links.links[k].barrier, kNoBarrier);
    }
  }
}

// TwoWarps with the copy site a TMA load (it completes on a phase barrier: from version 5
// its begin alone is recorded, with (barrier, phase)).
TraceLayout TwoWarpsTma() {
  TraceLayout layout = TwoWarps();
  layout.sites[kCopy].copy_engine = CopyEngine::kTma2d;
  return layout;
}

// The links of `words` (4 records of TwoWarps' shape), ordered by the events' %clock.
Links LinksByClock(const TraceLayout& layout, const std::vector<uint32_t>& words) {
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, words);
  EXPECT_THAT(decoded, IsOk());
  if (!decoded.ok()) return {};
  const DecodedTrace d = *std::move(decoded);
  return FindLinks(d, layout, {}, [&](const EventRef& e) {
    return int64_t{d.records[e.record].events[e.slot].clock};
  });
}

// Version 5: each copy on a barrier ends at the earliest recorded release of its
// (barrier, phase), in whichever unit of the block waited first; issues are numbered by
// order. The release's own links are unchanged.
TEST(LinksTest, CopiesOnABarrierEndAtTheEarliestReleaseOfTheirPhaseFromVersion5) {
  const TraceLayout layout = TwoWarpsTma();
  std::vector<uint32_t> words;
  // Block 0 producer: copies on (5, 0) and (5, 1), then its own wait on (5, 0) at 70.
  AppendRecord(words, 0, 0,
               {P(kCopy, false), 10, 5, 0, P(kCopy, false), 20, 5, 1, P(kWait, true), 70, 5, 0},
               5);
  // Block 0 consumer: released on (5, 0) at 40 (the earliest) and on (5, 1) at 90.
  AppendRecord(words, 0, 1, {P(kWait, true), 40, 5, 0, P(kWait, true), 90, 5, 1}, 5);
  AppendRecord(words, 1, 0, {P(kCopy, false), 10, 5, 0}, 5);  // block 1: its own phase
  AppendRecord(words, 1, 1, {P(kWait, true), 30, 5, 0}, 5);
  const Links links = LinksByClock(layout, words);
  EXPECT_TRUE(links.unpaired.empty());
  std::vector<Link> copies;
  for (const Link& l : links.links) {
    if (l.kind == LinkKind::kIssueToCompletion) copies.push_back(l);
  }
  ASSERT_EQ(copies.size(), 3u);  // in buffer order of their ends
  EXPECT_EQ(copies[0].from, (EventRef{0, 0}));
  EXPECT_EQ(copies[0].to, (EventRef{1, 0}));  // the consumer's, not the producer's later one
  EXPECT_EQ(copies[0].issue, 0u);
  EXPECT_EQ(copies[1].from, (EventRef{0, 2}));
  EXPECT_EQ(copies[1].to, (EventRef{1, 2}));
  EXPECT_EQ(copies[1].issue, 1u);
  EXPECT_EQ(copies[1].phase, 1u);
  EXPECT_EQ(copies[2].from, (EventRef{2, 0}));
  EXPECT_EQ(copies[2].to, (EventRef{3, 0}));
  for (const Link& l : copies) {
    EXPECT_TRUE(l.derived);
    EXPECT_EQ(l.barrier, 5u);
    EXPECT_EQ(l.site, static_cast<uint32_t>(kCopy));
  }
}

// A version-4 trace of the same layout still pairs each copy's recorded end by its issue.
TEST(LinksTest, CopiesOnABarrierInAVersion4TraceStillPairTheirRecordedEnds) {
  const TraceLayout layout = TwoWarpsTma();
  std::vector<uint32_t> words;
  AppendRecord(words, 0, 0,
               {P(kCopy, false), 10, 0, 5, P(kCopy, true), 60, 0, 5, P(kWait, true), 70, 5, 0},
               4);
  AppendRecord(words, 0, 1, {P(kWait, true), 40, 5, 0}, 4);
  AppendRecord(words, 1, 0, {}, 4);
  AppendRecord(words, 1, 1, {}, 4);
  const Links links = LinksByClock(layout, words);
  EXPECT_TRUE(links.unpaired.empty());
  ASSERT_EQ(links.links.size(), 1u);
  EXPECT_EQ(links.links[0].kind, LinkKind::kIssueToCompletion);
  EXPECT_EQ(links.links[0].from, (EventRef{0, 0}));
  EXPECT_EQ(links.links[0].to, (EventRef{0, 2}));  // its own observation, not the release
  EXPECT_FALSE(links.links[0].derived);
  EXPECT_EQ(links.links[0].barrier, 5u);
}

// A version-5 copy site marked end_observed (no recorder waits on its barrier) records its
// begin and its end as version 4 did: they pair by issue, and the earlier release of the
// phase in another unit is not its end.
TEST(LinksTest, ACopySiteThatKeepsAnObservedEndPairsItsRecordedEndInVersion5) {
  TraceLayout layout = TwoWarpsTma();
  layout.sites[kCopy].end_observed = true;
  std::vector<uint32_t> words;
  AppendRecord(words, 0, 0,
               {P(kCopy, false), 10, 0, 5, P(kCopy, true), 60, 0, 5, P(kWait, true), 70, 5, 0},
               5);
  AppendRecord(words, 0, 1, {P(kWait, true), 40, 5, 0}, 5);
  AppendRecord(words, 1, 0, {}, 5);
  AppendRecord(words, 1, 1, {}, 5);
  const Links links = LinksByClock(layout, words);
  EXPECT_TRUE(links.unpaired.empty());
  ASSERT_EQ(links.links.size(), 1u);
  EXPECT_EQ(links.links[0].kind, LinkKind::kIssueToCompletion);
  EXPECT_EQ(links.links[0].from, (EventRef{0, 0}));
  EXPECT_EQ(links.links[0].to, (EventRef{0, 2}));  // its own observation at 60
  EXPECT_FALSE(links.links[0].derived);
  EXPECT_EQ(links.links[0].barrier, 5u);
  // Unmarked, the same words mean (barrier 0, phase 5) on the begin: a phase never released.
  layout.sites[kCopy].end_observed = false;
  const Links unmarked = LinksByClock(layout, words);
  ASSERT_EQ(unmarked.unpaired.size(), 1u);
  EXPECT_TRUE(unmarked.unpaired[0].no_release);
}

// A version-5 copy whose phase no unit of the block recorded a release of has no end: it
// is unpaired, saying so (the verifier's kAsyncEndNotDerivable), with the phase.
TEST(LinksTest, ACopyWhosePhaseHasNoRecordedReleaseIsUnpairedWithNoRelease) {
  const TraceLayout layout = TwoWarpsTma();
  std::vector<uint32_t> words;
  AppendRecord(words, 0, 0, {P(kCopy, false), 10, 5, 0, P(kCopy, false), 20, 5, 1}, 5);
  AppendRecord(words, 0, 1, {P(kWait, true), 40, 5, 0}, 5);  // phase 1 is never waited on
  AppendRecord(words, 1, 0, {}, 5);
  AppendRecord(words, 1, 1, {}, 5);
  const Links links = LinksByClock(layout, words);
  ASSERT_EQ(links.links.size(), 1u);
  EXPECT_TRUE(links.links[0].derived);
  ASSERT_EQ(links.unpaired.size(), 1u);
  const UnpairedAsync& u = links.unpaired[0];
  EXPECT_EQ(u.event, (EventRef{0, 2}));
  EXPECT_TRUE(u.is_begin);
  EXPECT_TRUE(u.no_release);
  EXPECT_EQ(u.issue, 1u);
  EXPECT_EQ(u.barrier, 5u);
  EXPECT_EQ(u.phase, 1u);
}

// A multicast TMA load of version 5 (cluster 2x1, barrier ids 0 in CTA 0 and 1 in CTA 1):
// its end is the earliest release of its phase on the issuer's own barrier, and it lands on
// the barrier at the same offset of the other CTA of its mask (kMulticastLanding), the
// phase matched modulo 2^16.
TEST(LinksTest, AMulticastCopyEndsInItsOwnCtaAndLandsInTheOthersFromVersion5) {
  TraceLayout layout = TwoWarpsTma();
  layout.cluster = {2, 1, 1};
  layout.sites[kCopy].multicast = true;
  layout.barriers = {BarrierInfo{0, "full[0]@0", 1}, BarrierInfo{1, "full[0]@1", 1}};
  ASSERT_EQ(LinkScopeOf(layout), LinkScope::kCluster);
  std::vector<uint32_t> words;
  const uint32_t phase = 0x10003;  // recorded modulo 2^16 in the begin
  AppendRecord(words, 0, 0, {P(kCopy, false), 10, 0, (phase & 0xffffu) | (0x3u << 16)}, 5);
  AppendRecord(words, 0, 1, {P(kWait, true), 40, 0, phase}, 5);
  AppendRecord(words, 1, 0, {}, 5);
  AppendRecord(words, 1, 1, {P(kWait, true), 50, 1, phase}, 5);
  const Links links = LinksByClock(layout, words);
  EXPECT_TRUE(links.unpaired.empty());
  const Link* end = nullptr;
  const Link* landing = nullptr;
  for (const Link& l : links.links) {
    if (l.kind == LinkKind::kIssueToCompletion) end = &l;
    if (l.kind == LinkKind::kMulticastLanding) landing = &l;
  }
  ASSERT_NE(end, nullptr);
  EXPECT_TRUE(end->derived);
  EXPECT_EQ(end->from, (EventRef{0, 0}));
  EXPECT_EQ(end->to, (EventRef{1, 0}));
  EXPECT_EQ(end->barrier, 0u);
  EXPECT_EQ(end->phase, phase);
  ASSERT_NE(landing, nullptr);
  EXPECT_EQ(landing->from, (EventRef{0, 0}));
  EXPECT_EQ(landing->to, (EventRef{3, 0}));
  EXPECT_EQ(landing->barrier, 1u);
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

// Units of one block share the SM's %clock: unit 1 starts 1500 cycles (1000 ns at the
// nominal 1.5 GHz) after unit 0, so its stamps read 1500 higher for the same script.
absl::StatusOr<std::vector<uint32_t>> StaggeredBlock(const TraceLayout& layout,
                                                     uint32_t start_clock) {
  testing::SynthOptions options;
  options.start_clock = start_clock;
  options.unit_stagger_ns = 1000;
  options.clock_offset_per_record = 1500;
  testing::TraceSynthesizer synth(layout, options);
  testing::UnitScript script;
  script.Arrive(kArrive, 5, 0).Work(10).WaitPhase(kWait, 5, 0, 100);
  synth.SetScript(script);
  return synth.Build();
}

TEST(BlockLinkerTest, ReadsEveryUnitOfABlockOnTheSmsCommonClock) {
  TraceLayout layout = TwoWarps();
  layout.clock.nominal_sm_clock_khz = 1'500'000;
  for (uint32_t start_clock : {1000u, 0xffffff00u}) {  // the second wraps between units
    absl::StatusOr<std::vector<uint32_t>> words = StaggeredBlock(layout, start_clock);
    ASSERT_THAT(words, IsOk());
    absl::StatusOr<DecodedTrace> decoded = Decode(layout, *words);
    ASSERT_THAT(decoded, IsOk());
    ScopeLinker linker(*decoded);
    ASSERT_TRUE(linker.active());
    UnitWalk walk;
    std::vector<bool> block_done;
    for (const DecodedRecord& r : decoded->records) {
      WalkUnit(r, layout, walk);
      block_done.push_back(linker.Add(r, walk, static_cast<uint32_t>(r.events.size())));
      if (!block_done.back()) continue;
      const uint32_t first = linker.first_record();
      EXPECT_EQ(linker.end_record(), first + 2);
      // Slot 0 is each unit's arrival: 1500 cycles apart on the common clock.
      EXPECT_EQ(linker.Cycles({first + 1, 0}) - linker.Cycles({first, 0}), 1500)
          << "start clock " << start_clock;
      const Links& links = linker.links();
      ASSERT_EQ(links.phases.size(), 1u);
      EXPECT_EQ(links.phases[0].block_linear, r.block_linear);
      // Each release links from both arrivals; the completing one is unit 1's, whose local
      // cycles are the same as unit 0's but which comes 1500 cycles later.
      ASSERT_EQ(links.links.size(), 4u);
      for (const Link& link : links.links) {
        EXPECT_EQ(link.completing, link.from.record == first + 1);
        EXPECT_EQ(link.site, kArrive);
      }
    }
    EXPECT_EQ(block_done, (std::vector<bool>{false, true, false, true}));
  }
}

TEST(BlockLinkerTest, IsInertForALayoutWithoutHandoffSites) {
  TraceLayout layout = TwoWarps();
  layout.sites.resize(1);  // the kernel only
  EXPECT_FALSE(HasHandoffSites(layout));
  testing::TraceSynthesizer synth(layout);
  testing::UnitScript script;
  script.Begin(kKernel).End(kKernel);
  synth.SetScript(script);
  absl::StatusOr<std::vector<uint32_t>> words = synth.Build();
  ASSERT_THAT(words, IsOk());
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, *words);
  ASSERT_THAT(decoded, IsOk());
  ScopeLinker linker(*decoded);
  EXPECT_FALSE(linker.active());
  UnitWalk walk;
  for (const DecodedRecord& r : decoded->records) {
    WalkUnit(r, layout, walk);
    EXPECT_FALSE(linker.Add(r, walk, 2));
  }
}

// TwoWarps with two cp.async sites, "load" (kCopy) and "load b", whose ends are derived at
// their kind's recorded waits (SiteInfo::ends_at_waits, version 5).
constexpr uint32_t kCopyB = 4;
TraceLayout TwoWarpsGroupsEndAtWaits() {
  TraceLayout layout = TwoWarps();
  layout.sites.push_back({kCopyB, "load b", SiteKind::kAsyncCopy, ""});
  for (const uint32_t site : {uint32_t{kCopy}, kCopyB}) {
    layout.sites[site].copy_engine = CopyEngine::kCpAsync;
    layout.sites[site].ends_at_waits = true;
  }
  return layout;
}

// Groups of two sites interleaved: a wait leaving 1 in flight ends the oldest group only
// (whichever site it is), a wait(0) every open group of both sites, each at the wait's
// event; the issues count per site. The wait's tag is one site's, its payload (n, -).
TEST(LinksTest, GroupsEndAtTheirKindsRecordedWaitsAllButTheNewestNFromVersion5) {
  const TraceLayout layout = TwoWarpsGroupsEndAtWaits();
  auto plain = [](uint32_t site) { return abi::MakeTag(site, false); };
  // Slots: 0 load, 1 load b, 2-3 wait(1), 4 load, 5-6 wait(0).
  const std::vector<uint32_t> slots = {plain(kCopy),     10, plain(kCopyB), 20,
                                       P(kCopy, true),   30, 1,             kNoBarrier,
                                       plain(kCopy),     40, P(kCopy, true), 50,
                                       0,                kNoBarrier};
  std::vector<uint32_t> words;
  AppendRecord(words, 0, 0, slots, 5);
  AppendRecord(words, 0, 1, {}, 5);
  AppendRecord(words, 1, 0, {}, 5);
  AppendRecord(words, 1, 1, {}, 5);
  const Links links = LinksByClock(layout, words);
  EXPECT_TRUE(links.unpaired.empty());
  EXPECT_TRUE(links.short_waits.empty());
  ASSERT_EQ(links.links.size(), 3u);
  const EventRef from[] = {{0, 0}, {0, 1}, {0, 4}};
  const EventRef to[] = {{0, 2}, {0, 5}, {0, 5}};
  const uint32_t site[] = {kCopy, kCopyB, kCopy};
  const uint32_t issue[] = {0, 0, 1};
  for (size_t k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(links.links[k].kind, LinkKind::kIssueToCompletion);
    EXPECT_EQ(links.links[k].from, from[k]);
    EXPECT_EQ(links.links[k].to, to[k]);
    EXPECT_EQ(links.links[k].site, site[k]);
    EXPECT_EQ(links.links[k].issue, issue[k]);
    EXPECT_TRUE(links.links[k].at_wait);
    EXPECT_FALSE(links.links[k].derived);  // the unit's own wait, not another unit's release
  }
  // The same events in a version-4 trace keep version 4's meaning: an exit is a group end
  // of its own site (here two ends of "load" paired by order), nothing ends at a wait.
  std::vector<uint32_t> v4;
  AppendRecord(v4, 0, 0, slots, 4);
  AppendRecord(v4, 0, 1, {}, 4);
  AppendRecord(v4, 1, 0, {}, 4);
  AppendRecord(v4, 1, 1, {}, 4);
  for (const Link& l : LinksByClock(layout, v4).links) EXPECT_FALSE(l.at_wait);
}

// A wait that leaves more groups in flight than are open ends none and is reported with
// both counts; a group no recorded wait retires is unpaired (no_wait), not left open.
TEST(LinksTest, AShortGroupWaitAndAGroupNoWaitRetiresAreReported) {
  const TraceLayout layout = TwoWarpsGroupsEndAtWaits();
  std::vector<uint32_t> words;
  AppendRecord(words, 0, 0,
               {abi::MakeTag(kCopyB, false), 10, P(kCopy, true), 20, 2, kNoBarrier}, 5);
  AppendRecord(words, 0, 1, {}, 5);
  AppendRecord(words, 1, 0, {}, 5);
  AppendRecord(words, 1, 1, {}, 5);
  const Links links = LinksByClock(layout, words);
  EXPECT_TRUE(links.links.empty());
  ASSERT_EQ(links.short_waits.size(), 1u);
  EXPECT_EQ(links.short_waits[0].wait, (EventRef{0, 1}));
  EXPECT_EQ(links.short_waits[0].site, static_cast<uint32_t>(kCopy));
  EXPECT_EQ(links.short_waits[0].left, 2u);
  EXPECT_EQ(links.short_waits[0].open, 1u);
  ASSERT_EQ(links.unpaired.size(), 1u);
  EXPECT_EQ(links.unpaired[0].event, (EventRef{0, 0}));
  EXPECT_EQ(links.unpaired[0].site, kCopyB);
  EXPECT_TRUE(links.unpaired[0].is_begin);
  EXPECT_TRUE(links.unpaired[0].no_wait);
}

}  // namespace
}  // namespace warptrace
