// CudaDevice: a GPU, through the CUDA driver API loaded at run time (CudaDriver).
//
//   absl::StatusOr<std::unique_ptr<CudaDevice>> gpu = CudaDevice::Create();
//   if (absl::IsUnavailable(gpu.status())) { /* no driver or no GPU: use HostDevice */ }
//
// Create selects the device by ordinal and retains its primary context (made current on
// the calling thread by every method). The architecture is sm_<major><minor> from the
// compute capability. Load compiles with NVRTC through a CachingCompiler (memory + disk, see
// jit/compile/compile_cache.h) using CudaCompileRequest, then cuModuleLoadData + cuModuleGetFunction.
// Launch sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES when the dynamic shared
// memory exceeds the default 48 KiB, then cuLaunchKernel on the default stream
// (asynchronous: errors in the kernel surface at Synchronize or the next copy).
//
// Every driver error is mapped by ToStatus with context naming the kernel and the step.
// Errors (Create): Unavailable when there is no driver (the message says so and suggests
// the host backend), no device, or the ordinal is out of range; FailedPrecondition when no
// cache directory can be derived.
//
// Thread-safe: the driver API is; launches are serialized by a mutex.
//
// This header does not include cuda.h (the driver handles live behind a pointer to an
// implementation type defined in cuda_device.cc), so code that selects or uses a device
// compiles without the CUDA headers on its include path; //tests/jit/cuda:no_cuda_h_test
// checks it for every header outside jit/cuda.
#ifndef WARPTRACE_JIT_CUDA_CUDA_DEVICE_H_
#define WARPTRACE_JIT_CUDA_CUDA_DEVICE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "jit/compile/compile_cache.h"
#include "jit/compile/compiler.h"
#include "jit/platform/device.h"
#include "jit/target/cuda_target.h"

namespace warptrace {

struct CudaDeviceOptions {
  int ordinal = 0;
  // Cubin cache (see CompileCacheOptions): empty directory means the default.
  std::string cache_directory;
  bool use_disk_cache = true;
  // Extra NVRTC flags for every kernel.
  std::vector<std::string> extra_flags;
  // Architecture to compile for; none: the device's own compute capability. A cubin for
  // another architecture may fail to load (the load error names both).
  std::optional<CudaTarget> target;
};

// The CUDA toolkit's include directory (with cuda_bf16.h): $CUDA_HOME/include,
// $CUDA_PATH/include or /usr/local/cuda/include, the first that exists; empty if none.
std::string CudaToolkitIncludeDir();

// The NVRTC request CudaDevice::Load compiles for `source` on `target`: the source and its
// headers, plus an in-memory prelude, force-included, that defines the device's macros
// (WARPTRACE_DYNAMIC_SHARED(type, name) as `extern __shared__ __align__(16) type name[]`).
// Compiled for the target the kernel's requirements resolve to (KernelSource::requirements:
// sm_90 -> sm_90a for wgmma). The toolkit's include directory (CudaToolkitIncludeDir) is on
// the search path, so <cuda_bf16.h> and <cuda_fp16.h> resolve. Errors: InvalidArgument
// naming the construct when the kernel needs a feature `target`'s generation lacks (wgmma on
// sm_100).
absl::StatusOr<CompileRequest> CudaCompileRequest(
    const KernelSource& source, const CudaTarget& target,
    const std::vector<std::string>& extra_flags = {});

class CudaDevice final : public Device {
 public:
  static absl::StatusOr<std::unique_ptr<CudaDevice>> Create(CudaDeviceOptions options = {});
  ~CudaDevice() override;

  std::string Name() const override { return name_; }  // cuDeviceGetName, "NVIDIA H200"
  DeviceKind Kind() const override { return DeviceKind::kCuda; }
  ClockInfo Clock() const override { return clock_; }  // CLOCK_RATE, MULTIPROCESSOR_COUNT
  const CudaTarget& target() const { return target_; }  // sm_90 (an H100's)

  absl::StatusOr<void*> Allocate(uint64_t bytes) override;
  absl::Status Free(void* device_ptr) override;
  absl::Status CopyToDevice(void* device_dst, const void* host_src, uint64_t bytes) override;
  absl::Status CopyToHost(void* host_dst, const void* device_src, uint64_t bytes) override;
  absl::Status Memset(void* device_ptr, uint8_t value, uint64_t bytes) override;
  absl::StatusOr<std::unique_ptr<LoadedKernel>> Load(const KernelSource& source) override;
  absl::Status Launch(LoadedKernel& kernel, Dim3 grid, Dim3 block,
                      uint32_t dynamic_shared_bytes, void** args) override;
  // A kernel's fault (CUDA_ERROR_ILLEGAL_ADDRESS and the like) surfaces asynchronously,
  // here or at a later launch: either error names the kernels launched since the last
  // successful synchronize ("... kernel short_shared on grid (1,1,1) x block (64,1,1) ...").
  absl::Status Synchronize() override;
  // cuTensorMapEncodeTiled (driver 12.0+) of the validated spec, interleave none, element
  // strides 1, L2 promotion 128B. Unavailable when the driver lacks it; the driver's error
  // (InvalidArgument for CUDA_ERROR_INVALID_VALUE) naming `what` otherwise.
  absl::StatusOr<TensorMapBytes> EncodeTensorMap(const TensorMapSpec& spec,
                                                 void* device_address,
                                                 absl::string_view what) override;

  // Device::TimeLaunches on the GPU: launches `kernel` `count` times, one after another on
  // the default stream, and times each launch with a pair of CUDA events recorded around
  // it (resolution about half a microsecond; `clock` is "CUDA events"); waits for each
  // launch before the next. InvalidArgument for count < 1 and Launch's errors; Unavailable
  // when the driver lacks the event API; the driver's error (naming the launch) otherwise.
  absl::StatusOr<LaunchDurations> TimeLaunches(LoadedKernel& kernel, Dim3 grid, Dim3 block,
                                               uint32_t dynamic_shared_bytes, void** args,
                                               int count) override;

 private:
  // The driver and its handles (cuda.h types), defined in cuda_device.cc.
  struct Driver;

  CudaDevice(std::unique_ptr<Driver> driver, std::unique_ptr<CachingCompiler> compiler,
             CudaDeviceOptions options);
  absl::Status MakeCurrent(absl::string_view what) const;

  std::unique_ptr<Driver> driver_;  // never null
  std::unique_ptr<CachingCompiler> compiler_;
  CudaDeviceOptions options_;
  std::string name_;
  CudaTarget target_ = CudaTarget::Default();
  ClockInfo clock_;
  int max_shared_optin_ = 0;
  absl::Mutex launch_mu_;
  // Launches since the last successful Synchronize ("kernel k on grid (...) x block (...)"),
  // the first kMaxPending of them, and how many in all.
  std::vector<std::string> pending_ ABSL_GUARDED_BY(launch_mu_);
  uint64_t pending_count_ ABSL_GUARDED_BY(launch_mu_) = 0;
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_CUDA_CUDA_DEVICE_H_
