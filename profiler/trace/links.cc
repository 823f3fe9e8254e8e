#include "profiler/trace/links.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "profiler/device/trace_abi.h"

namespace warptrace {
namespace {

using PhaseKey = std::tuple<uint32_t, uint32_t, uint32_t>;  // block, barrier, phase

struct AsyncOpen {
  EventRef begin;
  uint32_t barrier = kNoBarrier;
};

// Reads one record's payload events: arrivals and releases into `phases`, async copies
// paired within the unit into `out`.
void ReadRecord(const DecodedRecord& r, uint32_t record, uint32_t kept, const TraceLayout& layout,
                std::map<PhaseKey, PhaseRecord>& phases, Links& out) {
  std::map<std::pair<uint32_t, uint32_t>, AsyncOpen> open;  // (site, issue) -> begin
  const uint32_t n = std::min<uint32_t>(kept, static_cast<uint32_t>(r.events.size()));
  for (uint32_t i = 0; i < n; i = r.NextEvent(i)) {
    const uint32_t tag = r.events[i].tag;
    const uint32_t site = r.SiteOf(tag);
    const abi::Payload* payload = r.PayloadOf(i);
    if (site >= layout.sites.size() || payload == nullptr) continue;
    const SiteKind kind = layout.sites[site].kind;
    const EventRef ref{record, i};
    const bool exit = abi::TagIsExit(tag);
    if (kind == SiteKind::kBarrierArrive || (kind == SiteKind::kPhaseWait && exit)) {
      PhaseRecord& p = phases[{r.block_linear, payload->a, payload->b}];
      p.block_linear = r.block_linear;
      p.barrier = payload->a;
      p.phase = payload->b;
      (kind == SiteKind::kBarrierArrive ? p.arrivals : p.releases).push_back(ref);
    } else if (kind == SiteKind::kAsyncCopy) {
      const std::pair<uint32_t, uint32_t> key{site, payload->a};
      if (!exit) {
        if (auto it = open.find(key); it != open.end()) {
          // Issued again before its completion: the first begin is never completed.
          out.unpaired.push_back({it->second.begin, site, payload->a, true});
        }
        open[key] = {ref, payload->b};
        continue;
      }
      auto it = open.find(key);
      if (it == open.end()) {
        out.unpaired.push_back({ref, site, payload->a, false});
        continue;
      }
      Link link;
      link.kind = LinkKind::kIssueToCompletion;
      link.from = it->second.begin;
      link.to = ref;
      link.barrier = it->second.barrier;
      link.issue = payload->a;
      out.links.push_back(link);
      open.erase(it);
    }
  }
  for (const auto& [key, begin] : open) {
    out.unpaired.push_back({begin.begin, key.first, key.second, true});
  }
}

}  // namespace

Links FindLinks(const DecodedTrace& decoded, const TraceLayout& layout,
                const std::vector<uint32_t>& kept, const EventTime& time) {
  Links out;
  std::map<PhaseKey, PhaseRecord> phases;
  for (uint32_t record = 0; record < decoded.records.size(); ++record) {
    const DecodedRecord& r = decoded.records[record];
    if (r.header_problem != HeaderProblem::kNone || r.version < 2) continue;
    const uint32_t limit = record < kept.size() ? kept[record] : UINT32_MAX;
    ReadRecord(r, record, limit, layout, phases, out);
  }
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
  std::stable_sort(out.unpaired.begin(), out.unpaired.end(),
                   [](const UnpairedAsync& a, const UnpairedAsync& b) {
                     return std::tie(a.event.record, a.event.slot) <
                            std::tie(b.event.record, b.event.slot);
                   });
  return out;
}

}  // namespace warptrace
