#include "python/warptrace/api.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis_json.h"
#include "profiler/analysis/diagnosis.h"
#include "profiler/analysis/diff.h"
#include "profiler/imports/sidecar.h"
#include "profiler/analysis/analysis_sink.h"
#include "profiler/outputs/chrome_trace.h"
#include "profiler/outputs/chrome_trace_sink.h"
#include "profiler/outputs/perfetto/perfetto_sink.h"
#include "profiler/trace/verify.h"

namespace warptrace::python {
namespace {

// The CLI's ChooseFormat (profiler/cli/warptrace_main.cc): `format`, else the extension.
absl::StatusOr<bool> IsPerfetto(absl::string_view flag, absl::string_view output) {
  const std::string format = absl::AsciiStrToLower(flag);
  if (format == "json") return false;
  if (format == "perfetto") return true;
  if (!format.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown format '", flag, "': use 'perfetto' (protobuf trace) or 'json' (Chrome trace)"));
  }
  const std::string lower = absl::AsciiStrToLower(output);
  return absl::EndsWith(lower, ".pftrace") || absl::EndsWith(lower, ".perfetto-trace");
}

// Everything the CLI's Dump() does between loading and printing.
absl::StatusOr<DumpOutcome> Run(TraceLayout layout, absl::Span<const uint32_t> words,
                                const DumpRequest& request,
                                std::vector<MosaicOverflow> overflows) {
  DumpOutcome out;
  ASSIGN_OR_RETURN(out.perfetto, IsPerfetto(request.format, request.output));
  if (!request.output.empty()) {
    RETURN_IF_ERROR(CheckNotAnInput(request.output, "trace (output)"));
  }
  out.layout = std::move(layout);
  out.overflows = std::move(overflows);
  const uint64_t expected = BufferBytes(out.layout);
  if (uint64_t{words.size()} * 4 != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the buffer has ", words.size(), " uint32 words (", uint64_t{words.size()} * 4,
        " bytes) but the layout (kernel '", out.layout.kernel_name, "', grid ",
        out.layout.grid.x, "x", out.layout.grid.y, "x", out.layout.grid.z, ", capacity ",
        out.layout.capacity, ") needs ", expected / 4, " words (", expected,
        " bytes): pass the buffer this layout describes, or the layout of this buffer"));
  }

  DumpOptions options;
  options.verify.allow_truncated = request.allow_truncated;
  options.timeline.compensate_overhead = request.compensate_overhead;
  std::optional<SummarySink> summary_sink;
  std::optional<AnalysisSink> analysis_sink;
  std::vector<TraceSink*> sinks;
  if (request.summary) sinks.push_back(&summary_sink.emplace());
  if (request.summary || request.analysis) sinks.push_back(&analysis_sink.emplace());

  const TraceLayout& l = out.layout;
  if (request.output.empty()) {
    out.status = DumpTrace(l, words, options, sinks, out.result);
  } else {
    out.status = WriteFileAtomically(
        request.output,
        [&](llvm::raw_ostream& os) {
          os.SetBufferSize(size_t{1} << 20);
          std::unique_ptr<TraceSink> writer;
          if (out.perfetto) {
            writer = std::make_unique<PerfettoTraceSink>(os);
          } else {
            writer = std::make_unique<ChromeTraceSink>(ChromeTraceOptions{}, os);
          }
          sinks.insert(sinks.begin(), writer.get());
          return DumpTrace(l, words, options, sinks, out.result);
        },
        {.role = out.perfetto ? "Perfetto trace" : "Chrome trace"});
    if (out.status.ok()) out.written = request.output;
  }
  if (!out.status.ok() && !out.overflows.empty()) {
    // The importer's lines name the entries_per_warpgroup that fits; verify's name events.
    std::string lines;
    for (const MosaicOverflow& o : out.overflows) absl::StrAppend(&lines, o.message, "\n");
    out.status = absl::Status(out.status.code(), absl::StrCat(lines, out.status.message()));
  }
  if (out.result.decoded) {
    llvm::raw_string_ostream os(out.report_json);
    WriteVerifyReportJson(out.result.report, l, os);
  }
  if (!out.status.ok()) return out;
  if (summary_sink.has_value() && summary_sink->summary().has_value()) {
    out.summary = *summary_sink->summary();
    llvm::raw_string_ostream os(out.summary_text);
    PrintSummary(*out.summary, os);
    PrintDiagnosis(analysis_sink->result(), os);
  }
  if (analysis_sink.has_value()) {
    out.analysis = analysis_sink->result();
    llvm::raw_string_ostream os(out.analysis_json);
    WriteAnalysisJson(*out.analysis, os);
  }
  return out;
}

// The CLI's Load: a warptrace sidecar, or a Mosaic buffer converted at the requested clock.
absl::StatusOr<MosaicImport> Load(absl::string_view prefix, uint64_t sm_clock_khz) {
  bool mosaic = false;
  std::vector<MosaicOverflow> overflows;
  LoadOptions load_options;
  load_options.importers[kMosaicSidecarFormat] =
      [&](absl::string_view p, absl::string_view json) -> absl::StatusOr<LoadedTrace> {
    mosaic = true;
    MosaicImportOptions options;
    if (sm_clock_khz != 0) options.sm_clock_khz = sm_clock_khz;
    ASSIGN_OR_RETURN(MosaicImport imported, ImportMosaicGpu(p, json, options));
    overflows = std::move(imported.overflows);
    return std::move(imported.trace);
  };
  ASSIGN_OR_RETURN(LoadedTrace trace, LoadTrace(prefix, load_options));
  if (sm_clock_khz != 0 && !mosaic) trace.layout.clock.nominal_sm_clock_khz = sm_clock_khz;
  return MosaicImport{std::move(trace), std::move(overflows)};
}

}  // namespace

absl::StatusOr<DumpOutcome> DumpWords(const TraceLayout& layout,
                                      absl::Span<const uint32_t> words,
                                      const DumpRequest& request) {
  TraceLayout copy = layout;
  if (request.sm_clock_khz != 0) copy.clock.nominal_sm_clock_khz = request.sm_clock_khz;
  return Run(std::move(copy), words, request, {});
}

absl::StatusOr<DumpOutcome> DumpPrefix(absl::string_view prefix, const DumpRequest& request) {
  ASSIGN_OR_RETURN(MosaicImport loaded, Load(prefix, request.sm_clock_khz));
  return Run(std::move(loaded.trace.layout), loaded.trace.words, request,
             std::move(loaded.overflows));
}

absl::StatusOr<DumpOutcome> DumpMosaic(const MosaicSidecar& sidecar,
                                       absl::Span<const uint32_t> words,
                                       const DumpRequest& request) {
  MosaicImportOptions options;
  if (request.sm_clock_khz != 0) options.sm_clock_khz = request.sm_clock_khz;
  ASSIGN_OR_RETURN(MosaicImport imported, ConvertMosaicBuffer(sidecar, words, options));
  return Run(std::move(imported.trace.layout), imported.trace.words, request,
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
    absl::StatusOr<MosaicImport> loaded = Load(prefixes[i], 0);
    absl::Status status = loaded.status();
    if (status.ok()) {
      DumpOptions options;
      options.timeline.compensate_overhead = compensate_overhead;
      DumpResult result;
      status = DumpTrace(loaded->trace.layout, loaded->trace.words, options,
                         collectors[i].sinks(), result);
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
