// Small statistics for the analysis, the diff and the summary: nearest-rank percentiles (the
// one definition the project uses) and the Mann-Whitney rank test.
//
//   std::sort(before.begin(), before.end());
//   double p95 = PercentileSorted(before, 95);
//   RankTest test = MannWhitney(before, after);
//   if (test.p_value < 0.01) ...   // the two samples differ in location
#ifndef WARPTRACE_PROFILER_ANALYSIS_STATS_H_
#define WARPTRACE_PROFILER_ANALYSIS_STATS_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace warptrace {

// The nearest-rank percentile's index in `n` >= 1 ascending values: ceil(percent * n / 100) - 1,
// computed in integers (95 % of 20 values is exactly rank 19, index 18), and 0 for
// percent 0 (the minimum); percent is clamped to 0..100 (100: the maximum, index n - 1).
size_t NearestRankIndex(size_t n, int percent);

// The nearest-rank `percent`-th percentile of ascending `sorted` (NearestRankIndex): an
// element of the data, never an interpolation. 0 for an empty span.
int64_t PercentileSorted(absl::Span<const int64_t> sorted, int percent);
double PercentileSorted(absl::Span<const double> sorted, int percent);

// The same percentile of unsorted `values`, found with std::nth_element (O(n)); reorders
// `values`. 0 for an empty span.
int64_t PercentileInPlace(absl::Span<int64_t> values, int percent);

struct RankTest {
  double u = 0;        // Mann-Whitney U of `a` (pairs a > b, ties count 1/2)
  double z = 0;        // standardized U (normal approximation); 0 when exact
  double p_value = 1;  // two-sided
  bool exact = false;  // p from the exact distribution of U (small samples without ties)
};

// Two-sided Mann-Whitney U test (Wilcoxon rank-sum) of "a and b come from one distribution".
// With no ties and n_a * n_b <= 400 (e.g. 20 x 20) the p-value is exact (the distribution
// of U by counting); otherwise the normal approximation with tie correction and continuity
// correction. p = 1 when either sample is empty or every value is tied.
// Cost: O((n_a + n_b) log(n_a + n_b)) (exact: O(n_a * n_b * min(n_a, n_b))).
RankTest MannWhitney(absl::Span<const double> a, absl::Span<const double> b);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_STATS_H_
