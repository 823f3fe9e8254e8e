// Tests of profiler/outputs/tables/arrow_export.h: the exported structs read back the way
// the Arrow C Data Interface spec says a consumer reads them.
#include "profiler/outputs/tables/arrow_export.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "profiler/outputs/tables/arrow_c_abi.h"
#include "profiler/outputs/tables/table.h"

namespace warptrace {
namespace {

std::shared_ptr<Table> Sample() {
  auto t = std::make_shared<Table>(
      "sample", std::vector<ColumnSpec>{{"id", ColumnType::kInt64},
                                        {"name", ColumnType::kUtf8, true},
                                        {"share", ColumnType::kFloat64},
                                        {"flag", ColumnType::kBool},
                                        {"maybe", ColumnType::kInt64, true}});
  t->AddRow().Int(7).Str("load").Double(0.5).Bool(true).Null();
  t->AddRow().Int(8).Null().Double(0.25).Bool(false).Int(-3);
  t->AddRow().Int(9).Str("mma").Double(1.0).Bool(true).Int(4);
  return t;
}

bool Bit(const void* bitmap, int64_t i) {
  return (static_cast<const uint8_t*>(bitmap)[i / 8] >> (i % 8)) & 1;
}

std::string Utf8At(const ArrowArray& a, int64_t i) {
  const auto* offsets = static_cast<const int32_t*>(a.buffers[1]);
  const char* chars = static_cast<const char*>(a.buffers[2]);
  return std::string(chars + offsets[i], offsets[i + 1] - offsets[i]);
}

TEST(ArrowExport, SchemaIsAStructOfNamedTypedColumnsWithNullableFlags) {
  ArrowSchema s;
  ExportTableSchema(Sample(), &s);
  EXPECT_STREQ(s.format, "+s");
  ASSERT_EQ(s.n_children, 5);
  const char* formats[] = {"l", "u", "g", "b", "l"};
  const char* names[] = {"id", "name", "share", "flag", "maybe"};
  const bool nullable[] = {false, true, false, false, true};
  for (int i = 0; i < 5; ++i) {
    EXPECT_STREQ(s.children[i]->format, formats[i]);
    EXPECT_STREQ(s.children[i]->name, names[i]);
    EXPECT_EQ((s.children[i]->flags & ARROW_FLAG_NULLABLE) != 0, nullable[i]) << names[i];
  }
  s.release(&s);
  EXPECT_EQ(s.release, nullptr);
}

TEST(ArrowExport, ArrayBuffersHoldTheRowsWithValidityBitmapsOnlyWhereNullsAre) {
  ArrowArray a;
  ExportTableArray(Sample(), &a);
  ASSERT_EQ(a.length, 3);
  ASSERT_EQ(a.n_children, 5);
  const ArrowArray& id = *a.children[0];
  EXPECT_EQ(id.n_buffers, 2);
  EXPECT_EQ(id.buffers[0], nullptr);
  EXPECT_EQ(static_cast<const int64_t*>(id.buffers[1])[2], 9);
  const ArrowArray& name = *a.children[1];
  EXPECT_EQ(name.n_buffers, 3);
  EXPECT_EQ(name.null_count, 1);
  EXPECT_TRUE(Bit(name.buffers[0], 0));
  EXPECT_FALSE(Bit(name.buffers[0], 1));
  EXPECT_EQ(Utf8At(name, 0), "load");
  EXPECT_EQ(Utf8At(name, 1), "");
  EXPECT_EQ(Utf8At(name, 2), "mma");
  EXPECT_EQ(static_cast<const double*>(a.children[2]->buffers[1])[1], 0.25);
  const ArrowArray& flag = *a.children[3];
  EXPECT_TRUE(Bit(flag.buffers[1], 0));
  EXPECT_FALSE(Bit(flag.buffers[1], 1));
  EXPECT_TRUE(Bit(flag.buffers[1], 2));
  const ArrowArray& maybe = *a.children[4];
  EXPECT_EQ(maybe.null_count, 1);
  EXPECT_FALSE(Bit(maybe.buffers[0], 0));
  EXPECT_EQ(static_cast<const int64_t*>(maybe.buffers[1])[1], -3);
  a.release(&a);
  EXPECT_EQ(a.release, nullptr);
}

TEST(ArrowExport, AChildMovedOutOutlivesItsReleasedParent) {
  ArrowArray a;
  ExportTableArray(Sample(), &a);
  ArrowArray moved;
  std::memcpy(&moved, a.children[1], sizeof(ArrowArray));
  a.children[1]->release = nullptr;  // the spec's move
  a.release(&a);
  EXPECT_EQ(Utf8At(moved, 2), "mma");
  moved.release(&moved);
  EXPECT_EQ(moved.release, nullptr);
}

TEST(ArrowExport, AStreamYieldsTheTableOnceThenEnds) {
  ArrowArrayStream stream;
  ExportTableStream(Sample(), &stream);
  ArrowSchema schema;
  ASSERT_EQ(stream.get_schema(&stream, &schema), 0);
  EXPECT_EQ(schema.n_children, 5);
  schema.release(&schema);
  ArrowArray batch;
  ASSERT_EQ(stream.get_next(&stream, &batch), 0);
  ASSERT_NE(batch.release, nullptr);
  EXPECT_EQ(batch.length, 3);
  ArrowArray end;
  ASSERT_EQ(stream.get_next(&stream, &end), 0);
  EXPECT_EQ(end.release, nullptr);
  stream.release(&stream);
  EXPECT_EQ(stream.release, nullptr);
  // The batch keeps the table alive after the stream is gone.
  EXPECT_EQ(static_cast<const int64_t*>(batch.children[0]->buffers[1])[0], 7);
  batch.release(&batch);
}

TEST(ArrowExport, AnEmptyTableStreamsItsSchemaAndNoBatch) {
  ArrowArrayStream stream;
  ExportTableStream(std::make_shared<Table>("empty", std::vector<ColumnSpec>{{"x"}}), &stream);
  ArrowArray batch;
  ASSERT_EQ(stream.get_next(&stream, &batch), 0);
  EXPECT_EQ(batch.release, nullptr);
  stream.release(&stream);
}

TEST(TableDeathTest, ARowThatLeavesAColumnUnsetAborts) {
  Table t("t", {{"a"}, {"b"}});
  EXPECT_DEATH(t.AddRow().Int(1), "table t, column b: a row left columns unset");
}

TEST(TableDeathTest, ANullInAColumnThatIsNotNullableAborts) {
  Table t("t", {{"a"}});
  EXPECT_DEATH(t.AddRow().Null(), "not nullable");
}

}  // namespace
}  // namespace warptrace
