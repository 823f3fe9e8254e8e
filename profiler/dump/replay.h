// ReplayTimeline: feeds a Timeline already in memory (collected, or predicted by what-if,
// profiler/analysis/whatif.h) to sinks as the dump driver would have: Begin, one AddUnit per
// unit in Timeline order, End. The views carry only the timeline: no raw record, verdict or
// findings (record and verdict are null, the finding spans empty), so only sinks that read
// UnitView::timeline (the analysis, durations, the Perfetto and Chrome writers' timelines)
// may be fed this way; TraceEnd::report is null.
//
//   AnalysisSink analysis;
//   TraceSink* sinks[] = {&analysis};
//   RETURN_IF_ERROR(ReplayTimeline(predicted, sinks));
//
// Errors: the first sink error, prefixed with the sink's Name().
#ifndef WARPTRACE_PROFILER_DUMP_REPLAY_H_
#define WARPTRACE_PROFILER_DUMP_REPLAY_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "profiler/dump/sink.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {

absl::Status ReplayTimeline(const Timeline& timeline, absl::Span<TraceSink* const> sinks);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_DUMP_REPLAY_H_
