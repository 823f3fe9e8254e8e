#include "jit/run/device_select.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/enum_table.h"

namespace warptrace {

namespace {

constexpr EnumTable<DeviceChoice, 3> kDeviceChoices{"device", {{
    {DeviceChoice::kAuto, "auto"},
    {DeviceChoice::kCuda, "cuda"},
    {DeviceChoice::kHost, "host"},
}}};
static_assert(kDeviceChoices.Covers(3));

}  // namespace

const char* DeviceChoiceName(DeviceChoice choice) { return kDeviceChoices.Name(choice); }

absl::StatusOr<DeviceChoice> ParseDeviceChoice(absl::string_view name) {
  return kDeviceChoices.Parse(name);
}

absl::StatusOr<SelectedDevice> SelectDevice(DeviceChoice choice,
                                            const DeviceSelectOptions& options) {
  absl::Status cuda_status;
  if (choice != DeviceChoice::kHost) {
    absl::StatusOr<std::unique_ptr<CudaDevice>> gpu = CudaDevice::Create(options.cuda);
    if (gpu.ok()) {
      std::string reason = absl::StrCat("CUDA device ", options.cuda.ordinal, ": ",
                                        (*gpu)->Name(), " (", (*gpu)->target().ToString(), ")");
      return SelectedDevice{std::move(*gpu), std::move(reason)};
    }
    if (choice == DeviceChoice::kCuda) return gpu.status();
    cuda_status = gpu.status();
  }
  absl::StatusOr<std::unique_ptr<HostDevice>> host = HostDevice::Create(options.host);
  if (!host.ok()) {
    if (choice == DeviceChoice::kAuto) {
      return absl::UnavailableError(
          absl::StrCat("no device to run on: the GPU is unavailable (", cuda_status.message(),
                       ") and the host backend is too (", host.status().message(), ")"));
    }
    return host.status();
  }
  std::string reason =
      choice == DeviceChoice::kHost
          ? absl::StrCat("host backend requested: ", (*host)->Name())
          : absl::StrCat(absl::IsUnavailable(cuda_status) ? "no CUDA GPU available"
                                                          : "the CUDA device failed to open",
                         " (", cuda_status.message(), "): running on the ", (*host)->Name());
  return SelectedDevice{std::move(*host), std::move(reason)};
}

}  // namespace warptrace
