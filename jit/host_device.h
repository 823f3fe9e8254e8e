// HostDevice: runs the very same emitted CUDA source on the CPU, so the whole pipeline
// (emission, compilation, launch, recording, dump) works on machines without a GPU. For
// correctness, not speed.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<HostDevice> host, HostDevice::Create());
//   ASSIGN_OR_RETURN(std::unique_ptr<LoadedKernel> kernel, host->Load(kernel_source));
//   RETURN_IF_ERROR(host->Launch(*kernel, grid, block, dynamic_shared_bytes, args));
//
// Compilation. Load() writes the source, its headers and the embedded CUDA-on-CPU header
// (jit/host/cuda_on_cpu.h: what CUDA constructs are supported, and how) into a temporary
// directory (removed afterwards) and runs the system C++ compiler:
//   <cxx> -std=c++17 -O1 -shared -fPIC -pthread -DWARPTRACE_HOST_BACKEND
//         -include <dir>/cuda_on_cpu.h -I<dir> <extra flags> -o <dir>/kernel.so <dir>/<kernel>.cc
// The compiler is HostDeviceOptions::compiler, else env WARPTRACE_HOST_CXX, else the first
// of g++, clang++, c++ on PATH (a name without '/' is looked up on PATH). The shared object
// is cached on disk (DiskCache, suffix "so") under a key of the source, headers, the
// compiler's path and `--version`, and the flags; then loaded with dlopen.
//
// Execution. A launch runs the grid's blocks one after another, in linear block order; a
// block runs one OS thread per CUDA thread, each calling the source's host entry
// (KernelSource::host_entry) once. Launches are serialized (that is what makes a kernel's
// `__shared__` statics per-block shared memory), synchronous, and Synchronize() is a no-op.
// Virtual SM of a block: block_linear % num_virtual_sms. Device memory is host memory
// (Allocate returns 256-byte aligned host pointers); copies are checked against the bounds
// of the allocation they touch.
//
// Hangs. A block in which every thread that has not exited waits at a barrier that cannot
// complete (a __syncthreads some thread returned before, lanes of a warp in different
// barriers) is a deadlock on a GPU: it is detected at once and reported as
// DeadlineExceeded naming the block, instead of hanging. A thread waiting at a barrier
// longer than barrier_timeout also aborts the block with DeadlineExceeded (the others are
// unwound as they next reach a barrier; a thread that loops forever without reaching one
// cannot be interrupted and still hangs the launch). A C++ exception escaping a kernel
// thread is Internal. A crash (out-of-bounds access) in kernel code crashes the process, as
// it would fault the GPU context.
//
// Thread-safe.
#ifndef WARPTRACE_JIT_HOST_DEVICE_H_
#define WARPTRACE_JIT_HOST_DEVICE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "jit/device.h"
#include "jit/disk_cache.h"

namespace warptrace {

struct HostDeviceOptions {
  // The C++ compiler: a path, or a name looked up on PATH. Empty: env WARPTRACE_HOST_CXX,
  // else g++, clang++, c++.
  std::string compiler;
  // Appended to the compiler's command line (e.g. {"-O2"}, {"-fsanitize=thread"}).
  std::vector<std::string> extra_flags;
  // Virtual SMs that blocks are spread over (recorded as sm_id, reported as num_sms).
  uint32_t num_virtual_sms = 4;
  // Shared-object cache directory; empty: DiskCache::DefaultDirectory().
  std::string cache_directory;
  bool use_disk_cache = true;
  // A thread waiting longer than this at one barrier aborts its block.
  absl::Duration barrier_timeout = absl::Seconds(60);
  // Launch limits, as on an H100: 1024 threads per block, 227 KiB of dynamic shared memory.
  uint32_t max_threads_per_block = 1024;
  uint32_t max_dynamic_shared_bytes = 227 * 1024;
};

struct HostDeviceStats {
  uint64_t compilations = 0;  // runs of the C++ compiler
  uint64_t cache_hits = 0;    // shared objects served by the disk cache
};

class HostDevice final : public Device {
 public:
  // Finds the compiler and asks its version. Errors: NotFound when no compiler is found (the
  // message says what was looked for and how to set one); Unavailable when it cannot be run;
  // FailedPrecondition when no cache directory can be derived (see DiskCache).
  static absl::StatusOr<std::unique_ptr<HostDevice>> Create(HostDeviceOptions options = {});
  ~HostDevice() override;

  std::string Name() const override;  // "host backend (<compiler version>, N virtual SMs)"
  DeviceKind Kind() const override { return DeviceKind::kHost; }
  ClockInfo Clock() const override;   // 1.5 GHz nominal (host_abi.h), num_virtual_sms SMs

  absl::StatusOr<void*> Allocate(uint64_t bytes) override;
  absl::Status Free(void* device_ptr) override;
  absl::Status CopyToDevice(void* device_dst, const void* host_src, uint64_t bytes) override;
  absl::Status CopyToHost(void* host_dst, const void* device_src, uint64_t bytes) override;
  absl::Status Memset(void* device_ptr, uint8_t value, uint64_t bytes) override;

  // Errors: InvalidArgument when the source does not compile (the compiler's output with the
  // offending lines quoted) or the shared object lacks the host entry / ABI symbols;
  // Unavailable when the compiler cannot be run or the temporary directory written.
  absl::StatusOr<std::unique_ptr<LoadedKernel>> Load(const KernelSource& source) override;

  // Synchronous. Errors (see "Hangs" above): DeadlineExceeded for a deadlocked or
  // timed-out block; Internal for an exception escaping kernel code; ResourceExhausted when
  // threads cannot be created or limits are exceeded; InvalidArgument for a bad shape or a
  // kernel loaded by another device.
  absl::Status Launch(LoadedKernel& kernel, Dim3 grid, Dim3 block,
                      uint32_t dynamic_shared_bytes, void** args) override;
  absl::Status Synchronize() override { return absl::OkStatus(); }

  const std::string& compiler_path() const { return compiler_path_; }
  const std::string& compiler_version() const { return compiler_version_; }
  HostDeviceStats stats() const;

 private:
  HostDevice(HostDeviceOptions options, std::string compiler_path,
             std::string compiler_version, std::optional<std::string> cache_directory);
  // Compiles `source` to shared-object bytes (through the disk cache).
  absl::StatusOr<std::string> SharedObjectFor(const KernelSource& source);
  absl::StatusOr<std::string> RunCompiler(const KernelSource& source);
  // The allocation containing [ptr, ptr + bytes), or an InvalidArgument naming `what`.
  absl::Status CheckRange(const void* ptr, uint64_t bytes, const char* what) const;

  HostDeviceOptions options_;
  std::string compiler_path_;
  std::string compiler_version_;
  std::optional<DiskCache> cache_;

  mutable absl::Mutex memory_mu_;
  std::map<uintptr_t, uint64_t> allocations_ ABSL_GUARDED_BY(memory_mu_);  // start -> bytes
  absl::Mutex launch_mu_;  // serializes launches
  mutable absl::Mutex stats_mu_;
  HostDeviceStats stats_ ABSL_GUARDED_BY(stats_mu_);
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_HOST_DEVICE_H_
