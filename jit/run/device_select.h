// Choosing the device a kernel runs on: a GPU through the CUDA driver, the host backend, or
// `auto` — the GPU when there is one, else the host backend, saying which and why.
//
//   ASSIGN_OR_RETURN(SelectedDevice selected, SelectDevice(DeviceChoice::kAuto));
//   std::cout << selected.reason << "\n";  // "no CUDA driver found (...): running on the
//                                          //  host backend"
//   Device& device = *selected.device;
#ifndef WARPTRACE_JIT_RUN_DEVICE_SELECT_H_
#define WARPTRACE_JIT_RUN_DEVICE_SELECT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/cuda/cuda_device.h"
#include "jit/host/host_device.h"
#include "jit/platform/device.h"

namespace warptrace {

enum class DeviceChoice { kAuto, kCuda, kHost };
const char* DeviceChoiceName(DeviceChoice choice);  // "auto", "cuda", "host"
// InvalidArgument naming the accepted values for anything but auto, cuda, host.
absl::StatusOr<DeviceChoice> ParseDeviceChoice(absl::string_view name);

struct SelectedDevice {
  std::unique_ptr<Device> device;
  // One line: which device runs the kernels and why ("CUDA device 0: NVIDIA H200",
  // "host backend requested with --device=host", "no CUDA driver found: ...").
  std::string reason;
};

struct DeviceSelectOptions {
  CudaDeviceOptions cuda;
  HostDeviceOptions host;
};

// kCuda: the GPU or CudaDevice::Create's error (Unavailable with no driver or no GPU).
// kHost: the host backend, or HostDevice::Create's error (e.g. no C++ compiler).
// kAuto: the GPU if CudaDevice::Create succeeds; otherwise the host backend, with the
// GPU's error in `reason`. Fails only when neither can be had (the status names both).
absl::StatusOr<SelectedDevice> SelectDevice(DeviceChoice choice,
                                            const DeviceSelectOptions& options = {});

}  // namespace warptrace

#endif  // WARPTRACE_JIT_RUN_DEVICE_SELECT_H_
