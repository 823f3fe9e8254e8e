// What the Chrome trace (chrome_trace.h) writes: the event style and the slice args, and
// their spellings on command lines ("x" / "be", "lean" / "full").
//
//   ASSIGN_OR_RETURN(ChromeEventStyle style, ParseChromeEventStyle(absl::GetFlag(FLAGS_events)));
#ifndef WARPTRACE_PROFILER_OUTPUTS_CHROME_TRACE_OPTIONS_H_
#define WARPTRACE_PROFILER_OUTPUTS_CHROME_TRACE_OPTIONS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace warptrace {

// How slices are written.
enum class ChromeEventStyle {
  kComplete,  // one "X" event per slice (half the bytes; the default)
  kBeginEnd,  // a "B" and an "E" event per slice
};

// What each slice event's "args" carries.
enum class ChromeSliceArgs {
  kLean,  // nothing the track already says: only "repaired" (the default)
  kFull,  // block, unit, site, kind, origin (and verdict) on every slice
};

struct ChromeTraceOptions {
  ChromeEventStyle events = ChromeEventStyle::kComplete;
  ChromeSliceArgs args = ChromeSliceArgs::kLean;
};

// "x" → kComplete, "be" → kBeginEnd (also "X", "B/E"); InvalidArgument otherwise.
absl::StatusOr<ChromeEventStyle> ParseChromeEventStyle(absl::string_view name);
const char* ChromeEventStyleName(ChromeEventStyle style);  // "x", "be"

// "lean" → kLean, "full" → kFull; InvalidArgument otherwise.
absl::StatusOr<ChromeSliceArgs> ParseChromeSliceArgs(absl::string_view name);
const char* ChromeSliceArgsName(ChromeSliceArgs args);  // "lean", "full"

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_CHROME_TRACE_OPTIONS_H_
