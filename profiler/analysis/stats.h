// Small statistics for the analysis and the diff: nearest-rank percentiles and the
// Mann-Whitney rank test.
//
//   std::sort(before.begin(), before.end());
//   double p95 = PercentileSorted(before, 95);
//   RankTest test = MannWhitney(before, after);
//   if (test.p_value < 0.01) ...   // the two samples differ in location
#ifndef WARPTRACE_PROFILER_ANALYSIS_STATS_H_
#define WARPTRACE_PROFILER_ANALYSIS_STATS_H_

#include <cstdint>

#include "absl/types/span.h"

namespace warptrace {

// The nearest-rank p-th percentile (0 < p <= 100) of ascending `sorted`: the element at index
// ceil(p/100 * n) - 1, as in summary.h. 0 for an empty span.
int64_t PercentileSorted(absl::Span<const int64_t> sorted, double p);
double PercentileSorted(absl::Span<const double> sorted, double p);

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
