// DiffTraces: did my change help? Compares two traces of a kernel (before / after) region by
// region and says, with a rank test, which differences are real.
//
//   DiffCollector before, after;                 // sinks: feed each trace's dump to one
//   RETURN_IF_ERROR(DumpTrace(layout_b, words_b, {}, before.sinks(), result_b));
//   RETURN_IF_ERROR(DumpTrace(layout_a, words_a, {}, after.sinks(), result_a));
//   TraceDiff diff = DiffTraces(before, after, {});
//   PrintTraceDiff(diff, llvm::outs());
//
// Rows. Slices are grouped by (role, site name, loop iteration index): one row per role and
// site over all its instances (iteration -1), and, for slices inside a loop body, one per
// index of the innermost enclosing loop-body instance within its unit (a loop-body slice is
// its own iteration). Each row has count, mean, p50, p95 of the slices' (inclusive)
// durations before and after, the relative change of the mean, and the two-sided
// Mann-Whitney p-value (stats.h) of the two samples of durations.
//   significant  p * (rows tested) < alpha (Bonferroni over every row with >= 2 samples on
//                each side) and |change| >= min_change.
//   ranking      significant rows first, then by |change of the row's self time per block|
//                (exclusive time, so a parent region does not outrank the child that
//                changed), then by name.
// Kernel-level rows, kept apart from the table: "(block)", each block's duration (latest
// unit end - earliest unit start), and every kernel-kind site.
// Shares. The critical-path regions' mean share of block time and the roles' wait-family
// shares of unit time, before and after (analysis.h), for every entry whose share moved by
// at least min_share_change.
//
// Memory: a DiffCollector keeps every slice's duration (8 bytes per slice, for the rank
// test) plus an AnalysisSink.
#ifndef WARPTRACE_PROFILER_ANALYSIS_DIFF_H_
#define WARPTRACE_PROFILER_ANALYSIS_DIFF_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis.h"
#include "profiler/analysis/analysis_sink.h"
#include "profiler/analysis/duration_sink.h"
#include "profiler/dump/sink.h"

namespace warptrace {

// Both sinks a diff needs from one trace: durations and the analysis.
class DiffCollector {
 public:
  explicit DiffCollector(AnalysisOptions options = {}) : analysis_(options) {}
  DiffCollector(const DiffCollector&) = delete;
  DiffCollector& operator=(const DiffCollector&) = delete;
  absl::Span<TraceSink* const> sinks() { return sinks_; }
  const DurationSink& durations() const { return durations_; }
  const Analysis& analysis() const { return analysis_.result(); }

 private:
  DurationSink durations_;
  AnalysisSink analysis_;
  std::array<TraceSink*, 2> sinks_ = {&durations_, &analysis_};
};

struct DiffOptions {
  double alpha = 0.01;
  double min_change = 0.02;          // relative change of the mean
  double min_share_change = 0.01;    // absolute change of a share
};

struct DiffRow {
  std::string role;
  std::string name;
  int64_t iteration = -1;            // -1: every instance
  SiteKind kind = SiteKind::kRegion;
  uint64_t count_before = 0, count_after = 0;
  double mean_before = 0, mean_after = 0;
  double p50_before = 0, p50_after = 0;
  double p95_before = 0, p95_after = 0;
  double change = 0;                 // (mean_after - mean_before) / mean_before
  double self_delta_per_block_ns = 0;
  double p_value = 1;
  bool significant = false;
};

struct ShareChange {
  std::string role;
  std::string name;                  // region (critical path) or wait family
  double before = 0, after = 0;
};

struct TraceDiff {
  std::string kernel_before, kernel_after;
  uint64_t blocks_before = 0, blocks_after = 0;
  uint64_t rows_tested = 0;
  std::vector<DiffRow> kernel;       // "(block)" then kernel-kind sites
  std::vector<DiffRow> rows;         // ranked (see above)
  std::vector<ShareChange> critical_path;  // by |after - before|, largest first
  std::vector<ShareChange> waits;
  bool per_unit_only = true;         // either trace's critical path is per unit only
};

TraceDiff DiffTraces(const DiffCollector& before, const DiffCollector& after,
                     const DiffOptions& options = {});

// The table: a header line per trace, the kernel rows, then at most `max_rows` rows, then
// the share changes. Numbers in us; change in percent; p-values with 2 significant digits.
void PrintTraceDiff(const TraceDiff& diff, llvm::raw_ostream& os, size_t max_rows = 20);

// Streams the whole diff as JSON: {"format": "warptrace-diff", "version": 1, "kernel_before",
// "kernel_after", "blocks_before", "blocks_after", "rows_tested", "per_unit_only",
// "kernel": [ROW], "rows": [ROW], "critical_path": [SHARE], "waits": [SHARE]} with
// ROW = {"role", "name", "iteration", "kind", "count_before", "count_after", "mean_before_ns",
// "mean_after_ns", "p50_before_ns", "p50_after_ns", "p95_before_ns", "p95_after_ns",
// "change", "self_delta_per_block_ns", "p_value", "significant"} and
// SHARE = {"role", "name", "before", "after"}. Field names are stable.
void WriteTraceDiffJson(const TraceDiff& diff, llvm::raw_ostream& os);

// Rows (kernel rows included) that got slower by more than `percent` with significance,
// restricted to `names` when it is not empty (by site name; "(block)" for block time).
// Iteration rows are not gated.
std::vector<const DiffRow*> SlowerThan(const TraceDiff& diff, double percent,
                                       absl::Span<const std::string> names = {});

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_DIFF_H_
