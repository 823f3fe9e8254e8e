// docs/builder.md quotes examples/first_kernel.cc's function (between the readme markers) and the
// README documents the commands a fresh machine runs: this test keeps both true.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;

std::string ReadRunfile(const std::string& path) {
  std::ifstream in(absl::StrCat(std::getenv("TEST_SRCDIR"), "/warptrace/", path));
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines between "// [readme-begin]" and "// [readme-end]", with the snippet's common
// indentation removed.
std::string Snippet(const std::string& source) {
  std::vector<std::string> lines;
  bool inside = false;
  size_t indent = std::string::npos;
  for (absl::string_view line : absl::StrSplit(source, '\n')) {
    if (absl::StrContains(line, "// [readme-end]")) break;
    if (inside) {
      const size_t first = line.find_first_not_of(' ');
      if (first != absl::string_view::npos) indent = std::min(indent, first);
      lines.emplace_back(line);
    }
    if (absl::StrContains(line, "// [readme-begin]")) inside = true;
  }
  std::string out;
  for (const std::string& line : lines) {
    absl::StrAppend(&out, line.size() >= indent ? line.substr(indent) : "", "\n");
  }
  return out;
}

TEST(ReadmeTest, BuilderPageQuotesTheFirstKernelExampleVerbatim) {
  const std::string snippet = Snippet(ReadRunfile("examples/first_kernel.cc"));
  // docs/builder.md quotes it (the doc test compiles and runs the page's copy).
  ASSERT_GT(std::count(snippet.begin(), snippet.end(), '\n'), 12) << snippet;
  EXPECT_THAT(ReadRunfile("docs/builder.md"), HasSubstr(snippet));
}

TEST(ReadmeTest, ShowsTheTwoCommandsOfAFreshMachine) {
  const std::string readme = ReadRunfile("README.md");
  EXPECT_THAT(readme, HasSubstr("bash tools/setup.sh && bazel run //examples:tiled_gemm"));
  EXPECT_THAT(readme, HasSubstr("bazel test //..."));
}

}  // namespace
}  // namespace warptrace
