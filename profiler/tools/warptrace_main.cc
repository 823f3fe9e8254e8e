// warptrace: turns a saved trace buffer into a verified Perfetto or Chrome trace, a verdict
// report and a summary table.
//
//   warptrace dump --input=PREFIX --output=trace.pftrace|trace.json [--format=perfetto|json]
//                  [--summary] [--report=verdict.json] [--allow-truncated]
//                  [--compensate-overhead] [--events=x|be] [--json-args=lean|full]
//                  [--sm-clock-khz=N]
//
// The output format is --format's, or else --output's extension: .pftrace or
// .perfetto-trace write Perfetto's protobuf trace (profiler/perfetto/perfetto_writer.h),
// anything else Chrome trace JSON (profiler/chrome_trace.h).
//
// PREFIX names PREFIX.bin (raw words) and PREFIX.json (the sidecar): a "warptrace" sidecar
// (profiler/sidecar.h) or a "mosaic-gpu" one (profiler/mosaic_import.h). Flags may be
// spelled with dashes or underscores (--allow-truncated, --allow_truncated).
//
// Exit status: 0 when every requested output was written; 1 for a usage error, an output
// path that names an input (PREFIX.bin, PREFIX.json: an output never replaces an input) or
// another output, or an input that cannot be read or decoded (missing file, sizes that
// disagree with the layout, a bad sidecar); 2 when the trace fails verification (nothing but --report is written then;
// --allow-truncated keeps each unit's valid prefix instead). Every problem is one line on
// stderr starting with "warptrace: error: " (or "warptrace: warning: ").
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/chrome_trace.h"
#include "profiler/dump.h"
#include "profiler/mosaic_import.h"
#include "profiler/perfetto/perfetto_writer.h"
#include "profiler/sidecar.h"
#include "profiler/summary.h"
#include "profiler/verify.h"

ABSL_FLAG(std::string, input, "",
          "PREFIX of the saved trace: reads PREFIX.bin and PREFIX.json (required)");
ABSL_FLAG(std::string, output, "",
          "trace to write (open in ui.perfetto.dev; JSON also in chrome://tracing); '-' for "
          "stdout");
ABSL_FLAG(std::string, format, "",
          "output format: 'perfetto' (Perfetto protobuf trace) or 'json' (Chrome trace JSON); "
          "default: from --output's extension (.pftrace or .perfetto-trace: perfetto, "
          "otherwise json)");
ABSL_FLAG(bool, summary, false, "print the per-region summary table to stdout");
ABSL_FLAG(std::string, report, "",
          "write the per-unit verdict report (JSON) here, also when verification fails");
ABSL_FLAG(bool, allow_truncated, false,
          "keep each broken unit's valid prefix, close its open regions and report the "
          "problems as warnings instead of failing");
ABSL_FLAG(bool, compensate_overhead, false,
          "move events earlier by the measured per-event recording overhead");
ABSL_FLAG(std::string, events, "x",
          "Chrome event style: 'x' (complete events) or 'be' (begin/end pairs)");
ABSL_FLAG(std::string, json_args, "lean",
          "Chrome trace slice args: 'lean' (none: block and unit are the thread's; site, kind "
          "and origin once per site in otherData) or 'full' (all of them on every slice)");
ABSL_FLAG(uint64_t, sm_clock_khz, 0,
          "SM clock in kHz: the rate for Mosaic GPU buffers, which record none (default "
          "1980000), or the nominal fallback rate for warptrace buffers (default: the "
          "sidecar's)");
static_assert(warptrace::kMosaicDefaultSmClockKhz == 1'980'000,
              "keep --sm_clock_khz's help text in step with the Mosaic importer's default");

namespace warptrace {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitVerifyFailed = 2;

// One line per line of `message`, each prefixed, so multi-line statuses stay greppable.
void PrintProblem(absl::string_view severity, absl::string_view message) {
  for (absl::string_view line : absl::StrSplit(message, '\n', absl::SkipWhitespace())) {
    llvm::errs() << absl::StrCat("warptrace: ", severity, ": ",
                                 absl::StripLeadingAsciiWhitespace(line), "\n");
  }
}

int Fail(const absl::Status& status, int code = kExitBadInput) {
  PrintProblem("error", status.message());
  return code;
}

enum class OutputFormat { kJson, kPerfetto };

// --format, or --output's extension when it is empty.
absl::StatusOr<OutputFormat> ChooseFormat(absl::string_view flag, absl::string_view output) {
  const std::string format = absl::AsciiStrToLower(flag);
  if (format == "json") return OutputFormat::kJson;
  if (format == "perfetto") return OutputFormat::kPerfetto;
  if (!format.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown --format '", flag, "': use 'perfetto' (protobuf trace) or 'json' (Chrome trace)"));
  }
  const std::string lower = absl::AsciiStrToLower(output);
  if (absl::EndsWith(lower, ".pftrace") || absl::EndsWith(lower, ".perfetto-trace")) {
    return OutputFormat::kPerfetto;
  }
  return OutputFormat::kJson;
}

// The one dump pipeline with the sinks the flags ask for. The trace is streamed into the
// file shell, which replaces `output` only when the whole dump succeeds.
absl::Status RunDump(const LoadedTrace& trace, const DumpOptions& options, OutputFormat format,
                     const ChromeTraceOptions& chrome, const std::string& output,
                     SummarySink* summary, DumpResult& result) {
  std::vector<TraceSink*> sinks;
  if (summary != nullptr) sinks.push_back(summary);
  if (output.empty()) return DumpTrace(trace.layout, trace.words, options, sinks, result);
  const bool perfetto = format == OutputFormat::kPerfetto;
  return WriteFileAtomically(
      output,
      [&](llvm::raw_ostream& os) {
        os.SetBufferSize(size_t{1} << 20);
        std::unique_ptr<TraceSink> writer;
        if (perfetto) {
          writer = std::make_unique<PerfettoWriter>(os);
        } else {
          writer = std::make_unique<ChromeTraceSink>(chrome, os);
        }
        sinks.insert(sinks.begin(), writer.get());
        return DumpTrace(trace.layout, trace.words, options, sinks, result);
      },
      {.role = perfetto ? "Perfetto trace" : "Chrome trace"});
}

// Outputs never replace an input (base/file.h) nor each other.
absl::Status CheckOutputs(const std::string& output, const std::string& report_path) {
  if (!output.empty()) RETURN_IF_ERROR(CheckNotAnInput(output, "trace (--output)"));
  if (!report_path.empty()) {
    RETURN_IF_ERROR(CheckNotAnInput(report_path, "verdict report (--report)"));
  }
  if (!output.empty() && output != "-" && output == report_path) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--output and --report both name ", output, ": give each output its own path"));
  }
  return absl::OkStatus();
}

int Dump() {
  const std::string input = absl::GetFlag(FLAGS_input);
  const std::string output = absl::GetFlag(FLAGS_output);
  const std::string report_path = absl::GetFlag(FLAGS_report);
  const bool summary = absl::GetFlag(FLAGS_summary);
  const uint64_t sm_clock_khz = absl::GetFlag(FLAGS_sm_clock_khz);
  if (input.empty()) {
    return Fail(absl::InvalidArgumentError("--input=PREFIX is required (reads PREFIX.bin and "
                                           "PREFIX.json)"));
  }
  if (output.empty() && report_path.empty() && !summary) {
    return Fail(absl::InvalidArgumentError(
        "nothing to do: give --output=trace.json, --report=verdict.json or --summary"));
  }
  absl::StatusOr<ChromeEventStyle> style = ParseChromeEventStyle(absl::GetFlag(FLAGS_events));
  if (!style.ok()) return Fail(style.status());
  absl::StatusOr<OutputFormat> format = ChooseFormat(absl::GetFlag(FLAGS_format), output);
  if (!format.ok()) return Fail(format.status());
  absl::StatusOr<ChromeSliceArgs> slice_args = ParseChromeSliceArgs(absl::GetFlag(FLAGS_json_args));
  if (!slice_args.ok()) return Fail(slice_args.status());

  // Mosaic GPU buffers: converted with the requested clock, and their overflows explained.
  std::vector<MosaicOverflow> overflows;
  bool mosaic = false;
  LoadOptions load_options;
  load_options.importers[kMosaicSidecarFormat] =
      [&](absl::string_view prefix, absl::string_view json) -> absl::StatusOr<LoadedTrace> {
    mosaic = true;
    MosaicImportOptions options;
    if (sm_clock_khz != 0) options.sm_clock_khz = sm_clock_khz;
    absl::StatusOr<MosaicImport> imported = ImportMosaicGpu(prefix, json, options);
    if (!imported.ok()) return imported.status();
    overflows = std::move(imported->overflows);
    return std::move(imported->trace);
  };
  absl::StatusOr<LoadedTrace> trace = LoadTrace(input, load_options);
  if (!trace.ok()) return Fail(trace.status());
  // LoadTrace registered PREFIX.bin and PREFIX.json as inputs: refuse before writing anything.
  if (absl::Status s = CheckOutputs(output, report_path); !s.ok()) return Fail(s);
  if (sm_clock_khz != 0 && !mosaic) trace->layout.clock.nominal_sm_clock_khz = sm_clock_khz;

  DumpOptions options;
  options.verify.allow_truncated = absl::GetFlag(FLAGS_allow_truncated);
  options.timeline.compensate_overhead = absl::GetFlag(FLAGS_compensate_overhead);
  ChromeTraceOptions chrome;
  chrome.events = *style;
  chrome.args = *slice_args;
  std::optional<SummarySink> summary_sink;
  if (summary) summary_sink.emplace();
  DumpResult result;
  const absl::Status status =
      RunDump(*trace, options, *format, chrome, output,
              summary_sink ? &*summary_sink : nullptr, result);
  const VerifyReport& report = result.report;
  const bool decoded = result.decoded;
  for (const MosaicOverflow& overflow : overflows) {
    PrintProblem(report.ok() ? "warning" : "error", overflow.message);
  }
  if (decoded && !report_path.empty()) {
    if (absl::Status s = WriteVerifyReportFile(report, trace->layout, report_path); !s.ok()) {
      return Fail(s);
    }
  }
  if (decoded && !report.ok()) {
    Fail(status);
    PrintProblem("error",
                 "the trace failed verification; --allow-truncated keeps each unit's valid "
                 "prefix and reports these as warnings");
    return kExitVerifyFailed;
  }
  if (!status.ok()) return Fail(status);
  for (const Finding& finding : report.findings) {
    if (finding.severity == Severity::kWarning) PrintProblem("warning", FormatFinding(finding));
  }
  if (summary_sink.has_value() && summary_sink->summary().has_value()) {
    PrintSummary(*summary_sink->summary(), llvm::outs());
    llvm::outs().flush();
  }
  const auto& v = report.verdict_counts;
  llvm::errs() << "warptrace: " << report.units.size() << " units (complete "
               << v[static_cast<int>(Verdict::kComplete)] << ", truncated "
               << v[static_cast<int>(Verdict::kTruncated)] << ", overflowed "
               << v[static_cast<int>(Verdict::kOverflowed)] << ", corrupt "
               << v[static_cast<int>(Verdict::kCorrupt)] << ", missing "
               << v[static_cast<int>(Verdict::kMissing)] << "), " << report.kept_events
               << " events";
  if (!output.empty() && output != "-") llvm::errs() << " -> " << output;
  llvm::errs() << "\n";
  return kExitOk;
}

// absl flags are C identifiers; accept the documented dashed spellings too.
std::vector<char*> NormalizeFlagNames(int argc, char** argv, std::vector<std::string>& storage) {
  storage.assign(argv, argv + argc);
  for (std::string& arg : storage) {
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) continue;
    const size_t end = std::min(arg.find('='), arg.size());
    for (size_t i = 2; i < end; ++i) {
      if (arg[i] == '-') arg[i] = '_';
    }
  }
  std::vector<char*> out;
  for (std::string& arg : storage) out.push_back(arg.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace
}  // namespace warptrace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "turns a saved warptrace (or Mosaic GPU) trace buffer into a verified Perfetto or "
      "Chrome trace.\n"
      "usage: warptrace dump --input=PREFIX --output=trace.pftrace|trace.json\n"
      "           [--format=perfetto|json] [--summary] [--report=verdict.json]\n"
      "           [--allow-truncated] [--compensate-overhead] [--events=x|be]\n"
      "           [--json-args=lean|full] [--sm-clock-khz=N]\n"
      "exit status: 0 ok, 1 bad usage or unreadable input, 2 the trace failed verification");
  std::vector<std::string> storage;
  std::vector<char*> args = warptrace::NormalizeFlagNames(argc, argv, storage);
  std::vector<char*> positional = absl::ParseCommandLine(static_cast<int>(args.size() - 1),
                                                         args.data());
  if (positional.size() != 2 || absl::string_view(positional[1]) != "dump") {
    std::string got;
    for (size_t i = 1; i < positional.size(); ++i) absl::StrAppend(&got, " ", positional[i]);
    llvm::errs() << "warptrace: error: expected the command 'dump'"
                 << (got.empty() ? std::string() : absl::StrCat(", got:", got))
                 << " (see warptrace --help)\n";
    return warptrace::kExitBadInput;
  }
  return warptrace::Dump();
}
