// Device: where generated kernels run. Two implementations share this interface:
// CudaDevice (jit/cuda/cuda_device.h, a GPU through the driver API) and HostDevice
// (jit/host/host_device.h, the same source compiled for the CPU). Tests and tools are written
// once against Device.
//
//   std::unique_ptr<Device> device = ...;
//   ASSIGN_OR_RETURN(std::unique_ptr<LoadedKernel> kernel, device->Load(kernel_source));
//   ASSIGN_OR_RETURN(DeviceBuffer x, DeviceBuffer::Allocate(*device, n * sizeof(float)));
//   RETURN_IF_ERROR(x.CopyFrom(host_x.data(), host_x.size() * sizeof(float)));
//   void* x_ptr = x.get();
//   int n_arg = n;
//   void* args[] = {&x_ptr, &n_arg};   // one pointer to each argument's value, in order
//   RETURN_IF_ERROR(device->Launch(*kernel, grid, block, /*dynamic_shared_bytes=*/0, args));
//   RETURN_IF_ERROR(device->Synchronize());
//   RETURN_IF_ERROR(x.CopyTo(host_x.data(), host_x.size() * sizeof(float)));
//
// Addresses returned by Allocate are device addresses as void*: on a GPU a CUdeviceptr (do
// not dereference on the host), on the host backend ordinary host memory.
//
// Every call returns a Status naming what it was doing (which kernel, which step). Launches
// may be asynchronous (CUDA): an error inside the kernel can surface at Synchronize or at
// the next copy. Thread-safety: a Device may be used from several threads; launches on one
// device are serialized.
#ifndef WARPTRACE_JIT_PLATFORM_DEVICE_H_
#define WARPTRACE_JIT_PLATFORM_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/layout.h"
#include "jit/builder/kernel_source.h"
#include "jit/platform/tensor_map.h"

namespace warptrace {

enum class DeviceKind { kCuda, kHost };

// A kernel ready to launch on the device that loaded it. Owns the module / shared object;
// must not outlive its device.
class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
  // The kernel's name (KernelSource::kernel_name).
  virtual const std::string& name() const = 0;
};

class Device {
 public:
  virtual ~Device() = default;

  // Human-readable, recorded in TraceLayout::device_name: "NVIDIA H200",
  // "host backend (g++ 12.2.0, 4 virtual SMs)".
  virtual std::string Name() const = 0;
  virtual DeviceKind Kind() const = 0;
  // Nominal SM clock and SM count, for TraceLayout::clock.
  virtual ClockInfo Clock() const = 0;

  // Memory. Allocate returns zero-initialized-or-not memory (use Memset); ResourceExhausted
  // when the device is out of memory. Copies and Memset: InvalidArgument for a null pointer
  // with a non-zero size; the backend's error otherwise.
  virtual absl::StatusOr<void*> Allocate(uint64_t bytes) = 0;
  virtual absl::Status Free(void* device_ptr) = 0;
  virtual absl::Status CopyToDevice(void* device_dst, const void* host_src, uint64_t bytes) = 0;
  virtual absl::Status CopyToHost(void* host_dst, const void* device_src, uint64_t bytes) = 0;
  virtual absl::Status Memset(void* device_ptr, uint8_t value, uint64_t bytes) = 0;

  // Compiles `source` as this device needs (NVRTC to a cubin, or the host C++ compiler to a
  // shared object; both cached) and loads it. Errors: InvalidArgument when the source does
  // not compile (the compiler's output, with the offending lines quoted) or lacks its entry
  // point; Unavailable when the device's compiler cannot be run.
  virtual absl::StatusOr<std::unique_ptr<LoadedKernel>> Load(const KernelSource& source) = 0;

  // Launches `kernel` on a grid of `grid` blocks of `block` threads with
  // `dynamic_shared_bytes` of dynamic shared memory per block. `args` holds one pointer per
  // kernel parameter, pointing at the argument's value (exactly as cuLaunchKernel's
  // kernelParams). InvalidArgument for an empty grid/block or a kernel from another device;
  // ResourceExhausted when the shared memory or block size exceeds the device's limits.
  virtual absl::Status Launch(LoadedKernel& kernel, Dim3 grid, Dim3 block,
                              uint32_t dynamic_shared_bytes, void** args) = 0;

  // Waits for every launch and copy to finish; reports errors raised by kernels.
  virtual absl::Status Synchronize() = 0;

  // The 128-byte tensor map (a kernel's `const __grid_constant__ CUtensorMap` parameter)
  // viewing the tensor `spec` describes at `device_address` (a pointer from Allocate plus
  // spec.offset_bytes), already checked by ValidateTensorMap. CudaDevice: the driver's
  // cuTensorMapEncodeTiled (its errors as the driver's, naming `what`); HostDevice:
  // warptrace's own descriptor (jit/host/device/host_tma.h).
  virtual absl::StatusOr<TensorMapBytes> EncodeTensorMap(const TensorMapSpec& spec,
                                                         void* device_address,
                                                         absl::string_view what) = 0;

  // The durations of `count` launches of `kernel`, one after another, each waited for
  // before the next; the arguments are as Launch's and are reused by every launch.
  struct LaunchDurations {
    std::vector<double> micros;  // one per launch, in launch order
    std::string clock;           // what measured them, for output: "host steady clock"
  };
  // The default implementation measures each launch with the host's steady clock around
  // Launch + Synchronize, so a duration includes the launch call and the wait (on a backend
  // that launches synchronously, like the host backend, that is the kernel's run time);
  // `clock` is "host steady clock". A backend with a device-side timer overrides it
  // (CudaDevice: a pair of CUDA events around each launch, `clock` "CUDA events").
  // InvalidArgument for count < 1; Launch's and Synchronize's errors otherwise.
  virtual absl::StatusOr<LaunchDurations> TimeLaunches(LoadedKernel& kernel, Dim3 grid,
                                                       Dim3 block,
                                                       uint32_t dynamic_shared_bytes,
                                                       void** args, int count);
};

// Owns one allocation on a Device; frees it when destroyed (a failure to free at
// destruction cannot be reported: call Release() to see it). Move-only.
//
//   ASSIGN_OR_RETURN(DeviceBuffer trace, DeviceBuffer::Allocate(device, bytes));
//   RETURN_IF_ERROR(trace.Zero());
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static absl::StatusOr<DeviceBuffer> Allocate(Device& device, uint64_t bytes) {
    absl::StatusOr<void*> ptr = device.Allocate(bytes);
    if (!ptr.ok()) return ptr.status();
    return DeviceBuffer(&device, *ptr, bytes);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : device_(std::exchange(other.device_, nullptr)),
        ptr_(std::exchange(other.ptr_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      Release().IgnoreError();
      device_ = std::exchange(other.device_, nullptr);
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { Release().IgnoreError(); }

  // The device address (pass &ptr in a launch's args).
  void* get() const { return ptr_; }
  uint64_t size() const { return bytes_; }

  // Copies `bytes` (at most size()) between the host and the start of this buffer. A copy
  // of 0 bytes does nothing, also on an empty (default-constructed or released) buffer.
  absl::Status CopyFrom(const void* host_src, uint64_t bytes) {
    if (bytes > bytes_) return TooLarge("copy into", bytes);
    if (bytes == 0) return absl::OkStatus();
    return device_->CopyToDevice(ptr_, host_src, bytes);
  }
  absl::Status CopyTo(void* host_dst, uint64_t bytes) const {
    if (bytes > bytes_) return TooLarge("copy out of", bytes);
    if (bytes == 0) return absl::OkStatus();
    return device_->CopyToHost(host_dst, ptr_, bytes);
  }
  absl::Status Zero() { return bytes_ == 0 ? absl::OkStatus() : device_->Memset(ptr_, 0, bytes_); }

  // Frees the allocation now; the buffer becomes empty.
  absl::Status Release() {
    if (ptr_ == nullptr) return absl::OkStatus();
    Device* device = std::exchange(device_, nullptr);
    bytes_ = 0;
    return device->Free(std::exchange(ptr_, nullptr));
  }

 private:
  DeviceBuffer(Device* device, void* ptr, uint64_t bytes)
      : device_(device), ptr_(ptr), bytes_(bytes) {}
  absl::Status TooLarge(const char* what, uint64_t bytes) const {
    return absl::InvalidArgumentError("cannot " + std::string(what) + " a device buffer of " +
                                      std::to_string(bytes_) + " bytes: " +
                                      std::to_string(bytes) + " bytes requested");
  }

  Device* device_ = nullptr;
  void* ptr_ = nullptr;
  uint64_t bytes_ = 0;
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_PLATFORM_DEVICE_H_
