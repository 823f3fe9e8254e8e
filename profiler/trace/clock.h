// The clock model (ARCHITECTURE.md, "Clock model"): how a trace unit's 32-bit %clock stamps
// become cycles since its start stamp (unwrapping), how many cycles a nanosecond is
// (calibration from the unit's globaltimer pair, or the nominal clock, and why), and the
// unit's measured profiling overhead. One target used by the event walker (walk.h), verify
// and timeline alike.
//
// Unwrapping. %clock wraps every 2^32 cycles (about 2 s at 2 GHz). Reading every step between
// consecutive stamps as the forward distance mod 2^32 (ClockStep) is exact as long as the
// stamps are less than 2^32 cycles apart and the clock never steps back. Two things can make
// that reading wrong in a long unit, and CheckWraps uses everything the record knows to find
// them — the unit's total cycles from start to end stamp is ≡ (end_clock - start_clock)
// mod 2^32, and it ran Δgt = end - start globaltimer ns at a rate within the wrap window
// [nominal / 4, 2 × nominal] (the layout's nominal clock is the device's peak clock; no SM
// runs at twice it, and a quarter of it is the calibration's own plausibility floor):
//   * a small step back (2^32 - d cycles for a forward distance d >= 2^31) read as a forward
//     step of almost 2^32 cycles: the chain then has one wrap too many. When exactly one
//     total fits the window, the sign of such steps is determined: as many of them as the
//     surplus wraps are read backward (the smallest steps back first);
//   * a real gap of 2^32 cycles or more: the chain misses wraps (kLost), which cannot be
//     placed between the unit's events.
// When more than one total fits the window (a unit that ran for more than about 2^32 /
// (1.75 × nominal) cycles' worth of ns), the wraps cannot be checked (kUndetermined): the
// chain's reading is used and verify says so with a finding. Nothing is squeezed or
// stretched silently.
//
// Thread-safety: everything here is a pure function of its arguments or a value type.
#ifndef WARPTRACE_PROFILER_TRACE_CLOCK_H_
#define WARPTRACE_PROFILER_TRACE_CLOCK_H_

#include <cstdint>
#include <string>

#include "format/layout.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/verdict.h"

namespace warptrace {

// The largest forward step between two consecutive clock stamps of `record` that is still
// believable: a unit's whole run, from its globaltimer pair at 4x the nominal clock (plus
// 2^16 cycles of slack for the globaltimer's coarse ticks). When the unit has no usable
// globaltimer pair (unfinished, or end before start) it is 2^31 - 1.
uint64_t MaxForwardCycles(const DecodedRecord& record, uint64_t nominal_sm_clock_khz);

// Signed cycles from clock stamp `prev` to `cur`. %clock is 32-bit and wraps, and two
// consecutive stamps are less than 2^32 cycles apart, so the forward distance
// (cur - prev) mod 2^32 is the step, wrap or not. Only a forward distance of 2^31 or more
// that is also larger than `max_forward` (see MaxForwardCycles) is read as the clock going
// backwards by 2^32 - distance cycles (a negative result).
inline int64_t ClockStep(uint32_t prev, uint32_t cur, uint64_t max_forward) {
  const uint32_t d = cur - prev;
  if (d < 0x80000000u || d <= max_forward) return d;
  return static_cast<int64_t>(d) - (int64_t{1} << 32);
}

// True when a step read forward as `d` cycles (ClockStep's result) could also be a step back
// of 2^32 - d cycles: the sign CheckWraps may have to decide.
inline bool SignAmbiguous(int64_t step) { return step >= int64_t{0x80000000}; }

inline constexpr int64_t kWrapCycles = int64_t{1} << 32;

// What the globaltimer span says about a chain's wraps.
enum class WrapOutcome : uint8_t {
  kUnchecked,     // no trustworthy globaltimer pair (or no chain to the end stamp)
  kConfirmed,     // exactly one total fits the window and the chain reads it
  kFlipped,       // exactly one total fits; `flip` sign-ambiguous steps are steps back
  kWhichUnknown,  // as kFlipped, but fewer steps than are ambiguous: which ones is a guess
                  // (the smallest steps back are taken)
  kUndetermined,  // several totals fit the window: the chain's reading is used unchecked
  kLost,          // the chain reads fewer wraps than the only total that fits: a gap of
                  // 2^32 cycles or more between two events, which cannot be placed
  kNoFit,         // no total fits the window: the rate is implausible (calibration says so)
};

struct WrapCheck {
  WrapOutcome outcome = WrapOutcome::kUnchecked;
  uint32_t flip = 0;          // sign-ambiguous steps to read backward (smallest first)
  int64_t total_cycles = 0;   // the total the chain should read (start to end stamp)
  uint64_t window_lo = 0;     // cycles the globaltimer span allows, inclusive
  uint64_t window_hi = 0;
  uint32_t fitting_totals = 0;  // totals ≡ the chain's mod 2^32 inside the window (capped)
};

// Checks a chain that reads `chain_cycles` from start to end stamp, with `ambiguous` steps
// read forward that could be steps back (SignAmbiguous), against a globaltimer span of
// `gt_span_ns` at nominal clock `nominal_sm_clock_khz` (> 0). `events` is the number of
// events between the stamps: with none there is only one gap, so lost wraps are placed in
// it (kConfirmed with the fitting total).
WrapCheck CheckWraps(int64_t chain_cycles, uint32_t ambiguous, uint64_t gt_span_ns,
                     uint64_t nominal_sm_clock_khz, uint32_t events);

// Calibration of one unit: which rate turns its cycles into ns, and why.
struct UnitClock {
  ClockSource source = ClockSource::kNoRecord;
  double cycles_per_ns = 0;     // calibrated, or the nominal clock
  uint32_t overhead_cycles = 0; // smallest forward step between consecutive events
};

struct CalibrationInput {
  bool has_record = false;
  bool trust_end_stamp = false;  // finished with trustworthy clocks (verify's decision)
  bool wraps_lost = false;       // CheckWraps said kLost
  int64_t end_cycles = 0;        // unwrapped cycles from start to end stamp
  uint64_t gt_span_ns = 0;       // end - start globaltimer
  uint64_t min_gap_cycles = 0;   // smallest forward step between consecutive events
};

// rate = end_cycles / gt_span_ns when the end stamp is trusted, the span is at least
// `min_calibration_ns` and the rate lies within 1/4..4x nominal; the nominal clock otherwise,
// with the reason. `nominal_sm_clock_khz` must be > 0.
UnitClock Calibrate(const CalibrationInput& in, uint64_t nominal_sm_clock_khz,
                    uint64_t min_calibration_ns);

// The trace's clock note, from every unit's clock: "SM clock calibrated per unit from its
// globaltimer pair (N units, A-B MHz); nominal SM clock X MHz from the layout used for M
// units (K ran under T us, too briefly for the globaltimer, ...)". The one place the note is
// written: the dump driver and BuildTimeline both tally their units here.
class ClockTally {
 public:
  void Add(ClockSource source, double cycles_per_ns);
  std::string Note(uint64_t nominal_sm_clock_khz, uint64_t min_calibration_ns,
                   bool overhead_compensated) const;

 private:
  uint64_t counts_[kNumClockSources] = {};
  double min_rate_ = 0;
  double max_rate_ = 0;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_TRACE_CLOCK_H_
