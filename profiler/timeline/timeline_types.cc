#include "profiler/timeline/timeline_types.h"

namespace warptrace {

const char* FlowKindName(FlowKind kind) {
  switch (kind) {
    case FlowKind::kArrivalToRelease:
      return "arrival_to_release";
    case FlowKind::kIssueToCompletion:
      return "issue_to_completion";
  }
  return "?";
}

}  // namespace warptrace
