// Forwarding header: the Perfetto writer is in profiler/sinks/perfetto/perfetto_writer.h
// (target //profiler/sinks/perfetto:perfetto_writer), with every other sink. Kept so the
// examples build until they include the new path; new code must not use it.
#ifndef WARPTRACE_PROFILER_PERFETTO_PERFETTO_WRITER_H_
#define WARPTRACE_PROFILER_PERFETTO_PERFETTO_WRITER_H_

#include "profiler/sinks/perfetto/perfetto_writer.h"  // IWYU pragma: export

#endif  // WARPTRACE_PROFILER_PERFETTO_PERFETTO_WRITER_H_
