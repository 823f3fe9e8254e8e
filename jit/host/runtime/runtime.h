// The host backend's runtime: runs a launch of a kernel compiled for the host (a shared
// object built against cuda_on_cpu.h, see host_abi.h) the way a GPU would.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Runtime> runtime, Runtime::Create({.num_sms = 4}));
//   RETURN_IF_ERROR(runtime->Launch(spec));   // synchronous
//
// Execution model. Every CUDA thread is a fiber (jit/host/runtime/fiber.h) scheduled cooperatively:
// it runs until it reaches a synchronization point (a barrier, a warp collective, an
// mbarrier wait, a spin-wait hook) and only then another fiber runs. The blocks of a launch
// are handed out in linear order to a pool of worker threads, one per virtual SM, each
// holding up to `blocks_per_sm` resident blocks whose fibers it interleaves; a block never
// moves between workers, and its sm_id is its worker's index. Blocks therefore run
// concurrently, overlap in time like on a GPU, and may wait on each other (a block that
// spins on a flag of an earlier block lets that block run: earlier blocks are always
// resident or finished).
//
// Hangs. A block whose live threads all wait on its own barriers, warp collectives or
// mbarriers can never continue: the launch fails at once (DeadlineExceeded) naming the
// block and, per run of threads, what each waits on. When every worker has only spinning
// threads left and a full round of their polls sees nothing change, the launch fails the
// same way naming every resident block. A launch running longer than `launch_timeout` is
// stopped at its threads' next synchronization point. A thread that loops forever without
// reaching one cannot be interrupted.
//
// Errors of Launch: DeadlineExceeded (deadlock, timeout); FailedPrecondition (a misuse of a
// primitive: a warp mask that does not name its lane or names an exited one, disagreeing
// barrier counts); Aborted (a failed device assert, naming block and thread); Internal (a
// C++ exception escaping kernel code); ResourceExhausted (static shared memory over 48 KiB,
// fiber stacks that cannot be mapped); OutOfRange (a thread faulted: an access past the end
// or before the start of its block's shared memory or a device buffer, which sit between
// guard pages, names the allocation and how many bytes out of bounds it was; a null or
// stray pointer or a stack overflow says so; see fault_handler.h). The process survives a
// fault and later launches work.
//
// Files: runtime.cc (this class), worker.h (the scheduler), abi_table.h (what kernels call),
// virtual_clock.h (time), block.h (one block's synchronization state), fault_handler.h and
// guarded_memory.h (faults), recorder_hooks.cc (the symbols kernels bind to).
//
// Thread-safe; launches are serialized.
#ifndef WARPTRACE_JIT_HOST_RUNTIME_H_
#define WARPTRACE_JIT_HOST_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "jit/host/device/host_abi.h"
#include "jit/host/runtime/sanitizer.h"

namespace warptrace::host {

// How threads keep time (virtual_clock.h has the details).
enum class ClockMode {
  // Virtual time on the steady clock: each thread's clock runs while it runs (as if every
  // thread had its own core), with the time its worker was preempted taken out.
  kSteady,
  // No real clock: a thread's time advances only by explicit delays (each clock read takes
  // 2 ns, __nanosleep its argument) and synchronization (waiters move to the releaser's
  // time). For tests whose result must not depend on the machine's load.
  kDeterministic,
};

struct RuntimeOptions {
  // Virtual SMs (worker threads). 0: the machine's core count; at least 2 either way.
  uint32_t num_sms = 0;
  // Blocks each virtual SM keeps resident at once.
  uint32_t blocks_per_sm = 2;
  // Stack of each CUDA thread (mapped lazily: only touched pages cost memory).
  size_t fiber_stack_bytes = 256 * 1024;
  // Wall-clock guard against livelock.
  absl::Duration launch_timeout = absl::Seconds(60);
  ClockMode clock = ClockMode::kSteady;
  // The deterministic clock also hands the blocks out statically (worker w runs blocks w,
  // w + num_sms, ...), so block start times and SMs repeat from run to run.
};

struct LaunchSpec {
  std::string what;  // "launching kernel k on grid ... x block ...", prefixes errors
  WarptraceHostEntryFn entry = nullptr;
  void** args = nullptr;
  WarptraceHostDim grid{1, 1, 1};
  WarptraceHostDim block{1, 1, 1};
  uint64_t dynamic_shared_bytes = 0;
  uint64_t dynamic_shared_align = 16;  // the base's alignment (a power of two, at most 4096)
  // Thread-block clusters (cluster.h): the CTAs of each cluster of this shape (which must
  // divide the grid; at most 16 CTAs) run together on one virtual SM, which keeps as many
  // slots as the cluster has CTAs when blocks_per_sm is smaller. {1,1,1}: no clusters.
  WarptraceHostDim cluster{1, 1, 1};
  // The sanitizer's checks (WARPTRACE_HOST_SANITIZE_* bits; sanitizer.h), for a kernel
  // compiled in sanitize mode (0: none; a kernel compiled without it is not checked), and
  // the device buffers it checks global accesses against. Findings fail the launch when it
  // ends: OutOfRange when any is out of bounds, else FailedPrecondition, the message
  // listing them (sorted, each once per array and statement).
  uint32_t sanitize = 0;
  std::vector<SanitizeBuffer> sanitize_buffers;
};

class Worker;
struct LaunchState;

class Runtime {
 public:
  // Starts the worker threads. InvalidArgument for blocks_per_sm == 0.
  static absl::StatusOr<std::unique_ptr<Runtime>> Create(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Runs the whole grid; returns when every block finished or the launch failed.
  absl::Status Launch(const LaunchSpec& spec);

  uint32_t num_sms() const { return static_cast<uint32_t>(workers_.size()); }
  const RuntimeOptions& options() const { return options_; }

 private:
  explicit Runtime(RuntimeOptions options);
  void WorkerMain(Worker* worker);

  RuntimeOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  absl::Mutex launch_mu_;  // serializes launches
  absl::Mutex mu_;
  absl::CondVar start_cv_;  // a launch was published, or shutdown
  absl::CondVar done_cv_;   // every worker finished the launch
  LaunchState* launch_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t finished_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_RUNTIME_H_
