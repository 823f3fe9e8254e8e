#include "profiler/analysis/critical_path.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace warptrace {

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

void CriticalPathFinder::StartBlock() {
  for (size_t i = 0; i < units_; ++i) {
    const uint32_t index = work_[i].unit_index;
    if (index < position_of_.size()) position_of_[index] = -1;
  }
  units_ = 0;
  begin_ns_ = end_ns_ = 0;
  last_ = -1;
  handoffs_ = 0;
  segments_.clear();
}

CriticalPathFinder::UnitWork& CriticalPathFinder::NewUnit(uint32_t unit_index,
                                                          size_t slice_count) {
  if (work_.size() <= units_) work_.resize(units_ + 1);
  UnitWork& unit = work_[units_];
  unit.unit_index = unit_index;
  unit.slice_count = static_cast<uint32_t>(slice_count);
  if (unit.leaves.size() < 2 * slice_count + 1) unit.leaves.resize(2 * slice_count + 1);
  unit.leaf_count = 0;
  unit.waits.clear();
  unit.linked.clear();
  return unit;
}

void CriticalPathFinder::EndUnit(uint32_t unit_index) {
  const UnitWork& unit = work_[units_];
  if (unit_index >= position_of_.size()) position_of_.resize(unit_index + 1, -1);
  position_of_[unit_index] = static_cast<int32_t>(units_);
  if (unit.leaf_count > 0) {
    const int64_t begin = unit.leaves[0].begin_ns;
    const int64_t end = unit.leaves[unit.leaf_count - 1].end_ns;
    if (last_ < 0) {
      begin_ns_ = begin;
      end_ns_ = end;
      last_ = static_cast<int64_t>(units_);
    } else {
      begin_ns_ = std::min(begin_ns_, begin);
      if (end > end_ns_) {
        end_ns_ = end;
        last_ = static_cast<int64_t>(units_);
      }
    }
  }
  ++units_;
}

absl::Status CriticalPathFinder::SiteOutsideTable(uint32_t unit_index, uint32_t site,
                                                  size_t sites) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "unit %d has a slice of site %d, outside the %d-site table", unit_index, site, sites));
}

absl::Status CriticalPathFinder::AddLinks(absl::Span<const HandoffLink> links) {
  for (const HandoffLink& link : links) {
    const int32_t from = PositionOf(link.from_unit);
    const int32_t to = PositionOf(link.to_unit);
    if (from < 0 || to < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "hand-off link of block %d from unit %d to unit %d names a unit the block does not "
          "have",
          link.block_linear, link.from_unit, link.to_unit));
    }
    // A unit's links usually come in slice order: try a few waits on from the last one
    // found before searching.
    UnitWork& target = work_[to];
    std::vector<Wait>& waits = target.waits;
    auto wait = waits.begin() + std::min(target.hint, waits.size());
    for (int step = 0; step < 4 && wait != waits.end() && wait->slice < link.to_slice; ++step) {
      ++wait;
    }
    if (wait == waits.end() || wait->slice != link.to_slice) {
      wait = std::lower_bound(waits.begin(), waits.end(), link.to_slice,
                              [](const Wait& w, uint32_t slice) { return w.slice < slice; });
    }
    if (wait != waits.end()) target.hint = static_cast<size_t>(wait - waits.begin());
    if (wait == waits.end() || wait->slice != link.to_slice) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "hand-off link of block %d to unit %d names slice %d, which is not a barrier wait "
          "of that unit (it has %d slices)",
          link.block_linear, link.to_unit, link.to_slice, work_[to].slice_count));
    }
    // The arrival must fall inside the wait for the wait to have waited on it; of several,
    // the latest released it.
    if (link.from_ns <= wait->begin_ns) continue;
    if (wait->from_position < 0 || link.from_ns > wait->from_ns) {
      wait->from_position = from;
      wait->from_ns = link.from_ns;
    }
  }
  for (size_t i = 0; i < units_; ++i) {
    UnitWork& unit = work_[i];
    for (const Wait& w : unit.waits) {
      if (w.from_position < 0) continue;
      unit.linked.push_back(
          {w.end_ns, static_cast<uint32_t>(w.from_position), w.from_ns, false, w.site});
    }
    auto by_end = [](const LinkedWait& a, const LinkedWait& b) { return a.end_ns < b.end_ns; };
    if (!std::is_sorted(unit.linked.begin(), unit.linked.end(), by_end)) {
      std::stable_sort(unit.linked.begin(), unit.linked.end(), by_end);
    }
  }
  return absl::OkStatus();
}

absl::Status CriticalPathFinder::Walk(absl::Span<const HandoffLink> links) {
  segments_.clear();
  handoffs_ = 0;
  for (size_t i = 0; i < units_; ++i) {
    work_[i].linked.clear();
    work_[i].hint = 0;
    for (Wait& w : work_[i].waits) w.from_position = -1;
  }
  if (absl::Status s = AddLinks(links); !s.ok()) return s;
  if (last_ < 0) return absl::OkStatus();
  size_t cur = static_cast<size_t>(last_);
  int64_t t = end_ns_;
  while (true) {
    UnitWork& unit = work_[cur];
    auto it = std::upper_bound(unit.linked.begin(), unit.linked.end(), t,
                               [](int64_t v, const LinkedWait& w) { return v < w.end_ns; });
    LinkedWait* wait = nullptr;
    while (it != unit.linked.begin()) {
      --it;
      if (!it->used) {
        wait = &*it;
        break;
      }
    }
    const int64_t unit_begin = unit.leaf_count == 0 ? t : unit.leaves[0].begin_ns;
    if (wait == nullptr || wait->end_ns <= unit_begin) {
      segments_.push_back(
          {static_cast<uint32_t>(cur), false, std::min(unit_begin, t), t, kPathUntracked});
      break;
    }
    wait->used = true;
    segments_.push_back({static_cast<uint32_t>(cur), false, wait->end_ns, t, kPathUntracked});
    const int64_t from = std::max(begin_ns_, std::min(wait->from_ns, wait->end_ns));
    segments_.push_back({static_cast<uint32_t>(cur), true, from, wait->end_ns, wait->site});
    ++handoffs_;
    cur = wait->from_position;
    t = from;
  }
  return absl::OkStatus();
}

void CriticalPathFinder::Steps(BlockPath& path) const {
  path.begin_ns = begin_ns_;
  path.end_ns = end_ns_;
  path.handoffs = handoffs_;
  path.steps.clear();
  auto append = [&](uint32_t unit, uint32_t site, int64_t begin, int64_t end) {
    if (end <= begin) return;
    if (!path.steps.empty() && path.steps.back().unit_index == unit &&
        path.steps.back().site == site && path.steps.back().end_ns == begin) {
      path.steps.back().end_ns = end;
    } else {
      path.steps.push_back({unit, site, begin, end});
    }
  };
  for (auto s = segments_.rbegin(); s != segments_.rend(); ++s) {
    const UnitWork& unit = work_[s->position];
    if (s->handoff) {
      append(unit.unit_index, kPathHandoff, s->begin_ns, s->end_ns);
      continue;
    }
    ForEachPiece(unit, s->begin_ns, s->end_ns, [&](uint32_t site, int64_t b, int64_t e) {
      append(unit.unit_index, site, b, e);
    });
  }
}

void CriticalPathFinder::Handoffs(std::vector<PathHandoff>& out) const {
  out.clear();
  // segments_ are latest first; a hand-off segment of unit `cur` is followed by the
  // segment of the unit it came from.
  for (size_t i = segments_.size(); i-- > 0;) {
    const Segment& s = segments_[i];
    if (!s.handoff || i + 1 >= segments_.size()) continue;
    out.push_back({work_[segments_[i + 1].position].unit_index, s.begin_ns,
                   work_[s.position].unit_index, s.end_ns, s.wait_site});
  }
}

bool CriticalPathFinder::LastUnitSpan(int64_t& begin, int64_t& end) const {
  if (units_ == 0 || work_[units_ - 1].leaf_count == 0) return false;
  const UnitWork& unit = work_[units_ - 1];
  begin = unit.leaves[0].begin_ns;
  end = unit.leaves[unit.leaf_count - 1].end_ns;
  return true;
}

void CriticalPathFinder::PathTimes(std::vector<PathTime>& out) {
  out.clear();
  const size_t columns = sites_ + 2;  // the sites, then kPathUntracked, kPathHandoff
  if (sums_.size() < units_ * columns) sums_.resize(units_ * columns, 0);
  touched_.clear();
  auto add = [&](size_t index, int64_t ns) {
    if (sums_[index] == 0) touched_.push_back(static_cast<uint32_t>(index));
    sums_[index] += ns;
  };
  for (const Segment& s : segments_) {
    const size_t base = s.position * columns;
    if (s.handoff) {
      if (s.end_ns > s.begin_ns) add(base + sites_ + 1, s.end_ns - s.begin_ns);
      continue;
    }
    ForEachPiece(work_[s.position], s.begin_ns, s.end_ns,
                 [&](uint32_t site, int64_t begin, int64_t end) {
                   add(base + (site < sites_ ? site : sites_), end - begin);
                 });
  }
  for (uint32_t index : touched_) {
    const size_t column = index % columns;
    const uint32_t site = column < sites_    ? static_cast<uint32_t>(column)
                          : column == sites_ ? kPathUntracked
                                             : kPathHandoff;
    out.push_back({work_[index / columns].unit_index, site, sums_[index]});
    sums_[index] = 0;
  }
}

absl::Status CriticalPathFinder::Find(absl::Span<const PathUnit> units,
                                      absl::Span<const HandoffLink> links,
                                      absl::Span<const SiteInfo> sites, BlockPath& path) {
  path = BlockPath();
  StartBlock();
  for (const PathUnit& unit : units) {
    if (absl::Status s = AddUnit(unit.unit_index, unit.slices, sites); !s.ok()) return s;
  }
  if (absl::Status s = Walk(links); !s.ok()) return s;
  Steps(path);
  return absl::OkStatus();
}

}  // namespace warptrace
