// What-if predictions over a recorded launch: "if `mma` were 2x faster, how fast would the
// kernel be, and what would bound it?" — and the causal profile, that question asked of every
// region at once. Predicted from the trace's dependency graph, never by re-running.
//
//   ASSIGN_OR_RETURN(std::vector<Speedup> speedups, ParseSpeedups({"mma=0.5"}));
//   ASSIGN_OR_RETURN(WhatIfPrediction p, PredictWhatIf(timeline, speedups));
//   llvm::outs() << p.measured_ns << " -> " << p.predicted_ns << "\n";
//   ASSIGN_OR_RETURN(CausalProfile profile, ComputeCausalProfile(timeline));
//   PrintCausalProfile(profile, llvm::outs());
//
// The dependency graph of a launch (built from a collected Timeline, timeline_types.h):
//   * per unit, its points in program order: every slice begin and end, every instant (a
//     barrier arrival), every async span's issue and observed completion, with the gaps
//     between them as measured;
//   * hand-off edges from the timeline's flows: a phase-barrier or named/block-barrier arrival
//     -> the wait it released (every arrival of the phase is an edge into the release);
//     an async copy's or wgmma group's issue -> its observed completion;
//   * per SM, the order in which blocks occupied it: a block that started at or after
//     another block on its SM ended waits on the latest such block not already followed (it
//     waited for that slot).
//
// Re-timing. Each Speedup names instances: a region or loop body (SiteKind kRegion,
// kLoopBody, kKernel), optionally only on the units of one role, or an async copy / wgmma
// group (kAsyncCopy, kMmaGroup) — and scales them (factor f > 0: every gap of work inside an
// instance takes f times as long; nested matches multiply) or shortens each instance by a
// duration (its work gaps scaled by (w - d) / w, w the instance's work: its length minus the
// waits inside it). Then every point's time is recomputed in dependency order:
//   work gap     t' = t'(previous point) + gap x the product of the open instances' factors;
//   wait end     t' = max(t'(previous point), t'(wait begin) + c, max over releasers of
//                t'(releaser) + L). When the wait really waited (its latest releaser came
//                after it began), L = c = the measured latency from that releaser to the
//                release; else c = the wait's measured length (it cost what it cost) and
//                L = 0 (its wake-up latency, had it waited, is unknown). Releasers are
//                the arrivals the flows name and the async completions of the unit observed
//                inside the wait. A wait without any releaser keeps its measured length;
//                unlinked_waits counts them;
//   completion   observed inside a wait (the thread waited for it): t' = max(t'(previous
//                point), t'(issue) + measured duration x its factor); observed in passing
//                (outside every wait) it is a program point like any other, never before
//                its issue: when the copy really completed is unknown, so re-timing such a
//                copy changes nothing (a stated limitation);
//   a gap inside a wait counts nothing itself: the wait's end is the rule above.
// So a wait never ends before it began nor before its releaser allows; waits that existed only
// because of the sped-up work shrink; work does not. A block's first point moves with its SM
// slot (the block it waited for ended earlier or later); a unit's end keeps its measured
// distance from its last point.
//
// What the graph cannot know, and the prediction therefore assumes unchanged, is listed in
// WhatIfPrediction::limitations: shared-memory and global bandwidth, tensor-core contention
// between warps, clock changes, and the instruction-level effect of a change (a faster mma
// region may issue differently).
//
// Errors (InvalidArgument unless said): a malformed spec (ParseSpeedups says which); a name
// no site of the layout has (the message lists some that exist); a role the layout does not
// have; a name with no instance (on the role's units); a wait site (waits are predicted, not
// set); a factor <= 0; a shortening at least as long as some instance's work (naming it);
// FailedPrecondition for a timeline with several units per block but no hand-off flows at
// all (a version-1 or Mosaic GPU trace): the graph could not link the units, and a number
// would be a guess.
// Thread-safety: reentrant; the timeline is only read.
#ifndef WARPTRACE_PROFILER_ANALYSIS_WHATIF_H_
#define WARPTRACE_PROFILER_ANALYSIS_WHATIF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis.h"
#include "profiler/analysis/speedup.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {

// Speedup (speedup.h): one re-timing, "[ROLE:]NAME=FACTOR" or "[ROLE:]NAME=-DURATION".

// Parses each string, and inside one string specs separated by ';' (spaces around names
// and values are trimmed). InvalidArgument for an empty spec, a missing '=', an empty name,
// an unparsable or non-finite value, a factor <= 0, a shortening <= 0 or without a unit.
absl::StatusOr<std::vector<Speedup>> ParseSpeedups(absl::Span<const std::string> specs);

struct WhatIfOptions {
  // Replays the predicted timeline through AnalysisSink for the predicted critical path and
  // diagnosis (WhatIfPrediction::analysis). The causal profile turns it off per row.
  bool analyze = true;
  // Keep the predicted Timeline in the result (for the Perfetto writer, diff).
  bool keep_timeline = true;
};

struct WhatIfBlock {
  uint32_t block_linear = 0;
  uint32_t sm_id = 0;
  int64_t measured_ns = 0;   // its first unit start to its last unit end
  int64_t predicted_ns = 0;
};

struct WhatIfRole {
  std::string role;
  uint64_t units = 0;
  int64_t measured_ns = 0;   // unit time, summed over the role's units
  int64_t predicted_ns = 0;
  int64_t measured_wait_ns = 0;   // time in wait slices (outermost), summed
  int64_t predicted_wait_ns = 0;
};

struct WhatIfPrediction {
  std::vector<Speedup> speedups;
  int64_t measured_ns = 0;   // kernel time: the first unit start to the last unit end
  int64_t predicted_ns = 0;
  double speedup = 1;        // measured_ns / predicted_ns
  uint64_t instances = 0;    // instances the speedups re-timed
  uint64_t handoff_edges = 0;     // arrival -> release edges in the graph
  uint64_t completion_edges = 0;  // issue -> completion edges
  uint64_t occupancy_edges = 0;   // block -> block edges (an SM slot handed on)
  uint64_t unlinked_waits = 0;    // waits with no releaser: kept at their measured length
  std::vector<WhatIfBlock> blocks;  // by block_linear
  std::vector<WhatIfRole> roles;    // in order of first appearance by unit index
  Analysis analysis;          // of the predicted timeline (options.analyze)
  Timeline timeline;          // predicted (options.keep_timeline)
  std::vector<std::string> limitations;
};

// Errors: see the header comment.
absl::StatusOr<WhatIfPrediction> PredictWhatIf(const Timeline& timeline,
                                               absl::Span<const Speedup> speedups,
                                               const WhatIfOptions& options = {});

// The causal profile (CausalProfile, analysis.h): for each region, loop body, async copy and
// wgmma group with time on some unit (per role, and over every role where several roles have
// it), the predicted kernel time if its instances took kCausalSpeedups less time (10% faster:
// factor 0.9; 100% faster: the instances' work takes no time at all, Coz's upper bound), as
// the fraction of the measured kernel time saved. Rows are sorted by the saving at 50%,
// largest first (ties: at 100%, then role, name). A row whose savings are all below
// kFlatSaving is flat: "speeding this up buys nothing: it is not on the critical path".
inline constexpr double kFlatSaving = 0.005;

// Errors: PredictWhatIf's FailedPrecondition (no hand-off flows); InvalidArgument from the
// timeline itself. Cost: 4 re-timings of the whole timeline per row.
absl::StatusOr<CausalProfile> ComputeCausalProfile(const Timeline& timeline);

// OkStatus unless the layout alone shows the graph cannot link its units (several units per
// block and no site whose events carry a hand-off payload): then the FailedPrecondition
// PredictWhatIf and ComputeCausalProfile would return, without dumping anything (the dump's
// front end skips collecting the timeline for its causal profile then).
absl::Status CheckHandoffsPossible(const TraceLayout& layout);

// A profile that could not be computed (e.g. a dump's, for a trace without hand-offs) has no
// rows and one limitation, kNoCausalProfile followed by the reason.
inline constexpr char kNoCausalProfile[] = "no causal profile: ";

// "causal profile (predicted kernel time saved if the region were N% faster):" then one line
// per row, flat rows last with the sentence; then the limitations (without rows: "(no region
// with time)"; a profile that could not be computed: "causal profile: none" and its reason).
void PrintCausalProfile(const CausalProfile& profile, llvm::raw_ostream& os);
// Measured vs predicted kernel time, per role, the predicted diagnosis, the limitations.
void PrintWhatIf(const WhatIfPrediction& prediction, llvm::raw_ostream& os);

// The what-if as JSON (llvm::json::OStream), field names stable: {"format": "warptrace-whatif", "version": 1, "speedups": [{"role", "name",
//     "factor", "shorten_ns", "text"}], "measured_ns", "predicted_ns", "speedup",
//     "instances", "graph": {"handoff_edges", "completion_edges", "occupancy_edges",
//     "unlinked_waits"}, "blocks": [{"block_linear", "sm_id", "measured_ns", "predicted_ns"}],
//     "roles": [{"role", "units", "measured_ns", "predicted_ns", "measured_wait_ns",
//     "predicted_wait_ns"}], "diagnosis": [{"kind", "score", "text"}], "critical_path":
//     [{"role", "name", "path_ns", "mean_share"}], "causal_profile": WriteCausalProfileJson's
//     (analysis_json.h) when `profile` is given,
//     "limitations": [..]}
void WriteWhatIfJson(const WhatIfPrediction& prediction, const CausalProfile* profile,
                     llvm::raw_ostream& os);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_WHATIF_H_
