// What every example shares: the common flags, the run, the printing, the output files and
// the check against the CPU reference. An example only builds its problem (kernel, host
// buffers, reference) and hands it to RunExampleMain:
//
//   ABSL_FLAG(uint32_t, m, 64, "rows of A and C");
//   int main(int argc, char** argv) {
//     return warptrace::examples::RunExampleMain(argc, argv, "tiled_gemm", kUsage,
//         []() -> absl::StatusOr<warptrace::examples::ExampleProblem> { ... });
//   }
//
// Common flags (every example):
//   --out=DIR            directory for the outputs (created if missing); a relative DIR is
//                        taken from the directory `bazel run` was started in
//                        (BUILD_WORKING_DIRECTORY), else from the current directory.
//                        Default: <that directory>/warptrace_out. Files, for example NAME:
//                          DIR/NAME.pftrace       Perfetto trace (protobuf; ui.perfetto.dev)
//                          DIR/NAME.trace.json    Chrome trace (ui.perfetto.dev, chrome://tracing)
//                          DIR/NAME.bin, NAME.json  raw buffer + layout sidecar (profiler/imports/sidecar.h),
//                                                 re-read by `warptrace dump --input=DIR/NAME`
//                          DIR/NAME.verdict.json  per-unit verdict report (profiler/trace/verify.h)
//   --device=auto|cuda|host   where the kernel runs (auto: the GPU if there is one)
//   --unit=auto|warp|warpgroup|block   the trace unit (auto, the default: warpgroup if the
//                                 block is a multiple of 128 threads, else warp, else block)
//   --placement=global|shared|auto   where events are staged on the device
//   --profile=false      run the kernel uninstrumented: no trace, results still checked
//   --arch=sm_XY         CUDA architecture to compile for (default: the GPU's own)
//   --loop_iterations, --barrier_waits   record policy (RecordPolicy)
//   --cost               do not run: print the kernel's cost table (jit/cost/kernel_cost.h,
//                        recorder_cost's: registers, spills, stack, SASS and the instructions
//                        that matter, unprofiled/profiled; NVRTC, no GPU) and keep each
//                        mode's .cu, NVRTC log, cubin and SASS in DIR/NAME.cost
//   --sanitize=bounds,races,init|all|none   the host backend's sanitizer (docs/sanitizer.md)
//   --repeat=N           after the checked run, time N more launches and print the median
//                        (CUDA events on a GPU, the wall clock on the host backend)
//
// Exit status: 0 when the kernel ran and matched its reference (and, profiled, its trace
// verified and every file was written); 1 when anything failed, with one line on stderr
// starting "NAME: error: " (a wrong result names the worst element, its index and error);
// 2 for a flag value the example rejects ("NAME: error: --unit: ..."); 3 when the kernel
// does not build (KernelBuilder::Build() rejected it: a bug in the example's kernel, not in
// the flags; the message has the builder path). Malformed flags
// (unknown names, a number that does not parse) are rejected by absl itself, with exit 1.
#ifndef WARPTRACE_EXAMPLES_EXAMPLE_MAIN_H_
#define WARPTRACE_EXAMPLES_EXAMPLE_MAIN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "jit/builder/kernel_builder.h"
#include "jit/run/run.h"

// The common flags (defined in example_main.cc), for tests that set them.
ABSL_DECLARE_FLAG(std::string, out);
ABSL_DECLARE_FLAG(std::string, device);
ABSL_DECLARE_FLAG(std::string, unit);
ABSL_DECLARE_FLAG(std::string, placement);
ABSL_DECLARE_FLAG(bool, profile);
ABSL_DECLARE_FLAG(std::string, arch);
ABSL_DECLARE_FLAG(bool, loop_iterations);
ABSL_DECLARE_FLAG(bool, barrier_waits);
ABSL_DECLARE_FLAG(int, repeat);

namespace warptrace::examples {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitBuildFailed = 3;  // KernelBuilder::Build() rejected the kernel

// The element-wise comparison of a result with its CPU reference. An element matches when
// |got - expected| <= abs_tolerance + rel_tolerance * |expected| (NaN never matches).
struct Comparison {
  std::string what;           // the output's name, e.g. "C"
  uint64_t count = 0;         // elements compared
  uint64_t mismatches = 0;
  uint64_t worst_index = 0;   // the element with the largest |error| (the first NaN wins)
  double worst_got = 0;
  double worst_expected = 0;
  double worst_error = 0;     // |got - expected| there (inf for NaN)
  double worst_tolerance = 0;
  uint32_t row_length = 0;    // > 0: indices are printed as [row][column]
  bool ok() const { return mismatches == 0 && count > 0; }
  // "C matches the CPU reference: 4096 values, worst |error| 2.4e-07 at C[0][17]" or
  // "C differs from the CPU reference in 37 of 4096 values; worst at C[0][12]: got 1.5,
  // expected 3.25, |error| 1.75 > tolerance 0.0043".
  std::string Describe() const;
};

// Compares `got` with `expected` (same length; a length mismatch counts every element of
// the longer one as a mismatch).
Comparison CompareToReference(absl::string_view what, absl::Span<const float> got,
                              absl::Span<const double> expected, double rel_tolerance,
                              double abs_tolerance, uint32_t row_length = 0);

// CompareToReference over a sample of a matrix's rows: `got` and `expected` hold rows[0],
// rows[1], ... of a matrix of `row_length` columns, one after the other. The worst element is
// reported where it is in the whole matrix ([row][column] of rows[i]), not in the sample.
Comparison CompareSampledRows(absl::string_view what, absl::Span<const float> got,
                              absl::Span<const double> expected,
                              absl::Span<const uint32_t> rows, uint32_t row_length,
                              double rel_tolerance, double abs_tolerance);

// A launch of a program of several kernels after its first (ExampleProblem::then).
struct ExampleLaunch {
  std::string name;  // names its output files (NAME.LAUNCH.*) and its tracks
  Kernel kernel;
  std::vector<KernelArg> args;
};

// One example's problem: the kernel, its launch arguments (views of host buffers that
// `storage` keeps alive) and the check of its outputs after a run.
struct ExampleProblem {
  std::string description;  // one line, e.g. "C = A x B, 64 x 64 x 128, tile 16"
  Kernel kernel;
  std::vector<KernelArg> args;
  std::shared_ptr<void> storage;
  std::function<Comparison()> check;  // reads the outputs the last run copied back
  // A program of several kernels: the launches after `kernel` (whose launch is named
  // `first_launch`), in order, each reading what the ones before it copied back into the
  // host buffers. Every common flag applies to each launch (--cost lists every kernel);
  // each launch writes its own files (NAME.LAUNCH.pftrace, .trace.json, .bin/.json,
  // .verdict.json) and the pipeline one timeline of them all (NAME.pftrace and
  // NAME.trace.json, profiler/outputs/pipeline_trace.h). --what_if takes one kernel.
  std::string first_launch;
  std::vector<ExampleLaunch> then;
};

// The common flags, validated.
struct ExampleOptions {
  std::string name;        // the example, names the output files
  RunOptions run;          // device, device options (arch), profile options
  std::string out_dir;     // absolute
  int repeat = 0;
  std::string what_if;     // --what_if: a re-timing to predict from the trace (whatif.h)
  std::string TracePath() const;    // out_dir/name.trace.json
  std::string PerfettoPath() const; // out_dir/name.pftrace
  std::string SavePrefix() const;   // out_dir/name (.bin + .json)
  std::string VerdictPath() const;  // out_dir/name.verdict.json
};

// Reads the common flags (after absl::ParseCommandLine). InvalidArgument naming the flag
// and its accepted values.
absl::StatusOr<ExampleOptions> OptionsFromFlags(absl::string_view name);

// The output directory for --out=`flag`: absolute as given; relative (or empty, meaning
// "warptrace_out") against $BUILD_WORKING_DIRECTORY if set, else the current directory.
std::string ResolveOutputDirectory(absl::string_view flag);

// Runs `problem` per `options`, printing to stdout: the device and why it was chosen, the
// record plan's derivation, the verdict counts, the summary table, the result check and
// where each file went. Returns the exit status (see the file comment); errors go to stderr.
int RunExample(const ExampleOptions& options, ExampleProblem& problem);

// The whole main: sets the usage message (`usage` followed by the common flags' summary),
// parses the command line, reads the common flags, builds the problem with `make` (an
// InvalidArgument from it is a usage error: exit 2, unless it is a Build() rejection
// (IsBuildError): exit 3) and runs it.
// The exit status for an error of the problem's `make`: kExitBuildFailed for a Build()
// rejection, kExitUsage for another InvalidArgument, kExitFailed otherwise.
int ExitStatusOfMakeError(const absl::Status& status);

// --cost: prints the problem's kernel's cost table (unprofiled and profiled, with the record
// policy of `options`) and keeps the compile's files in out_dir/NAME.cost. Returns the exit
// status (kExitFailed with one error line when a compile or cuobjdump fails).
int PrintExampleCost(const ExampleOptions& options, const ExampleProblem& problem);

int RunExampleMain(int argc, char** argv, absl::string_view name, absl::string_view usage,
                   const std::function<absl::StatusOr<ExampleProblem>()>& make);

}  // namespace warptrace::examples

#endif  // WARPTRACE_EXAMPLES_EXAMPLE_MAIN_H_
