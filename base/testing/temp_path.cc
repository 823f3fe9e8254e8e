#include "base/testing/temp_path.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"

namespace warptrace {

std::string TestTempPath(absl::string_view name) {
  std::string root = ::testing::TempDir();  // $TEST_TMPDIR, else /tmp/; ends with '/'
  if (const char* tmp = std::getenv("TEST_TMPDIR"); tmp != nullptr && *tmp != '\0') {
    root = absl::StrCat(tmp, "/");
  }
  const ::testing::UnitTest& unit_test = *::testing::UnitTest::GetInstance();
  std::string test = absl::StrCat("no_test.", getpid());
  if (const ::testing::TestInfo* info = unit_test.current_test_info()) {
    test = absl::StrCat(info->test_suite_name(), ".", info->name());
  } else if (const ::testing::TestSuite* suite = unit_test.current_test_suite()) {
    test = suite->name();  // SetUpTestSuite / TearDownTestSuite
  }
  test = absl::StrReplaceAll(test, {{"/", "_"}});
  const std::string dir = absl::StrCat(absl::StripSuffix(root, "/"), "/", test);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    ADD_FAILURE() << "cannot create the test's temporary directory " << dir << ": "
                  << ec.message();
  }
  return absl::StrCat(dir, "/", name);
}

}  // namespace warptrace
