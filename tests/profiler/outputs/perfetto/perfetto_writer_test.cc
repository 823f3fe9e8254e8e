// Tests the Perfetto writer on hand-built units, reading its bytes back with the messages of
// our own schema (the Python test reads them with Perfetto's published one).
#include "profiler/outputs/perfetto/perfetto_writer.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/outputs/perfetto/perfetto_trace.pb.h"
#include "tests/profiler/outputs/perfetto/perfetto_packets.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

namespace pb = ::warptrace::perfetto;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr int64_t kOrigin = 1'700'000'000'000'000'000;

TraceLayout TwoSiteLayout() {
  TraceLayout layout;
  layout.kernel_name = "gemm";
  layout.device_name = "test device";
  layout.grid = {2, 1, 1};
  layout.block = {256, 1, 1};
  layout.unit = UnitSpec::Warpgroup();
  layout.capacity = 8;
  layout.sites = {{0, "kernel", SiteKind::kKernel, "gemm.cc:1"},
                  {1, "load", SiteKind::kRegion, "gemm.cc:7"}};
  return layout;
}

UnitTimeline Unit(uint32_t block, uint32_t unit, uint32_t sm, int64_t start, int64_t end) {
  UnitTimeline u;
  u.record_index = block * 2 + unit;
  u.block_linear = block;
  u.block_index = {block, 0, 0};
  u.unit_index = unit;
  u.sm_id = sm;
  u.start_ns = start;
  u.end_ns = end;
  return u;
}

// kernel [10, 100] around load [20, 30] and load [40, 40] (zero length), relative to start.
UnitTimeline NestedUnit(uint32_t block, uint32_t unit, uint32_t sm, int64_t start) {
  UnitTimeline u = Unit(block, unit, sm, start, start + 110);
  u.slices = {{0, 0, start + 10, start + 100},
              {1, 1, start + 20, start + 30},
              {1, 1, start + 40, start + 40}};
  return u;
}

// The packets as Perfetto's trace processor reads them; every top-level packet must be a
// compressed one (PerfettoWriterOptions::compress by default).
std::vector<pb::TracePacket> Packets(const std::string& bytes) {
  size_t compressed = 0;
  std::vector<pb::TracePacket> packets = ReadPerfettoPackets(bytes, &compressed);
  pb::Trace top;
  EXPECT_TRUE(top.ParseFromString(bytes));
  EXPECT_EQ(compressed, static_cast<size_t>(top.packet_size()));
  return packets;
}

class PerfettoWriterTest : public ::testing::Test {
 protected:
  std::vector<pb::TracePacket> Write(const std::vector<UnitTimeline>& units) {
    return Packets(WriteBytes(units));
  }
  // The trace as the writer wrote it.
  std::string WriteBytes(const std::vector<UnitTimeline>& units) {
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    PerfettoWriter writer(os);
    EXPECT_THAT(writer.Begin(layout_, kOrigin), IsOk());
    for (const UnitTimeline& unit : units) EXPECT_THAT(writer.AddUnit(unit), IsOk());
    EXPECT_THAT(writer.End(), IsOk());
    os.flush();
    return bytes;
  }

  TraceLayout layout_ = TwoSiteLayout();
};

std::vector<const pb::TracePacket*> Events(const std::vector<pb::TracePacket>& packets) {
  std::vector<const pb::TracePacket*> out;
  for (const pb::TracePacket& p : packets) {
    if (p.has_track_event() && p.trusted_packet_sequence_id() == kPerfettoUnitSequence) {
      out.push_back(&p);
    }
  }
  return out;
}

TEST_F(PerfettoWriterTest, SlicesBecomeBeginEndPairsInTimeOrderWithDeltaTimestamps) {
  const std::vector<pb::TracePacket> packets = Write({NestedUnit(0, 0, 3, kOrigin)});
  std::vector<int> types;
  std::vector<uint64_t> deltas;
  for (const pb::TracePacket* p : Events(packets)) {
    types.push_back(p->track_event().type());
    deltas.push_back(p->timestamp());
  }
  const int b = pb::TrackEvent::TYPE_SLICE_BEGIN, e = pb::TrackEvent::TYPE_SLICE_END;
  EXPECT_THAT(types, ElementsAre(b, b, e, b, e, e));
  // 10, 20, 30, 40, 40, 100 ns after the unit's start, each from the previous event.
  EXPECT_THAT(deltas, ElementsAre(10, 10, 10, 10, 0, 60));
}

TEST_F(PerfettoWriterTest, UnitSequenceStartsClearedWithItsTrackClockAndSnapshot) {
  const std::vector<pb::TracePacket> packets = Write({NestedUnit(1, 1, 5, kOrigin + 500)});
  const pb::TracePacket* start = nullptr;
  for (const pb::TracePacket& p : packets) {
    if (p.trusted_packet_sequence_id() == kPerfettoUnitSequence) {
      start = &p;
      break;
    }
  }
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->sequence_flags(), pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  EXPECT_EQ(start->trace_packet_defaults().timestamp_clock_id(), kPerfettoGpuClockId);
  const uint64_t track = start->trace_packet_defaults().track_event_defaults().track_uuid();
  ASSERT_EQ(start->clock_snapshot().clocks_size(), 2);
  const auto& gpu = start->clock_snapshot().clocks(0);
  EXPECT_EQ(gpu.clock_id(), kPerfettoGpuClockId);
  EXPECT_TRUE(gpu.is_incremental());
  // At the trace origin, not the unit's start (see the next test); no anchor: BOOTTIME
  // counts from the origin.
  EXPECT_EQ(gpu.timestamp(), static_cast<uint64_t>(kOrigin));
  EXPECT_EQ(start->clock_snapshot().clocks(1).clock_id(), pb::BUILTIN_CLOCK_BOOTTIME);
  EXPECT_EQ(start->clock_snapshot().clocks(1).timestamp(), 0u);
  // So the unit's first event is 510 ns after it.
  EXPECT_EQ(Events(packets).front()->timestamp(), 510u);
  bool described = false;
  for (const pb::TracePacket& p : packets) {
    if (p.has_track_descriptor() && p.track_descriptor().uuid() == track) {
      described = true;
      EXPECT_EQ(p.track_descriptor().name(), "block (1,0,0) warpgroup 1");
      EXPECT_EQ(p.track_descriptor().sibling_order_rank(), 3);
    }
  }
  EXPECT_TRUE(described);
}

// With a role table the unit's track names its role, as the Chrome trace's thread does.
TEST_F(PerfettoWriterTest, UnitTracksCarryTheirRoleWhenTheLayoutHasRoles) {
  layout_.unit_roles = {"producer", "consumer"};
  bool named = false;
  for (const pb::TracePacket& p : Write({NestedUnit(1, 1, 5, kOrigin + 500)})) {
    if (p.has_track_descriptor() &&
        p.track_descriptor().name() == "block (1,0,0) warpgroup 1 consumer") {
      named = true;
    }
  }
  EXPECT_TRUE(named);
}

// With 2-CTA clusters the unit tracks group cluster -> CTA -> unit; without, under their SM.
TEST_F(PerfettoWriterTest, UnitTracksGroupByClusterThenCtaWhenTheLayoutHasClusters) {
  layout_.grid = {4, 1, 1};
  layout_.cluster = {2, 1, 1};
  std::map<uint64_t, pb::TrackDescriptor> tracks;
  for (const pb::TracePacket& p : Write({NestedUnit(0, 0, 0, kOrigin), NestedUnit(1, 0, 1, kOrigin),
                                         NestedUnit(2, 0, 0, kOrigin), NestedUnit(3, 0, 1, kOrigin)})) {
    if (p.has_track_descriptor()) tracks[p.track_descriptor().uuid()] = p.track_descriptor();
  }
  // The chain of names from a unit's track up to the root's child.
  auto chain = [&](const std::string& unit) {
    std::vector<std::string> names;
    for (const auto& [uuid, d] : tracks) {
      if (d.name() != unit) continue;
      for (const pb::TrackDescriptor* t = &d; t->has_parent_uuid();) {
        names.push_back(t->name());
        auto parent = tracks.find(t->parent_uuid());
        if (parent == tracks.end()) break;
        t = &parent->second;
      }
    }
    return names;
  };
  EXPECT_THAT(chain("block (3,0,0) cluster (1,0,0) rank 1 warpgroup 0"),
              ElementsAre("block (3,0,0) cluster (1,0,0) rank 1 warpgroup 0",
                          "CTA rank 1: block (3,0,0)", "cluster (1,0,0)"));
  EXPECT_THAT(chain("block (0,0,0) cluster (0,0,0) rank 0 warpgroup 0"),
              ElementsAre("block (0,0,0) cluster (0,0,0) rank 0 warpgroup 0",
                          "CTA rank 0: block (0,0,0)", "cluster (0,0,0)"));
  size_t clusters = 0, ctas = 0;
  for (const auto& [uuid, d] : tracks) {
    clusters += d.name().rfind("cluster (", 0) == 0;
    ctas += d.name().rfind("CTA rank ", 0) == 0;
  }
  EXPECT_EQ(clusters, 2u);
  EXPECT_EQ(ctas, 4u);
  layout_.cluster = {1, 1, 1};  // an older trace: under the SM
  for (const pb::TracePacket& p : Write({NestedUnit(1, 0, 1, kOrigin)})) {
    if (p.has_track_descriptor() && p.track_descriptor().name() == "block (1,0,0) warpgroup 0") {
      EXPECT_EQ(p.track_descriptor().parent_uuid(), perfetto_internal::kSmUuidBase + 1);
    }
  }
}

// Perfetto's trace processor drops a clock snapshot whose CLOCK_BOOTTIME is earlier than the
// previous snapshot of the same clocks; units come in block order, not start order.
TEST_F(PerfettoWriterTest, UnitSnapshotsNeverGoBackInTimeWhateverTheUnitOrder) {
  const std::vector<pb::TracePacket> packets =
      Write({NestedUnit(0, 0, 3, kOrigin + 1000), NestedUnit(0, 1, 4, kOrigin),
             NestedUnit(1, 0, 5, kOrigin + 400)});
  std::vector<uint64_t> boottimes;
  std::vector<uint64_t> first_deltas;
  bool after_snapshot = false;
  for (const pb::TracePacket& p : packets) {
    if (p.trusted_packet_sequence_id() != kPerfettoUnitSequence) continue;
    if (p.has_clock_snapshot()) {
      boottimes.push_back(p.clock_snapshot().clocks(1).timestamp());
      after_snapshot = true;
    } else if (after_snapshot) {
      first_deltas.push_back(p.timestamp());
      after_snapshot = false;
    }
  }
  ASSERT_THAT(boottimes, ::testing::SizeIs(3));
  EXPECT_TRUE(std::is_sorted(boottimes.begin(), boottimes.end()));
  EXPECT_THAT(first_deltas, ElementsAre(1010, 10, 410));
}

TEST_F(PerfettoWriterTest, NamesAreInternedOncePerTraceThenReferencedByIid) {
  const std::vector<pb::TracePacket> packets =
      Write({NestedUnit(0, 0, 3, kOrigin), NestedUnit(0, 1, 3, kOrigin + 7)});
  int load_names = 0, load_begins = 0;
  for (const pb::TracePacket* p : Events(packets)) {
    for (const pb::EventName& name : p->interned_data().event_names()) {
      if (name.name() == "load") {
        ++load_names;
        EXPECT_EQ(name.iid(), 2u);
      }
    }
    if (p->track_event().name_iid() == 2) {
      ++load_begins;
      EXPECT_EQ(p->track_event().category_iids(0), 1u);  // "region"
    }
  }
  EXPECT_EQ(load_names, 1);  // one batch: the sequence is cleared once, by the first unit
  EXPECT_EQ(load_begins, 4);
}

TEST_F(PerfettoWriterTest, FirstSliceOfASiteInTheTraceCarriesItsAnnotations) {
  const std::vector<pb::TracePacket> packets =
      Write({NestedUnit(0, 0, 3, kOrigin), NestedUnit(0, 1, 3, kOrigin)});
  std::vector<int> annotated;
  for (const pb::TracePacket* p : Events(packets)) {
    annotated.push_back(p->track_event().debug_annotations_size());
  }
  EXPECT_THAT(annotated, ElementsAre(3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
}

TEST_F(PerfettoWriterTest, OnlyTheFirstUnitClearsTheSequenceLaterOnesChangeTheirDefaults) {
  const std::vector<pb::TracePacket> packets =
      Write({NestedUnit(0, 0, 3, kOrigin), NestedUnit(0, 1, 3, kOrigin + 7)});
  std::vector<uint32_t> flags;
  std::vector<uint64_t> tracks;
  for (const pb::TracePacket& p : packets) {
    if (p.trusted_packet_sequence_id() != kPerfettoUnitSequence) continue;
    if (!p.has_trace_packet_defaults()) continue;
    flags.push_back(p.sequence_flags());
    tracks.push_back(p.trace_packet_defaults().track_event_defaults().track_uuid());
  }
  EXPECT_THAT(flags, ElementsAre(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED, 0u));
  ASSERT_THAT(tracks, ::testing::SizeIs(2));
  EXPECT_NE(tracks[0], tracks[1]);
}

// Block `block`'s unit `unit`: a kernel slice around `loads` loads, ~2 * loads events.
UnitTimeline LongUnit(uint32_t block, uint32_t unit, uint32_t loads) {
  const int64_t start = kOrigin + 13 * block + 5 * unit;
  UnitTimeline u = Unit(block, unit, block % 5, start, start + 20 * loads + 20);
  u.slices.push_back({0, 0, start + 1, start + 20 * loads + 10});
  for (uint32_t i = 0; i < loads; ++i) {
    u.slices.push_back({1, 1, start + 5 + 20 * i, start + 15 + 20 * i});
  }
  u.events = static_cast<uint32_t>(2 * u.slices.size());
  return u;
}

TEST_F(PerfettoWriterTest, EachBatchOfUnitsClearsTheUnitSequenceAndInternsItsNamesAgain) {
  // 200 units of ~500 events: batches of at least 32 Ki events, cut at block ends.
  layout_.grid = {100, 1, 1};
  std::vector<UnitTimeline> units;
  for (uint32_t b = 0; b < 100; ++b) {
    for (uint32_t u = 0; u < 2; ++u) units.push_back(LongUnit(b, u, 240 + b % 20));
  }
  const std::vector<pb::TracePacket> packets = Write(units);
  int clears = 0, firsts = 0, load_names = 0, annotated_loads = 0;
  uint64_t slices = 0;
  for (const pb::TracePacket& p : packets) {
    if (p.trusted_packet_sequence_id() != kPerfettoUnitSequence) continue;
    if (p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      ++clears;
      // The categories and annotation names again, and the batch's first unit is the first
      // of its block.
      EXPECT_GT(p.interned_data().event_categories_size(), 0);
      EXPECT_GT(p.interned_data().debug_annotation_names_size(), 0);
      const uint64_t track = p.trace_packet_defaults().track_event_defaults().track_uuid();
      EXPECT_EQ((track - perfetto_internal::kUnitUuidBase) % 2, 0u) << "batch " << clears;
    }
    if (p.first_packet_on_sequence()) ++firsts;
    for (const pb::EventName& name : p.interned_data().event_names()) {
      if (name.name() == "load") ++load_names;
    }
    if (p.has_track_event() && p.track_event().name_iid() == 2) {
      ++slices;
      if (p.track_event().debug_annotations_size() > 0) ++annotated_loads;
    }
  }
  uint64_t loads = 0;
  for (const UnitTimeline& u : units) loads += u.slices.size() - 1;
  EXPECT_EQ(slices, loads);
  EXPECT_GE(clears, 3);
  EXPECT_LE(clears, 4);
  EXPECT_EQ(firsts, 1);
  EXPECT_EQ(load_names, clears);
  EXPECT_EQ(annotated_loads, clears);
}

TEST_F(PerfettoWriterTest, WithoutCompressionThePacketsArePlain) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  PerfettoWriter writer(os, {.compress = false});
  ASSERT_THAT(writer.Begin(layout_, kOrigin), IsOk());
  ASSERT_THAT(writer.AddUnit(NestedUnit(0, 0, 3, kOrigin)), IsOk());
  ASSERT_THAT(writer.End(), IsOk());
  os.flush();
  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(bytes));
  ASSERT_EQ(static_cast<uint64_t>(trace.packet_size()), writer.packets());
  for (const pb::TracePacket& p : trace.packet()) EXPECT_FALSE(p.has_compressed_packets());
  // The same packets as the compressed trace holds.
  const std::vector<pb::TracePacket> compressed = Write({NestedUnit(0, 0, 3, kOrigin)});
  ASSERT_EQ(compressed.size(), static_cast<size_t>(trace.packet_size()));
  for (size_t i = 0; i < compressed.size(); ++i) {
    EXPECT_EQ(compressed[i].SerializeAsString(), trace.packet(static_cast<int>(i)).SerializeAsString());
  }
}

TEST_F(PerfettoWriterTest, CountersCountOverlappingUnitsOfAnSm) {
  // SM 3: [0, 110] and [50, 160]; SM 4: [20, 130].
  const std::vector<pb::TracePacket> packets =
      Write({NestedUnit(0, 0, 3, kOrigin), NestedUnit(0, 1, 3, kOrigin + 50),
             NestedUnit(1, 0, 4, kOrigin + 20)});
  std::vector<std::pair<uint64_t, int64_t>> sm3;
  for (const pb::TracePacket& p : packets) {
    if (p.has_track_event() && p.track_event().type() == pb::TrackEvent::TYPE_COUNTER &&
        p.track_event().track_uuid() == ((uint64_t{2} << 40) + 3)) {
      sm3.push_back({p.timestamp() - kOrigin, p.track_event().counter_value()});
    }
  }
  EXPECT_THAT(sm3, ElementsAre(std::pair<uint64_t, int64_t>{0, 1}, std::pair<uint64_t, int64_t>{50, 2},
                               std::pair<uint64_t, int64_t>{110, 1},
                               std::pair<uint64_t, int64_t>{160, 0}));
}

TEST_F(PerfettoWriterTest, IncompleteUnitGetsVerdictInNameAndInstant) {
  UnitTimeline u = NestedUnit(0, 0, 3, kOrigin);
  u.verdict = Verdict::kTruncated;
  u.verdict_reason = "no epilogue";
  u.slices[0].repaired = true;
  const std::vector<pb::TracePacket> packets = Write({u});
  bool named = false;
  for (const pb::TracePacket& p : packets) {
    if (p.has_track_descriptor() && p.track_descriptor().name() == "block (0,0,0) warpgroup 0 [truncated]") {
      named = true;
      EXPECT_THAT(p.track_descriptor().description(), HasSubstr("no epilogue"));
    }
  }
  EXPECT_TRUE(named);
  const std::vector<const pb::TracePacket*> events = Events(packets);
  ASSERT_FALSE(events.empty());
  const pb::TrackEvent& last = events.back()->track_event();
  EXPECT_EQ(last.type(), pb::TrackEvent::TYPE_INSTANT);
  EXPECT_EQ(last.name(), "truncated");
  EXPECT_EQ(events.back()->timestamp(), 10u);  // unit end 110, last event at 100
  const pb::TrackEvent& first = events.front()->track_event();
  EXPECT_EQ(first.debug_annotations(first.debug_annotations_size() - 1).name(), "repaired");
}

TEST_F(PerfettoWriterTest, HostAnchorIsTheFirstClockSnapshot) {
  layout_.host_anchor = {true, kOrigin - 1000, 5'000'000'000, 1'764'000'000'000'000'000, 40};
  const std::vector<pb::TracePacket> packets = Write({NestedUnit(0, 0, 3, kOrigin)});
  const pb::ClockSnapshot& first = packets.front().clock_snapshot();
  ASSERT_EQ(first.clocks_size(), 3);
  EXPECT_EQ(first.clocks(0).timestamp(), static_cast<uint64_t>(kOrigin - 1000));
  EXPECT_EQ(first.clocks(1).clock_id(), pb::BUILTIN_CLOCK_BOOTTIME);
  EXPECT_EQ(first.clocks(1).timestamp(), 5'000'000'000u);
  EXPECT_EQ(first.clocks(2).clock_id(), pb::BUILTIN_CLOCK_REALTIME);
  // The unit's snapshot maps its start with the same offset.
  for (const pb::TracePacket& p : packets) {
    if (p.trusted_packet_sequence_id() == kPerfettoUnitSequence && p.has_clock_snapshot()) {
      EXPECT_EQ(p.clock_snapshot().clocks(1).timestamp(), 5'000'001'000u);
    }
  }
}

TEST_F(PerfettoWriterTest, RejectsMalformedUnitsWithoutWritingThem) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  PerfettoWriter writer(os);
  EXPECT_THAT(writer.AddUnit(NestedUnit(0, 0, 3, kOrigin)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("before Begin")));
  ASSERT_THAT(writer.Begin(layout_, kOrigin), IsOk());
  const uint64_t before = writer.packets();
  UnitTimeline bad_site = NestedUnit(0, 0, 3, kOrigin);
  bad_site.slices[1].site = 9;
  EXPECT_THAT(writer.AddUnit(bad_site), StatusIs(absl::StatusCode::kInvalidArgument,
                                                 HasSubstr("outside the site table")));
  UnitTimeline sticks_out = NestedUnit(0, 0, 3, kOrigin);
  sticks_out.slices[1].end_ns = kOrigin + 200;
  EXPECT_THAT(writer.AddUnit(sticks_out),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ends after its parent")));
  UnitTimeline overlap = NestedUnit(0, 0, 3, kOrigin);
  overlap.slices[2].begin_ns = kOrigin + 25;  // before its sibling ends at 30
  overlap.slices[2].end_ns = kOrigin + 26;
  EXPECT_THAT(writer.AddUnit(overlap),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("overlaps the previous slice at its depth")));
  UnitTimeline early = NestedUnit(0, 0, 3, kOrigin);
  early.slices[0].begin_ns = kOrigin - 1;
  EXPECT_THAT(writer.AddUnit(early), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(writer.packets(), before);
  ASSERT_THAT(writer.End(), IsOk());
  EXPECT_THAT(writer.AddUnit(NestedUnit(0, 0, 3, kOrigin)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("after End")));
}

// The Timeline contract's stream rules (timeline_check.h) hold for Perfetto as for the
// Chrome trace: units in (block, unit) order, unit indices below the layout's units per block.
TEST_F(PerfettoWriterTest, RejectsUnitsOutOfTimelineOrderOrPastTheUnitsPerBlock) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  PerfettoWriter writer(os);
  ASSERT_THAT(writer.Begin(layout_, kOrigin), IsOk());
  ASSERT_THAT(writer.AddUnit(NestedUnit(1, 0, 3, kOrigin)), IsOk());
  EXPECT_THAT(writer.AddUnit(NestedUnit(0, 1, 3, kOrigin)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("strictly ordered by (block, unit)")));
  EXPECT_THAT(writer.AddUnit(NestedUnit(1, UnitsPerBlock(layout_), 3, kOrigin)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("units per block")));
  EXPECT_THAT(writer.AddUnit(NestedUnit(1, 1, 3, kOrigin)), IsOk());
  EXPECT_THAT(writer.End(), IsOk());
}

// A producer (unit 0) and a consumer (unit 1) of block 0, hand-offs recorded (trace v2):
// the producer loads 10..30, arrives on full[1] (phase 0) at 30 and issues an async copy
// 12..40 on its lane; the consumer waits on full[1] 5..31, then waits again 31..31.
TraceLayout HandoffLayout() {
  TraceLayout layout = TwoSiteLayout();
  layout.sites.push_back({2, "wait full", SiteKind::kPhaseWait, "gemm.cc:9"});
  layout.sites.push_back({3, "arrive full", SiteKind::kBarrierArrive, "gemm.cc:8"});
  layout.sites.push_back({4, "copy", SiteKind::kAsyncCopy, "gemm.cc:6"});
  layout.barriers = {{0, "full[0]", 1}, {1, "full[1]", 1}};
  return layout;
}

std::vector<UnitTimeline> HandoffUnits() {
  UnitTimeline p = Unit(0, 0, 3, kOrigin, kOrigin + 50);
  p.slices = {{0, 0, kOrigin + 5, kOrigin + 45}, {1, 1, kOrigin + 10, kOrigin + 30}};
  p.instants = {{3, 6, kOrigin + 30, 1, 0}};
  p.async_spans = {{4, 3, 8, kOrigin + 12, kOrigin + 40, 0, 1, true, 0}};
  p.async_lanes = 1;
  UnitTimeline c = Unit(0, 1, 3, kOrigin, kOrigin + 50);
  c.slices = {{0, 0, kOrigin + 2, kOrigin + 48},
              {2, 1, kOrigin + 5, kOrigin + 31},
              {2, 1, kOrigin + 31, kOrigin + 31}};
  Flow arrival;
  arrival.id = 7;
  arrival.kind = FlowKind::kArrivalToRelease;
  arrival.from = {0, 6, kOrigin + 30};
  arrival.to = {1, 5, kOrigin + 31};
  arrival.to.released_wait = 1;  // c.slices[1]: of the two waits ending at 31, the one that waited
  arrival.barrier = 1;
  arrival.phase = 0;
  arrival.completing = true;
  Flow copy;
  copy.id = 8;
  copy.kind = FlowKind::kIssueToCompletion;
  copy.from = {0, 3, kOrigin + 12};
  copy.to = {0, 8, kOrigin + 40};
  copy.barrier = 1;
  p.flows = {arrival, copy};
  c.flows = {arrival};
  return {p, c};
}

TEST_F(PerfettoWriterTest, ArrivalsAreInstantsWithTheirBarrierAndStartTheirFlows) {
  layout_ = HandoffLayout();
  const std::vector<pb::TracePacket> packets = Write(HandoffUnits());
  const pb::TracePacket* arrival = nullptr;
  for (const pb::TracePacket* p : Events(packets)) {
    if (p->track_event().type() == pb::TrackEvent::TYPE_INSTANT) arrival = p;
  }
  ASSERT_NE(arrival, nullptr);
  EXPECT_EQ(arrival->track_event().name_iid(), 4u);  // site 3 + 1
  EXPECT_THAT(arrival->track_event().flow_ids(), ElementsAre(8u));  // flow 7, ids from 1
  // Annotation names are interned with the unit's sequence state (the same iids every unit).
  std::map<uint64_t, std::string> names;
  for (const pb::TracePacket& p : packets) {
    for (const pb::DebugAnnotationName& n : p.interned_data().debug_annotation_names()) {
      names[n.iid()] = n.name();
    }
  }
  std::vector<std::string> annotations;
  for (const pb::DebugAnnotation& a : arrival->track_event().debug_annotations()) {
    const std::string name = a.has_name() ? a.name() : names[a.name_iid()];
    annotations.push_back(a.has_string_value() ? name + "=" + a.string_value()
                                               : name + "=" + std::to_string(a.uint_value()));
  }
  EXPECT_THAT(annotations, ::testing::IsSupersetOf({"barrier=full[1]", "phase=0"}));
}

TEST_F(PerfettoWriterTest, AFlowEndsAtTheEndOfTheWaitItReleased) {
  layout_ = HandoffLayout();
  const std::vector<pb::TracePacket> packets = Write(HandoffUnits());
  // The consumer's events: kernel begin (2), wait begin (5), wait end (31): terminates flow
  // 8, then the zero-length wait 31..31 (no flow), kernel end.
  std::vector<std::pair<int, std::vector<uint64_t>>> consumer;
  bool in_consumer = false;
  for (const pb::TracePacket& p : packets) {
    if (p.trusted_packet_sequence_id() != kPerfettoUnitSequence) continue;
    if (p.has_trace_packet_defaults()) {
      in_consumer = p.trace_packet_defaults().track_event_defaults().track_uuid() % 2 == 1;
    }
    if (in_consumer && p.has_track_event()) {
      consumer.push_back({p.track_event().type(),
                          {p.track_event().terminating_flow_ids().begin(),
                           p.track_event().terminating_flow_ids().end()}});
    }
  }
  const int b = pb::TrackEvent::TYPE_SLICE_BEGIN, e = pb::TrackEvent::TYPE_SLICE_END;
  using Ids = std::vector<uint64_t>;
  EXPECT_THAT(consumer, ElementsAre(std::pair(b, Ids{}), std::pair(b, Ids{}),
                                    std::pair(e, Ids{8}), std::pair(b, Ids{}),
                                    std::pair(e, Ids{}), std::pair(e, Ids{})));
}

TEST_F(PerfettoWriterTest, AsyncSpansGoOnALaneTrackUnderTheirUnitWithTheirFlow) {
  layout_ = HandoffLayout();
  const std::vector<pb::TracePacket> packets = Write(HandoffUnits());
  uint64_t lane = 0, producer = 0;
  for (const pb::TracePacket& p : packets) {
    if (!p.has_track_descriptor()) continue;
    if (p.track_descriptor().name() == "async 0") lane = p.track_descriptor().uuid();
    if (p.track_descriptor().name() == "block (0,0,0) warpgroup 0") {
      producer = p.track_descriptor().uuid();
    }
  }
  ASSERT_NE(lane, 0u);
  for (const pb::TracePacket& p : packets) {
    if (p.has_track_descriptor() && p.track_descriptor().uuid() == lane) {
      EXPECT_EQ(p.track_descriptor().parent_uuid(), producer);
    }
  }
  std::vector<std::tuple<int, uint64_t, uint64_t>> on_lane;  // type, flow id, terminating id
  for (const pb::TracePacket* p : Events(packets)) {
    if (p->track_event().track_uuid() != lane) continue;
    const pb::TrackEvent& t = p->track_event();
    on_lane.push_back({t.type(), t.flow_ids_size() ? t.flow_ids(0) : 0,
                       t.terminating_flow_ids_size() ? t.terminating_flow_ids(0) : 0});
  }
  EXPECT_THAT(on_lane, ElementsAre(std::tuple(pb::TrackEvent::TYPE_SLICE_BEGIN, 9u, 0u),
                                   std::tuple(pb::TrackEvent::TYPE_SLICE_END, 0u, 9u)));
}

// Trace version 5: the copy records no end; its end is derived, the consumer's release of
// the phase it completes (full[1] at 31). Its flow ends at that wait's end, like a hand-off,
// and its lane span ends there with no flow.
TEST_F(PerfettoWriterTest, ADerivedCopyEndsFlowEndsAtTheWaitReleasingItsPhase) {
  layout_ = HandoffLayout();
  std::vector<UnitTimeline> units = HandoffUnits();
  UnitTimeline& p = units[0];
  AsyncSpan& span = p.async_spans[0];
  span.end_event = AsyncSpan::kNoEvent;
  span.end_derived = true;
  span.derived_record = 1;
  span.derived_event = 5;
  span.end_ns = kOrigin + 31;
  Flow& copy = p.flows[1];
  copy.derived = true;
  copy.to = {1, 5, kOrigin + 31};
  copy.to.released_wait = 1;
  units[1].flows.push_back(copy);
  const std::vector<pb::TracePacket> packets = Write(units);
  uint64_t lane = 0;
  for (const pb::TracePacket& packet : packets) {
    if (packet.has_track_descriptor() && packet.track_descriptor().name() == "async 0") {
      lane = packet.track_descriptor().uuid();
    }
  }
  ASSERT_NE(lane, 0u);
  std::vector<std::tuple<int, uint64_t, uint64_t>> on_lane;  // type, flow id, terminating id
  std::vector<uint64_t> terminated;  // by the consumer's unit track
  for (const pb::TracePacket* e : Events(packets)) {
    const pb::TrackEvent& t = e->track_event();
    if (t.track_uuid() == lane) {
      on_lane.push_back({t.type(), t.flow_ids_size() ? t.flow_ids(0) : 0,
                         t.terminating_flow_ids_size() ? t.terminating_flow_ids(0) : 0});
    } else {
      terminated.insert(terminated.end(), t.terminating_flow_ids().begin(),
                        t.terminating_flow_ids().end());
    }
  }
  EXPECT_THAT(on_lane, ElementsAre(std::tuple(pb::TrackEvent::TYPE_SLICE_BEGIN, 9u, 0u),
                                   std::tuple(pb::TrackEvent::TYPE_SLICE_END, 0u, 0u)));
  EXPECT_THAT(terminated, ::testing::UnorderedElementsAre(8u, 9u));
}

TEST_F(PerfettoWriterTest, ABlocksStageRingCountsStagesReadyUntilTheirWaitIsReleased) {
  layout_ = HandoffLayout();
  const std::vector<pb::TracePacket> packets = Write(HandoffUnits());
  uint64_t ring = 0;
  for (const pb::TracePacket& p : packets) {
    if (p.has_track_descriptor() &&
        p.track_descriptor().name() == "full[*] stages ready in block (0,0,0)") {
      ring = p.track_descriptor().uuid();
      EXPECT_TRUE(p.track_descriptor().has_counter());
    }
  }
  ASSERT_NE(ring, 0u);
  std::vector<std::pair<uint64_t, int64_t>> values;
  for (const pb::TracePacket& p : packets) {
    if (p.has_track_event() && p.track_event().track_uuid() == ring) {
      values.push_back({p.timestamp(), p.track_event().counter_value()});
    }
  }
  // full[1] phase 0 completes at 30 (the producer's arrival) and is taken at 31.
  EXPECT_THAT(values, ElementsAre(std::pair<uint64_t, int64_t>(kOrigin + 30, 1),
                                  std::pair<uint64_t, int64_t>(kOrigin + 31, 0)));
}

TEST_F(PerfettoWriterTest, AFlowToAnEventTheUnitDoesNotHaveIsRejected) {
  layout_ = HandoffLayout();
  std::vector<UnitTimeline> units = HandoffUnits();
  units[1].flows[0].to.ns = kOrigin + 20;  // no wait ends there: the timeline found none
  units[1].flows[0].to.released_wait = FlowEnd::kNone;
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  PerfettoWriter writer(os);
  ASSERT_THAT(writer.Begin(layout_, kOrigin), IsOk());
  ASSERT_THAT(writer.AddUnit(units[0]), IsOk());
  EXPECT_THAT(writer.AddUnit(units[1]),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("releases no wait slice")));
}

}  // namespace
}  // namespace warptrace
