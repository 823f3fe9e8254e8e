#include "jit/compile/diagnostics.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(DiagnosticsTest, QuotesNvrtcStyleErrors) {
  const std::string quoted = QuoteOffendingLines(
      "k.cu(2): error: identifier \"y\" is undefined\n1 error detected\n",
      {{"k.cu", "line one\n  y = 1;\nline three\n"}});
  EXPECT_EQ(quoted, "k.cu(2): error: identifier \"y\" is undefined\n      2 |   y = 1;\n");
}

TEST(DiagnosticsTest, QuotesGccStyleErrorsWithADirectoryPrefix) {
  const std::string quoted = QuoteOffendingLines(
      "/tmp/wt-1234/kernel.cc:3:7: error: 'q' was not declared in this scope\n"
      "/tmp/wt-1234/kernel.cc:1:1: warning: unused\n",
      {{"kernel.cc", "a\nb\nint x = q;\n"}});
  EXPECT_THAT(quoted, HasSubstr("kernel.cc:3:7: error: 'q' was not declared"));
  EXPECT_THAT(quoted, HasSubstr("      3 | int x = q;"));
  EXPECT_THAT(quoted, Not(HasSubstr("warning")));
}

TEST(DiagnosticsTest, KeepsErrorsInUnknownFilesWithoutAQuote) {
  EXPECT_EQ(QuoteOffendingLines("other.h(9): error: boom", {{"k.cu", "x\n"}}),
            "other.h(9): error: boom\n");
}

TEST(DiagnosticsTest, CountsErrorsBeyondTheLimit) {
  EXPECT_THAT(QuoteOffendingLines("a(1): error: x\na(1): error: y\na(1): error: z\n",
                                  {{"a", "l\n"}}, 2),
              HasSubstr("(1 more errors not quoted)"));
}

TEST(DiagnosticsTest, ReturnsNothingForALogWithoutErrors) {
  EXPECT_EQ(QuoteOffendingLines("k.cu(1): warning: meh\n", {{"k.cu", "x\n"}}), "");
}

}  // namespace
}  // namespace warptrace
