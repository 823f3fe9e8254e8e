// Diagnose: turns an Analysis (analysis.h) into a short ranked list of findings, each one
// sentence with its numbers and coordinates, e.g.
//
//   producer-bound: consumer units idle 41% waiting on full[*]; the producer's `load` is on
//   the critical path in 96% of blocks (62% of block time); the producer waited 2% of its
//   time (on empty[*])
//
// Findings (kind, when it is reported, its score = the fraction of time it concerns):
//   early_return   always first, unranked (score 0), when some block returned early: how
//                  many of how many, and that the block findings below are over the working
//                  blocks (analysis.h, "early return").
//   bound          the role that waits most (share >= kMinWaitShare) and the role whose
//                  region leads the critical path (with hand-off links), or, per unit only,
//                  the other role of a two-role kernel and its busiest region. Score: the
//                  waiting share. Kind "waiting" when no other role can be named.
//   cross_cta      with clusters: the (role, CTA rank) whose waits were released most by
//                  another CTA's role (the phase's last arrival a remote one), when that is
//                  >= kMinWaitShare of its time: "CTA 1's consumer held CTA 0's producer".
//                  Score: that share.
//   tail           tail_share >= kMinTailShare. Score: tail_share.
//   sm_imbalance   busiest SM >= kMinImbalance x the mean SM. Score: excess / span.
//   outlier_blocks a block >= outlier_ratio x the median block. Score: excess / span.
//   dim_imbalance  the grid dimension that explains the most of the working blocks' time
//                  variance (>= kMinExplained), when its slowest coordinate's blocks take
//                  >= kMinImbalance x the median coordinate's mean. Score: excess / span.
//   unit_imbalance per role, a unit >= outlier_ratio x the role's median unit.
//   overhead       always last (score 0): measured cost per event and how much of the
//                  reported waits it could account for.
// Ties keep the order above. A cross_cta finding whose score is at least half the bound (or
// waiting) finding's goes right before it: the peer CTA is why that role waits.
#ifndef WARPTRACE_PROFILER_ANALYSIS_DIAGNOSIS_H_
#define WARPTRACE_PROFILER_ANALYSIS_DIAGNOSIS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis.h"

namespace warptrace {

inline constexpr double kMinWaitShare = 0.05;
inline constexpr double kMinTailShare = 0.10;
inline constexpr double kMinImbalance = 1.25;
inline constexpr double kMinExplained = 0.5;

std::vector<Diagnosis> Diagnose(const Analysis& analysis);

// "diagnosis:" then one numbered line per finding ("  1. producer-bound: ..."); "  (no
// finding)" when there is none. On the host backend, a line per HostClockSupport that
// some finding has, naming the findings by number ("  host clock, findings 4, 5: ratios of
// host time between blocks or units running the same code: ..."). Then, not findings, a line per role with wgmma groups
// ("  tensor cores: ...") and per role with copies of a known engine ("  copy bandwidth:
// producer units moved N bytes in N copies (tma_2d): X GB/s per unit while a copy was in
// flight (P of their time), Y GB/s over the kernel's span", marked as host time on the
// host backend).
void PrintDiagnosis(const Analysis& analysis, llvm::raw_ostream& os);

// 850 ns, 12.35 us, 1.234 ms, 2.500 s.
std::string FormatNs(double ns);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_DIAGNOSIS_H_
