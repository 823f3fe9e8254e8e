#include "profiler/dump.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "profiler/clock/clock.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/walk.h"

namespace warptrace {
namespace {

// The sink's error with its name in front, code unchanged.
absl::Status Named(const TraceSink& sink, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(sink.Name(), ": ", status.message()));
}

// Origin and end of the trace on the globaltimer axis, from the headers alone.
TraceBegin BeginFromHeaders(const DecodedTrace& decoded, const DumpOptions& options) {
  TraceBegin begin;
  begin.layout = decoded.layout;
  begin.units = decoded.records.size();
  begin.overhead_compensated = options.timeline.compensate_overhead;
  int64_t origin = std::numeric_limits<int64_t>::max();
  int64_t end = std::numeric_limits<int64_t>::min();
  for (const DecodedRecord& r : decoded.records) {
    if (r.header_problem != HeaderProblem::kNone) continue;
    const int64_t start = static_cast<int64_t>(r.start_globaltimer);
    origin = std::min(origin, start);
    const bool ends = r.complete() && r.end_globaltimer >= r.start_globaltimer &&
                      r.end_globaltimer < kMaxGlobaltimerNs;
    end = std::max(end, ends ? static_cast<int64_t>(r.end_globaltimer) : start);
  }
  if (origin == std::numeric_limits<int64_t>::max()) origin = end = 0;
  begin.origin_ns = origin;
  begin.end_ns = end;
  return begin;
}

// One dump: the state the unit loop shares.
class Driver {
 public:
  Driver(const DecodedTrace& decoded, const DumpOptions& options,
         absl::Span<TraceSink* const> sinks, DumpResult& result)
      : decoded_(decoded),
        layout_(*decoded.layout),
        options_(options),
        sinks_(sinks),
        result_(result),
        verifier_(decoded, options.verify, result.report) {}

  absl::Status Run() {
    const TraceBegin begin = BeginFromHeaders(decoded_, options_);
    result_.origin_ns = result_.end_ns = begin.origin_ns;
    absl::StatusOr<UnitTimelineBuilder> builder =
        UnitTimelineBuilder::Create(layout_, options_.timeline);
    feeding_ = builder.ok();
    if (feeding_) {
      builder_.emplace(*std::move(builder));
      for (TraceSink* sink : sinks_) {
        if (absl::Status s = sink->Begin(begin); !s.ok()) return Named(*sink, s);
      }
    }
    for (const DecodedRecord& r : decoded_.records) RETURN_IF_ERROR(AddUnit(r));
    verifier_.Finish();
    RETURN_IF_ERROR(result_.report.ToStatus());
    if (!builder.ok()) return builder.status();
    TraceEnd end;
    end.report = &result_.report;
    end.clock_note = tally_.Note(layout_.clock.nominal_sm_clock_khz,
                                 options_.timeline.min_calibration_ns,
                                 options_.timeline.compensate_overhead);
    end.origin_ns = result_.origin_ns;
    end.end_ns = result_.end_ns;
    end.slices = result_.slices;
    result_.clock_note = end.clock_note;
    for (TraceSink* sink : sinks_) {
      if (absl::Status s = sink->End(end); !s.ok()) return Named(*sink, s);
    }
    return absl::OkStatus();
  }

 private:
  absl::Status AddUnit(const DecodedRecord& r) {
    WalkUnit(r, layout_, walk_);
    const size_t first_finding = result_.report.findings.size();
    const UnitVerdict& verdict = verifier_.Add(r, walk_);
    // Strict mode: a trace with an error is not handed on past its first bad unit.
    if (!options_.verify.allow_truncated && result_.report.errors > 0) feeding_ = false;
    if (!feeding_) return absl::OkStatus();
    builder_->Build(r, verdict, walk_, unit_);
    if (unit_.has_record) {
      tally_.Add(unit_.clock_source, unit_.cycles_per_ns);
      result_.end_ns = std::max(result_.end_ns, unit_.end_ns);
    } else {
      unit_.start_ns = unit_.end_ns = result_.origin_ns;
    }
    result_.slices += unit_.slices.size();
    UnitView view;
    view.record = &r;
    view.verdict = &verdict;
    view.timeline = &unit_;
    view.findings = absl::MakeConstSpan(result_.report.findings).subspan(first_finding);
    for (TraceSink* sink : sinks_) {
      if (absl::Status s = sink->AddUnit(view); !s.ok()) return Named(*sink, s);
    }
    return absl::OkStatus();
  }

  const DecodedTrace& decoded_;
  const TraceLayout& layout_;
  const DumpOptions& options_;
  absl::Span<TraceSink* const> sinks_;
  DumpResult& result_;
  UnitVerifier verifier_;
  std::optional<UnitTimelineBuilder> builder_;
  bool feeding_ = false;
  UnitWalk walk_;
  UnitTimeline unit_;
  ClockTally tally_;
};

}  // namespace

absl::Status DumpTrace(const TraceLayout& layout, absl::Span<const uint32_t> words,
                       const DumpOptions& options, absl::Span<TraceSink* const> sinks,
                       DumpResult& result) {
  result = DumpResult();
  DecodedTrace decoded;
  RETURN_IF_ERROR(DecodeInto(layout, words, decoded));
  result.decoded = true;
  return Driver(decoded, options, sinks, result).Run();
}

}  // namespace warptrace
