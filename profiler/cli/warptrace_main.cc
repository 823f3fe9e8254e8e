// warptrace: turns a saved trace buffer into a verified Perfetto or Chrome trace, a verdict
// report, a summary table and an analysis with its diagnosis; compares two traces.
//
//   warptrace dump --input=PREFIX --output=trace.pftrace|trace.json [--format=perfetto|json]
//                  [--summary] [--analysis=analysis.json] [--report=verdict.json]
//                  [--allow-truncated] [--compensate-overhead] [--events=x|be|mosaic]
//                  [--json-args=lean|full] [--sm-clock-khz=N]
//                  [--mosaic-overhead=true|false] [--mosaic-clock-khz=N]
//                  [--causal-profile=false]
//   warptrace diff --before=PREFIX --after=PREFIX [--json=diff.json] [--rows=N]
//                  [--fail-if-slower=PCT [--regions=NAME,...]] [--compensate-overhead]
//                  [--sm-clock-khz=N]
//   warptrace diff --before=PREFIX --what-if="[ROLE:]NAME=FACTOR|-DURATION[; ...]" [...]
//                  (after: the launch predicted from PREFIX, as whatif --diff)
//   warptrace whatif --input=PREFIX --speedup="[ROLE:]NAME=FACTOR|-DURATION[; ...]"
//                  [--output=pred.pftrace|pred.json] [--json=whatif.json] [--diff]
//                  [--causal-profile=false] [--rows=N]
//   warptrace dump --input=PREFIX --what-if="mma=0.5" --output=pred.pftrace   (the same
//                  prediction; --output is then the predicted launch)
//
// whatif (profiler/analysis/whatif.h) re-times the recorded launch over its hand-off graph
// ("mma=0.5": every mma instance takes half its time; "producer:load=-2000ns": each of the
// producer's load instances 2 us shorter; specs separated by ';') and prints the measured and
// predicted kernel time, per role, the predicted diagnosis and the causal profile; --output
// writes the predicted launch as a trace that opens beside the measured one, --diff prints
// `warptrace diff` of measured (before) against predicted (after), --json writes it all.
// dump --summary and --analysis add the causal profile (the table under the diagnosis, and
// "causal_profile" in the JSON) unless --causal-profile=false, and so does whatif; a trace
// the graph cannot predict (no hand-offs, e.g. a Mosaic GPU buffer) gets a limitation line
// saying why instead of a table, never a failed dump.
//
// dump --summary prints the summary table and then, under "diagnosis:", the analysis'
// ranked findings (profiler/analysis/diagnosis.h); --analysis writes the whole analysis as
// JSON (profiler/analysis/analysis_json.h).
//
// diff compares two traces of a kernel per (role, region, loop iteration) with a rank test
// (profiler/analysis/diff.h) and prints the table on stdout; --json writes all of it.
// With --what-if=SPEC instead of --after, the after side is the launch whatif predicts from
// --before under SPEC (the same diff as whatif --diff). --fail-if-slower=PCT exits 3 when the kernel's block time or a region (only those named by
// --regions, when given) got slower by more than PCT percent with significance: a
// regression gate for CI.
//
// The output format is --format's, or else --output's extension: .pftrace or
// .perfetto-trace write Perfetto's protobuf trace (profiler/outputs/perfetto/perfetto_writer.h),
// anything else Chrome trace JSON (profiler/outputs/chrome_trace.h). --events=mosaic writes
// exactly the events of JAX Mosaic GPU's own dump (profiler/outputs/mosaic_trace.h), with
// Mosaic's overhead compensation (--mosaic-overhead=false: none) and its cycles counted as
// ns (--mosaic-clock-khz=N: converted at N kHz instead, which are not Mosaic's numbers).
//
// PREFIX names PREFIX.bin (raw words) and PREFIX.json (the sidecar); PREFIX.bin or PREFIX.json
// may be given for it (profiler/imports/sidecar.h, ResolveTracePrefix): a "warptrace" sidecar
// (profiler/imports/sidecar.h) or a "mosaic-gpu" one (profiler/imports/mosaic_import.h). Flags may be
// spelled with dashes or underscores (--allow-truncated, --allow_truncated).
//
// SIGINT (Ctrl-C) and SIGTERM stop a dump within milliseconds: nothing is written, and
// warptrace dies of the signal; ignored signals stay ignored (StopSignals below).
//
// Exit status: 0 when every requested output was written; 1 for a usage error, out of memory
// ("warptrace: error: out of memory: ..."), an output
// path that names an input (PREFIX.bin, PREFIX.json: an output never replaces an input) or
// another output, or an input that cannot be read or decoded (missing file, sizes that
// disagree with the layout, a bad sidecar); 2 when a trace fails verification (nothing but
// --report is written then; --allow-truncated keeps each unit's valid prefix instead); 3
// (diff) when --fail-if-slower found a significant slowdown. Every problem is one line on
// stderr starting with "warptrace: error: " (or "warptrace: warning: ").
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/exception_status.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/diagnosis.h"
#include "profiler/analysis/diff.h"
#include "profiler/analysis/whatif.h"
#include "profiler/dump/collector.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/frontend/dump_settings.h"
#include "profiler/frontend/whatif_files.h"
#include "profiler/imports/mosaic_import.h"
#include "profiler/outputs/chrome_trace_options.h"
#include "profiler/outputs/pipeline_trace.h"
#include "profiler/trace/verify.h"

ABSL_FLAG(std::string, input, "",
          "PREFIX of the saved trace (or PREFIX.bin / PREFIX.json): reads PREFIX.bin and "
          "PREFIX.json (required); dump takes several, A,B,..., the launches of a program of "
          "several kernels, and writes their one pipeline trace to --output");
ABSL_FLAG(std::string, output, "",
          warptrace::DumpSettingDoc("output"));
ABSL_FLAG(std::string, format, "",
          warptrace::DumpSettingDoc("format"));
ABSL_FLAG(bool, summary, warptrace::DumpSettingBoolDefault("summary"),
          warptrace::DumpSettingDoc("summary"));
ABSL_FLAG(std::string, analysis, "",
          warptrace::DumpSettingDoc("analysis_output"));
ABSL_FLAG(std::string, speedup, "",
          "whatif: the re-timing, [ROLE:]NAME=FACTOR or [ROLE:]NAME=-DURATION (ns, us, ms), "
          "several separated by ';' (e.g. \"mma=0.5\", \"producer:load=-2000ns\")");
ABSL_FLAG(std::string, what_if, "",
          "dump: predict this re-timing (as whatif's --speedup) and write the predicted launch "
          "to --output; diff: compare --before against its prediction under this re-timing");
ABSL_FLAG(bool, diff, false, "whatif: print the diff of the measured against the predicted launch");
ABSL_FLAG(std::string, causal_profile,
          std::string(warptrace::DumpSettingSpecOf("causal_profile").default_text),
          warptrace::DumpSettingDoc("causal_profile"));
ABSL_FLAG(std::string, before, "", "diff: PREFIX of the trace before the change");
ABSL_FLAG(std::string, after, "", "diff: PREFIX of the trace after the change");
ABSL_FLAG(std::string, json, "", "diff: write the whole diff as JSON here");
ABSL_FLAG(uint64_t, rows, 20, "diff: region rows to print (--json has all)");
ABSL_FLAG(double, fail_if_slower, -1,
          "diff: exit 3 when the block time or a region got slower by more than this many "
          "percent with significance (off when negative)");
ABSL_FLAG(std::string, regions, "",
          "diff: comma-separated region names --fail-if-slower checks (default: all; "
          "'(block)' is the block time)");
ABSL_FLAG(std::string, report, "",
          warptrace::DumpSettingDoc("report"));
ABSL_FLAG(bool, allow_truncated, warptrace::DumpSettingBoolDefault("allow_truncated"),
          warptrace::DumpSettingDoc("allow_truncated"));
ABSL_FLAG(bool, compensate_overhead, warptrace::DumpSettingBoolDefault("compensate_overhead"),
          warptrace::DumpSettingDoc("compensate_overhead"));
ABSL_FLAG(std::string, events, std::string(warptrace::DumpSettingSpecOf("events").default_text),
          warptrace::DumpSettingDoc("events"));
ABSL_FLAG(bool, mosaic_overhead, warptrace::DumpSettingBoolDefault("mosaic_overhead"),
          warptrace::DumpSettingDoc("mosaic_overhead"));
ABSL_FLAG(uint64_t, mosaic_clock_khz, warptrace::DumpSettingIntDefault("mosaic_clock_khz"),
          warptrace::DumpSettingDoc("mosaic_clock_khz"));
ABSL_FLAG(std::string, json_args,
          std::string(warptrace::DumpSettingSpecOf("json_args").default_text),
          warptrace::DumpSettingDoc("json_args"));
ABSL_FLAG(uint64_t, sm_clock_khz, warptrace::DumpSettingIntDefault("sm_clock_khz"),
          warptrace::DumpSettingDoc("sm_clock_khz"));
ABSL_FLAG(int32_t, threads, warptrace::DumpSettingIntDefault("threads"),
          warptrace::DumpSettingDoc("threads"));

namespace warptrace {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitVerifyFailed = 2;
constexpr int kExitSlower = 3;

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

int WhatIf(const std::string& speedup, const std::string& output);

// The signal that asked the dump to stop (SIGINT, SIGTERM), 0 while none did.
volatile std::sig_atomic_t stop_signal = 0;
extern "C" void OnStopSignal(int sig) { stop_signal = sig; }

// Ctrl-C (SIGINT) and SIGTERM stop a dump at its next poll (DumpRequest::cancelled: a few
// milliseconds), which removes the output's temporary file and writes nothing more; then
// warptrace dies of the signal, as a program interrupted should. A second one kills at once
// (SA_RESETHAND). A signal ignored when warptrace started (SIGINT of a background job) stays
// ignored: the dump goes on, its temporary file untouched. The handler only records the
// signal: nothing is deleted from a signal handler.
class StopSignals {
 public:
  StopSignals() {
    for (int sig : {SIGINT, SIGTERM}) {
      struct sigaction old {};
      sigaction(sig, nullptr, &old);
      if (old.sa_handler == SIG_IGN) continue;
      struct sigaction sa {};
      sa.sa_handler = OnStopSignal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESETHAND;
      sigaction(sig, &sa, nullptr);
    }
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  static bool Stopped() { return stop_signal != 0; }

  // After a cancelled dump: says so, then dies of the signal (exit 128 + signal if it
  // returns at all).
  [[noreturn]] static void DieOfTheSignal() {
    const int sig = stop_signal;
    llvm::errs() << "warptrace: error: interrupted by " << (sig == SIGINT ? "SIGINT" : "SIGTERM")
                 << ": the dump stopped and wrote nothing\n";
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    std::_Exit(128 + sig);
  }
};

// How the CLI spells a dump setting in messages: "--sm-clock-khz", or "\"key\"" for one
// without a flag.
std::string CliSpelling(absl::string_view key) {
  const DumpSettingSpec* spec = FindDumpSetting(key);
  if (spec == nullptr || spec->cli_flag.empty()) return absl::StrCat("\"", key, "\"");
  return absl::StrCat("--", absl::StrReplaceAll(spec->cli_flag, {{"_", "-"}}));
}

// --causal-profile (whatif's too), as the dump setting reads it.
absl::StatusOr<bool> CausalProfileFlag() {
  ASSIGN_OR_RETURN(SettingValue value,
                   ParseSettingText(DumpSettingSpecOf("causal_profile"),
                                    absl::GetFlag(FLAGS_causal_profile), "--causal-profile"));
  return std::get<bool>(value);
}

// The dump's settings from the command line: every setting with a CLI flag (dump_settings.h),
// read as its flag's text and set through the one schema, so the CLI's defaults, bounds and
// messages are the C API's and python's.
absl::StatusOr<DumpSettings> DumpSettingsFromFlags() {
  DumpSettings settings;
  for (const DumpSettingSpec& spec : DumpSettingSpecs()) {
    if (spec.cli_flag.empty()) continue;
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(spec.cli_flag);
    if (flag == nullptr) {
      return absl::InternalError(absl::StrCat("the dump setting ", spec.key,
                                              " has no --", spec.cli_flag, " flag"));
    }
    const std::string spelled = CliSpelling(spec.key);
    ASSIGN_OR_RETURN(SettingValue value, ParseSettingText(spec, flag->CurrentValue(), spelled));
    RETURN_IF_ERROR(SetDumpSetting(settings, spec.key, value, spelled));
  }
  return settings;
}

// `dump --input=A,B,...`: the saved launches of a program of several kernels as one trace
// (profiler/outputs/pipeline_trace.h), each verified; --output only.
int DumpPipeline(const std::vector<std::string>& inputs, const DumpSettings& settings) {
  if (settings.output.empty() || settings.output == "-" || !settings.report.empty() ||
      settings.summary || !settings.analysis_output.empty() || settings.events != "x" ||
      settings.json_args != "lean") {
    return Fail(absl::InvalidArgumentError(
        "with several inputs (--input=A,B: the launches of a program of several kernels) dump "
        "writes their one pipeline trace: give --output=FILE.pftrace or FILE.json only "
        "(--allow-truncated, --compensate-overhead and --sm-clock-khz apply to each launch)"));
  }
  absl::StatusOr<TraceFormat> format = ChooseTraceFormat(settings.format, settings.output);
  if (!format.ok()) return Fail(format.status());
  DumpOptions options;
  options.verify.allow_truncated = settings.allow_truncated;
  options.timeline.compensate_overhead = settings.compensate_overhead;
  std::vector<std::unique_ptr<Trace>> traces;
  std::vector<PipelineLaunchTimeline> launches;
  for (const std::string& input : inputs) {
    absl::StatusOr<LoadedDump> loaded = LoadForDump(input, settings.sm_clock_khz);
    if (!loaded.ok()) return Fail(loaded.status());
    absl::StatusOr<std::unique_ptr<Trace>> trace =
        CollectTrace(loaded->trace.layout, loaded->trace.words.ToVector(), options);
    if (!trace.ok()) {
      return Fail(absl::Status(trace.status().code(),
                               absl::StrCat(input, ": ", trace.status().message())));
    }
    if (!(*trace)->report.ok()) {
      PrintProblem("error", absl::StrCat(input, ": the trace failed verification (",
                                         (*trace)->report.errors,
                                         " errors); --allow-truncated keeps each unit's valid "
                                         "prefix"));
      return kExitVerifyFailed;
    }
    launches.push_back({std::string(llvm::sys::path::filename(input)), &(*trace)->timeline});
    traces.push_back(*std::move(trace));
  }
  const absl::Status written = *format == TraceFormat::kPerfetto
                                   ? WritePipelinePerfettoTraceFile(launches, settings.output)
                                   : WritePipelineChromeTraceFile(launches, settings.output);
  if (!written.ok()) return Fail(written);
  return kExitOk;
}

int Dump() {
  const std::string input = absl::GetFlag(FLAGS_input);
  if (const std::string what_if = absl::GetFlag(FLAGS_what_if); !what_if.empty()) {
    return WhatIf(what_if, absl::GetFlag(FLAGS_output));
  }
  if (input.empty()) {
    return Fail(absl::InvalidArgumentError("--input=PREFIX is required (reads PREFIX.bin and "
                                           "PREFIX.json)"));
  }
  absl::StatusOr<DumpSettings> settings = DumpSettingsFromFlags();
  if (!settings.ok()) return Fail(settings.status());
  if (absl::StrContains(input, ',')) {
    return DumpPipeline(absl::StrSplit(input, ',', absl::SkipEmpty()), *settings);
  }
  const std::string& output = settings->output;
  if (output.empty() && settings->report.empty() && !settings->summary &&
      settings->analysis_output.empty()) {
    return Fail(absl::InvalidArgumentError(
        "nothing to do: give --output=trace.json, --report=verdict.json, --summary or "
        "--analysis=analysis.json"));
  }
  absl::StatusOr<DumpRequest> made = MakeDumpRequest(*settings, CliSpelling);
  if (!made.ok()) return Fail(made.status());
  DumpRequest& request = *made;

  // A Mosaic buffer is decoded where it lies: the dump holds the mapped input, no copy.
  absl::StatusOr<LoadedDump> loaded =
      LoadForDump(input, settings->sm_clock_khz, settings->threads, /*in_place=*/true);
  if (!loaded.ok()) return Fail(loaded.status());
  // LoadTrace registered PREFIX.bin and PREFIX.json as inputs: the dump refuses an output
  // naming either before it writes anything.
  StopSignals signals;
  request.cancelled = [] { return StopSignals::Stopped(); };
  const DumpOutcome outcome = DumpLoadedToFiles(*loaded, request);
  if (absl::IsCancelled(outcome.status) && StopSignals::Stopped()) StopSignals::DieOfTheSignal();
  const VerifyReport& report = outcome.result.report;
  for (const MosaicOverflow& overflow : loaded->overflows) {
    PrintProblem(report.ok() ? "warning" : "error", overflow.message);
  }
  if (!outcome.failed_output.empty()) return Fail(outcome.status);
  if (outcome.result.decoded && !report.ok()) {
    Fail(outcome.status);
    PrintProblem("error",
                 "the trace failed verification; --allow-truncated keeps each unit's valid "
                 "prefix and reports these as warnings");
    return kExitVerifyFailed;
  }
  if (!outcome.status.ok()) return Fail(outcome.status);
  for (const Finding& finding : report.findings) {
    if (finding.severity == Severity::kWarning) PrintProblem("warning", FormatFinding(finding));
  }
  PrintSummaryAndDiagnosis(outcome, llvm::outs());
  llvm::outs().flush();
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

// One side of a diff: loaded, dumped into a DiffCollector. Returns the exit code on failure.
std::optional<int> Collect(const std::string& flag, const std::string& prefix,
                           DiffCollector& collector) {
  if (prefix.empty()) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("--", flag, "=PREFIX is required (reads PREFIX.bin and PREFIX.json)")));
  }
  // A written trace (a predicted launch, or a dump's output) holds no buffer to diff.
  for (absl::string_view ext : {".pftrace", ".perfetto-trace", ".json"}) {
    if (!absl::EndsWith(prefix, ext)) continue;
    if (ext == ".json" && llvm::sys::fs::exists(prefix + ".bin")) break;  // a prefix "x.json"
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "--", flag, "=", prefix, " is a written ", ext == ".json" ? "Chrome" : "Perfetto",
        " trace, not a recorded launch: diff reads PREFIX.bin and PREFIX.json. To diff a "
        "launch against its prediction, give the measured prefix and the re-timing: "
        "warptrace diff --before=PREFIX --what-if=\"SPEC\" (the predicted trace opens beside "
        "the measured one in Perfetto)")));
  }
  absl::StatusOr<LoadedDump> loaded =
      LoadForDump(prefix, absl::GetFlag(FLAGS_sm_clock_khz), 1, /*in_place=*/true);
  if (!loaded.ok()) return Fail(loaded.status());
  DumpRequest request;
  request.timeline.compensate_overhead = absl::GetFlag(FLAGS_compensate_overhead);
  for (TraceSink* sink : collector.sinks()) request.sinks.push_back(sink);
  const DumpOutcome outcome = DumpLoadedToFiles(*loaded, request);
  if (!outcome.status.ok()) {
    PrintProblem("error", absl::StrCat("--", flag, "=", prefix, ":"));
    const DumpResult& result = outcome.result;
    return Fail(outcome.status,
                result.decoded && !result.report.ok() ? kExitVerifyFailed : kExitBadInput);
  }
  return std::nullopt;
}

// diff --what-if=SPEC: the recorded launch --before (or --input) against its prediction
// under SPEC, as `whatif --diff` computes it. Returns the exit code on failure.
std::optional<int> PredictedDiff(const std::string& what_if, TraceDiff& diff) {
  std::string input = absl::GetFlag(FLAGS_before);
  const std::string other = absl::GetFlag(FLAGS_input);
  if (!input.empty() && !other.empty() && input != other) {
    return Fail(absl::InvalidArgumentError("diff --what-if: give the measured trace once, as "
                                           "--before=PREFIX or --input=PREFIX"));
  }
  if (input.empty()) input = other;
  if (input.empty()) {
    return Fail(absl::InvalidArgumentError(
        "diff --what-if: --before=PREFIX is required (the measured trace; the prediction is "
        "the after side)"));
  }
  if (!absl::GetFlag(FLAGS_after).empty()) {
    return Fail(absl::InvalidArgumentError(
        "diff --what-if: the prediction is the after side; give no --after"));
  }
  absl::StatusOr<LoadedDump> loaded = LoadForDump(input, absl::GetFlag(FLAGS_sm_clock_khz));
  if (!loaded.ok()) return Fail(loaded.status());
  WhatIfRequest request;
  request.speedups = {what_if};
  request.timeline.compensate_overhead = absl::GetFlag(FLAGS_compensate_overhead);
  request.causal_profile = false;
  request.diff = true;
  WhatIfOutcome outcome = WhatIfToFiles(loaded->trace.layout, loaded->trace.words, request);
  if (!outcome.status.ok()) {
    if (loaded->mosaic && absl::IsFailedPrecondition(outcome.status)) {
      PrintProblem("error", "a Mosaic GPU buffer records no hand-offs");
    }
    return Fail(outcome.status);
  }
  diff = *std::move(outcome.diff);
  return std::nullopt;
}

int Diff() {
  const std::string json_path = absl::GetFlag(FLAGS_json);
  TraceDiff diff;
  if (const std::string what_if = absl::GetFlag(FLAGS_what_if); !what_if.empty()) {
    if (std::optional<int> code = PredictedDiff(what_if, diff)) return *code;
  } else {
    DiffCollector before, after;
    if (std::optional<int> code = Collect("before", absl::GetFlag(FLAGS_before), before)) {
      return *code;
    }
    if (std::optional<int> code = Collect("after", absl::GetFlag(FLAGS_after), after)) {
      return *code;
    }
    diff = DiffTraces(before, after);
  }
  // The traces were read (and registered as inputs): refuse before writing anything.
  if (!json_path.empty()) {
    if (absl::Status s = CheckNotAnInput(json_path, "diff (--json)"); !s.ok()) return Fail(s);
  }
  PrintTraceDiff(diff, llvm::outs(), absl::GetFlag(FLAGS_rows));
  llvm::outs().flush();
  if (!json_path.empty()) {
    const absl::Status written = WriteFileAtomically(
        json_path,
        [&](llvm::raw_ostream& os) {
          WriteTraceDiffJson(diff, os);
          os << "\n";
          return absl::OkStatus();
        },
        {.role = "diff"});
    if (!written.ok()) return Fail(written);
  }
  const double percent = absl::GetFlag(FLAGS_fail_if_slower);
  if (percent < 0) return kExitOk;
  std::vector<std::string> names;
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_regions), ',', absl::SkipWhitespace())) {
    names.emplace_back(name);
  }
  const std::vector<const DiffRow*> slower = SlowerThan(diff, percent, names);
  for (const DiffRow* r : slower) {
    PrintProblem("error", absl::StrFormat("%s %s got %.1f%% slower (mean %s -> %s, p = %.2g), "
                                          "more than --fail-if-slower=%g",
                                          r->role, r->name, r->change * 100,
                                          FormatNs(r->mean_before), FormatNs(r->mean_after),
                                          r->p_value, percent));
  }
  return slower.empty() ? kExitOk : kExitSlower;
}

// `warptrace whatif` (and `dump --what-if`): the prediction, printed; the predicted launch to
// `output`.
int WhatIf(const std::string& speedup, const std::string& output) {
  const std::string input = absl::GetFlag(FLAGS_input);
  if (input.empty()) {
    return Fail(absl::InvalidArgumentError("--input=PREFIX is required (reads PREFIX.bin and "
                                           "PREFIX.json)"));
  }
  if (speedup.empty()) {
    return Fail(absl::InvalidArgumentError(
        "--speedup is required, e.g. --speedup=\"mma=0.5\" or \"producer:load=-2000ns\""));
  }
  WhatIfRequest request;
  request.speedups = {speedup};
  request.verify.allow_truncated = absl::GetFlag(FLAGS_allow_truncated);
  request.timeline.compensate_overhead = absl::GetFlag(FLAGS_compensate_overhead);
  absl::StatusOr<bool> causal_profile = CausalProfileFlag();
  if (!causal_profile.ok()) return Fail(causal_profile.status());
  request.causal_profile = *causal_profile;
  request.diff = absl::GetFlag(FLAGS_diff);
  request.json_path = absl::GetFlag(FLAGS_json);
  if (!output.empty()) {
    absl::StatusOr<TraceFormat> format = ChooseTraceFormat(absl::GetFlag(FLAGS_format), output);
    if (!format.ok()) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("--format: ", format.status().message())));
    }
    (*format == TraceFormat::kPerfetto ? request.perfetto_path : request.chrome_path) = output;
  }
  absl::StatusOr<LoadedDump> loaded = LoadForDump(input, absl::GetFlag(FLAGS_sm_clock_khz));
  if (!loaded.ok()) return Fail(loaded.status());
  const WhatIfOutcome outcome = WhatIfToFiles(loaded->trace.layout, loaded->trace.words, request);
  if (!outcome.status.ok()) {
    if (loaded->mosaic && absl::IsFailedPrecondition(outcome.status)) {
      PrintProblem("error", "a Mosaic GPU buffer records no hand-offs");
    }
    return Fail(outcome.status);
  }
  PrintWhatIf(outcome.prediction, llvm::outs());
  if (outcome.profile.has_value()) PrintCausalProfile(*outcome.profile, llvm::outs());
  if (outcome.diff.has_value()) {
    llvm::outs() << "diff (before: measured, after: predicted):\n";
    PrintTraceDiff(*outcome.diff, llvm::outs(), absl::GetFlag(FLAGS_rows));
  }
  llvm::outs().flush();
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

namespace warptrace {
namespace {
int Main(int argc, char** argv);
}  // namespace
}  // namespace warptrace

// An input is read where it lies (memory-mapped): a file truncated by someone else while it
// is read faults with SIGBUS on the pages past its new end. That is one clear line and exit
// status 1, not a crash with no message. Only async-signal-safe calls here: a fixed message
// and _exit (the output's temporary file has no name, or is swept by the next dump).
extern "C" void OnInputTruncated(int) {
  static constexpr char kMessage[] =
      "warptrace: error: an input file shrank while it was being read (SIGBUS on its memory "
      "map): another program truncated or rewrote it; dump it again once nothing writes it\n";
  const ssize_t ignored = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  (void)ignored;
  std::_Exit(1);
}

// Exceptions stop here: out of memory (std::bad_alloc anywhere in the dump, on any of its
// threads, or a thread that could not start) is one "warptrace: error: out of memory ..."
// line and exit 1, never an abort. By now the dump's memory was given back by unwinding,
// and the output's temporary file removed.
int main(int argc, char** argv) {
  struct sigaction bus {};
  bus.sa_handler = OnInputTruncated;
  sigemptyset(&bus.sa_mask);
  sigaction(SIGBUS, &bus, nullptr);
  try {
    return warptrace::Main(argc, argv);
  } catch (...) {
    const absl::Status status = warptrace::StatusOfCurrentException();
    llvm::errs() << "warptrace: error: "
                 << llvm::StringRef(status.message().data(), status.message().size()) << "\n";
    return warptrace::kExitBadInput;
  }
}

namespace warptrace {
namespace {

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "turns a saved warptrace (or Mosaic GPU) trace buffer into a verified Perfetto or "
      "Chrome trace.\n"
      "usage: warptrace dump --input=PREFIX --output=trace.pftrace|trace.json\n"
      "           [--format=perfetto|json] [--summary] [--analysis=analysis.json]\n"
      "           [--report=verdict.json] [--allow-truncated] [--compensate-overhead]\n"
      "           [--events=x|be|mosaic] [--json-args=lean|full] [--sm-clock-khz=N]\n"
      "           [--mosaic-overhead=true|false] [--mosaic-clock-khz=N]\n"
      "           [--causal-profile=false]\n"
      "       warptrace diff --before=PREFIX --after=PREFIX [--json=diff.json] [--rows=N]\n"
      "           [--fail-if-slower=PCT [--regions=NAME,...]]\n"
      "       warptrace diff --before=PREFIX --what-if=\"mma=0.5\" [diff's other flags]\n"
      "       warptrace whatif --input=PREFIX --speedup=\"mma=0.5; producer:load=-2000ns\"\n"
      "           [--output=pred.pftrace] [--json=whatif.json] [--diff] [--causal-profile=false]\n"
      "exit status: 0 ok, 1 bad usage or unreadable input, 2 a trace failed verification,\n"
      "3 diff --fail-if-slower found a significant slowdown");
  // --help, -h or help, anywhere: the usage and the CLI's flags on stdout, exit status 0
  // (absl's own --help exits 1, which scripts take for a failure).
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--help" || arg == "-help" || arg == "-h" || arg == "--helpfull" ||
        (i == 1 && arg == "help")) {
      absl::flags_internal::FlagsHelp(std::cout, "profiler/cli/",
                                      absl::flags_internal::HelpFormat::kHumanReadable,
                                      absl::ProgramUsageMessage());
      return 0;
    }
  }
  std::vector<std::string> storage;
  std::vector<char*> args = warptrace::NormalizeFlagNames(argc, argv, storage);
  std::vector<char*> positional = absl::ParseCommandLine(static_cast<int>(args.size() - 1),
                                                         args.data());
  const absl::string_view command = positional.size() == 2 ? positional[1] : "";
  if (command != "dump" && command != "diff" && command != "whatif") {
    std::string got;
    for (size_t i = 1; i < positional.size(); ++i) absl::StrAppend(&got, " ", positional[i]);
    llvm::errs() << "warptrace: error: expected the command 'dump', 'diff' or 'whatif'"
                 << (got.empty() ? std::string() : absl::StrCat(", got:", got))
                 << " (see warptrace --help)\n";
    return warptrace::kExitBadInput;
  }
  if (command == "whatif") {
    return warptrace::WhatIf(absl::GetFlag(FLAGS_speedup), absl::GetFlag(FLAGS_output));
  }
  return command == "dump" ? warptrace::Dump() : warptrace::Diff();
}

}  // namespace
}  // namespace warptrace
