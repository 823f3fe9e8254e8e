// Test-only: feeds a whole in-memory Trace (profiler/analyze.h) to TraceSinks with the call
// order and arguments of the dump driver's contract (profiler/sink.h): Begin, AddUnit per
// record in buffer order, End. Lets a sink be tested on a real decoded, verified timeline
// without the streaming driver.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, AnalyzeTrace(layout, words));
//   AnalysisSink analysis;
//   TraceSink* sinks[] = {&analysis};
//   RETURN_IF_ERROR(FeedTrace(*trace, sinks));
#ifndef WARPTRACE_PROFILER_TESTING_SINK_FEEDER_H_
#define WARPTRACE_PROFILER_TESTING_SINK_FEEDER_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "profiler/analyze.h"
#include "profiler/sink.h"

namespace warptrace::testing {

// FailedPrecondition when the trace has no timeline (it failed verification); else the
// first sink error, prefixed with the sink's name, as the driver returns it.
absl::Status FeedTrace(const Trace& trace, absl::Span<TraceSink* const> sinks);

}  // namespace warptrace::testing

#endif  // WARPTRACE_PROFILER_TESTING_SINK_FEEDER_H_
