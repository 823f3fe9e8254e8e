// Out of memory in `warptrace dump` (issue 55): under an address-space limit (ulimit -v, as a
// user or a batch system sets it) the dump either succeeds or fails with one
// "warptrace: error: ..." line and exit status 1 — never a signal (it used to abort with
// std::terminate, 134, or segfault in a writer destroyed after its stream), and never a
// temporary file left beside the output. The limits swept cover the input's mapping failing,
// a thread failing to start, an allocation failing mid-dump, and success.
#include <dirent.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
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

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  return names;
}

TEST(DumpOutOfMemoryTest, UnderAMemoryLimitTheDumpSucceedsOrSaysOutOfMemoryNeverASignal) {
  const std::string prefix = TestTempPath("trace");
  absl::StatusOr<testing::SyntheticBuffer> buffer = testing::MakeSyntheticBuffer(500'000);
  ASSERT_THAT(buffer, IsOk());
  ASSERT_THAT(SaveTrace(prefix, buffer->layout, buffer->words), IsOk());
  const std::string out_dir = TestTempPath("out");
  ASSERT_EQ(system(absl::StrCat("mkdir -p ", out_dir).c_str()), 0);

  int succeeded = 0, out_of_memory = 0;
  for (int limit_mb = 16; limit_mb <= 72; limit_mb += 4) {
    SCOPED_TRACE(absl::StrCat("ulimit -v ", limit_mb * 1024));
    const std::string output = absl::StrCat(out_dir, "/trace.json");
    // exec: a signal that kills warptrace kills the shell's process, and RunProgram says so.
    const std::string command =
        absl::StrCat("ulimit -v ", limit_mb * 1024, " && exec ", Warptrace(),
                     " dump --input=", prefix, " --output=", output, " --summary --analysis=",
                     out_dir, "/analysis.json --threads=2");
    absl::StatusOr<ProgramResult> r =
        RunProgram({"/bin/sh", "-c", command}, {.timeout = absl::Seconds(120)});
    ASSERT_THAT(r, IsOk()) << "died from a signal or hung";
    if (r->exit_code == 0) {
      ++succeeded;
      continue;
    }
    EXPECT_EQ(r->exit_code, 1) << r->output;
    EXPECT_TRUE(absl::StrContains(r->output, "warptrace: error: ")) << r->output;
    if (absl::StrContains(r->output, "warptrace: error: out of memory")) ++out_of_memory;
    for (const std::string& name : Entries(out_dir)) {
      EXPECT_FALSE(absl::StrContains(name, ".tmp")) << "a temporary file was left: " << name;
    }
  }
  std::cout << "succeeded " << succeeded << ", out of memory " << out_of_memory << "\n";
  EXPECT_GT(out_of_memory, 0) << "no limit made the dump run out of memory: lower the sweep";
  EXPECT_GT(succeeded, 0) << "no limit let the dump succeed: raise the sweep";
}

}  // namespace
}  // namespace warptrace
