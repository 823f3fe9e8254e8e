#include "examples/launch_timing.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "format/layout.h"
#include "jit/platform/tensor_map.h"

namespace warptrace::examples {

double LaunchTimes::Median() const {
  if (micros.empty()) return 0;
  std::vector<double> sorted = micros;
  std::sort(sorted.begin(), sorted.end());
  return sorted[(sorted.size() - 1) / 2];
}

double LaunchTimes::Min() const {
  return micros.empty() ? 0 : *std::min_element(micros.begin(), micros.end());
}

absl::StatusOr<LaunchTimes> TimeLaunches(Device& device, const KernelSource& source,
                                         absl::Span<const KernelArg> args, int launches) {
  const std::string what = absl::StrCat("timing kernel ", source.kernel_name);
  if (launches < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the number of launches must be at least 1, not ", launches));
  }
  const size_t kernel_params = source.params.size() - (source.profiled ? 1 : 0);
  if (args.size() != kernel_params) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": it takes ", kernel_params,
                                                   " arguments but ", args.size(),
                                                   " were given"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<LoadedKernel> loaded, device.Load(source));

  std::vector<DeviceBuffer> buffers;
  std::vector<void*> pointers(args.size() + 1, nullptr);
  std::vector<TensorMapBytes> maps(args.size());  // a TensorMap argument's 128 bytes
  std::vector<void*> slots;
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg& arg = args[i];
    if (arg.kind() == KernelArg::Kind::kScalar) {
      slots.push_back(const_cast<void*>(arg.scalar()));
      continue;
    }
    ASSIGN_OR_RETURN(DeviceBuffer buffer,
                     DeviceBuffer::Allocate(device, std::max<uint64_t>(arg.bytes(), 1)));
    RETURN_IF_ERROR(arg.buffer_kind() == KernelArg::Kind::kOut
                        ? buffer.Zero()
                        : buffer.CopyFrom(arg.host(), arg.bytes()));
    pointers[i] = buffer.get();
    if (arg.kind() == KernelArg::Kind::kTensorMap) {
      const std::string map_what = absl::StrCat("argument ", i, " of ", what);
      void* tensor = static_cast<char*>(buffer.get()) + arg.tensor_map().offset_bytes;
      RETURN_IF_ERROR(ValidateTensorMap(arg.tensor_map(), arg.bytes(),
                                        reinterpret_cast<uintptr_t>(tensor), map_what));
      ASSIGN_OR_RETURN(maps[i], device.EncodeTensorMap(arg.tensor_map(), tensor, map_what));
      slots.push_back(maps[i].bytes);
    } else {
      slots.push_back(&pointers[i]);
    }
    buffers.push_back(std::move(buffer));
  }
  if (source.profiled) {
    if (!source.layout.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": profiled source without a layout"));
    }
    ASSIGN_OR_RETURN(DeviceBuffer trace, DeviceBuffer::Allocate(device, BufferBytes(*source.layout)));
    RETURN_IF_ERROR(trace.Zero());
    pointers.back() = trace.get();
    slots.push_back(&pointers.back());
    buffers.push_back(std::move(trace));
  }

  // Warm-up: first-launch costs (module upload, caches) stay out of the numbers.
  RETURN_IF_ERROR(device.Launch(*loaded, source.grid, source.block, source.dynamic_shared_bytes,
                                slots.data()));
  RETURN_IF_ERROR(device.Synchronize());

  ASSIGN_OR_RETURN(Device::LaunchDurations durations,
                   device.TimeLaunches(*loaded, source.grid, source.block,
                                       source.dynamic_shared_bytes, slots.data(), launches));
  LaunchTimes times;
  times.micros = std::move(durations.micros);
  times.clock = std::move(durations.clock);
  return times;
}

}  // namespace warptrace::examples
