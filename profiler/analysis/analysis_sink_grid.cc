// AnalysisSink's grid aggregates (analysis.h, GridAnalysis): SM busy time, early-return
// blocks set apart from the working ones, the working blocks' times, tail, outliers and
// imbalance by grid dimension, and the waves.
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "profiler/analysis/analysis_sink.h"
#include "profiler/analysis/stats.h"

namespace warptrace {
namespace {

double Ratio(double num, double den) { return den > 0 ? num / den : 0; }

uint32_t Coordinate(const Dim3& index, int dim) {
  return dim == 0 ? index.x : dim == 1 ? index.y : index.z;
}

}  // namespace

void AnalysisSink::FillGrid() {
  GridAnalysis& g = result_.grid;
  g = GridAnalysis();
  g.blocks = blocks_.size();
  if (blocks_.empty()) return;
  int64_t origin = blocks_.front().start_ns, last = blocks_.front().end_ns;
  for (const BlockRec& b : blocks_) {
    origin = std::min(origin, b.start_ns);
    last = std::max(last, b.end_ns);
  }
  g.span_ns = last - origin;

  // SM busy time: the union of its units' intervals.
  std::vector<std::pair<uint32_t, std::pair<int64_t, int64_t>>> intervals;
  intervals.reserve(units_.size());
  for (const UnitRec& u : units_) intervals.push_back({u.sm_id, {u.start_ns, u.end_ns}});
  std::sort(intervals.begin(), intervals.end());
  for (size_t i = 0; i < intervals.size();) {
    SmBusy sm{intervals[i].first, 0, 0};
    int64_t lo = intervals[i].second.first, hi = intervals[i].second.second;
    for (; i < intervals.size() && intervals[i].first == sm.sm_id; ++i) {
      const auto [begin, end] = intervals[i].second;
      if (begin > hi) {
        sm.busy_ns += hi - lo;
        lo = begin;
      }
      hi = std::max(hi, end);
    }
    sm.busy_ns += hi - lo;
    g.sms.push_back(sm);
  }
  for (const BlockRec& b : blocks_) {
    auto it = std::lower_bound(g.sms.begin(), g.sms.end(), b.sm_id,
                               [](const SmBusy& s, uint32_t id) { return s.sm_id < id; });
    if (it != g.sms.end() && it->sm_id == b.sm_id) ++it->blocks;
  }
  int64_t busy_sum = 0;
  g.busiest_sm = g.sms.front();
  for (const SmBusy& sm : g.sms) {
    busy_sum += sm.busy_ns;
    if (sm.busy_ns > g.busiest_sm.busy_ns) g.busiest_sm = sm;
  }
  g.mean_sm_busy_ns = busy_sum / static_cast<int64_t>(g.sms.size());
  g.sm_imbalance = Ratio(static_cast<double>(g.busiest_sm.busy_ns),
                         static_cast<double>(g.mean_sm_busy_ns));

  // Early-return blocks are set apart: the block statistics are over the working ones.
  std::vector<const BlockRec*> working;
  std::vector<int64_t> early;
  for (const BlockRec& b : blocks_) {
    if (b.returned_early) {
      early.push_back(b.end_ns - b.start_ns);
    } else {
      working.push_back(&b);
    }
  }
  g.early_return_blocks = early.size();
  g.working_blocks = working.size();
  std::sort(early.begin(), early.end());
  g.median_early_return_ns = PercentileSorted(absl::MakeConstSpan(early), 50);
  if (working.empty()) {
    for (const BlockRec& b : blocks_) working.push_back(&b);
  }
  FillBlockTimes(working, origin);
  FillDimImbalance(working);

  // Waves: the most blocks in flight at once (an end before a start at the same time).
  std::vector<std::pair<int64_t, int>> edges;
  for (const BlockRec& b : blocks_) {
    edges.push_back({b.start_ns, +1});
    edges.push_back({b.end_ns, -1});
  }
  std::sort(edges.begin(), edges.end());
  int64_t in_flight = 0;
  for (const auto& [t, delta] : edges) {
    in_flight += delta;
    g.max_concurrent_blocks = std::max<uint64_t>(g.max_concurrent_blocks, in_flight);
  }
  g.waves = Ratio(static_cast<double>(g.blocks), static_cast<double>(g.max_concurrent_blocks));
}

// The median block, the tail, the slowest, last and outlier blocks of `blocks`.
void AnalysisSink::FillBlockTimes(absl::Span<const BlockRec* const> blocks, int64_t origin) {
  GridAnalysis& g = result_.grid;
  std::vector<int64_t> durations, ends;
  for (const BlockRec* b : blocks) {
    durations.push_back(b->end_ns - b->start_ns);
    ends.push_back(b->end_ns - origin);
  }
  std::sort(durations.begin(), durations.end());
  std::sort(ends.begin(), ends.end());
  g.median_block_ns = PercentileSorted(absl::MakeConstSpan(durations), 50);
  g.median_block_end_ns = PercentileSorted(absl::MakeConstSpan(ends), 50);
  g.last_block_end_ns = ends.back();
  g.tail_ns = g.last_block_end_ns - g.median_block_end_ns;
  g.tail_share = Ratio(static_cast<double>(g.tail_ns), static_cast<double>(g.span_ns));
  auto ref = [&](const BlockRec& b) {
    const int64_t ns = b.end_ns - b.start_ns;
    return UnitRef{b.block_linear, BlockIndex(layout_->grid, b.block_linear), 0, b.sm_id, "", ns,
                   Ratio(static_cast<double>(ns), static_cast<double>(g.median_block_ns)),
                   BlockLabelOf(*layout_, b.block_linear)};
  };
  std::vector<const BlockRec*> by_time(blocks.begin(), blocks.end());
  std::stable_sort(by_time.begin(), by_time.end(), [](const BlockRec* a, const BlockRec* b) {
    return a->end_ns - a->start_ns > b->end_ns - b->start_ns;
  });
  g.slowest_block = ref(*by_time.front());
  for (const BlockRec* b : by_time) {
    const UnitRef r = ref(*b);
    if (g.outlier_blocks.size() >= options_.max_outliers || r.ratio < options_.outlier_ratio) break;
    g.outlier_blocks.push_back(r);
  }
  const BlockRec* last_block = blocks.front();
  for (const BlockRec* b : blocks) {
    if (b->end_ns > last_block->end_ns) last_block = b;
  }
  g.last_block = ref(*last_block);
}

// Per grid dimension, `blocks` grouped by that coordinate: the groups' mean times and the
// share of the variance of block time between the groups.
void AnalysisSink::FillDimImbalance(absl::Span<const BlockRec* const> blocks) {
  GridAnalysis& g = result_.grid;
  double mean = 0;
  for (const BlockRec* b : blocks) mean += static_cast<double>(b->end_ns - b->start_ns);
  mean /= static_cast<double>(blocks.size());
  double total_ss = 0;
  for (const BlockRec* b : blocks) {
    const double d = static_cast<double>(b->end_ns - b->start_ns) - mean;
    total_ss += d * d;
  }
  for (int dim = 0; dim < 3; ++dim) {
    std::map<uint32_t, std::pair<double, uint64_t>> groups;  // coordinate -> (sum ns, blocks)
    for (const BlockRec* b : blocks) {
      auto& [sum, n] = groups[Coordinate(BlockIndex(layout_->grid, b->block_linear), dim)];
      sum += static_cast<double>(b->end_ns - b->start_ns);
      ++n;
    }
    if (groups.size() < 2) continue;
    DimImbalance d;
    d.dim = static_cast<char>('x' + dim);
    if (!layout_->grid_dim_names.empty()) d.name = layout_->grid_dim_names[dim];
    d.values = static_cast<uint32_t>(groups.size());
    double between_ss = 0;
    std::vector<int64_t> means;
    bool first = true;
    for (const auto& [coord, sum_n] : groups) {
      const double group_mean = sum_n.first / static_cast<double>(sum_n.second);
      between_ss += static_cast<double>(sum_n.second) * (group_mean - mean) * (group_mean - mean);
      const int64_t m = std::llround(group_mean);
      means.push_back(m);
      if (first || m > d.slowest_mean_ns) {
        d.slowest = coord;
        d.slowest_mean_ns = m;
        d.slowest_blocks = sum_n.second;
      }
      if (first || m < d.fastest_mean_ns) {
        d.fastest = coord;
        d.fastest_mean_ns = m;
      }
      first = false;
    }
    std::sort(means.begin(), means.end());
    d.median_mean_ns = PercentileSorted(absl::MakeConstSpan(means), 50);
    d.ratio = Ratio(static_cast<double>(d.slowest_mean_ns), static_cast<double>(d.median_mean_ns));
    d.explained = Ratio(between_ss, total_ss);
    g.dims.push_back(d);
  }
  std::stable_sort(g.dims.begin(), g.dims.end(), [](const DimImbalance& a, const DimImbalance& b) {
    return a.explained > b.explained;
  });
}

}  // namespace warptrace
