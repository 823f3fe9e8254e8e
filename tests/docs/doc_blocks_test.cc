// Every C++ code block of README.md and docs/*.md compiles (this target is built from them by
// extract_code_blocks.py: a block that stops compiling fails the build of this test, with the
// compiler's error at the page and line), and every block that is a complete program runs on
// the host backend and exits 0. The convention is in docs/README.md, "Code blocks".
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/testing/temp_path.h"
#include "gtest/gtest.h"
#include "llvm/Support/FileSystem.h"
#include "tests/docs/doc_prelude.h"

namespace warptrace::doc_blocks {
namespace {

constexpr const char* kPages[] = {"README.md",       "docs/README.md",     "docs/builder.md",
                                  "docs/sm90.md",    "docs/python.md",     "docs/cli.md",
                                  "docs/gpu_bundle.md", "docs/architecture.md",
                                  "docs/tables.md",     "docs/cmake.md",
                                  "docs/sanitizer.md"};

std::string ReadPage(const std::string& page) {
  std::ifstream in(absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/", page));
  EXPECT_TRUE(in.good()) << page;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes.
std::string Anchor(absl::string_view heading) {
  std::string anchor;
  for (char c : heading) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_') {
      anchor.push_back(absl::ascii_tolower(c));
    } else if (c == ' ') {
      anchor.push_back('-');
    }
  }
  return anchor;
}

// The anchors of a page's headings, outside code fences.
std::vector<std::string> Anchors(const std::string& text) {
  std::vector<std::string> anchors;
  bool inside = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "```")) inside = !inside;
    if (inside || !absl::StartsWith(line, "#")) continue;
    const size_t space = line.find(' ');
    if (space == absl::string_view::npos) continue;
    anchors.push_back(Anchor(absl::StripAsciiWhitespace(line.substr(space + 1))));
  }
  return anchors;
}

// The page's text outside code fences.
std::string Prose(const std::string& text) {
  std::string prose;
  bool inside = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "```")) {
      inside = !inside;
      continue;
    }
    if (!inside) absl::StrAppend(&prose, line, "\n");
  }
  return prose;
}

// Every relative link of the pages, [text](path) or [text](path#anchor), names a file of
// the pages that exists and, with an anchor, one of its headings.
TEST(DocBlocksTest, LinksBetweenThePagesResolve) {
  for (const char* name : kPages) {
    const std::string page = name;
    const std::string text = Prose(ReadPage(page));
    const std::string dir = page.find('/') == std::string::npos ? "" : "docs/";
    for (size_t at = text.find("]("); at != std::string::npos; at = text.find("](", at + 2)) {
      const size_t end = text.find(')', at);
      ASSERT_NE(end, std::string::npos) << page;
      const std::string target = text.substr(at + 2, end - at - 2);
      if (absl::StartsWith(target, "http")) continue;
      const std::vector<std::string> parts = absl::StrSplit(target, absl::MaxSplits('#', 1));
      std::string path = parts[0].empty() ? page : dir + parts[0];
      if (absl::StartsWith(path, "docs/../")) path = path.substr(8);
      const auto known = std::find(std::begin(kPages), std::end(kPages), path);
      ASSERT_TRUE(known != std::end(kPages)) << page << " links to " << target
                                         << ", which is not one of the pages";
      if (parts.size() == 2) {
        const std::vector<std::string> anchors = Anchors(ReadPage(path));
        EXPECT_TRUE(std::find(anchors.begin(), anchors.end(), parts[1]) != anchors.end())
            << page << " links to " << target << ": " << path << " has no heading #"
            << parts[1];
      }
    }
  }
}

// Counts the pages' C++ fences another way than the extractor: lines that open a fence
// with a C++ info string and no "no-compile" or "cmake-project" (cmake.md's project, which
// //tests/cmake:cmake_project_test builds).
size_t CountCppFences(const std::string& page) {
  size_t count = 0;
  bool inside = false;
  for (absl::string_view line : absl::StrSplit(ReadPage(page), '\n')) {
    const absl::string_view text = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::StartsWith(text, "```")) continue;
    if (!inside) {
      const absl::string_view info = absl::StripAsciiWhitespace(text.substr(3));
      const absl::string_view language = info.substr(0, info.find(' '));
      if ((language == "cpp" || language == "c++" || language == "cc" || language == "cxx") &&
          !absl::StrContains(info, "no-compile") && !absl::StrContains(info, "cmake-project")) {
        ++count;
      }
    }
    inside = !inside;
  }
  return count;
}

TEST(DocBlocksTest, CompilesEveryCppBlockOfThePages) {
  size_t fences = 0;
  for (const char* page : kPages) fences += CountCppFences(page);
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
    const std::string dir = TestTempPath(
        absl::StrCat("block_", &block - AllDocBlocks().data(), "_line_", block.line));
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
