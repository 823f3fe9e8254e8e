#include "base/testing/temp_path.h"

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace warptrace {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(TestTempPathTest, IsUnderTestTmpdirInADirectoryNamedForTheTest) {
  const std::string path = TestTempPath("file.txt");
  const char* root = std::getenv("TEST_TMPDIR");
  ASSERT_NE(root, nullptr) << "bazel test sets TEST_TMPDIR";
  EXPECT_THAT(path, StartsWith(root));
  EXPECT_THAT(path, EndsWith("/TestTempPathTest.IsUnderTestTmpdirInADirectoryNamedForTheTest/file.txt"));
  EXPECT_TRUE(llvm::sys::fs::is_directory(llvm::sys::path::parent_path(path)));
  EXPECT_FALSE(llvm::sys::fs::exists(path));
}

TEST(TestTempPathTest, DiffersBetweenTests) {
  EXPECT_THAT(TestTempPath("file.txt"), HasSubstr("/TestTempPathTest.DiffersBetweenTests/"));
}

TEST(TestTempPathTest, FallsBackToGtestsTempDirWithoutTestTmpdir) {
  const std::string saved = std::getenv("TEST_TMPDIR");
  ASSERT_EQ(unsetenv("TEST_TMPDIR"), 0);
  const std::string path = TestTempPath("x");
  ASSERT_EQ(setenv("TEST_TMPDIR", saved.c_str(), 1), 0);
  EXPECT_FALSE(absl::StrContains(path, "//"));
  EXPECT_THAT(path, StartsWith("/"));
  EXPECT_TRUE(llvm::sys::fs::is_directory(llvm::sys::path::parent_path(path)));
}

class TestTempPathSuiteTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { *suite_path_ = TestTempPath("shared_cache"); }
  static std::string* const suite_path_;
};
std::string* const TestTempPathSuiteTest::suite_path_ = new std::string;

TEST_F(TestTempPathSuiteTest, InSetUpTestSuiteIsNamedForTheSuite) {
  EXPECT_THAT(*suite_path_, EndsWith("/TestTempPathSuiteTest/shared_cache"));
}

class ParameterizedTempPathTest : public ::testing::TestWithParam<int> {};

TEST_P(ParameterizedTempPathTest, FlattensTheSlashesOfParameterizedNames) {
  const std::string path = TestTempPath("x");
  EXPECT_THAT(path, HasSubstr("/Params_ParameterizedTempPathTest.FlattensTheSlashesOfParameterizedNames_"));
  EXPECT_TRUE(llvm::sys::fs::is_directory(llvm::sys::path::parent_path(path)));
}

INSTANTIATE_TEST_SUITE_P(Params, ParameterizedTempPathTest, ::testing::Values(1));

}  // namespace
}  // namespace warptrace
