// The Chrome trace (chrome_trace.h) as a dump sink (sink.h).
#ifndef WARPTRACE_PROFILER_OUTPUTS_CHROME_TRACE_SINK_H_
#define WARPTRACE_PROFILER_OUTPUTS_CHROME_TRACE_SINK_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/dump/sink.h"
#include "profiler/dump/unit_feeder.h"
#include "profiler/outputs/chrome_trace.h"

namespace warptrace {

// Streams each unit to `os` as the driver hands it over, and the metadata and otherData at
// End. The output is byte for byte
// WriteChromeTrace of the whole Timeline the same dump would collect. AddUnit returns
// ChromeTraceWriter::AddUnit's errors. A dump that stops early leaves a partial trace in
// `os`: write through base/file.h's WriteLargeFileAtomically, which commits only on success.
//
//   RETURN_IF_ERROR(WriteLargeFileAtomically(path, [&](llvm::raw_ostream& os) {
//     ChromeTraceSink chrome(options, os);
//     TraceSink* sinks[] = {&chrome};
//     return DumpTrace(layout, words, dump_options, sinks, result);
//   }, {.role = "Chrome trace"}));
//
// With threads >= 2 the writer formats on a thread of its own (a UnitFeeder,
// profiler/dump/unit_feeder.h): AddUnit copies the unit's timeline into a batch and returns;
// the same bytes, and a writer error surfaces at a later AddUnit or at End with the same
// message. `os` is then written by that thread until End, and by the caller at End.
class ChromeTraceSink : public TraceSink {
 public:
  ChromeTraceSink(const ChromeTraceOptions& options, llvm::raw_ostream& os, int threads = 1);
  ~ChromeTraceSink() override;
  absl::string_view Name() const override { return "chrome trace"; }
  absl::Status Begin(const TraceBegin& begin) override;
  absl::Status AddUnit(const UnitView& unit) override;
  absl::Status End(const TraceEnd& end) override;

 private:
  ChromeTraceOptions options_;
  llvm::raw_ostream& os_;
  const int threads_;
  std::unique_ptr<ChromeTraceWriter> writer_;
  std::unique_ptr<UnitFeeder> feeder_;  // from Begin when threads_ >= 2; before writer_ dies
  bool overhead_compensated_ = false;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_CHROME_TRACE_SINK_H_
