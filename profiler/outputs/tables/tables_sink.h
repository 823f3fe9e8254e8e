// TablesSink: the dump's sink that turns a trace into the warptrace tables (schema.h), one
// launch: units, slices, waits, links, copies and sites as the dump walks the units, the
// launches row at the end, and the analysis rows from the dump's Analysis (AddAnalysis).
// Callers ask the front end for it (DumpRequest::tables, profiler/frontend/dump_files.h) and
// get the tables in DumpOutcome::tables; the C API exports them as Arrow streams.
//
//   TablesSink sink({.launch_id = "run7/rank3", .tags_json = R"({"rank":"3"})"});
//   ... DumpTrace(..., {&sink}, ...) ...
//   sink.AddAnalysis(analysis);
//   TraceTables tables = sink.Take();
//
// What it keeps: every row, in memory (the tables are the output, as a trace file is).
// Nothing is invented: a unit without a record has a units row (verdict "missing" or
// "corrupt", null SM and times) and no slices; a repaired unit's slices carry `repaired`;
// a wait whose release the trace does not record has null releasing columns; a copy's
// engine and bytes are null unless the site table knows them.
// Errors: none of its own (AddUnit always succeeds).
#ifndef WARPTRACE_PROFILER_OUTPUTS_TABLES_TABLES_SINK_H_
#define WARPTRACE_PROFILER_OUTPUTS_TABLES_TABLES_SINK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "format/layout.h"
#include "profiler/analysis/analysis.h"
#include "profiler/dump/sink.h"
#include "profiler/outputs/tables/schema.h"

namespace warptrace {

struct TableOptions {
  // The launch's key in every table; unique in a dataset (e.g. the trace's prefix).
  std::string launch_id;
  // The caller's tags as a JSON object of strings ({"rank": "3", "config": "bn128"}), kept
  // verbatim in launches.tags; "{}" when empty.
  std::string tags_json = "{}";
};

// What the site table says of an async copy's engine (SiteInfo::copy_engine as
// CopyEngineName: "cp.async", "bulk", "tma_2d", "tma_store_2d", ...) and bytes
// (SiteInfo::copy_bytes); nullopt where it does not say (CopyEngine::kNone: sidecars of
// version 1, other producers; bytes also where they are 0, a TMA store without its box).
std::optional<std::string> CopyEngineOf(const SiteInfo& site);
std::optional<int64_t> CopyBytesOf(const SiteInfo& site);

class TablesSink : public TraceSink {
 public:
  explicit TablesSink(TableOptions options);
  absl::string_view Name() const override { return "tables"; }
  absl::Status Begin(const TraceBegin& begin) override;
  absl::Status AddUnit(const UnitView& unit) override;
  absl::Status End(const TraceEnd& end) override;
  // The analysis rows (roles, role_waits, critical_path, diagnosis).
  void AddAnalysis(const Analysis& analysis);
  TraceTables Take() { return std::move(tables_); }

 private:
  void AddSlices(const UnitTimeline& unit);
  void AddWaits(const UnitTimeline& unit);
  void AddLinksAndCopies(const UnitTimeline& unit);
  Table& T(const char* name) { return *tables_.Get(name); }

  TableOptions options_;
  TraceTables tables_;
  const TraceLayout* layout_ = nullptr;
  uint32_t units_per_block_ = 1;
  uint64_t units_ = 0;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_TABLES_TABLES_SINK_H_
