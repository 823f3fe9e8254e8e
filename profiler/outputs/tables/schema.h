// The warptrace tables, schema version kTablesSchemaVersion (docs/tables.md is the reader's
// page; tests/profiler/outputs/tables/schema_test keeps the two equal). One set per launch
// (one dumped trace); every table starts with `schema_version` and `launch_id`, and keys join
// them: (launch_id, record) names a trace unit, (launch_id, record, slice) one of its slices,
// (launch_id, site) a record site.
//
//   launches  one row: kernel, device, grid, block, cluster shape, unit kind, placement,
//             host time, the caller's tags (a JSON object of strings), counts.
//   units     one row per trace unit (record): block, cluster and CTA rank, unit, SM, role,
//             verdict, events, dropped, start/end ns.
//   slices    one row per slice of the timeline (regions, loop iterations, the kernel,
//             waits): unit, site, name, kind, depth, start ns, duration ns.
//   waits     one row per wait slice (barrier and phase waits): barrier, phase, wait
//             start/end, and the unit whose arrival released it, with the arrival's time
//             (null where the trace records no hand-off).
//   links     one row per hand-off of the timeline (arrival -> release, issue -> completion,
//             a multicast copy's landing in a peer CTA).
//   copies    one row per async span (async copies and wgmma groups): engine and bytes where
//             the site table knows them (null otherwise), issue and completion.
//   sites     the site table: id, name, kind, builder path.
//   roles, role_waits, critical_path, diagnosis: the analysis (profiler/analysis) as rows.
// Changing a column (name, type, meaning) is a new version: bump kTablesSchemaVersion and
// docs/tables.md together. Readers refuse datasets that mix versions.
#ifndef WARPTRACE_PROFILER_OUTPUTS_TABLES_SCHEMA_H_
#define WARPTRACE_PROFILER_OUTPUTS_TABLES_SCHEMA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "profiler/outputs/tables/table.h"

namespace warptrace {

inline constexpr int64_t kTablesSchemaVersion = 1;

// The table names, in the order TraceTables holds them.
const std::vector<std::string>& TableNames();
// An empty table of that name with its schema's columns; the empty name for an unknown one.
Table MakeTable(const std::string& name);

// One launch's tables, in TableNames() order.
struct TraceTables {
  std::vector<std::shared_ptr<Table>> tables;
  // The table named `name`, or nullptr.
  std::shared_ptr<Table> Get(const std::string& name) const;
};
TraceTables MakeTraceTables();

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_TABLES_SCHEMA_H_
