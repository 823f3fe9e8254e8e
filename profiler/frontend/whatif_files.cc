#include "profiler/frontend/whatif_files.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis_sink.h"
#include "profiler/dump/replay.h"
#include "profiler/dump/sink.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/outputs/chrome_trace_sink.h"
#include "profiler/outputs/perfetto/perfetto_sink.h"

namespace warptrace {
namespace {

absl::Status WriteTimeline(const Timeline& t, const std::string& path, bool perfetto) {
  return WriteLargeFileAtomically(
      path,
      [&](llvm::raw_ostream& os) -> absl::Status {
        if (perfetto) {
          PerfettoTraceSink sink(os);
          TraceSink* sinks[] = {&sink};
          return ReplayTimeline(t, sinks);
        }
        ChromeTraceSink sink(ChromeTraceOptions{}, os);
        TraceSink* sinks[] = {&sink};
        return ReplayTimeline(t, sinks);
      },
      {.role = perfetto ? "predicted Perfetto trace" : "predicted Chrome trace"});
}

}  // namespace

WhatIfOutcome WhatIfTimelineToFiles(const Timeline& measured, const WhatIfRequest& request) {
  WhatIfOutcome out;
  absl::StatusOr<std::vector<Speedup>> speedups = ParseSpeedups(request.speedups);
  if (!speedups.ok()) {
    out.status = speedups.status();
    return out;
  }
  absl::StatusOr<WhatIfPrediction> prediction = PredictWhatIf(measured, *speedups);
  if (!prediction.ok()) {
    out.status = prediction.status();
    return out;
  }
  out.prediction = *std::move(prediction);
  {
    AnalysisSink analysis;
    TraceSink* sinks[] = {&analysis};
    out.status = ReplayTimeline(measured, sinks);
    if (!out.status.ok()) return out;
    out.measured = analysis.result();
  }
  if (request.causal_profile) {
    absl::StatusOr<CausalProfile> profile = ComputeCausalProfile(measured);
    if (!profile.ok()) {
      out.status = profile.status();
      return out;
    }
    out.profile = *std::move(profile);
  }
  if (request.diff) {
    DiffCollector before, after;
    out.status = ReplayTimeline(measured, before.sinks());
    if (out.status.ok()) out.status = ReplayTimeline(out.prediction.timeline, after.sinks());
    if (!out.status.ok()) return out;
    out.diff = DiffTraces(before, after);
  }
  {
    llvm::raw_string_ostream os(out.json);
    WriteWhatIfJson(out.prediction, out.profile ? &*out.profile : nullptr, os);
    os.flush();
  }
  struct File {
    const std::string& path;
    const char* role;
    int kind;  // 0 perfetto, 1 chrome, 2 json
  };
  for (const File& f : {File{request.perfetto_path, "predicted Perfetto trace", 0},
                        File{request.chrome_path, "predicted Chrome trace", 1},
                        File{request.json_path, "what-if JSON", 2}}) {
    if (f.path.empty()) continue;
    absl::Status s = f.kind == 2 ? WriteFileAtomically(f.path, out.json, {.role = f.role})
                                 : WriteTimeline(out.prediction.timeline, f.path, f.kind == 0);
    if (!s.ok()) {
      out.status = s;
      out.failed_output = f.role;
      return out;
    }
    out.written.push_back(f.path);
  }
  return out;
}

WhatIfOutcome WhatIfToFiles(const TraceLayout& layout, absl::Span<const uint32_t> words,
                            const WhatIfRequest& request) {
  DumpRequest dump;
  dump.verify = request.verify;
  dump.timeline = request.timeline;
  dump.collect = true;
  DumpOutcome measured = DumpToFiles(layout, words, dump);
  if (!measured.status.ok()) {
    WhatIfOutcome out;
    out.status = measured.status;
    return out;
  }
  return WhatIfTimelineToFiles(*measured.timeline, request);
}

}  // namespace warptrace
