#include "examples/example_main.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <system_error>
#include <limits>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "examples/launch_timing.h"
#include "jit/builder/kernel_builder.h"
#include "jit/platform/sanitize.h"
#include "jit/run/device_select.h"
#include "jit/target/cuda_target.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/diagnosis.h"
#include "profiler/analysis/summary.h"
#include "profiler/analysis/whatif.h"
#include "profiler/outputs/pipeline_trace.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/frontend/whatif_files.h"
#include "jit/cost/kernel_cost.h"
#include "jit/cost/recorder_cost.h"
#include "profiler/imports/sidecar.h"
#include "profiler/trace/verify.h"

ABSL_FLAG(std::string, out, "",
          "output directory (created if missing); relative paths are taken from the directory "
          "`bazel run` was started in. Default: warptrace_out there");
ABSL_FLAG(std::string, device, "auto",
          "auto (the GPU if there is one, else the host backend), cuda, or host");
ABSL_FLAG(std::string, unit, "auto",
          "trace unit: warp, warpgroup or block; auto: warpgroup if the block is a multiple "
          "of 128 threads, else warp if of 32, else block");
ABSL_FLAG(std::string, placement, "auto",
          "where events are staged: global, shared, or auto (shared when it fits)");
ABSL_FLAG(bool, profile, true,
          "instrument the kernel; --profile=false runs it uninstrumented (no trace) and still "
          "checks its result");
ABSL_FLAG(std::string, arch, "",
          "CUDA architecture to compile for, e.g. sm_90 (default: the GPU's own; ignored on "
          "the host backend)");
ABSL_FLAG(bool, loop_iterations, false, "record every iteration of every bounded loop");
ABSL_FLAG(bool, barrier_waits, false, "record every barrier's wait, from arrival to release");
ABSL_FLAG(int, host_sms, 0,
          "virtual SMs (worker threads) of the host backend: 0 for the machine's core count; "
          "at least 2");
ABSL_FLAG(std::string, sanitize, "none",
          "the host backend's sanitizer: bounds, init (comma-separated), all, or none; "
          "a finding fails the run naming the array, index, thread and builder statement "
          "(docs/sanitizer.md; ignored on a GPU)");
ABSL_FLAG(std::string, what_if, "",
          "predict the launch with this re-timing from its trace (warptrace whatif's --speedup: "
          "[ROLE:]NAME=FACTOR or [ROLE:]NAME=-DURATION, ';' between several, e.g. "
          "\"consumer:mma=0.5\"): prints the predicted kernel time, diagnosis and causal "
          "profile, writes NAME.whatif.pftrace and NAME.whatif.json under --out");
ABSL_FLAG(bool, cost, false,
          "do not run: print what the kernel costs, unprofiled and profiled (registers, "
          "spills, stack, SASS counts, HGMMA/UTMALDG/..., recorder_cost's table, and a "
          "perturbation line: what profiling changed in the kernel's own code; NVRTC for "
          "--arch, default sm_90 or sm_90a; no GPU needed) and keep each mode's .cu, NVRTC "
          "log, cubin and SASS under --out/NAME.cost");
ABSL_FLAG(int, cost_repeats, 3,
          "with --cost: NVRTC compiles per mode, the two modes alternated; the median "
          "compile time of each is reported (its ratio is the compile ratio)");
ABSL_FLAG(int, repeat, 0,
          "after the checked run, time this many launches and print the median (CUDA events "
          "on a GPU)");

namespace warptrace::examples {
namespace {

std::string FormatIndex(uint64_t index, uint32_t row_length) {
  if (row_length == 0) return absl::StrCat("[", index, "]");
  return absl::StrCat("[", index / row_length, "][", index % row_length, "]");
}

void PrintError(absl::string_view name, absl::string_view message) {
  for (absl::string_view line : absl::StrSplit(message, '\n', absl::SkipWhitespace())) {
    llvm::errs() << absl::StrCat(name, ": error: ", absl::StripLeadingAsciiWhitespace(line), "\n");
  }
  llvm::errs().flush();
}

int Fail(absl::string_view name, const absl::Status& status) {
  llvm::outs().flush();
  PrintError(name, status.message());
  return kExitFailed;
}

std::string Indent(absl::string_view text, absl::string_view prefix) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    absl::StrAppend(&out, prefix, line, "\n");
  }
  return out;
}

bool InExamples(absl::string_view file) { return absl::StrContains(file, "examples/"); }

}  // namespace

std::string Comparison::Describe() const {
  if (count == 0) return absl::StrCat(what, ": nothing was compared");
  const std::string at = absl::StrCat(what, FormatIndex(worst_index, row_length));
  if (ok()) {
    return absl::StrFormat("%s matches the CPU reference: %d values, worst |error| %.3g at %s",
                           what, count, worst_error, at);
  }
  return absl::StrFormat(
      "%s differs from the CPU reference in %d of %d values; worst at %s: got %.9g, expected "
      "%.9g, |error| %.3g > tolerance %.3g",
      what, mismatches, count, at, worst_got, worst_expected, worst_error, worst_tolerance);
}

Comparison CompareToReference(absl::string_view what, absl::Span<const float> got,
                              absl::Span<const double> expected, double rel_tolerance,
                              double abs_tolerance, uint32_t row_length) {
  Comparison c;
  c.what = std::string(what);
  c.row_length = row_length;
  c.count = std::max(got.size(), expected.size());
  c.mismatches = c.count - std::min(got.size(), expected.size());
  bool have_worst = false;
  for (size_t i = 0; i < std::min(got.size(), expected.size()); ++i) {
    const double g = got[i];
    const double e = expected[i];
    const double error = std::isnan(g) || std::isnan(e) ? std::numeric_limits<double>::infinity()
                                                        : std::abs(g - e);
    const double tolerance = abs_tolerance + rel_tolerance * std::abs(e);
    if (!(error <= tolerance)) ++c.mismatches;
    if (!have_worst || error > c.worst_error) {
      have_worst = true;
      c.worst_index = i;
      c.worst_got = g;
      c.worst_expected = e;
      c.worst_error = error;
      c.worst_tolerance = tolerance;
    }
  }
  return c;
}

Comparison CompareSampledRows(absl::string_view what, absl::Span<const float> got,
                              absl::Span<const double> expected,
                              absl::Span<const uint32_t> rows, uint32_t row_length,
                              double rel_tolerance, double abs_tolerance) {
  Comparison c =
      CompareToReference(what, got, expected, rel_tolerance, abs_tolerance, row_length);
  if (row_length > 0 && c.worst_index / row_length < rows.size()) {
    c.worst_index =
        uint64_t{rows[c.worst_index / row_length]} * row_length + c.worst_index % row_length;
  }
  return c;
}

std::string ExampleOptions::TracePath() const {
  return absl::StrCat(out_dir, "/", name, ".trace.json");
}
std::string ExampleOptions::PerfettoPath() const {
  return absl::StrCat(out_dir, "/", name, ".pftrace");
}
std::string ExampleOptions::SavePrefix() const { return absl::StrCat(out_dir, "/", name); }
std::string ExampleOptions::VerdictPath() const {
  return absl::StrCat(out_dir, "/", name, ".verdict.json");
}

std::string ResolveOutputDirectory(absl::string_view flag) {
  const std::string given = flag.empty() ? "warptrace_out" : std::string(flag);
  llvm::SmallString<256> path;
  if (!llvm::sys::path::is_absolute(given)) {
    const char* base = std::getenv("BUILD_WORKING_DIRECTORY");
    if (base != nullptr && base[0] != '\0') {
      path = base;
    } else if (llvm::sys::fs::current_path(path)) {
      path = ".";
    }
  }
  llvm::sys::path::append(path, given);
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  return std::string(path.str());
}

absl::StatusOr<ExampleOptions> OptionsFromFlags(absl::string_view name) {
  ExampleOptions options;
  options.name = std::string(name);
  auto bad = [](absl::string_view flag, absl::string_view value, absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", value, ": ", why));
  };

  const std::string device = absl::GetFlag(FLAGS_device);
  absl::StatusOr<DeviceChoice> choice = ParseDeviceChoice(device);
  if (!choice.ok()) return bad("device", device, choice.status().message());
  options.run.device = *choice;

  const std::string unit = absl::GetFlag(FLAGS_unit);
  if (unit != "auto") {
    absl::StatusOr<UnitKind> kind = ParseUnitKind(unit);
    if (!kind.ok() || *kind == UnitKind::kCustom) {
      return bad("unit", unit, "unknown trace unit; expected warp, warpgroup or block");
    }
    options.run.profile.unit = UnitSpec{*kind};
  }

  const std::string placement = absl::GetFlag(FLAGS_placement);
  absl::StatusOr<Placement> parsed_placement = ParsePlacement(placement);
  if (!parsed_placement.ok()) return bad("placement", placement, parsed_placement.status().message());
  options.run.profile.placement = *parsed_placement;

  const std::string arch = absl::GetFlag(FLAGS_arch);
  if (!arch.empty()) {
    absl::StatusOr<CudaTarget> target = CudaTarget::Parse(arch);
    if (!target.ok()) {
      return bad("arch", arch, "expected a CUDA architecture like sm_80, sm_90 or sm_90a");
    }
    options.run.device_options.cuda.target = *target;
  }

  const int host_sms = absl::GetFlag(FLAGS_host_sms);
  if (host_sms < 0 || host_sms > 1024) {
    return bad("host_sms", absl::StrCat(host_sms), "expected 0 (the core count) to 1024");
  }
  options.run.device_options.host.num_virtual_sms = static_cast<uint32_t>(host_sms);

  const std::string sanitize = absl::GetFlag(FLAGS_sanitize);
  absl::StatusOr<SanitizeOptions> checks = ParseSanitize(sanitize);
  if (!checks.ok()) return bad("sanitize", sanitize, checks.status().message());
  options.run.sanitize = *checks;
  options.run.device_options.host.sanitize = *checks;

  options.run.profile.enabled = absl::GetFlag(FLAGS_profile);
  options.run.profile.policy.loop_iterations = absl::GetFlag(FLAGS_loop_iterations);
  options.run.profile.policy.barrier_waits = absl::GetFlag(FLAGS_barrier_waits);

  options.what_if = absl::GetFlag(FLAGS_what_if);
  options.repeat = absl::GetFlag(FLAGS_repeat);
  if (options.repeat < 0) {
    return bad("repeat", absl::StrCat(options.repeat), "expected 0 (no timing) or more launches");
  }
  options.out_dir = ResolveOutputDirectory(absl::GetFlag(FLAGS_out));
  return options;
}

namespace {

void PrintVerdicts(const Trace& trace, llvm::raw_ostream& out) {
  const VerifyReport& report = trace.report;
  out << "\nverdicts: " << report.units.size() << " trace units: ";
  for (Verdict v : {Verdict::kComplete, Verdict::kTruncated, Verdict::kOverflowed,
                    Verdict::kCorrupt, Verdict::kMissing}) {
    out << report.verdict_counts[static_cast<int>(v)] << " " << VerdictName(v)
        << (v == Verdict::kMissing ? "" : ", ");
  }
  out << "; " << report.dropped_events << " dropped events, " << report.errors << " errors, "
      << report.warnings << " warnings\n";
  if (trace.layout.clock.host_backend) {
    out << "times: from the host backend (the CPU's steady clock), not a GPU: they show "
           "correctness, not GPU performance\n";
  }
}

// The summary table and, under "diagnosis:", the analysis, from the launch's one dump.
absl::Status PrintIndentedSummary(const DumpOutcome& dump, llvm::raw_ostream& out) {
  if (!dump.summary.has_value() || !dump.analysis.has_value()) {
    return absl::InternalError("the trace verified but its dump produced no summary");
  }
  out << "\nsummary:\n" << Indent(FormatSummary(*dump.summary), "  ");
  std::string diagnosis;
  llvm::raw_string_ostream diagnosis_os(diagnosis);
  PrintDiagnosis(*dump.analysis, diagnosis_os);
  diagnosis_os.flush();
  out << "\n" << diagnosis;
  return absl::OkStatus();
}

// What the launch's one dump writes under --out (RunOptions::dump): the Perfetto and Chrome
// traces and the verdict report, with the summary and the analysis kept in memory.
absl::Status RequestOutputs(const ExampleOptions& options, DumpRequest& dump) {
  if (std::error_code ec = llvm::sys::fs::create_directories(options.out_dir)) {
    return absl::UnavailableError(absl::StrCat("creating the output directory ", options.out_dir,
                                               ": ", ec.message(), " (pass --out=DIR)"));
  }
  TraceOutput& perfetto = dump.traces.emplace_back();
  perfetto.format = TraceFormat::kPerfetto;
  perfetto.path = options.PerfettoPath();
  TraceOutput& chrome = dump.traces.emplace_back();
  chrome.format = TraceFormat::kChromeJson;
  chrome.path = options.TracePath();
  dump.report_path = options.VerdictPath();
  dump.summary = true;
  dump.analysis = true;
  // Only --what_if reads the Timeline; otherwise the dump streams.
  dump.collect = !options.what_if.empty();
  return absl::OkStatus();
}

// Saves the raw buffer with its sidecar under --out, and says where everything went.
absl::Status WriteOutputs(const Trace& trace, const ExampleOptions& options,
                          llvm::raw_ostream& out) {
  RETURN_IF_ERROR(SaveTrace(options.SavePrefix(), trace.layout, trace.words));
  out << "\noutputs:\n"
      << "  Perfetto trace: " << options.PerfettoPath() << "\n"
      << "                  open it in https://ui.perfetto.dev (Open trace file): SM, unit "
         "and counter tracks, host-time anchored\n"
      << "  Chrome trace:   " << options.TracePath() << "\n"
      << "                  the same slices as JSON, for ui.perfetto.dev or "
         "chrome://tracing (Load)\n"
      << "  raw buffer:     " << options.SavePrefix() << ".bin + " << options.SavePrefix()
      << ".json (layout sidecar)\n"
      << "                  re-read: bazel run //profiler/cli:warptrace -- dump --input="
      << options.SavePrefix() << " --output=" << options.SavePrefix()
      << ".dump.json --summary\n"
      << "  verdict report: " << options.VerdictPath() << "\n";
  return absl::OkStatus();
}

// One launch under `options` (its files named by options.name): runs it, then prints its
// plan, verdicts, summary and outputs. `keep_timeline`: the dump keeps the Timeline.
absl::StatusOr<RunResult> RunLaunch(const ExampleOptions& options, Device& device,
                                    const Kernel& kernel, absl::Span<const KernelArg> args,
                                    bool keep_timeline, llvm::raw_ostream& out) {
  RunOptions run_options = options.run;
  if (run_options.profile.enabled) {
    RETURN_IF_ERROR(RequestOutputs(options, run_options.dump));
    run_options.dump.collect = run_options.dump.collect || keep_timeline;
  }
  ASSIGN_OR_RETURN(RunResult run, RunKernel(device, kernel, args, run_options));
  if (run.plan.has_value()) {
    out << "\nrecord plan (events per trace unit, derived before the launch; the buffer is "
           "sized from it):\n"
        << Indent(run.plan->Explain(), "  ");
  }
  if (run.retried) out << "\nretry: " << run.retry_note << "\n";
  if (run.trace != nullptr) {
    PrintVerdicts(*run.trace, out);
    RETURN_IF_ERROR(PrintIndentedSummary(run.dump, out));
    RETURN_IF_ERROR(WriteOutputs(*run.trace, options, out));
  } else {
    out << "\nprofiling off (--profile=false): the kernel ran uninstrumented; no trace "
           "written\n";
  }
  return run;
}

// --what_if on the launch's Timeline: prints the prediction and writes its files.
int RunWhatIf(const ExampleOptions& options, const Trace& trace, llvm::raw_ostream& out) {
  const std::string& name = options.name;
  if (!trace.has_timeline) {
    return Fail(name, absl::InternalError("--what_if: the dump kept no timeline"));
  }
  WhatIfRequest request;
  request.speedups = {options.what_if};
  request.perfetto_path = absl::StrCat(options.SavePrefix(), ".whatif.pftrace");
  request.json_path = absl::StrCat(options.SavePrefix(), ".whatif.json");
  const WhatIfOutcome what_if = WhatIfTimelineToFiles(trace.timeline, request);
  if (!what_if.status.ok()) {
    PrintError(name, absl::StrCat("--what_if: ", what_if.status.message()));
    return absl::IsInvalidArgument(what_if.status) ? kExitUsage : kExitFailed;
  }
  out << "\n";
  PrintWhatIf(what_if.prediction, out);
  if (what_if.profile.has_value()) PrintCausalProfile(*what_if.profile, out);
  out << "  predicted trace: " << request.perfetto_path << "\n  what-if JSON:    "
      << request.json_path << "\n";
  return kExitOk;
}

// The launches of a program of several kernels, in order, then its one timeline.
absl::Status RunPipelineLaunches(const ExampleOptions& options, Device& device,
                                 ExampleProblem& problem, std::vector<RunResult>& runs,
                                 llvm::raw_ostream& out) {
  std::vector<ExampleLaunch> launches;
  launches.push_back({problem.first_launch.empty() ? problem.kernel.name : problem.first_launch,
                      problem.kernel, problem.args});
  for (const ExampleLaunch& l : problem.then) launches.push_back(l);
  std::vector<std::string> names;
  for (size_t i = 0; i < launches.size(); ++i) {
    ExampleOptions launch_options = options;
    launch_options.name = absl::StrCat(options.name, ".", launches[i].name);
    out << "\n== launch " << i + 1 << " of " << launches.size() << ": " << launches[i].name
        << " (kernel " << launches[i].kernel.name << ") ==\n";
    absl::StatusOr<RunResult> run = RunLaunch(launch_options, device, launches[i].kernel,
                                              launches[i].args, /*keep_timeline=*/true, out);
    if (!run.ok()) {
      return absl::Status(run.status().code(), absl::StrCat("launch ", launches[i].name, ": ",
                                                            run.status().message()));
    }
    runs.push_back(*std::move(run));
    names.push_back(launches[i].name);
  }
  if (!options.run.profile.enabled) return absl::OkStatus();
  std::vector<PipelineLaunchTimeline> timelines;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].trace == nullptr || !runs[i].trace->has_timeline) {
      return absl::InternalError(absl::StrCat("launch ", names[i], ": the dump kept no timeline"));
    }
    timelines.push_back({names[i], &runs[i].trace->timeline});
  }
  RETURN_IF_ERROR(WritePipelinePerfettoTraceFile(timelines, options.PerfettoPath()));
  RETURN_IF_ERROR(WritePipelineChromeTraceFile(timelines, options.TracePath()));
  out << "\npipeline (" << runs.size() << " launches on one time axis, each a group of "
      << "tracks):\n  Perfetto trace: " << options.PerfettoPath()
      << "\n  Chrome trace:   " << options.TracePath() << "\n";
  return absl::OkStatus();
}

}  // namespace

int RunExample(const ExampleOptions& options, ExampleProblem& problem) {
  llvm::raw_ostream& out = llvm::outs();
  const std::string& name = options.name;
  out << "warptrace example " << name << ": " << problem.description << "\n\n";

  absl::StatusOr<SelectedDevice> selected =
      SelectDevice(options.run.device, options.run.device_options);
  if (!selected.ok()) return Fail(name, selected.status());
  Device& device = *selected->device;
  out << "device: " << device.Name() << "\n  why: " << selected->reason << "\n";
  if (options.run.device_options.cuda.target.has_value() &&
      device.Kind() != DeviceKind::kCuda) {
    out << "  (--arch=" << options.run.device_options.cuda.target->ToString()
        << " applies to CUDA only; ignored on the host backend)\n";
  }
  if (options.run.sanitize.any() && device.Kind() != DeviceKind::kHost) {
    out << "  (--sanitize=" << SanitizeName(options.run.sanitize)
        << " is the host backend's; ignored on a GPU: run with --device=host)\n";
  }
  out.flush();

  std::vector<RunResult> runs;
  if (problem.then.empty()) {
    absl::StatusOr<RunResult> run =
        RunLaunch(options, device, problem.kernel, problem.args, false, out);
    if (!run.ok()) return Fail(name, run.status());
    run->device_reason = selected->reason;
    if (run->trace != nullptr && !options.what_if.empty()) {
      if (int status = RunWhatIf(options, *run->trace, out); status != kExitOk) return status;
    }
    runs.push_back(*std::move(run));
  } else {
    if (!options.what_if.empty()) {
      PrintError(name, "--what_if takes one kernel; this example runs several");
      return kExitUsage;
    }
    if (absl::Status s = RunPipelineLaunches(options, device, problem, runs, out); !s.ok()) {
      return Fail(name, s);
    }
  }

  const Comparison comparison = problem.check();
  out << "\nresult: " << comparison.Describe() << "\n";
  if (!comparison.ok()) {
    return Fail(name, absl::InternalError(absl::StrCat(
                          "wrong result on ", device.Name(), ": ", comparison.Describe())));
  }

  if (options.repeat > 0) {
    std::vector<absl::Span<const KernelArg>> args = {problem.args};
    for (const ExampleLaunch& l : problem.then) args.push_back(l.args);
    for (size_t i = 0; i < runs.size(); ++i) {
      absl::StatusOr<LaunchTimes> times = TimeLaunches(device, runs[i].source, args[i], options.repeat);
      if (!times.ok()) return Fail(name, times.status());
      out << absl::StrFormat(
          "\ntiming%s: %d launches with profiling %s: median %.3f us, min %.3f us (%s)\n",
          runs.size() > 1 ? absl::StrCat(" of ", runs[i].source.kernel_name) : "",
          options.repeat, options.run.profile.enabled ? "on" : "off", times->Median(),
          times->Min(), times->clock);
    }
  }
  out.flush();
  return kExitOk;
}

int ExitStatusOfMakeError(const absl::Status& status) {
  if (IsBuildError(status)) return kExitBuildFailed;
  return absl::IsInvalidArgument(status) ? kExitUsage : kExitFailed;
}

int PrintExampleCost(const ExampleOptions& options, const ExampleProblem& problem) {
  KernelCostOptions cost;
  cost.variants = {UserKernelCostVariant(options.name, problem.kernel,
                                         options.run.device_options.cuda.target)};
  for (const ExampleLaunch& launch : problem.then) {  // a program of several kernels
    cost.variants.push_back(UserKernelCostVariant(absl::StrCat(options.name, ".", launch.name),
                                                  launch.kernel,
                                                  options.run.device_options.cuda.target));
  }
  cost.repeats = std::max(1, absl::GetFlag(FLAGS_cost_repeats));
  cost.policy = options.run.profile.policy;
  cost.unit = options.run.profile.unit;
  cost.cuobjdump = FindCuobjdump("");
  cost.subject = problem.then.empty()
                     ? absl::StrCat("kernel ", problem.kernel.name)
                     : absl::StrCat(problem.then.size() + 1, " kernels");
  cost.dump_dir = absl::StrCat(options.out_dir, "/", options.name, ".cost");
  if (std::error_code ec = llvm::sys::fs::create_directories(cost.dump_dir)) {
    PrintError(options.name, absl::StrCat("creating ", cost.dump_dir, ": ", ec.message()));
    return kExitFailed;
  }
  absl::StatusOr<std::vector<KernelCostRow>> rows = MeasureKernelCost(cost);
  if (!rows.ok()) {
    PrintError(options.name, rows.status().message());
    return kExitFailed;
  }
  llvm::outs() << problem.description << "\n" << FormatKernelCost(*rows, cost)
            << "Kept each mode's .cu, NVRTC log, cubin and SASS in " << cost.dump_dir << "\n";
  return kExitOk;
}

int RunExampleMain(int argc, char** argv, absl::string_view name, absl::string_view usage,
                   const std::function<absl::StatusOr<ExampleProblem>()>& make) {
  absl::FlagsUsageConfig config;
  config.contains_helpshort_flags = &InExamples;
  config.contains_help_flags = &InExamples;
  absl::SetFlagsUsageConfig(config);
  absl::SetProgramUsageMessage(absl::StrCat(
      usage,
      "\n\nOutputs go to --out (default: warptrace_out in the directory `bazel run` was "
      "started in):\n  ",
      name, ".pftrace (Perfetto trace), ", name, ".trace.json (Chrome trace), ", name,
      ".bin + ", name,
      ".json (raw buffer for `warptrace dump`), ", name,
      ".verdict.json (verdict report).\nExit status: 0 ok, 1 failed (run, trace or a wrong "
      "result), 2 bad flag value, 3 the kernel does not build."));
  // --help, -h or --helpfull, anywhere: the usage and the example's flags on stdout, exit
  // status 0 (absl's own --help exits 1, which scripts take for a failure), as the CLI's.
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--help" || arg == "-help" || arg == "-h" || arg == "--helpfull") {
      absl::flags_internal::FlagsHelp(std::cout, "examples/",
                                      absl::flags_internal::HelpFormat::kHumanReadable,
                                      absl::ProgramUsageMessage());
      return kExitOk;
    }
  }
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() > 1) {
    PrintError(name, absl::StrCat("unexpected argument \"", positional[1],
                                  "\"; flags are --name=value (see --help)"));
    return kExitUsage;
  }
  absl::StatusOr<ExampleOptions> options = OptionsFromFlags(name);
  if (!options.ok()) {
    PrintError(name, options.status().message());
    return kExitUsage;
  }
  absl::StatusOr<ExampleProblem> problem = make();
  if (!problem.ok()) {
    PrintError(name, problem.status().message());
    return ExitStatusOfMakeError(problem.status());
  }
  if (absl::GetFlag(FLAGS_cost)) return PrintExampleCost(*options, *problem);
  return RunExample(*options, *problem);
}

}  // namespace warptrace::examples
