// Tests the Mosaic GPU importer with hand-built Mosaic buffers, and proves that the imported
// trace holds exactly the regions Mosaic's own dump shows, by comparing with a C++
// restatement of that dump (jax/experimental/mosaic/gpu/profiler.py, ProfilerSpec.dump).
#include "profiler/imports/mosaic_import.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "format/layout.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/imports/sidecar.h"
#include "profiler/timeline/timeline.h"
#include "profiler/timeline/timeline_types.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/verify.h"
#include "tests/profiler/imports/mosaic_buffer_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::MosaicTrace;
using ::warptrace::testing::MosaicWords;
using ::warptrace::testing::StatusIs;

constexpr uint32_t kExit = 1u << 31;

// ---- Hand-built Mosaic buffers ---------------------------------------------------------

std::string SidecarJson(const std::string& grid, const std::string& block, uint32_t e,
                        const std::string& scope, const std::string& names) {
  return absl::StrCat(R"({"format": "mosaic-gpu", "grid": )", grid, R"(, "block": )", block,
                      R"(, "entries_per_warpgroup": )", e,
                      scope.empty() ? "" : absl::StrCat(R"(, "trace_scope": ")", scope, "\""),
                      R"(, "names": )", names, "}");
}

// A trace with nested regions: outer(0) { inner(1) {} inner(1) {} }, then name 2 alone.
MosaicTrace NestedTrace(uint32_t start_lo, uint32_t smid, uint32_t clock0) {
  MosaicTrace t;
  t.start_lo = start_lo;
  t.smid = smid;
  uint32_t c = clock0;
  for (uint32_t tag : {0u, 1u, 1u | kExit, 1u, 1u | kExit, 0u | kExit, 2u, 2u | kExit}) {
    t.events.push_back({tag, c});
    c += 37;
  }
  return t;
}

// ---- A C++ restatement of Mosaic's dump (ProfilerSpec.dump) ----------------------------
// numpy semantics: the buffer is uint32, so every time below is uint32 arithmetic.

struct DumpEvent {
  std::string name;
  bool begin = true;
  double ts = 0;
  int64_t pid = 0;
  int64_t tid = 0;
};

absl::StatusOr<std::vector<DumpEvent>> MosaicDump(const std::vector<uint32_t>& buffer,
                                                  uint64_t num_blocks, uint32_t per_block,
                                                  uint32_t e,
                                                  const std::vector<std::string>& names) {
  const uint32_t trace_words = e - 3;
  auto at = [&](uint64_t b, uint32_t w, uint32_t i) {
    return buffer[(b * per_block + w) * e + i];
  };
  // entries_used = traces_used + 3; any > E raises.
  for (uint64_t b = 0; b < num_blocks; ++b) {
    for (uint32_t w = 0; w < per_block; ++w) {
      if (uint64_t{at(b, w, 2)} + 3 > e) {
        return absl::ResourceExhaustedError("Insufficient space to capture a full trace");
      }
    }
  }
  // profiling_overhead = (time_events[..., 1:] - time_events[..., :-1]).min(where=valid
  // [..., 1:], initial=12); then max(0, overhead - 1), all uint32.
  uint32_t overhead = 12;
  for (uint64_t b = 0; b < num_blocks; ++b) {
    for (uint32_t w = 0; w < per_block; ++w) {
      const uint32_t used = at(b, w, 2);
      for (uint32_t j = 1; 2 * j + 1 < trace_words; ++j) {
        if (2 * j + 1 >= used) continue;  // valid_times_mask
        const uint32_t diff = at(b, w, 3 + 2 * j + 1) - at(b, w, 3 + 2 * (j - 1) + 1);
        overhead = std::min(overhead, diff);
      }
    }
  }
  overhead = overhead - 1;  // uint32: wraps when the minimum is 0, as numpy does
  std::vector<std::vector<DumpEvent>> events;
  for (uint64_t b = 0; b < num_blocks; ++b) {
    for (uint32_t w = 0; w < per_block; ++w) {
      const uint32_t valid = at(b, w, 2);
      if (valid % 2 != 0) return absl::InternalError("assert valid_entries % 2 == 0");
      const uint32_t start = at(b, w, 0);
      bool have_offset = false;
      uint32_t offset = 0;
      bool have_last = false;
      uint32_t last = 0;
      const bool broke = false;
      std::vector<DumpEvent> block_events;
      for (uint32_t i = 0; i < valid; i += 2) {
        const uint32_t tag = at(b, w, 3 + i);
        uint32_t time = at(b, w, 3 + i + 1);
        if (!have_offset) {
          have_offset = true;
          offset = time;
        }
        time -= offset;
        time -= (i / 2) * overhead;
        // `if time < 0: break  # Detect a timer wraparound` compares a numpy uint32 with 0:
        // never true, so the dump keeps every event and never drops the trace (`broke`
        // stays false; kept to mirror the for/else).
        uint32_t id = tag;
        bool begin = true;
        if (id & kExit) {
          id ^= kExit;
          begin = false;
        }
        if (id >= names.size()) return absl::NotFoundError("KeyError in unintern");
        if (have_last && last >= time) time = last + 1;
        have_last = true;
        last = time;
        block_events.push_back({names[id], begin, static_cast<double>(start + time) / 1e3,
                                1 + int64_t{at(b, w, 1)},
                                1 + int64_t{w} + int64_t{per_block} * static_cast<int64_t>(b)});
      }
      if (!broke && !block_events.empty()) events.push_back(std::move(block_events));
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& x, const auto& y) { return x[0].ts < y[0].ts; });
  std::vector<DumpEvent> flat;
  for (const auto& v : events) flat.insert(flat.end(), v.begin(), v.end());
  return flat;
}

// A region as a trace viewer builds it from B/E events on one thread: an E closes the most
// recent open B. Keyed by Mosaic's (block index, trace) and the events' positions in the
// trace, so both sides can be compared without their (different) time scales.
struct Region {
  uint64_t mosaic_block = 0;
  uint32_t trace = 0;
  std::string name;
  uint32_t depth = 0;
  uint32_t begin_event = 0;
  uint32_t end_event = 0;
  friend bool operator<(const Region& a, const Region& b) {
    return std::tie(a.mosaic_block, a.trace, a.begin_event, a.end_event, a.depth, a.name) <
           std::tie(b.mosaic_block, b.trace, b.begin_event, b.end_event, b.depth, b.name);
  }
  friend bool operator==(const Region& a, const Region& b) { return !(a < b) && !(b < a); }
};

std::ostream& operator<<(std::ostream& os, const Region& r) {
  return os << "{block " << r.mosaic_block << " trace " << r.trace << " " << r.name
            << " depth " << r.depth << " events " << r.begin_event << ".." << r.end_event
            << "}";
}

// Pairs one thread's B/E sequence into regions.
void PairRegions(uint64_t block, uint32_t trace,
                 const std::vector<std::pair<std::string, bool>>& events,
                 std::vector<Region>& out) {
  std::vector<std::pair<std::string, uint32_t>> open;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events[i].second) {
      open.push_back({events[i].first, i});
    } else if (!open.empty()) {
      out.push_back({block, trace, open.back().first,
                     static_cast<uint32_t>(open.size() - 1), open.back().second, i});
      open.pop_back();
    }
  }
}

std::vector<Region> RegionsOfMosaicDump(const std::vector<DumpEvent>& dump,
                                        uint32_t per_block) {
  std::map<int64_t, std::vector<std::pair<std::string, bool>>> by_tid;
  for (const DumpEvent& e : dump) by_tid[e.tid].push_back({e.name, e.begin});
  std::vector<Region> regions;
  for (const auto& [tid, events] : by_tid) {
    const uint64_t global = static_cast<uint64_t>(tid - 1);
    PairRegions(global / per_block, static_cast<uint32_t>(global % per_block), events, regions);
  }
  std::sort(regions.begin(), regions.end());
  return regions;
}

// The same regions from the warptrace side: import, then decode (the dump's first stage).
std::vector<Region> RegionsOfImport(const MosaicImport& imported) {
  const TraceLayout& layout = imported.trace.layout;
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, imported.trace.words);
  EXPECT_THAT(decoded, IsOk());
  std::vector<Region> regions;
  if (!decoded.ok()) return regions;
  for (const DecodedRecord& r : decoded->records) {
    EXPECT_EQ(r.header_problem, HeaderProblem::kNone) << "record " << r.record_index;
    // Back to Mosaic's x-major block index.
    const uint32_t bx = r.block_linear % layout.grid.x;
    const uint32_t by = (r.block_linear / layout.grid.x) % layout.grid.y;
    const uint32_t bz = r.block_linear / (layout.grid.x * layout.grid.y);
    const uint64_t mosaic_block = (uint64_t{bx} * layout.grid.y + by) * layout.grid.z + bz;
    std::vector<std::pair<std::string, bool>> events;
    for (const abi::Event& e : r.events) {
      events.push_back({layout.sites[abi::TagSite(e.tag)].name, !abi::TagIsExit(e.tag)});
    }
    PairRegions(mosaic_block, r.unit_index, events, regions);
  }
  std::sort(regions.begin(), regions.end());
  return regions;
}

// ---- Tests -----------------------------------------------------------------------------

TEST(MosaicImportTest, ParsesSidecarWithDefaultsAndDims) {
  absl::StatusOr<MosaicSidecar> s = ParseMosaicSidecar(
      R"({"format": "mosaic-gpu", "grid": [4, 2], "block": [256], "entries_per_warpgroup": 67,
          "names": ["load", "mma"]})");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->grid, (Dim3{4, 2, 1}));
  EXPECT_EQ(s->block, (Dim3{256, 1, 1}));
  EXPECT_EQ(s->entries_per_trace, 67u);
  EXPECT_EQ(s->scope, UnitKind::kWarpgroup);
  EXPECT_THAT(s->names, ElementsAre("load", "mma"));
}

TEST(MosaicImportTest, RejectsBadSidecars) {
  EXPECT_THAT(ParseMosaicSidecar("{not json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not valid JSON")));
  EXPECT_THAT(ParseMosaicSidecar("[1, 2]"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("object")));
  EXPECT_THAT(ParseMosaicSidecar(R"({"format": "warptrace"})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"warptrace\"")));
  EXPECT_THAT(ParseMosaicSidecar(SidecarJson("[1]", "[128]", 9, "", "[\"a\"]")), IsOk());
  EXPECT_THAT(ParseMosaicSidecar(R"({"format": "mosaic-gpu", "block": [128],
                                     "entries_per_warpgroup": 9, "names": []})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"grid\"")));
  EXPECT_THAT(ParseMosaicSidecar(SidecarJson("[1, 0]", "[128]", 9, "", "[]")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"grid[1]\"")));
  EXPECT_THAT(ParseMosaicSidecar(SidecarJson("[1]", "[128]", 9, "thread", "[]")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("trace_scope")));
  EXPECT_THAT(ParseMosaicSidecar(SidecarJson("[1]", "[96]", 9, "warpgroup", "[]")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("multiple of")));
  EXPECT_THAT(ParseMosaicSidecar(SidecarJson("[1]", "[128]", 4, "", "[]")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(">= 5")));
  EXPECT_THAT(ParseMosaicSidecar(SidecarJson("[1]", "[128]", 9, "", "[\"a\", 3]")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"names[1]\" must be a string")));
}

TEST(MosaicImportTest, WarpgroupBufferBecomesAbiRecords) {
  // Grid (2,1,1), block 256: 2 warpgroups per block, E = 21 (capacity 9 events).
  const uint32_t e = 21;
  const std::vector<MosaicTrace> traces = {NestedTrace(5000, 3, 100), NestedTrace(5100, 3, 900),
                                           NestedTrace(5200, 7, 50), MosaicTrace{5300, 7, {}}};
  absl::StatusOr<MosaicSidecar> s = ParseMosaicSidecar(
      SidecarJson("[2]", "[256]", e, "warpgroup", R"(["outer", "inner", "tail"])"));
  ASSERT_THAT(s, IsOk());
  absl::StatusOr<MosaicImport> imported = ConvertMosaicBuffer(*s, MosaicWords(traces, e));
  ASSERT_THAT(imported, IsOk());
  const TraceLayout& layout = imported->trace.layout;
  EXPECT_EQ(layout.unit, UnitSpec::Warpgroup());
  EXPECT_EQ(layout.capacity, 9u);
  EXPECT_EQ(layout.placement, Placement::kShared);
  EXPECT_EQ(layout.clock.nominal_sm_clock_khz, kMosaicDefaultSmClockKhz);
  EXPECT_THAT(layout.clock.event_clock, HasSubstr("1980.0 MHz"));
  ASSERT_EQ(imported->trace.words.size(), BufferBytes(layout) / 4);
  EXPECT_THAT(imported->overflows, SizeIs(0));

  absl::StatusOr<DecodedTrace> decoded = Decode(layout, imported->trace.words);
  ASSERT_THAT(decoded, IsOk());
  ASSERT_THAT(decoded->records, SizeIs(4));
  const DecodedRecord& r1 = decoded->records[1];  // block 0, warpgroup 1
  EXPECT_EQ(r1.header_problem, HeaderProblem::kNone);
  EXPECT_EQ(r1.sm_id, 3u);
  EXPECT_EQ(r1.attempted, 8u);
  EXPECT_TRUE(r1.complete());
  EXPECT_EQ(r1.start_clock, 900u);
  EXPECT_EQ(r1.end_clock, 900u + 7 * 37);
  EXPECT_EQ(r1.start_globaltimer, (uint64_t{1} << 32) + 5100);
  EXPECT_EQ(r1.end_globaltimer, r1.start_globaltimer);
  ASSERT_THAT(r1.events, SizeIs(8));
  EXPECT_EQ(r1.events[2].tag, 1u | kExit);
  EXPECT_EQ(r1.events[2].clock, 900u + 2 * 37);
  EXPECT_THAT(decoded->records[3].events, SizeIs(0));

  const VerifyReport report = Verify(*decoded);
  EXPECT_TRUE(report.ok()) << report.ToStatus();
}

TEST(MosaicImportTest, RegionsEqualMosaicDumpForWarpgroupScope) {
  // Grid (2,3,1) so that Mosaic's x-major block order differs from warptrace's.
  const uint32_t e = 19;
  std::vector<MosaicTrace> traces;
  for (uint32_t i = 0; i < 6 * 2; ++i) {
    MosaicTrace t = NestedTrace(1000 * i, i % 4, 10 * i);
    if (i % 5 == 3) t.events = {{2, 7}, {2 | kExit, 90}};  // one region only
    if (i == 7) t.events.clear();        // an empty trace: Mosaic shows nothing for it
    traces.push_back(t);
  }
  const std::vector<std::string> names = {"outer", "inner", "tail"};
  const std::vector<uint32_t> words = MosaicWords(traces, e);
  absl::StatusOr<MosaicSidecar> s = ParseMosaicSidecar(
      SidecarJson("[2, 3]", "[256]", e, "warpgroup", R"(["outer", "inner", "tail"])"));
  ASSERT_THAT(s, IsOk());
  absl::StatusOr<MosaicImport> imported = ConvertMosaicBuffer(*s, words);
  ASSERT_THAT(imported, IsOk());
  absl::StatusOr<std::vector<DumpEvent>> dump = MosaicDump(words, 6, 2, e, names);
  ASSERT_THAT(dump, IsOk());
  const std::vector<Region> expected = RegionsOfMosaicDump(*dump, 2);
  EXPECT_THAT(expected, SizeIs(9 * 4 + 2));  // 9 nested traces x 4 regions; 2 single ones
  EXPECT_EQ(RegionsOfImport(*imported), expected);

  // The rest of the dump path: the timeline shows the same number of slices, converted at
  // the nominal SM clock (Mosaic records no end stamps) and saying so.
  absl::StatusOr<DecodedTrace> decoded =
      Decode(imported->trace.layout, imported->trace.words);
  ASSERT_THAT(decoded, IsOk());
  const VerifyReport report = Verify(*decoded);
  ASSERT_TRUE(report.ok()) << report.ToStatus();
  absl::StatusOr<Timeline> timeline = BuildTimeline(*decoded, report);
  ASSERT_THAT(timeline, IsOk());
  size_t slices = 0;
  for (const UnitTimeline& unit : timeline->units) {
    slices += unit.slices.size();
    if (unit.slices.empty()) continue;
    EXPECT_TRUE(unit.nominal_clock) << "block " << unit.block_linear << " unit " << unit.unit_index;
    EXPECT_NEAR(unit.cycles_per_ns, kMosaicDefaultSmClockKhz / 1e6, 1e-9);
  }
  EXPECT_EQ(slices, expected.size());
}

TEST(MosaicImportTest, RegionsEqualMosaicDumpForWarpScopeAcrossClockWrap) {
  // Warp scope, 3 warps per block of 96; one trace's clock wraps past 2^32 mid-trace and
  // one block's start globaltimer low word wraps.
  const uint32_t e = 21;
  std::vector<MosaicTrace> traces;
  for (uint32_t i = 0; i < 2 * 3; ++i) {
    traces.push_back(NestedTrace(i == 4 ? 20 : 0xFFFFFF00u + i, i, 10 * i));
  }
  traces[2] = NestedTrace(0xFFFFFF00u, 2, 0xFFFFFFB0u);  // wraps after the first events
  const std::vector<std::string> names = {"outer", "inner", "tail"};
  const std::vector<uint32_t> words = MosaicWords(traces, e);
  absl::StatusOr<MosaicSidecar> s = ParseMosaicSidecar(
      SidecarJson("[2]", "[96]", e, "warp", R"(["outer", "inner", "tail"])"));
  ASSERT_THAT(s, IsOk());
  absl::StatusOr<MosaicImport> imported = ConvertMosaicBuffer(*s, words);
  ASSERT_THAT(imported, IsOk());
  EXPECT_EQ(imported->trace.layout.unit, UnitSpec::Warp());
  absl::StatusOr<std::vector<DumpEvent>> dump = MosaicDump(words, 2, 3, e, names);
  ASSERT_THAT(dump, IsOk());
  EXPECT_EQ(RegionsOfImport(*imported), RegionsOfMosaicDump(*dump, 3));

  // The wrapped start (low word 20 after 0xFFFFFF0x) lands 2^32 ns later, not 4.29 s earlier.
  absl::StatusOr<DecodedTrace> decoded =
      Decode(imported->trace.layout, imported->trace.words);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->records[4].start_globaltimer - decoded->records[0].start_globaltimer,
            uint64_t{20} + 0x100u);
  const VerifyReport report = Verify(*decoded);
  EXPECT_TRUE(report.ok()) << report.ToStatus();
}

TEST(MosaicImportTest, OverflowedTraceGetsThePreciseDiagnosis) {
  // E = 9: room for 3 events. Warpgroup 0 of block 0 recorded 8 events (16 words): Mosaic's
  // dump refuses the whole buffer; here it is an overflowed unit and the rest is intact.
  const uint32_t e = 9;
  MosaicTrace full = NestedTrace(100, 1, 0);
  full.used = 16;
  const std::vector<MosaicTrace> traces = {full,
                                           MosaicTrace{200, 1, {{2, 5}, {2 | kExit, 50}}}};
  const std::vector<uint32_t> words = MosaicWords(traces, e);
  EXPECT_THAT(MosaicDump(words, 1, 2, e, {"outer", "inner", "tail"}),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("Insufficient space")));

  absl::StatusOr<MosaicSidecar> s =
      ParseMosaicSidecar(SidecarJson("[1]", "[256]", e, "", R"(["outer", "inner", "tail"])"));
  ASSERT_THAT(s, IsOk());
  absl::StatusOr<MosaicImport> imported = ConvertMosaicBuffer(*s, words);
  ASSERT_THAT(imported, IsOk());
  ASSERT_THAT(imported->overflows, SizeIs(1));
  const MosaicOverflow& o = imported->overflows[0];
  EXPECT_EQ(o.trace, 0u);
  EXPECT_EQ(o.events_attempted, 8u);
  EXPECT_EQ(o.events_kept, 3u);
  EXPECT_EQ(o.entries_needed, 19u);
  EXPECT_EQ(o.words_past_slice, 7u);
  EXPECT_THAT(o.message, HasSubstr("set entries_per_warpgroup >= 19"));
  EXPECT_THAT(o.message, HasSubstr("warpgroup 1's events"));

  absl::StatusOr<DecodedTrace> decoded =
      Decode(imported->trace.layout, imported->trace.words);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->records[0].attempted, 8u);
  EXPECT_THAT(decoded->records[0].events, SizeIs(3));
  const VerifyReport report = Verify(*decoded);
  EXPECT_EQ(report.units[0].verdict, Verdict::kOverflowed);
  EXPECT_EQ(report.units[0].dropped, 5u);
  EXPECT_EQ(report.required_capacity(), 8u);
  EXPECT_EQ(report.units[1].verdict, Verdict::kComplete);
}

// A buffer big enough to be converted on several threads (~1 Mi words per thread): grid
// (1100,2,1) x 2 warpgroups, E = 1003 (500 events), some traces overflowing, every word past
// a trace's used ones garbage, as a real buffer may leave them.
struct BigMosaic {
  MosaicSidecar sidecar;
  std::vector<uint32_t> words;
};
BigMosaic BigMosaicBuffer() {
  const uint32_t e = 1003;
  std::vector<MosaicTrace> traces;
  for (uint32_t i = 0; i < 1100 * 2 * 2; ++i) {
    MosaicTrace t;
    t.start_lo = 1000 + 13 * i;
    t.smid = i % 132;
    const uint32_t n = (i * 7) % 520;  // past 500: overflowed
    for (uint32_t k = 0; k < n; ++k) {
      t.events.push_back({k % 2 == 0 ? 0u : 0u | kExit, 100 + 3 * k + i % 5});
    }
    traces.push_back(t);
  }
  std::vector<uint32_t> words = MosaicWords(traces, e);
  for (size_t i = 0; i < traces.size(); ++i) {
    const size_t used = 2 * std::min<size_t>(traces[i].events.size(), 500);
    for (size_t w = 3 + used; w < e; ++w) words[i * e + w] = 0xdeadbeefu;
  }
  absl::StatusOr<MosaicSidecar> s =
      ParseMosaicSidecar(SidecarJson("[1100, 2]", "[256]", e, "warpgroup", R"(["loop"])"));
  EXPECT_THAT(s, IsOk());
  return {*s, std::move(words)};
}

TEST(MosaicImportTest, ThreadsConvertToTheSameWordsAndOverflows) {
  const BigMosaic big = BigMosaicBuffer();
  absl::StatusOr<MosaicImport> one = ConvertMosaicBuffer(big.sidecar, big.words);
  ASSERT_THAT(one, IsOk());
  const TraceLayout& layout = one->trace.layout;
  ASSERT_EQ(one->trace.words.size(), BufferBytes(layout) / 4);
  // Event slots past what a trace kept are zero, not the Mosaic buffer's garbage.
  const uint64_t record_words = abi::RecordWords(layout.capacity);
  absl::StatusOr<DecodedTrace> decoded = Decode(layout, one->trace.words);
  ASSERT_THAT(decoded, IsOk());
  uint64_t checked = 0;
  for (const DecodedRecord& r : decoded->records) {
    const uint32_t* record = one->trace.words.data() + r.record_index * record_words;
    for (uint64_t w = abi::kHeaderWords + abi::kEventWords * r.events.size(); w < record_words;
         ++w) {
      ASSERT_EQ(record[w], 0u) << "record " << r.record_index << " word " << w;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
  EXPECT_TRUE(Verify(*decoded).units.size() == decoded->records.size());
  ASSERT_GT(one->overflows.size(), 10u);

  for (int threads : {2, 3, 4, 7}) {
    MosaicImportOptions options;
    options.threads = threads;
    absl::StatusOr<MosaicImport> many = ConvertMosaicBuffer(big.sidecar, big.words, options);
    ASSERT_THAT(many, IsOk()) << threads << " threads";
    EXPECT_TRUE(many->trace.words.span() == one->trace.words.span()) << threads << " threads";
    ASSERT_EQ(many->overflows.size(), one->overflows.size()) << threads << " threads";
    for (size_t i = 0; i < one->overflows.size(); ++i) {
      EXPECT_EQ(many->overflows[i].block_linear, one->overflows[i].block_linear);
      EXPECT_EQ(many->overflows[i].trace, one->overflows[i].trace);
      EXPECT_EQ(many->overflows[i].message, one->overflows[i].message);
    }
  }
}

TEST(MosaicImportTest, ThreadsReportTheFirstBadTraceInBlockOrder) {
  BigMosaic big = BigMosaicBuffer();
  const uint32_t e = 1003;
  // Mosaic's block m is (m / 2, m % 2, 0) in this grid (x-major).
  big.words[3500 * e + 2] = 7;  // block 1750 = (875,0,0), warpgroup 0: a later range
  big.words[1201 * e + 2] = 5;  // block 600 = (300,0,0), warpgroup 1: the first
  for (int threads : {1, 2, 4}) {
    MosaicImportOptions options;
    options.threads = threads;
    EXPECT_THAT(ConvertMosaicBuffer(big.sidecar, big.words, options).status(),
                StatusIs(absl::StatusCode::kDataLoss,
                         ::testing::AllOf(HasSubstr("block (300,0,0) warpgroup 1"),
                                          HasSubstr("traces_used = 5"))))
        << threads << " threads";
  }
}

// The record ConvertMosaicBuffer's words decode to and the one DecodeMosaicBuffer makes in
// place are the same, field by field and event by event.
void ExpectSameRecords(const DecodedTrace& converted, const DecodedTrace& in_place) {
  ASSERT_EQ(in_place.records.size(), converted.records.size());
  EXPECT_EQ(in_place.total_events, converted.total_events);
  for (size_t i = 0; i < converted.records.size(); ++i) {
    const DecodedRecord& a = converted.records[i];
    const DecodedRecord& b = in_place.records[i];
    SCOPED_TRACE(absl::StrCat("record ", i));
    EXPECT_EQ(b.record_index, a.record_index);
    EXPECT_EQ(b.block_linear, a.block_linear);
    EXPECT_EQ(b.unit_index, a.unit_index);
    EXPECT_EQ(b.header_problem, a.header_problem);
    EXPECT_EQ(b.version, a.version);
    EXPECT_EQ(b.sm_id, a.sm_id);
    EXPECT_EQ(b.attempted, a.attempted);
    EXPECT_EQ(b.capacity, a.capacity);
    EXPECT_EQ(b.flags, a.flags);
    EXPECT_EQ(b.start_clock, a.start_clock);
    EXPECT_EQ(b.end_clock, a.end_clock);
    EXPECT_EQ(b.start_globaltimer, a.start_globaltimer);
    EXPECT_EQ(b.end_globaltimer, a.end_globaltimer);
    EXPECT_EQ(b.events_recovered, a.events_recovered);
    ASSERT_EQ(b.events.size(), a.events.size());
    for (size_t k = 0; k < a.events.size(); ++k) {
      ASSERT_EQ(b.events[k].tag, a.events[k].tag) << "event " << k;
      ASSERT_EQ(b.events[k].clock, a.events[k].clock) << "event " << k;
    }
  }
}

void ExpectSameOverflows(const std::vector<MosaicOverflow>& a,
                         const std::vector<MosaicOverflow>& b) {
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(b[i].block_linear, a[i].block_linear);
    EXPECT_EQ(b[i].trace, a[i].trace);
    EXPECT_EQ(b[i].entries_needed, a[i].entries_needed);
    EXPECT_EQ(b[i].message, a[i].message);
  }
}

// Converted then decoded, and decoded in place: the same records, overflows and verdicts.
void ExpectInPlaceEqualsConverted(const MosaicSidecar& sidecar,
                                  const std::vector<uint32_t>& words) {
  absl::StatusOr<MosaicImport> imported = ConvertMosaicBuffer(sidecar, words);
  ASSERT_THAT(imported, IsOk());
  absl::StatusOr<DecodedTrace> converted = Decode(imported->trace.layout, imported->trace.words);
  ASSERT_THAT(converted, IsOk());
  DecodedTrace in_place;
  std::vector<MosaicOverflow> overflows = {MosaicOverflow{}};  // replaced, not appended to
  ASSERT_THAT(DecodeMosaicBuffer(sidecar, imported->trace.layout, words, in_place, overflows),
              IsOk());
  EXPECT_EQ(in_place.layout, &imported->trace.layout);
  ExpectSameRecords(*converted, in_place);
  ExpectSameOverflows(imported->overflows, overflows);
  // Read where they lie: every record's events are inside the Mosaic words.
  for (const DecodedRecord& r : in_place.records) {
    if (r.events.empty()) continue;
    const uint32_t* first = reinterpret_cast<const uint32_t*>(r.events.data());
    ASSERT_GE(first, words.data());
    ASSERT_LE(first + 2 * r.events.size(), words.data() + words.size());
  }
  const VerifyReport a = Verify(*converted);
  const VerifyReport b = Verify(in_place);
  ASSERT_EQ(b.units.size(), a.units.size());
  for (size_t i = 0; i < a.units.size(); ++i) {
    EXPECT_EQ(b.units[i].verdict, a.units[i].verdict) << "unit " << i;
  }
  EXPECT_EQ(b.findings.size(), a.findings.size());
  EXPECT_EQ(b.kept_events, a.kept_events);
}

TEST(MosaicImportTest, DecodedInPlaceAsTheConvertedBufferDecodes) {
  // Two dimensions, overflows, garbage past each trace's used words.
  const BigMosaic big = BigMosaicBuffer();
  ExpectInPlaceEqualsConverted(big.sidecar, big.words);

  // Three dimensions (Mosaic's x-major order against warptrace's x-fastest), warp scope,
  // empty traces, a start time that wraps, an overflowed trace.
  const uint32_t e = 21;  // 9 events
  std::vector<MosaicTrace> traces;
  for (uint32_t i = 0; i < 3 * 2 * 2 * 4; ++i) {
    if (i % 5 == 3) {
      traces.push_back(MosaicTrace{});  // never recorded
      continue;
    }
    MosaicTrace t = NestedTrace(0xfffffff0u + 7 * i, i % 7, 1000 * i);
    if (i == 10) {
      for (uint32_t k = 0; k < 4; ++k) t.events.push_back({2u, 5000 + k});  // 12 > 9 events
    }
    traces.push_back(t);
  }
  absl::StatusOr<MosaicSidecar> s = ParseMosaicSidecar(
      SidecarJson("[3, 2, 2]", "[128]", e, "warp", R"(["outer", "inner", "tail"])"));
  ASSERT_THAT(s, IsOk());
  ExpectInPlaceEqualsConverted(*s, MosaicWords(traces, e));
}

TEST(MosaicImportTest, DecodedInPlaceFailsAsTheConversionDoes) {
  BigMosaic big = BigMosaicBuffer();
  const uint32_t e = 1003;
  big.words[3500 * e + 2] = 7;
  big.words[1201 * e + 2] = 5;  // the first odd trace in Mosaic's block order
  absl::StatusOr<MosaicImport> good = ConvertMosaicBuffer(BigMosaicBuffer().sidecar,
                                                          BigMosaicBuffer().words);
  ASSERT_THAT(good, IsOk());
  DecodedTrace out;
  std::vector<MosaicOverflow> overflows;
  const absl::Status converted = ConvertMosaicBuffer(big.sidecar, big.words).status();
  EXPECT_THAT(converted, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("(300,0,0) warpgroup 1")));
  EXPECT_EQ(DecodeMosaicBuffer(big.sidecar, good->trace.layout, big.words, out, overflows),
            converted);
  big.words.pop_back();
  EXPECT_EQ(DecodeMosaicBuffer(big.sidecar, good->trace.layout, big.words, out, overflows),
            ConvertMosaicBuffer(big.sidecar, big.words).status());
  EXPECT_THAT(DecodeMosaicBuffer(big.sidecar, good->trace.layout, big.words, out, overflows),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("needs")));
}

TEST(MosaicImportTest, SizeMismatchSaysWhatTheSizeImplies) {
  absl::StatusOr<MosaicSidecar> s =
      ParseMosaicSidecar(SidecarJson("[2]", "[128]", 9, "", R"(["a"])"));
  ASSERT_THAT(s, IsOk());
  const std::vector<uint32_t> words(2 * 11, 0u);  // written with E = 11
  EXPECT_THAT(ConvertMosaicBuffer(*s, words),
              StatusIs(absl::StatusCode::kDataLoss,
                       ::testing::AllOf(HasSubstr("has 22 words"), HasSubstr("needs 18"),
                                        HasSubstr("entries_per_warpgroup 11?"))));
}

TEST(MosaicImportTest, OddTracesUsedIsDataLossNamingTheTrace) {
  absl::StatusOr<MosaicSidecar> s =
      ParseMosaicSidecar(SidecarJson("[1]", "[256]", 9, "", R"(["a"])"));
  ASSERT_THAT(s, IsOk());
  MosaicTrace odd;
  odd.used = 5;  // what the older profiler (traces_used + 3) writes for one event
  EXPECT_THAT(ConvertMosaicBuffer(*s, MosaicWords({MosaicTrace{}, odd}, 9)),
              StatusIs(absl::StatusCode::kDataLoss,
                       ::testing::AllOf(HasSubstr("block (0,0,0) warpgroup 1"),
                                        HasSubstr("traces_used = 5"))));
}

// ---- The older header form (JAX <= 0.7.2) and bounds_check --------------------------------

// `traces` as JAX <= 0.7.2 wrote them: word 2 = 3 + event words.
std::vector<uint32_t> OlderFormWords(const std::vector<MosaicTrace>& traces, uint32_t e) {
  std::vector<uint32_t> words = MosaicWords(traces, e);
  for (size_t i = 2; i < words.size(); i += e) words[i] += 3;
  return words;
}

std::string WithFields(std::string json, const std::string& fields) {
  json.insert(json.size() - 1, absl::StrCat(", ", fields));
  return json;
}

TEST(MosaicImportTest, SidecarNamesTheHeaderFormAndBoundsCheck) {
  const std::string base = SidecarJson("[1]", "[128]", 9, "", R"(["a"])");
  absl::StatusOr<MosaicSidecar> s = ParseMosaicSidecar(base);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->used_word, MosaicUsedWord::kEventWords);
  EXPECT_FALSE(s->bounds_check);
  s = ParseMosaicSidecar(
      WithFields(base, R"("traces_used": "with_header", "bounds_check": true)"));
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->used_word, MosaicUsedWord::kWithHeader);
  EXPECT_TRUE(s->bounds_check);
  EXPECT_THAT(ParseMosaicSidecar(WithFields(base, R"("traces_used": "words")")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("\"traces_used\""), HasSubstr("0.8.0"))));
  EXPECT_THAT(ParseMosaicSidecar(WithFields(base, R"("bounds_check": 1)")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bounds_check")));
}

TEST(MosaicImportTest, OlderHeaderFormReadsAsTheSameRecordsAndRegionsAsItsDump) {
  // Grid (2,3,1), E = 19: the same traces in both forms give the same converted words, and
  // the regions of JAX 0.7.2's dump (its word 2 less 3; restated by MosaicDump on the
  // buffer with word 2 rewritten, which is that dump's whole difference but its check).
  const uint32_t e = 19;
  std::vector<MosaicTrace> traces;
  for (uint32_t i = 0; i < 6; ++i) traces.push_back(NestedTrace(1000 + 10 * i, i, 77 * i));
  traces[4] = MosaicTrace{1040, 4, {}};  // an empty trace: word 2 = 3 in the older form
  const std::string json = SidecarJson("[2, 3]", "[128]", e, "", R"(["outer", "inner", "tail"])");
  absl::StatusOr<MosaicSidecar> newer = ParseMosaicSidecar(json);
  absl::StatusOr<MosaicSidecar> older =
      ParseMosaicSidecar(WithFields(json, R"("traces_used": "with_header")"));
  ASSERT_THAT(newer, IsOk());
  ASSERT_THAT(older, IsOk());
  const std::vector<uint32_t> old_words = OlderFormWords(traces, e);
  EXPECT_EQ(old_words[4 * e + 2], 3u);
  absl::StatusOr<MosaicImport> a = ConvertMosaicBuffer(*newer, MosaicWords(traces, e));
  absl::StatusOr<MosaicImport> b = ConvertMosaicBuffer(*older, old_words);
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_TRUE(a->trace.words.span() == b->trace.words.span());
  absl::StatusOr<std::vector<DumpEvent>> dump =
      MosaicDump(MosaicWords(traces, e), 6, 1, e, {"outer", "inner", "tail"});
  ASSERT_THAT(dump, IsOk());
  EXPECT_EQ(RegionsOfImport(*b), RegionsOfMosaicDump(*dump, 1));
  // In place, the same records.
  DecodedTrace in_place;
  std::vector<MosaicOverflow> overflows;
  ASSERT_THAT(DecodeMosaicBuffer(*older, b->trace.layout, old_words, in_place, overflows),
              IsOk());
  ASSERT_THAT(in_place.records, SizeIs(6));
  EXPECT_EQ(in_place.records[1].attempted, 8u);
  EXPECT_THAT(in_place.records[3].events, SizeIs(0));  // Mosaic block 4 is block (1,1): 3
}

TEST(MosaicImportTest, OlderFormOverflowNamesTheSizeItsDumpAccepts) {
  // 8 events (16 event words, word 2 = 19) in E = 9: JAX 0.7.2's dump refuses word 2 >
  // E - 2, so it needs E >= 21 = 16 + 5.
  const uint32_t e = 9;
  MosaicTrace full = NestedTrace(100, 1, 0);
  full.used = 16;
  absl::StatusOr<MosaicSidecar> s = ParseMosaicSidecar(WithFields(
      SidecarJson("[1]", "[128]", e, "", R"(["outer", "inner", "tail"])"),
      R"("traces_used": "with_header")"));
  ASSERT_THAT(s, IsOk());
  absl::StatusOr<MosaicImport> imported = ConvertMosaicBuffer(*s, OlderFormWords({full}, e));
  ASSERT_THAT(imported, IsOk());
  ASSERT_THAT(imported->overflows, SizeIs(1));
  EXPECT_EQ(imported->overflows[0].events_attempted, 8u);
  EXPECT_EQ(imported->overflows[0].entries_needed, 21u);
  EXPECT_THAT(imported->overflows[0].message, HasSubstr("set entries_per_warpgroup >= 21"));
}

TEST(MosaicImportTest, OlderBufferReadAsTheNewerFormNamesTheOlderForm) {
  absl::StatusOr<MosaicSidecar> s =
      ParseMosaicSidecar(SidecarJson("[1]", "[256]", 19, "", R"(["outer", "inner", "tail"])"));
  ASSERT_THAT(s, IsOk());
  const std::vector<uint32_t> words =
      OlderFormWords({NestedTrace(1, 1, 1), MosaicTrace{2, 2, {}}}, 19);
  EXPECT_THAT(ConvertMosaicBuffer(*s, words),
              StatusIs(absl::StatusCode::kDataLoss,
                       ::testing::AllOf(HasSubstr("block (0,0,0) warpgroup 0"),
                                        HasSubstr("traces_used = 19"),
                                        HasSubstr("every trace of the buffer reads as the other "
                                                  "form, \"with_header\" (JAX <= 0.7.2)"))));
}

TEST(MosaicImportTest, NewerBufferReadAsTheOlderFormNamesTheNewerForm) {
  absl::StatusOr<MosaicSidecar> s = ParseMosaicSidecar(
      WithFields(SidecarJson("[1]", "[256]", 19, "", R"(["outer", "inner", "tail"])"),
                 R"("traces_used": "with_header")"));
  ASSERT_THAT(s, IsOk());
  const std::vector<uint32_t> words = MosaicWords({NestedTrace(1, 1, 1), MosaicTrace{}}, 19);
  EXPECT_THAT(ConvertMosaicBuffer(*s, words),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("\"traces_used\": \"event_words\"")));
  DecodedTrace out;
  std::vector<MosaicOverflow> overflows;
  absl::StatusOr<TraceLayout> layout = MosaicTraceLayout(*s);
  ASSERT_THAT(layout, IsOk());
  EXPECT_THAT(DecodeMosaicBuffer(*s, *layout, words, out, overflows),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("\"traces_used\": \"event_words\"")));
}

TEST(MosaicImportTest, BufferThatFitsNeitherFormSaysSo) {
  // Word 2 = 16 (even: only the newer form) and 5 (odd: only the older form).
  MosaicTrace odd;
  odd.used = 5;
  for (const char* form : {"event_words", "with_header"}) {
    absl::StatusOr<MosaicSidecar> s = ParseMosaicSidecar(
        WithFields(SidecarJson("[1]", "[256]", 19, "", R"(["outer", "inner", "tail"])"),
                   absl::StrCat(R"("traces_used": ")", form, "\"")));
    ASSERT_THAT(s, IsOk());
    EXPECT_THAT(ConvertMosaicBuffer(*s, MosaicWords({NestedTrace(1, 1, 1), odd}, 19)),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("fits neither form")))
        << form;
  }
}

TEST(MosaicImportTest, BoundsCheckedTraceLeftOpenIsTruncatedWithALowerBound) {
  // ProfilerSpec(bounds_check=True), E = 9 (3 event slots): the device stopped recording
  // and counting at 3 events, "outer" still open. A full trace whose regions all closed, and
  // the same open trace without bounds_check (Mosaic's older profiler never stops early),
  // are no overflow.
  const uint32_t e = 9;
  MosaicTrace cut = NestedTrace(100, 1, 0);
  cut.events.resize(3);  // outer B, inner B, inner E
  const MosaicTrace full{200, 1, {{0, 5}, {1, 6}, {2, 7}}};  // three regions open
  const std::string json = SidecarJson("[1]", "[384]", e, "", R"(["outer", "inner", "tail"])");
  absl::StatusOr<MosaicSidecar> s = ParseMosaicSidecar(WithFields(json, R"("bounds_check": true)"));
  ASSERT_THAT(s, IsOk());
  MosaicTrace closed{300, 1, {{2, 5}, {2 | kExit, 6}}};
  const std::vector<uint32_t> words = MosaicWords({cut, closed, full}, e);
  absl::StatusOr<MosaicImport> imported = ConvertMosaicBuffer(*s, words);
  ASSERT_THAT(imported, IsOk());
  ASSERT_THAT(imported->overflows, SizeIs(2));
  const MosaicOverflow& o = imported->overflows[0];
  EXPECT_EQ(o.trace, 0u);
  EXPECT_TRUE(o.bounds_checked);
  EXPECT_FALSE(o.entries_needed_exact);
  EXPECT_EQ(o.words_past_slice, 0u);
  EXPECT_EQ(o.events_kept, 3u);
  EXPECT_EQ(o.entries_needed, 3u + 6 + 2);  // at least: the open region's end
  EXPECT_THAT(o.message, HasSubstr("filled all 3 event slots"));
  EXPECT_THAT(o.message, HasSubstr("set entries_per_warpgroup >= 11 at least"));
  EXPECT_EQ(imported->overflows[1].trace, 2u);
  EXPECT_EQ(imported->overflows[1].entries_needed, 3u + 6 + 2 * 3);
  // In place, the same overflows.
  DecodedTrace in_place;
  std::vector<MosaicOverflow> overflows;
  ASSERT_THAT(DecodeMosaicBuffer(*s, imported->trace.layout, words, in_place, overflows), IsOk());
  ASSERT_THAT(overflows, SizeIs(2));
  EXPECT_EQ(overflows[0].message, o.message);
  // Verify's verdict for it, as the dump of a bounds_check buffer asks (allow_truncated):
  // truncated (its open region).
  absl::StatusOr<DecodedTrace> decoded = Decode(imported->trace.layout, imported->trace.words);
  ASSERT_THAT(decoded, IsOk());
  VerifyOptions lenient;
  lenient.allow_truncated = true;
  EXPECT_EQ(Verify(*decoded, lenient).units[0].verdict, Verdict::kTruncated);
  // A full trace whose regions closed (E = 7: 2 slots), and bounds_check off: no overflow.
  absl::StatusOr<MosaicSidecar> two = ParseMosaicSidecar(
      WithFields(SidecarJson("[1]", "[128]", 7, "", R"(["outer", "inner", "tail"])"),
                 R"("bounds_check": true)"));
  ASSERT_THAT(two, IsOk());
  EXPECT_THAT(ConvertMosaicBuffer(*two, MosaicWords({closed}, 7)).value().overflows, SizeIs(0));
  absl::StatusOr<MosaicSidecar> plain = ParseMosaicSidecar(json);
  ASSERT_THAT(plain, IsOk());
  EXPECT_THAT(ConvertMosaicBuffer(*plain, words).value().overflows, SizeIs(0));
}

TEST(MosaicImportTest, ZeroClockRateIsRejected) {
  absl::StatusOr<MosaicSidecar> s =
      ParseMosaicSidecar(SidecarJson("[1]", "[128]", 9, "", R"(["a"])"));
  ASSERT_THAT(s, IsOk());
  MosaicImportOptions options;
  options.sm_clock_khz = 0;
  EXPECT_THAT(ConvertMosaicBuffer(*s, std::vector<uint32_t>(9, 0u), options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("kHz")));
}

TEST(MosaicImportTest, LoadTraceReadsMosaicFilesThroughTheImporter) {
  const std::string prefix = absl::StrCat(::testing::TempDir(), "/mosaic_attention");
  const uint32_t e = 21;
  const std::vector<uint32_t> words = MosaicWords({NestedTrace(10, 0, 0)}, e);
  {
    std::ofstream bin(prefix + ".bin", std::ios::binary);
    for (uint32_t w : words) {
      const unsigned char le[4] = {
          static_cast<unsigned char>(w), static_cast<unsigned char>(w >> 8),
          static_cast<unsigned char>(w >> 16), static_cast<unsigned char>(w >> 24)};
      bin.write(reinterpret_cast<const char*>(le), 4);
    }
    std::ofstream(prefix + ".json")
        << SidecarJson("[1]", "[128]", e, "warpgroup", R"(["outer", "inner", "tail"])");
  }
  LoadOptions options;
  options.importers[kMosaicSidecarFormat] = &ImportMosaicGpuTrace;
  absl::StatusOr<LoadedTrace> loaded = LoadTrace(prefix, options);
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(loaded->layout.kernel_name, "mosaic_attention");
  EXPECT_EQ(loaded->layout.sites[1].name, "inner");

  // In place: the same layout, and the records Decode makes of the converted words.
  absl::StatusOr<std::unique_ptr<MosaicDecoded>> in_place = DecodeMosaicGpu(
      prefix, SidecarJson("[1]", "[128]", e, "warpgroup", R"(["outer", "inner", "tail"])"));
  ASSERT_THAT(in_place, IsOk());
  EXPECT_EQ((*in_place)->layout.kernel_name, "mosaic_attention");
  EXPECT_TRUE((*in_place)->words.mapped());
  EXPECT_EQ((*in_place)->decoded.layout, &(*in_place)->layout);
  absl::StatusOr<DecodedTrace> converted = Decode(loaded->layout, loaded->words);
  ASSERT_THAT(converted, IsOk());
  ExpectSameRecords(*converted, (*in_place)->decoded);
  MosaicImportOptions zero_clock;
  zero_clock.sm_clock_khz = 0;
  EXPECT_THAT(DecodeMosaicGpu(prefix, SidecarJson("[1]", "[128]", e, "", R"(["a"])"), zero_clock)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("kHz")));

  std::ofstream(prefix + ".bin", std::ios::binary | std::ios::trunc) << "abcde";
  EXPECT_THAT(LoadTrace(prefix, options),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("whole number of 4-byte words")));
  EXPECT_THAT(ImportMosaicGpu(prefix + "_missing",
                              SidecarJson("[1]", "[128]", e, "", R"(["outer"])")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("_missing.bin")));
  EXPECT_THAT(DecodeMosaicGpu(prefix, SidecarJson("[1]", "[128]", e, "", R"(["outer"])"))
                  .status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("whole number of 4-byte words")));
  EXPECT_THAT(DecodeMosaicGpu(prefix + "_missing",
                              SidecarJson("[1]", "[128]", e, "", R"(["outer"])"))
                  .status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("_missing.bin")));
}

}  // namespace
}  // namespace warptrace
