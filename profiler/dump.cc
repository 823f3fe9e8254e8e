#include "profiler/dump.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profiler/decode.h"
#include "profiler/status_macros.h"

namespace warptrace {
namespace {

// The clocks of every unit seen, for a note over all chunks.
struct ClockTally {
  uint64_t calibrated = 0;
  uint64_t nominal = 0;
  double min_mhz = 0;
  double max_mhz = 0;

  void Add(const UnitTimeline& unit) {
    if (!unit.has_record) return;
    if (unit.nominal_clock) {
      ++nominal;
      return;
    }
    const double mhz = unit.cycles_per_ns * 1e3;
    min_mhz = calibrated == 0 ? mhz : std::min(min_mhz, mhz);
    max_mhz = calibrated == 0 ? mhz : std::max(max_mhz, mhz);
    ++calibrated;
  }

  std::string Note(const TraceLayout& layout, bool compensated) const {
    std::string note;
    if (calibrated > 0) {
      note = absl::StrFormat(
          "SM clock calibrated per unit from its globaltimer pair (%d units, %.3f-%.3f MHz)",
          calibrated, min_mhz, max_mhz);
    }
    if (nominal > 0) {
      absl::StrAppend(&note, note.empty() ? "" : "; ",
                      absl::StrFormat("nominal SM clock %.3f MHz from the layout used for %d "
                                      "unit%s (too short to calibrate, no trustworthy end "
                                      "stamp, or an implausible rate)",
                                      static_cast<double>(layout.clock.nominal_sm_clock_khz) /
                                          1e3,
                                      nominal, nominal == 1 ? "" : "s"));
    }
    if (note.empty()) note = "no unit has a record: no clock was needed";
    if (compensated) {
      absl::StrAppend(&note,
                      "; overhead compensated: event i of a unit moved i x its overhead earlier");
    }
    return note;
  }
};

}  // namespace

absl::Status DumpTrace(const TraceLayout& layout, absl::Span<const uint32_t> words,
                       const DumpOptions& options, DumpResult& result) {
  result = DumpResult();
  ASSIGN_OR_RETURN(DecodedTrace decoded, Decode(layout, words));
  result.report = Verify(decoded, options.verify);
  RETURN_IF_ERROR(result.report.ToStatus());

  // The origin of every chunk's timestamps: the earliest start of a unit with a record.
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const DecodedRecord& r : decoded.records) {
    if (r.header_problem == HeaderProblem::kNone) {
      origin = std::min(origin, static_cast<int64_t>(r.start_globaltimer));
    }
  }
  if (origin == std::numeric_limits<int64_t>::max()) origin = 0;
  result.origin_ns = origin;
  result.end_ns = origin;

  std::optional<SummaryBuilder> summary;
  if (options.summary) summary.emplace(layout);
  ClockTally tally;
  std::string single_note;
  size_t chunks = 0;
  const size_t n = decoded.records.size();
  const size_t chunk = static_cast<size_t>(
      std::max<uint64_t>(1, options.chunk_events / std::max<uint32_t>(1, layout.capacity)));

  auto run_chunks = [&](ChromeTraceWriter* writer) -> absl::Status {
    DecodedTrace part;
    part.layout = decoded.layout;
    VerifyReport part_report;
    part_report.allow_truncated = result.report.allow_truncated;
    part_report.capacity = result.report.capacity;
    for (size_t begin = 0; begin < n; begin += chunk) {
      const size_t end = std::min(n, begin + chunk);
      part.records.assign(decoded.records.begin() + static_cast<std::ptrdiff_t>(begin),
                          decoded.records.begin() + static_cast<std::ptrdiff_t>(end));
      part_report.units.assign(result.report.units.begin() + static_cast<std::ptrdiff_t>(begin),
                               result.report.units.begin() + static_cast<std::ptrdiff_t>(end));
      ASSIGN_OR_RETURN(Timeline t, BuildTimeline(part, part_report, options.timeline));
      ++chunks;
      single_note = t.clock_note;
      for (const UnitTimeline& u : t.units) {
        if (u.has_record && u.start_ns < origin) {
          return absl::InternalError(absl::StrFormat(
              "block %d unit %d starts at %d ns, before the trace origin %d ns found from the "
              "headers",
              u.block_linear, u.unit_index, u.start_ns, origin));
        }
        tally.Add(u);
        if (u.has_record) result.end_ns = std::max(result.end_ns, u.end_ns);
        result.slices += u.slices.size();
      }
      if (writer != nullptr) RETURN_IF_ERROR(writer->Add(t));
      if (summary.has_value()) RETURN_IF_ERROR(summary->Add(t));
    }
    result.clock_note =
        chunks == 1 ? single_note : tally.Note(layout, options.timeline.compensate_overhead);
    return absl::OkStatus();
  };

  auto write_trace = [&](llvm::raw_ostream& os) -> absl::Status {
    ChromeTraceWriter writer(layout, origin, options.chrome, os);
    RETURN_IF_ERROR(run_chunks(&writer));
    writer.Finish(result.clock_note, options.timeline.compensate_overhead);
    return absl::OkStatus();
  };
  if (options.chrome_trace_stream != nullptr) {
    RETURN_IF_ERROR(write_trace(*options.chrome_trace_stream));
  } else if (options.chrome_trace_path.empty()) {
    RETURN_IF_ERROR(run_chunks(nullptr));
  } else {
    RETURN_IF_ERROR(WriteChromeTraceFile(options.chrome_trace_path, write_trace));
  }
  if (summary.has_value()) {
    result.summary = summary->Finish(result.end_ns - origin, result.clock_note);
  }
  return absl::OkStatus();
}

}  // namespace warptrace
