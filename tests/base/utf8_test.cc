#include "base/utf8.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace warptrace {
namespace {

TEST(Utf8Test, ValidTextComesBackUnchanged) {
  EXPECT_EQ(ValidUtf8(""), "");
  EXPECT_EQ(ValidUtf8("gemm k-loop"), "gemm k-loop");
  EXPECT_EQ(ValidUtf8("\xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80"),
            "\xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80");
  EXPECT_TRUE(IsValidUtf8("\xc3\xa9"));
}

TEST(Utf8Test, EachInvalidByteBecomesOneReplacementCharacter) {
  EXPECT_FALSE(IsValidUtf8("a\xff" "b"));
  EXPECT_EQ(ValidUtf8("a\xff" "b"), "a\xef\xbf\xbd" "b");
  // A lone continuation byte and a truncated two-byte sequence at the end.
  EXPECT_EQ(ValidUtf8("\x80x\xc3"), "\xef\xbf\xbdx\xef\xbf\xbd");
  EXPECT_TRUE(IsValidUtf8(ValidUtf8("\xfe\xfe\xc0\xaf")));
}

TEST(Utf8Test, EmbeddedNulIsKept) {
  const std::string text("a\0b", 3);
  EXPECT_EQ(ValidUtf8(text), text);
}

}  // namespace
}  // namespace warptrace
