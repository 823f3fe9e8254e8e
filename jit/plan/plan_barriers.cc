// The layout's barrier table (plan_barriers.h).
#include "jit/plan/plan_barriers.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace warptrace::plan_internal {
namespace {

// A node of the kernel (an arrival, a phase wait), with who runs it.
struct RunSite {
  const KernelNode* node = nullptr;
  uint64_t role_first = 0;    // first thread of its role (0 outside roles)
  uint64_t role_threads = 0;  // threads of its role (the block outside roles)
  bool in_if = false;         // who arrives depends on data
};

// Every node of `kind` in the kernel, with who runs it.
std::vector<RunSite> CollectRunSites(const Kernel& kernel, KernelNode::Kind kind) {
  std::vector<RunSite> out;
  WalkNodes(
      kernel.body, RunSite{nullptr, 0, kernel.ThreadsPerBlock(), false},
      [&](const KernelNode& node, const RunSite& at) {
        if (node.kind != kind) return;
        out.push_back(at);
        out.back().node = &node;
      },
      [](const NestedBody& nested, const RunSite& at) {
        RunSite inner = at;
        if (nested.parent->kind == KernelNode::Kind::kIf) inner.in_if = true;
        if (nested.which == NestedBody::kRoleBody) {
          const uint64_t axis = RoleAxisThreads(nested.parent->axis);
          inner.role_first = uint64_t{nested.role->first} * axis;
          inner.role_threads = uint64_t{nested.role->count} * axis;
        }
        return inner;
      });
  return out;
}

// Recorded arrival events that complete one phase of `decl`, summed over a block's units:
// each arrival site contributes (arrivals per phase / threads it brings) executions, each
// recorded by the units whose recorder runs it. 0 (unknown) when an arrival is not recorded,
// depends on data, or the sites disagree.
uint32_t RecordedArrivalsPerPhase(const PhaseBarrierDecl& decl,
                                  const std::vector<RunSite>& arrivals,
                                  const std::vector<std::optional<uint32_t>>& site_of_node,
                                  const TraceLayout& layout) {
  std::optional<uint64_t> per_phase;
  for (const RunSite& a : arrivals) {
    if (a.node->text != decl.name) continue;
    if (a.in_if || !site_of_node[a.node->ordinal].has_value()) return 0;
    // The threads one execution of the site brings, and which of them arrive.
    const uint32_t stride = ArriveByStride(a.node->arrive_by);
    const uint64_t threads = stride == 0 ? 1 : a.role_threads / stride;
    if (threads == 0 || decl.arrivals % threads != 0) return 0;
    uint64_t recorders = 0;
    for (uint32_t u = 0; u < UnitsPerBlock(layout); ++u) {
      const uint64_t r = RecorderThread(layout, u);
      const bool in_role = r >= a.role_first && r < a.role_first + a.role_threads;
      recorders += stride == 0 ? r == a.role_first
                               : in_role && (r - a.role_first) % stride == 0;
    }
    const uint64_t events = decl.arrivals / threads * recorders;
    if (per_phase.has_value() && *per_phase != events) return 0;
    per_phase = events;
  }
  return static_cast<uint32_t>(
      std::min<uint64_t>(per_phase.value_or(0), std::numeric_limits<uint32_t>::max()));
}

}  // namespace

uint64_t RecorderThread(const TraceLayout& layout, uint32_t unit) {
  switch (layout.unit.kind) {
    case UnitKind::kCustom:
      return uint64_t{layout.unit.first_thread} + layout.unit.recorder_offset;
    case UnitKind::kWarp:
    case UnitKind::kWarpgroup:
    case UnitKind::kBlock:
      return uint64_t{unit} * UnitThreads(layout);
  }
  return uint64_t{unit} * UnitThreads(layout);
}

// The layout's barrier table: every element of every phase barrier array, by id.
std::vector<BarrierInfo> PlanBarriers(const Kernel& kernel, const TraceLayout& layout,
                                      const std::vector<std::optional<uint32_t>>& site_of_node) {
  const std::vector<RunSite> arrivals = CollectRunSites(kernel, KernelNode::Kind::kArrive);
  std::vector<BarrierInfo> table;
  for (const PhaseBarrierDecl& decl : kernel.phase_barriers) {
    const uint32_t per_phase = RecordedArrivalsPerPhase(decl, arrivals, site_of_node, layout);
    for (uint32_t i = 0; i < decl.size; ++i) {
      table.push_back(BarrierInfo{decl.first_id + i, absl::StrCat(decl.name, "[", i, "]"),
                                  per_phase});
    }
  }
  if (LinkScopeOf(layout) != LinkScope::kCluster || table.empty()) return table;
  // Cluster-wide ids (PhaseBarrierDecl::cluster_ids): CTA rank r's element i is
  // r x per_cta + i. An array that remote arrivals reach counts arrivals from several CTAs,
  // which the per-phase count of one CTA's own arrivals does not describe: unchecked.
  const uint32_t per_cta = static_cast<uint32_t>(table.size());
  for (BarrierInfo& info : table) {
    for (const RunSite& a : arrivals) {
      if (!a.node->cta.empty() && absl::StartsWith(info.name, absl::StrCat(a.node->text, "["))) {
        info.arrivals_per_phase = 0;
      }
    }
  }
  std::vector<BarrierInfo> cluster_table;
  for (uint32_t rank = 0; rank < layout.cluster.Count(); ++rank) {
    for (const BarrierInfo& info : table) {
      cluster_table.push_back(BarrierInfo{rank * per_cta + info.id,
                                          absl::StrCat(info.name, " of CTA rank ", rank),
                                          info.arrivals_per_phase});
    }
  }
  return cluster_table;
}

// A copy site whose end no recorded wait gives (SiteInfo::end_observed): the plan looks for
// a recorded phase wait on the copy's barrier array run by a role (or the block) holding
// some unit's recorder thread. One in a branch counts: whether it runs depends on data, and
// where it does not, the verifier says so (async_end_not_derivable).
void MarkObservedCopyEnds(const Kernel& kernel,
                          const std::vector<std::optional<uint32_t>>& site_of_node,
                          TraceLayout& layout) {
  const std::vector<RunSite> waits = CollectRunSites(kernel, KernelNode::Kind::kPhaseWait);
  auto recorded_wait_on = [&](const std::string& barrier) {
    for (const RunSite& w : waits) {
      if (w.node->text != barrier || !site_of_node[w.node->ordinal].has_value()) continue;
      for (uint32_t u = 0; u < UnitsPerBlock(layout); ++u) {
        const uint64_t r = RecorderThread(layout, u);
        if (r >= w.role_first && r < w.role_first + w.role_threads) return true;
      }
    }
    return false;
  };
  ForEachNode(kernel.body, [&](const KernelNode& node) {
    const std::optional<uint32_t> site = site_of_node[node.ordinal];
    if (node.kind != KernelNode::Kind::kAsyncCopy || !site.has_value()) return;
    SiteInfo& info = layout.sites[*site];
    info.end_observed =
        CompletesOnBarrier(info.copy_engine) && !recorded_wait_on(node.copy.barrier);
  });
}

uint32_t MarkGroupEndsAtWaits(const Kernel& kernel,
                              const std::vector<std::optional<uint32_t>>& site_of_node,
                              TraceLayout& layout) {
  if (FindNode(kernel.body, [](const KernelNode& n) {
        return n.kind == KernelNode::Kind::kReturn;
      }) != nullptr) {
    return 0;
  }
  struct Kind {
    bool (*commits)(const KernelNode&);
    KernelNode::Kind wait;
  };
  static constexpr Kind kKinds[] = {
      {[](const KernelNode& n) {
         return n.kind == KernelNode::Kind::kAsyncCopy && n.copy.barrier.empty();
       },
       KernelNode::Kind::kAsyncWait},
      {[](const KernelNode& n) { return n.kind == KernelNode::Kind::kMmaGroup; },
       KernelNode::Kind::kMmaWait},
      {[](const KernelNode& n) { return n.kind == KernelNode::Kind::kTmaStore; },
       KernelNode::Kind::kTmaStoreWait},
  };
  uint32_t marked = 0;
  for (const Kind& kind : kKinds) {
    bool any = false, all_recorded = true, leaves_in_flight = false;
    ForEachNode(kernel.body, [&](const KernelNode& n) {
      if (kind.commits(n)) {
        any = true;
        const std::optional<uint32_t> site = site_of_node[n.ordinal];
        all_recorded = all_recorded && site.has_value() &&
                       GroupClassOf(layout.sites[*site]) != GroupClass::kNone;
      }
      if (n.kind == kind.wait && n.async_pending > 0) leaves_in_flight = true;
    });
    if (!any || !all_recorded || !leaves_in_flight) continue;
    ForEachNode(kernel.body, [&](const KernelNode& n) {
      if (kind.commits(n)) layout.sites[*site_of_node[n.ordinal]].ends_at_waits = true;
    });
    ++marked;
  }
  return marked;
}

}  // namespace warptrace::plan_internal
