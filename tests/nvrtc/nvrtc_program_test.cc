#include "jit/compile/nvrtc_program.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/compile/nvrtc_status.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::warptrace::testing::IsOk;

TEST(NvrtcProgramTest, OwnsTheProgramAndReadsTheLogOfAFailedCompile) {
  NvrtcProgram program;
  EXPECT_EQ(program.get(), nullptr);
  ASSERT_THAT(ToStatus(nvrtcCreateProgram(program.out(),
                                          "__global__ void k() { undefined_name = 1; }", "k.cu",
                                          0, nullptr, nullptr),
                       "creating k"),
              IsOk());
  EXPECT_NE(program.get(), nullptr);
  const nvrtcResult compiled = nvrtcCompileProgram(program.get(), 0, nullptr);
  EXPECT_EQ(compiled, NVRTC_ERROR_COMPILATION);
  absl::StatusOr<std::string> log = program.Log("k");
  ASSERT_THAT(log.status(), IsOk());
  EXPECT_THAT(*log, HasSubstr("undefined_name"));
  EXPECT_NE(log->back(), '\0');
  EXPECT_NE(log->back(), '\n');
}

TEST(NvrtcProgramTest, ASuccessfulCompileHasAnEmptyLog) {
  NvrtcProgram program;
  ASSERT_THAT(ToStatus(nvrtcCreateProgram(program.out(), "__global__ void k() {}", "k.cu", 0,
                                          nullptr, nullptr),
                       "creating k"),
              IsOk());
  ASSERT_EQ(nvrtcCompileProgram(program.get(), 0, nullptr), NVRTC_SUCCESS);
  EXPECT_THAT(program.Log("k"), ::warptrace::testing::IsOkAndHolds(IsEmpty()));
}

TEST(NvrtcProgramTest, ReadingTheLogOfNoProgramIsAnError) {
  NvrtcProgram program;  // never created
  EXPECT_THAT(program.Log("nothing").status(), Not(IsOk()));
}

}  // namespace
}  // namespace warptrace
