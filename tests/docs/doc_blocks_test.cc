// Every C++ code block of README.md and docs/*.md compiles (this target is built from them by
// extract_code_blocks.py: a block that stops compiling fails the build of this test, with the
// compiler's error at the page and line), and every block that is a complete program runs on
// the host backend and exits 0. The convention is in docs/README.md, "Code blocks".
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/testing/temp_path.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "tests/docs/doc_prelude.h"

namespace warptrace::doc_blocks {
namespace {

// Counts the pages' C++ fences another way than the extractor: lines that open a fence
// with a C++ info string and no "no-compile".
size_t CountCppFences(const std::string& page) {
  std::ifstream in(absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/", page));
  EXPECT_TRUE(in.good()) << page;
  size_t count = 0;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    const absl::string_view text = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::StartsWith(text, "```")) continue;
    if (!inside) {
      const absl::string_view info = absl::StripAsciiWhitespace(text.substr(3));
      const absl::string_view language = info.substr(0, info.find(' '));
      if ((language == "cpp" || language == "c++" || language == "cc" || language == "cxx") &&
          !absl::StrContains(info, "no-compile")) {
        ++count;
      }
    }
    inside = !inside;
  }
  return count;
}

TEST(DocBlocksTest, CompilesEveryCppBlockOfThePages) {
  size_t fences = 0;
  for (const char* page : {"README.md", "docs/README.md", "docs/builder.md", "docs/sm90.md",
                           "docs/python.md", "docs/cli.md", "docs/gpu_bundle.md",
                           "docs/architecture.md"}) {
    fences += CountCppFences(page);
  }
  EXPECT_EQ(AllDocBlocks().size(), fences);
  int programs = 0;
  for (const DocBlock& block : AllDocBlocks()) programs += block.main != nullptr;
  EXPECT_GE(programs, 1) << "the builder page's first kernel is a complete program";
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
