// The host backend's source lowering: the subscript expressions of wgmma register arrays it
// routes through the run-time check, and the declarations and members it leaves alone.
#include "jit/host/compiler/source_lowering.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace warptrace::host {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Lower(const std::string& source) {
  uint32_t site = 0;
  return LowerForHost(source, &site);
}

// The wrap of a subscript expression `text` of `name`.
std::string Access(const std::string& name, const std::string& text) {
  return "::warptrace_host::wgmma::Access(" + text + ", \"" + name + "\", __builtin_FILE())";
}

TEST(SourceLoweringTest, AccumulatorSubscriptsGoThroughTheCheckWherever) {
  const std::string lowered = Lower(
      "float acc[64];\n"
      "for (int i = 0; i < 64; ++i) acc[i] = 0.0f;\n"
      "warptrace_wgmma_mma_async_bf16_ss<128, 0, 1>(acc, da, db, 1);\n"
      "out[0] = acc[1] * 2.0f; out[1] = 3.0f * acc [2]; f(x, acc[3]);\n"
      "return acc[4];\n"
      "float* p = &acc[5];\n");
  EXPECT_THAT(lowered, HasSubstr("float acc[64];\n"));  // the declaration
  // Before the wgmma too: the wgmma.fence rule needs every access.
  EXPECT_THAT(lowered, HasSubstr("++i) " + Access("acc", "acc[i]") + " = 0.0f;"));
  EXPECT_THAT(lowered, HasSubstr("bf16_ss<128, 0, 1>(acc, da, db, 1)"));  // the operand
  EXPECT_THAT(lowered, HasSubstr("out[0] = " + Access("acc", "acc[1]") + " * 2.0f;"));
  EXPECT_THAT(lowered, HasSubstr("3.0f * " + Access("acc", "acc [2]") + ";"));
  EXPECT_THAT(lowered, HasSubstr("f(x, " + Access("acc", "acc[3]") + ");"));
  EXPECT_THAT(lowered, HasSubstr("return " + Access("acc", "acc[4]") + ";"));
  EXPECT_THAT(lowered, HasSubstr("float* p = &acc[5];"));  // an address, not an access
}

// The whole subscript chain is one wrap (the run time tells a register from a sub-array by
// its type), subscripted accumulators and A fragments of the RS form are found, and a
// subscript inside a subscript is wrapped inside.
TEST(SourceLoweringTest, WrapsWholeSubscriptChainsOfAccumulatorsAndAFragments) {
  const std::string lowered = Lower(
      "warptrace_wgmma_mma_async_bf16_ss<64>(d[m_it], da, db, 1);\n"
      "warptrace_wgmma_mma_async_bf16_rs<64>(o, p[kk], db, 1);\n"
      "x = d[m_it][w][0]; wgmma192(d[m_it], sa);\n"
      "p[kk][j] = bits; y = o[d[0][1][2]];\n");
  EXPECT_THAT(lowered, HasSubstr("x = " + Access("d", "d[m_it][w][0]") + ";"));
  EXPECT_THAT(lowered, HasSubstr("wgmma192(" + Access("d", "d[m_it]") + ", sa);"));
  EXPECT_THAT(lowered, HasSubstr(Access("p", "p[kk][j]") + " = bits;"));
  EXPECT_THAT(lowered,
              HasSubstr("y = " + Access("o", "o[" + Access("d", "d[0][1][2]") + "]") + ";"));
  // The calls' own operands: an identifier passed on is not a subscript expression.
  EXPECT_THAT(lowered, HasSubstr("_rs<64>(o, " + Access("p", "p[kk]") + ", db, 1);"));
}

// FA3's port calls one helper (flash::gemm) for both GEMMs: the arrays it is handed become
// register arrays through the helper's parameter, whatever either is called.
TEST(SourceLoweringTest, ArraysHandedToAHelperThatPassesThemToAWgmmaAreChecked) {
  const std::string lowered = Lower(
      "template <bool Zero>\n"
      "__device__ void gemm(float (&tCrC)[32], const unsigned (&tCrA)[4][4], int k) {\n"
      "  for (int kk = 0; kk < 4; ++kk)\n"
      "    warptrace_wgmma_mma_async_bf16_rs<64>(tCrC, tCrA[kk], k, Zero ? 0 : 1);\n"
      "}\n"
      "__global__ void attn(float* out) {\n"
      "  float tOrO[32]; unsigned tOrP[4][4]; float other[4];\n"
      "  gemm<false>(tOrO, tOrP, 1);\n"
      "  out[0] = tOrO[3] + other[1]; tOrP[0][1] = 2u;\n"
      "}\n");
  EXPECT_THAT(lowered, HasSubstr("out[0] = " + Access("tOrO", "tOrO[3]") + " + other[1];"));
  EXPECT_THAT(lowered, HasSubstr(Access("tOrP", "tOrP[0][1]") + " = 2u;"));
  EXPECT_THAT(lowered, HasSubstr("gemm<false>(tOrO, tOrP, 1);"));
  EXPECT_THAT(lowered, Not(HasSubstr("Access(other")));
}

TEST(SourceLoweringTest, DeclaratorsMembersCommentsAndOtherArraysAreLeftAlone) {
  const std::string lowered = Lower(
      "warptrace_wgmma_mma_async_bf16_rs<64>(acc, a, db, 0);\n"
      "float other[4], acc[32];  // acc[0] in a comment\n"
      "const char* s = \"acc[1]\";\n"
      "other[0] = 1.0f; t.acc[2] = 0; u->acc[3] = 0; ns::acc[4] = 0;\n"
      "__device__ void h(float (&acc)[32], const unsigned a[4]);\n");
  EXPECT_THAT(lowered, HasSubstr("float other[4], acc[32];  // acc[0] in a comment"));
  EXPECT_THAT(lowered, HasSubstr("\"acc[1]\""));
  EXPECT_THAT(lowered, HasSubstr("t.acc[2] = 0; u->acc[3] = 0; ns::acc[4] = 0;"));
  EXPECT_THAT(lowered, HasSubstr("(float (&acc)[32], const unsigned a[4])"));
  EXPECT_THAT(lowered, Not(HasSubstr("Access(")));
}

TEST(SourceLoweringTest, KeepsEveryLineWhereItWas) {
  const std::string source =
      "warptrace_wgmma_mma_async_bf16_ss<8>(d, da, db, 0);\nx = d[0];\ny = d[1];\n";
  const std::string lowered = Lower(source);
  EXPECT_EQ(std::count(lowered.begin(), lowered.end(), '\n'),
            std::count(source.begin(), source.end(), '\n'));
  EXPECT_THAT(lowered, HasSubstr(Access("d", "d[1]")));
}

TEST(SourceLoweringTest, MarkStatementsPutsAMarkerBeforeEachBuilderStatementInABody) {
  const std::string source =
      "#line 1 \"kernel k > preamble\"\n"
      "__device__ int twice(int x) { return 2 * x; }\n"
      "#line 4 \"k.cu\"\n"
      "extern \"C\" __global__ void k(int* out) {\n"
      "#line 1 \"kernel k > statement `int v = 1;`\"\n"
      "  int v = 1;\n"
      "#line 1 \"kernel k > if (v) > statement `out[0] = v;`\"\n"
      "    out[0] = v;  // {\n"
      "#line 1 \"kernel k > statement `} else {`\"\n"
      "  } else {\n"
      "#line 1 \"kernel k > statement `#pragma unroll ...`\"\n"
      "#pragma unroll\n"
      "}\n";
  const std::string marked = MarkStatements(source);
  EXPECT_EQ(std::count(marked.begin(), marked.end(), '\n'),
            std::count(source.begin(), source.end(), '\n'));
  EXPECT_THAT(marked, HasSubstr("\n  WARPTRACE_HOST_STATEMENT() int v = 1;\n"));
  EXPECT_THAT(marked, HasSubstr("\n    WARPTRACE_HOST_STATEMENT() out[0] = v;  // {\n"));
  // Not at file scope (a preamble), not before `}`, `else` or a directive.
  EXPECT_THAT(marked, HasSubstr("\n__device__ int twice"));
  EXPECT_THAT(marked, HasSubstr("\n  } else {\n"));
  EXPECT_THAT(marked, HasSubstr("\n#pragma unroll\n"));
  size_t markers = 0;
  for (size_t at = marked.find("WARPTRACE_HOST_STATEMENT"); at != std::string::npos;
       at = marked.find("WARPTRACE_HOST_STATEMENT", at + 1)) {
    ++markers;
  }
  EXPECT_EQ(markers, 2u);
}

}  // namespace
}  // namespace warptrace::host
