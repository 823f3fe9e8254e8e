#include "jit/builder/kernel.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace warptrace {
namespace {

TEST(ExprTest, KnowsTheValueOfDecimalIntegerLiteralsOnly) {
  EXPECT_TRUE(Expr("-12").is_literal());
  EXPECT_EQ(Expr("-12").literal(), -12);
  EXPECT_EQ(Expr(int64_t{7}).text(), "7");
  EXPECT_TRUE(Expr(7).is_literal());
  for (const char* text : {"n", "0x10", "1e3", "", "-", "12u", "1234567890123456789"}) {
    EXPECT_FALSE(Expr(text).is_literal()) << text;
  }
}

TEST(KernelTest, StaticSharedBytesAddsEveryArray) {
  Kernel kernel;
  kernel.shared_arrays = {{"float", "a", 32, 4, {32}, false, false, ""},
                          {"double", "b", 3, 8, {3}, false, false, ""},
                          {"int", "c", 2, 4, {2}, false, /*in_statement=*/true, "k > s"}};
  EXPECT_EQ(kernel.StaticSharedBytes(), 32u * 4 + 3 * 8 + 2 * 4);
}

TEST(KernelTest, RoleAxesHaveTheirThreadCounts) {
  EXPECT_EQ(RoleAxisThreads(RoleAxis::kWarp), 32u);
  EXPECT_EQ(RoleAxisThreads(RoleAxis::kWarpgroup), 128u);
  EXPECT_STREQ(RoleAxisName(RoleAxis::kWarpgroup), "warpgroup");
}

}  // namespace
}  // namespace warptrace
