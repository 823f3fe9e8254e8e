// The Analysis (analysis.h) as JSON, for scripts and CI. Streamed with llvm::json::OStream;
// deterministic order; names pass through JSON's UTF-8 repair. Field names are stable: new
// fields may be added, existing ones keep their name and meaning (times in ns, shares and
// fractions in 0..1).
//
//   {"format": "warptrace-analysis", "version": 1,
//    "kernel": "gemm", "device": "NVIDIA H200", "host_backend": false,
//    "units": 512, "units_without_record": 0,
//    "diagnosis": [{"kind": "bound", "score": 0.41, "text": "producer-bound: ...",
//                   "host_clock": "host_only"}, ...],
//                  (host_clock: HostClockSupportName, what a host backend's clock supports)
//    "roles": [{"role": "consumer", "units": 256, "unit_time_ns": N, "waiting_ns": N,
//               "waiting_share": 0.41, "median_unit_ns": N,
//               "copies": N, "copy_bytes": N, "copy_engines": ["tma_2d"],
//               "copy_in_flight_ns": N, "copy_in_flight_share": 0.7,
//               "copy_gb_per_s_in_flight": 21.5, "copy_gb_per_s_over_span": 130.2,
//                          (copy bandwidth, analysis.h; host time when host_backend)
//               "slowest_unit": UNIT, "outlier_units": [UNIT, ...],
//               "waits": [{"family": "full[*]", "count": N, "wait_ns": N, "share": 0.4,
//                          "overhead_ns": N, "overhead_fraction": 0.01}, ...],
//               "barriers": [{"barrier": "full[2]", "count": N, "wait_ns": N, "share": 0.1,
//                             "overhead_ns": N, "overhead_fraction": 0.01}, ...],
//                          (waits by barrier, from recorded hand-offs; [] without them)
//               "sites": [{"site": 3, "name": "mainloop", "kind": "region", "count": N,
//                          "total_ns": N, "self_ns": N, "share": 0.9, "waiting_ns": N,
//                          "waiting_share": 0.38,
//                          "waits": [{"family": "full[*]", "wait_ns": N, "share": 0.38}]},
//                         ...]}, ...],
//    (with clusters whose CTAs released each other's waits, after "critical_path":
//     "cluster_size": 2, "cross_cta_waits": [{"waiter_role": "producer", "waiter_rank": 0,
//       "releaser_role": "consumer", "releaser_rank": 1, "family": "empty[*]", "waits": N,
//       "waited_ns": N, "share": 0.38}, ...], most waited first: analysis.h CrossCtaWait)
//    "critical_path": {"per_unit_only": false, "blocks": N, "handoffs": N,
//                      "trace_links": N,  (hand-off links resolved from the trace)
//                      "regions": [{"role": "producer", "site": 1, "name": "load",
//                                   "blocks": N, "block_fraction": 0.96, "path_ns": N,
//                                   "mean_share": 0.62}, ...],
//                      "slowest_block": UNIT,
//                      "slowest_block_path": [{"role": "producer", "unit": 0,
//                                              "name": "load", "ns": N, "share": 0.1}, ...],
//                      "slowest_block_path_truncated": false},
//    (with a cluster link scope, one path per cluster across its CTAs: "critical_path" adds
//     "scope": "cluster" and "cross_cta_handoffs": N after "blocks" / "handoffs" (blocks
//     then counts clusters), "cta_rank" to each region and path step, and after the
//     truncation flag "slowest_block_crossings": [{"from_rank": 0, "from_role": "producer",
//       "from_unit": 0, "to_rank": 1, "to_role": "consumer", "to_unit": 1,
//       "wait": "wait full", "at_ns": N}, ...]: the slowest path's CTA-to-CTA edges)
//    "grid": {"blocks": N, "early_return_blocks": N, "working_blocks": N,
//             "median_early_return_ns": N, "span_ns": N,
//             "sms": [{"sm": 0, "blocks": N, "busy_ns": N}, ...],
//             "mean_sm_busy_ns": N, "busiest_sm": {"sm": 2, "blocks": N, "busy_ns": N},
//             "sm_imbalance": 2.0, "median_block_ns": N, "median_block_end_ns": N,
//             "last_block_end_ns": N, "tail_ns": N, "tail_share": 0.6, "last_block": UNIT,
//             "slowest_block": UNIT, "max_concurrent_blocks": N, "waves": 1.0,
//             "outlier_blocks": [UNIT, ...],
//             "dims": [{"dim": "y", "name": "seq", "values": 8, "explained": 0.92, "slowest": 3,
//                       "slowest_mean_ns": N, "slowest_blocks": N, "fastest": 0,
//                       "fastest_mean_ns": N, "median_mean_ns": N, "ratio": 4.1}, ...]},
//    "overhead": {"events": N, "ns_per_event": 10.0, "cycles_per_event": 15.0,
//                 "overhead_ns": N, "share": 0.03, "wait_overhead_ns": N,
//                 "wait_overhead_fraction": 0.01, "compensated": false}}
//
// UNIT is {"block": linear id, "block_index": [x, y, z], "unit": unit index, "sm": N,
// "role": "consumer", "ns": N, "ratio": 1.9, "label": "seq 3 / partition 1"} ("unit" and
// "role" only for units, "label" only where the block has one: BlockLabelOf). A site
// id of 4294967295 is time outside any slice ("(untracked)"), 4294967294 the hand-off
// latency between an arrival and the wait's end ("(hand-off)"): critical_path.h.
#ifndef WARPTRACE_PROFILER_ANALYSIS_ANALYSIS_JSON_H_
#define WARPTRACE_PROFILER_ANALYSIS_ANALYSIS_JSON_H_

#include <string>

#include "absl/status/status.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis.h"

namespace warptrace {

inline constexpr char kAnalysisFormat[] = "warptrace-analysis";
inline constexpr int kAnalysisVersion = 1;

void WriteAnalysisJson(const Analysis& analysis, llvm::raw_ostream& os);

// The causal profile as one JSON value (Analysis's "causal_profile", the what-if JSON's):
// {"measured_ns", "speedups": [0.1, 0.25, 0.5, 1.0], "rows": [{"role", "name", "kind",
// "instances", "work_ns", "saving": [4], "predicted_ns": [4], "flat"}], "limitations": [..]}.
void WriteCausalProfileJson(const CausalProfile& profile, llvm::json::OStream& j);

// Writes atomically to `path` ("-": stdout) with base/file.h's WriteFileAtomically: its
// errors (the file system's codes; FailedPrecondition for a path that is an input).
absl::Status WriteAnalysisJsonFile(const Analysis& analysis, const std::string& path);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_ANALYSIS_JSON_H_
