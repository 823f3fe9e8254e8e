// The Perfetto trace (perfetto_writer.h) as a dump sink (sink.h): streams each unit to `os`
// as the driver hands it over, and the counters at End. A dump that stops early leaves a
// partial trace in `os`: write through base/file.h's WriteLargeFileAtomically, which
// commits only on success.
//
//   RETURN_IF_ERROR(WriteLargeFileAtomically(path, [&](llvm::raw_ostream& os) {
//     PerfettoTraceSink perfetto(os);
//     TraceSink* sinks[] = {&perfetto};
//     return DumpTrace(layout, words, dump_options, sinks, result);
//   }, {.role = "Perfetto trace"}));
//
// Threads. With options.threads = N >= 2 the writer formats and deflates batches of units on
// N - 1 threads of its own and on the caller's whenever it would wait for them
// (perfetto_writer.h, Batches and threads): AddUnit copies the unit's timeline into the
// batch being filled and returns. The bytes are the same for every N. A writer error
// surfaces at a later AddUnit or at End, with the same message.
// Errors: PerfettoWriter's; InvalidArgument for a TraceBegin without a layout or a UnitView
// without a timeline. Not thread-safe (one caller thread); `os` must outlive the sink.
#ifndef WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PERFETTO_SINK_H_
#define WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PERFETTO_SINK_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/dump/sink.h"
#include "profiler/outputs/perfetto/perfetto_writer.h"

namespace warptrace {

class PerfettoTraceSink : public TraceSink {
 public:
  explicit PerfettoTraceSink(llvm::raw_ostream& os, const PerfettoWriterOptions& options = {});
  ~PerfettoTraceSink() override;
  absl::string_view Name() const override { return "perfetto trace"; }
  absl::Status Begin(const TraceBegin& begin) override;
  absl::Status AddUnit(const UnitView& unit) override;
  absl::Status End(const TraceEnd& end) override;

  // Packets written so far (all of them once End returned).
  uint64_t packets() const { return writer_.packets(); }

 private:
  PerfettoWriter writer_;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PERFETTO_SINK_H_
