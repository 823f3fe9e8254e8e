// Table: a columnar table built row by row, in the shape the Arrow C Data Interface exports
// (arrow_export.h) without a copy: an int64 column is a contiguous int64 buffer, a string
// column an int32 offsets buffer and a byte buffer, a nullable column a validity byte per row
// (packed into Arrow's bitmap at export). The warptrace tables (schema.h) are Tables.
//
//   Table t("units", {{"block", ColumnType::kInt64}, {"role", ColumnType::kUtf8, true}});
//   t.AddRow().Int(3).Null();
//   t.AddRow().Int(4).Str("producer");
//
// A row must set every column, in order; Row checks it when it goes out of scope (a
// programming error: it aborts with the table and column named, in every build mode).
// Thread-safety: none (a Table is built by one thread, then read-only).
#ifndef WARPTRACE_PROFILER_OUTPUTS_TABLES_TABLE_H_
#define WARPTRACE_PROFILER_OUTPUTS_TABLES_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace warptrace {

enum class ColumnType { kInt64, kFloat64, kBool, kUtf8 };
// Arrow's format string: "l", "g", "b", "u".
const char* ArrowFormat(ColumnType type);
// "int64", "double", "bool", "string": how docs/tables.md names them.
const char* ColumnTypeName(ColumnType type);

struct ColumnSpec {
  std::string name;
  ColumnType type = ColumnType::kInt64;
  bool nullable = false;
};

struct Column {
  ColumnSpec spec;
  std::vector<int64_t> ints;       // kInt64
  std::vector<double> doubles;     // kFloat64
  std::vector<uint8_t> bools;      // kBool: one byte per row (packed at export)
  std::vector<int32_t> offsets{0}; // kUtf8: rows + 1 offsets into chars
  std::string chars;               // kUtf8
  std::vector<uint8_t> valid;      // nullable: one byte per row, 1 = a value
  int64_t nulls = 0;
};

class Table {
 public:
  class Row {
   public:
    Row(Table& table) : table_(table) {}
    Row(const Row&) = delete;
    ~Row();
    Row& Int(int64_t v);
    Row& Double(double v);
    Row& Bool(bool v);
    Row& Str(absl::string_view v);
    Row& Null();  // only on a nullable column
    Row& MaybeInt(const std::optional<int64_t>& v) { return v ? Int(*v) : Null(); }

   private:
    Column& Next(ColumnType type);
    Table& table_;
    size_t column_ = 0;
  };

  Table(std::string name, std::vector<ColumnSpec> columns);
  Row AddRow() { ++rows_; return Row(*this); }

  const std::string& name() const { return name_; }
  int64_t rows() const { return rows_; }
  const std::vector<Column>& columns() const { return columns_; }
  // The column named `name`, or nullptr.
  const Column* Find(absl::string_view name) const;

 private:
  std::string name_;
  std::vector<Column> columns_;
  int64_t rows_ = 0;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_TABLES_TABLE_H_
