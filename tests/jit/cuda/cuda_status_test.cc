#include "jit/cuda/cuda_status.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::StartsWith;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// No driver is loaded in this test binary, so names come from the built-in table.
TEST(CudaStatusTest, SuccessIsOk) { EXPECT_THAT(ToStatus(CUDA_SUCCESS, "anything"), IsOk()); }

TEST(CudaStatusTest, CarriesContextNameAndCode) {
  EXPECT_THAT(ToStatus(CUDA_ERROR_OUT_OF_MEMORY, "allocating 4096 bytes on NVIDIA H200"),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       StartsWith("CUDA error: allocating 4096 bytes on NVIDIA H200: "
                                  "CUDA_ERROR_OUT_OF_MEMORY: ")));
}

TEST(CudaStatusTest, MapsDriverAndInputErrorsToCanonicalCodes) {
  EXPECT_THAT(ToStatus(CUDA_ERROR_NO_DEVICE, "c"), StatusIs(absl::StatusCode::kUnavailable, ::testing::_));
  EXPECT_THAT(ToStatus(CUDA_ERROR_INVALID_IMAGE, "c"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  EXPECT_THAT(ToStatus(CUDA_ERROR_NOT_FOUND, "c"), StatusIs(absl::StatusCode::kNotFound, ::testing::_));
  EXPECT_THAT(ToStatus(CUDA_ERROR_LAUNCH_TIMEOUT, "c"),
              StatusIs(absl::StatusCode::kDeadlineExceeded, ::testing::_));
  EXPECT_THAT(ToStatus(CUDA_ERROR_ILLEGAL_ADDRESS, "c"),
              StatusIs(absl::StatusCode::kInternal, ::testing::HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS")));
}

TEST(CudaStatusTest, NamesAnUnknownCodeByNumber) {
  // 1000: no CUresult enumerator (the largest is CUDA_ERROR_UNKNOWN = 999), yet within the
  // enum's range of values (0..1023); a value outside that range would be undefined
  // behaviour to cast to CUresult (UBSan's -fsanitize=enum reports it).
  EXPECT_THAT(ToStatus(static_cast<CUresult>(1000), "c"),
              StatusIs(absl::StatusCode::kInternal, StartsWith("CUDA error: c: CUDA_ERROR_1000: ")));
}

}  // namespace
}  // namespace warptrace
