#include "profiler/outputs/chrome_trace_sink.h"

#include <memory>

namespace warptrace {

ChromeTraceSink::ChromeTraceSink(const ChromeTraceOptions& options, llvm::raw_ostream& os)
    : options_(options), os_(os) {}

ChromeTraceSink::~ChromeTraceSink() = default;

absl::Status ChromeTraceSink::Begin(const TraceBegin& begin) {
  writer_ = std::make_unique<ChromeTraceWriter>(*begin.layout, begin.origin_ns, options_, os_);
  overhead_compensated_ = begin.overhead_compensated;
  return absl::OkStatus();
}

absl::Status ChromeTraceSink::AddUnit(const UnitView& unit) {
  if (writer_ == nullptr) return absl::FailedPreconditionError("AddUnit before Begin");
  return writer_->AddUnit(*unit.timeline);
}

absl::Status ChromeTraceSink::End(const TraceEnd& end) {
  if (writer_ == nullptr) return absl::FailedPreconditionError("End before Begin");
  writer_->Finish(end.clock_note, overhead_compensated_);
  return absl::OkStatus();
}

}  // namespace warptrace
