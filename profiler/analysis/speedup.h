// Speedup: one re-timing of a what-if prediction (whatif.h parses and applies it; the
// re-timing engine, whatif_retime.h, resolves it against a trace's sites).
#ifndef WARPTRACE_PROFILER_ANALYSIS_SPEEDUP_H_
#define WARPTRACE_PROFILER_ANALYSIS_SPEEDUP_H_

#include <cstdint>
#include <string>

namespace warptrace {

// One re-timing: `[ROLE:]NAME=FACTOR` or `[ROLE:]NAME=-DURATION` (DURATION: a number with
// ns, us or ms): "mma=0.5", "producer:load=-2000ns", "copy A tile=0.8".
struct Speedup {
  std::string role;   // empty: every role
  std::string name;   // a site name
  double factor = 1;  // when shorten_ns == 0
  int64_t shorten_ns = 0;  // > 0: shorten each instance by this much instead
  std::string text;   // as written, for messages
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_SPEEDUP_H_
