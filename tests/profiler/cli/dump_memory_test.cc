// The dump's memory (issue 34): `warptrace dump` reads its input in place from the mapped file
// and streams its output, so its peak RSS grows with the input by the mapped input alone, not
// by a copy of it (it grew by twice the input when the words were copied out of the mapping)
// nor by the output. Measured as a user runs it: the CLI on saved traces of two sizes, the
// children's peak RSS from getrusage. A slope, not a threshold on one run, so the binary's
// own size and the allocator's slack cancel out.
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/subprocess.h"
#include "base/testing/temp_path.h"
#include "gtest/gtest.h"
#include "profiler/imports/sidecar.h"
#include "tests/profiler/buffer_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::IsOk;

std::string Warptrace() {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/profiler/cli/warptrace");
}

// Saves a synthesized trace of about `events` events; returns its buffer's size in bytes.
uint64_t Save(const std::string& prefix, uint64_t events) {
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(events);
  EXPECT_THAT(buffer, IsOk());
  if (!buffer.ok()) return 0;
  EXPECT_THAT(SaveTrace(prefix, buffer->layout, buffer->words), IsOk());
  return buffer->words.size() * 4;
}

// The largest peak RSS (bytes) of any child waited for so far.
int64_t ChildrenPeakRss() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return int64_t{usage.ru_maxrss} * 1024;
}

// Dumps `prefix` to `output`; returns the children's peak RSS after it.
int64_t Dump(const std::string& prefix, const std::string& output) {
  absl::StatusOr<ProgramResult> r =
      RunProgram({Warptrace(), "dump", "--input=" + prefix, "--output=" + output});
  EXPECT_THAT(r, IsOk());
  if (r.ok()) {
    EXPECT_EQ(r->exit_code, 0) << r->output;
  }
  return ChildrenPeakRss();
}

TEST(DumpMemoryTest, PeakMemoryGrowsByTheMappedInputAloneForPerfettoAndJson) {
  const std::string small = TestTempPath("small"), big = TestTempPath("big");
  const uint64_t small_bytes = Save(small, 1'000'000);
  const uint64_t big_bytes = Save(big, 6'000'000);
  ASSERT_GT(big_bytes, small_bytes + 30'000'000);
  const double grown_input = static_cast<double>(big_bytes - small_bytes);
  // The children's peak is a running maximum: each small run comes before its big one, and
  // the big runs' peaks are compared with the small runs' (smaller) ones.
  const int64_t small_perfetto = Dump(small, TestTempPath("small.pftrace"));
  const int64_t small_json = Dump(small, TestTempPath("small.trace.json"));
  const int64_t small_peak = std::max(small_perfetto, small_json);
  const int64_t big_perfetto = Dump(big, TestTempPath("big.pftrace"));
  const double perfetto_growth = static_cast<double>(big_perfetto - small_peak);
  EXPECT_LT(perfetto_growth, 1.4 * grown_input)
      << "Perfetto: the peak grew " << perfetto_growth / 1e6 << " MB for " << grown_input / 1e6
      << " MB more input (small run's peak " << small_peak / 1e6 << " MB)";
  const int64_t big_json = Dump(big, TestTempPath("big.trace.json"));
  const double json_growth = static_cast<double>(big_json - small_peak);
  EXPECT_LT(json_growth, 1.4 * grown_input)
      << "JSON: the peak grew " << json_growth / 1e6 << " MB for " << grown_input / 1e6
      << " MB more input";
}

TEST(DumpMemoryTest, ASavedBufferIsReadInPlaceFromTheMappedFile) {
  const std::string prefix = TestTempPath("in_place");
  Save(prefix, 100'000);
  absl::StatusOr<LoadedTrace> loaded = LoadTrace(prefix);
  ASSERT_THAT(loaded, IsOk());
  EXPECT_TRUE(loaded->words.mapped());
  absl::StatusOr<testing::SyntheticBuffer> again = testing::MakeSyntheticBuffer(100'000);
  ASSERT_THAT(again, IsOk());
  EXPECT_TRUE(loaded->words == again->words) << "the mapped words are the saved ones";
}

}  // namespace
}  // namespace warptrace
