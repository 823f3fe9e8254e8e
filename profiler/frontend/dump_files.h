// DumpToFiles: the one front end of the dump. The warptrace CLI (profiler/cli), the Python
// package (python/warptrace) and RunKernel (jit/run, and through it the examples) describe
// what they want in a DumpRequest — trace files (Perfetto, Chrome JSON) by path or by an open
// descriptor, the verdict report, the summary, the analysis, the in-memory Timeline — and this
// runs the one dump pipeline (profiler/dump/dump.h) once over the buffer with the sinks that
// produce them. Callers keep only argument parsing and conversion.
//
//   DumpRequest request;
//   TraceOutput& trace = request.traces.emplace_back();
//   trace.format = TraceFormat::kPerfetto;
//   trace.path = "gemm.pftrace";
//   request.report_path = "gemm.verdict.json";
//   request.summary = true;
//   ASSIGN_OR_RETURN(LoadedDump loaded, LoadForDump("/tmp/gemm", {}));
//   DumpOutcome outcome = DumpToFiles(loaded.trace.layout, loaded.trace.words, request);
//   if (!outcome.status.ok()) ...  // outcome.result.report says which unit failed, and why
//   PrintSummaryAndDiagnosis(outcome, llvm::outs());
//
// Files. A trace given by path is streamed through WriteLargeFileAtomically (base/file.h): it
// replaces the path only when the whole dump succeeded, is never executable, and never
// replaces a file this process read ("-" is stdout). A trace given by descriptor is written
// in place as the dump goes (left open; on failure it holds a partial trace: the caller
// discards it), and so is one given as a stream. The verdict report is written whenever the buffer decoded — also when
// verification failed, which is when it matters — and the analysis JSON when the dump
// succeeded. The bytes are those of the writers (profiler/outputs, verify.h, analysis_json.h)
// over the same buffer: a file does not depend on which front door asked for it.
//
// Errors: DumpOutcome::status, the first of
//   InvalidArgument — a request that cannot be carried out (two outputs naming one path, a
//     trace output with not exactly one of path, fd and stream, a word count the layout does not
//     describe): nothing is decoded or written;
//   FailedPrecondition — an output path that names an input of this process (base/file.h);
//   the dump's (dump.h): the decode's DataLoss / InvalidArgument (result.decoded false),
//     verification's DataLoss / ResourceExhausted (the report is complete), a writer's error;
//   writing the report or the analysis: the file system's codes, with failed_output naming
//     the output ("" when the failure is not an output's).
// Thread-safety: reentrant; sinks run on the calling thread (DumpRequest::threads: writers
// hand their bytes to background threads of their own).
#ifndef WARPTRACE_PROFILER_FRONTEND_DUMP_FILES_H_
#define WARPTRACE_PROFILER_FRONTEND_DUMP_FILES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis.h"
#include "profiler/analysis/summary.h"
#include "profiler/dump/dump.h"
#include "profiler/dump/sink.h"
#include "profiler/imports/mosaic_import.h"
#include "profiler/imports/sidecar.h"
#include "profiler/outputs/chrome_trace_options.h"
#include "profiler/outputs/tables/schema.h"
#include "profiler/outputs/tables/tables_sink.h"
#include "profiler/timeline/timeline_types.h"
#include "profiler/trace/decode.h"

namespace warptrace {

enum class TraceFormat { kChromeJson, kPerfetto };

// "perfetto" or "json" (any case); empty: from `path`'s extension (.pftrace and
// .perfetto-trace are Perfetto, anything else Chrome JSON). InvalidArgument for another name,
// saying which exist.
absl::StatusOr<TraceFormat> ChooseTraceFormat(absl::string_view format, absl::string_view path);
// "Chrome trace", "Perfetto trace": how errors name a trace output by default.
const char* TraceFormatRole(TraceFormat format);

struct TraceOutput {
  TraceFormat format = TraceFormat::kChromeJson;
  std::string path;  // replaced atomically when the dump succeeds; "-" is stdout
  int fd = -1;       // instead of a path: an open descriptor, written in place, left open
  llvm::raw_ostream* stream = nullptr;  // or a stream the caller owns (e.g. into memory)
  // kChromeJson only. chrome.events = kMosaic writes exactly Mosaic GPU's own dump
  // (MosaicTraceSink, profiler/outputs/mosaic_trace.h; chrome.mosaic says how its times are
  // computed) instead of the Chrome trace of chrome_trace.h.
  ChromeTraceOptions chrome;
  std::string role;           // names it in errors; empty: TraceFormatRole(format)
};

struct DumpRequest {
  VerifyOptions verify;      // allow_truncated, finding caps, plan-mismatch warnings
  TimelineOptions timeline;  // compensate_overhead, calibration
  std::vector<TraceOutput> traces;
  std::string report_path;   // the verdict report (WriteVerifyReportJson); empty: none
  std::string report_role = "verdict report";
  std::string analysis_path;  // the analysis as JSON (WriteAnalysisJson); empty: none
  std::string analysis_role = "analysis";
  bool summary = false;   // DumpOutcome::summary (the analysis comes with it)
  bool analysis = false;  // DumpOutcome::analysis (also implied by analysis_path)
  bool collect = false;   // DumpOutcome::timeline: every slice kept in memory
  // The causal profile (whatif.h) in DumpOutcome::analysis (has_causal_profile), its JSON and
  // under the diagnosis of PrintSummaryAndDiagnosis. Implies the analysis; keeps the slices
  // in memory while it is computed. A trace the graph cannot predict (no hand-offs) gets an
  // empty profile whose one limitation says why (kNoCausalProfile, whatif.h). Off by default
  // here; the CLI (dump --summary / --analysis) and the C API turn it on unless asked not to.
  bool causal_profile = false;
  // The warptrace tables (profiler/outputs/tables/schema.h) of this launch, keyed and tagged
  // as the options say, in DumpOutcome::tables. Implies the analysis (its rows are tables).
  std::optional<TableOptions> tables;
  // More sinks, fed after the front end's own (e.g. a DiffCollector); not owned.
  std::vector<TraceSink*> sinks;
  // Threads the dump may use, the calling one included; 0: DefaultThreads() (the cores this
  // process may run on). With N > 1 each trace output's bytes are made ready and written by
  // background threads (base/chunk_pipeline.h: Perfetto's deflate on N - 1 of them, a JSON
  // output's write(2)s on one, a Mosaic-style JSON formatted on N) while the calling thread
  // decodes, verifies, builds timelines and formats; with N >= 3 the units are also prepared
  // (walk, verify, timeline) by N - 2 workers (DumpOptions::threads, dump.h); 1 keeps
  // everything on the calling thread. The files are byte-identical whatever N is, and so is
  // everything else the dump returns.
  int threads = 0;
  // Cancellation (DumpOptions::cancelled, dump.h): asked on the calling thread every few
  // milliseconds of dump; true stops it with Cancelled, and then nothing is written — not
  // even the verdict report — and no path output is replaced (its temporary is removed).
  std::function<bool()> cancelled;
};

struct DumpOutcome {
  absl::Status status;       // see above
  std::string failed_output;  // the role of the output whose writing failed, else ""
  DumpResult result;          // decoded, the report (verdicts, findings), counts, clock note
  std::optional<Summary> summary;    // requested and the dump reached its end
  std::optional<Analysis> analysis;  // requested (summary, analysis, analysis_path) and reached
  std::optional<Timeline> timeline;  // collect, and the dump reached its end
  std::optional<TraceTables> tables;  // requested, and the dump reached its end
  std::vector<std::string> written;  // the paths written, in request order
};

// Decodes `words` (host order; BufferBytes(layout) of them) once and dumps them.
DumpOutcome DumpToFiles(const TraceLayout& layout, absl::Span<const uint32_t> words,
                        const DumpRequest& request);
// The same over a buffer already decoded (its layout and words must outlive the call): for
// callers that keep the DecodedTrace (RunKernel's Trace), so the buffer is decoded once.
DumpOutcome DumpDecodedToFiles(const DecodedTrace& decoded, const DumpRequest& request);

// The summary table, then the diagnosis under "diagnosis:" (`warptrace dump --summary`);
// nothing when the outcome has no summary.
void PrintSummaryAndDiagnosis(const DumpOutcome& outcome, llvm::raw_ostream& os);

// A saved trace as the dump reads it: PREFIX.bin + PREFIX.json with a "warptrace" sidecar, or
// a "mosaic-gpu" one converted (mosaic_import.h). `sm_clock_khz` (0: keep the default) is the
// rate of a Mosaic buffer, which records none, or the nominal fallback rate of a warptrace
// one. `threads` convert a Mosaic buffer (0: the cores there are; the result is the same for
// any count). `in_place`: a Mosaic buffer is not converted but decoded where it lies
// (DecodeMosaicGpu), for a caller that only dumps it (DumpLoadedToFiles): `trace` then holds
// the layout and no words. Errors: LoadTrace's and ImportMosaicGpu's (sidecar.h,
// mosaic_import.h), the same whether in place or not.
struct LoadedDump {
  LoadedTrace trace;
  bool mosaic = false;
  std::vector<MosaicOverflow> overflows;  // Mosaic buffers: traces that needed more entries
  std::shared_ptr<const MosaicDecoded> in_place;  // a Mosaic buffer loaded in place
  bool mosaic_bounds_check = false;  // its sidecar's "bounds_check" (WithMosaicBoundsCheck)
};
absl::StatusOr<LoadedDump> LoadForDump(absl::string_view prefix, uint64_t sm_clock_khz,
                                       int threads = 1, bool in_place = false);

// `request` for a Mosaic buffer recorded with ProfilerSpec(bounds_check=True), which is
// truncated by design and which Mosaic's own dump writes instead of refusing: an overflowed
// unit is a warning (VerifyOptions::allow_truncated; its verdict and MosaicOverflow still name
// it and the entries_per_warpgroup that holds it), and each Mosaic-style output closes its
// open regions as that dump does (MosaicTimestamps::close_truncated).
DumpRequest WithMosaicBoundsCheck(DumpRequest request);

// What LoadForDump loaded, dumped: DumpToFiles over its words, or DumpDecodedToFiles over a
// Mosaic buffer decoded in place (with WithMosaicBoundsCheck where its sidecar says
// "bounds_check"). The files are the same either way.
DumpOutcome DumpLoadedToFiles(const LoadedDump& loaded, const DumpRequest& request);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_FRONTEND_DUMP_FILES_H_
