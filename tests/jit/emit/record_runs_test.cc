// GroupRecordRuns: record points of a straight-line run at immediate offsets, one Advance
// per run, and every place a run must end (jit/emit/record_runs.h).
#include "jit/emit/record_runs.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/emit/source_writer.h"

namespace warptrace {
namespace {

std::string Rec(const std::string& tag) {
  return absl::StrCat("warptrace::recorder::Record(warptrace_unit, ", tag, ");");
}
std::string Pay(const std::string& tag) {
  return absl::StrCat("warptrace::recorder::RecordWithPayload(warptrace_unit, ", tag, ", a, b);");
}
std::string At(int k, const std::string& tag) {
  return absl::StrCat("warptrace::recorder::RecordAt<", k, "u>(warptrace_unit, ", tag, ");");
}
std::string PayAt(int k, const std::string& tag) {
  return absl::StrCat("warptrace::recorder::RecordWithPayloadAt<", k, "u>(warptrace_unit, ", tag,
                      ", a, b);");
}
std::string Advance(int n) {
  return absl::StrCat("warptrace::recorder::Advance<", n, "u>(warptrace_unit);  // past the run's ",
                      n, " slots");
}

// The lines as "depth|text" (restore directives as "#restore").
std::vector<std::string> Render(const std::vector<SourceLine>& lines) {
  std::vector<std::string> out;
  for (const SourceLine& l : lines) {
    out.push_back(l.restore_line ? "#restore" : absl::StrCat(l.depth, "|", l.text));
  }
  return out;
}

std::vector<std::string> Group(const std::vector<SourceLine>& lines) {
  return Render(GroupRecordRuns(lines));
}

TEST(RecordRunsTest, RunThroughBareBlocksAndStatementsIsOneAdvance) {
  EXPECT_THAT(Group({{1, "for (int k = 0; k < 8; ++k) {"},
                     {2, "{  // region load"},
                     {3, Rec("1u")},
                     {0, "#line 1 \"load\""},
                     {3, "x[k] = y[k];"},
                     {0, "", true},
                     {3, Pay("0x80000001u")},
                     {2, "}"},
                     {2, "__syncthreads();"},
                     {2, Rec("2u")},
                     {1, "}"}}),
              ::testing::ElementsAre("1|for (int k = 0; k < 8; ++k) {", "2|{  // region load",
                                     "3|" + At(0, "1u"), "0|#line 1 \"load\"", "3|x[k] = y[k];",
                                     "#restore", "3|" + PayAt(1, "0x80000001u"), "2|}",
                                     "2|__syncthreads();", "2|" + At(3, "2u"), "2|" + Advance(4),
                                     "1|}"));
}

TEST(RecordRunsTest, LoneRecordPointIsLeftAsItIs) {
  EXPECT_THAT(Group({{1, Rec("1u")}, {1, "if (x) {"}, {2, Rec("2u")}, {1, "}"}}),
              ::testing::ElementsAre("1|" + Rec("1u"), "1|if (x) {", "2|" + Rec("2u"), "1|}"));
}

TEST(RecordRunsTest, ConstructWithRecordPointsEndsTheRunBeforeItsHeader) {
  EXPECT_THAT(Group({{1, Rec("1u")},
                     {1, Rec("2u")},
                     {1, "if (x) {"},
                     {2, "y = 1;"},
                     {1, "} else {"},
                     {2, Rec("3u")},
                     {1, "}"}}),
              ::testing::ElementsAre("1|" + At(0, "1u"), "1|" + At(1, "2u"), "1|" + Advance(2),
                                     "1|if (x) {", "2|y = 1;", "1|} else {", "2|" + Rec("3u"),
                                     "1|}"));
}

TEST(RecordRunsTest, ConstructWithoutRecordPointsKeepsTheRun) {
  EXPECT_THAT(Group({{1, Rec("1u")}, {1, "while (!ready()) {"}, {2, "spin();"}, {1, "}"},
                     {1, Rec("2u")}, {0, "}"}}),
              ::testing::ElementsAre("1|" + At(0, "1u"), "1|while (!ready()) {", "2|spin();",
                                     "1|}", "1|" + At(1, "2u"), "1|" + Advance(2), "0|}"));
}

TEST(RecordRunsTest, StateUseJumpAndConditionalEndTheRun) {
  EXPECT_THAT(
      Group({{1, Rec("1u")},
             {1, Rec("2u")},
             {1, "warptrace::recorder::Epilogue(warptrace_unit, c);"},
             {1, Rec("3u")},
             {1, Rec("4u")},
             {1, "return;"},
             {1, Rec("5u")},
             {1, Rec("6u")},
             {0, "#if defined(__CUDA_ARCH__)"},
             {1, Rec("7u")},
             {1, Rec("8u")},
             {0, "#endif"}}),
      ::testing::ElementsAre("1|" + At(0, "1u"), "1|" + At(1, "2u"), "1|" + Advance(2),
                             "1|warptrace::recorder::Epilogue(warptrace_unit, c);",
                             "1|" + At(0, "3u"), "1|" + At(1, "4u"), "1|" + Advance(2),
                             "1|return;", "1|" + At(0, "5u"), "1|" + At(1, "6u"),
                             "1|" + Advance(2), "0|#if defined(__CUDA_ARCH__)",
                             "1|" + At(0, "7u"), "1|" + At(1, "8u"), "1|" + Advance(2),
                             "0|#endif"));
}

TEST(RecordRunsTest, ConstructHoldingAJumpOrAConditionalEndsTheRunBeforeItsHeader) {
  EXPECT_THAT(Group({{1, Rec("1u")},
                     {1, Rec("2u")},
                     {1, "if (flag) {"},
                     {2, "return;"},
                     {1, "}"},
                     {1, Rec("3u")},
                     {1, Rec("4u")},
                     {1, "for (;;) {"},
                     {0, "#if defined(__CUDACC__)"},
                     {2, "x();"},
                     {0, "#endif"},
                     {1, "}"}}),
              ::testing::ElementsAre("1|" + At(0, "1u"), "1|" + At(1, "2u"), "1|" + Advance(2),
                                     "1|if (flag) {", "2|return;", "1|}", "1|" + At(0, "3u"),
                                     "1|" + At(1, "4u"), "1|" + Advance(2), "1|for (;;) {",
                                     "0|#if defined(__CUDACC__)", "2|x();", "0|#endif", "1|}"));
}

TEST(RecordRunsTest, NestedBlockRunEndsAtItsCloser) {
  EXPECT_THAT(Group({{1, "if (t == 0u) {"}, {2, Rec("1u")}, {2, Pay("2u")}, {1, "}"},
                     {1, "z = 0;"}}),
              ::testing::ElementsAre("1|if (t == 0u) {", "2|" + At(0, "1u"),
                                     "2|" + PayAt(1, "2u"), "2|" + Advance(3), "1|}", "1|z = 0;"));
}

TEST(SourceWriterTest, RestoreLineCountsTheLinesAPassInserted) {
  SourceWriter w("k.cu");
  w.Line(0, "a");
  w.Attributed(0, "path", "b");
  w.Line(0, "c");
  const std::string out = w.Take([](std::vector<SourceLine> lines) {
    lines.insert(lines.begin(), SourceLine{0, "inserted"});
    return lines;
  });
  EXPECT_EQ(out, "inserted\na\n#line 1 \"path\"\nb\n#line 6 \"k.cu\"\nc\n");
}

}  // namespace
}  // namespace warptrace
