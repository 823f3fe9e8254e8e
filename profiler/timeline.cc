#include "profiler/timeline.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profiler/device/trace_abi.h"

namespace warptrace {
namespace {

struct OpenSlice {
  uint32_t site;
  uint32_t slice;  // index into UnitTimeline::slices
};

bool SliceOrder(const Slice& a, const Slice& b) {
  return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.depth < b.depth;
}

}  // namespace

Dim3 BlockIndex(const Dim3& grid, uint32_t block_linear) {
  const uint64_t gx = grid.x == 0 ? 1 : grid.x;
  const uint64_t gy = grid.y == 0 ? 1 : grid.y;
  Dim3 d;
  d.x = static_cast<uint32_t>(block_linear % gx);
  d.y = static_cast<uint32_t>(block_linear / gx % gy);
  d.z = static_cast<uint32_t>(block_linear / (gx * gy));
  return d;
}

absl::StatusOr<Timeline> BuildTimeline(const DecodedTrace& decoded, const VerifyReport& report,
                                       const TimelineOptions& options) {
  if (decoded.layout == nullptr || report.units.size() != decoded.records.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the verify report has %d units but the decoded trace has %d records: verify this "
        "DecodedTrace and pass its report",
        report.units.size(), decoded.records.size()));
  }
  if (!report.ok()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "verification found %d errors; a timeline is built only from a verified trace: fix "
        "the trace, or verify with allow_truncated to keep each unit's valid prefix",
        report.errors));
  }
  const TraceLayout& layout = *decoded.layout;
  if (layout.clock.nominal_sm_clock_khz == 0) {
    return absl::InvalidArgumentError(
        "the layout's nominal SM clock is 0 kHz: set clock.nominal_sm_clock_khz to the "
        "device's SM clock (it converts cycles to ns where a unit cannot be calibrated)");
  }
  const double nominal_cycles_per_ns =
      static_cast<double>(layout.clock.nominal_sm_clock_khz) / 1e6;

  Timeline timeline;
  timeline.layout = layout;
  timeline.overhead_compensated = options.compensate_overhead;
  timeline.units.resize(decoded.records.size());

  uint64_t calibrated = 0, nominal_short = 0, nominal_no_end = 0, nominal_implausible = 0;
  double min_rate = std::numeric_limits<double>::max(), max_rate = 0;
  int64_t origin = std::numeric_limits<int64_t>::max();
  int64_t end = std::numeric_limits<int64_t>::min();
  std::vector<OpenSlice> stack;
  stack.reserve(64);

  for (size_t idx = 0; idx < decoded.records.size(); ++idx) {
    const DecodedRecord& r = decoded.records[idx];
    const UnitVerdict& v = report.units[idx];
    if (v.record_index != r.record_index || v.block_linear != r.block_linear ||
        v.unit_index != r.unit_index || v.kept_events > r.events.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "verify report unit %d (block %d unit %d, %d kept events) does not match decoded "
          "record %d (block %d unit %d, %d events)",
          idx, v.block_linear, v.unit_index, v.kept_events, r.record_index, r.block_linear,
          r.unit_index, r.events.size()));
    }
    UnitTimeline& u = timeline.units[idx];
    u.record_index = r.record_index;
    u.block_linear = r.block_linear;
    u.block_index = BlockIndex(layout.grid, r.block_linear);
    u.unit_index = r.unit_index;
    u.verdict = v.verdict;
    u.verdict_reason = v.reason;
    u.dropped = v.dropped;
    u.overhead_cycles = v.overhead_cycles;
    if (r.header_problem != HeaderProblem::kNone) {
      u.has_record = false;
      continue;
    }
    u.sm_id = r.sm_id;

    // Unwrapped cycles of the kept events relative to the start stamp (clamped monotone),
    // and of the end stamp along the full raw chain.
    const uint64_t max_forward = MaxForwardCycles(r, layout.clock.nominal_sm_clock_khz);
    const uint32_t n = v.kept_events;
    const absl::Span<const abi::Event> events = r.events.subspan(0, n);

    bool has_end = v.close_at_end_stamp;
    int64_t end_cycles = 0;
    if (has_end) {
      uint32_t prev = r.start_clock;
      for (const abi::Event& e : r.events) {
        end_cycles += ClockStep(prev, e.clock, max_forward);
        prev = e.clock;
      }
      end_cycles += ClockStep(prev, r.end_clock, max_forward);
    }

    // Clock rate.
    double cycles_per_ns = nominal_cycles_per_ns;
    u.nominal_clock = true;
    const uint64_t gt_span = has_end ? r.end_globaltimer - r.start_globaltimer : 0;
    if (!has_end) {
      ++nominal_no_end;
    } else if (gt_span < options.min_calibration_ns || end_cycles <= 0) {
      ++nominal_short;
    } else {
      const double rate = static_cast<double>(end_cycles) / static_cast<double>(gt_span);
      if (rate < nominal_cycles_per_ns / 4 || rate > nominal_cycles_per_ns * 4) {
        ++nominal_implausible;
      } else {
        cycles_per_ns = rate;
        u.nominal_clock = false;
        ++calibrated;
        min_rate = std::min(min_rate, rate);
        max_rate = std::max(max_rate, rate);
      }
    }
    u.cycles_per_ns = cycles_per_ns;
    const double ns_per_cycle = 1.0 / cycles_per_ns;
    const int64_t start_ns = static_cast<int64_t>(r.start_globaltimer);
    const int64_t overhead = options.compensate_overhead ? v.overhead_cycles : 0;
    // Clamped and wrapping so that damaged stamps (fuzzed input) cannot overflow.
    auto to_ns = [&](int64_t cycles) {
      const double ns = std::clamp(static_cast<double>(cycles) * ns_per_cycle + 0.5, -4e18, 4e18);
      return static_cast<int64_t>(static_cast<uint64_t>(start_ns) +
                                  static_cast<uint64_t>(static_cast<int64_t>(ns)));
    };

    u.start_ns = start_ns;
    u.events = n;
    u.slices.clear();
    u.slices.reserve(n / 2 + v.open_regions);
    stack.clear();
    int64_t cycles = 0;      // unwrapped, raw
    int64_t shown = 0;       // after compensation and the monotone clamp
    int64_t last_ns = start_ns;
    bool ordered = true;
    uint32_t prev = r.start_clock;
    for (uint32_t i = 0; i < n; ++i) {
      const abi::Event e = events[i];
      const int64_t step = ClockStep(prev, e.clock, max_forward);
      prev = e.clock;
      cycles += step;  // a tolerated backward step is negative; `shown` clamps it
      shown = std::max(shown, cycles - overhead * i);
      const int64_t t = to_ns(shown);
      last_ns = t;
      const uint32_t site = abi::TagSite(e.tag);
      if (abi::TagIsExit(e.tag)) {
        // Verify guaranteed the exit matches the innermost open region in the kept prefix.
        u.slices[stack.back().slice].end_ns = t;
        stack.pop_back();
      } else {
        const uint32_t depth = static_cast<uint32_t>(stack.size());
        if (!u.slices.empty() && u.slices.back().begin_ns == t && u.slices.back().depth > depth) {
          ordered = false;
        }
        stack.push_back({site, static_cast<uint32_t>(u.slices.size())});
        u.slices.push_back({site, depth, t, t, false});
      }
    }

    int64_t unit_end;
    if (has_end) {
      unit_end = std::max(last_ns, to_ns(std::max(shown, end_cycles - overhead * n)));
    } else {
      unit_end = last_ns;
    }
    // Regions left open (repaired units) close at the unit's last timestamp.
    while (!stack.empty()) {
      Slice& s = u.slices[stack.back().slice];
      s.end_ns = unit_end;
      s.repaired = true;
      stack.pop_back();
    }
    if (!ordered) std::stable_sort(u.slices.begin(), u.slices.end(), SliceOrder);
    u.end_ns = unit_end;
    origin = std::min(origin, u.start_ns);
    end = std::max(end, u.end_ns);
  }

  if (origin == std::numeric_limits<int64_t>::max()) {
    origin = 0;
    end = 0;
  }
  timeline.origin_ns = origin;
  timeline.end_ns = end;
  for (UnitTimeline& u : timeline.units) {
    if (!u.has_record) u.start_ns = u.end_ns = origin;
  }

  const uint64_t nominal = nominal_short + nominal_no_end + nominal_implausible;
  const std::string nominal_rate =
      absl::StrFormat("%.3f MHz", static_cast<double>(layout.clock.nominal_sm_clock_khz) / 1e3);
  std::string note;
  if (calibrated > 0) {
    note = absl::StrFormat(
        "SM clock calibrated per unit from its globaltimer pair (%d units, %.3f-%.3f MHz)",
        calibrated, min_rate * 1e3, max_rate * 1e3);
  }
  if (nominal > 0) {
    std::vector<std::string> why;
    if (nominal_short > 0) {
      why.push_back(absl::StrFormat("%d ran under %.3f us, too briefly for the globaltimer",
                                    nominal_short,
                                    static_cast<double>(options.min_calibration_ns) / 1e3));
    }
    if (nominal_no_end > 0) {
      why.push_back(absl::StrFormat("%d had no trustworthy end stamp", nominal_no_end));
    }
    if (nominal_implausible > 0) {
      why.push_back(absl::StrFormat(
          "%d measured a rate outside 1/4..4x nominal", nominal_implausible));
    }
    absl::StrAppend(&note, note.empty() ? "" : "; ",
                    absl::StrFormat("nominal SM clock %s from the layout used for %d unit%s (",
                                    nominal_rate, nominal, nominal == 1 ? "" : "s"));
    for (size_t i = 0; i < why.size(); ++i) absl::StrAppend(&note, i ? ", " : "", why[i]);
    absl::StrAppend(&note, ")");
  }
  if (note.empty()) note = "no unit has a record: no clock was needed";
  if (options.compensate_overhead) {
    absl::StrAppend(&note,
                    "; overhead compensated: event i of a unit moved i x its overhead earlier");
  }
  timeline.clock_note = std::move(note);
  return timeline;
}

}  // namespace warptrace
