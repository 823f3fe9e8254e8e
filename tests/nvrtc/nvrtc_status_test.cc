#include "jit/compile/nvrtc_status.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::EndsWith;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

TEST(NvrtcStatusTest, SuccessIsOk) { EXPECT_THAT(ToStatus(NVRTC_SUCCESS, "x", "a log"), IsOk()); }

TEST(NvrtcStatusTest, CarriesContextAndNvrtcsNameForTheError) {
  EXPECT_THAT(ToStatus(NVRTC_ERROR_OUT_OF_MEMORY, "compiling gemm"),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "NVRTC error: compiling gemm: NVRTC_ERROR_OUT_OF_MEMORY"));
}

TEST(NvrtcStatusTest, AppendsTheProgramLogWhenThereIsOne) {
  EXPECT_THAT(ToStatus(NVRTC_ERROR_COMPILATION, "compiling k", "k.cu(1): error: oops"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       EndsWith("NVRTC_ERROR_COMPILATION\nNVRTC log:\nk.cu(1): error: oops")));
}

TEST(NvrtcStatusTest, MapsWhatTheCallerCanFixToInvalidArgumentAndTheRestToInternal) {
  for (nvrtcResult r : {NVRTC_ERROR_COMPILATION, NVRTC_ERROR_INVALID_OPTION,
                        NVRTC_ERROR_INVALID_INPUT, NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID}) {
    EXPECT_THAT(ToStatus(r, "c"), StatusIs(absl::StatusCode::kInvalidArgument)) << r;
  }
  for (nvrtcResult r : {NVRTC_ERROR_INTERNAL_ERROR, NVRTC_ERROR_PROGRAM_CREATION_FAILURE,
                        NVRTC_ERROR_INVALID_PROGRAM}) {
    EXPECT_THAT(ToStatus(r, "c"), StatusIs(absl::StatusCode::kInternal)) << r;
  }
}

}  // namespace
}  // namespace warptrace
