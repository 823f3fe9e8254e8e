// The host backend's source lowering: the element accesses of wgmma accumulators it routes
// through the pending-group check, and the declarations it leaves alone.
#include "jit/host/source_lowering.h"

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

constexpr char kAccess[] = "::warptrace_host::wgmma::Access(acc, \"acc\", __builtin_FILE())";

TEST(SourceLoweringTest, AccumulatorAccessesAfterTheWgmmaGoThroughTheCheck) {
  const std::string lowered = Lower(
      "float acc[64];\n"
      "for (int i = 0; i < 64; ++i) acc[i] = 0.0f;\n"
      "warptrace_wgmma_mma_async_bf16_ss<128, 0, 1>(acc, da, db, 1);\n"
      "out[0] = acc[1] * 2.0f; out[1] = 3.0f * acc [2]; f(x, acc[3]);\n"
      "return acc[4];\n"
      "float* p = &acc[5];\n");
  EXPECT_THAT(lowered, HasSubstr("float acc[64];\n"));                  // the declaration
  EXPECT_THAT(lowered, HasSubstr("++i) acc[i] = 0.0f;"));               // before any wgmma
  EXPECT_THAT(lowered, HasSubstr("bf16_ss<128, 0, 1>(acc, da, db, 1)"));  // the operand
  EXPECT_THAT(lowered, HasSubstr(std::string("out[0] = ") + kAccess + "[1] * 2.0f;"));
  EXPECT_THAT(lowered, HasSubstr(std::string("3.0f * ") + kAccess + " [2];"));
  EXPECT_THAT(lowered, HasSubstr(std::string("f(x, ") + kAccess + "[3]);"));
  EXPECT_THAT(lowered, HasSubstr(std::string("return ") + kAccess + "[4];"));
  EXPECT_THAT(lowered, HasSubstr("float* p = &acc[5];"));  // an address, not an access
}

TEST(SourceLoweringTest, DeclaratorsCommentsAndOtherArraysAreLeftAlone) {
  const std::string lowered = Lower(
      "warptrace_wgmma_mma_async_bf16_rs<64>(acc, a, db, 0);\n"
      "float other[4], acc[32];  // acc[0] in a comment\n"
      "const char* s = \"acc[1]\";\n"
      "other[0] = 1.0f;\n");
  EXPECT_THAT(lowered, HasSubstr("float other[4], acc[32];  // acc[0] in a comment"));
  EXPECT_THAT(lowered, HasSubstr("\"acc[1]\""));
  EXPECT_THAT(lowered, Not(HasSubstr("Access(other")));
  EXPECT_THAT(lowered, Not(HasSubstr("Access(")));
}

TEST(SourceLoweringTest, KeepsEveryLineWhereItWas) {
  const std::string source =
      "warptrace_wgmma_mma_async_bf16_ss<8>(d, da, db, 0);\nx = d[0];\ny = d[1];\n";
  const std::string lowered = Lower(source);
  EXPECT_EQ(std::count(lowered.begin(), lowered.end(), '\n'),
            std::count(source.begin(), source.end(), '\n'));
  EXPECT_THAT(lowered, HasSubstr("Access(d, \"d\", __builtin_FILE())[1]"));
}

}  // namespace
}  // namespace warptrace::host
