// WhatIfToFiles: the one front end of a what-if prediction (profiler/analysis/whatif.h) over a
// recorded buffer: the CLI's `warptrace whatif`, the examples' --what_if and the C API /
// Python bindings call it. It dumps the buffer once through DumpToFiles (collecting the
// measured Timeline), re-times it, and writes what was asked for.
//
//   WhatIfRequest request;
//   request.speedups = {"mma=0.5"};
//   request.perfetto_path = "pred.pftrace";          // the predicted launch
//   WhatIfOutcome out = WhatIfToFiles(layout, words, request);
//   if (!out.status.ok()) ...
//   PrintWhatIf(out.prediction, llvm::outs());
//   llvm::outs() << out.json;                          // WriteWhatIfJson, with the profile
//
// Outputs: the predicted timeline as a Perfetto trace (perfetto_path) or Chrome JSON
// (chrome_path), written atomically (base/file.h) through the same writers as a measured
// trace, so the two open side by side; the what-if JSON (json_path, and always
// WhatIfOutcome::json); with `diff`, the TraceDiff (profiler/analysis/diff.h) of the measured
// launch (before) against the predicted one (after), as `warptrace diff` computes it for two
// recorded launches.
//
// Errors (WhatIfOutcome::status): ParseSpeedups' and PredictWhatIf's (InvalidArgument for a
// bad spec, unknown region or role, a shortening longer than an instance; FailedPrecondition
// for a trace without hand-offs, e.g. a Mosaic GPU buffer), DumpToFiles', and the file
// system's for an output (failed_output names it).
// Thread-safety: reentrant.
#ifndef WARPTRACE_PROFILER_FRONTEND_WHATIF_FILES_H_
#define WARPTRACE_PROFILER_FRONTEND_WHATIF_FILES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "profiler/analysis/analysis.h"
#include "profiler/analysis/diff.h"
#include "profiler/analysis/whatif.h"
#include "profiler/timeline/timeline.h"
#include "profiler/timeline/timeline_types.h"
#include "profiler/trace/verify.h"

namespace warptrace {

struct WhatIfRequest {
  // Spec strings (ParseSpeedups): "mma=0.5", "producer:load=-2000ns; copy A tile=0.8".
  std::vector<std::string> speedups;
  VerifyOptions verify;
  TimelineOptions timeline;
  bool causal_profile = true;  // WhatIfOutcome::profile, and in the JSON
  bool diff = false;           // WhatIfOutcome::diff
  std::string perfetto_path;   // the predicted timeline, Perfetto; empty: none
  std::string chrome_path;     // the predicted timeline, Chrome JSON; empty: none
  std::string json_path;       // the what-if JSON; empty: none ("-": stdout)
};

struct WhatIfOutcome {
  absl::Status status;
  std::string failed_output;         // the output whose writing failed, else ""
  Analysis measured;                 // the measured launch's analysis
  WhatIfPrediction prediction;       // with the predicted timeline
  std::optional<CausalProfile> profile;
  std::optional<TraceDiff> diff;
  std::string json;                  // WriteWhatIfJson(prediction, profile)
  std::vector<std::string> written;
};

// `words`: host order, BufferBytes(layout) of them.
WhatIfOutcome WhatIfToFiles(const TraceLayout& layout, absl::Span<const uint32_t> words,
                            const WhatIfRequest& request);
// The same from a measured Timeline already in memory (RunKernel's collected trace).
WhatIfOutcome WhatIfTimelineToFiles(const Timeline& measured, const WhatIfRequest& request);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_FRONTEND_WHATIF_FILES_H_
