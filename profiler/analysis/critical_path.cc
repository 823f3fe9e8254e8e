#include "profiler/analysis/critical_path.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace warptrace {
namespace {

using Leaf = CriticalPathFinder::Leaf;
using LinkedWait = CriticalPathFinder::LinkedWait;

void AppendLeaf(std::vector<Leaf>& leaves, int64_t begin, int64_t end, uint32_t site) {
  if (end <= begin) return;
  if (!leaves.empty() && leaves.back().site == site && leaves.back().end_ns == begin) {
    leaves.back().end_ns = end;
    return;
  }
  leaves.push_back({begin, end, site});
}

// The unit's time split by innermost slice: a sweep with the stack of open slices.
void Leaves(absl::Span<const Slice> slices, std::vector<const Slice*>& open,
            std::vector<Leaf>& leaves) {
  leaves.clear();
  open.clear();
  if (slices.empty()) return;
  int64_t t = slices.front().begin_ns;
  auto advance = [&](int64_t to) {
    while (!open.empty() && open.back()->end_ns <= to) {
      AppendLeaf(leaves, t, open.back()->end_ns, open.back()->site);
      t = std::max(t, open.back()->end_ns);
      open.pop_back();
    }
    AppendLeaf(leaves, t, to, open.empty() ? kPathUntracked : open.back()->site);
    t = std::max(t, to);
  };
  for (const Slice& slice : slices) {
    advance(slice.begin_ns);
    open.push_back(&slice);
  }
  while (!open.empty()) {  // closes every open slice, nothing after the last
    AppendLeaf(leaves, t, open.back()->end_ns, open.back()->site);
    t = std::max(t, open.back()->end_ns);
    open.pop_back();
  }
}

// Appends the attribution of [begin, end) on `leaves`, latest first (the walk goes back).
void AttributeBackward(const std::vector<Leaf>& leaves, uint32_t unit, int64_t begin,
                       int64_t end, std::vector<PathStep>& reversed) {
  if (end <= begin) return;
  auto it = std::upper_bound(leaves.begin(), leaves.end(), end,
                             [](int64_t t, const Leaf& leaf) { return t <= leaf.begin_ns; });
  int64_t t = end;
  while (it != leaves.begin() && t > begin) {
    --it;
    const int64_t hi = std::min(t, it->end_ns);
    const int64_t lo = std::max(begin, it->begin_ns);
    if (hi < t) reversed.push_back({unit, kPathUntracked, hi, t});
    if (lo < hi) reversed.push_back({unit, it->site, lo, hi});
    t = std::min(t, lo);
  }
  if (begin < t) reversed.push_back({unit, kPathUntracked, begin, t});
}

}  // namespace

absl::Status CriticalPathFinder::AddLinks(absl::Span<const PathUnit> units,
                                          absl::Span<const HandoffLink> links,
                                          absl::Span<const SiteInfo> sites) {
  std::vector<UnitWork>& work = work_;
  auto position = [&](uint32_t unit_index) -> int64_t {
    for (size_t i = 0; i < units.size(); ++i) {
      if (units[i].unit_index == unit_index) return static_cast<int64_t>(i);
    }
    return -1;
  };
  for (const HandoffLink& link : links) {
    const int64_t from = position(link.from_unit);
    const int64_t to = position(link.to_unit);
    if (from < 0 || to < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "hand-off link of block %d from unit %d to unit %d names a unit the block does not "
          "have",
          link.block_linear, link.from_unit, link.to_unit));
    }
    const absl::Span<const Slice> slices = units[to].slices;
    if (link.to_slice >= slices.size() ||
        sites[slices[link.to_slice].site].kind != SiteKind::kBarrierWait) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "hand-off link of block %d to unit %d names slice %d, which is not a barrier wait "
          "of that unit (it has %d slices)",
          link.block_linear, link.to_unit, link.to_slice, slices.size()));
    }
    const Slice& wait = slices[link.to_slice];
    // The arrival must fall inside the wait for the wait to have waited on it.
    if (link.from_ns <= wait.begin_ns) continue;
    std::vector<LinkedWait>& waits = work[to].waits;
    auto same = std::find_if(waits.begin(), waits.end(), [&](const LinkedWait& w) {
      return w.begin_ns == wait.begin_ns && w.end_ns == wait.end_ns;
    });
    if (same == waits.end()) {
      waits.push_back(
          {wait.begin_ns, wait.end_ns, static_cast<uint32_t>(from), link.from_ns, false});
    } else if (link.from_ns > same->from_ns) {
      same->from_position = static_cast<uint32_t>(from);
      same->from_ns = link.from_ns;
    }
  }
  for (UnitWork& unit : work) {
    std::sort(unit.waits.begin(), unit.waits.end(),
              [](const LinkedWait& a, const LinkedWait& b) { return a.end_ns < b.end_ns; });
  }
  return absl::OkStatus();
}

namespace {

void MergeForward(const std::vector<PathStep>& reversed, std::vector<PathStep>& steps) {
  steps.clear();
  for (auto it = reversed.rbegin(); it != reversed.rend(); ++it) {
    if (it->ns() <= 0) continue;
    if (!steps.empty() && steps.back().unit_index == it->unit_index &&
        steps.back().site == it->site && steps.back().end_ns == it->begin_ns) {
      steps.back().end_ns = it->end_ns;
    } else {
      steps.push_back(*it);
    }
  }
}

}  // namespace

const char* PathSiteName(uint32_t site, absl::Span<const SiteInfo> sites) {
  if (site == kPathUntracked) return "(untracked)";
  if (site == kPathHandoff) return "(hand-off)";
  return site < sites.size() ? sites[site].name.c_str() : "(unknown site)";
}

absl::StatusOr<BlockPath> CriticalPath(absl::Span<const PathUnit> units,
                                       absl::Span<const HandoffLink> links,
                                       absl::Span<const SiteInfo> sites) {
  CriticalPathFinder finder;
  BlockPath path;
  if (absl::Status s = finder.Find(units, links, sites, path); !s.ok()) return s;
  return path;
}

absl::Status CriticalPathFinder::Find(absl::Span<const PathUnit> units,
                                      absl::Span<const HandoffLink> links,
                                      absl::Span<const SiteInfo> sites, BlockPath& path) {
  path.begin_ns = path.end_ns = 0;
  path.handoffs = 0;
  path.steps.clear();
  if (work_.size() < units.size()) work_.resize(units.size());
  for (size_t i = 0; i < units.size(); ++i) work_[i].waits.clear();
  int64_t last = -1;
  for (size_t i = 0; i < units.size(); ++i) {
    for (const Slice& slice : units[i].slices) {
      if (slice.site >= sites.size()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "unit %d has a slice of site %d, outside the %d-site table", units[i].unit_index,
            slice.site, sites.size()));
      }
    }
    Leaves(units[i].slices, open_, work_[i].leaves);
    if (units[i].slices.empty()) continue;
    const int64_t end = work_[i].leaves.back().end_ns;
    if (last < 0 || end > path.end_ns) {
      last = static_cast<int64_t>(i);
      path.end_ns = end;
    }
  }
  if (last < 0) return absl::OkStatus();
  path.begin_ns = path.end_ns;
  for (size_t i = 0; i < units.size(); ++i) {
    if (!work_[i].leaves.empty()) path.begin_ns = std::min(path.begin_ns, work_[i].leaves.front().begin_ns);
  }
  if (absl::Status s = AddLinks(units, links, sites); !s.ok()) return s;

  std::vector<PathStep>& reversed = reversed_;
  reversed.clear();
  size_t cur = static_cast<size_t>(last);
  int64_t t = path.end_ns;
  while (true) {
    UnitWork& unit = work_[cur];
    const uint32_t index = units[cur].unit_index;
    auto it = std::upper_bound(unit.waits.begin(), unit.waits.end(), t,
                               [](int64_t v, const LinkedWait& w) { return v < w.end_ns; });
    LinkedWait* wait = nullptr;
    while (it != unit.waits.begin()) {
      --it;
      if (!it->used) {
        wait = &*it;
        break;
      }
    }
    const int64_t unit_begin = unit.leaves.empty() ? t : unit.leaves.front().begin_ns;
    if (wait == nullptr || wait->end_ns <= unit_begin) {
      AttributeBackward(unit.leaves, index, std::min(unit_begin, t), t, reversed);
      break;
    }
    wait->used = true;
    AttributeBackward(unit.leaves, index, wait->end_ns, t, reversed);
    const int64_t from = std::max(path.begin_ns, std::min(wait->from_ns, wait->end_ns));
    if (from < wait->end_ns) reversed.push_back({index, kPathHandoff, from, wait->end_ns});
    ++path.handoffs;
    cur = wait->from_position;
    t = from;
  }
  MergeForward(reversed, path.steps);
  return absl::OkStatus();
}

}  // namespace warptrace
