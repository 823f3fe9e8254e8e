#include "profiler/analysis/diff.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/Support/JSON.h"
#include "profiler/analysis/stats.h"

namespace warptrace {
namespace {

constexpr char kBlockRow[] = "(block)";

DiffRow Compare(const std::string& role, const std::string& name, int64_t iteration,
                SiteKind kind, const DurationSink::Sample* b, const DurationSink::Sample* a,
                uint64_t blocks_before, uint64_t blocks_after) {
  DiffRow row;
  row.role = role;
  row.name = name;
  row.iteration = iteration;
  row.kind = kind;
  std::vector<double> before = b != nullptr ? b->durations : std::vector<double>();
  std::vector<double> after = a != nullptr ? a->durations : std::vector<double>();
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  row.count_before = before.size();
  row.count_after = after.size();
  row.mean_before = mean(before);
  row.mean_after = mean(after);
  row.p50_before = PercentileSorted(absl::MakeConstSpan(before), 50);
  row.p50_after = PercentileSorted(absl::MakeConstSpan(after), 50);
  row.p95_before = PercentileSorted(absl::MakeConstSpan(before), 95);
  row.p95_after = PercentileSorted(absl::MakeConstSpan(after), 95);
  row.change = row.mean_before > 0 ? (row.mean_after - row.mean_before) / row.mean_before : 0;
  const double self_b = b != nullptr && blocks_before > 0 ? b->self_ns / blocks_before : 0;
  const double self_a = a != nullptr && blocks_after > 0 ? a->self_ns / blocks_after : 0;
  row.self_delta_per_block_ns = self_a - self_b;
  if (before.size() >= 2 && after.size() >= 2) row.p_value = MannWhitney(before, after).p_value;
  return row;
}

std::vector<ShareChange> Shares(const std::map<std::pair<std::string, std::string>, double>& b,
                                const std::map<std::pair<std::string, std::string>, double>& a,
                                double min_change) {
  std::set<std::pair<std::string, std::string>> keys;
  for (const auto& [k, v] : b) keys.insert(k);
  for (const auto& [k, v] : a) keys.insert(k);
  std::vector<ShareChange> out;
  for (const auto& key : keys) {
    auto ib = b.find(key);
    auto ia = a.find(key);
    ShareChange c{key.first, key.second, ib == b.end() ? 0 : ib->second,
                  ia == a.end() ? 0 : ia->second};
    if (std::abs(c.after - c.before) >= min_change) out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const ShareChange& x, const ShareChange& y) {
    return std::abs(x.after - x.before) > std::abs(y.after - y.before);
  });
  return out;
}

std::map<std::pair<std::string, std::string>, double> PathShares(const Analysis& a) {
  std::map<std::pair<std::string, std::string>, double> out;
  for (const PathRegion& r : a.critical_path.regions) out[{r.role, r.name}] += r.mean_share;
  return out;
}

std::map<std::pair<std::string, std::string>, double> WaitShares(const Analysis& a) {
  std::map<std::pair<std::string, std::string>, double> out;
  for (const RoleAnalysis& role : a.roles) {
    for (const WaitStats& w : role.waits) out[{role.role, w.family}] = w.share;
  }
  return out;
}

}  // namespace

TraceDiff DiffTraces(const DiffCollector& before, const DiffCollector& after,
                     const DiffOptions& options) {
  TraceDiff diff;
  const DurationSink& b = before.durations();
  const DurationSink& a = after.durations();
  diff.kernel_before = b.kernel_name();
  diff.kernel_after = a.kernel_name();
  diff.blocks_before = b.blocks();
  diff.blocks_after = a.blocks();

  DurationSink::Sample block_b{b.block_ns(), 0, SiteKind::kKernel};
  DurationSink::Sample block_a{a.block_ns(), 0, SiteKind::kKernel};
  diff.kernel.push_back(Compare("all", kBlockRow, -1, SiteKind::kKernel, &block_b, &block_a,
                                diff.blocks_before, diff.blocks_after));
  std::set<DurationSink::Key> keys;
  for (const auto& [k, v] : b.samples()) keys.insert(k);
  for (const auto& [k, v] : a.samples()) keys.insert(k);
  for (const DurationSink::Key& key : keys) {
    auto ib = b.samples().find(key);
    auto ia = a.samples().find(key);
    const DurationSink::Sample* sb = ib == b.samples().end() ? nullptr : &ib->second;
    const DurationSink::Sample* sa = ia == a.samples().end() ? nullptr : &ia->second;
    const SiteKind kind = sb != nullptr ? sb->kind : sa->kind;
    DiffRow row = Compare(std::get<0>(key), std::get<1>(key), std::get<2>(key), kind, sb, sa,
                          diff.blocks_before, diff.blocks_after);
    if (kind == SiteKind::kKernel && row.iteration < 0) {
      diff.kernel.push_back(std::move(row));
    } else if (kind != SiteKind::kKernel) {
      diff.rows.push_back(std::move(row));
    }
  }
  auto tested = [](const DiffRow& r) { return r.count_before >= 2 && r.count_after >= 2; };
  for (const DiffRow& r : diff.kernel) diff.rows_tested += tested(r);
  for (const DiffRow& r : diff.rows) diff.rows_tested += tested(r);
  auto mark = [&](DiffRow& r) {
    r.significant = tested(r) &&
                    r.p_value * static_cast<double>(diff.rows_tested) < options.alpha &&
                    std::abs(r.change) >= options.min_change;
  };
  for (DiffRow& r : diff.kernel) mark(r);
  for (DiffRow& r : diff.rows) mark(r);
  std::stable_sort(diff.rows.begin(), diff.rows.end(), [](const DiffRow& x, const DiffRow& y) {
    if (x.significant != y.significant) return x.significant;
    const double dx = std::abs(x.self_delta_per_block_ns), dy = std::abs(y.self_delta_per_block_ns);
    if (dx != dy) return dx > dy;
    return std::tie(x.role, x.name, x.iteration) < std::tie(y.role, y.name, y.iteration);
  });

  diff.per_unit_only = before.analysis().critical_path.per_unit_only ||
                       after.analysis().critical_path.per_unit_only;
  diff.critical_path = Shares(PathShares(before.analysis()), PathShares(after.analysis()),
                              options.min_share_change);
  diff.waits = Shares(WaitShares(before.analysis()), WaitShares(after.analysis()),
                      options.min_share_change);
  return diff;
}

std::vector<const DiffRow*> SlowerThan(const TraceDiff& diff, double percent,
                                       absl::Span<const std::string> names) {
  std::vector<const DiffRow*> out;
  auto check = [&](const DiffRow& r) {
    if (r.iteration >= 0 || !r.significant || r.change * 100 <= percent) return;
    if (!names.empty() && std::find(names.begin(), names.end(), r.name) == names.end()) return;
    out.push_back(&r);
  };
  for (const DiffRow& r : diff.kernel) check(r);
  for (const DiffRow& r : diff.rows) check(r);
  return out;
}

}  // namespace warptrace
