#include "base/status_adapters.h"

#include <cerrno>
#include <system_error>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/Errc.h"
#include "llvm/Support/Error.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

std::error_code Errno(int value) { return std::error_code(value, std::generic_category()); }

TEST(StatusAdaptersTest, MapsEachErrnoGroupToItsDocumentedCode) {
  struct Case {
    int errno_value;
    absl::StatusCode code;
  };
  const Case cases[] = {
      {ENOENT, absl::StatusCode::kNotFound},
      {ENOTDIR, absl::StatusCode::kNotFound},
      {EACCES, absl::StatusCode::kPermissionDenied},
      {EPERM, absl::StatusCode::kPermissionDenied},
      {EROFS, absl::StatusCode::kPermissionDenied},
      {ENOSPC, absl::StatusCode::kResourceExhausted},
      {EDQUOT, absl::StatusCode::kResourceExhausted},
      {EFBIG, absl::StatusCode::kResourceExhausted},
      {EMFILE, absl::StatusCode::kResourceExhausted},
      {EEXIST, absl::StatusCode::kAlreadyExists},
      {EISDIR, absl::StatusCode::kFailedPrecondition},
      {EXDEV, absl::StatusCode::kFailedPrecondition},
      {EINVAL, absl::StatusCode::kInvalidArgument},
      {ENAMETOOLONG, absl::StatusCode::kInvalidArgument},
      {ETIMEDOUT, absl::StatusCode::kDeadlineExceeded},
      {EIO, absl::StatusCode::kUnavailable},
      {EAGAIN, absl::StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(StatusCodeFromErrorCode(Errno(c.errno_value)), c.code)
        << "errno " << c.errno_value << " (" << Errno(c.errno_value).message() << ")";
  }
}

TEST(StatusAdaptersTest, SystemCategoryErrorsMapLikeGenericOnes) {
  // What llvm::sys and std::filesystem return: the system category, not the generic one.
  EXPECT_EQ(StatusCodeFromErrorCode(std::error_code(ENOENT, std::system_category())),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(StatusCodeFromErrorCode(std::make_error_code(std::errc::permission_denied)),
            absl::StatusCode::kPermissionDenied);
}

TEST(StatusAdaptersTest, ErrorCodeMessageIsContextThenSystemText) {
  EXPECT_THAT(ToStatus(Errno(ENOENT), "reading trace sidecar '/x/p.json'"),
              StatusIs(absl::StatusCode::kNotFound,
                       "reading trace sidecar '/x/p.json': No such file or directory"));
}

TEST(StatusAdaptersTest, SuccessIsOk) {
  EXPECT_THAT(ToStatus(std::error_code(), "nothing"), IsOk());
  EXPECT_THAT(ToStatus(llvm::Error::success(), "nothing"), IsOk());
  EXPECT_EQ(StatusCodeFromErrorCode(std::error_code()), absl::StatusCode::kOk);
}

TEST(StatusAdaptersTest, LlvmErrorWithAnErrnoUsesTheTable) {
  EXPECT_THAT(ToStatus(llvm::errorCodeToError(Errno(ENOSPC)), "writing trace.json"),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("writing trace.json: No space left on device")));
  EXPECT_THAT(ToStatus(llvm::createStringError(llvm::errc::permission_denied, "no way"), "c"),
              StatusIs(absl::StatusCode::kPermissionDenied, "c: no way"));
}

TEST(StatusAdaptersTest, LlvmErrorWithoutACodeIsUnknownAndKeepsEveryMessage) {
  llvm::Error joined = llvm::joinErrors(
      llvm::createStringError(llvm::inconvertibleErrorCode(), "first"),
      llvm::createStringError(llvm::errc::io_error, "second"));
  EXPECT_THAT(ToStatus(std::move(joined), "parsing"),
              StatusIs(absl::StatusCode::kUnknown, "parsing: first; second"));
}

}  // namespace
}  // namespace warptrace
