#include "profiler/timeline/timeline_types.h"

#include "base/enum_table.h"

namespace warptrace {

namespace {

constexpr EnumTable<FlowKind, 2> kFlowKinds{"flow kind", {{
    {FlowKind::kArrivalToRelease, "arrival_to_release"},
    {FlowKind::kIssueToCompletion, "issue_to_completion"},
}}};
static_assert(kFlowKinds.Covers(2));

}  // namespace

const char* FlowKindName(FlowKind kind) { return kFlowKinds.Name(kind); }

}  // namespace warptrace
