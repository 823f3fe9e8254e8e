// Tests base/exception_status.h.
#include "base/exception_status.h"

#include <cerrno>
#include <new>
#include <stdexcept>
#include <system_error>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::warptrace::testing::StatusIs;

template <typename E>
absl::Status StatusOf(const E& e) {
  try {
    throw e;
  } catch (...) {
    return StatusOfCurrentException();
  }
}

TEST(StatusOfCurrentExceptionTest, BadAllocIsResourceExhaustedOutOfMemory) {
  const absl::Status s = StatusOf(std::bad_alloc());
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kResourceExhausted, StartsWith("out of memory: ")));
  EXPECT_TRUE(IsOutOfMemory(s));
}

TEST(StatusOfCurrentExceptionTest, AThreadThatCannotStartIsOutOfMemory) {
  const absl::Status s =
      StatusOf(std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again)));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kResourceExhausted,
                          StartsWith("out of memory: could not start a thread")));
  EXPECT_TRUE(IsOutOfMemory(s));
}

TEST(StatusOfCurrentExceptionTest, OtherExceptionsAreInternalErrors) {
  EXPECT_THAT(StatusOf(std::runtime_error("boom")),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("internal error: boom")));
  EXPECT_THAT(StatusOf(42), StatusIs(absl::StatusCode::kInternal, HasSubstr("unknown")));
  EXPECT_FALSE(IsOutOfMemory(StatusOf(std::runtime_error("boom"))));
}

TEST(IsOutOfMemoryTest, DroppedEventsAreNotOutOfMemory) {
  EXPECT_FALSE(IsOutOfMemory(absl::ResourceExhaustedError("3 events dropped")));
}

}  // namespace
}  // namespace warptrace
