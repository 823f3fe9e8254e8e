// Tests PerfettoTraceSink's threads: the writer formatting batches on several threads writes
// the bytes the caller's thread alone writes, reports the writer's errors with the same message, and a sink
// dropped mid-dump stops cleanly.
#include "profiler/outputs/perfetto/perfetto_sink.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "format/layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/dump/sink.h"
#include "profiler/timeline/timeline_types.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr int64_t kOrigin = 1'000'000;

TraceLayout Layout(uint32_t blocks) {
  TraceLayout layout;
  layout.kernel_name = "gemm";
  layout.device_name = "test device";
  layout.grid = {blocks, 1, 1};
  layout.block = {256, 1, 1};
  layout.unit = UnitSpec::Warpgroup();
  layout.capacity = 4096;
  layout.sites = {{0, "kernel", SiteKind::kKernel, "gemm.cc:1"},
                  {1, "load", SiteKind::kRegion, "gemm.cc:7"},
                  {2, "mma", SiteKind::kRegion, "gemm.cc:9"}};
  return layout;
}

// Block `block`'s warpgroup `unit`: a kernel slice around `loops` load/mma pairs, with
// timestamps that differ from unit to unit (so every packet's delta is its own).
UnitTimeline Unit(uint32_t block, uint32_t unit, uint32_t loops) {
  UnitTimeline u;
  u.record_index = block * 2 + unit;
  u.block_linear = block;
  u.block_index = {block, 0, 0};
  u.unit_index = unit;
  u.sm_id = block % 7;
  const int64_t start = kOrigin + 1000 * block + 37 * unit;
  int64_t t = start + 5;
  u.slices.push_back({0, 0, start, 0});
  for (uint32_t i = 0; i < loops; ++i) {
    u.slices.push_back({1, 1, t, t + 3 + (i + block) % 5});
    t += 10;
    u.slices.push_back({2, 1, t, t + 4 + (i * unit) % 3});
    t += 10;
  }
  u.slices[0].end_ns = t + 1;
  u.start_ns = start;
  u.end_ns = t + 2;
  u.events = static_cast<uint32_t>(2 * u.slices.size());
  return u;
}

struct Written {
  absl::Status status;
  std::string bytes;
};

// The units through a sink with `threads`, Begin to End; the first error stops it.
Written Write(const TraceLayout& layout, const std::vector<UnitTimeline>& units, int threads) {
  Written out;
  llvm::raw_string_ostream os(out.bytes);
  PerfettoWriterOptions options;
  options.threads = threads;
  PerfettoTraceSink sink(os, options);
  TraceBegin begin;
  begin.layout = &layout;
  begin.origin_ns = kOrigin;
  begin.units = units.size();
  out.status = sink.Begin(begin);
  for (const UnitTimeline& unit : units) {
    if (!out.status.ok()) break;
    UnitView view;
    view.timeline = &unit;
    out.status = sink.AddUnit(view);
  }
  if (out.status.ok()) out.status = sink.End(TraceEnd());
  os.flush();
  return out;
}

TEST(PerfettoSinkTest, TheWritersOwnThreadWritesTheSameBytes) {
  // 160 units of ~600-1100 events: about five of the writer's batches (32 Ki events each,
  // cut at block ends), formatted on whichever thread is free.
  const TraceLayout layout = Layout(80);
  std::vector<UnitTimeline> units;
  for (uint32_t b = 0; b < 80; ++b) {
    for (uint32_t u = 0; u < 2; ++u) units.push_back(Unit(b, u, 150 + (b * 7) % 120));
  }
  const Written one = Write(layout, units, 1);
  ASSERT_THAT(one.status, IsOk());
  ASSERT_GT(one.bytes.size(), 1000u);
  for (int threads : {2, 3, 5}) {
    const Written many = Write(layout, units, threads);
    ASSERT_THAT(many.status, IsOk()) << threads << " threads";
    EXPECT_EQ(many.bytes, one.bytes) << threads << " threads";
  }
}

TEST(PerfettoSinkTest, AWriterErrorOnItsThreadIsReportedWithTheSameMessage) {
  const TraceLayout layout = Layout(30);
  std::vector<UnitTimeline> units;
  for (uint32_t b = 0; b < 30; ++b) {
    for (uint32_t u = 0; u < 2; ++u) units.push_back(Unit(b, u, 100));
  }
  units[37].slices[5].site = 9;   // the first bad unit: its error is the one reported
  units[51].slices[2].end_ns = 0;  // a later one, never reached
  const Written one = Write(layout, units, 1);
  ASSERT_THAT(one.status, StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr("outside the site table")));
  for (int threads : {2, 4}) {
    const Written many = Write(layout, units, threads);
    EXPECT_EQ(many.status, one.status) << threads << " threads";
  }
}

TEST(PerfettoSinkTest, ASinkDroppedBeforeEndStopsItsThread) {
  const TraceLayout layout = Layout(30);
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  {
    PerfettoWriterOptions options;
    options.threads = 2;
    PerfettoTraceSink sink(os, options);
    TraceBegin begin;
    begin.layout = &layout;
    begin.origin_ns = kOrigin;
    ASSERT_THAT(sink.Begin(begin), IsOk());
    for (uint32_t b = 0; b < 30; ++b) {
      const UnitTimeline unit = Unit(b, 0, 300);
      UnitView view;
      view.timeline = &unit;
      ASSERT_THAT(sink.AddUnit(view), IsOk());
    }
  }  // no End: the dump stopped (another sink failed); the destructor must not hang
  SUCCEED();
}

}  // namespace
}  // namespace warptrace
