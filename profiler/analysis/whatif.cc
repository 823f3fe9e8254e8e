#include "profiler/analysis/whatif.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "format/layout.h"
#include "profiler/analysis/analysis_sink.h"
#include "profiler/analysis/whatif_graph.h"
#include "profiler/analysis/whatif_retime.h"
#include "profiler/dump/replay.h"
#include "profiler/dump/sink.h"

namespace warptrace {

using whatif_internal::BlockGraph;
using whatif_internal::Graph;
using whatif_internal::GraphLimitations;
using whatif_internal::KernelNs;
using whatif_internal::MakeRetimeEngine;
using whatif_internal::RetimeEngine;
using whatif_internal::Retimed;
using whatif_internal::UnitGraph;

namespace {

absl::StatusOr<Speedup> ParseOne(absl::string_view text) {
  Speedup s;
  s.text = std::string(absl::StripAsciiWhitespace(text));
  const size_t eq = s.text.rfind('=');
  if (eq == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "what-if '", s.text, "': expected [ROLE:]NAME=FACTOR or [ROLE:]NAME=-DURATION "
        "(e.g. mma=0.5, producer:load=-2000ns)"));
  }
  std::string target(absl::StripAsciiWhitespace(absl::string_view(s.text).substr(0, eq)));
  const std::string value(absl::StripAsciiWhitespace(absl::string_view(s.text).substr(eq + 1)));
  const size_t colon = target.find(':');
  if (colon != std::string::npos) {
    s.role = std::string(absl::StripAsciiWhitespace(absl::string_view(target).substr(0, colon)));
    target = std::string(absl::StripAsciiWhitespace(absl::string_view(target).substr(colon + 1)));
    if (s.role.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("what-if '", s.text, "': empty role"));
    }
  }
  s.name = target;
  if (s.name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("what-if '", s.text, "': empty name"));
  }
  if (!value.empty() && value[0] == '-') {
    absl::string_view number = absl::string_view(value).substr(1);
    double scale = 0;
    if (absl::EndsWith(number, "ns")) {
      scale = 1;
    } else if (absl::EndsWith(number, "us")) {
      scale = 1e3;
    } else if (absl::EndsWith(number, "ms")) {
      scale = 1e6;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "what-if '", s.text, "': a shortening needs a unit (ns, us or ms), e.g. -2000ns"));
    }
    number.remove_suffix(2);
    double d = 0;
    if (!absl::SimpleAtod(number, &d) || !std::isfinite(d) || d <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "what-if '", s.text, "': the shortening must be a positive duration"));
    }
    s.shorten_ns = static_cast<int64_t>(std::llround(d * scale));
    if (s.shorten_ns <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("what-if '", s.text, "': the shortening rounds to 0 ns"));
    }
    return s;
  }
  double f = 0;
  if (!absl::SimpleAtod(value, &f) || !std::isfinite(f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("what-if '", s.text, "': '", value, "' is not a number"));
  }
  if (f <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "what-if '", s.text, "': the factor must be > 0 (0.5: twice as fast; to shorten by a "
        "duration write NAME=-2000ns)"));
  }
  s.factor = f;
  return s;
}

absl::StatusOr<Analysis> Analyze(const Timeline& t) {
  AnalysisSink sink;
  TraceSink* sinks[] = {&sink};
  RETURN_IF_ERROR(ReplayTimeline(t, sinks));
  return sink.result();
}

}  // namespace

absl::StatusOr<std::vector<Speedup>> ParseSpeedups(absl::Span<const std::string> specs) {
  std::vector<Speedup> out;
  for (const std::string& spec : specs) {
    for (absl::string_view part : absl::StrSplit(spec, ';')) {
      if (absl::StripAsciiWhitespace(part).empty()) {
        return absl::InvalidArgumentError(absl::StrCat("what-if '", spec, "': empty spec"));
      }
      ASSIGN_OR_RETURN(Speedup s, ParseOne(part));
      out.push_back(std::move(s));
    }
  }
  if (out.empty()) return absl::InvalidArgumentError("what-if: no speedup given");
  return out;
}

absl::StatusOr<WhatIfPrediction> PredictWhatIf(const Timeline& timeline,
                                               absl::Span<const Speedup> speedups,
                                               const WhatIfOptions& options) {
  if (speedups.empty()) return absl::InvalidArgumentError("what-if: no speedup given");
  for (const Speedup& s : speedups) {
    if (s.shorten_ns == 0 && !(s.factor > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("what-if '", s.text, "': the factor must be > 0"));
    }
    if (s.shorten_ns < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("what-if '", s.text, "': the shortening must be positive"));
    }
  }
  ASSIGN_OR_RETURN(RetimeEngine engine, MakeRetimeEngine(timeline));
  WhatIfPrediction out;
  out.speedups.assign(speedups.begin(), speedups.end());
  ASSIGN_OR_RETURN(Retimed r, engine.Run(speedups, &out.instances));
  const Graph& g = engine.graph;
  out.measured_ns = KernelNs(timeline, nullptr, nullptr);
  out.predicted_ns = KernelNs(timeline, &r.start_ns, &r.end_ns);
  out.speedup = out.predicted_ns > 0 ? static_cast<double>(out.measured_ns) / out.predicted_ns : 0;
  out.handoff_edges = g.handoff_edges;
  out.completion_edges = g.completion_edges;
  out.occupancy_edges = g.occupancy_edges;
  out.unlinked_waits = r.unlinked_waits;
  for (const BlockGraph& b : g.blocks) {
    WhatIfBlock wb;
    wb.block_linear = b.block_linear;
    wb.sm_id = b.sm_id;
    wb.measured_ns = b.end_ns - b.start_ns;
    int64_t s = INT64_MAX, e = INT64_MIN;
    for (uint32_t p : b.units) {
      s = std::min(s, r.start_ns[p]);
      e = std::max(e, r.end_ns[p]);
    }
    wb.predicted_ns = e - s;
    out.blocks.push_back(wb);
  }
  std::sort(out.blocks.begin(), out.blocks.end(),
            [](const WhatIfBlock& a, const WhatIfBlock& b) { return a.block_linear < b.block_linear; });
  Timeline predicted = BuildPredicted(g, r);
  out.roles.resize(g.roles.size());
  for (size_t i = 0; i < g.roles.size(); ++i) out.roles[i].role = g.roles[i];
  for (size_t p = 0; p < g.units.size(); ++p) {
    const UnitTimeline& before = timeline.units[p];
    if (!before.has_record) continue;
    const UnitTimeline& after = predicted.units[p];
    WhatIfRole& role = out.roles[g.units[p].role];
    ++role.units;
    role.measured_ns += before.end_ns - before.start_ns;
    role.predicted_ns += after.end_ns - after.start_ns;
    const UnitGraph& ug = g.units[p];
    std::vector<int64_t> open_end;  // outermost waits only
    for (size_t i = 0; i < before.slices.size(); ++i) {
      if (!ug.is_wait[i]) continue;
      bool nested = !open_end.empty() && before.slices[i].begin_ns < open_end.back();
      if (nested) continue;
      open_end.assign(1, before.slices[i].end_ns);
      role.measured_wait_ns += before.slices[i].end_ns - before.slices[i].begin_ns;
      role.predicted_wait_ns += after.slices[i].end_ns - after.slices[i].begin_ns;
    }
  }
  out.roles.erase(std::remove_if(out.roles.begin(), out.roles.end(),
                                 [](const WhatIfRole& r) { return r.units == 0; }),
                  out.roles.end());
  if (options.analyze) {
    ASSIGN_OR_RETURN(out.analysis, Analyze(predicted));
  }
  if (options.keep_timeline) out.timeline = std::move(predicted);
  out.limitations = GraphLimitations(out.unlinked_waits);
  return out;
}

absl::Status CheckHandoffsPossible(const TraceLayout& layout) {
  if (UnitsPerBlock(layout) <= 1) return absl::OkStatus();
  for (const SiteInfo& site : layout.sites) {
    if (SiteKindHasPayload(site.kind)) return absl::OkStatus();
  }
  return whatif_internal::NoHandoffsError();
}

}  // namespace warptrace
