// Forwarding header: AnalysisSink is in profiler/sinks/analysis_sink.h (target
// //profiler/sinks:analysis_sink), with every other sink. Kept so the examples build until
// they include the new path; new code must not use it.
#ifndef WARPTRACE_PROFILER_ANALYSIS_ANALYSIS_SINK_H_
#define WARPTRACE_PROFILER_ANALYSIS_ANALYSIS_SINK_H_

#include "profiler/sinks/analysis_sink.h"  // IWYU pragma: export

#endif  // WARPTRACE_PROFILER_ANALYSIS_ANALYSIS_SINK_H_
