#include "profiler/outputs/tables/table.h"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace warptrace {
namespace {

[[noreturn]] void Die(const std::string& table, const std::string& column, const char* what) {
  std::fprintf(stderr, "warptrace: table %s, column %s: %s\n", table.c_str(), column.c_str(),
               what);
  std::abort();
}

}  // namespace

namespace {

// Each type's name and its Arrow C data interface format string, one row each.
struct ColumnTypeInfo {
  ColumnType type;
  const char* name;
  const char* arrow;
};
constexpr ColumnTypeInfo kColumnTypeInfo[] = {
    {ColumnType::kInt64, "int64", "l"},
    {ColumnType::kFloat64, "double", "g"},
    {ColumnType::kBool, "bool", "b"},
    {ColumnType::kUtf8, "string", "u"},
};

const ColumnTypeInfo& InfoOf(ColumnType type) {
  for (const ColumnTypeInfo& info : kColumnTypeInfo) {
    if (info.type == type) return info;
  }
  return kColumnTypeInfo[0];  // int64, as before, for a value out of range
}

}  // namespace

const char* ArrowFormat(ColumnType type) { return InfoOf(type).arrow; }

const char* ColumnTypeName(ColumnType type) { return InfoOf(type).name; }

Table::Table(std::string name, std::vector<ColumnSpec> columns) : name_(std::move(name)) {
  columns_.reserve(columns.size());
  for (ColumnSpec& spec : columns) {
    Column& c = columns_.emplace_back();
    c.spec = std::move(spec);
  }
}

const Column* Table::Find(absl::string_view name) const {
  for (const Column& c : columns_) {
    if (c.spec.name == name) return &c;
  }
  return nullptr;
}

Table::Row::~Row() {
  if (column_ != table_.columns_.size()) {
    Die(table_.name_, column_ < table_.columns_.size() ? table_.columns_[column_].spec.name : "?",
        "a row left columns unset");
  }
}

Column& Table::Row::Next(ColumnType type) {
  if (column_ >= table_.columns_.size()) Die(table_.name_, "(past the last)", "too many values");
  Column& c = table_.columns_[column_++];
  if (c.spec.type != type) Die(table_.name_, c.spec.name, "a value of the wrong type");
  if (c.spec.nullable) c.valid.push_back(1);
  return c;
}

Table::Row& Table::Row::Int(int64_t v) {
  Next(ColumnType::kInt64).ints.push_back(v);
  return *this;
}

Table::Row& Table::Row::Double(double v) {
  Next(ColumnType::kFloat64).doubles.push_back(v);
  return *this;
}

Table::Row& Table::Row::Bool(bool v) {
  Next(ColumnType::kBool).bools.push_back(v ? 1 : 0);
  return *this;
}

Table::Row& Table::Row::Str(absl::string_view v) {
  Column& c = Next(ColumnType::kUtf8);
  c.chars.append(v.data(), v.size());
  if (c.chars.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    Die(table_.name_, c.spec.name, "more than 2 GiB of text in one table");
  }
  c.offsets.push_back(static_cast<int32_t>(c.chars.size()));
  return *this;
}

Table::Row& Table::Row::Null() {
  if (column_ >= table_.columns_.size()) Die(table_.name_, "(past the last)", "too many values");
  Column& c = table_.columns_[column_++];
  if (!c.spec.nullable) Die(table_.name_, c.spec.name, "a null in a column that is not nullable");
  c.valid.push_back(0);
  ++c.nulls;
  switch (c.spec.type) {
    case ColumnType::kInt64: c.ints.push_back(0); break;
    case ColumnType::kFloat64: c.doubles.push_back(0); break;
    case ColumnType::kBool: c.bools.push_back(0); break;
    case ColumnType::kUtf8: c.offsets.push_back(static_cast<int32_t>(c.chars.size())); break;
  }
  return *this;
}

}  // namespace warptrace
