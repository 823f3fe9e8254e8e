#include "base/temp_dir.h"

#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::warptrace::testing::IsOk;

void Touch(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr) << path;
  std::fclose(f);
}

TEST(TempDirTest, CreatesAFreshDirectoryAndRemovesItWithItsContents) {
  std::string path;
  {
    absl::StatusOr<TempDir> dir = TempDir::Create("warptrace-temp-dir-test");
    ASSERT_THAT(dir.status(), IsOk());
    path = dir->path();
    EXPECT_TRUE(llvm::sys::fs::is_directory(path));
    EXPECT_THAT(path, HasSubstr("warptrace-temp-dir-test-"));
    EXPECT_THAT(dir->File("a.txt"), StartsWith(path + "/"));
    ASSERT_TRUE(!llvm::sys::fs::create_directory(dir->File("sub")));
    Touch(dir->File("sub/b.txt"));
    Touch(dir->File("a.txt"));
  }
  EXPECT_FALSE(llvm::sys::fs::exists(path));
}

TEST(TempDirTest, TwoDirectoriesWithOnePrefixDiffer) {
  absl::StatusOr<TempDir> a = TempDir::Create("warptrace-same");
  absl::StatusOr<TempDir> b = TempDir::Create("warptrace-same");
  ASSERT_THAT(a.status(), IsOk());
  ASSERT_THAT(b.status(), IsOk());
  EXPECT_NE(a->path(), b->path());
}

TEST(TempDirTest, MovingTransfersOwnershipAndAssignmentRemovesTheOldDirectory) {
  absl::StatusOr<TempDir> a = TempDir::Create("warptrace-move");
  absl::StatusOr<TempDir> b = TempDir::Create("warptrace-move");
  ASSERT_THAT(a.status(), IsOk());
  ASSERT_THAT(b.status(), IsOk());
  const std::string a_path = a->path();
  const std::string b_path = b->path();
  TempDir moved(std::move(*a));
  EXPECT_EQ(moved.path(), a_path);
  EXPECT_TRUE(a->path().empty());
  moved = std::move(*b);
  EXPECT_FALSE(llvm::sys::fs::exists(a_path));
  EXPECT_TRUE(llvm::sys::fs::is_directory(b_path));
  EXPECT_EQ(moved.path(), b_path);
}

}  // namespace
}  // namespace warptrace
