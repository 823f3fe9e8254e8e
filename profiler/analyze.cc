#include "profiler/analyze.h"

#include <utility>

#include "profiler/status_macros.h"

namespace warptrace {

absl::StatusOr<std::unique_ptr<Trace>> AnalyzeTrace(TraceLayout layout,
                                                    std::vector<uint32_t> words,
                                                    const VerifyOptions& verify,
                                                    const TimelineOptions& timeline) {
  auto trace = std::make_unique<Trace>();
  trace->layout = std::move(layout);
  trace->words = std::move(words);
  RETURN_IF_ERROR(DecodeInto(trace->layout, trace->words, trace->decoded));
  trace->report = Verify(trace->decoded, verify);
  if (trace->report.ok() || verify.allow_truncated) {
    ASSIGN_OR_RETURN(trace->timeline, BuildTimeline(trace->decoded, trace->report, timeline));
    trace->has_timeline = true;
  }
  return trace;
}

}  // namespace warptrace
