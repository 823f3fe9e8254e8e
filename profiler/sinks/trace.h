// Forwarding header: the in-memory Trace and its collector are in collector.h (target
// //profiler/sinks:collector). Kept so callers outside profiler/ (jit/run.h, the examples'
// tests, the fuzz target) build until they include collector.h; new code must not use it.
#ifndef WARPTRACE_PROFILER_SINKS_TRACE_H_
#define WARPTRACE_PROFILER_SINKS_TRACE_H_

#include "profiler/sinks/collector.h"  // IWYU pragma: export

#endif  // WARPTRACE_PROFILER_SINKS_TRACE_H_
