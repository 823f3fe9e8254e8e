#include "profiler/trace/links.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "format/links.h"
#include "format/trace_abi.h"

namespace warptrace {
namespace {

// (scope instance, barrier, phase): the scope instance is the block, or with a cluster link
// scope the cluster (ClusterLinear: its CTAs need not be consecutive blocks), whose barrier
// ids are cluster-wide.
using PhaseKey = std::tuple<uint32_t, uint32_t, uint32_t>;

uint32_t ScopeInstance(const TraceLayout& layout, uint32_t block_linear) {
  return LinkScopeOf(layout) == LinkScope::kCluster
             ? ClusterLinear(layout, BlockIndex(layout.grid, block_linear))
             : block_linear;
}

struct AsyncOpen {
  EventRef begin;
  uint32_t barrier = kNoBarrier;
  uint32_t landing = 0;  // a multicast copy's begin payload b: phase & 0xffff | mask << 16
};

// A multicast copy paired in its unit: its issue lands on `barrier`'s offset in each CTA
// of the mask, completing bytes of the phase whose low 16 bits are `landing`'s.
struct MulticastIssue {
  EventRef begin;
  uint32_t block_linear = 0;
  uint32_t site = 0;
  uint32_t issue = 0;
  uint32_t barrier = 0;  // cluster-wide id of the issuer's element
  uint32_t landing = 0;
};

// A version-5 copy that completes on a phase barrier: its begin alone, with what its payload
// says; DeriveCopyEnds finds its end.
struct DerivedCopy {
  EventRef begin;
  uint32_t block_linear = 0;
  uint32_t site = 0;
  uint32_t issue = 0;    // the k-th begin of its site in the unit is issue k
  uint32_t barrier = 0;  // the issuer's barrier element (cluster-wide id with clusters)
  uint32_t b = 0;        // phase, or phase & 0xffff | ctaMask << 16 (multicast)
  bool multicast = false;
};

// A group begun and not yet retired by a recorded wait, of a site whose ends are derived at
// its kind's waits (SiteInfo::ends_at_waits).
struct OpenGroup {
  EventRef begin;
  uint32_t site = 0;
  uint32_t issue = 0;  // the k-th begin of its site in the unit is issue k
};

// The groups of one unit whose ends are derived at waits, per group kind (GroupClass).
class GroupWaits {
 public:
  // A begin (exit false) or a wait (exit, with its payload) of `site`.
  void Add(const EventRef& ref, uint32_t site, const SiteInfo& info, bool exit,
           const abi::Payload* payload, Links& out) {
    std::vector<OpenGroup>& open = open_[static_cast<int>(GroupClassOf(info))];
    if (!exit) {
      open.push_back({ref, site, issued_[site]++});
      return;
    }
    if (payload == nullptr) return;  // its payload fell past capacity
    // Groups complete in commit order: all but the newest `left` are complete here.
    const uint32_t left = payload->a;
    if (open.size() < left) {
      out.short_waits.push_back({ref, site, left, static_cast<uint32_t>(open.size())});
    }
    const size_t ended = open.size() > left ? open.size() - left : 0;
    for (size_t k = 0; k < ended; ++k) {
      Link link;
      link.kind = LinkKind::kIssueToCompletion;
      link.from = open[k].begin;
      link.to = ref;
      link.site = open[k].site;
      link.issue = open[k].issue;
      link.at_wait = true;
      out.links.push_back(link);
    }
    open.erase(open.begin(), open.begin() + static_cast<std::ptrdiff_t>(ended));
  }
  // The groups no recorded wait retired, as unpaired begins (no_wait).
  void Finish(Links& out) const {
    for (const std::vector<OpenGroup>& open : open_) {
      for (const OpenGroup& g : open) {
        UnpairedAsync u{g.begin, g.site, g.issue, kNoBarrier, /*is_begin=*/true};
        u.no_wait = true;
        out.unpaired.push_back(u);
      }
    }
  }

 private:
  std::vector<OpenGroup> open_[4];         // by GroupClass
  std::map<uint32_t, uint32_t> issued_;  // site -> begins so far
};

// Reads one record's payload events: arrivals and releases into `phases`, async copies
// paired within the unit into `out`.
void ReadRecord(const DecodedRecord& r, uint32_t record, uint32_t kept, const TraceLayout& layout,
                std::map<PhaseKey, PhaseRecord>& phases, std::vector<MulticastIssue>& landings,
                std::vector<DerivedCopy>& derived_copies, Links& out) {
  std::map<uint32_t, uint32_t> issued;  // version 5: site -> copies on a barrier so far
  std::map<std::pair<uint32_t, uint32_t>, AsyncOpen> open;  // (site, issue) -> begin
  // In-order async events recorded without a payload (trace version 4): the k-th begin and
  // the k-th end of a site in the unit are its copy or group k (format/links.h).
  std::map<std::pair<uint32_t, bool>, uint32_t> ordinal;  // (site, exit) -> events so far
  GroupWaits group_waits;  // version 5: groups whose ends are derived at waits
  const uint32_t n = std::min<uint32_t>(kept, static_cast<uint32_t>(r.events.size()));
  for (uint32_t i = 0; i < n; i = r.NextEvent(i)) {
    const uint32_t tag = r.events[i].tag;
    const uint32_t site = r.SiteOf(tag);
    if (site >= layout.sites.size()) continue;
    const SiteKind kind = layout.sites[site].kind;
    const bool exit = abi::TagIsExit(tag);
    abi::Payload derived;
    const abi::Payload* payload = r.PayloadOf(i);
    if (GroupEndsAtWaits(layout.sites[site], r.version)) {
      // Version 5: a group's begin alone; an exit is a wait of its kind with (left, -).
      group_waits.Add({record, i}, site, layout.sites[site], exit, payload, out);
      continue;
    }
    if (CopyEndDerived(layout.sites[site], r.version)) {
      // Version 5: the begin alone, (barrier, phase); an end is none of this site's. A site
      // marked end_observed records (issue, barrier) on both, as version 4 did (below).
      const uint32_t issue = exit ? 0 : issued[site]++;
      if (exit || payload == nullptr) continue;
      derived_copies.push_back({{record, i}, r.block_linear, site, issue, payload->a,
                                payload->b, layout.sites[site].multicast});
      continue;
    }
    if (payload == nullptr) {
      if (r.version < 4 || !IsAsyncSite(kind)) continue;
      derived.a = ordinal[{site, exit}]++;
      derived.b = kNoBarrier;
      payload = &derived;
    }
    const EventRef ref{record, i};
    if (kind == SiteKind::kBarrierArrive || (kind == SiteKind::kPhaseWait && exit)) {
      PhaseRecord& p = phases[{ScopeInstance(layout, r.block_linear), payload->a, payload->b}];
      if (p.arrivals.empty() && p.releases.empty()) p.block_linear = r.block_linear;
      p.barrier = payload->a;
      p.phase = payload->b;
      (kind == SiteKind::kBarrierArrive ? p.arrivals : p.releases).push_back(ref);
    } else if (IsAsyncSite(kind)) {
      const std::pair<uint32_t, uint32_t> key{site, payload->a};
      const bool multicast = layout.sites[site].multicast;
      if (!exit) {
        if (auto it = open.find(key); it != open.end()) {
          // Issued again before its completion: the first begin is never completed.
          out.unpaired.push_back({it->second.begin, site, payload->a, it->second.barrier, true});
        }
        open[key] = multicast ? AsyncOpen{ref, kNoBarrier, payload->b}
                              : AsyncOpen{ref, payload->b, 0};
        continue;
      }
      auto it = open.find(key);
      if (it == open.end()) {
        out.unpaired.push_back({ref, site, payload->a, payload->b, false});
        continue;
      }
      Link link;
      link.kind = LinkKind::kIssueToCompletion;
      link.from = it->second.begin;
      link.to = ref;
      link.site = site;
      link.barrier = multicast ? payload->b : it->second.barrier;
      link.issue = payload->a;
      out.links.push_back(link);
      if (multicast) {
        landings.push_back(
            {it->second.begin, r.block_linear, site, payload->a, payload->b, it->second.landing});
      }
      open.erase(it);
    }
  }
  for (const auto& [key, begin] : open) {
    out.unpaired.push_back({begin.begin, key.first, key.second, begin.barrier, true});
  }
  group_waits.Finish(out);
}

// Each multicast copy's issue to every release, in each other CTA of its mask, of the
// phase it completes bytes of on the barrier at its offset there: barrier ids are
// cluster-wide (rank r's element i is r x ids per CTA + i), the phase matched modulo 2^16
// (the latest such phase the destination recorded, if several).
void AddMulticastLandings(const TraceLayout& layout, const std::vector<MulticastIssue>& issues,
                          const std::map<PhaseKey, PhaseRecord>& phases, Links& out) {
  const uint32_t ctas = static_cast<uint32_t>(layout.cluster.Count());
  if (issues.empty() || LinkScopeOf(layout) != LinkScope::kCluster || ctas < 2 ||
      layout.barriers.size() % ctas != 0) {
    return;
  }
  const uint32_t per_cta = static_cast<uint32_t>(layout.barriers.size()) / ctas;
  if (per_cta == 0) return;
  for (const MulticastIssue& m : issues) {
    const uint32_t rank = m.barrier / per_cta, element = m.barrier % per_cta;
    const uint32_t mask = m.landing >> 16, phase_low = m.landing & 0xffffu;
    const uint32_t scope = ScopeInstance(layout, m.block_linear);
    for (uint32_t d = 0; d < ctas && d < 16; ++d) {
      if (d == rank || ((mask >> d) & 1u) == 0) continue;
      const uint32_t barrier = d * per_cta + element;
      const PhaseRecord* landed = nullptr;
      for (auto it = phases.lower_bound({scope, barrier, 0});
           it != phases.end() && std::get<0>(it->first) == scope &&
           std::get<1>(it->first) == barrier;
           ++it) {
        if ((std::get<2>(it->first) & 0xffffu) == phase_low) landed = &it->second;
      }
      if (landed == nullptr) continue;
      for (const EventRef& release : landed->releases) {
        Link link;
        link.kind = LinkKind::kMulticastLanding;
        link.from = m.begin;
        link.to = release;
        link.site = m.site;
        link.barrier = barrier;
        link.phase = landed->phase;
        link.issue = m.issue;
        out.links.push_back(link);
      }
    }
  }
}

// The phase a version-5 copy completes, if recorded: (barrier, phase) exactly, or for a
// multicast copy the latest phase of the barrier matching its phase modulo 2^16.
const PhaseRecord* PhaseOfCopy(const TraceLayout& layout, const DerivedCopy& c,
                               const std::map<PhaseKey, PhaseRecord>& phases) {
  const uint32_t scope = ScopeInstance(layout, c.block_linear);
  if (!c.multicast) {
    auto it = phases.find({scope, c.barrier, c.b});
    return it != phases.end() ? &it->second : nullptr;
  }
  const PhaseRecord* p = nullptr;
  for (auto it = phases.lower_bound({scope, c.barrier, 0});
       it != phases.end() && std::get<0>(it->first) == scope &&
       std::get<1>(it->first) == c.barrier;
       ++it) {
    if ((std::get<2>(it->first) & 0xffffu) == (c.b & 0xffffu)) p = &it->second;
  }
  return p;
}

// Each version-5 copy's end: the earliest release (by `time`) of the phase it completes,
// linked as a derived kIssueToCompletion; a copy whose phase has no recorded release is
// unpaired (no_release). Multicast copies go on to AddMulticastLandings from their begin.
void DeriveCopyEnds(const TraceLayout& layout, const std::vector<DerivedCopy>& copies,
                    const std::map<PhaseKey, PhaseRecord>& phases, const EventTime& time,
                    std::vector<MulticastIssue>& landings, Links& out) {
  for (const DerivedCopy& c : copies) {
    const PhaseRecord* p = PhaseOfCopy(layout, c, phases);
    const EventRef* first = nullptr;
    if (p != nullptr) {
      for (const EventRef& release : p->releases) {
        if (first == nullptr || time(release) < time(*first)) first = &release;
      }
    }
    if (c.multicast) {
      landings.push_back({c.begin, c.block_linear, c.site, c.issue, c.barrier, c.b});
    }
    if (first == nullptr) {
      UnpairedAsync u{c.begin, c.site, c.issue, c.barrier, /*is_begin=*/true};
      u.no_release = true;
      u.phase = c.multicast ? c.b & 0xffffu : c.b;
      out.unpaired.push_back(u);
      continue;
    }
    Link link;
    link.kind = LinkKind::kIssueToCompletion;
    link.from = c.begin;
    link.to = *first;
    link.site = c.site;
    link.barrier = c.barrier;
    link.phase = p->phase;
    link.issue = c.issue;
    link.derived = true;
    out.links.push_back(link);
  }
}

}  // namespace

Links FindLinks(const DecodedTrace& decoded, const TraceLayout& layout,
                const std::vector<uint32_t>& kept, const EventTime& time) {
  return FindLinks(decoded, layout, 0, static_cast<uint32_t>(decoded.records.size()), kept,
                   time);
}

Links FindLinks(const DecodedTrace& decoded, const TraceLayout& layout, uint32_t first,
                uint32_t end, const std::vector<uint32_t>& kept, const EventTime& time) {
  Links out;
  std::map<PhaseKey, PhaseRecord> phases;
  std::vector<MulticastIssue> multicast;
  std::vector<DerivedCopy> derived_copies;
  end = std::min<uint32_t>(end, static_cast<uint32_t>(decoded.records.size()));
  for (uint32_t record = first; record < end; ++record) {
    const DecodedRecord& r = decoded.records[record];
    if (r.header_problem != HeaderProblem::kNone || r.version < 2) continue;
    const uint32_t limit = record < kept.size() ? kept[record] : UINT32_MAX;
    ReadRecord(r, record, limit, layout, phases, multicast, derived_copies, out);
  }
  DeriveCopyEnds(layout, derived_copies, phases, time, multicast, out);
  AddMulticastLandings(layout, multicast, phases, out);
  for (auto& [key, p] : phases) {
    if (!p.arrivals.empty()) {
      size_t last = 0;
      for (size_t k = 1; k < p.arrivals.size(); ++k) {
        if (time(p.arrivals[k]) >= time(p.arrivals[last])) last = k;
      }
      for (const EventRef& release : p.releases) {
        for (size_t k = 0; k < p.arrivals.size(); ++k) {
          Link link;
          link.from = p.arrivals[k];
          link.to = release;
          link.site = decoded.records[link.from.record].SiteOf(
              decoded.records[link.from.record].events[link.from.slot].tag);
          link.barrier = p.barrier;
          link.phase = p.phase;
          link.completing = k == last;
          out.links.push_back(link);
        }
      }
    }
    out.phases.push_back(std::move(p));
  }
  std::stable_sort(out.links.begin(), out.links.end(), [](const Link& a, const Link& b) {
    return std::tie(a.to.record, a.to.slot) < std::tie(b.to.record, b.to.slot);
  });
  std::stable_sort(out.short_waits.begin(), out.short_waits.end(),
                   [](const ShortGroupWait& a, const ShortGroupWait& b) {
                     return std::tie(a.wait.record, a.wait.slot) <
                            std::tie(b.wait.record, b.wait.slot);
                   });
  std::stable_sort(out.unpaired.begin(), out.unpaired.end(),
                   [](const UnpairedAsync& a, const UnpairedAsync& b) {
                     return std::tie(a.event.record, a.event.slot) <
                            std::tie(b.event.record, b.event.slot);
                   });
  return out;
}

bool HasHandoffSites(const TraceLayout& layout) {
  for (const SiteInfo& site : layout.sites) {
    if (SiteKindHasPayload(site.kind)) return true;
  }
  return false;
}

ScopeLinker::ScopeLinker(const DecodedTrace& decoded)
    : decoded_(decoded), layout_(*decoded.layout) {
  active_ = HasHandoffSites(layout_);
  if (!active_) return;
  // The records of one link scope instance: a block's units, or a cluster's CTAs' units.
  records_per_scope_ = RecordsPerLinkScope(layout_);
  kept_.assign(decoded.records.size(), 0);
  base_.resize(records_per_scope_);
  cycles_.resize(records_per_scope_);
}

bool ScopeLinker::Add(const DecodedRecord& r, const UnitWalk& walk, uint32_t kept_events) {
  if (!active_) return false;
  const uint32_t record = static_cast<uint32_t>(r.record_index);
  const uint32_t slot = record % records_per_scope_;
  if (slot == 0) {
    first_ = record;
    has_ref_ = false;
  }
  if (record < kept_.size()) kept_[record] = kept_events;
  std::vector<int64_t>& cycles = cycles_[slot];
  cycles.assign(walk.cycles.begin(),
                walk.cycles.begin() + std::min<size_t>(walk.cycles.size(), kept_events));
  base_[slot] = 0;
  if (r.header_problem == HeaderProblem::kNone) {
    const int64_t gt = static_cast<int64_t>(r.start_globaltimer);
    if (!has_ref_) {
      has_ref_ = true;
      ref_gt_ = gt;
      ref_clock_ = r.start_clock;
      ref_sm_ = r.sm_id;
    } else if (r.sm_id != ref_sm_ && LinkScopeOf(layout_) == LinkScope::kCluster) {
      // A cluster's CTAs run on several SMs, whose %clock counters are unrelated: the
      // offset comes from the globaltimer at the nominal clock (to its resolution, not the
      // cycle).
      base_[slot] = static_cast<int64_t>(std::llround(
          static_cast<double>(gt - ref_gt_) *
          static_cast<double>(layout_.clock.nominal_sm_clock_khz) / 1e6));
    } else {
      // The start offset mod 2^32 is exact; the globaltimer (at the nominal clock) says
      // which of its 2^32-apart readings it is.
      const int64_t mod = static_cast<int64_t>(static_cast<uint32_t>(r.start_clock - ref_clock_));
      const double expected = static_cast<double>(gt - ref_gt_) *
                              static_cast<double>(layout_.clock.nominal_sm_clock_khz) / 1e6;
      const double wraps = std::round((expected - static_cast<double>(mod)) / 4294967296.0);
      base_[slot] = mod + static_cast<int64_t>(std::clamp(wraps, -1e6, 1e6)) * (int64_t{1} << 32);
    }
  }
  if (slot + 1 != records_per_scope_) return false;
  end_ = record + 1;
  links_ = FindLinks(decoded_, layout_, first_, end_, kept_,
                     [this](const EventRef& e) { return Cycles(e); });
  return true;
}

int64_t ScopeLinker::Cycles(const EventRef& e) const {
  if (e.record < first_ || e.record - first_ >= cycles_.size()) return 0;
  const uint32_t slot = e.record - first_;
  const std::vector<int64_t>& cycles = cycles_[slot];
  return base_[slot] + (e.slot < cycles.size() ? cycles[e.slot] : 0);
}

}  // namespace warptrace
