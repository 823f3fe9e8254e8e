#include "profiler/analysis/analysis_json.h"

#include "base/file.h"
#include "base/utf8.h"
#include "llvm/Support/JSON.h"

namespace warptrace {
namespace {

namespace json = llvm::json;


void Ref(json::OStream& j, const UnitRef& r, bool unit) {
  j.object([&] {
    j.attribute("block", r.block_linear);
    j.attributeArray("block_index", [&] {
      j.value(r.block_index.x);
      j.value(r.block_index.y);
      j.value(r.block_index.z);
    });
    if (unit) j.attribute("unit", r.unit_index);
    j.attribute("sm", r.sm_id);
    if (unit) j.attribute("role", ValidUtf8(r.role));
    j.attribute("ns", r.ns);
    j.attribute("ratio", r.ratio);
    if (!r.label.empty()) j.attribute("label", ValidUtf8(r.label));
  });
}

void Site(json::OStream& j, const SiteTime& s) {
  j.object([&] {
    j.attribute("site", s.site);
    j.attribute("name", ValidUtf8(s.name));
    j.attribute("kind", SiteKindName(s.kind));
    j.attribute("count", s.count);
    j.attribute("total_ns", s.total_ns);
    j.attribute("self_ns", s.self_ns);
    j.attribute("share", s.share);
    j.attribute("waiting_ns", s.waiting_ns);
    j.attribute("waiting_share", s.waiting_share);
    j.attributeArray("waits", [&] {
      for (const WaitInRegion& w : s.waits) {
        j.object([&] {
          j.attribute("family", ValidUtf8(w.family));
          j.attribute("wait_ns", w.wait_ns);
          j.attribute("share", w.share);
        });
      }
    });
  });
}

void Role(json::OStream& j, const RoleAnalysis& r) {
  j.object([&] {
    j.attribute("role", ValidUtf8(r.role));
    j.attribute("units", r.units);
    j.attribute("unit_time_ns", r.unit_time_ns);
    j.attribute("waiting_ns", r.waiting_ns);
    j.attribute("waiting_share", r.waiting_share);
    j.attribute("mma_groups", r.mma_groups);
    j.attribute("mma_in_flight_ns", r.mma_in_flight_ns);
    j.attribute("mma_in_flight_share", r.mma_in_flight_share);
    j.attribute("copies", r.copies);
    j.attribute("copy_bytes", r.copy_bytes);
    j.attributeArray("copy_engines", [&] {
      for (CopyEngine e : r.copy_engines) j.value(CopyEngineName(e));
    });
    j.attribute("copy_in_flight_ns", r.copy_in_flight_ns);
    j.attribute("copy_in_flight_share", r.copy_in_flight_share);
    j.attribute("copy_gb_per_s_in_flight", r.copy_gb_per_s_in_flight);
    j.attribute("copy_gb_per_s_over_span", r.copy_gb_per_s_over_span);
    j.attribute("median_unit_ns", r.median_unit_ns);
    j.attributeBegin("slowest_unit");
    Ref(j, r.slowest_unit, true);
    j.attributeEnd();
    j.attributeArray("outlier_units", [&] {
      for (const UnitRef& u : r.outlier_units) Ref(j, u, true);
    });
    // (Not a structured binding: clang 14 cannot capture one in the lambda.)
    for (const std::vector<WaitStats>* list : {&r.waits, &r.barriers}) {
      const bool by_barrier = list == &r.barriers;
      j.attributeArray(by_barrier ? "barriers" : "waits", [&] {
        for (const WaitStats& w : *list) {
          j.object([&] {
            j.attribute(by_barrier ? "barrier" : "family", ValidUtf8(w.family));
            j.attribute("count", w.count);
            j.attribute("wait_ns", w.wait_ns);
            j.attribute("share", w.share);
            j.attribute("overhead_ns", w.overhead_ns);
            j.attribute("overhead_fraction", w.overhead_fraction);
          });
        }
      });
    }
    j.attributeArray("sites", [&] {
      for (const SiteTime& s : r.sites) Site(j, s);
    });
  });
}

void CriticalPathJson(json::OStream& j, const CriticalPathAnalysis& c) {
  j.attributeObject("critical_path", [&] {
    j.attribute("per_unit_only", c.per_unit_only);
    if (c.cluster_scope) j.attribute("scope", "cluster");  // absent: one path per block
    j.attribute("blocks", c.blocks);
    j.attribute("handoffs", c.handoffs);
    if (c.cluster_scope) j.attribute("cross_cta_handoffs", c.cross_cta_handoffs);
    j.attribute("trace_links", c.trace_links);
    j.attributeArray("regions", [&] {
      for (const PathRegion& r : c.regions) {
        j.object([&] {
          j.attribute("role", ValidUtf8(r.role));
          if (c.cluster_scope) j.attribute("cta_rank", r.cta_rank);
          j.attribute("site", r.site);
          j.attribute("name", ValidUtf8(r.name));
          j.attribute("blocks", r.blocks);
          j.attribute("block_fraction", r.block_fraction);
          j.attribute("path_ns", r.path_ns);
          j.attribute("mean_share", r.mean_share);
        });
      }
    });
    j.attributeBegin("slowest_block");
    Ref(j, c.slowest_block, false);
    j.attributeEnd();
    j.attributeArray("slowest_block_path", [&] {
      for (const PathStepRef& s : c.slowest_block_path) {
        j.object([&] {
          j.attribute("role", ValidUtf8(s.role));
          if (c.cluster_scope) j.attribute("cta_rank", s.cta_rank);
          j.attribute("unit", s.unit_index);
          j.attribute("name", ValidUtf8(s.name));
          j.attribute("ns", s.ns);
          j.attribute("share", s.share);
        });
      }
    });
    j.attribute("slowest_block_path_truncated", c.slowest_block_path_truncated);
    if (!c.cluster_scope) return;
    j.attributeArray("slowest_block_crossings", [&] {
      for (const PathCrossing& x : c.slowest_block_crossings) {
        j.object([&] {
          j.attribute("from_rank", x.from_rank);
          j.attribute("from_role", ValidUtf8(x.from_role));
          j.attribute("from_unit", x.from_unit);
          j.attribute("to_rank", x.to_rank);
          j.attribute("to_role", ValidUtf8(x.to_role));
          j.attribute("to_unit", x.to_unit);
          j.attribute("wait", ValidUtf8(x.wait));
          j.attribute("at_ns", x.at_ns);
        });
      }
    });
  });
}

void Sm(json::OStream& j, const SmBusy& s) {
  j.object([&] {
    j.attribute("sm", s.sm_id);
    j.attribute("blocks", s.blocks);
    j.attribute("busy_ns", s.busy_ns);
  });
}

void GridJson(json::OStream& j, const GridAnalysis& g) {
  j.attributeObject("grid", [&] {
    j.attribute("blocks", g.blocks);
    j.attribute("early_return_blocks", g.early_return_blocks);
    j.attribute("working_blocks", g.working_blocks);
    j.attribute("median_early_return_ns", g.median_early_return_ns);
    j.attribute("span_ns", g.span_ns);
    j.attributeArray("sms", [&] {
      for (const SmBusy& s : g.sms) Sm(j, s);
    });
    j.attribute("mean_sm_busy_ns", g.mean_sm_busy_ns);
    j.attributeBegin("busiest_sm");
    Sm(j, g.busiest_sm);
    j.attributeEnd();
    j.attribute("sm_imbalance", g.sm_imbalance);
    j.attribute("median_block_ns", g.median_block_ns);
    j.attribute("median_block_end_ns", g.median_block_end_ns);
    j.attribute("last_block_end_ns", g.last_block_end_ns);
    j.attribute("tail_ns", g.tail_ns);
    j.attribute("tail_share", g.tail_share);
    j.attributeBegin("last_block");
    Ref(j, g.last_block, false);
    j.attributeEnd();
    j.attributeBegin("slowest_block");
    Ref(j, g.slowest_block, false);
    j.attributeEnd();
    j.attribute("max_concurrent_blocks", g.max_concurrent_blocks);
    j.attribute("waves", g.waves);
    j.attributeArray("outlier_blocks", [&] {
      for (const UnitRef& b : g.outlier_blocks) Ref(j, b, false);
    });
    j.attributeArray("dims", [&] {
      for (const DimImbalance& d : g.dims) {
        j.object([&] {
          j.attribute("dim", std::string(1, d.dim));
          j.attribute("name", ValidUtf8(d.name));
          j.attribute("values", d.values);
          j.attribute("explained", d.explained);
          j.attribute("slowest", d.slowest);
          j.attribute("slowest_mean_ns", d.slowest_mean_ns);
          j.attribute("slowest_blocks", d.slowest_blocks);
          j.attribute("fastest", d.fastest);
          j.attribute("fastest_mean_ns", d.fastest_mean_ns);
          j.attribute("median_mean_ns", d.median_mean_ns);
          j.attribute("ratio", d.ratio);
        });
      }
    });
  });
}

}  // namespace

void WriteCausalProfileJson(const CausalProfile& profile, json::OStream& j) {
  j.object([&] {
    j.attribute("measured_ns", profile.measured_ns);
    j.attributeArray("speedups", [&] {
      for (double s : kCausalSpeedups) j.value(s);
    });
    j.attributeArray("rows", [&] {
      for (const CausalRow& row : profile.rows) {
        j.object([&] {
          j.attribute("role", ValidUtf8(row.role));
          j.attribute("name", ValidUtf8(row.name));
          j.attribute("kind", SiteKindName(row.kind));
          j.attribute("instances", row.instances);
          j.attribute("work_ns", row.work_ns);
          j.attributeArray("saving", [&] {
            for (double s : row.saving) j.value(s);
          });
          j.attributeArray("predicted_ns", [&] {
            for (int64_t ns : row.predicted_ns) j.value(ns);
          });
          j.attribute("flat", row.flat);
        });
      }
    });
    j.attributeArray("limitations", [&] {
      for (const std::string& l : profile.limitations) j.value(ValidUtf8(l));
    });
  });
}

void WriteAnalysisJson(const Analysis& a, llvm::raw_ostream& os) {
  json::OStream j(os, /*IndentSize=*/2);
  j.object([&] {
    j.attribute("format", kAnalysisFormat);
    j.attribute("version", kAnalysisVersion);
    j.attribute("kernel", ValidUtf8(a.kernel_name));
    j.attribute("device", ValidUtf8(a.device_name));
    j.attribute("host_backend", a.host_backend);
    j.attribute("units", a.units);
    j.attribute("units_without_record", a.units_without_record);
    j.attributeArray("diagnosis", [&] {
      for (const Diagnosis& d : a.diagnosis) {
        j.object([&] {
          j.attribute("kind", d.kind);
          j.attribute("score", d.score);
          j.attribute("text", ValidUtf8(d.text));
          j.attribute("host_clock", HostClockSupportName(d.host_clock));
        });
      }
    });
    j.attributeArray("roles", [&] {
      for (const RoleAnalysis& r : a.roles) Role(j, r);
    });
    CriticalPathJson(j, a.critical_path);
    if (!a.cross_cta_waits.empty()) {  // clusters only: older readers never see it
      j.attribute("cluster_size", a.cluster_size);
      j.attributeArray("cross_cta_waits", [&] {
        for (const CrossCtaWait& w : a.cross_cta_waits) {
          j.object([&] {
            j.attribute("waiter_role", ValidUtf8(w.waiter_role));
            j.attribute("waiter_rank", w.waiter_rank);
            j.attribute("releaser_role", ValidUtf8(w.releaser_role));
            j.attribute("releaser_rank", w.releaser_rank);
            j.attribute("family", ValidUtf8(w.family));
            j.attribute("waits", w.waits);
            j.attribute("waited_ns", w.waited_ns);
            j.attribute("share", w.share);
          });
        }
      });
    }
    GridJson(j, a.grid);
    const OverheadAnalysis& o = a.overhead;
    j.attributeObject("overhead", [&] {
      j.attribute("events", o.events);
      j.attribute("ns_per_event", o.ns_per_event);
      j.attribute("cycles_per_event", o.cycles_per_event);
      j.attribute("overhead_ns", o.overhead_ns);
      j.attribute("share", o.share);
      j.attribute("wait_overhead_ns", o.wait_overhead_ns);
      j.attribute("wait_overhead_fraction", o.wait_overhead_fraction);
      j.attribute("compensated", o.compensated);
    });
    if (a.has_causal_profile) {
      j.attributeBegin("causal_profile");
      WriteCausalProfileJson(a.causal_profile, j);
      j.attributeEnd();
    }
  });
}

absl::Status WriteAnalysisJsonFile(const Analysis& analysis, const std::string& path) {
  return WriteFileAtomically(
      path,
      [&](llvm::raw_ostream& os) {
        WriteAnalysisJson(analysis, os);
        os << "\n";
        return absl::OkStatus();
      },
      {.role = "analysis"});
}

}  // namespace warptrace
