// bazel run -c opt //examples:record_cost_gpu -- [--iterations=1000 --runs=7 --device=cuda]
//
// What one recorded event costs on the SM, in cycles, measured the way a kernel author
// would: the same tight loop is built twice with KernelBuilder — once profiled, with a
// region around the loop body (2 events per iteration), once without any instrumentation —
// and the kernel times its own loop with clock64(), writing the cycle delta as its output.
//
//   cycles per event = (delta with records - delta without) / (2 x iterations)
//
// measured on the recorder thread (lane 0 of the one warp), for global and shared
// placement, median of --runs launches each. The profiled runs' traces are verified (every
// event present) before their numbers count. Meaningful on a GPU; on the host backend
// (--device=host) the same code runs, but "cycles" are host steady-clock ticks.
//
// Prints one line per placement:
//   placement global: 10.25 SM cycles per event (loop of 1000 iterations: 28612 cycles with
//   records, 8112 without; median of 7 runs)
// Exit status: 0 ok, 1 a run failed, 2 a bad flag value.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "jit/target/cuda_target.h"
#include "examples/record_cost_loop.h"
#include "jit/run/device_select.h"
#include "jit/run/run.h"
#include "llvm/Support/raw_ostream.h"

ABSL_FLAG(std::string, device, "cuda", "cuda, host or auto");
ABSL_FLAG(int, iterations, 1000, "loop iterations per launch (1..3000: shared staging must fit)");
ABSL_FLAG(int, runs, 7, "launches per variant; the median counts");
ABSL_FLAG(std::string, arch, "", "CUDA architecture, e.g. sm_90 (default: the GPU's own)");

namespace warptrace::examples {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// The median clock delta of `runs` launches.
absl::StatusOr<uint64_t> MedianDelta(Device& device, const Kernel& kernel, int iterations,
                                     int runs, const RunOptions& options) {
  std::vector<uint64_t> deltas;
  for (int r = 0; r < runs; ++r) {
    std::vector<uint64_t> cycles(1, 0);
    std::vector<uint32_t> sink(32, 0);
    const std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(cycles)),
                                         KernelArg::Out(absl::MakeSpan(sink)),
                                         KernelArg::Scalar<int>(iterations)};
    ASSIGN_OR_RETURN(RunResult run, RunKernel(device, kernel, args, options));
    if (run.trace != nullptr && run.trace->report.kept_events != 2u * iterations) {
      return absl::InternalError(absl::StrCat("the profiled loop kept ",
                                              run.trace->report.kept_events,
                                              " events; expected ", 2 * iterations));
    }
    deltas.push_back(cycles[0]);
  }
  std::sort(deltas.begin(), deltas.end());
  return deltas[(deltas.size() - 1) / 2];
}

absl::Status Measure(DeviceChoice choice, int iterations, int runs, const std::string& arch) {
  ASSIGN_OR_RETURN(Kernel kernel, RecordCostLoop(iterations));
  DeviceSelectOptions device_options;
  if (!arch.empty()) {
    ASSIGN_OR_RETURN(device_options.cuda.target, CudaTarget::Parse(arch));
  }
  ASSIGN_OR_RETURN(SelectedDevice selected, SelectDevice(choice, device_options));
  llvm::outs() << "record cost on " << selected.device->Name() << " (" << selected.reason
               << ")\n";
  RunOptions baseline;
  baseline.profile.enabled = false;
  ASSIGN_OR_RETURN(uint64_t without, MedianDelta(*selected.device, kernel, iterations, runs,
                                                 baseline));
  for (Placement placement : {Placement::kGlobal, Placement::kShared}) {
    RunOptions profiled;
    profiled.profile.unit = UnitSpec::Warp();
    profiled.profile.placement = placement;
    profiled.profile.policy.kernel = false;  // only the loop's events fall inside the timing
    ASSIGN_OR_RETURN(uint64_t with, MedianDelta(*selected.device, kernel, iterations, runs,
                                                profiled));
    const double per_event = (static_cast<double>(with) - static_cast<double>(without)) /
                             (2.0 * iterations);
    llvm::outs() << absl::StrFormat(
        "placement %s: %.2f SM cycles per event (loop of %d iterations: %d cycles with "
        "records, %d without; median of %d runs)\n",
        PlacementName(placement), per_event, iterations, with, without, runs);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace warptrace::examples

int main(int argc, char** argv) {
  using namespace warptrace::examples;  // NOLINT: a main of a few lines
  absl::SetProgramUsageMessage(
      "SM cycles per recorded event (a tight loop with records vs without).\n"
      "  bazel run -c opt //examples:record_cost_gpu -- [--iterations=1000 --runs=7]");
  absl::ParseCommandLine(argc, argv);
  const std::string device = absl::GetFlag(FLAGS_device);
  absl::StatusOr<warptrace::DeviceChoice> choice = warptrace::ParseDeviceChoice(device);
  const int iterations = absl::GetFlag(FLAGS_iterations);
  const int runs = absl::GetFlag(FLAGS_runs);
  std::string usage_error;
  if (!choice.ok()) usage_error = absl::StrCat("--device=", device, ": ", choice.status().message());
  if (iterations < 1 || iterations > 3000) {
    usage_error = absl::StrCat("--iterations=", iterations, ": expected 1..3000");
  }
  if (runs < 1) usage_error = absl::StrCat("--runs=", runs, ": expected at least 1");
  if (!usage_error.empty()) {
    llvm::errs() << "record_cost_gpu: error: " << usage_error << "\n";
    return kExitUsage;
  }
  absl::Status status = Measure(*choice, iterations, runs, absl::GetFlag(FLAGS_arch));
  if (!status.ok()) {
    llvm::outs().flush();
    llvm::errs() << absl::StrCat("record_cost_gpu: error: ", status.message(), "\n");
    return kExitFailed;
  }
  return kExitOk;
}
