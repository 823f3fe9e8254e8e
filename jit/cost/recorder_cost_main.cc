// recorder_cost: prints what the device recorder costs per recorded event, per trace-unit
// kind and placement, in PTX and (where cuobjdump is available) SASS instructions and
// registers. See recorder_cost.h for the method. Then, per real kernel variant (hopper_gemm,
// ampere_gemm), profiled and unprofiled: ptxas registers and spills, SASS instructions per
// record point, NVRTC compile time (kernel_cost.h).
//
//   bazel run //jit/cost:recorder_cost -- --arch=sm_90
//   bazel run //jit/cost:recorder_cost -- --cuobjdump=/path/to/cuobjdump
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "jit/cost/kernel_cost.h"
#include "jit/cost/recorder_cost.h"

ABSL_FLAG(std::string, arch, warptrace::CudaTarget::Default().ToString(),
          "GPU architecture to compile for (a real sm_XX, optionally with a or f).");
ABSL_FLAG(uint32_t, events_low, 8, "K1: Record calls per loop iteration in the first kernel.");
ABSL_FLAG(uint32_t, events_high, 16,
          "K2: Record calls per loop iteration in the second kernel (> K1).");
ABSL_FLAG(bool, payload, true,
          "Also measure events with a payload slot (RecordWithPayload, trace version 2).");
ABSL_FLAG(bool, kernels, true,
          "Also measure what recording costs the real kernels (hopper_gemm, ampere_gemm).");
ABSL_FLAG(uint32_t, kernel_size, 4096,
          "M = N = K of the measured kernels (a multiple of 256; 4096: the GPU check's size).");
ABSL_FLAG(int, repeats, 3, "NVRTC compiles per kernel variant and mode (median reported).");
ABSL_FLAG(std::string, only, "",
          "Measure only the kernel variants whose name contains this text (e.g. \"hopper_gemm "
          "coop\"); with it the per-event tables are skipped.");
ABSL_FLAG(bool, handoffs, true,
          "Profiled kernels record phase-barrier arrivals, phase waits and async copies "
          "(RecordPolicy::handoffs).");
ABSL_FLAG(bool, mma_groups, true,
          "Profiled kernels record wgmma groups as async spans (RecordPolicy::mma_groups).");
ABSL_FLAG(std::string, dump_dir, "",
          "Write each kernel variant's emitted source (with the headers it includes), NVRTC log "
          "and SASS to this existing directory as <variant>.<off|on>.{cu,log,sass}.");
ABSL_FLAG(std::string, cuobjdump, "",
          "Path of cuobjdump for SASS numbers. Default: $CUOBJDUMP, PATH, /usr/local/cuda/bin, "
          "or the PyPI package nvidia-cuda-cuobjdump next to python3's `nvidia` package.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Prints the device recorder's cost per recorded event (PTX, SASS, registers) for "
      "each trace-unit kind and placement.");
  absl::ParseCommandLine(argc, argv);
  warptrace::RecorderCostOptions options;
  absl::StatusOr<warptrace::CudaTarget> target =
      warptrace::CudaTarget::Parse(absl::GetFlag(FLAGS_arch));
  if (!target.ok()) {
    std::cerr << "recorder_cost: --arch: " << target.status().message() << "\n";
    return 2;
  }
  options.target = *target;
  options.events_low = absl::GetFlag(FLAGS_events_low);
  options.events_high = absl::GetFlag(FLAGS_events_high);
  absl::StatusOr<std::string> cuobjdump =
      warptrace::LocateCuobjdump(absl::GetFlag(FLAGS_cuobjdump));
  if (!cuobjdump.ok()) {
    std::cerr << "recorder_cost: " << cuobjdump.status().message()
              << "\nrecorder_cost: SASS numbers are skipped.\n";
  } else {
    options.cuobjdump = *cuobjdump;
  }
  if (absl::GetFlag(FLAGS_payload)) {
    for (warptrace::RecorderCostCase& c : warptrace::PayloadRecorderCostCases()) {
      options.cases.push_back(std::move(c));
    }
  }
  const std::string only = absl::GetFlag(FLAGS_only);
  if (only.empty()) {
    absl::StatusOr<std::vector<warptrace::RecorderCostRow>> rows =
        warptrace::MeasureRecorderCost(options);
    if (!rows.ok()) {
      std::cerr << "recorder_cost: " << rows.status() << "\n";
      return 1;
    }
    std::cout << warptrace::FormatRecorderCost(*rows, options) << "\n" << std::flush;
  }
  if (!absl::GetFlag(FLAGS_kernels)) return 0;
  warptrace::KernelCostOptions kernel_options;
  kernel_options.repeats = absl::GetFlag(FLAGS_repeats);
  absl::StatusOr<std::vector<warptrace::KernelCostVariant>> variants =
      warptrace::FilterKernelCostVariants(
          warptrace::DefaultKernelCostVariants(absl::GetFlag(FLAGS_kernel_size)), only);
  if (!variants.ok()) {
    std::cerr << "recorder_cost: " << variants.status() << "\n";
    return 1;
  }
  kernel_options.variants = *std::move(variants);
  kernel_options.dump_dir = absl::GetFlag(FLAGS_dump_dir);
  kernel_options.policy.handoffs = absl::GetFlag(FLAGS_handoffs);
  kernel_options.policy.mma_groups = absl::GetFlag(FLAGS_mma_groups);
  kernel_options.cuobjdump = options.cuobjdump;
  absl::StatusOr<std::vector<warptrace::KernelCostRow>> kernel_rows =
      warptrace::MeasureKernelCost(kernel_options);
  if (!kernel_rows.ok()) {
    std::cerr << "recorder_cost: " << kernel_rows.status() << "\n";
    return 1;
  }
  std::cout << warptrace::FormatKernelCost(*kernel_rows, kernel_options);
  return 0;
}
