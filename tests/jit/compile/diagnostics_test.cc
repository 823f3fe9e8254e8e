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

// The emitter's #line directives name a builder construct; an error the compiler reports
// "in" it is quoted from the generated source line the directive attributes to it.
constexpr char kAttributedSource[] =
    "// generated\n"                                                   // 1
    "#line 1 \"kernel k > region r > statement `a; \\\"b\\\"`\"\n"  // 2
    "  int a = 1;\n"                                                   // 3
    "  a += undeclared;\n"                                             // 4
    "#line 6 \"k.cu\"\n"                                               // 5
    "  generated_call();\n";                                           // 6

TEST(DiagnosticsTest, MapsGccErrorsInAttributedLinesBackToTheGeneratedSource) {
  const std::string quoted = QuoteOffendingLines(
      "kernel k > region r > statement `a; \"b\"`:2:8: error: 'undeclared' was not declared\n"
      "k.cu:6:3: error: 'generated_call' was not declared in this scope\n",
      {{"k.cc", kAttributedSource}});
  EXPECT_EQ(quoted,
            "kernel k > region r > statement `a; \"b\"`:2:8: error: 'undeclared' was not "
            "declared\n"
            "  k.cc:4 |   a += undeclared;\n"
            "k.cu:6:3: error: 'generated_call' was not declared in this scope\n"
            "  k.cc:6 |   generated_call();\n");
}

TEST(DiagnosticsTest, MapsNvrtcErrorsInAttributedLinesBackToTheGeneratedSource) {
  const std::string quoted = QuoteOffendingLines(
      "kernel k > region r > statement `a; \"b\"`(1): error: something\n",
      {{"k.cu", kAttributedSource}});
  EXPECT_EQ(quoted,
            "kernel k > region r > statement `a; \"b\"`(1): error: something\n"
            "  k.cu:3 |   int a = 1;\n");
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
