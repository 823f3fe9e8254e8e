// Summary statistics of a Timeline: per region name, how often it ran and how long it took,
// as data and as an aligned text table.
//
//   ASSIGN_OR_RETURN(Summary summary, Summarize(timeline));
//   PrintSummary(summary, llvm::outs());
//
// prints
//
//   kernel gemm on NVIDIA H200: 256 units, 1.234 ms wall; SM clock calibrated from globaltimer (256 units, mean 1755.0 MHz)
//   region      count      total us     mean us     min us     p50 us     p95 us     max us   share
//   mainloop      256    250112.000     977.000    950.125    976.500   1001.000   1010.250   79.1%
//   ...
//
// Definitions (all durations are slice end_ns - begin_ns, in ns):
//   - Rows group slices by region *name*: two sites with one name share a row. Rows are
//     ordered by total time, largest first, then by name.
//   - p50 / p95 are nearest-rank percentiles, exact values from the data (no interpolation):
//     the smallest duration d such that at least p% of the durations are <= d, i.e. the
//     element at index ceil(p/100 * count) - 1 of the sorted durations (NearestRankIndex,
//     profiler/analysis/stats.h: the one definition the analysis and the diff use too).
//   - mean = total / count (a double, ns).
//   - share = total / unit time, where unit time is the sum over all units of
//     (end_ns - start_ns): the fraction of the recorded units' time spent in that region.
//     Nested regions are counted in full in their own row and in their parents', so shares
//     of different rows can add up to more than 100%.
//   - The header line says which SM clock rate turned cycles into ns: calibrated per unit
//     from the globaltimer, the nominal rate (with its value), or both with unit counts.
//   - A trace with hand-offs gets one more line after the table:
//       hand-offs: 512 barrier arrivals, 256 async copies (0 never completed), 512 arrival
//       -> release flows, 256 issue -> completion flows
//
// Memory: per region, one count per distinct duration while summarizing (exact percentiles;
// durations come from clock cycles and repeat, so a 1e8-event trace holds a few thousand
// counts, not 5e7 durations).
// Thread-safety: reentrant; the Timeline is only read.
#ifndef WARPTRACE_PROFILER_ANALYSIS_SUMMARY_H_
#define WARPTRACE_PROFILER_ANALYSIS_SUMMARY_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/dump/sink.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {

struct RegionStats {
  std::string name;  // the site name, UTF-8 as given
  uint64_t count = 0;
  int64_t total_ns = 0;
  double mean_ns = 0;
  int64_t min_ns = 0;
  int64_t p50_ns = 0;
  int64_t p95_ns = 0;
  int64_t max_ns = 0;
  double share = 0;  // of unit time, 0..1 for a region that does not nest in itself
  friend bool operator==(const RegionStats&, const RegionStats&) = default;
};

struct Summary {
  std::string kernel_name;
  std::string device_name;
  bool host_backend = false;      // ClockInfo::host_backend: times are the CPU's
  uint64_t units = 0;             // units on the timeline, any verdict
  uint64_t calibrated_units = 0;  // units whose rate came from their globaltimer pair
  uint64_t nominal_units = 0;     // units that fell back to the nominal rate
  // nominal_units by why (index: ClockSource; kCalibrated and kNoRecord stay 0).
  std::array<uint64_t, kNumClockSources> nominal_by_source{};
  double mean_calibrated_mhz = 0; // mean calibrated SM clock (0 when none)
  uint64_t nominal_sm_clock_khz = 0;
  std::string clock_note;         // Timeline::clock_note
  int64_t wall_ns = 0;            // Timeline end_ns - origin_ns
  int64_t unit_time_ns = 0;       // sum of unit (end_ns - start_ns)
  std::vector<RegionStats> regions;
  // Hand-offs (trace version 2; timeline_types.h), all 0 for traces without them:
  uint64_t arrivals = 0;               // instants: recorded barrier arrivals
  uint64_t async_copies = 0;           // async spans
  uint64_t async_never_completed = 0;  // ... of which never observed complete
  uint64_t arrival_flows = 0;          // arrival -> released wait links
  uint64_t copy_flows = 0;             // issue -> completion links
  uint64_t landing_flows = 0;          // multicast issue -> released wait in a peer CTA
  friend bool operator==(const Summary&, const Summary&) = default;
};

// Computes the summary of a whole Timeline. Returns InvalidArgument, naming the unit and
// slice, for a slice whose site is outside the layout's site table, which ends before it
// begins, or which lasts 2^63 ns or more.
absl::StatusOr<Summary> Summarize(const Timeline& timeline);

// Builds a Summary from a trace's Timeline chunks (units of consecutive blocks, as a
// chunked dump produces them), holding only a count per distinct duration of each region:
//
//   SummaryBuilder builder(layout);
//   for (...) RETURN_IF_ERROR(builder.Add(chunk));
//   Summary summary = builder.Finish(end_ns - origin_ns, clock_note);
//
// Add returns Summarize's InvalidArgument cases (and then adds nothing of the chunk).
// Finish may be called once; the builder is spent afterwards.
class SummaryBuilder {
 public:
  explicit SummaryBuilder(const TraceLayout& layout);
  absl::Status Add(const Timeline& chunk);
  // One unit, as Add of a chunk holding only it.
  absl::Status AddUnit(const UnitTimeline& unit);
  // Adds what `other` (a builder of the same layout) counted: the same as if its units had
  // been added here, whatever the order (every count is an integer, the clock rates summed
  // in whole Hz). The merge of per-thread builders (SummarySink's parts).
  void Merge(const SummaryBuilder& other);
  Summary Finish(int64_t wall_ns, std::string clock_note);

 private:
  absl::Status Check(const UnitTimeline& unit) const;
  void Count(const UnitTimeline& unit);

  const TraceLayout& layout_;
  Summary summary_;
  uint64_t hz_sum_ = 0;  // calibrated units' SM clocks, rounded to Hz: exact in any order
  std::map<std::string, uint32_t> row_of_name_;
  std::vector<uint32_t> row_of_site_;
  // Per row, how many slices lasted each duration (ns): exact percentiles in memory that
  // grows with the distinct durations, not with the slices (a clock-derived duration
  // repeats: a 1e8-event trace holds thousands of them, not 5e7 values).
  std::vector<absl::flat_hash_map<int64_t, uint64_t>> durations_;
};

// The summary as a dump sink (sink.h): per unit it counts each slice's duration (exact
// percentiles, memory by distinct duration) and a few counters; at End it finishes the
// Summary with the trace's wall time and the driver's clock note. AddUnit returns
// SummaryBuilder::AddUnit's errors. It has parts (sink.h, NewPart): with the dump's prepare
// workers each counts the units it prepared into a builder of its own, merged at the end
// (SummaryBuilder::Merge), and the Summary is the same.
//
//   SummarySink summary;
//   TraceSink* sinks[] = {&summary};
//   RETURN_IF_ERROR(DumpTrace(layout, words, options, sinks, result));
//   PrintSummary(*summary.summary(), llvm::outs());
class SummarySink : public TraceSink {
 public:
  absl::string_view Name() const override { return "summary"; }
  absl::Status Begin(const TraceBegin& begin) override;
  absl::Status AddUnit(const UnitView& unit) override;
  absl::Status End(const TraceEnd& end) override;
  std::unique_ptr<SinkPart> NewPart() override;
  absl::Status MergeParts(std::vector<std::unique_ptr<SinkPart>> parts) override;
  // The summary once End ran; nullopt before.
  const std::optional<Summary>& summary() const { return summary_; }

 private:
  class Part;
  const TraceLayout* layout_ = nullptr;  // from Begin
  std::vector<const Part*> parts_made_;  // by NewPart since Begin, not yet merged
  std::optional<SummaryBuilder> builder_;
  std::optional<Summary> summary_;
};

// The header line alone, e.g. "kernel gemm on NVIDIA H200: 256 units, 1.234 ms wall; SM
// clock calibrated from globaltimer (256 units, mean 1755.0 MHz)".
std::string SummaryHeader(const Summary& summary);

// Header line, then the table with right-aligned numeric columns (times in microseconds
// with three decimals, share in percent) and a left-aligned name column.
void PrintSummary(const Summary& summary, llvm::raw_ostream& os);
std::string FormatSummary(const Summary& summary);

// The summary as one JSON object (the C API's result "summary", python's DumpResult.summary):
// {"kernel", "device", "units", "calibrated_units", "nominal_units", "mean_calibrated_mhz",
//  "nominal_sm_clock_khz", "clock_note", "wall_ns", "unit_time_ns", "header",
//  "regions": [{"name", "count", "total_ns", "mean_ns", "min_ns", "p50_ns", "p95_ns",
//               "max_ns", "share"}, ...]}. Names pass through JSON's UTF-8 repair.
void WriteSummaryJson(const Summary& summary, llvm::json::OStream& j);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_ANALYSIS_SUMMARY_H_
