#include "profiler/outputs/tables/tables_sink.h"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "base/utf8.h"
#include "format/layout.h"
#include "profiler/analysis/analysis.h"
#include "profiler/dump/sink.h"
#include "profiler/outputs/tables/schema.h"
#include "profiler/timeline/timeline_types.h"
#include "profiler/trace/verdict.h"

namespace warptrace {

std::optional<std::string> CopyEngineOf(const SiteInfo& site) {
  if (site.copy_engine == CopyEngine::kNone) return std::nullopt;
  return std::string(CopyEngineName(site.copy_engine));
}

std::optional<int64_t> CopyBytesOf(const SiteInfo& site) {
  if (site.copy_engine == CopyEngine::kNone || site.copy_bytes == 0) return std::nullopt;
  return static_cast<int64_t>(site.copy_bytes);
}

TablesSink::TablesSink(TableOptions options)
    : options_(std::move(options)), tables_(MakeTraceTables()) {
  if (options_.tags_json.empty()) options_.tags_json = "{}";
}

absl::Status TablesSink::Begin(const TraceBegin& begin) {
  layout_ = begin.layout;
  units_per_block_ = UnitsPerBlock(*layout_);
  if (units_per_block_ == 0) units_per_block_ = 1;
  for (const SiteInfo& s : layout_->sites) {
    T("sites").AddRow().Int(kTablesSchemaVersion).Str(options_.launch_id).Int(s.id)
        .Str(ValidUtf8(s.name)).Str(SiteKindName(s.kind)).Str(ValidUtf8(s.origin));
  }
  return absl::OkStatus();
}

absl::Status TablesSink::AddUnit(const UnitView& view) {
  const UnitTimeline& u = *view.timeline;
  ++units_;
  std::optional<std::string> role;
  if (u.unit_index < layout_->unit_roles.size()) role = layout_->unit_roles[u.unit_index];
  Table::Row row = T("units").AddRow();
  row.Int(kTablesSchemaVersion).Str(options_.launch_id).Int(static_cast<int64_t>(u.record_index))
      .Int(u.block_linear).Int(u.block_index.x).Int(u.block_index.y).Int(u.block_index.z);
  // Without clusters every block is a cluster of one: its own id, rank 0.
  const ClusterPosition cluster = ClusterOfBlock(*layout_, u.block_index);
  const Dim3& shape = layout_->cluster;
  const int64_t clusters_x = shape.x == 0 ? 1 : layout_->grid.x / shape.x;
  const int64_t clusters_y = shape.y == 0 ? 1 : layout_->grid.y / shape.y;
  row.Int(cluster.cluster.x + clusters_x * (cluster.cluster.y + clusters_y * cluster.cluster.z))
      .Int(cluster.rank)
      .Int(u.unit_index);
  if (u.has_record) row.Int(u.sm_id); else row.Null();
  if (role.has_value()) row.Str(ValidUtf8(*role)); else row.Null();
  row.Str(VerdictName(u.verdict)).Str(ValidUtf8(u.verdict_reason)).Int(u.events).Int(u.dropped);
  if (u.has_record) {
    row.Int(u.start_ns).Int(u.end_ns).Int(u.end_ns - u.start_ns);
  } else {
    row.Null().Null().Null();
  }
  AddSlices(u);
  AddWaits(u);
  AddLinksAndCopies(u);
  return absl::OkStatus();
}

void TablesSink::AddSlices(const UnitTimeline& u) {
  Table& slices = T("slices");
  for (size_t i = 0; i < u.slices.size(); ++i) {
    const Slice& s = u.slices[i];
    const SiteInfo& site = layout_->sites[s.site];
    slices.AddRow().Int(kTablesSchemaVersion).Str(options_.launch_id)
        .Int(static_cast<int64_t>(u.record_index)).Int(u.block_linear).Int(u.unit_index)
        .Int(static_cast<int64_t>(i)).Int(s.site).Str(ValidUtf8(site.name))
        .Str(SiteKindName(site.kind)).Int(s.depth).Int(s.begin_ns).Int(s.end_ns - s.begin_ns)
        .Bool(s.repaired);
  }
}

void TablesSink::AddWaits(const UnitTimeline& u) {
  // The flow that released each wait slice: its phase's completing arrival, else the
  // latest arrival linked to it.
  std::unordered_map<uint32_t, const Flow*> release;
  for (const Flow& f : u.flows) {
    if (f.kind != FlowKind::kArrivalToRelease || f.to.record_index != u.record_index ||
        f.to.released_wait == FlowEnd::kNone) {
      continue;
    }
    const Flow*& best = release[f.to.released_wait];
    if (best == nullptr || (f.completing && !best->completing) ||
        (f.completing == best->completing && f.from.ns > best->from.ns)) {
      best = &f;
    }
  }
  Table& waits = T("waits");
  for (size_t i = 0; i < u.slices.size(); ++i) {
    const Slice& s = u.slices[i];
    const SiteInfo& site = layout_->sites[s.site];
    if (!IsWaitSite(site.kind)) continue;
    auto it = release.find(static_cast<uint32_t>(i));
    const Flow* f = it == release.end() ? nullptr : it->second;
    Table::Row row = waits.AddRow();
    row.Int(kTablesSchemaVersion).Str(options_.launch_id).Int(static_cast<int64_t>(u.record_index))
        .Int(u.block_linear).Int(u.unit_index).Int(static_cast<int64_t>(i)).Int(s.site)
        .Str(ValidUtf8(site.name));
    if (f != nullptr) {
      row.Int(f->barrier).Str(ValidUtf8(BarrierName(*layout_, f->barrier))).Int(f->phase);
    } else {
      row.Null().Null().Null();
    }
    row.Int(s.begin_ns).Int(s.end_ns).Int(s.end_ns - s.begin_ns);
    if (f != nullptr) {
      row.Int(static_cast<int64_t>(f->from.record_index))
          .Int(static_cast<int64_t>(f->from.record_index % units_per_block_)).Int(f->from.ns);
    } else {
      row.Null().Null().Null();
    }
  }
}

void TablesSink::AddLinksAndCopies(const UnitTimeline& u) {
  Table& links = T("links");
  for (const Flow& f : u.flows) {
    if (f.to.record_index != u.record_index) continue;  // listed once: on its `to` unit
    Table::Row row = links.AddRow();
    row.Int(kTablesSchemaVersion).Str(options_.launch_id).Int(static_cast<int64_t>(f.id))
        .Str(FlowKindName(f.kind)).Int(u.block_linear)
        .Int(static_cast<int64_t>(f.from.record_index))
        .Int(static_cast<int64_t>(f.from.record_index % units_per_block_)).Int(f.from.event)
        .Int(f.from.ns).Int(static_cast<int64_t>(f.to.record_index))
        .Int(static_cast<int64_t>(f.to.record_index % units_per_block_)).Int(f.to.event)
        .Int(f.to.ns);
    if (f.barrier != 0xffffffffu) row.Int(f.barrier); else row.Null();
    row.Int(f.phase).Int(f.issue).Bool(f.completing);
  }
  Table& copies = T("copies");
  for (const AsyncSpan& a : u.async_spans) {
    const SiteInfo& site = layout_->sites[a.site];
    Table::Row row = copies.AddRow();
    row.Int(kTablesSchemaVersion).Str(options_.launch_id).Int(static_cast<int64_t>(u.record_index))
        .Int(u.block_linear).Int(u.unit_index).Int(a.site).Str(ValidUtf8(site.name))
        .Str(SiteKindName(site.kind));
    const std::optional<std::string> engine = CopyEngineOf(site);
    if (engine.has_value()) row.Str(*engine); else row.Null();
    row.MaybeInt(CopyBytesOf(site)).Int(a.issue);
    if (a.barrier != 0xffffffffu) row.Int(a.barrier); else row.Null();
    row.Int(a.begin_ns);
    if (a.completed) row.Int(a.end_ns).Int(a.end_ns - a.begin_ns); else row.Null().Null();
    row.Bool(a.completed).Int(a.lane);
  }
}

absl::Status TablesSink::End(const TraceEnd& end) {
  const TraceLayout& l = *layout_;
  Table::Row row = T("launches").AddRow();
  row.Int(kTablesSchemaVersion).Str(options_.launch_id).Str(ValidUtf8(l.kernel_name))
      .Str(ValidUtf8(l.device_name)).Int(l.grid.x).Int(l.grid.y).Int(l.grid.z).Int(l.block.x)
      .Int(l.block.y).Int(l.block.z).Int(l.cluster.x).Int(l.cluster.y).Int(l.cluster.z)
      .Str(UnitKindName(l.unit.kind)).Int(UnitsPerBlock(l))
      .Int(l.capacity).Str(PlacementName(l.placement)).Bool(l.clock.host_backend);
  if (l.host_anchor.known) {
    const int64_t delta = end.origin_ns - l.host_anchor.globaltimer_ns;
    row.Int(l.host_anchor.realtime_ns + delta).Int(l.host_anchor.boottime_ns + delta);
  } else {
    row.Null().Null();
  }
  row.Int(end.origin_ns).Int(end.end_ns - end.origin_ns).Int(static_cast<int64_t>(units_))
      .Int(static_cast<int64_t>(end.slices)).Int(static_cast<int64_t>(end.report->errors))
      .Int(static_cast<int64_t>(end.report->warnings)).Str(options_.tags_json);
  return absl::OkStatus();
}

void TablesSink::AddAnalysis(const Analysis& a) {
  const std::string& id = options_.launch_id;
  for (const RoleAnalysis& r : a.roles) {
    T("roles").AddRow().Int(kTablesSchemaVersion).Str(id).Str(ValidUtf8(r.role))
        .Int(static_cast<int64_t>(r.units)).Int(r.unit_time_ns).Int(r.waiting_ns)
        .Double(r.waiting_share).Int(static_cast<int64_t>(r.mma_groups))
        .Double(r.mma_in_flight_share).Int(r.median_unit_ns);
    for (const auto& [by, list] : {std::pair{"family", &r.waits}, std::pair{"barrier", &r.barriers}}) {
      for (const WaitStats& w : *list) {
        T("role_waits").AddRow().Int(kTablesSchemaVersion).Str(id).Str(ValidUtf8(r.role))
            .Str(by).Str(ValidUtf8(w.family)).Int(static_cast<int64_t>(w.count)).Int(w.wait_ns)
            .Double(w.share);
      }
    }
  }
  for (const PathRegion& p : a.critical_path.regions) {
    Table::Row row = T("critical_path").AddRow();
    row.Int(kTablesSchemaVersion).Str(id).Str(ValidUtf8(p.role)).Int(p.site)
        .Str(ValidUtf8(p.name)).Int(static_cast<int64_t>(p.blocks)).Double(p.block_fraction)
        .Int(p.path_ns).Double(p.mean_share);
    // Under the cluster link scope the same role and site in two CTAs are two rows.
    if (a.critical_path.cluster_scope) {
      row.Int(p.cta_rank);
    } else {
      row.Null();
    }
  }
  for (size_t i = 0; i < a.diagnosis.size(); ++i) {
    const Diagnosis& d = a.diagnosis[i];
    Table::Row row = T("diagnosis").AddRow();
    row.Int(kTablesSchemaVersion).Str(id).Int(static_cast<int64_t>(i)).Str(ValidUtf8(d.kind))
        .Double(d.score);
    // A "bound" line starts with "<role>-bound: ".
    const size_t dash = d.text.find("-bound: ");
    if (d.kind == "bound" && dash != std::string::npos) {
      row.Str(ValidUtf8(d.text.substr(0, dash)));
    } else {
      row.Null();
    }
    row.Str(ValidUtf8(d.text));
  }
}

}  // namespace warptrace
