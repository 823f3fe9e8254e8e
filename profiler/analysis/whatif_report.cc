// PrintCausalProfile, PrintWhatIf and the JSON writers (whatif.h).
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/utf8.h"
#include "llvm/Support/JSON.h"
#include "profiler/analysis/analysis_json.h"
#include "profiler/analysis/critical_path.h"
#include "profiler/analysis/diagnosis.h"
#include "profiler/analysis/whatif.h"

namespace warptrace {
namespace {

std::string RowLabel(const CausalRow& row) {
  return row.role.empty() ? row.name : absl::StrCat(row.role, ":", row.name);
}

std::string Percent(double fraction) { return absl::StrFormat("%+.1f%%", -100.0 * fraction); }

}  // namespace

void PrintCausalProfile(const CausalProfile& profile, llvm::raw_ostream& os) {
  // The dump's front end states why a trace has no profile (kNoCausalProfile) instead.
  const bool unpredictable = profile.rows.empty() && !profile.limitations.empty() &&
                             absl::StartsWith(profile.limitations[0], kNoCausalProfile);
  if (unpredictable) {
    os << "causal profile: none\n";
  } else {
    os << "causal profile (predicted kernel time if the region were N% faster; measured "
       << FormatNs(static_cast<double>(profile.measured_ns)) << "):\n";
  }
  if (profile.rows.empty()) {
    if (!unpredictable) os << "  (no region with time)\n";
    for (const std::string& l : profile.limitations) os << "  limitation: " << l << "\n";
    return;
  }
  size_t width = 6;
  for (const CausalRow& row : profile.rows) width = std::max(width, RowLabel(row).size());
  os << absl::StrFormat("  %-*s %9s %9s %9s %9s\n", static_cast<int>(width), "region", "10%",
                        "25%", "50%", "100%");
  for (const CausalRow& row : profile.rows) {
    os << absl::StrFormat("  %-*s %9s %9s %9s %9s", static_cast<int>(width), RowLabel(row),
                          Percent(row.saving[0]), Percent(row.saving[1]),
                          Percent(row.saving[2]), Percent(row.saving[3]));
    if (row.flat) os << "  speeding this up buys nothing: it is not on the critical path";
    os << "\n";
  }
  for (const std::string& l : profile.limitations) os << "  limitation: " << l << "\n";
}

void PrintWhatIf(const WhatIfPrediction& p, llvm::raw_ostream& os) {
  os << "what-if:";
  for (const Speedup& s : p.speedups) os << " " << s.text;
  os << "\n";
  os << "  kernel: measured " << FormatNs(static_cast<double>(p.measured_ns)) << ", predicted "
     << FormatNs(static_cast<double>(p.predicted_ns))
     << absl::StrFormat(" (%.3fx; %+.1f%%)", p.speedup,
                        p.measured_ns > 0
                            ? 100.0 * (p.predicted_ns - p.measured_ns) / p.measured_ns
                            : 0.0)
     << ", " << p.instances << " instances re-timed\n";
  os << "  graph: " << p.handoff_edges << " hand-off edges, " << p.completion_edges
     << " completion edges, " << p.occupancy_edges << " SM-slot edges, " << p.unlinked_waits
     << " waits without a releaser\n";
  for (const WhatIfRole& r : p.roles) {
    os << "  role " << r.role << " (" << r.units << " units): unit time "
       << FormatNs(static_cast<double>(r.measured_ns)) << " -> "
       << FormatNs(static_cast<double>(r.predicted_ns)) << ", waiting "
       << FormatNs(static_cast<double>(r.measured_wait_ns)) << " -> "
       << FormatNs(static_cast<double>(r.predicted_wait_ns)) << "\n";
  }
  if (!p.analysis.diagnosis.empty()) {
    os << "predicted ";
    PrintDiagnosis(p.analysis, os);
  }
  for (const std::string& l : p.limitations) os << "  limitation: " << l << "\n";
}

void WriteWhatIfJson(const WhatIfPrediction& p, const CausalProfile* profile,
                     llvm::raw_ostream& os) {
  llvm::json::OStream j(os);
  j.object([&] {
    j.attribute("format", "warptrace-whatif");
    j.attribute("version", 1);
    j.attributeArray("speedups", [&] {
      for (const Speedup& s : p.speedups) {
        j.object([&] {
          j.attribute("role", ValidUtf8(s.role));
          j.attribute("name", ValidUtf8(s.name));
          j.attribute("factor", s.factor);
          j.attribute("shorten_ns", s.shorten_ns);
          j.attribute("text", ValidUtf8(s.text));
        });
      }
    });
    j.attribute("measured_ns", p.measured_ns);
    j.attribute("predicted_ns", p.predicted_ns);
    j.attribute("speedup", p.speedup);
    j.attribute("instances", static_cast<int64_t>(p.instances));
    j.attributeObject("graph", [&] {
      j.attribute("handoff_edges", static_cast<int64_t>(p.handoff_edges));
      j.attribute("completion_edges", static_cast<int64_t>(p.completion_edges));
      j.attribute("occupancy_edges", static_cast<int64_t>(p.occupancy_edges));
      j.attribute("unlinked_waits", static_cast<int64_t>(p.unlinked_waits));
    });
    j.attributeArray("blocks", [&] {
      for (const WhatIfBlock& b : p.blocks) {
        j.object([&] {
          j.attribute("block_linear", static_cast<int64_t>(b.block_linear));
          j.attribute("sm_id", static_cast<int64_t>(b.sm_id));
          j.attribute("measured_ns", b.measured_ns);
          j.attribute("predicted_ns", b.predicted_ns);
        });
      }
    });
    j.attributeArray("roles", [&] {
      for (const WhatIfRole& r : p.roles) {
        j.object([&] {
          j.attribute("role", ValidUtf8(r.role));
          j.attribute("units", static_cast<int64_t>(r.units));
          j.attribute("measured_ns", r.measured_ns);
          j.attribute("predicted_ns", r.predicted_ns);
          j.attribute("measured_wait_ns", r.measured_wait_ns);
          j.attribute("predicted_wait_ns", r.predicted_wait_ns);
        });
      }
    });
    j.attributeArray("diagnosis", [&] {
      for (const Diagnosis& d : p.analysis.diagnosis) {
        j.object([&] {
          j.attribute("kind", d.kind);
          j.attribute("score", d.score);
          j.attribute("text", ValidUtf8(d.text));
        });
      }
    });
    j.attributeArray("critical_path", [&] {
      for (const PathRegion& r : p.analysis.critical_path.regions) {
        j.object([&] {
          j.attribute("role", ValidUtf8(r.role));
          j.attribute("name", ValidUtf8(r.name));
          j.attribute("path_ns", r.path_ns);
          j.attribute("mean_share", r.mean_share);
        });
      }
    });
    if (profile != nullptr) {
      j.attributeBegin("causal_profile");
      WriteCausalProfileJson(*profile, j);
      j.attributeEnd();
    }
    j.attributeArray("limitations", [&] {
      for (const std::string& l : p.limitations) j.value(l);
    });
  });
}

}  // namespace warptrace
