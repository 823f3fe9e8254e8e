#include "profiler/analysis/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/stats.h"

namespace warptrace {
namespace {

std::string Micros(int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  const uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return absl::StrFormat("%s%d.%03d", sign, mag / 1000, mag % 1000);
}

std::string MicrosDouble(double ns) { return absl::StrFormat("%.3f", ns / 1000.0); }

// Display width of UTF-8 text: one column per code point.
size_t Width(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string Pad(const std::string& text, size_t width, bool left_align) {
  const size_t w = Width(text);
  if (w >= width) return text;
  const std::string fill(width - w, ' ');
  return left_align ? text + fill : fill + text;
}

// Why the nominal-clock units are nominal: "too short to calibrate" when that is the only
// reason, else "(1 too short to calibrate, 2 with no trustworthy end stamp)".
std::string NominalReasons(const Summary& s) {
  std::vector<std::pair<uint64_t, std::string>> why;
  for (int i = 0; i < kNumClockSources; ++i) {
    const ClockSource source = static_cast<ClockSource>(i);
    if (s.nominal_by_source[i] == 0) continue;
    why.emplace_back(s.nominal_by_source[i],
                     source == ClockSource::kTooShort
                         ? std::string(ClockSourceReason(source))
                         : absl::StrCat("with ", ClockSourceReason(source)));
  }
  if (why.empty()) return "(reason not recorded)";
  if (why.size() == 1 && why[0].first == s.nominal_units) return why[0].second;
  std::string text = "(";
  for (size_t i = 0; i < why.size(); ++i) {
    absl::StrAppend(&text, i ? ", " : "", why[i].first, " ", why[i].second);
  }
  return text + ")";
}

// The nearest-rank percentile (stats.h's NearestRankIndex) of `count` durations held as
// (duration, how many) pairs sorted by duration: what PercentileInPlace gives of them listed.
int64_t NearestRank(absl::Span<const std::pair<int64_t, uint64_t>> sorted, uint64_t count,
                    int percent) {
  const uint64_t index = NearestRankIndex(count, percent);
  uint64_t below = 0;
  for (const auto& [ns, n] : sorted) {
    below += n;
    if (index < below) return ns;
  }
  return sorted.back().first;
}

}  // namespace

SummaryBuilder::SummaryBuilder(const TraceLayout& layout) : layout_(layout) {
  summary_.kernel_name = layout.kernel_name;
  summary_.device_name = layout.device_name;
  summary_.host_backend = layout.clock.host_backend;
  summary_.nominal_sm_clock_khz = layout.clock.nominal_sm_clock_khz;
  row_of_site_.resize(layout.sites.size());
  for (size_t i = 0; i < layout.sites.size(); ++i) {
    auto [it, inserted] = row_of_name_.try_emplace(layout.sites[i].name,
                                                   static_cast<uint32_t>(row_of_name_.size()));
    row_of_site_[i] = it->second;
  }
  durations_.resize(row_of_name_.size());
}

absl::Status SummaryBuilder::Add(const Timeline& chunk) {
  // Check every unit before counting any, so a failed Add adds nothing of the chunk.
  for (const UnitTimeline& unit : chunk.units) RETURN_IF_ERROR(Check(unit));
  for (const UnitTimeline& unit : chunk.units) Count(unit);
  return absl::OkStatus();
}

absl::Status SummaryBuilder::AddUnit(const UnitTimeline& unit) {
  RETURN_IF_ERROR(Check(unit));
  Count(unit);
  return absl::OkStatus();
}

absl::Status SummaryBuilder::Check(const UnitTimeline& unit) const {
  for (size_t i = 0; i < unit.slices.size(); ++i) {
    const Slice& s = unit.slices[i];
    int64_t duration = 0;
    const bool overflows = __builtin_sub_overflow(s.end_ns, s.begin_ns, &duration);
    if (s.site >= layout_.sites.size() || s.end_ns < s.begin_ns || overflows) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s, slice %d (site %d, %d..%d ns): %s",
          UnitName(unit.block_index, layout_.unit.kind, unit.unit_index), i, s.site, s.begin_ns,
          s.end_ns,
          s.site >= layout_.sites.size()
              ? absl::StrCat("site id is outside the site table (", layout_.sites.size(),
                             " sites)")
              : std::string(overflows ? "lasts 2^63 ns or more" : "ends before it begins")));
    }
  }
  return absl::OkStatus();
}

void SummaryBuilder::Count(const UnitTimeline& unit) {
  ++summary_.units;
  if (unit.nominal_clock) {
    ++summary_.nominal_units;
    ++summary_.nominal_by_source[static_cast<int>(unit.clock_source)];
  } else if (unit.cycles_per_ns > 0) {
    ++summary_.calibrated_units;
    hz_sum_ += static_cast<uint64_t>(std::llround(unit.cycles_per_ns * 1e9));
  }
  int64_t unit_ns = 0;
  if (unit.verdict != Verdict::kMissing && unit.end_ns > unit.start_ns &&
      !__builtin_sub_overflow(unit.end_ns, unit.start_ns, &unit_ns)) {
    summary_.unit_time_ns += unit_ns;
  }
  for (const Slice& s : unit.slices) ++durations_[row_of_site_[s.site]][s.end_ns - s.begin_ns];
  summary_.arrivals += unit.instants.size();
  summary_.async_copies += unit.async_spans.size();
  for (const AsyncSpan& a : unit.async_spans) summary_.async_never_completed += !a.completed;
  for (const Flow& f : unit.flows) {
    if (f.from.record_index != unit.record_index) continue;  // counted once, at its source
    switch (f.kind) {
      case FlowKind::kArrivalToRelease:
        ++summary_.arrival_flows;
        break;
      case FlowKind::kIssueToCompletion:
        ++summary_.copy_flows;
        break;
      case FlowKind::kMulticastLanding:
        ++summary_.landing_flows;
        break;
    }
  }
}

void SummaryBuilder::Merge(const SummaryBuilder& other) {
  Summary& s = summary_;
  const Summary& o = other.summary_;
  s.units += o.units;
  s.calibrated_units += o.calibrated_units;
  s.nominal_units += o.nominal_units;
  for (size_t i = 0; i < s.nominal_by_source.size(); ++i) {
    s.nominal_by_source[i] += o.nominal_by_source[i];
  }
  s.unit_time_ns += o.unit_time_ns;
  s.arrivals += o.arrivals;
  s.async_copies += o.async_copies;
  s.async_never_completed += o.async_never_completed;
  s.arrival_flows += o.arrival_flows;
  s.copy_flows += o.copy_flows;
  s.landing_flows += o.landing_flows;
  hz_sum_ += other.hz_sum_;
  for (size_t row = 0; row < durations_.size() && row < other.durations_.size(); ++row) {
    for (const auto& [ns, n] : other.durations_[row]) durations_[row][ns] += n;
  }
}

Summary SummaryBuilder::Finish(int64_t wall_ns, std::string clock_note) {
  Summary summary = std::move(summary_);
  summary.wall_ns = wall_ns;
  summary.clock_note = std::move(clock_note);
  if (summary.calibrated_units > 0) {
    summary.mean_calibrated_mhz = static_cast<double>(hz_sum_) / 1e6 /
                                  static_cast<double>(summary.calibrated_units);
  }
  std::vector<std::pair<int64_t, uint64_t>> sorted;  // (duration, slices), by duration
  for (const auto& [name, row] : row_of_name_) {
    absl::flat_hash_map<int64_t, uint64_t>& d = durations_[row];
    if (d.empty()) continue;
    sorted.assign(d.begin(), d.end());
    std::sort(sorted.begin(), sorted.end());
    RegionStats stats;
    stats.name = name;
    for (const auto& [ns, n] : sorted) {
      stats.count += n;
      stats.total_ns += ns * static_cast<int64_t>(n);
    }
    stats.min_ns = sorted.front().first;
    stats.max_ns = sorted.back().first;
    stats.mean_ns = static_cast<double>(stats.total_ns) / static_cast<double>(stats.count);
    stats.p50_ns = NearestRank(sorted, stats.count, 50);
    stats.p95_ns = NearestRank(sorted, stats.count, 95);
    stats.share = summary.unit_time_ns > 0 ? static_cast<double>(stats.total_ns) /
                                                 static_cast<double>(summary.unit_time_ns)
                                           : 0.0;
    summary.regions.push_back(std::move(stats));
    absl::flat_hash_map<int64_t, uint64_t>().swap(d);
  }
  std::sort(summary.regions.begin(), summary.regions.end(),
            [](const RegionStats& a, const RegionStats& b) {
              return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
            });
  return summary;
}

absl::StatusOr<Summary> Summarize(const Timeline& timeline) {
  SummaryBuilder builder(timeline.layout);
  RETURN_IF_ERROR(builder.Add(timeline));
  return builder.Finish(timeline.end_ns - timeline.origin_ns, timeline.clock_note);
}

// A worker's share of the units (sink.h, parts): a builder of its own.
class SummarySink::Part : public SinkPart {
 public:
  explicit Part(const TraceLayout& layout) : builder(layout) {}
  absl::Status AddUnit(const UnitView& unit) override { return builder.AddUnit(*unit.timeline); }
  SummaryBuilder builder;
};

std::unique_ptr<SinkPart> SummarySink::NewPart() {
  if (layout_ == nullptr) return nullptr;  // before Begin: no parts
  auto part = std::make_unique<Part>(*layout_);
  parts_made_.push_back(part.get());
  return part;
}

absl::Status SummarySink::MergeParts(std::vector<std::unique_ptr<SinkPart>> parts) {
  if (!builder_.has_value()) return absl::FailedPreconditionError("MergeParts before Begin");
  for (const std::unique_ptr<SinkPart>& part : parts) {
    if (std::find(parts_made_.begin(), parts_made_.end(), part.get()) == parts_made_.end()) {
      return absl::InvalidArgumentError("MergeParts: a part this summary did not make");
    }
  }
  for (const std::unique_ptr<SinkPart>& part : parts) {
    builder_->Merge(static_cast<const Part&>(*part).builder);
  }
  parts_made_.clear();
  return absl::OkStatus();
}

absl::Status SummarySink::Begin(const TraceBegin& begin) {
  layout_ = begin.layout;
  parts_made_.clear();
  builder_.emplace(*begin.layout);
  summary_.reset();
  return absl::OkStatus();
}

absl::Status SummarySink::AddUnit(const UnitView& unit) {
  if (!builder_.has_value()) return absl::FailedPreconditionError("AddUnit before Begin");
  return builder_->AddUnit(*unit.timeline);
}

absl::Status SummarySink::End(const TraceEnd& end) {
  if (!builder_.has_value()) return absl::FailedPreconditionError("End before Begin");
  summary_ = builder_->Finish(end.end_ns - end.origin_ns, end.clock_note);
  builder_.reset();
  return absl::OkStatus();
}

std::string SummaryHeader(const Summary& s) {
  std::string clock;
  const std::string nominal =
      absl::StrFormat("nominal %.1f MHz", static_cast<double>(s.nominal_sm_clock_khz) / 1000.0);
  const std::string calibrated = absl::StrFormat(
      "calibrated from globaltimer (%d units, mean %.1f MHz)", s.calibrated_units,
      s.mean_calibrated_mhz);
  const std::string why = NominalReasons(s);
  if (s.calibrated_units > 0 && s.nominal_units > 0) {
    clock = absl::StrFormat("%s; %s for %d units %s", calibrated, nominal, s.nominal_units, why);
  } else if (s.nominal_units > 0) {
    clock = absl::StrFormat("%s (all %d units, %s)", nominal, s.nominal_units, why);
  } else if (s.calibrated_units > 0) {
    clock = calibrated;
  } else {
    clock = "no unit carried a clock rate";
  }
  std::string header = absl::StrFormat(
      "kernel %s on %s: %d units, %s ms wall; SM clock %s",
      ValidUtf8(s.kernel_name.empty() ? "(unnamed)" : s.kernel_name),
      ValidUtf8(s.device_name.empty() ? "(unknown device)" : s.device_name), s.units,
      Micros(s.wall_ns / 1000), clock);
  if (!s.clock_note.empty()) absl::StrAppend(&header, " [", ValidUtf8(s.clock_note), "]");
  if (s.host_backend) {
    absl::StrAppend(&header,
                    "; times come from the host backend (the CPU's steady clock), not a GPU: "
                    "they show correctness, not GPU performance");
  }
  return header;
}

void PrintSummary(const Summary& summary, llvm::raw_ostream& os) {
  static constexpr int kColumns = 9;
  const char* const titles[kColumns] = {"region", "count",  "total us", "mean us", "min us",
                                        "p50 us", "p95 us", "max us",   "share"};
  std::vector<std::vector<std::string>> rows;
  rows.reserve(summary.regions.size() + 1);
  rows.emplace_back(titles, titles + kColumns);
  for (const RegionStats& r : summary.regions) {
    rows.push_back({ValidUtf8(r.name), absl::StrCat(r.count), Micros(r.total_ns),
                    MicrosDouble(r.mean_ns), Micros(r.min_ns), Micros(r.p50_ns),
                    Micros(r.p95_ns), Micros(r.max_ns), absl::StrFormat("%.1f%%", r.share * 100)});
  }
  size_t widths[kColumns] = {};
  for (const auto& row : rows) {
    for (int c = 0; c < kColumns; ++c) widths[c] = std::max(widths[c], Width(row[c]));
  }
  os << SummaryHeader(summary) << "\n";
  for (const auto& row : rows) {
    std::string line;
    for (int c = 0; c < kColumns; ++c) {
      if (c > 0) line += "  ";
      line += Pad(row[c], widths[c], /*left_align=*/c == 0);
    }
    os << line << "\n";
  }
  if (summary.regions.empty()) os << "(no regions recorded)\n";
  if (summary.arrivals + summary.async_copies + summary.arrival_flows + summary.copy_flows > 0) {
    os << absl::StrFormat(
        "hand-offs: %d barrier arrivals, %d async copies (%d never completed), %d arrival -> "
        "release flows, %d issue -> completion flows\n",
        summary.arrivals, summary.async_copies, summary.async_never_completed,
        summary.arrival_flows, summary.copy_flows);
    if (summary.landing_flows > 0) {  // clusters: a multicast copy's landing in each peer
      os << absl::StrFormat("  multicast landings: %d flows from a multicast copy's issue to "
                            "the waits it released in the other CTAs of its mask\n",
                            summary.landing_flows);
    }
  }
}

std::string FormatSummary(const Summary& summary) {
  std::string out;
  llvm::raw_string_ostream os(out);
  PrintSummary(summary, os);
  os.flush();
  return out;
}

void WriteSummaryJson(const Summary& s, llvm::json::OStream& j) {
  j.object([&] {
    j.attribute("kernel", ValidUtf8(s.kernel_name));
    j.attribute("device", ValidUtf8(s.device_name));
    j.attribute("units", static_cast<int64_t>(s.units));
    j.attribute("calibrated_units", static_cast<int64_t>(s.calibrated_units));
    j.attribute("nominal_units", static_cast<int64_t>(s.nominal_units));
    j.attribute("mean_calibrated_mhz", s.mean_calibrated_mhz);
    j.attribute("nominal_sm_clock_khz", static_cast<int64_t>(s.nominal_sm_clock_khz));
    j.attribute("clock_note", ValidUtf8(s.clock_note));
    j.attribute("wall_ns", s.wall_ns);
    j.attribute("unit_time_ns", s.unit_time_ns);
    j.attribute("header", ValidUtf8(SummaryHeader(s)));
    j.attributeArray("regions", [&] {
      for (const RegionStats& r : s.regions) {
        j.object([&] {
          j.attribute("name", ValidUtf8(r.name));
          j.attribute("count", static_cast<int64_t>(r.count));
          j.attribute("total_ns", r.total_ns);
          j.attribute("mean_ns", r.mean_ns);
          j.attribute("min_ns", r.min_ns);
          j.attribute("p50_ns", r.p50_ns);
          j.attribute("p95_ns", r.p95_ns);
          j.attribute("max_ns", r.max_ns);
          j.attribute("share", r.share);
        });
      }
    });
  });
}

}  // namespace warptrace
