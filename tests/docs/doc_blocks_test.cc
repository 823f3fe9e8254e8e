// Every C++ code block of README.md and docs/*.md compiles (this target is built from them by
// extract_code_blocks.py: a block that stops compiling fails the build of this test, with the
// compiler's error at the page and line), and every block that is a complete program runs on
// the host backend and exits 0. The convention is in docs/README.md, "Code blocks".
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/testing/temp_path.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "tests/docs/doc_prelude.h"

namespace warptrace::doc_blocks {
namespace {

TEST(DocBlocksTest, FindsTheCompiledBlocksOfThePages) {
  // The pages have compiled blocks and programs; zero would mean the extractor lost them.
  int programs = 0;
  for (const DocBlock& block : AllDocBlocks()) programs += block.main != nullptr;
  EXPECT_GE(AllDocBlocks().size(), 5u);
  EXPECT_GE(programs, 1);
}

TEST(DocBlocksTest, EveryCompleteProgramRunsAndExitsZero) {
  setenv("WARPTRACE_CACHE_DIR", TestTempPath("cache").c_str(), 1);
  for (const DocBlock& block : AllDocBlocks()) {
    if (block.main == nullptr) continue;
    const std::string where = absl::StrCat(block.page, ":", block.line);
    // Each program runs in a fresh directory of its own: the files it writes land there.
    const std::string dir = TestTempPath(absl::StrCat("block_", block.line));
    ASSERT_FALSE(llvm::sys::fs::create_directories(dir)) << dir;
    char cwd[4096];
    ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
    ASSERT_EQ(chdir(dir.c_str()), 0) << dir;
    std::string name = "doc_block";
    char* argv[] = {name.data(), nullptr};
    std::cout << "running the program at " << where << "\n";
    const int status = block.main(1, argv);
    ASSERT_EQ(chdir(cwd), 0);
    EXPECT_EQ(status, 0) << "the program at " << where << " exited " << status;
  }
}

}  // namespace
}  // namespace warptrace::doc_blocks
