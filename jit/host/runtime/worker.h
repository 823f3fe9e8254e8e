// The host runtime's scheduler (jit/host/runtime/runtime.h has the execution model): a Worker is
// one virtual SM, an OS thread that keeps up to RuntimeOptions::blocks_per_sm blocks
// resident in its Slots and interleaves their fibers; LaunchState is what the workers of
// one launch share (the spec, the next block, the first failure).
//
// Internal to the runtime. A Worker's state is touched only by its own thread, except the
// atomics other workers read for the global deadlock check (rounds(), LatestVtime()) and
// LaunchState's failure, which is locked. The methods in the "called on fiber stacks"
// group run inside ABI calls (abi_table.h) and may switch to another fiber.
#ifndef WARPTRACE_JIT_HOST_WORKER_H_
#define WARPTRACE_JIT_HOST_WORKER_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "jit/host/runtime/block.h"
#include "jit/host/runtime/cluster.h"
#include "jit/host/runtime/fiber.h"
#include "jit/host/runtime/guarded_memory.h"
#include "jit/host/device/host_abi.h"
#include "jit/host/runtime/runtime.h"
#include "jit/host/runtime/sanitizer.h"
#include "jit/host/runtime/virtual_clock.h"

namespace warptrace::host {

// Thrown through kernel code to unwind a fiber of a failed launch.
struct FiberAborted {};

inline constexpr uint64_t kNoRounds = ~uint64_t{0};
inline constexpr uint32_t kStepsPerClockCheck = 4096;

inline Fiber* Self(void* fiber) { return static_cast<Fiber*>(fiber); }

// "block (x,y,z) thread (x,y,z)".
std::string ThreadName(const Fiber& f);

// What every worker of one launch shares.
struct LaunchState {
  LaunchSpec spec;
  uint64_t num_blocks = 0;
  uint32_t num_threads = 0;
  // CTAs per cluster (1 without clusters) and clusters in the grid: the workers take whole
  // clusters, numbered like blocks (x fastest) in the grid of clusters.
  uint32_t cluster_size = 1;
  uint64_t num_clusters = 0;
  std::chrono::steady_clock::time_point deadline;
  WarptraceHostClock clock{};  // the steady clock of this launch (host_abi.h)
  bool deterministic = false;  // ClockMode::kDeterministic (virtual_clock.h)
  int64_t start_ns = 0;  // virtual start of the first wave of blocks
  std::atomic<uint64_t> next_block{0};
  std::atomic<bool> failed{false};
  // Global deadlock detection among spinning workers.
  std::atomic<uint32_t> idle_workers{0};
  std::atomic<uint64_t> busy_transitions{0};
  // Sanitize mode (LaunchSpec::sanitize): the launch's buffers and findings; else null.
  std::unique_ptr<LaunchSanitizer> sanitizer;

  absl::Mutex mu;
  absl::Status failure ABSL_GUARDED_BY(mu);
  bool want_census ABSL_GUARDED_BY(mu) = false;
  std::vector<std::string> census ABSL_GUARDED_BY(mu);

  // Records the launch's first failure. `census`: every worker appends what its resident
  // blocks' threads wait on.
  void Fail(absl::Status status, bool with_census = false) {
    absl::MutexLock lock(&mu);
    if (!failure.ok()) return;
    failure = std::move(status);
    want_census = with_census;
    failed.store(true);
  }
};


// One resident block slot of a worker, reused across blocks and launches. Its shared
// memory sits between guard pages (guarded_memory.h): the static area (48 KiB) and the
// dynamic area, whose end abuts its upper guard.
struct Slot {
  std::optional<Block> block;
  std::shared_ptr<Cluster> cluster;  // the block's cluster, shared by its CTAs' slots
  bool finished_in_cluster = false;  // the cluster saw this CTA finish
  std::vector<Fiber> fibers;
  std::vector<FiberStack> stacks;
  GuardedRegion static_shared;
  GuardedRegion dynamic_shared;
  uint64_t dynamic_shared_align = 0;  // what dynamic_shared was mapped with
  int64_t end_vtime = 0;  // when the slot's last block ended: the next one starts then
};

class Worker {
 public:
  Worker(uint32_t index, const RuntimeOptions& options) : index_(index), options_(options) {
    slots_.resize(options.blocks_per_sm);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void MakeReady(Fiber* fiber) { ready_.Push(fiber); }

  std::atomic<uint64_t>& rounds() { return rounds_; }

  void RunLaunch(LaunchState& launch, std::vector<std::unique_ptr<Worker>>& all);

  // ---- Called on fiber stacks, from the ABI callbacks. ----
  // Suspends `f` (waiting on its block; its clock stopped at `now`). The common case
  // switches straight to the next ready fiber; anything that needs the scheduler's
  // attention (a deadlock to report, a failed launch, an idle worker, a clock check) goes
  // through it.
  void Park(Fiber* f, int64_t now) {
    f->last_was_spin = false;
    Publish(f->vtime);
    Fiber* next = nullptr;
    if (!f->block->Deadlocked() && !idle_ && ++steps_ < kStepsPerClockCheck &&
        !launch_->failed.load(std::memory_order_relaxed)) {
      next = PopReady();
    }
    if (next != nullptr) {
      unchanged_spins_ = 0;
      // The fiber after it: its saved registers are read at the next switch (measured:
      // BM_BlockBarrier/384 18.9 -> 17.7 ms; more lines of its stack gained nothing).
      if (const Fiber* after = ready_.front(); after != nullptr) {
        __builtin_prefetch(after->context.saved_state());
      }
      Enter(next, now);
      SwitchFiber(f->context, next->context);
    } else {
      SwitchFiber(f->context, scheduler_context_);
    }
    if (f->aborted) throw FiberAborted{};
  }
  void Spin(Fiber* f, const volatile void* address, uint64_t value, const char* what) {
    const uint64_t object = reinterpret_cast<uintptr_t>(address);
    const bool same_poll = f->last_was_spin && f->wait_object == object && f->wait_what == what;
    f->spin_unchanged = same_poll && f->wait_detail == value;
    StopClock(f, NowNs(f));
    if (address == nullptr) {
      f->vtime += static_cast<int64_t>(value);  // __nanosleep(value)
    } else if (same_poll && !f->spin_unchanged) {
      // Another thread changed the polled value: it did so no later than the latest time
      // any thread reached.
      f->vtime = std::max(f->vtime, LatestVtime());
    }
    Publish(f->vtime);
    f->wait = WaitKind::kSpin;
    f->wait_object = object;
    f->wait_detail = value;
    f->wait_what = what;
    MakeReady(f);
    SwitchFiber(f->context, scheduler_context_);
    f->wait = WaitKind::kNone;
    f->last_was_spin = true;
    if (f->aborted) throw FiberAborted{};
  }
  // The tail of a synchronization call that may wait (a barrier, a warp collective, an
  // mbarrier wait) whose block operation returned `result`: fails the launch on the
  // operation's error (error()), parks `f` when it must wait, and otherwise restarts its
  // clock (a completer's release of its waiters is the runtime's work, not the thread's).
  // Always inlined: as a call it cost BM_BlockBarrier/384 ~30% (16.5 -> 22 ms).
  [[gnu::always_inline]] void FinishSync(Fiber* f, Wait result, int64_t now) {
    if (!error_.empty()) [[unlikely]] FailWithError(f, absl::StatusCode::kFailedPrecondition);
    if (result == Wait::kPark) {
      Park(f, now);
    } else {
      StartClock(f, NowNs(f));
    }
    f->last_was_spin = false;
  }
  // Where the block's operations put an error (empty otherwise): a worker's string, so that
  // the hot ABI calls keep no string of their own.
  std::string* error() { return &error_; }
  // Fails the launch with error() (cleared) from a fiber and unwinds it.
  [[noreturn, gnu::noinline]] void FailWithError(Fiber* f, absl::StatusCode code) {
    const std::string message = std::move(error_);
    error_.clear();
    FailFromFiber(f, code, message);
  }
  // Fails the launch from a fiber and unwinds it.
  [[noreturn]] void FailFromFiber(Fiber* f, absl::StatusCode code, const std::string& message) {
    launch_->Fail(absl::Status(code, absl::StrCat(ThreadName(*f), ": ", message)));
    f->aborted = true;
    throw FiberAborted{};
  }
  // Fails the launch and ends the fiber where it stands (its stack is abandoned, nothing
  // is unwound): for callers that must not throw.
  [[noreturn]] void EndWithoutUnwinding(Fiber* f, absl::StatusCode code, const char* message);
  // Where a fiber that faulted (fault_handler.h) continues, on its own stack: fails the
  // launch naming the thread and what the access hit, and ends the fiber like
  // EndWithoutUnwinding.
  [[noreturn]] static void LandFault(void* fiber);

  // The latest virtual time the fibers of this worker reached, for other workers' polls.
  void Publish(int64_t vtime) {
    if (vtime > latest_.load(std::memory_order_relaxed)) {
      latest_.store(vtime, std::memory_order_relaxed);
    }
  }
  int64_t LatestVtime() const {
    int64_t latest = 0;
    for (const auto& w : *all_) {
      latest = std::max(latest, w->latest_.load(std::memory_order_relaxed));
    }
    return latest;
  }

  static void FiberMain(void* arg);

 private:
  bool Admit();
  // Admit for a clustered launch: whole clusters into free slots.
  void AdmitClusters();
  absl::Status StartBlock(Slot& slot, uint64_t linear);
  // A block of a cluster finished: checks the cluster's exit rule, and frees the cluster's
  // slots once every CTA finished.
  void FinishClusterBlock(Slot& slot);
  void Enter(Fiber* f, int64_t now) {
    running_ = f;
    warptrace_host_current = &f->abi;
    f->started = true;
    StartClock(f, now);
  }
  void Run(Fiber* f);
  void AfterRun(Fiber* f);
  void AbortResident();
  void Idle(std::vector<std::unique_ptr<Worker>>& all);
  void BecomeIdle();
  void BecomeBusy();
  bool HasResident() const {
    for (const Slot& s : slots_) {
      if (s.block.has_value()) return true;
    }
    return false;
  }
  Fiber* PopReady() { return ready_.Pop(); }

  // The next block for this worker: the grid's next in the steady mode; in the
  // deterministic mode, statically the worker's next of index_, index_ + num_sms, ...
  uint64_t NextBlock();

  const uint32_t index_;
  const RuntimeOptions& options_;
  std::atomic<uint64_t> rounds_{0};  // idle rounds this launch (kNoRounds: done)
  std::atomic<int64_t> latest_{0};   // see Publish
  const std::vector<std::unique_ptr<Worker>>* all_ = nullptr;
  std::string error_;  // see error()
  std::vector<Slot> slots_;
  FiberContext scheduler_context_;
  ReadyQueue ready_;
  Fiber* running_ = nullptr;  // the fiber last switched to
  uint32_t steps_ = 0;        // switches since the last clock check
  uint64_t assigned_ = 0;     // blocks this worker took this launch (deterministic mode)
  LaunchState* launch_ = nullptr;
  // Idle detection: consecutive unchanged spins; whether this worker counts as idle.
  uint64_t unchanged_spins_ = 0;
  bool idle_ = false;
  bool aborted_resident_ = false;
  uint32_t idle_rounds_ = 0;
  // Snapshot for the global deadlock check.
  bool have_snapshot_ = false;
  uint64_t snapshot_transitions_ = 0;
  std::vector<uint64_t> snapshot_rounds_;
};


inline Worker& OwnerOf(Fiber* f) { return *static_cast<Worker*>(f->owner); }

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_WORKER_H_
