// The record plan's barrier table (TraceLayout::barriers) and the recorder thread of a trace
// unit; internal to //jit/plan:record_plan.
#ifndef WARPTRACE_JIT_PLAN_PLAN_BARRIERS_H_
#define WARPTRACE_JIT_PLAN_PLAN_BARRIERS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "format/layout.h"
#include "jit/builder/kernel.h"

namespace warptrace::plan_internal {

// The linear thread id that records trace unit `unit` of a block of `layout`.
uint64_t RecorderThread(const TraceLayout& layout, uint32_t unit);

// Every element of every phase barrier array of `kernel`, by id, with the recorded arrivals
// that complete one of its phases (0: unknown); with a cluster link scope, every CTA's
// elements by cluster-wide id ("full[0] of CTA rank 1").
std::vector<BarrierInfo> PlanBarriers(const Kernel& kernel, const TraceLayout& layout,
                                      const std::vector<std::optional<uint32_t>>& site_of_node);

// Sets SiteInfo::end_observed on each recorded copy on a phase barrier (layout.sites, by
// `site_of_node`) whose barrier no recorded phase wait of a unit's recorder thread waits
// on: its end cannot be derived from the trace (format/links.h), so its issuer observes it.
// `layout`'s unit and block must be set (ValidateLayout).
void MarkObservedCopyEnds(const Kernel& kernel,
                          const std::vector<std::optional<uint32_t>>& site_of_node,
                          TraceLayout& layout);

// Sets SiteInfo::ends_at_waits on every site of each in-order group kind (cp.async groups,
// wgmma groups, TMA store groups; GroupClassOf) whose groups' ends the dump can derive at
// the kind's recorded waits (trace version 5, format/links.h): every commit of the kind in
// `kernel` is a recorded site's begin (a commit of no site would make the dump miscount
// the groups in flight), some wait of the kind leaves groups in flight (where none does,
// the emitter records the ends without counters already, or keeps them), and the kernel
// has no early return (its exit would need the count in flight there). Returns the group
// kinds marked: each records one wait(0) before the kernel's exit (2 slots per unit).
uint32_t MarkGroupEndsAtWaits(const Kernel& kernel,
                              const std::vector<std::optional<uint32_t>>& site_of_node,
                              TraceLayout& layout);

}  // namespace warptrace::plan_internal

#endif  // WARPTRACE_JIT_PLAN_PLAN_BARRIERS_H_
