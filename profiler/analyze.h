// AnalyzeTrace: the dump pipeline in one call — decode, verify, timeline — over a raw
// buffer and its layout, keeping everything the outputs need in one Trace.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, AnalyzeTrace(layout, std::move(words)));
//   if (!trace->report.ok()) { /* trace->report.ToStatus() lists every problem */ }
//   RETURN_IF_ERROR(WriteChromeTraceFile(trace->timeline, {}, "trace.json"));
#ifndef WARPTRACE_PROFILER_ANALYZE_H_
#define WARPTRACE_PROFILER_ANALYZE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/decode.h"
#include "profiler/layout.h"
#include "profiler/timeline.h"
#include "profiler/timeline_types.h"
#include "profiler/verify.h"

namespace warptrace {

// A recorded, decoded, verified trace. Not copyable or movable (`decoded` refers to
// `layout` and `words`): held by unique_ptr.
struct Trace {
  TraceLayout layout;           // the layout as run
  std::vector<uint32_t> words;  // the raw buffer
  DecodedTrace decoded;         // views into `words` and `layout`
  VerifyReport report;
  // Built when the report is ok, or when verify.allow_truncated repaired it; else empty.
  Timeline timeline;
  bool has_timeline = false;

  Trace() = default;
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;
};

// Returns the Trace whatever the verdict: `report.ok()` says whether it is whole. Errors:
// DecodeInto's (DataLoss/InvalidArgument when the buffer cannot fit the layout at all) and
// BuildTimeline's.
absl::StatusOr<std::unique_ptr<Trace>> AnalyzeTrace(TraceLayout layout,
                                                    std::vector<uint32_t> words,
                                                    const VerifyOptions& verify = {},
                                                    const TimelineOptions& timeline = {});

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYZE_H_
