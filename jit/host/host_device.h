// HostDevice: runs the very same emitted CUDA source on the CPU, so the whole pipeline
// (emission, compilation, launch, recording, dump) works on machines without a GPU. Built
// like CudaDevice: a compiler (HostCompiler, the system C++ compiler) behind the
// CachingCompiler decorator, a loader (dlopen), and a runtime (jit/host/runtime/runtime.h) that runs
// every CUDA thread as a fiber and the blocks of a launch concurrently on worker threads,
// one per virtual SM.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<HostDevice> host, HostDevice::Create());
//   ASSIGN_OR_RETURN(std::unique_ptr<LoadedKernel> kernel, host->Load(kernel_source));
//   RETURN_IF_ERROR(host->Launch(*kernel, grid, block, dynamic_shared_bytes, args));
//
// Compilation: see jit/host/compiler/host_compiler.h (what the source may use: cuda_on_cpu.h). The
// shared object is cached in memory and on disk (CachingCompiler, key: source, headers,
// options, compiler path/version/flags, host ABI), then loaded from an in-memory file with
// dlopen; every Load gets its own copy (its own statics). With g++, kernels compile against
// a precompiled cuda_on_cpu.h, built once and kept beside the shared objects
// (jit/host/compiler/precompiled_header.h): a miss costs ~0.1 s less per kernel.
//
// Execution: see jit/host/runtime/runtime.h. Launches are synchronous, Synchronize() a no-op.
// Device memory is host memory (Allocate returns 256-byte aligned host pointers); copies
// are checked against the bounds of the allocation they touch. Each buffer and each block's
// shared memory sits between guard pages (jit/host/runtime/guarded_memory.h): a kernel thread that
// accesses past the end of one (beyond its 256-byte / 16-byte alignment padding) or before
// its start fails the launch with OutOfRange, naming the kernel, block, thread, the
// allocation and how many bytes out of bounds the access was; the process survives and
// later launches work (jit/host/runtime/fault_handler.h).
//
// Time: by default kernel threads keep virtual time on the steady clock (host_abi.h): the
// times a trace shows are the CPU's and vary with the machine's load. The steady clock is
// the TSC scaled to ns where it is invariant and the kernel's clocksource
// (virtual_clock.h TscClockUsable), else clock_gettime(CLOCK_MONOTONIC);
// WARPTRACE_HOST_TSC=0 in the environment forces the latter. With
// HostDeviceOptions::clock = kDeterministic (or WARPTRACE_HOST_CLOCK=deterministic in the
// environment, which the examples inherit) they advance only by explicit delays: a clock
// read takes 2 ns (3 cycles), so `while (clock64() - start < N) {}` takes N cycles (rounded
// up to a multiple of 3) plus its first read; __nanosleep(ns) takes ns; waiters at a barrier
// or mbarrier continue at the releasing arrival's time; all other work takes no time. Blocks
// are handed to the virtual SMs statically. A trace of the same kernel and inputs is then
// the same on every run, whatever the load: for tests that assert a diagnosis or a ranking.
// (A spin-wait that sees another thread's write still observes scheduling-dependent time.)
//
// Thread-safe.
#ifndef WARPTRACE_JIT_HOST_HOST_DEVICE_H_
#define WARPTRACE_JIT_HOST_HOST_DEVICE_H_

#include <cstddef>
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
#include "jit/compile/compile_cache.h"
#include "jit/host/runtime/guarded_memory.h"
#include "jit/host/compiler/host_compiler.h"
#include "jit/host/runtime/runtime.h"
#include "jit/platform/device.h"
#include "jit/platform/sanitize.h"

namespace warptrace {

struct HostDeviceOptions {
  // The C++ compiler: a path, or a name looked up on PATH. Empty: env WARPTRACE_HOST_CXX,
  // else g++, clang++, c++.
  std::string compiler;
  // Appended to the compiler's command line (e.g. {"-O2"}, {"-fsanitize=thread"}).
  std::vector<std::string> extra_flags;
  // Virtual SMs (worker threads) blocks run on: recorded as sm_id, reported as num_sms.
  // 0: the machine's core count; at least 2 either way (the examples' --host_sms).
  uint32_t num_virtual_sms = 0;
  // Blocks resident on each virtual SM at once.
  uint32_t blocks_per_sm = 2;
  // Shared-object cache directory; empty: DiskCache::DefaultDirectory(). With
  // use_disk_cache, the precompiled header of cuda_on_cpu.h is kept there too (in
  // "host-pch/"), so later processes reuse it.
  std::string cache_directory;
  bool use_disk_cache = true;
  // Compile kernels against a precompiled cuda_on_cpu.h (g++ and clang++; see
  // jit/host/compiler/host_compiler.h). The kernels behave the same either way.
  bool use_precompiled_header = true;
  // A launch running longer than this fails (a livelock guard; deadlocks fail at once).
  absl::Duration launch_timeout = absl::Seconds(60);
  // Stack of each CUDA thread's fiber (only touched pages cost memory).
  size_t fiber_stack_bytes = 256 * 1024;
  // How kernel threads keep time (see above). Unset: env WARPTRACE_HOST_CLOCK, "steady" or
  // "deterministic"; steady when that is unset or empty.
  std::optional<host::ClockMode> clock;
  // Launch limits, as on an H100: 1024 threads per block, 227 KiB of dynamic shared memory.
  uint32_t max_threads_per_block = 1024;
  uint32_t max_dynamic_shared_bytes = 227 * 1024;
  // The sanitizer (jit/platform/sanitize.h; docs/sanitizer.md): kernels are compiled with
  // every load and store checked by the runtime, and a launch with findings fails when it
  // ends (OutOfRange when any access was out of bounds, else FailedPrecondition) listing
  // them, each once per array and statement, sorted: the same on every run. An access that
  // would fault fails the launch at once with the sanitizer's message. Off by default
  // (its cost: docs/sanitizer.md).
  SanitizeOptions sanitize;
};

struct HostDeviceStats {
  uint64_t compilations = 0;  // runs of the C++ compiler
  uint64_t cache_hits = 0;    // shared objects served by the cache (memory or disk)
  uint64_t compilations_with_pch = 0;  // of the compilations, those with a precompiled header
  uint64_t pch_builds = 0;             // precompiled headers this device's compiler built
  uint64_t pch_fallbacks = 0;          // compilations rerun without a PCH that troubled them
};

class HostDevice final : public Device {
 public:
  // Finds the compiler and asks its version, starts the runtime's workers. Errors: NotFound
  // when no compiler is found (the message says what was looked for and how to set one);
  // Unavailable when it cannot be run; FailedPrecondition when no cache directory can be
  // derived (see DiskCache); InvalidArgument for a WARPTRACE_HOST_CLOCK other than steady
  // or deterministic.
  static absl::StatusOr<std::unique_ptr<HostDevice>> Create(HostDeviceOptions options = {});
  ~HostDevice() override;

  // "host backend (<compiler version>, N virtual SMs)", with ", deterministic clock".
  std::string Name() const override;
  DeviceKind Kind() const override { return DeviceKind::kHost; }
  ClockInfo Clock() const override;   // 1.5 GHz nominal (host_abi.h), num_virtual_sms SMs

  absl::StatusOr<void*> Allocate(uint64_t bytes) override;
  absl::Status Free(void* device_ptr) override;
  absl::Status CopyToDevice(void* device_dst, const void* host_src, uint64_t bytes) override;
  absl::Status CopyToHost(void* host_dst, const void* device_src, uint64_t bytes) override;
  absl::Status Memset(void* device_ptr, uint8_t value, uint64_t bytes) override;

  // Errors: InvalidArgument when the source does not compile (the compiler's output with the
  // offending lines quoted; inline PTX and tensor-core code are rejected naming the
  // construct) or the shared object lacks the host entry / ABI symbols; Unavailable when the
  // compiler cannot be run or the temporary directory written.
  absl::StatusOr<std::unique_ptr<LoadedKernel>> Load(const KernelSource& source) override;

  // Synchronous. Errors: those of host::Runtime::Launch (deadlock, timeout, failed assert,
  // misuse of a primitive, exception, OutOfRange for a fault); ResourceExhausted when the block size or dynamic
  // shared memory exceeds the limits; InvalidArgument for an empty grid/block or a kernel
  // loaded by another device.
  absl::Status Launch(LoadedKernel& kernel, Dim3 grid, Dim3 block,
                      uint32_t dynamic_shared_bytes, void** args) override;
  absl::Status Synchronize() override { return absl::OkStatus(); }
  // warptrace's own descriptor (jit/host/device/host_tma.h), read by the TMA primitives. Validates
  // the spec again (ValidateTensorMap) and checks the tensor lies inside one allocation of
  // this device: InvalidArgument naming `what` otherwise.
  absl::StatusOr<TensorMapBytes> EncodeTensorMap(const TensorMapSpec& spec,
                                                 void* device_address,
                                                 absl::string_view what) override;

  const std::string& compiler_path() const { return compiler_path_; }
  const std::string& compiler_version() const { return compiler_version_; }
  uint32_t num_virtual_sms() const { return runtime_->num_sms(); }
  host::ClockMode clock_mode() const { return runtime_->options().clock; }
  const SanitizeOptions& sanitize() const { return options_.sanitize; }
  HostDeviceStats stats() const;

 private:
  HostDevice(HostDeviceOptions options, std::string compiler_path,
             std::string compiler_version, const host::HostCompiler* host_compiler,
             std::unique_ptr<CachingCompiler> compiler, std::unique_ptr<host::Runtime> runtime);
  // The launch's device buffers for the sanitizer, each named by the argument pointing at
  // its start, if any.
  std::vector<host::SanitizeBuffer> SanitizeBuffers(const LoadedKernel& kernel,
                                                    void** args) const;
  // The allocation containing [ptr, ptr + bytes), or an InvalidArgument naming `what`.
  absl::Status CheckRange(const void* ptr, uint64_t bytes, const char* what) const;

  HostDeviceOptions options_;
  std::string compiler_path_;
  std::string compiler_version_;
  const host::HostCompiler* host_compiler_;  // owned by compiler_
  std::unique_ptr<CachingCompiler> compiler_;
  std::unique_ptr<host::Runtime> runtime_;

  mutable absl::Mutex memory_mu_;
  std::map<uintptr_t, host::GuardedRegion> allocations_ ABSL_GUARDED_BY(memory_mu_);  // by start
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_HOST_HOST_DEVICE_H_
