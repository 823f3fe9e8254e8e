// Timing repeated launches of an emitted kernel, for the examples' --repeat flag and the GPU
// check script (profiled vs unprofiled slowdown).
//
//   ASSIGN_OR_RETURN(LaunchTimes times, TimeLaunches(device, run.source, args, 200));
//   std::cout << times.Median() << " us median (" << times.clock << ")\n";
//
// The kernel is loaded once, its arguments are copied to the device once (In and InOut
// buffers copied, Out buffers and the trace buffer zeroed), one untimed warm-up launch
// runs, then `launches` timed launches reuse the same buffers (so a kernel that
// accumulates into an output, like the reduction, accumulates across launches: the
// outputs are not copied back). The timed launches are the device's own
// (Device::TimeLaunches): on a CudaDevice, CUDA events on the GPU; on the host backend,
// which launches synchronously, the host steady clock around Launch + Synchronize.
#ifndef WARPTRACE_EXAMPLES_LAUNCH_TIMING_H_
#define WARPTRACE_EXAMPLES_LAUNCH_TIMING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "jit/builder/kernel_source.h"
#include "jit/platform/device.h"
#include "jit/run/run.h"

namespace warptrace::examples {

struct LaunchTimes {
  std::vector<double> micros;  // one per timed launch, in launch order
  std::string clock;           // "CUDA events" or "host steady clock"
  // Nearest-rank median (the lower middle for an even count) and minimum; 0 when empty.
  double Median() const;
  double Min() const;
};

// Errors: InvalidArgument for launches < 1 or arguments that do not match the source's
// parameters (a profiled source's trace buffer is not an argument); the device's errors,
// naming the step.
absl::StatusOr<LaunchTimes> TimeLaunches(Device& device, const KernelSource& source,
                                         absl::Span<const KernelArg> args, int launches);

}  // namespace warptrace::examples

#endif  // WARPTRACE_EXAMPLES_LAUNCH_TIMING_H_
