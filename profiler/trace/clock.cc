#include "profiler/trace/clock.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace warptrace {
namespace {

// Slack for the globaltimer's coarse ticks, in cycles (as MaxForwardCycles).
constexpr uint64_t kSlackCycles = uint64_t{1} << 16;
// Window bounds are kept far from int64 overflow (the chain is an int64).
constexpr unsigned __int128 kWindowCap = uint64_t{1} << 62;

uint64_t Cap(unsigned __int128 v) { return static_cast<uint64_t>(std::min(v, kWindowCap)); }

}  // namespace

uint64_t MaxForwardCycles(const DecodedRecord& record, uint64_t nominal_sm_clock_khz) {
  constexpr uint64_t kNoBound = 0x7fffffffu;
  if (!record.complete() || record.end_globaltimer < record.start_globaltimer ||
      record.end_globaltimer >= kMaxGlobaltimerNs) {  // a damaged end stamp (verify says so)
    return kNoBound;
  }
  const unsigned __int128 ns = record.end_globaltimer - record.start_globaltimer;
  // cycles = ns * khz / 1e6, times 4 for headroom over the nominal clock; ns * khz < 2^128.
  const unsigned __int128 cycles = ns * nominal_sm_clock_khz / 1'000'000 * 4 + (1u << 16);
  return cycles > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(cycles);
}

WrapCheck CheckWraps(int64_t chain_cycles, uint32_t ambiguous, uint64_t gt_span_ns,
                     uint64_t nominal_sm_clock_khz, uint32_t events) {
  WrapCheck c;
  c.total_cycles = chain_cycles;
  const unsigned __int128 nominal =
      static_cast<unsigned __int128>(gt_span_ns) * nominal_sm_clock_khz / 1'000'000;
  const uint64_t quarter = Cap(nominal / 4);
  c.window_lo = quarter > kSlackCycles ? quarter - kSlackCycles : 0;
  c.window_hi = Cap(nominal * 2 + kSlackCycles);
  auto in_window = [&](int64_t total) {
    return total >= 0 && static_cast<uint64_t>(total) >= c.window_lo &&
           static_cast<uint64_t>(total) <= c.window_hi;
  };

  // Totals r + k * 2^32 (k >= 0) inside [lo, hi], r = the chain mod 2^32.
  const int64_t r = ((chain_cycles % kWrapCycles) + kWrapCycles) % kWrapCycles;
  const uint64_t lo = c.window_lo, hi = c.window_hi;
  const uint64_t ur = static_cast<uint64_t>(r);
  const uint64_t k_min = lo <= ur ? 0 : (lo - ur + kWrapCycles - 1) / kWrapCycles;
  if (hi < ur || (hi - ur) / kWrapCycles < k_min) {
    c.outcome = WrapOutcome::kNoFit;
    return c;
  }
  const uint64_t count = (hi - ur) / kWrapCycles - k_min + 1;
  c.fitting_totals = static_cast<uint32_t>(std::min<uint64_t>(count, UINT32_MAX));
  if (count > 1) {
    c.outcome = WrapOutcome::kUndetermined;
    for (uint32_t j = 0; j <= ambiguous; ++j) {
      const int64_t total = chain_cycles - static_cast<int64_t>(j) * kWrapCycles;
      if (in_window(total)) {
        c.flip = j;
        c.total_cycles = total;
        break;
      }
    }
    return c;
  }
  const int64_t only = r + static_cast<int64_t>(k_min) * kWrapCycles;
  const int64_t surplus = (chain_cycles - only) / kWrapCycles;
  if (surplus == 0) {
    c.outcome = WrapOutcome::kConfirmed;
  } else if (surplus > 0 && static_cast<uint64_t>(surplus) <= ambiguous) {
    c.flip = static_cast<uint32_t>(surplus);
    c.total_cycles = only;
    c.outcome = c.flip == ambiguous ? WrapOutcome::kFlipped : WrapOutcome::kWhichUnknown;
  } else if (surplus < 0) {
    c.total_cycles = only;
    c.outcome = events == 0 ? WrapOutcome::kConfirmed : WrapOutcome::kLost;
  } else {
    c.outcome = WrapOutcome::kNoFit;  // more wraps than even reading every step back allows
  }
  return c;
}

UnitClock Calibrate(const CalibrationInput& in, uint64_t nominal_sm_clock_khz,
                    uint64_t min_calibration_ns) {
  UnitClock c;
  c.overhead_cycles = static_cast<uint32_t>(std::min<uint64_t>(in.min_gap_cycles, UINT32_MAX));
  if (!in.has_record) return c;  // kNoRecord, rate 0
  const double nominal = static_cast<double>(nominal_sm_clock_khz) / 1e6;
  c.cycles_per_ns = nominal;
  if (in.wraps_lost) {
    c.source = ClockSource::kWrapsLost;
  } else if (!in.trust_end_stamp) {
    c.source = ClockSource::kNoEndStamp;
  } else if (in.gt_span_ns < min_calibration_ns || in.end_cycles <= 0) {
    c.source = ClockSource::kTooShort;
  } else {
    const double rate =
        static_cast<double>(in.end_cycles) / static_cast<double>(in.gt_span_ns);
    if (rate < nominal / 4 || rate > nominal * 4) {
      c.source = ClockSource::kImplausibleRate;
    } else {
      c.source = ClockSource::kCalibrated;
      c.cycles_per_ns = rate;
    }
  }
  return c;
}

void ClockTally::Add(ClockSource source, double cycles_per_ns) {
  if (source == ClockSource::kCalibrated) {
    const bool first = counts_[static_cast<int>(ClockSource::kCalibrated)] == 0;
    min_rate_ = first ? cycles_per_ns : std::min(min_rate_, cycles_per_ns);
    max_rate_ = first ? cycles_per_ns : std::max(max_rate_, cycles_per_ns);
  }
  ++counts_[static_cast<int>(source)];
}

std::string ClockTally::Note(uint64_t nominal_sm_clock_khz, uint64_t min_calibration_ns,
                             bool overhead_compensated) const {
  auto count = [&](ClockSource s) { return counts_[static_cast<int>(s)]; };
  std::string note;
  const uint64_t calibrated = count(ClockSource::kCalibrated);
  if (calibrated > 0) {
    note = absl::StrFormat(
        "SM clock calibrated per unit from its globaltimer pair (%d units, %.3f-%.3f MHz)",
        calibrated, min_rate_ * 1e3, max_rate_ * 1e3);
  }
  std::vector<std::string> why;
  if (const uint64_t n = count(ClockSource::kTooShort); n > 0) {
    why.push_back(absl::StrFormat("%d ran under %.3f us, too briefly for the globaltimer", n,
                                  static_cast<double>(min_calibration_ns) / 1e3));
  }
  if (const uint64_t n = count(ClockSource::kNoEndStamp); n > 0) {
    why.push_back(absl::StrFormat("%d had no trustworthy end stamp", n));
  }
  if (const uint64_t n = count(ClockSource::kImplausibleRate); n > 0) {
    why.push_back(absl::StrFormat("%d measured a rate outside 1/4..4x nominal", n));
  }
  if (const uint64_t n = count(ClockSource::kWrapsLost); n > 0) {
    why.push_back(absl::StrFormat("%d lost %%clock wraps that could not be placed", n));
  }
  const uint64_t nominal = count(ClockSource::kTooShort) + count(ClockSource::kNoEndStamp) +
                           count(ClockSource::kImplausibleRate) +
                           count(ClockSource::kWrapsLost);
  if (nominal > 0) {
    absl::StrAppend(
        &note, note.empty() ? "" : "; ",
        absl::StrFormat("nominal SM clock %.3f MHz from the layout used for %d unit%s (",
                        static_cast<double>(nominal_sm_clock_khz) / 1e3, nominal,
                        nominal == 1 ? "" : "s"));
    for (size_t i = 0; i < why.size(); ++i) absl::StrAppend(&note, i ? ", " : "", why[i]);
    absl::StrAppend(&note, ")");
  }
  if (note.empty()) note = "no unit has a record: no clock was needed";
  if (overhead_compensated) {
    absl::StrAppend(&note,
                    "; overhead compensated: event i of a unit moved i x its overhead earlier");
  }
  return note;
}

}  // namespace warptrace
