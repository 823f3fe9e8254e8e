// What the Chrome trace (chrome_trace.h) writes: the event style and the slice args, and
// their spellings on command lines ("x" / "be" / "mosaic", "lean" / "full").
//
//   ASSIGN_OR_RETURN(ChromeEventStyle style, ParseChromeEventStyle(absl::GetFlag(FLAGS_events)));
#ifndef WARPTRACE_PROFILER_OUTPUTS_CHROME_TRACE_OPTIONS_H_
#define WARPTRACE_PROFILER_OUTPUTS_CHROME_TRACE_OPTIONS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace warptrace {

// How slices are written.
enum class ChromeEventStyle {
  kComplete,  // one "X" event per slice (half the bytes; the default)
  kBeginEnd,  // a "B" and an "E" event per slice
  // Exactly the events of JAX Mosaic GPU's own dump (ProfilerSpec.dump): its B/E events,
  // pid, tid, ts and top-level keys, nothing else; written by MosaicTraceSink
  // (profiler/outputs/mosaic_trace.h), which the front end picks for this style. `mosaic`
  // below says how its timestamps are computed.
  kMosaic,
};

// What each slice event's "args" carries.
enum class ChromeSliceArgs {
  kLean,  // nothing the track already says: only "repaired" (the default)
  kFull,  // block, unit, site, kind, origin (and verdict) on every slice
};

// The timestamps of ChromeEventStyle::kMosaic (mosaic_trace.h has the exact rules). The
// defaults are Mosaic's own: the same numbers as its dump.
struct MosaicTimestamps {
  // Subtract Mosaic's profiling-overhead estimate (event index x one buffer-wide estimate)
  // from every event's time, as Mosaic does. false: the raw clock differences.
  bool compensate_overhead = true;
  // 0: Mosaic's convention, one SM cycle counted as one nanosecond. Otherwise the cycles are
  // converted to nanoseconds at this SM clock (kHz): calibrated times, which are different
  // numbers from Mosaic's.
  uint64_t sm_clock_khz = 0;
  // Mosaic's dump of a ProfilerSpec(bounds_check=True) buffer (JAX after 0.10.2; mosaic_import.h):
  // a trace with regions still open after its last event (the device truncated it at its
  // capacity) ends with a synthetic "E" for each, innermost first, at that event's ts.
  // false (a buffer without bounds_check): the events as recorded.
  bool close_truncated = false;
};

struct ChromeTraceOptions {
  ChromeEventStyle events = ChromeEventStyle::kComplete;
  ChromeSliceArgs args = ChromeSliceArgs::kLean;  // kComplete and kBeginEnd only
  MosaicTimestamps mosaic;                        // kMosaic only
};

// "x" → kComplete, "be" → kBeginEnd (also "X", "B/E"), "mosaic" → kMosaic; InvalidArgument
// otherwise.
absl::StatusOr<ChromeEventStyle> ParseChromeEventStyle(absl::string_view name);
const char* ChromeEventStyleName(ChromeEventStyle style);  // "x", "be", "mosaic"

// "lean" → kLean, "full" → kFull; InvalidArgument otherwise.
absl::StatusOr<ChromeSliceArgs> ParseChromeSliceArgs(absl::string_view name);
const char* ChromeSliceArgsName(ChromeSliceArgs args);  // "lean", "full"

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_CHROME_TRACE_OPTIONS_H_
