// A `warptrace dump` killed with SIGKILL mid-write, then run again (issue 55): no temporary
// file is left beside the output. Where the file system has O_TMPFILE the temporary never had
// a name; where it has not (forced here with WARPTRACE_NO_O_TMPFILE=1) the killed dump's
// "NAME.tmp-PID-XXXXXX" is removed by the next dump of the same output. Killed dumps used to
// leave "NAME.tmp-XXXXXX" files of 35 MB to 4 GB that nothing removed.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
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

using ::warptrace::testing::IsOk;

std::string Warptrace() {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/profiler/cli/warptrace");
}

// Starts a dump of `prefix` to `output` in the background, SIGKILLs it once it has written a
// megabyte (so mid-write), then lists the output's directory ("killed: ..."), runs the dump
// again to the end and lists it again ("after: ..."). `env`: extra NAME=value for both dumps.
std::string KillThenDumpAgain(const std::string& prefix, const std::string& output,
                              const std::string& env) {
  const std::string dir = output.substr(0, output.rfind('/'));
  const std::string dump = absl::StrCat(env, " ", Warptrace(), " dump --input=", prefix,
                                        " --output=", output, " --threads=1");
  const std::string script = absl::StrCat(
      dump, " 2>/dev/null & pid=$!\n",
      "for i in $(seq 1 2000); do\n",
      "  w=$(sed -n 's/^wchar: //p' /proc/$pid/io 2>/dev/null); [ \"${w:-0}\" -gt 1048576 ] && break\n",
      "  sleep 0.005\n",
      "done\n",
      "kill -9 $pid; wait $pid; echo \"status: $?\"\n",
      "echo killed: $(ls ", dir, ")\n",
      dump, " 2>/dev/null; echo \"second: $?\"\n",
      "echo after: $(ls ", dir, ")\n");
  absl::StatusOr<ProgramResult> r =
      RunProgram({"/bin/sh", "-c", script}, {.timeout = absl::Seconds(300)});
  EXPECT_THAT(r, IsOk());
  return r.ok() ? r->output : "";
}

class DumpKilledTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(system(absl::StrCat("mkdir -p ", TestTempPath("in")).c_str()), 0);
    prefix_ = TestTempPath("in") + "/trace";
    absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(2'000'000);
    ASSERT_THAT(buffer, IsOk());
    ASSERT_THAT(SaveTrace(prefix_, buffer->layout, buffer->words), IsOk());
    out_dir_ = TestTempPath("out");
    ASSERT_EQ(system(absl::StrCat("mkdir -p ", out_dir_).c_str()), 0);
  }
  std::string prefix_, out_dir_;
};

TEST_F(DumpKilledTest, AKilledDumpLeavesNoTemporaryFile) {
  const std::string out = KillThenDumpAgain(prefix_, out_dir_ + "/trace.json", "");
  std::cout << out;
  EXPECT_THAT(out, ::testing::HasSubstr("status: 137"));
  EXPECT_THAT(out, ::testing::HasSubstr("\nkilled:\n"));  // nothing, not even a temporary
  EXPECT_THAT(out, ::testing::HasSubstr("second: 0"));
  EXPECT_THAT(out, ::testing::HasSubstr("after: trace.json\n"));
}

TEST_F(DumpKilledTest, WithoutOTmpfileTheNextDumpRemovesTheKilledDumpsTemporary) {
  const std::string out =
      KillThenDumpAgain(prefix_, out_dir_ + "/trace.json", "WARPTRACE_NO_O_TMPFILE=1");
  std::cout << out;
  EXPECT_THAT(out, ::testing::HasSubstr("status: 137"));
  EXPECT_THAT(out, ::testing::ContainsRegex("killed: trace\\.json\\.tmp-[0-9]+-[a-z0-9]{6}\n"));
  EXPECT_THAT(out, ::testing::HasSubstr("second: 0"));
  EXPECT_THAT(out, ::testing::HasSubstr("after: trace.json\n"));
}

}  // namespace
}  // namespace warptrace
