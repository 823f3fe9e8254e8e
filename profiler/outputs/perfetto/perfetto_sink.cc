#include "profiler/outputs/perfetto/perfetto_sink.h"

#include <memory>

namespace warptrace {

PerfettoWriterOptions PerfettoTraceSink::WriterOptions(PerfettoWriterOptions options) {
  if (options.threads >= 2) {
    // The writer's own thread is one of the threads: the writer deflates on the others, and
    // on the caller's while it waits for the writer's (Begin's UnitFeeder).
    --options.threads;
    options.on_deflate_queued = [this] {
      if (feeder_ != nullptr) feeder_->Wake();
    };
  }
  return options;
}

PerfettoTraceSink::PerfettoTraceSink(llvm::raw_ostream& os, const PerfettoWriterOptions& options)
    : threaded_(options.threads >= 2), writer_(os, WriterOptions(options)) {}

PerfettoTraceSink::~PerfettoTraceSink() = default;

absl::Status PerfettoTraceSink::Begin(const TraceBegin& begin) {
  if (begin.layout == nullptr) return absl::InvalidArgumentError("TraceBegin without a layout");
  absl::Status status = writer_.Begin(*begin.layout, begin.origin_ns);
  if (status.ok() && threaded_) {
    feeder_ = std::make_unique<UnitFeeder>(
        [this](const UnitTimeline& unit) { return writer_.AddUnit(unit); },
        UnitFeeder::Helper{[this] { return writer_.DeflatePending(); },
                           [this] { return writer_.HelpDeflate(); }});
  }
  return status;
}

absl::Status PerfettoTraceSink::AddUnit(const UnitView& unit) {
  if (unit.timeline == nullptr) return absl::InvalidArgumentError("UnitView without a timeline");
  if (feeder_ != nullptr) return feeder_->Add(*unit.timeline);
  return writer_.AddUnit(*unit.timeline);
}

absl::Status PerfettoTraceSink::End(const TraceEnd& /*end*/) {
  if (feeder_ != nullptr) {
    absl::Status status = feeder_->Finish();
    feeder_.reset();
    if (!status.ok()) return status;
  }
  return writer_.End();
}

}  // namespace warptrace
