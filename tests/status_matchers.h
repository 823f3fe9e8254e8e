// Test-only GoogleMock matchers for absl::Status / absl::StatusOr, with the semantics of
// absl's status_matchers.h (absent from Debian's absl 20220623):
//
//   EXPECT_THAT(DoIt(), IsOk());
//   EXPECT_THAT(Compute(), IsOkAndHolds(42));
//   EXPECT_THAT(Parse(""), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty")));
#ifndef WARPTRACE_TESTS_STATUS_MATCHERS_H_
#define WARPTRACE_TESTS_STATUS_MATCHERS_H_

#include <ostream>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace warptrace::testing {
namespace internal {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

}  // namespace internal

MATCHER(IsOk, "is OK") {
  const absl::Status& status = internal::GetStatus(arg);
  if (!status.ok()) *result_listener << "status is " << status;
  return status.ok();
}

MATCHER_P(IsOkAndHolds, value_matcher, "is OK and holds a matching value") {
  if (!arg.ok()) {
    *result_listener << "status is " << arg.status();
    return false;
  }
  return ::testing::ExplainMatchResult(value_matcher, *arg, result_listener);
}

MATCHER_P2(StatusIs, code, message_matcher,
           "has code " + absl::StatusCodeToString(code) + " and a message that " +
               ::testing::DescribeMatcher<std::string>(message_matcher, negation)) {
  const absl::Status& status = internal::GetStatus(arg);
  if (status.code() != code) {
    *result_listener << "status is " << status;
    return false;
  }
  return ::testing::ExplainMatchResult(message_matcher, std::string(status.message()),
                                       result_listener);
}

// StatusIs(code): any message.
inline auto StatusIs(absl::StatusCode code) { return StatusIs(code, ::testing::_); }

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_STATUS_MATCHERS_H_
