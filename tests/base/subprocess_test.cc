#include "base/subprocess.h"

#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

std::string Sh() {
  absl::StatusOr<std::string> sh = FindProgram("sh");
  EXPECT_THAT(sh.status(), IsOk());
  return sh.value_or("/bin/sh");
}

TEST(SubprocessTest, CapturesOutputAndExitCode) {
  absl::StatusOr<ProgramResult> r = RunProgram({Sh(), "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_THAT(r.status(), IsOk());
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->output, "out\nerr\n");
  EXPECT_EQ(r->error_output, "");
}

TEST(SubprocessTest, KeepsStandardErrorApartWhenAsked) {
  absl::StatusOr<ProgramResult> r =
      RunProgram({Sh(), "-c", "echo out; echo err >&2"}, {.merge_stderr = false});
  ASSERT_THAT(r.status(), IsOk());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->output, "out\n");
  EXPECT_EQ(r->error_output, "err\n");
}

TEST(SubprocessTest, PassesTheGivenEnvironmentAndNothingElse) {
  absl::StatusOr<ProgramResult> r = RunProgram(
      {Sh(), "-c", "echo \"$WARPTRACE_X:$HOME\""}, {.env = std::vector<std::string>{"WARPTRACE_X=1"}});
  ASSERT_THAT(r.status(), IsOk());
  EXPECT_EQ(r->output, "1:\n");
}

TEST(SubprocessTest, ReadsLargeOutputCompletely) {
  absl::StatusOr<ProgramResult> r =
      RunProgram({Sh(), "-c", "i=0; while [ $i -lt 20000 ]; do echo 0123456789; i=$((i+1)); done"});
  ASSERT_THAT(r.status(), IsOk());
  EXPECT_EQ(r->output.size(), 20000u * 11);
}

TEST(SubprocessTest, KillsAProgramThatRunsPastItsTimeout) {
  EXPECT_THAT(RunProgram({Sh(), "-c", "echo started; sleep 30"}, {.timeout = absl::Seconds(1)}),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       AllOf(HasSubstr("sleep 30"), HasSubstr("started"))));
}

TEST(SubprocessTest, ReportsAProgramKilledByASignal) {
  EXPECT_THAT(RunProgram({Sh(), "-c", "echo dying; kill -SEGV $$"}),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("dying")));
}

TEST(SubprocessTest, RejectsAMissingProgramAndAnEmptyCommand) {
  EXPECT_THAT(RunProgram({"/nonexistent/warptrace-tool", "x"}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/warptrace-tool")));
  EXPECT_THAT(RunProgram({}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SubprocessTest, FindsProgramsOnPathByAbsolutePathAndInExtraDirectories) {
  EXPECT_THAT(FindProgram("sh"), IsOkAndHolds(StartsWith("/")));
  EXPECT_THAT(FindProgram("/bin/sh"), IsOkAndHolds("/bin/sh"));
  const std::vector<std::string> dirs = {"/nonexistent", "/bin"};
  EXPECT_THAT(FindProgram("sh", dirs), IsOkAndHolds(StartsWith("/")));
  EXPECT_THAT(FindProgram("warptrace-no-such-program", dirs),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("warptrace-no-such-program"), HasSubstr("/nonexistent"))));
  EXPECT_THAT(FindProgram("/nonexistent/sh"), StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace warptrace
