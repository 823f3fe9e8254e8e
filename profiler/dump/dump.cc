#include "profiler/dump/dump.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/ordered_prefetch.h"
#include "base/status_macros.h"
#include "profiler/trace/clock.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/links.h"
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
  int64_t end = std::numeric_limits<int64_t>::min();
  bool any = false;
  for (const DecodedRecord& r : decoded.records) {
    if (r.header_problem != HeaderProblem::kNone) continue;
    any = true;
    const int64_t start = static_cast<int64_t>(r.start_globaltimer);
    const bool ends = r.complete() && r.end_globaltimer >= r.start_globaltimer &&
                      r.end_globaltimer < kMaxGlobaltimerNs;
    end = std::max(end, ends ? static_cast<int64_t>(r.end_globaltimer) : start);
  }
  begin.origin_ns = TraceOrigin(decoded);
  begin.end_ns = any ? end : 0;
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
        verifier_(decoded, options.verify, result.report),
        linker_(decoded) {
    if (linker_.active()) pending_.resize(RecordsPerLinkScope(layout_));
  }

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
    RETURN_IF_ERROR(PollCancelled(kCancelPollEvents));
    if (PrepareWorkers() > 0 && decoded_.records.size() > 1) {
      RETURN_IF_ERROR(AddUnitsInParallel());
    } else {
      for (const DecodedRecord& r : decoded_.records) {
        RETURN_IF_ERROR(PollCancelled(r.events.size() + 1));
        RETURN_IF_ERROR(AddUnit(r));
      }
    }
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
  // DumpOptions::cancelled, asked once `events` more events (since the last time) add up to
  // kCancelPollEvents.
  absl::Status PollCancelled(uint64_t events) {
    if (!options_.cancelled) return absl::OkStatus();
    unpolled_events_ += events;
    if (unpolled_events_ < kCancelPollEvents) return absl::OkStatus();
    unpolled_events_ = 0;
    if (!options_.cancelled()) return absl::OkStatus();
    return absl::CancelledError("the dump was cancelled");
  }

  // One unit on the calling thread: walk, verify, then the rest (AfterVerify).
  absl::Status AddUnit(const DecodedRecord& r) {
    WalkUnit(r, layout_, walk_);
    const size_t first_finding = result_.report.findings.size();
    const UnitVerdict& verdict = verifier_.Add(r, walk_);
    return AfterVerify(r, walk_, verdict, first_finding,
                       [&](UnitTimeline& out, std::vector<int64_t>* event_ns) -> UnitTimeline& {
                         builder_->Build(r, verdict, walk_, out);
                         if (event_ns != nullptr) *event_ns = builder_->event_ns();
                         return out;
                       });
  }

  // A unit prepared on a worker (AddUnitsInParallel): walked, verified into its own report,
  // its timeline built.
  struct Prepared {
    VerifyReport report;
    uint64_t suppressed = 0;
    UnitWalk walk;  // kept for the hand-off linker only; else the worker's scratch
    UnitTimeline timeline;
    std::vector<int64_t> event_ns;  // hand-offs only
    // The first error of a sink's part (sink.h) at this unit, and the sink's index.
    absl::Status part_error;
    size_t part_sink = 0;
  };
  struct Batch {
    size_t first = 0;  // records [first, first + count)
    size_t count = 0;
    std::vector<Prepared> units;  // grows to the largest batch, reused
  };

  // Records [cuts[i], cuts[i+1]) are batch i: whole link scopes (format/links.h: a part sees
  // all of a block's units, sink.h; the linker needs them together), at least kBatchEvents
  // events each.
  static constexpr uint64_t kBatchEvents = 1 << 14;
  std::vector<size_t> BatchCuts() const {
    const size_t per_block = RecordsPerLinkScope(layout_);
    std::vector<size_t> cuts = {0};
    uint64_t events = 0;
    for (size_t i = 0; i < decoded_.records.size(); ++i) {
      events += decoded_.records[i].events.size() + 1;
      if (events >= kBatchEvents && (i + 1) % per_block == 0) {
        cuts.push_back(i + 1);
        events = 0;
      }
    }
    if (cuts.back() != decoded_.records.size()) cuts.push_back(decoded_.records.size());
    return cuts;
  }

  // Threads that prepare units: all but the calling thread and those the sinks keep busy
  // (DumpOptions::threads, sink_threads).
  int PrepareWorkers() const {
    return std::max(0, options_.threads - 1 - std::max(0, options_.sink_threads));
  }

  // The units prepared (walk, verify, timeline) by PrepareWorkers() workers, batches of
  // consecutive records a few ahead, and handed on here in buffer order: the report and
  // every sink call are what AddUnit over each record gives (UnitVerifier::AppendUnit).
  absl::Status AddUnitsInParallel() {
    const std::vector<size_t> cuts = BatchCuts();
    const int workers = PrepareWorkers();
    const bool linked = linker_.active();
    const bool build = builder_.has_value();
    std::vector<std::optional<UnitTimelineBuilder>> builders(static_cast<size_t>(workers));
    std::vector<UnitWalk> scratch(static_cast<size_t>(workers));
    for (auto& b : builders) {
      if (build) b.emplace(*builder_);
    }
    std::vector<size_t> split_sinks;
    std::vector<std::vector<std::unique_ptr<SinkPart>>> parts =
        MakeParts(workers, build && feeding_ && !linked && workers >= kMinPartWorkers,
                  split_sinks);
    std::vector<char> part_failed(static_cast<size_t>(workers), 0);  // by worker: no more feeding
    OrderedPrefetch<Batch> prefetch(
        cuts.size() - 1, workers, 2 * static_cast<size_t>(workers) + 2,
        [&](int worker, size_t i, Batch& batch) {
          batch.first = cuts[i];
          batch.count = cuts[i + 1] - cuts[i];
          if (batch.units.size() < batch.count) batch.units.resize(batch.count);
          for (size_t k = 0; k < batch.count; ++k) {
            const DecodedRecord& r = decoded_.records[batch.first + k];
            Prepared& p = batch.units[k];
            UnitWalk& walk = linked ? p.walk : scratch[static_cast<size_t>(worker)];
            WalkUnit(r, layout_, walk);
            UnitVerifier unit_verifier = verifier_.ForUnit(p.report);
            const UnitVerdict& verdict = unit_verifier.Add(r, walk);
            p.suppressed = unit_verifier.suppressed();
            if (!build) continue;
            UnitTimelineBuilder& builder = *builders[static_cast<size_t>(worker)];
            builder.Build(r, verdict, walk, p.timeline);
            if (linked) p.event_ns = builder.event_ns();
            p.part_error = absl::OkStatus();
            if (split_sinks.empty() || part_failed[static_cast<size_t>(worker)]) continue;
            SetNoRecordTimes(p.timeline);
            UnitView view;
            view.record = &r;
            view.verdict = &verdict;
            view.timeline = &p.timeline;
            const auto& mine = parts[static_cast<size_t>(worker)];
            for (size_t j = 0; j < split_sinks.size(); ++j) {
              absl::Status s = mine[j]->AddUnit(view);
              if (s.ok()) continue;
              // The dump stops when the calling thread reaches this unit.
              p.part_error = std::move(s);
              p.part_sink = split_sinks[j];
              part_failed[static_cast<size_t>(worker)] = 1;
              break;
            }
          }
        });
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      Batch& batch = prefetch.Next();
      for (size_t k = 0; k < batch.count; ++k) {
        const DecodedRecord& r = decoded_.records[batch.first + k];
        RETURN_IF_ERROR(PollCancelled(r.events.size() + 1));
        Prepared& p = batch.units[k];
        const size_t first_finding = result_.report.findings.size();
        const UnitVerdict& verdict = verifier_.AppendUnit(p.report, p.suppressed);
        part_error_ = p.part_error.ok() ? nullptr : &p;
        RETURN_IF_ERROR(AfterVerify(r, p.walk, verdict, first_finding,
                                    [&](UnitTimeline& out, std::vector<int64_t>* event_ns)
                                        -> UnitTimeline& {
                                      // Unlinked units are read where the worker wrote
                                      // them: storage swapped back and forth between the
                                      // threads made the worker's stores miss (measured:
                                      // PlaceSlices 4x slower than on one thread).
                                      if (event_ns == nullptr) return p.timeline;
                                      std::swap(out, p.timeline);
                                      std::swap(*event_ns, p.event_ns);
                                      return out;
                                    }));
      }
    }
    part_error_ = nullptr;
    if (!feeding_) return absl::OkStatus();  // End will not come: the parts are dropped
    return MergeParts(parts, split_sinks);
  }

  // Parts only from two workers on: with one, the calling thread feeding the sinks is the
  // second stage of a two-stage pipeline, and parts would leave it idle while the worker
  // did all (measured: the analysis-only CLI dump of the 1e6-event buffers 20 -> 21 ms and
  // 24 -> 33 ms with parts on one worker).
  static constexpr int kMinPartWorkers = 2;

  // Sinks with parts (sink.h): per worker, a part of each sink that has them (all of
  // `split_sinks`, the sinks' indices; split_ marks them), when `use`; else none. Not with
  // hand-offs, whose flows the calling thread adds per block.
  std::vector<std::vector<std::unique_ptr<SinkPart>>> MakeParts(
      int workers, bool use, std::vector<size_t>& split_sinks) {
    std::vector<std::vector<std::unique_ptr<SinkPart>>> parts(static_cast<size_t>(workers));
    split_.assign(sinks_.size(), false);
    split_sinks.clear();
    for (size_t i = 0; use && i < sinks_.size(); ++i) {
      std::vector<std::unique_ptr<SinkPart>> made;
      for (int w = 0; w < workers; ++w) {
        std::unique_ptr<SinkPart> part = sinks_[i]->NewPart();
        if (part == nullptr) break;
        made.push_back(std::move(part));
      }
      if (made.size() != static_cast<size_t>(workers)) continue;
      split_[i] = true;
      split_sinks.push_back(i);
      for (int w = 0; w < workers; ++w) {
        parts[static_cast<size_t>(w)].push_back(std::move(made[static_cast<size_t>(w)]));
      }
    }
    return parts;
  }

  // Every worker's part of each split sink, back to the sink.
  absl::Status MergeParts(std::vector<std::vector<std::unique_ptr<SinkPart>>>& parts,
                          const std::vector<size_t>& split_sinks) {
    for (size_t j = 0; j < split_sinks.size(); ++j) {
      std::vector<std::unique_ptr<SinkPart>> mine;
      for (auto& worker_parts : parts) mine.push_back(std::move(worker_parts[j]));
      TraceSink& sink = *sinks_[split_sinks[j]];
      if (absl::Status s = sink.MergeParts(std::move(mine)); !s.ok()) return Named(sink, s);
    }
    return absl::OkStatus();
  }

  // A unit without a record spans nothing, at the trace's origin.
  void SetNoRecordTimes(UnitTimeline& unit) const {
    if (!unit.has_record) unit.start_ns = unit.end_ns = result_.origin_ns;
  }

  // A verified unit (the last of result_.report.units, its findings from `first_finding`):
  // to the sinks, or, with hand-offs, into its block, which goes to the sinks after its last
  // unit. `build(out, event_ns)` fills the unit's timeline, `out` or one of its own that it
  // returns (and, when not null, its event times, into `out`); it is called only while
  // feeding.
  template <typename Build>
  absl::Status AfterVerify(const DecodedRecord& r, const UnitWalk& walk,
                           const UnitVerdict& verdict, size_t first_finding, Build build) {
    if (!linker_.active()) {
      // No hand-offs: each unit goes to the sinks as soon as it is verified.
      if (!options_.verify.allow_truncated && result_.report.errors > 0) feeding_ = false;
      if (!feeding_) return absl::OkStatus();
      return Feed(r, result_.report.units.size() - 1, build(unit_, nullptr), first_finding,
                  result_.report.findings.size(), 0);
    }
    // Hand-offs link the units of a block: a block's units wait for its last one.
    Pending& p = pending_[r.record_index % pending_.size()];
    p.record = &r;
    p.verdict = result_.report.units.size() - 1;
    p.first_finding = first_finding;
    p.end_finding = result_.report.findings.size();
    if (feeding_) build(p.timeline, &p.event_ns);
    if (!linker_.Add(r, walk, verdict.kept_events)) return absl::OkStatus();
    const size_t block_first_finding = result_.report.findings.size();
    verifier_.AddScope(linker_);
    // Strict mode: a trace with an error is not handed on past the block of its first one.
    if (!options_.verify.allow_truncated && result_.report.errors > 0) feeding_ = false;
    if (!feeding_) return absl::OkStatus();
    scope_units_.clear();
    scope_ns_.clear();
    for (Pending& q : pending_) {
      scope_units_.push_back(std::move(q.timeline));
      scope_ns_.push_back(std::move(q.event_ns));
    }
    AddScopeLinks(layout_, linker_.links(), linker_.first_record(),
                  absl::MakeSpan(scope_units_), scope_ns_, next_flow_id_);
    for (size_t i = 0; i < pending_.size(); ++i) {
      Pending& q = pending_[i];
      const bool last = i + 1 == pending_.size();
      RETURN_IF_ERROR(Feed(*q.record, q.verdict, scope_units_[i], q.first_finding,
                           q.end_finding,
                           last ? result_.report.findings.size() - block_first_finding : 0));
      q.timeline = std::move(scope_units_[i]);  // keep the storage for the next block
      q.event_ns = std::move(scope_ns_[i]);
    }
    return absl::OkStatus();
  }

  // Hands one unit to every sink. `block_findings`: how many findings after the unit's own
  // (at the report's end) are its block's hand-off findings (only for a block's last unit).
  absl::Status Feed(const DecodedRecord& r, size_t verdict, UnitTimeline& unit,
                    size_t first_finding, size_t end_finding, size_t block_findings) {
    if (unit.has_record) {
      tally_.Add(unit.clock_source, unit.cycles_per_ns);
      result_.end_ns = std::max(result_.end_ns, unit.end_ns);
    }
    SetNoRecordTimes(unit);
    result_.slices += unit.slices.size();
    const auto findings = absl::MakeConstSpan(result_.report.findings);
    UnitView view;
    view.record = &r;
    view.verdict = &result_.report.units[verdict];
    view.timeline = &unit;
    view.findings = findings.subspan(first_finding, end_finding - first_finding);
    view.block_findings = findings.subspan(findings.size() - block_findings);
    for (size_t i = 0; i < sinks_.size(); ++i) {
      if (part_error_ != nullptr && part_error_->part_sink == i) {
        // A part failed at this unit: the sinks before it had the unit, as on one thread.
        return Named(*sinks_[i], part_error_->part_error);
      }
      if (!split_.empty() && split_[i]) continue;  // its parts had this unit
      if (absl::Status s = sinks_[i]->AddUnit(view); !s.ok()) return Named(*sinks_[i], s);
    }
    return absl::OkStatus();
  }

  // One unit of the block being gathered.
  struct Pending {
    const DecodedRecord* record = nullptr;
    size_t verdict = 0;        // index into the report's units
    size_t first_finding = 0;  // its own findings: [first_finding, end_finding)
    size_t end_finding = 0;
    UnitTimeline timeline;
    std::vector<int64_t> event_ns;
  };

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
  ScopeLinker linker_;
  std::vector<Pending> pending_;             // one per record of a link scope (hand-offs only)
  std::vector<UnitTimeline> scope_units_;    // scratch for AddScopeLinks
  std::vector<std::vector<int64_t>> scope_ns_;
  uint64_t next_flow_id_ = 0;
  std::vector<bool> split_;                  // by sink: fed through parts (AddUnitsInParallel)
  const Prepared* part_error_ = nullptr;     // the unit being fed, when a part failed at it
  uint64_t unpolled_events_ = 0;             // since DumpOptions::cancelled was last asked
};

}  // namespace

int64_t TraceOrigin(const DecodedTrace& decoded) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const DecodedRecord& r : decoded.records) {
    if (r.header_problem != HeaderProblem::kNone) continue;
    origin = std::min(origin, static_cast<int64_t>(r.start_globaltimer));
  }
  return origin == std::numeric_limits<int64_t>::max() ? 0 : origin;
}

absl::Status DumpDecoded(const DecodedTrace& decoded, const DumpOptions& options,
                         absl::Span<TraceSink* const> sinks, DumpResult& result) {
  result = DumpResult();
  result.decoded = true;
  return Driver(decoded, options, sinks, result).Run();
}

absl::Status DumpTrace(const TraceLayout& layout, absl::Span<const uint32_t> words,
                       const DumpOptions& options, absl::Span<TraceSink* const> sinks,
                       DumpResult& result) {
  result = DumpResult();
  DecodedTrace decoded;
  RETURN_IF_ERROR(DecodeInto(layout, words, decoded));
  return DumpDecoded(decoded, options, sinks, result);
}

}  // namespace warptrace
