#include "base/enum_table.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

enum class Colour { kRed, kGreen, kBlue };

constexpr EnumTable<Colour, 3> kColours{"colour", {{
    {Colour::kRed, "red"},
    {Colour::kGreen, "green"},
    {Colour::kBlue, "blue"},
}}};

constexpr EnumTable<Colour, 3> kDocumented{
    "style",
    {{
        {Colour::kRed, "r", "the warm one"},
        {Colour::kGreen, "g", "the middle one"},
        {Colour::kRed, "rouge"},  // an alias: parsed, never printed
    }},
    EnumCase::kIgnore};

TEST(EnumTableTest, NamesAndParsesEveryValueBothWays) {
  static_assert(kColours.Covers(3));
  static_assert(!kDocumented.Covers(3), "kBlue has no name there");
  for (Colour c : {Colour::kRed, Colour::kGreen, Colour::kBlue}) {
    EXPECT_THAT(kColours.Parse(kColours.Name(c)), IsOkAndHolds(c));
  }
  EXPECT_STREQ(kColours.Name(static_cast<Colour>(7)), "?");
  EXPECT_STREQ(kDocumented.Name(Colour::kRed), "r") << "the first name, not the alias";
}

TEST(EnumTableTest, AnUnknownNameListsTheChoices) {
  EXPECT_THAT(kColours.Parse("Red"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown colour \"Red\"; expected red, green or blue")));
  EXPECT_THAT(kDocumented.Parse("b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown style \"b\"; expected 'r' (the warm one) or 'g' (the "
                                 "middle one)")));
}

TEST(EnumTableTest, CaseAndAliasesAsTheTableSays) {
  EXPECT_THAT(kDocumented.Parse("ROUGE"), IsOkAndHolds(Colour::kRed));
  EXPECT_THAT(kDocumented.Parse("G"), IsOkAndHolds(Colour::kGreen));
  EXPECT_FALSE(kColours.Parse("GREEN").ok()) << "exact case unless the table ignores it";
}

}  // namespace
}  // namespace warptrace
