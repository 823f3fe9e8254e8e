#include "jit/cuda/cuda_driver.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::warptrace::testing::StatusIs;

TEST(CudaDriverTest, AMissingLibraryIsUnavailableWithTheLoadersReason) {
  EXPECT_THAT(CudaDriver::Open("libwarptrace-no-such-driver.so.1"),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(StartsWith("no CUDA driver: libwarptrace-no-such-driver.so.1 not "
                                        "found (libwarptrace-no-such-driver.so.1: cannot open"),
                             HasSubstr("use the host backend"))));
}

TEST(CudaDriverTest, ALibraryWithoutTheDriverApiIsUnavailableNamingTheSymbol) {
  EXPECT_THAT(CudaDriver::Open("libz.so.1"),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("libz.so.1 lacks cuInit"), HasSubstr("host backend"))));
}

TEST(CudaDriverTest, TheProcessDriverLoadsOrSaysWhyNotConsistently) {
  absl::StatusOr<const CudaDriver*> first = CudaDriver::Get();
  absl::StatusOr<const CudaDriver*> second = CudaDriver::Get();
  EXPECT_EQ(first.status(), second.status());
  if (first.ok()) {
    EXPECT_EQ(*first, *second);
    EXPECT_GT((*first)->version(), 0);
    EXPECT_NE((*first)->api().cuMemAlloc, nullptr);
  } else {
    EXPECT_THAT(first, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("libcuda.so.1")));
  }
}

}  // namespace
}  // namespace warptrace
