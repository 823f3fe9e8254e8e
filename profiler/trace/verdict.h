// The two per-unit outcomes the trace layer decides and every layer above reports: what became
// of a unit (Verdict, decided by verify.h) and which rate turned its cycles into ns
// (ClockSource, decided by clock.h). Plain enums with their names.
#ifndef WARPTRACE_PROFILER_TRACE_VERDICT_H_
#define WARPTRACE_PROFILER_TRACE_VERDICT_H_

#include <cstdint>

namespace warptrace {

// What became of one trace unit.
enum class Verdict {
  kComplete,    // every event present, paired and in order
  kTruncated,   // the unit started but never finished (no epilogue), or a repaired prefix
  kOverflowed,  // attempted > capacity: events were dropped
  kCorrupt,     // the record or its events break the format
  kMissing,     // no record was written (the unit never ran its prologue)
};
const char* VerdictName(Verdict verdict);  // "complete", "truncated", ...

// Which rate turned a unit's cycles into ns (clock.h), and why.
enum class ClockSource : uint8_t {
  kCalibrated,       // its own globaltimer pair
  kTooShort,         // nominal: it ran too briefly for the globaltimer's ticks
  kNoEndStamp,       // nominal: no trustworthy end stamp (unfinished, damaged or repaired)
  kImplausibleRate,  // nominal: the measured rate was outside 1/4..4x nominal
  kWrapsLost,        // nominal: %clock wraps between its events could not be placed
  kNoRecord,         // no usable record: no clock at all
};
inline constexpr int kNumClockSources = static_cast<int>(ClockSource::kNoRecord) + 1;
// Why a nominal-clock unit is nominal, as a phrase: "too short to calibrate", "no
// trustworthy end stamp", "a measured rate outside 1/4..4x nominal", "%clock wraps that
// could not be placed"; "calibrated" / "no record" for the others.
const char* ClockSourceReason(ClockSource source);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TRACE_VERDICT_H_
