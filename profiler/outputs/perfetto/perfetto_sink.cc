#include "profiler/outputs/perfetto/perfetto_sink.h"

namespace warptrace {

PerfettoTraceSink::PerfettoTraceSink(llvm::raw_ostream& os, const PerfettoWriterOptions& options)
    : writer_(os, options) {}

PerfettoTraceSink::~PerfettoTraceSink() = default;

absl::Status PerfettoTraceSink::Begin(const TraceBegin& begin) {
  if (begin.layout == nullptr) return absl::InvalidArgumentError("TraceBegin without a layout");
  return writer_.Begin(*begin.layout, begin.origin_ns);
}

absl::Status PerfettoTraceSink::AddUnit(const UnitView& unit) {
  if (unit.timeline == nullptr) return absl::InvalidArgumentError("UnitView without a timeline");
  return writer_.AddUnit(*unit.timeline);
}

absl::Status PerfettoTraceSink::End(const TraceEnd& /*end*/) { return writer_.End(); }

}  // namespace warptrace
