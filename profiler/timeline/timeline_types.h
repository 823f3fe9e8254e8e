// The Timeline: a verified trace on one nanosecond axis, ready for output. Produced by
// BuildTimeline (timeline.h) from a decoded, verified buffer; consumed by the Chrome trace
// writer (chrome_trace.h) and the summary (summary.h). Plain data, no behaviour.
#ifndef WARPTRACE_PROFILER_TIMELINE_TIMELINE_TYPES_H_
#define WARPTRACE_PROFILER_TIMELINE_TIMELINE_TYPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/trace/layout.h"

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
const char* ClockSourceName(ClockSource source);  // "calibrated", "too_short", ...
// Why a nominal-clock unit is nominal, as a phrase: "too short to calibrate", "no
// trustworthy end stamp", "a measured rate outside 1/4..4x nominal", "%clock wraps that
// could not be placed"; "calibrated" / "no record" for the others.
const char* ClockSourceReason(ClockSource source);

// One region instance on one unit's track. Times are absolute globaltimer nanoseconds.
struct Slice {
  uint32_t site = 0;     // index into TraceLayout::sites
  uint32_t depth = 0;    // nesting depth on its track, 0 = outermost
  int64_t begin_ns = 0;
  int64_t end_ns = 0;    // >= begin_ns
  bool repaired = false; // closed by --allow-truncated at the unit's last timestamp
  friend bool operator==(const Slice&, const Slice&) = default;
};

struct UnitTimeline {
  uint64_t record_index = 0;
  uint32_t block_linear = 0;
  Dim3 block_index;           // blockIdx of block_linear
  uint32_t unit_index = 0;
  uint32_t sm_id = 0;
  Verdict verdict = Verdict::kComplete;
  std::string verdict_reason; // empty when complete
  int64_t start_ns = 0;       // unit start / end on the globaltimer axis
  int64_t end_ns = 0;
  double cycles_per_ns = 0;   // calibrated (or nominal) SM clock rate
  bool nominal_clock = false; // true when the nominal clock was used (clock_source says why)
  ClockSource clock_source = ClockSource::kCalibrated;
  uint32_t overhead_cycles = 0;  // smallest gap between consecutive events (0 if < 2 events)
  uint32_t events = 0;        // events that made it onto the timeline
  uint32_t dropped = 0;       // attempted - capacity when overflowed
  std::vector<Slice> slices;  // ordered by begin_ns, then depth
  // False for a unit with no usable record (missing, or its header was corrupt): then it
  // has no slices, sm_id is 0 (unknown) and start_ns = end_ns = Timeline::origin_ns.
  bool has_record = true;
};

struct Timeline {
  TraceLayout layout;
  int64_t origin_ns = 0;  // earliest unit start: Chrome ts are relative to it
  int64_t end_ns = 0;     // latest unit end
  bool overhead_compensated = false;
  std::string clock_note;  // e.g. "calibrated per unit from globaltimer" or the fallback used
  std::vector<UnitTimeline> units;  // ordered by (block_linear, unit_index)
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TIMELINE_TIMELINE_TYPES_H_
