// LoadForDump's in_place and DumpLoadedToFiles (profiler/frontend/dump_files.h): a Mosaic GPU
// buffer decoded where it lies dumps to exactly the files, report, summary and overflow
// messages that its converted copy gives, on one thread and on several; a warptrace buffer
// loads and dumps as before.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/imports/mosaic_import.h"
#include "tests/profiler/imports/mosaic_buffer_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// A Mosaic buffer on disk: grid (7,3,2) of 2 warpgroups, 40 events each, one trace
// overflowing (its words running into the next trace's slice), one never recorded.
std::string WriteMosaicFiles(const std::string& name) {
  constexpr uint32_t kEntries = 3 + 2 * 40;
  std::vector<testing::MosaicTrace> traces(7 * 3 * 2 * 2);
  for (size_t i = 0; i < traces.size(); ++i) {
    if (i == 5) continue;
    testing::MosaicTrace& t = traces[i];
    t.start_lo = static_cast<uint32_t>(4'000'000 + (i * 7919) % 3000);
    t.smid = static_cast<uint32_t>(i % 132);
    uint32_t clock = 50 + static_cast<uint32_t>(i);
    const uint32_t pairs = i == 17 ? 25 : 20;  // 50 events in 40 slots: overflowed
    for (uint32_t k = 0; k < pairs; ++k) {
      t.events.push_back({k % 3, clock += 9 + k % 5});
      t.events.push_back({(k % 3) | (1u << 31), clock += 30 + (i + k) % 17});
    }
  }
  const std::vector<uint32_t> words = testing::MosaicWords(traces, kEntries);
  const std::string prefix = TestTempPath(name);
  std::ofstream bin(prefix + ".bin", std::ios::binary);
  for (uint32_t w : words) {
    const char le[4] = {static_cast<char>(w), static_cast<char>(w >> 8),
                        static_cast<char>(w >> 16), static_cast<char>(w >> 24)};
    bin.write(le, 4);
  }
  std::ofstream(prefix + ".json")
      << R"({"format": "mosaic-gpu", "grid": [7, 3, 2], "block": [256], )"
      << R"("entries_per_warpgroup": )" << kEntries
      << R"(, "names": ["load", "mma", "store"], "kernel_name": "attention"})";
  return prefix;
}

struct Dumped {
  std::vector<std::string> outputs;  // Perfetto, Chrome JSON, Mosaic-style JSON
  std::string report;
  std::string summary;
  DumpOutcome outcome;
};

Dumped DumpLoaded(const LoadedDump& loaded, int threads, bool allow_truncated) {
  Dumped d;
  DumpRequest request;
  request.threads = threads;
  request.summary = true;
  request.verify.allow_truncated = allow_truncated;
  d.outputs.resize(3);
  std::vector<std::unique_ptr<llvm::raw_string_ostream>> streams;
  for (int i = 0; i < 3; ++i) {
    TraceOutput& out = request.traces.emplace_back();
    out.format = i == 0 ? TraceFormat::kPerfetto : TraceFormat::kChromeJson;
    if (i == 2) out.chrome.events = ChromeEventStyle::kMosaic;
    streams.push_back(std::make_unique<llvm::raw_string_ostream>(d.outputs[i]));
    out.stream = streams.back().get();
  }
  const std::string report = TestTempPath(absl::StrCat("report_", threads, ".json"));
  request.report_path = report;
  d.outcome = DumpLoadedToFiles(loaded, request);
  for (auto& s : streams) s->flush();
  absl::StatusOr<std::string> text =
      ReadFile(report, {.role = "report", .register_as_input = false});
  if (text.ok()) d.report = *text;
  llvm::raw_string_ostream summary(d.summary);
  PrintSummaryAndDiagnosis(d.outcome, summary);
  summary.flush();
  return d;
}

TEST(DumpLoadedTest, AMosaicBufferInPlaceDumpsAsItsConvertedCopy) {
  const std::string prefix = WriteMosaicFiles("in_place");
  absl::StatusOr<LoadedDump> converted = LoadForDump(prefix, 0, 1, /*in_place=*/false);
  ASSERT_THAT(converted, IsOk());
  ASSERT_EQ(converted->in_place, nullptr);
  ASSERT_EQ(converted->overflows.size(), 1u);
  for (int threads : {1, 2, 3}) {
    absl::StatusOr<LoadedDump> in_place = LoadForDump(prefix, 0, threads, /*in_place=*/true);
    ASSERT_THAT(in_place, IsOk());
    ASSERT_NE(in_place->in_place, nullptr);
    EXPECT_TRUE(in_place->mosaic);
    EXPECT_TRUE(in_place->trace.words.empty()) << "in place: no converted copy";
    EXPECT_EQ(in_place->trace.layout.kernel_name, "attention");
    ASSERT_EQ(in_place->overflows.size(), 1u);
    EXPECT_EQ(in_place->overflows[0].message, converted->overflows[0].message);
    for (bool allow_truncated : {false, true}) {
      SCOPED_TRACE(absl::StrCat("threads ", threads, ", allow_truncated ", allow_truncated));
      const Dumped a = DumpLoaded(*converted, threads, allow_truncated);
      const Dumped b = DumpLoaded(*in_place, threads, allow_truncated);
      // The overflowed trace fails strict verification, and passes with allow_truncated.
      EXPECT_EQ(a.outcome.status.ok(), allow_truncated) << a.outcome.status;
      EXPECT_EQ(b.outcome.status, a.outcome.status);
      EXPECT_EQ(b.report, a.report);
      ASSERT_FALSE(a.report.empty());
      EXPECT_EQ(b.summary, a.summary);
      for (size_t i = 0; i < a.outputs.size(); ++i) {
        EXPECT_TRUE(b.outputs[i] == a.outputs[i]) << "output " << i << " differs";
      }
      if (allow_truncated) {
        EXPECT_GT(a.outputs[0].size(), 1000u);
        EXPECT_THAT(a.summary, HasSubstr("mma"));
      }
    }
  }
}

TEST(DumpLoadedTest, InPlaceFailsAsTheConversionDoes) {
  const std::string prefix = WriteMosaicFiles("bad");
  // Cut one word off: the size no longer fits the sidecar.
  absl::StatusOr<std::string> bin =
      ReadFile(prefix + ".bin", {.role = "buffer", .register_as_input = false});
  ASSERT_THAT(bin, IsOk());
  std::ofstream(prefix + ".bin", std::ios::binary | std::ios::trunc)
      << bin->substr(0, bin->size() - 4);
  const absl::Status converted = LoadForDump(prefix, 0, 1, false).status();
  EXPECT_THAT(converted, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("needs")));
  EXPECT_EQ(LoadForDump(prefix, 0, 1, true).status(), converted);
}

}  // namespace
}  // namespace warptrace
