#include "profiler/trace/verdict.h"

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
