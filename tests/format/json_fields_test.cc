#include "format/json_fields.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/JSON.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

llvm::json::Value Parse(const char* text) {
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(text);
  EXPECT_TRUE(static_cast<bool>(v)) << llvm::toString(v.takeError());
  return std::move(*v);
}

TEST(JsonFieldsTest, MissingFieldNamesTheSourceAndTheFullPath) {
  llvm::json::Value v = Parse(R"({"clock": {}})");
  JsonFields root(*v.getAsObject(), "", "sidecar");
  absl::StatusOr<JsonFields> clock = root.Object("clock");
  ASSERT_THAT(clock, IsOk());
  EXPECT_THAT(clock->Unsigned("num_sms"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("sidecar is missing field \"clock.num_sms\"")));
}

TEST(JsonFieldsTest, MistypedFieldQuotesWhatWasFound) {
  llvm::json::Value v = Parse(R"({"capacity": "ten", "name": 3})");
  JsonFields root(*v.getAsObject(), "", "Mosaic GPU sidecar");
  EXPECT_THAT(root.Unsigned("capacity"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Mosaic GPU sidecar field \"capacity\" must be an unsigned "
                                 "integer <= 4294967295, found \"ten\"")));
  EXPECT_THAT(root.String("name"), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("\"name\" must be a string, found 3")));
}

TEST(JsonFieldsTest, UnsignedHonoursItsRange) {
  llvm::json::Value v = Parse(R"({"a": 0, "b": 7, "c": -1})");
  JsonFields root(*v.getAsObject(), "", "sidecar");
  EXPECT_THAT(root.Unsigned("a", 10, 1), StatusIs(absl::StatusCode::kInvalidArgument,
                                                  HasSubstr("an integer in [1, 10]")));
  EXPECT_THAT(root.Unsigned("b", 10, 1), IsOkAndHolds(7u));
  EXPECT_THAT(root.Unsigned("c"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(JsonFieldsTest, DimsDefaultMissingTrailingElementsToOne) {
  llvm::json::Value v = Parse(R"({"grid": [4], "block": [128, 2, 1], "bad": [1, 0]})");
  JsonFields root(*v.getAsObject(), "", "Mosaic GPU sidecar");
  absl::StatusOr<Dim3> grid = root.Dims("grid", 1, 1);
  ASSERT_THAT(grid, IsOk());
  EXPECT_EQ(grid->x, 4u);
  EXPECT_EQ(grid->y, 1u);
  EXPECT_EQ(grid->z, 1u);
  EXPECT_THAT(root.Dims("grid"), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("found 1 elements")));
  EXPECT_THAT(root.Dims("bad", 1, 1), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("\"bad[1]\"")));
  absl::StatusOr<Dim3> block = root.Dims("block");
  ASSERT_THAT(block, IsOk());
  EXPECT_EQ(block->y, 2u);
}

TEST(JsonFieldsTest, StringsNamesTheBadElement) {
  llvm::json::Value v = Parse(R"({"names": ["a", "b"], "mixed": ["a", 3]})");
  JsonFields root(*v.getAsObject(), "", "sidecar");
  EXPECT_THAT(root.Strings("names"), IsOkAndHolds(ElementsAre("a", "b")));
  EXPECT_THAT(root.Strings("mixed"), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("\"mixed[1]\" must be a string")));
}

TEST(JsonFieldsTest, BoolAcceptsOnlyTrueOrFalse) {
  llvm::json::Value v = Parse(R"({"yes": true, "one": 1})");
  JsonFields root(*v.getAsObject(), "", "sidecar");
  EXPECT_THAT(root.Bool("yes"), IsOkAndHolds(true));
  EXPECT_THAT(root.Bool("one"), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("\"one\" must be true or false, found 1")));
}

}  // namespace
}  // namespace warptrace
