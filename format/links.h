// The hand-off links contract: what the recorder writes into a hand-off event's payload
// (trace version 2 on) and what it means to the dump. Generated code (jit/emit) writes it;
// profiler/trace/links.h resolves it into links.
//
// The contract between the recorder (what generated code writes) and the dump:
//
//   site kind (format/layout.h)  events                          payload (a, b)
//   kBarrierArrive        one event, no exit flag         (barrier, phase)
//   kPhaseWait            enter = the wait starts,        (barrier, phase) on the exit;
//                         exit  = the wait is released    version 4: none on the enter
//   kAsyncCopy            begin (no exit flag) = issue,   (issue, barrier) on both
//                         end (exit flag) = the completion
//                         the unit observed
//   kAsyncCopy on a phase barrier (CompletesOnBarrier: bulk and TMA loads), version 5:
//                         begin only (no end is           (barrier, phase) on the begin;
//                         recorded): the dump derives     the k-th begin of the site in
//                         the end, below                  the unit is issue k
//   kAsyncCopy without a barrier (cp.async, bulk store groups) and kMmaGroup (wgmma groups):
//                         the same events; version 4:     none: the k-th begin and the k-th
//                         (they complete in order)        end of the site in the unit are
//                                                         issue k, barrier kNoBarrier
//   the same group sites marked ends_at_waits (SiteInfo::ends_at_waits), version 5:
//                         begin only (no payload, the k-th of the site is issue k); every
//                         wait of the site's group kind records an exit of the kind's
//                         first such site with (n, kNoBarrier), n the groups it leaves in
//                         flight: the dump ends there every group of the kind the unit
//                         began and has not ended but the newest n (groups complete in
//                         commit order), Link::at_wait
//
// An event recorded with a payload always uses it (versions 2 and 3 carry every one above).
//
//   barrier  the id of one phase barrier (an mbarrier; an element of a barrier array has
//            its own id), local to the link scope (below): links never leave it.
//   phase    the 0-based number of the barrier's phase the event belongs to: an arrival
//            counts towards completing phase `phase`; a wait waits for phase `phase` to
//            complete (its parity is phase & 1). Generated code knows it from its loop
//            counters (the k-th use of ring stage s is phase k / stages).
//   issue    a number the unit gives each async copy it issues, unique within the unit and
//            site; the end with the same (site, issue) is that copy's completion.
//            `barrier` is the phase barrier the copy completes on, or kNoBarrier (sm_80
//            cp.async groups).
//   derived end (version 5) of a copy on a phase barrier: the earliest recorded release
//            (a kPhaseWait exit, by the link scope's clock) of the (barrier, phase) its
//            begin names, in any unit of the scope. The copy's bytes had landed by then: an
//            upper bound on its completion (a wait returns only once the phase's
//            transactions are complete), not an observation by the issuing unit. A copy
//            whose phase has no recorded release has no end (the verifier says so).
//            Versions 1 to 4 recorded the end the issuing thread observed (polling while it
//            waited, or at its next issue on the element): an event of its own unit.
//   observed end (version 5, SiteInfo::end_observed): a copy site on a phase barrier whose
//            barrier no trace unit's recorder waits on (the plan decides: e.g. block units,
//            whose one recorder is the producer while the waits run in consumers) records
//            begin and end as version 4 did, (issue, barrier) on both, the end observed by
//            the issuing thread (CopyEndDerived in format/layout.h tells the two apart).
//   A TMA load with .multicast::cluster (SiteInfo::multicast): its begin's payload is
//            (issue, phase & 0xffff | ctaMask << 16) (version 5: (barrier, phase & 0xffff |
//            ctaMask << 16), its end derived on its own CTA's barrier), its end's (issue,
//            barrier) before version 5: the copy
//            completes bytes of phase `phase` on the barrier at the same offset in every CTA
//            of the mask, so the dump links its issue to the waits that phase released in
//            each other CTA of the mask (LinkKind::kMulticastLanding; the phase is matched
//            modulo 2^16).
#ifndef WARPTRACE_FORMAT_LINKS_H_
#define WARPTRACE_FORMAT_LINKS_H_

#include <cstdint>

namespace warptrace {

// The link scope: the units between which hand-off links may reach, and so the unit of
// everything that must see a link's both ends: the dump's batches and the hand-off linker
// (profiler/dump), sink parts (profiler/dump/sink.h: a part sees whole scopes), the
// critical path (profiler/analysis) and block sampling (TraceLayout::sample, which must take
// whole scopes). Consecutive records of one scope instance are contiguous in the buffer
// (RecordsPerLinkScope in format/layout.h).
//   kBlock    one CTA (a thread block): phase barriers, named barriers and async copies are
//             the block's own; what every trace has today.
//   kCluster  a thread-block cluster (LinkScopeOf): barrier ids are cluster-wide (CTA rank r's
//             element i: r x ids per CTA + i, r the %cluster_ctarank, x fastest), so a remote
//             arrival on a peer CTA's barrier links to the wait it released there. Where a
//             cluster's CTAs are not consecutive blocks (1x2 in a grid wider than 1) an
//             instance's records are the rows of the grid that hold whole clusters
//             (BlocksPerLinkScope), and links stay within each cluster (ClusterLinear).
enum class LinkScope : uint8_t { kBlock, kCluster };

// The payload `barrier` of an async copy that completes on no phase barrier (an sm_80
// cp.async group).
inline constexpr uint32_t kNoBarrier = 0xffffffffu;

}  // namespace warptrace

#endif  // WARPTRACE_FORMAT_LINKS_H_
