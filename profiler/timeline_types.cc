#include "profiler/timeline_types.h"

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

}  // namespace warptrace
