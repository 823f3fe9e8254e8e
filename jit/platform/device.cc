#include "jit/platform/device.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace warptrace {

absl::StatusOr<Device::LaunchDurations> Device::TimeLaunches(LoadedKernel& kernel, Dim3 grid,
                                                             Dim3 block,
                                                             uint32_t dynamic_shared_bytes,
                                                             void** args, int count) {
  if (count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("timing kernel ", kernel.name(), ": count must be at least 1, not ", count));
  }
  LaunchDurations out;
  out.clock = "host steady clock";
  out.micros.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    const auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(Launch(kernel, grid, block, dynamic_shared_bytes, args));
    RETURN_IF_ERROR(Synchronize());
    const auto stop = std::chrono::steady_clock::now();
    out.micros.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
  }
  return out;
}

}  // namespace warptrace
