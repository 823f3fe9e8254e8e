// The C API's tables (warptrace.h, "tables"): the dump front end with DumpRequest::tables,
// its TraceTables held by an opaque handle, each table exported as an Arrow C stream
// (profiler/outputs/tables/arrow_export.h) that shares the table with the handle.
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/exception_status.h"
#include "base/status_macros.h"
#include "capi/error.h"
#include "capi/request.h"
#include "capi/warptrace.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/frontend/dump_settings.h"
#include "profiler/outputs/tables/arrow_export.h"
#include "profiler/outputs/tables/schema.h"

struct warptrace_tables {
  warptrace::TraceTables tables;
};

namespace warptrace {
namespace {

warptrace_code TablesFail(const absl::Status& status, warptrace_error** error) {
  const auto code = static_cast<warptrace_code>(static_cast<int>(status.code()));
  if (error != nullptr) {
    *error = new (std::nothrow) warptrace_error{code, std::string(status.message())};
  }
  return code;
}

// Runs `body`; an exception becomes an error instead of crossing into C.
template <typename Body>
warptrace_code TablesGuard(warptrace_error** error, Body body) {
  if (error != nullptr) *error = nullptr;
  try {
    const absl::Status status = body();
    return status.ok() ? WARPTRACE_OK : TablesFail(status, error);
  } catch (...) {
    return TablesFail(StatusOfCurrentException(), error);  // base/exception_status.h
  }
}

struct TablesRequest {
  TableOptions options;
  // allow_truncated, compensate_overhead, sm_clock_khz: the dump's settings, by its schema
  // (dump_settings.h); tables keep each broken unit's valid prefix unless asked not to.
  DumpSettings settings = [] {
    DumpSettings s;
    s.allow_truncated = true;
    return s;
  }();
};

absl::Status BadKey(absl::string_view key, absl::string_view type) {
  return absl::InvalidArgumentError(
      absl::StrCat("the tables request's \"", key, "\" must be ", type));
}

absl::StatusOr<TablesRequest> ParseTablesRequest(const char* text, absl::string_view prefix) {
  TablesRequest r;
  r.options.launch_id = std::string(prefix);
  if (text == nullptr || text[0] == '\0') return r;
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value) {
    return absl::InvalidArgumentError(
        absl::StrCat("the tables request is not JSON: ", llvm::toString(value.takeError())));
  }
  const llvm::json::Object* object = value->getAsObject();
  if (object == nullptr) return absl::InvalidArgumentError("the tables request is not a JSON object");
  for (const auto& [key_ref, v] : *object) {
    const std::string key = key_ref.str();
    if (key == "launch_id") {
      llvm::Optional<llvm::StringRef> s = v.getAsString();
      if (!s || s->empty()) return BadKey(key, "a non-empty string");
      r.options.launch_id = s->str();
    } else if (key == "tags") {
      const llvm::json::Object* tags = v.getAsObject();
      if (tags == nullptr) return BadKey(key, "an object of strings");
      for (const auto& [k, t] : *tags) {
        if (!t.getAsString()) return BadKey(key, absl::StrCat("an object of strings (\"", k.str(), "\" is not)"));
      }
      std::string json;
      llvm::raw_string_ostream os(json);
      os << llvm::json::Value(llvm::json::Object(*tags));  // keys sorted: canonical
      os.flush();
      r.options.tags_json = json;
    } else if (key == "allow_truncated" || key == "compensate_overhead" ||
               key == "sm_clock_khz") {
      RETURN_IF_ERROR(SetDumpSetting(r.settings, key, capi_internal::SettingValueFromJson(v),
                                     absl::StrCat("the tables request's \"", key, "\"")));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "the tables request has an unknown key \"", key,
          "\"; known: launch_id, tags, allow_truncated, compensate_overhead, sm_clock_khz"));
    }
  }
  return r;
}

absl::Status TablesFromPrefix(const char* prefix, const char* request_json,
                              warptrace_tables** out) {
  if (out == nullptr) return absl::InvalidArgumentError("tables is NULL");
  *out = nullptr;
  if (prefix == nullptr) return absl::InvalidArgumentError("prefix is NULL");
  ASSIGN_OR_RETURN(const TablesRequest r, ParseTablesRequest(request_json, prefix));
  ASSIGN_OR_RETURN(LoadedDump loaded,
                   LoadForDump(prefix, r.settings.sm_clock_khz, 1, /*in_place=*/true));
  ASSIGN_OR_RETURN(DumpRequest request, MakeDumpRequest(r.settings, nullptr));
  request.tables = r.options;
  DumpOutcome outcome = DumpLoadedToFiles(loaded, request);
  if (!outcome.status.ok()) {
    return absl::Status(outcome.status.code(),
                        absl::StrCat(prefix, ": ", outcome.status.message()));
  }
  *out = new warptrace_tables{std::move(*outcome.tables)};
  return absl::OkStatus();
}

}  // namespace
}  // namespace warptrace

extern "C" {

int warptrace_tables_schema_version(void) {
  return static_cast<int>(warptrace::kTablesSchemaVersion);
}

warptrace_code warptrace_tables_from_prefix(const char* prefix, const char* request,
                                            warptrace_tables** tables, warptrace_error** error) {
  return warptrace::TablesGuard(
      error, [&] { return warptrace::TablesFromPrefix(prefix, request, tables); });
}

size_t warptrace_tables_count(const warptrace_tables* tables) {
  return tables == nullptr ? 0 : tables->tables.tables.size();
}

const char* warptrace_tables_name(const warptrace_tables* tables, size_t i) {
  if (tables == nullptr || i >= tables->tables.tables.size()) return nullptr;
  return tables->tables.tables[i]->name().c_str();
}

int64_t warptrace_tables_rows(const warptrace_tables* tables, const char* name) {
  if (tables == nullptr || name == nullptr) return -1;
  std::shared_ptr<warptrace::Table> t = tables->tables.Get(name);
  return t == nullptr ? -1 : t->rows();
}

warptrace_code warptrace_tables_export(const warptrace_tables* tables, const char* name,
                                       struct ArrowArrayStream* out, warptrace_error** error) {
  return warptrace::TablesGuard(error, [&]() -> absl::Status {
    if (tables == nullptr || name == nullptr || out == nullptr) {
      return absl::InvalidArgumentError("tables, name and out must not be NULL");
    }
    std::shared_ptr<warptrace::Table> t = tables->tables.Get(name);
    if (t == nullptr) {
      return absl::NotFoundError(absl::StrCat("no table \"", name, "\"; the tables are ",
                                              absl::StrJoin(warptrace::TableNames(), ", ")));
    }
    warptrace::ExportTableStream(std::move(t), out);
    return absl::OkStatus();
  });
}

void warptrace_tables_free(warptrace_tables* tables) { delete tables; }

}  // extern "C"
