#include "profiler/trace/walk.h"

#include <algorithm>
#include <utility>

#include "format/trace_abi.h"

namespace warptrace {
namespace {

struct AmbiguousStep {
  uint32_t event;  // the step into this event (walked: into the end stamp)
  int64_t step;    // read forward, >= 2^31
};

void Reset(UnitWalk& w) {
  w.walked = 0;
  w.error = WalkError::kNone;
  w.error_site = w.expected_site = w.expected_begin = 0;
  w.cycles.clear();
  w.slices.clear();
  w.open.clear();
  w.back_steps.clear();
  w.min_gap = std::numeric_limits<uint64_t>::max();
  w.chain_to_end = false;
  w.end_cycles = 0;
  w.wraps = WrapCheck();
}

// Reads the `flip` sign-ambiguous steps with the smallest step back as steps back.
void Flip(uint32_t flip, std::vector<AmbiguousStep>& ambiguous, UnitWalk& w) {
  std::stable_sort(ambiguous.begin(), ambiguous.end(),
                   [](const AmbiguousStep& a, const AmbiguousStep& b) { return a.step > b.step; });
  for (uint32_t k = 0; k < flip; ++k) {
    const AmbiguousStep& a = ambiguous[k];
    for (uint32_t i = a.event; i < w.walked; ++i) w.cycles[i] -= kWrapCycles;
    w.end_cycles -= kWrapCycles;
    w.back_steps.push_back({a.event, kWrapCycles - a.step});
  }
  std::sort(w.back_steps.begin(), w.back_steps.end(),
            [](const BackStep& a, const BackStep& b) { return a.event < b.event; });
  w.min_gap = std::numeric_limits<uint64_t>::max();
  for (uint32_t i = 1; i < w.walked; ++i) {
    const int64_t step = w.cycles[i] - w.cycles[i - 1];
    if (step >= 0) w.min_gap = std::min(w.min_gap, static_cast<uint64_t>(step));
  }
}

}  // namespace

uint32_t UnitWalk::OpenBefore(uint32_t event) const {
  uint32_t n = 0;
  for (const WalkSlice& s : slices) {
    if (s.begin_event < event && (s.end_event == WalkSlice::kOpen || s.end_event >= event)) ++n;
  }
  return n;
}

void WalkUnit(const DecodedRecord& r, const TraceLayout& layout, UnitWalk& w) {
  Reset(w);
  if (r.header_problem != HeaderProblem::kNone) return;
  const uint64_t nominal_khz = layout.clock.nominal_sm_clock_khz;
  const uint32_t num_sites = static_cast<uint32_t>(layout.sites.size());
  const uint64_t max_forward = MaxForwardCycles(r, nominal_khz);
  const uint32_t n = static_cast<uint32_t>(r.events.size());
  thread_local std::vector<AmbiguousStep> ambiguous;
  ambiguous.clear();
  w.cycles.reserve(n);

  uint32_t prev = r.start_clock;
  int64_t cycles = 0;
  uint32_t i = 0;
  for (; i < n; ++i) {
    const abi::Event e = r.events[i];
    const uint32_t site = r.SiteOf(e.tag);
    if (site >= num_sites) {
      w.error = WalkError::kUnknownSite;
      w.error_site = site;
      break;
    }
    const int64_t step = ClockStep(prev, e.clock, max_forward);
    if (step >= 0 && i > 0) w.min_gap = std::min(w.min_gap, static_cast<uint64_t>(step));
    if (!SiteKindNests(layout.sites[site].kind)) {
      // Instants and async spans are timed but never on the span stack (links.h pairs an
      // async span's begin and end by its payload).
    } else if (abi::TagIsExit(e.tag)) {
      if (w.open.empty()) {
        w.error = WalkError::kExitWithoutBegin;
        w.error_site = site;
        break;
      }
      WalkSlice& innermost = w.slices[w.open.back()];
      if (innermost.site != site) {
        w.error = WalkError::kMismatchedNesting;
        w.error_site = site;
        w.expected_site = innermost.site;
        w.expected_begin = innermost.begin_event;
        break;
      }
      innermost.end_event = i;
      w.open.pop_back();
    } else {
      w.open.push_back(static_cast<uint32_t>(w.slices.size()));
      w.slices.push_back({site, static_cast<uint32_t>(w.open.size() - 1), i, WalkSlice::kOpen});
    }
    if (step < 0) {
      w.back_steps.push_back({i, -step});
    } else if (SignAmbiguous(step)) {
      ambiguous.push_back({i, step});
    }
    prev = e.clock;
    cycles += step;
    w.cycles.push_back(cycles);
    // A version-2 payload slot is data of this event, not an event: it gets the event's
    // cycles (so cycles stay indexed by slot) and is stepped over.
    if (r.HasPayload(e.tag) && i + 1 < n) {
      w.cycles.push_back(cycles);
      ++i;
    }
  }
  w.walked = i;
  if (w.error != WalkError::kNone || !r.complete()) return;

  const int64_t step = ClockStep(prev, r.end_clock, max_forward);
  if (step < 0) {
    w.back_steps.push_back({n, -step});
  } else if (SignAmbiguous(step)) {
    ambiguous.push_back({n, step});
  }
  w.chain_to_end = true;
  w.end_cycles = cycles + step;
  if (r.end_globaltimer < r.start_globaltimer || r.end_globaltimer >= kMaxGlobaltimerNs ||
      nominal_khz == 0) {
    return;  // no span to check the wraps against (verify reports a damaged end stamp)
  }
  w.wraps = CheckWraps(w.end_cycles, static_cast<uint32_t>(ambiguous.size()),
                       r.end_globaltimer - r.start_globaltimer, nominal_khz, n);
  if (w.wraps.flip > 0) Flip(w.wraps.flip, ambiguous, w);
  if (w.wraps.outcome == WrapOutcome::kConfirmed) w.end_cycles = w.wraps.total_cycles;
}

}  // namespace warptrace
