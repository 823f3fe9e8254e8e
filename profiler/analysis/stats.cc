#include "profiler/analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace warptrace {
namespace {

template <typename T>
T Percentile(absl::Span<const T> sorted, int percent) {
  return sorted.empty() ? T{} : sorted[NearestRankIndex(sorted.size(), percent)];
}

// P(U <= u) for samples of sizes m and n without ties: counts[k] = arrangements with U = k,
// by the recurrence f(m, n, k) = f(m - 1, n, k - n) + f(m, n - 1, k).
double ExactCdf(size_t m, size_t n, double u) {
  // f[j][k] for the current m' (rows: n' = 0..n).
  const size_t max_u = m * n;
  std::vector<std::vector<double>> prev(n + 1, std::vector<double>(max_u + 1, 0));
  for (size_t j = 0; j <= n; ++j) prev[j][0] = 1;  // m' = 0: U = 0 only
  for (size_t i = 1; i <= m; ++i) {
    std::vector<std::vector<double>> cur(n + 1, std::vector<double>(max_u + 1, 0));
    cur[0][0] = 1;  // n' = 0: U = 0 only
    for (size_t j = 1; j <= n; ++j) {
      for (size_t k = 0; k <= i * j; ++k) {
        cur[j][k] = cur[j - 1][k] + (k >= j ? prev[j][k - j] : 0);
      }
    }
    prev = std::move(cur);
  }
  double total = 0, below = 0;
  for (size_t k = 0; k <= max_u; ++k) {
    total += prev[n][k];
    if (static_cast<double>(k) <= u + 1e-9) below += prev[n][k];
  }
  return below / total;
}

}  // namespace

size_t NearestRankIndex(size_t n, int percent) {
  const uint64_t p = static_cast<uint64_t>(std::clamp(percent, 0, 100));
  const uint64_t rank = (p * n + 99) / 100;  // ceil(p * n / 100), exact
  return rank == 0 ? 0 : static_cast<size_t>(std::min<uint64_t>(rank, n) - 1);
}

int64_t PercentileSorted(absl::Span<const int64_t> sorted, int percent) {
  return Percentile(sorted, percent);
}
double PercentileSorted(absl::Span<const double> sorted, int percent) {
  return Percentile(sorted, percent);
}

int64_t PercentileInPlace(absl::Span<int64_t> values, int percent) {
  if (values.empty()) return 0;
  auto nth = values.begin() + static_cast<std::ptrdiff_t>(NearestRankIndex(values.size(), percent));
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

RankTest MannWhitney(absl::Span<const double> a, absl::Span<const double> b) {
  RankTest test;
  const size_t m = a.size(), n = b.size();
  if (m == 0 || n == 0) return test;
  std::vector<std::pair<double, int>> all;
  all.reserve(m + n);
  for (double v : a) all.push_back({v, 0});
  for (double v : b) all.push_back({v, 1});
  std::sort(all.begin(), all.end());
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      if (all[k].second == 0) rank_sum_a += mid_rank;
    }
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double md = static_cast<double>(m), nd = static_cast<double>(n);
  test.u = rank_sum_a - md * (md + 1) / 2;
  const double mean = md * nd / 2;
  if (!ties && m * n <= 400) {
    const double lo = std::min(test.u, md * nd - test.u);
    test.exact = true;
    test.p_value = std::min(1.0, 2 * ExactCdf(m, n, lo));
    return test;
  }
  const double total = md + nd;
  const double variance =
      md * nd / 12 * ((total + 1) - tie_term / (total * (total - 1)));
  if (variance <= 0) return test;  // every value tied
  const double diff = std::abs(test.u - mean);
  test.z = std::max(0.0, diff - 0.5) / std::sqrt(variance);
  if (test.u < mean) test.z = -test.z;
  test.p_value = std::min(1.0, std::erfc(std::abs(test.z) / std::sqrt(2.0)));
  return test;
}

}  // namespace warptrace
