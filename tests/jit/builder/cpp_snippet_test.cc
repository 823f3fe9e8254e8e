#include "jit/builder/cpp_snippet.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

std::vector<std::string> Texts(absl::string_view code) {
  absl::StatusOr<std::vector<CppToken>> tokens = LexCpp(code);
  EXPECT_THAT(tokens.status(), IsOk());
  std::vector<std::string> out;
  if (tokens.ok()) {
    for (const CppToken& t : *tokens) out.emplace_back(t.text);
  }
  return out;
}

SnippetFacts Scan(absl::string_view code) {
  absl::StatusOr<SnippetFacts> facts = ScanSnippet(code);
  EXPECT_THAT(facts.status(), IsOk()) << code;
  return facts.ok() ? *facts : SnippetFacts{};
}

TEST(LexCppTest, SkipsCommentsPreprocessorLinesAndKeepsLiteralsWhole) {
  EXPECT_THAT(Texts("#pragma unroll \\\n  4\nx = a::b->c; // return\n/* goto */ s = u8\"a\\\"b\";"),
              ElementsAre("x", "=", "a", "::", "b", "->", "c", ";", "s", "=", "u8\"a\\\"b\"",
                          ";"));
}

TEST(LexCppTest, LexesRawStringsCharactersAndNumbersWithSeparators) {
  EXPECT_THAT(Texts("R\"x(a)\" return; )x\" 'c' '\\'' 1'000 0x1p-3f .5e+2"),
              ElementsAre("R\"x(a)\" return; )x\"", "'c'", "'\\''", "1'000", "0x1p-3f",
                          ".5e+2"));
}

TEST(LexCppTest, RejectsUnterminatedCommentsAndLiteralsNamingTheLine) {
  EXPECT_THAT(LexCpp("x;\n/* open"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unterminated block comment starting on line 2")));
  EXPECT_THAT(LexCpp("s = \"abc\n\";"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unterminated string")));
  EXPECT_THAT(LexCpp("s = R\"d(abc)\";"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unterminated raw string")));
}

TEST(ScanSnippetTest, AReturnOutsideAnyLambdaReturnsFromTheKernel) {
  EXPECT_TRUE(Scan("if (x) return;").returns_from_kernel);
  EXPECT_TRUE(Scan("for (;;) { while (y) { return; } }").returns_from_kernel);
}

TEST(ScanSnippetTest, AReturnInAStatementExpressionReturnsFromTheKernel) {
  EXPECT_TRUE(Scan("int v = ({ if (x) return; 1; });").returns_from_kernel);
  EXPECT_THAT(Scan("int v = ({ if (x) break; 1; });").escaping_jumps, ElementsAre("break"));
}

TEST(ScanSnippetTest, AReturnInALambdaOrALocalClassIsTheirs) {
  EXPECT_FALSE(Scan("auto f = [&](int v) -> int { if (v) return 1; return 2; };").returns_from_kernel);
  EXPECT_FALSE(Scan("struct S { int get() const { return 3; } }; S s;").returns_from_kernel);
  EXPECT_FALSE(Scan("out[0] = [] { return 1; }();").returns_from_kernel);
  EXPECT_FALSE(Scan("// return\nconst char* s = \"return\"; int returned = 0;").returns_from_kernel);
}

TEST(ScanSnippetTest, BreakAndContinueOutsideTheSnippetsOwnLoopsEscape) {
  EXPECT_THAT(Scan("if (x) break;").escaping_jumps, ElementsAre("break"));
  EXPECT_THAT(Scan("{ x = 1; continue; }").escaping_jumps, ElementsAre("continue"));
  // A continue inside a switch still continues the enclosing (builder) loop.
  EXPECT_THAT(Scan("switch (x) { case 1: continue; default: break; }").escaping_jumps,
              ElementsAre("continue"));
  // A lambda's body is a function of its own: a break there is a compile error, not an escape.
  EXPECT_THAT(Scan("for (int i = 0; i < 2; ++i) if (i) break; else continue; break;").escaping_jumps,
              ElementsAre("break"));
}

TEST(ScanSnippetTest, JumpsInsideTheSnippetsOwnLoopsSwitchesAndLabelsStay) {
  EXPECT_THAT(Scan("for (int j = 0; j < 4; ++j) { if (j == 2) continue; if (j) break; }\n"
                   "while (true) break;\n"
                   "do { if (y) break; else continue; } while (false);\n"
                   "switch (t) { case (1): x = 1; break; default: break; }\n"
                   "for (int v : {1, 2}) if (v) break;\n"
                   "if (z) goto done; x = 2; done: ;")
                  .escaping_jumps,
              IsEmpty());
}

TEST(ScanSnippetTest, AGotoToALabelTheSnippetDoesNotDefineEscapes) {
  EXPECT_THAT(Scan("if (x) goto out; y = a ? b : c;").escaping_jumps, ElementsAre("goto out"));
  EXPECT_THAT(Scan("auto f = [] { goto in; in: return; };").escaping_jumps, IsEmpty());
}

TEST(ScanSnippetTest, ReportsTheFirstUnbalancedBracket) {
  EXPECT_EQ(Scan("if (x) { y = 1;").unbalanced, "'{' on line 1 is never closed");
  EXPECT_EQ(Scan("y = 1; }").unbalanced, "unbalanced '}' on line 1");
  EXPECT_EQ(Scan("y = f(1;\n}").unbalanced, "'(' on line 1 is closed by '}' on line 2");
  EXPECT_EQ(Scan("y = (1));").unbalanced, "unbalanced ')' on line 1");
  EXPECT_EQ(Scan("y = a[(1)] + (b[2]) + \"(\";").unbalanced, "");
}

TEST(ScanSnippetTest, SeesExternSharedOnlyAsTokens) {
  EXPECT_TRUE(Scan("extern __shared__ float smem[];").declares_extern_shared);
  EXPECT_FALSE(Scan("__shared__ float tile[32]; // extern").declares_extern_shared);
}

TEST(ScanSnippetTest, ASyncthreadsUnderAnIfOfTheStatementIsConditional) {
  const SnippetFacts facts = Scan("int x = 0;\nif (threadIdx.x < 16) {\n  __syncthreads();\n}");
  EXPECT_EQ(facts.block_barrier, "`__syncthreads` on line 3");
  EXPECT_EQ(facts.conditional_block_barrier, "`__syncthreads` on line 3");
  EXPECT_EQ(Scan("if (a) x = 1; else __syncthreads_or(p);").conditional_block_barrier,
            "`__syncthreads_or` on line 1");
  EXPECT_EQ(Scan("switch (t) { case 0: __syncthreads(); break; }").conditional_block_barrier,
            "`__syncthreads` on line 1");
}

TEST(ScanSnippetTest, ASyncthreadsOutsideBranchesOrInALoopOrLambdaIsNotConditional) {
  SnippetFacts facts = Scan("for (int i = 0; i < 4; ++i) __syncthreads();");
  EXPECT_EQ(facts.block_barrier, "`__syncthreads` on line 1");
  EXPECT_THAT(facts.conditional_block_barrier, IsEmpty());
  facts = Scan("if (__syncthreads_or(flag)) x = 1;");  // the condition runs for everyone
  EXPECT_EQ(facts.block_barrier, "`__syncthreads_or` on line 1");
  EXPECT_THAT(facts.conditional_block_barrier, IsEmpty());
  facts = Scan("// if (a) __syncthreads();\nconst char* s = \"if (a) __syncthreads();\";");
  EXPECT_THAT(facts.block_barrier, IsEmpty());
  EXPECT_THAT(Scan("auto f = [&] { if (a) __syncthreads(); };").conditional_block_barrier,
              IsEmpty());
}

}  // namespace
}  // namespace warptrace
