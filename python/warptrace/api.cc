#include "python/warptrace/api.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis_json.h"
#include "profiler/analysis/diff.h"
#include "profiler/imports/sidecar.h"
#include "profiler/trace/verify.h"

namespace warptrace::python {
namespace {

// The dump front end (profiler/frontend/dump_files.h) with the request the Python keywords
// make; its outcome converted into the text the package hands Python.
DumpReply Run(TraceLayout layout, absl::Span<const uint32_t> words, const DumpArgs& args,
              std::vector<MosaicOverflow> overflows) {
  DumpReply out;
  out.layout = std::move(layout);
  out.overflows = std::move(overflows);
  absl::StatusOr<TraceFormat> format = ChooseTraceFormat(args.format, args.output);
  if (!format.ok()) {
    out.status = format.status();
    return out;
  }
  out.perfetto = *format == TraceFormat::kPerfetto;
  DumpRequest request;
  request.summary = args.summary;
  request.analysis = args.analysis;
  request.verify.allow_truncated = args.allow_truncated;
  request.timeline.compensate_overhead = args.compensate_overhead;
  if (!args.output.empty()) {
    TraceOutput& trace = request.traces.emplace_back();
    trace.format = *format;
    trace.path = args.output;
    trace.role = "trace (output)";
  }
  DumpOutcome outcome = DumpToFiles(out.layout, words, request);
  out.status = std::move(outcome.status);
  out.result = std::move(outcome.result);
  if (out.status.ok() && !args.output.empty()) out.written = args.output;
  if (!out.status.ok() && !out.overflows.empty()) {
    // The importer's lines name the entries_per_warpgroup that fits; verify's name events.
    std::string lines;
    for (const MosaicOverflow& o : out.overflows) absl::StrAppend(&lines, o.message, "\n");
    out.status = absl::Status(out.status.code(), absl::StrCat(lines, out.status.message()));
  }
  if (out.result.decoded) {
    llvm::raw_string_ostream os(out.report_json);
    WriteVerifyReportJson(out.result.report, out.layout, os);
  }
  if (!out.status.ok()) return out;
  {
    llvm::raw_string_ostream os(out.summary_text);
    PrintSummaryAndDiagnosis(outcome, os);
  }
  out.summary = std::move(outcome.summary);
  out.analysis = std::move(outcome.analysis);
  if (out.analysis.has_value()) {
    llvm::raw_string_ostream os(out.analysis_json);
    WriteAnalysisJson(*out.analysis, os);
  }
  return out;
}

}  // namespace

absl::StatusOr<DumpReply> DumpWords(const TraceLayout& layout,
                                    absl::Span<const uint32_t> words, const DumpArgs& args) {
  TraceLayout copy = layout;
  if (args.sm_clock_khz != 0) copy.clock.nominal_sm_clock_khz = args.sm_clock_khz;
  return Run(std::move(copy), words, args, {});
}

absl::StatusOr<DumpReply> DumpPrefix(absl::string_view prefix, const DumpArgs& args) {
  ASSIGN_OR_RETURN(LoadedDump loaded, LoadForDump(prefix, args.sm_clock_khz));
  return Run(std::move(loaded.trace.layout), loaded.trace.words, args,
             std::move(loaded.overflows));
}

absl::StatusOr<DumpReply> DumpMosaic(const MosaicSidecar& sidecar,
                                     absl::Span<const uint32_t> words, const DumpArgs& args) {
  MosaicImportOptions options;
  if (args.sm_clock_khz != 0) options.sm_clock_khz = args.sm_clock_khz;
  ASSIGN_OR_RETURN(MosaicImport imported, ConvertMosaicBuffer(sidecar, words, options));
  return Run(std::move(imported.trace.layout), imported.trace.words, args,
             std::move(imported.overflows));
}

absl::StatusOr<TraceLayout> LayoutFromJson(absl::string_view json) {
  return ParseLayoutJson(json);
}

absl::StatusOr<TraceLayout> LoadLayout(absl::string_view path) {
  ASSIGN_OR_RETURN(const std::string json, ReadFile(path));
  absl::StatusOr<TraceLayout> layout = ParseLayoutJson(json);
  if (!layout.ok()) {
    return absl::Status(layout.status().code(),
                        absl::StrCat(path, ": ", layout.status().message()));
  }
  return layout;
}

std::string LayoutToJson(const TraceLayout& layout) {
  std::string json;
  llvm::raw_string_ostream os(json);
  WriteLayoutJson(layout, os);
  os.flush();
  return json;
}

absl::StatusOr<DiffOutcome> DiffPrefixes(absl::string_view before, absl::string_view after,
                                         bool compensate_overhead) {
  DiffCollector collectors[2];
  const absl::string_view prefixes[2] = {before, after};
  const char* sides[2] = {"before", "after"};
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<LoadedDump> loaded = LoadForDump(prefixes[i], 0);
    absl::Status status = loaded.status();
    if (status.ok()) {
      DumpRequest request;
      request.timeline.compensate_overhead = compensate_overhead;
      for (TraceSink* sink : collectors[i].sinks()) request.sinks.push_back(sink);
      status = DumpToFiles(loaded->trace.layout, loaded->trace.words, request).status;
    }
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat(sides[i], "=", prefixes[i], ": ",
                                                      status.message()));
    }
  }
  const TraceDiff diff = DiffTraces(collectors[0], collectors[1]);
  DiffOutcome out;
  {
    llvm::raw_string_ostream os(out.table);
    PrintTraceDiff(diff, os, diff.rows.size());
  }
  {
    llvm::raw_string_ostream os(out.json);
    WriteTraceDiffJson(diff, os);
  }
  return out;
}

}  // namespace warptrace::python
