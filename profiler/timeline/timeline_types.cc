#include "profiler/timeline/timeline_types.h"

namespace warptrace {

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kComplete:
      return "complete";
    case Verdict::kTruncated:
      return "truncated";
    case Verdict::kOverflowed:
      return "overflowed";
    case Verdict::kCorrupt:
      return "corrupt";
    case Verdict::kMissing:
      return "missing";
  }
  return "?";
}

const char* FlowKindName(FlowKind kind) {
  switch (kind) {
    case FlowKind::kArrivalToRelease:
      return "arrival_to_release";
    case FlowKind::kIssueToCompletion:
      return "issue_to_completion";
  }
  return "?";
}

const char* ClockSourceName(ClockSource source) {
  switch (source) {
    case ClockSource::kCalibrated:
      return "calibrated";
    case ClockSource::kTooShort:
      return "too_short";
    case ClockSource::kNoEndStamp:
      return "no_end_stamp";
    case ClockSource::kImplausibleRate:
      return "implausible_rate";
    case ClockSource::kWrapsLost:
      return "wraps_lost";
    case ClockSource::kNoRecord:
      return "no_record";
  }
  return "?";
}

const char* ClockSourceReason(ClockSource source) {
  switch (source) {
    case ClockSource::kCalibrated:
      return "calibrated";
    case ClockSource::kTooShort:
      return "too short to calibrate";
    case ClockSource::kNoEndStamp:
      return "no trustworthy end stamp";
    case ClockSource::kImplausibleRate:
      return "a measured rate outside 1/4..4x nominal";
    case ClockSource::kWrapsLost:
      return "%clock wraps that could not be placed";
    case ClockSource::kNoRecord:
      return "no record";
  }
  return "?";
}

}  // namespace warptrace
