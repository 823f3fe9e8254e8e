// Tests of profiler/outputs/tables/schema.h: docs/tables.md documents exactly the columns of
// every table, with their types and nullability, and the version.
#include "profiler/outputs/tables/schema.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "profiler/outputs/tables/table.h"

namespace warptrace {
namespace {

std::string ReadDoc() {
  std::ifstream in("docs/tables.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// "### name" sections: their "| `column` | type |" rows as "column: type".
std::map<std::string, std::vector<std::string>> DocumentedColumns(const std::string& doc) {
  std::map<std::string, std::vector<std::string>> out;
  std::string table;
  for (absl::string_view line : absl::StrSplit(doc, '\n')) {
    if (absl::ConsumePrefix(&line, "### ")) {
      table = std::string(line);
      continue;
    }
    if (table.empty() || !absl::StartsWith(line, "| `")) continue;
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    if (cells.size() < 4) continue;
    std::string name(absl::StripAsciiWhitespace(cells[1]));
    name = name.substr(1, name.size() - 2);  // the backquotes
    out[table].push_back(absl::StrCat(name, ": ", absl::StripAsciiWhitespace(cells[2])));
  }
  return out;
}

TEST(TablesSchema, TheDocsListEveryColumnOfEveryTableWithItsType) {
  const std::string doc = ReadDoc();
  ASSERT_FALSE(doc.empty()) << "docs/tables.md is not in the runfiles";
  const auto documented = DocumentedColumns(doc);
  for (const std::string& name : TableNames()) {
    const Table t = MakeTable(name);
    ASSERT_EQ(t.name(), name);
    std::vector<std::string> expected;
    for (size_t i = 2; i < t.columns().size(); ++i) {  // after schema_version, launch_id
      const ColumnSpec& c = t.columns()[i].spec;
      expected.push_back(absl::StrCat(c.name, ": ", ColumnTypeName(c.type),
                                      c.nullable ? ", nullable" : ""));
    }
    auto it = documented.find(name);
    ASSERT_NE(it, documented.end()) << "docs/tables.md has no section ### " << name;
    EXPECT_EQ(it->second, expected) << "docs/tables.md, table " << name;
  }
  EXPECT_EQ(documented.size(), TableNames().size());
}

TEST(TablesSchema, TheDocsStateTheVersionAndEveryTableStartsWithItsKeys) {
  EXPECT_TRUE(absl::StrContains(ReadDoc(), absl::StrCat("## Schema, version ",
                                                        kTablesSchemaVersion)));
  for (const std::string& name : TableNames()) {
    const Table t = MakeTable(name);
    ASSERT_GE(t.columns().size(), 3u) << name;
    EXPECT_EQ(t.columns()[0].spec.name, "schema_version") << name;
    EXPECT_EQ(t.columns()[1].spec.name, "launch_id") << name;
  }
}

TEST(TablesSchema, AnUnknownTableNameGivesAnUnnamedTable) {
  EXPECT_EQ(MakeTable("nope").name(), "");
}

}  // namespace
}  // namespace warptrace
