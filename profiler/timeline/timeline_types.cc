#include "profiler/timeline/timeline_types.h"

#include "base/enum_table.h"

namespace warptrace {

namespace {

constexpr EnumTable<FlowKind, 3> kFlowKinds{"flow kind", {{
    {FlowKind::kArrivalToRelease, "arrival_to_release"},
    {FlowKind::kIssueToCompletion, "issue_to_completion"},
    {FlowKind::kMulticastLanding, "multicast_landing"},
}}};
static_assert(kFlowKinds.Covers(3));

}  // namespace

const char* FlowKindName(FlowKind kind) { return kFlowKinds.Name(kind); }

bool FlowStartsAtIssue(FlowKind kind) {
  switch (kind) {
    case FlowKind::kArrivalToRelease:
      return false;
    case FlowKind::kIssueToCompletion:
    case FlowKind::kMulticastLanding:
      return true;
  }
  return false;
}

bool FlowEndsAtRelease(FlowKind kind) {
  switch (kind) {
    case FlowKind::kArrivalToRelease:
    case FlowKind::kMulticastLanding:
      return true;
    case FlowKind::kIssueToCompletion:
      return false;
  }
  return false;
}

}  // namespace warptrace
