#include "profiler/outputs/tables/schema.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "profiler/outputs/tables/table.h"

namespace warptrace {
namespace {

constexpr ColumnType I = ColumnType::kInt64;
constexpr ColumnType F = ColumnType::kFloat64;
constexpr ColumnType B = ColumnType::kBool;
constexpr ColumnType S = ColumnType::kUtf8;
constexpr bool kNull = true;

std::vector<ColumnSpec> Keyed(std::vector<ColumnSpec> rest) {
  std::vector<ColumnSpec> columns = {{"schema_version", I}, {"launch_id", S}};
  columns.insert(columns.end(), rest.begin(), rest.end());
  return columns;
}

const std::map<std::string, std::vector<ColumnSpec>>& Schemas() {
  static const auto* schemas = new std::map<std::string, std::vector<ColumnSpec>>{
      {"launches",
       Keyed({{"kernel", S}, {"device", S}, {"grid_x", I}, {"grid_y", I}, {"grid_z", I},
              {"block_x", I}, {"block_y", I}, {"block_z", I}, {"cluster_x", I},
              {"cluster_y", I}, {"cluster_z", I}, {"unit_kind", S},
              {"units_per_block", I}, {"capacity", I}, {"placement", S},
              {"host_backend", B}, {"host_realtime_ns", I, kNull},
              {"host_boottime_ns", I, kNull}, {"globaltimer_origin_ns", I},
              {"span_ns", I}, {"units", I}, {"slices", I}, {"errors", I}, {"warnings", I},
              {"tags", S}})},
      {"units",
       Keyed({{"record", I}, {"block", I}, {"block_x", I}, {"block_y", I}, {"block_z", I},
              {"cluster", I}, {"cluster_rank", I}, {"unit", I}, {"sm", I, kNull}, {"role", S, kNull}, {"verdict", S},
              {"reason", S}, {"events", I}, {"dropped", I}, {"start_ns", I, kNull},
              {"end_ns", I, kNull}, {"duration_ns", I, kNull}})},
      {"slices",
       Keyed({{"record", I}, {"block", I}, {"unit", I}, {"slice", I}, {"site", I},
              {"name", S}, {"kind", S}, {"depth", I}, {"start_ns", I}, {"duration_ns", I},
              {"repaired", B}})},
      {"waits",
       Keyed({{"record", I}, {"block", I}, {"unit", I}, {"slice", I}, {"site", I},
              {"name", S}, {"barrier", I, kNull}, {"barrier_name", S, kNull},
              {"phase", I, kNull}, {"wait_start_ns", I}, {"wait_end_ns", I}, {"wait_ns", I},
              {"releasing_record", I, kNull}, {"releasing_unit", I, kNull},
              {"releasing_arrival_ns", I, kNull}})},
      {"links",
       Keyed({{"link", I}, {"kind", S}, {"block", I}, {"from_record", I}, {"from_unit", I},
              {"from_event", I}, {"from_ns", I}, {"to_record", I}, {"to_unit", I},
              {"to_event", I}, {"to_ns", I}, {"barrier", I, kNull}, {"phase", I},
              {"issue", I}, {"completing", B}})},
      {"copies",
       Keyed({{"record", I}, {"block", I}, {"unit", I}, {"site", I}, {"name", S},
              {"kind", S}, {"engine", S, kNull}, {"bytes", I, kNull}, {"issue", I},
              {"barrier", I, kNull}, {"issue_ns", I}, {"completion_ns", I, kNull},
              {"duration_ns", I, kNull}, {"completed", B}, {"lane", I}})},
      {"sites", Keyed({{"site", I}, {"name", S}, {"kind", S}, {"origin", S}})},
      {"roles",
       Keyed({{"role", S}, {"units", I}, {"unit_time_ns", I}, {"waiting_ns", I},
              {"waiting_share", F}, {"mma_groups", I}, {"mma_in_flight_share", F},
              {"median_unit_ns", I}})},
      {"role_waits",
       Keyed({{"role", S}, {"by", S}, {"family", S}, {"count", I}, {"wait_ns", I},
              {"share", F}})},
      {"critical_path",
       Keyed({{"role", S}, {"site", I}, {"name", S}, {"blocks", I}, {"block_fraction", F},
              {"path_ns", I}, {"mean_share", F}, {"cta_rank", I, kNull}})},
      {"diagnosis",
       Keyed({{"position", I}, {"kind", S}, {"score", F}, {"bound_role", S, kNull},
              {"text", S}})},
  };
  return *schemas;
}

}  // namespace

const std::vector<std::string>& TableNames() {
  static const auto* names = new std::vector<std::string>{
      "launches", "units", "slices", "waits", "links", "copies", "sites",
      "roles", "role_waits", "critical_path", "diagnosis"};
  return *names;
}

Table MakeTable(const std::string& name) {
  auto it = Schemas().find(name);
  if (it == Schemas().end()) return Table("", {});
  return Table(name, it->second);
}

std::shared_ptr<Table> TraceTables::Get(const std::string& name) const {
  for (const std::shared_ptr<Table>& t : tables) {
    if (t->name() == name) return t;
  }
  return nullptr;
}

TraceTables MakeTraceTables() {
  TraceTables t;
  for (const std::string& name : TableNames()) {
    t.tables.push_back(std::make_shared<Table>(MakeTable(name)));
  }
  return t;
}

}  // namespace warptrace
