#include "profiler/outputs/chrome_trace_sink.h"

#include <memory>

namespace warptrace {

ChromeTraceSink::ChromeTraceSink(const ChromeTraceOptions& options, llvm::raw_ostream& os,
                                 int threads)
    : options_(options), os_(os), threads_(threads) {}

// The feeder's thread is joined (it may be writing a batch) before the writer goes; the
// writer then abandons an unfinished trace without writing (chrome_trace.h).
ChromeTraceSink::~ChromeTraceSink() { feeder_.reset(); }

absl::Status ChromeTraceSink::Begin(const TraceBegin& begin) {
  writer_ = std::make_unique<ChromeTraceWriter>(*begin.layout, begin.origin_ns, options_, os_);
  overhead_compensated_ = begin.overhead_compensated;
  if (threads_ >= 2) {
    feeder_ = std::make_unique<UnitFeeder>(
        [this](const UnitTimeline& unit) { return writer_->AddUnit(unit); });
  }
  return absl::OkStatus();
}

absl::Status ChromeTraceSink::AddUnit(const UnitView& unit) {
  if (writer_ == nullptr) return absl::FailedPreconditionError("AddUnit before Begin");
  if (feeder_ != nullptr) return feeder_->Add(*unit.timeline);
  return writer_->AddUnit(*unit.timeline);
}

absl::Status ChromeTraceSink::End(const TraceEnd& end) {
  if (writer_ == nullptr) return absl::FailedPreconditionError("End before Begin");
  if (feeder_ != nullptr) {
    absl::Status status = feeder_->Finish();
    feeder_.reset();
    if (!status.ok()) return status;
  }
  return writer_->Finish(end.clock_note, overhead_compensated_);
}

}  // namespace warptrace
