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
// Threads. With options.threads = N >= 2 the writer runs on a thread of its own (a
// UnitFeeder, profiler/dump/unit_feeder.h; N - 2 more threads deflate for it): AddUnit copies
// the unit's timeline into a batch, and the writer's thread turns whole batches into
// packets while the caller goes on with the next units. The full packet buffers are deflated
// and written by the deflating threads and by the caller's thread whenever it would wait for
// the writer's (a full queue in AddUnit, and in End); with N = 2 the writer's thread deflates
// one itself only when several wait. So on two cores the caller, which runs out of work
// first, takes over deflating. The bytes are the same for every N.
// A writer error surfaces at a later AddUnit or at End, with the same message.
//
// Errors: PerfettoWriter's; InvalidArgument for a TraceBegin without a layout or a UnitView
// without a timeline. Not thread-safe (one caller thread); `os` must outlive the sink.
#ifndef WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PERFETTO_SINK_H_
#define WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PERFETTO_SINK_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/dump/sink.h"
#include "profiler/dump/unit_feeder.h"
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
  // The writer's options: one thread fewer (the writer's own), deflating shared with the
  // caller through feeder_.
  PerfettoWriterOptions WriterOptions(PerfettoWriterOptions options);

  const bool threaded_;
  PerfettoWriter writer_;
  std::unique_ptr<UnitFeeder> feeder_;  // from Begin when threaded_; destroyed before writer_
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_PERFETTO_PERFETTO_SINK_H_
