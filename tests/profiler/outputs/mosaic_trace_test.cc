// Tests ChromeEventStyle::kMosaic (profiler/outputs/mosaic_trace.h) through the front end on
// hand-built Mosaic buffers whose expected events are worked out by hand from Mosaic's rules
// (jax/experimental/mosaic/gpu/profiler.py, ProfilerSpec.dump); tests/python:
// mosaic_parity_test compares with the real JAX.
#include "profiler/outputs/mosaic_trace.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "format/layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "nlohmann/json.hpp"
#include "profiler/frontend/dump_files.h"
#include "profiler/imports/mosaic_import.h"
#include "profiler/outputs/chrome_trace_options.h"
#include "tests/profiler/imports/mosaic_buffer_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::MosaicWords;
using Trace = ::warptrace::testing::MosaicTrace;

constexpr uint32_t kExit = 1u << 31;

struct Event {
  std::string name, ph;
  double ts;
  int64_t pid, tid;
  friend bool operator==(const Event&, const Event&) = default;
  friend void PrintTo(const Event& e, std::ostream* os) {
    *os << e.name << " " << e.ph << " ts=" << e.ts << " pid=" << e.pid << " tid=" << e.tid;
  }
};

struct Dumped {
  absl::Status status;
  std::string text;
  std::vector<Event> events;
};

Dumped Dump(const Dim3& grid, uint32_t block_threads, const std::vector<Trace>& traces,
            uint32_t e, const MosaicTimestamps& timestamps = {}) {
  MosaicSidecar sidecar;
  sidecar.grid = grid;
  sidecar.block = Dim3{block_threads, 1, 1};
  sidecar.entries_per_trace = e;
  sidecar.names = {"outer", "inner"};
  sidecar.kernel_name = "k";
  Dumped d;
  absl::StatusOr<MosaicImport> imported = ConvertMosaicBuffer(sidecar, MosaicWords(traces, e));
  if (!imported.ok()) {
    d.status = imported.status();
    return d;
  }
  llvm::raw_string_ostream os(d.text);
  DumpRequest request;
  TraceOutput& out = request.traces.emplace_back();
  out.stream = &os;
  out.chrome.events = ChromeEventStyle::kMosaic;
  out.chrome.mosaic = timestamps;
  d.status = DumpToFiles(imported->trace.layout, imported->trace.words, request).status;
  os.flush();
  if (!d.status.ok()) return d;
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(d.text);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_THAT(keys, ElementsAre("displayTimeUnit", "traceEvents"));
  EXPECT_EQ(j["displayTimeUnit"], "ns");
  for (const auto& ev : j["traceEvents"]) {
    std::vector<std::string> event_keys;
    for (const auto& [key, value] : ev.items()) event_keys.push_back(key);
    EXPECT_THAT(event_keys, ElementsAre("name", "ph", "ts", "pid", "tid"));
    EXPECT_TRUE(ev["ts"].is_number_float()) << ev.dump();  // Python writes a float
    d.events.push_back({ev["name"], ev["ph"], ev["ts"], ev["pid"], ev["tid"]});
  }
  return d;
}

// Block 0 trace 0: steps of 10, 40, 10 cycles; block 1 trace 1: one step of 4, the smallest
// of the buffer, so Mosaic's overhead estimate is 4 - 1 = 3 cycles for every trace.
std::vector<Trace> TwoTraces() {
  Trace a{1000, 5, {{0, 100}, {1, 110}, {1 | kExit, 150}, {0 | kExit, 160}}};
  Trace b{500, 7, {{0, 1000}, {0 | kExit, 1004}}};
  return {a, Trace{}, Trace{}, b};
}

TEST(MosaicTraceTest, WritesMosaicsEventsWithCyclesAsNsAndItsBufferWideOverhead) {
  const Dumped d = Dump(Dim3{2, 1, 1}, 256, TwoTraces(), 3 + 2 * 4);
  ASSERT_THAT(d.status, IsOk());
  // Sorted by first ts: b (start 500 ns) first. Empty traces are left out.
  // ts = (start + clock_k - clock_0 - 3k) / 1000.
  EXPECT_THAT(d.events, ElementsAre(Event{"outer", "B", 0.5, 8, 4},
                                     Event{"outer", "E", 0.501, 8, 4},
                                     Event{"outer", "B", 1.0, 6, 1},
                                     Event{"inner", "B", 1.007, 6, 1},
                                     Event{"inner", "E", 1.044, 6, 1},
                                     Event{"outer", "E", 1.051, 6, 1}));
  EXPECT_THAT(d.text, HasSubstr(R"("ts":1.0,)"));  // a float, as Python writes it
}

TEST(MosaicTraceTest, CompensationOffKeepsTheRawCycleDifferences) {
  const Dumped d = Dump(Dim3{2, 1, 1}, 256, TwoTraces(), 3 + 2 * 4,
                        {.compensate_overhead = false});
  ASSERT_THAT(d.status, IsOk());
  std::vector<double> ts;
  for (const Event& e : d.events) ts.push_back(e.ts);
  EXPECT_THAT(ts, ElementsAre(0.5, 0.504, 1.0, 1.01, 1.05, 1.06));
}

TEST(MosaicTraceTest, AClockRateConvertsTheCompensatedCycles) {
  // 2 GHz: 7, 44, 51 cycles -> 3.5, 22, 25.5 ns, rounded to 4, 22, 26.
  const Dumped d = Dump(Dim3{2, 1, 1}, 256, TwoTraces(), 3 + 2 * 4,
                        {.sm_clock_khz = 2'000'000});
  ASSERT_THAT(d.status, IsOk());
  std::vector<double> ts;
  for (const Event& e : d.events) ts.push_back(e.ts);
  EXPECT_THAT(ts, ElementsAre(0.5, 0.501, 1.0, 1.004, 1.022, 1.026));
}

TEST(MosaicTraceTest, TidNumbersBlocksXMajorAsMosaicDoes) {
  // grid (2,2,1), 2 warpgroups per block: Mosaic's block index of (bx, by) is bx * 2 + by,
  // so block (1,0,0)'s trace 1 (buffer position 2 * 2 + 1) is tid 1 + 1 + 2 * 2 = 6.
  std::vector<Trace> traces(8);
  traces[5] = Trace{100, 3, {{0, 50}, {0 | kExit, 60}}};
  const Dumped d = Dump(Dim3{2, 2, 1}, 256, traces, 3 + 2 * 2);
  ASSERT_THAT(d.status, IsOk());
  ASSERT_EQ(d.events.size(), 2u);
  EXPECT_EQ(d.events[0].tid, 6);
  EXPECT_EQ(d.events[0].pid, 4);
}

TEST(MosaicTraceTest, GlobaltimerAndClockWrapInUint32AsMosaics) {
  // The clock wraps between the events (a step of 25 cycles: overhead 11, time 14), and the
  // start + time passes 2^32 ns: (2^32 - 10 + 14) mod 2^32 = 4 ns.
  std::vector<Trace> traces(2);
  traces[0] = Trace{0xFFFFFFF6u, 0, {{0, 0xFFFFFFFBu}, {0 | kExit, 20}}};
  const Dumped d = Dump(Dim3{1, 1, 1}, 256, traces, 3 + 2 * 2);
  ASSERT_THAT(d.status, IsOk());
  EXPECT_THAT(d.events, ElementsAre(Event{"outer", "B", 4294967.286, 1, 1},
                                     Event{"outer", "E", 0.004, 1, 1}));
}

TEST(MosaicTraceTest, AZeroStepMakesTheOverheadWrapAsMosaicsNumpyDoes) {
  // Smallest step 0: overhead 0 - 1 = 2^32 - 1 in uint32, so event k moves k cycles later.
  std::vector<Trace> traces(2);
  traces[0] = Trace{0, 0, {{0, 100}, {1, 100}, {1 | kExit, 110}, {0 | kExit, 130}}};
  const Dumped d = Dump(Dim3{1, 1, 1}, 256, traces, 3 + 2 * 4);
  ASSERT_THAT(d.status, IsOk());
  std::vector<double> ts;
  for (const Event& e : d.events) ts.push_back(e.ts);
  EXPECT_THAT(ts, ElementsAre(0.0, 0.001, 0.012, 0.033));
}

TEST(MosaicTraceTest, AnOverflowFailsTheDumpAndWritesNothing) {
  std::vector<Trace> traces = TwoTraces();
  traces[3].used = 2 * 6;  // recorded 6 events; E holds 4
  const Dumped d = Dump(Dim3{2, 1, 1}, 256, traces, 3 + 2 * 4);
  EXPECT_FALSE(d.status.ok());
  EXPECT_EQ(d.text, "");
}

TEST(MosaicTraceTest, StyleIsSpelledMosaic) {
  absl::StatusOr<ChromeEventStyle> style = ParseChromeEventStyle("mosaic");
  ASSERT_THAT(style.status(), IsOk());
  EXPECT_EQ(*style, ChromeEventStyle::kMosaic);
  EXPECT_STREQ(ChromeEventStyleName(ChromeEventStyle::kMosaic), "mosaic");
}

}  // namespace
}  // namespace warptrace
