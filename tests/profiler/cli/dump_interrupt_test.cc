// Ctrl-C and `warptrace dump` (issue 55). SIGINT mid-dump stops it within milliseconds: it
// says so on stderr, dies of the signal, and leaves the output as it was (no temporary file).
// With SIGINT ignored (a background job of a non-interactive shell) the dump goes on to the
// end; it used to lose its temporary file to LLVM's signal handler and fail with "No such
// file or directory".
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "base/subprocess.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/imports/sidecar.h"
#include "tests/profiler/buffer_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;

std::string Warptrace() {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/profiler/cli/warptrace");
}

// Runs `script` with sh; its output.
std::string Sh(const std::string& script) {
  absl::StatusOr<ProgramResult> r =
      RunProgram({"/bin/sh", "-c", script}, {.timeout = absl::Seconds(600)});
  EXPECT_THAT(r, IsOk());
  return r.ok() ? r->output : "";
}

// The value after "name: " in `out`, as a double (-1 when absent).
double Field(const std::string& out, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (!absl::ConsumePrefix(&line, name + ": ")) continue;
    double v = -1;
    if (absl::SimpleAtod(line, &v)) return v;
  }
  return -1;
}

class DumpInterruptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = TestTempPath("trace");
    absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(4'000'000);
    ASSERT_THAT(buffer, IsOk());
    ASSERT_THAT(SaveTrace(prefix_, buffer->layout, buffer->words), IsOk());
    ASSERT_EQ(system(absl::StrCat("mkdir -p ", TestTempPath("out")).c_str()), 0);
    output_ = TestTempPath("out") + "/trace.json";
    dump_ = absl::StrCat(Warptrace(), " dump --input=", prefix_, " --output=", output_);
  }
  std::string prefix_, output_, dump_;
};

TEST_F(DumpInterruptTest, SigintMidDumpStopsItPromptlyAndLeavesTheOutputAsItWas) {
  // A first dump, whole: its time, and the output the interrupted one must leave alone.
  const std::string script = absl::StrCat(
      "t0=$(date +%s.%N); ", dump_, " 2>/dev/null; t1=$(date +%s.%N)\n",
      "echo full: $(echo \"$t1 - $t0\" | bc)\n",
      "cksum < ", output_, " > before.sum\n",
      // env: a background job of a non-interactive shell would start with SIGINT ignored.
      "env --default-signal=INT ", dump_, " 2>err.txt & pid=$!\n",
      // SIGINT once it has written a megabyte of the new trace: mid-dump.
      "for i in $(seq 1 4000); do\n",
      "  w=$(sed -n 's/^wchar: //p' /proc/$pid/io 2>/dev/null); [ \"${w:-0}\" -gt 1048576 ] && break\n",
      "  sleep 0.005\n",
      "done\n",
      "t2=$(date +%s.%N); kill -INT $pid; wait $pid; status=$?; t3=$(date +%s.%N)\n",
      "echo status: $status\n",
      "echo latency: $(echo \"$t3 - $t2\" | bc)\n",
      "cat err.txt\n",
      "cksum < ", output_, " | cmp -s - before.sum && echo unchanged: 1\n",
      "echo files: $(ls ", TestTempPath("out"), ")\n");
  const std::string out = Sh(absl::StrCat("cd ", TestTempPath(""), " && ", script));
  std::cout << out;
  const double full = Field(out, "full"), latency = Field(out, "latency");
  std::cout << "Ctrl-C returned " << latency * 1000 << " ms after SIGINT; the whole dump takes "
            << full * 1000 << " ms\n";
  EXPECT_EQ(Field(out, "status"), 130) << "not dead of SIGINT";
  EXPECT_THAT(out, HasSubstr("warptrace: error: interrupted by SIGINT: the dump stopped and "
                             "wrote nothing"));
  EXPECT_EQ(Field(out, "unchanged"), 1) << "the output changed";
  EXPECT_THAT(out, HasSubstr("files: trace.json\n")) << "a temporary file was left";
  EXPECT_GT(latency, 0);
  EXPECT_LT(latency, full) << "Ctrl-C returned no sooner than the dump would have finished";
}

TEST_F(DumpInterruptTest, WithSigintIgnoredTheDumpGoesOnToTheEnd) {
  const std::string script = absl::StrCat(
      "(trap '' INT; exec ", dump_, " 2>", TestTempPath("err.txt"), ") & pid=$!\n",
      "for i in $(seq 1 4000); do\n",
      "  w=$(sed -n 's/^wchar: //p' /proc/$pid/io 2>/dev/null); [ \"${w:-0}\" -gt 1048576 ] && break\n",
      "  sleep 0.005\n",
      "done\n",
      "kill -INT $pid; wait $pid; echo status: $?\n",
      "cat ", TestTempPath("err.txt"), "\n",
      "echo files: $(ls ", TestTempPath("out"), ")\n");
  const std::string out = Sh(script);
  std::cout << out;
  EXPECT_EQ(Field(out, "status"), 0);
  EXPECT_THAT(out, HasSubstr("4000000 events -> "));
  EXPECT_THAT(out, HasSubstr("files: trace.json\n"));
}

// The input truncated by another program while the dump reads it (it is memory-mapped):
// one "warptrace: error:" line and exit status 1; it used to die of SIGBUS with no message.
TEST_F(DumpInterruptTest, AnInputTruncatedMidDumpIsAnErrorNotACrash) {
  const std::string script = absl::StrCat(
      dump_, " --threads=1 2>", TestTempPath("err.txt"), " & pid=$!\n",
      "for i in $(seq 1 4000); do\n",
      "  w=$(sed -n 's/^wchar: //p' /proc/$pid/io 2>/dev/null); [ \"${w:-0}\" -gt 1048576 ] && break\n",
      "  sleep 0.005\n",
      "done\n",
      "truncate -s 4096 ", prefix_, ".bin; wait $pid; echo status: $?\n",
      "cat ", TestTempPath("err.txt"), "\n",
      "echo files: $(ls ", TestTempPath("out"), ")\n");
  const std::string out = Sh(script);
  std::cout << out;
  EXPECT_EQ(Field(out, "status"), 1);
  EXPECT_THAT(out, HasSubstr("warptrace: error: an input file shrank while it was being read"));
  EXPECT_THAT(out, HasSubstr("\nfiles:\n")) << "an output or a temporary file was left";
}

}  // namespace
}  // namespace warptrace
