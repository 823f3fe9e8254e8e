// The C++ side of the Python package (python/warptrace): `warptrace dump` and `warptrace diff`
// as functions, without their flags, for the extension module (_core.cc) to wrap one call per
// Python API. The extension only converts; everything it returns comes from here.
//
//   DumpArgs args{.output = "/tmp/gemm.pftrace", .summary = true};
//   ASSIGN_OR_RETURN(DumpReply reply, DumpPrefix("/tmp/gemm", args));
//   if (!reply.status.ok()) ...  // e.g. verification failed: reply.result.report says why
//
// Each function converts the Python keywords into a request of the dump front end
// (profiler/frontend/dump_files.h), the one the CLI uses too, so the files are byte-identical
// to `warptrace dump --output=...` of the same buffer, and converts its outcome into text.
//
// Errors: the StatusOr is an error only when nothing was dumped: LoadTrace's,
// ParseMosaicSidecar's and ConvertMosaicBuffer's codes (sidecar.h, mosaic_import.h). The
// front end's own status (an unknown `format`, an output that names an input, a word count the
// layout does not describe, verification failures, a writer's error, ...) is
// DumpReply::status, beside the report it produced.
// Thread-safety: reentrant; call without holding Python's GIL.
#ifndef WARPTRACE_PYTHON_WARPTRACE_API_H_
#define WARPTRACE_PYTHON_WARPTRACE_API_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "profiler/analysis/analysis.h"
#include "profiler/dump/dump.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/imports/mosaic_import.h"
#include "profiler/analysis/summary.h"

namespace warptrace::python {

struct DumpArgs {
  std::string output;         // the trace to write; empty: none
  std::string format;         // "perfetto", "json", or "" (from output's extension, as the CLI)
  bool summary = false;       // the summary and the diagnosis
  bool analysis = false;      // the analysis (also computed for `summary`)
  bool allow_truncated = false;
  bool compensate_overhead = false;
  uint64_t sm_clock_khz = 0;  // the CLI's --sm-clock-khz (0: the layout's / Mosaic's default)
};

struct DumpReply {
  absl::Status status;                 // the dump's (see above)
  TraceLayout layout;                  // the layout the buffer was decoded with
  DumpResult result;                   // verdicts and findings (result.report), counts
  std::optional<Summary> summary;      // when requested and the dump reached its end
  std::optional<Analysis> analysis;    // when requested (summary or analysis) and reached
  std::string summary_text;            // PrintSummary then PrintDiagnosis, as the CLI prints
  std::string analysis_json;           // WriteAnalysisJson (analysis_json.h)
  std::string report_json;             // WriteVerifyReportJson (verify.h), when decoded
  std::vector<MosaicOverflow> overflows;  // Mosaic buffers only
  std::string written;                 // the trace file written ("" when none)
  bool perfetto = false;               // the format written
};

// Dumps `words` (host order, BufferBytes(layout) bytes) without copying them; a word count
// that disagrees with the layout is the reply's InvalidArgument.
absl::StatusOr<DumpReply> DumpWords(const TraceLayout& layout,
                                      absl::Span<const uint32_t> words,
                                      const DumpArgs& args);

// Reads PREFIX.bin + PREFIX.json (a "warptrace" or "mosaic-gpu" sidecar) and dumps it.
absl::StatusOr<DumpReply> DumpPrefix(absl::string_view prefix, const DumpArgs& args);

// Converts a Mosaic GPU buffer (mosaic_import.h) and dumps it; its overflows are reported in
// DumpOutcome::overflows and, unless request.allow_truncated, make the dump fail
// (ResourceExhausted, naming the units and the entries_per_warpgroup that would fit).
absl::StatusOr<DumpReply> DumpMosaic(const MosaicSidecar& sidecar,
                                       absl::Span<const uint32_t> words,
                                       const DumpArgs& args);

// Parses a "warptrace" sidecar (ParseLayoutJson), or reads one from a file.
absl::StatusOr<TraceLayout> LayoutFromJson(absl::string_view json);
absl::StatusOr<TraceLayout> LoadLayout(absl::string_view path);
// The layout as sidecar JSON (WriteLayoutJson).
std::string LayoutToJson(const TraceLayout& layout);

struct DiffOutcome {
  std::string table;  // PrintTraceDiff (all rows)
  std::string json;   // WriteTraceDiffJson
};

// `warptrace diff --before=PREFIX --after=PREFIX`: each trace verified strictly (a failure
// returns the dump's status, prefixed with which side), then compared (diff.h).
absl::StatusOr<DiffOutcome> DiffPrefixes(absl::string_view before, absl::string_view after,
                                         bool compensate_overhead = false);

}  // namespace warptrace::python

#endif  // WARPTRACE_PYTHON_WARPTRACE_API_H_
