#include "jit/host/runtime.h"

#include <algorithm>
#include <atomic>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/clock.h"
#include "jit/host/block.h"
#include "jit/host/fiber.h"

// host_abi.h: the worker thread's current CUDA thread, read by kernels, and the hooks the
// kernels' recorder and assert() call (exported by the program: see BUILD).
extern "C" {
__thread const WarptraceHostThread* warptrace_host_current = nullptr;
}

namespace {
// The fields the recorder's hooks write (the paired globaltimer read, clock_last_ns).
WarptraceHostThread& MutableCurrent() {
  return const_cast<WarptraceHostThread&>(*warptrace_host_current);
}
}  // namespace

extern "C" unsigned long long warptrace_host_globaltimer(void) {
  WarptraceHostThread& t = MutableCurrent();
  const auto ns = static_cast<unsigned long long>(warptrace_host_virtual_ns(&t));
  t.paired_globaltimer_ns = ns;
  t.has_paired_globaltimer = 1;
  return ns;
}

extern "C" unsigned int warptrace_host_clock(void) {
  WarptraceHostThread& t = MutableCurrent();
  if (t.has_paired_globaltimer) {  // the second read of a stamp pair
    t.has_paired_globaltimer = 0;
    return static_cast<unsigned int>(warptrace_host_cycles_at(t.paired_globaltimer_ns));
  }
  return static_cast<unsigned int>(warptrace_host_cycles(&t));
}

extern "C" unsigned int warptrace_host_smid(void) { return warptrace_host_current->sm_id; }

extern "C" void warptrace_host_assert_fail(const char* assertion, const char* file,
                                           unsigned int line, const char* function) {
  char message[1024];
  const char* base = std::strrchr(file, '/');  // the compiler saw a temporary directory
  std::snprintf(message, sizeof(message), "assertion `%s` failed at %s:%u in %s", assertion,
                base != nullptr ? base + 1 : file, line, function);
  const WarptraceHostThread& t = *warptrace_host_current;
  t.rt->fail(t.fiber, message);
  __builtin_unreachable();
}

namespace warptrace::host {
namespace {

// Thrown through kernel code to unwind a fiber of a failed launch.
struct FiberAborted {};

constexpr uint64_t kNoRounds = ~uint64_t{0};
constexpr uint32_t kStepsPerClockCheck = 4096;

Fiber* Self(void* fiber) { return static_cast<Fiber*>(fiber); }

int64_t MonotonicNs() { return ReadClockNs(CLOCK_MONOTONIC); }

// The steady clock of host_abi.h (WarptraceHostClock): the TSC scaled to ns where the
// kernel itself keeps time with the TSC, else CLOCK_MONOTONIC.
struct TscPoint {
  uint64_t tsc = 0;
  int64_t ns = 0;
};

#if defined(__x86_64__)
// The TSC and CLOCK_MONOTONIC read together: of a few tries, the one whose two monotonic
// reads around the TSC read are closest (a preemption between them would skew the pair).
TscPoint ReadTscPoint() {
  TscPoint best;
  int64_t best_spread = INT64_MAX;
  for (int i = 0; i < 5; ++i) {
    const int64_t before = MonotonicNs();
    const uint64_t tsc = __builtin_ia32_rdtsc();
    const int64_t after = MonotonicNs();
    if (after - before < best_spread) {
      best_spread = after - before;
      best = {tsc, before + (after - before) / 2};
    }
  }
  return best;
}

// Whether the kernel keeps time with the TSC: then it is constant-rate and synchronized
// across cores (the kernel checked), so fibers may read it on any worker.
bool KernelUsesTsc() {
  std::FILE* f = std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  if (f == nullptr) return false;
  char name[32] = {};
  const bool tsc = std::fgets(name, sizeof(name), f) != nullptr && std::strcmp(name, "tsc\n") == 0;
  std::fclose(f);
  return tsc;
}

// The process's first TSC point, taken once at least kCalibrationNs before any rate is
// derived from it. Each launch derives the rate from this point to its own (a baseline as
// long as the process has lived: the error shrinks as it runs). nullopt: no usable TSC.
constexpr int64_t kCalibrationNs = 2000000;
const std::optional<TscPoint>& FirstTscPoint() {
  static const std::optional<TscPoint> first = []() -> std::optional<TscPoint> {
    if (!KernelUsesTsc()) return std::nullopt;
    const TscPoint p = ReadTscPoint();
    while (MonotonicNs() < p.ns + kCalibrationNs) {
    }
    return p;
  }();
  return first;
}
#endif

// The clock of a launch starting now (host_abi.h, WarptraceHostClock).
WarptraceHostClock LaunchClock() {
  WarptraceHostClock clock{0, MonotonicNs(), 0};
#if defined(__x86_64__)
  if (const std::optional<TscPoint>& first = FirstTscPoint(); first.has_value()) {
    const TscPoint now = ReadTscPoint();
    if (now.tsc > first->tsc && now.ns > first->ns) {
      clock.tsc_base = now.tsc;
      clock.ns_base = now.ns;
      clock.ns_per_tick_q32 = static_cast<uint64_t>(
          (static_cast<unsigned __int128>(now.ns - first->ns) << 32) / (now.tsc - first->tsc));
    }
  }
#endif
  return clock;
}

int64_t NowNs(const Fiber* f) { return warptrace_host_now_ns(f->abi.clock); }

int64_t ThreadCpuNs() { return ReadClockNs(CLOCK_THREAD_CPUTIME_ID); }

// Virtual clocks (host_abi.h). A fiber's clock runs on the steady clock while it runs, in
// slices of at most kClockSlice: past it, the clock is re-checked against the worker
// thread's CPU time, and the time the OS did not run the worker is taken out (on a loaded
// machine a preempted thread would otherwise be milliseconds late at the next barrier, and
// its barrier would release everyone that late).
constexpr int64_t kClockSlice = 20000;  // ns
constexpr int64_t kMinPreemption = 50000;  // ns

struct CpuCheckpoint {
  int64_t wall = 0;
  int64_t cpu = 0;
};
thread_local CpuCheckpoint cpu_checkpoint;

// f's virtual time at `now`, with the time the worker was preempted since the last
// checkpoint (at most since the fiber resumed) taken out; never earlier than the last value
// the fiber read (so two reads around a preemption, e.g. the recorder's globaltimer and
// clock stamps, stay together).
int64_t CorrectedClock(Fiber* f, int64_t now) {
  const int64_t cpu = ThreadCpuNs();
  int64_t preempted = (now - cpu_checkpoint.wall) - (cpu - cpu_checkpoint.cpu);
  // Below a scheduler time slice the difference is measurement noise (the two clocks are
  // read a little apart): correcting for it would only pull paired reads apart.
  if (preempted < kMinPreemption) preempted = 0;
  cpu_checkpoint = {now, cpu};
  const int64_t raw = now + f->abi.clock_offset_ns;
  const int64_t slice = now - f->resumed_wall;
  int64_t v = raw - std::clamp<int64_t>(preempted, 0, slice);
  v = std::max<int64_t>(v, f->abi.clock_last_ns);
  f->abi.clock_offset_ns = v - now;
  f->abi.clock_limit_ns = v + kClockSlice;
  return v;
}

// Stops `f`'s virtual clock at `now`: f->vtime is its virtual time.
void StopClock(Fiber* f, int64_t now) {
  const int64_t raw = now + f->abi.clock_offset_ns;
  f->vtime = raw <= f->abi.clock_limit_ns ? raw : CorrectedClock(f, now);
}
// Restarts it at `now` from f->vtime (which a synchronization may have moved forward).
// A new CPU-time checkpoint of the worker; returns the time after it (the check's own cost
// is nobody's).
[[gnu::noinline]] int64_t RefreshCpuCheckpoint(const Fiber* f) {
  cpu_checkpoint.cpu = ThreadCpuNs();
  return cpu_checkpoint.wall = NowNs(f);
}
inline void StartClock(Fiber* f, int64_t now) {
  if (now - cpu_checkpoint.wall > kClockSlice) [[unlikely]] now = RefreshCpuCheckpoint(f);
  f->resumed_wall = now;
  f->abi.clock_offset_ns = f->vtime - now;
  f->abi.clock_limit_ns = f->vtime + kClockSlice;
  f->abi.clock_last_ns = f->vtime;
}

std::string ThreadName(const Fiber& f) {
  const WarptraceHostThread& a = f.abi;
  return absl::StrFormat("block (%u,%u,%u) thread (%u,%u,%u)", a.block_idx.x, a.block_idx.y,
                         a.block_idx.z, a.thread_idx.x, a.thread_idx.y, a.thread_idx.z);
}

}  // namespace

// What every worker of one launch shares.
struct LaunchState {
  LaunchSpec spec;
  uint64_t num_blocks = 0;
  uint32_t num_threads = 0;
  std::chrono::steady_clock::time_point deadline;
  WarptraceHostClock clock{};  // the steady clock of this launch (host_abi.h)
  int64_t start_ns = 0;  // virtual start of the first wave of blocks
  std::atomic<uint64_t> next_block{0};
  std::atomic<bool> failed{false};
  // Global deadlock detection among spinning workers.
  std::atomic<uint32_t> idle_workers{0};
  std::atomic<uint64_t> busy_transitions{0};

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

// One resident block slot of a worker, reused across blocks and launches.
struct Slot {
  std::optional<Block> block;
  std::vector<Fiber> fibers;
  std::vector<FiberStack> stacks;
  std::unique_ptr<char, decltype(&std::free)> arena{nullptr, &std::free};
  uint64_t arena_bytes = 0;
  int64_t end_vtime = 0;  // when the slot's last block ended: the next one starts then
};

class Worker {
 public:
  Worker(uint32_t index, const RuntimeOptions& options) : index_(index), options_(options) {
    slots_.resize(options.blocks_per_sm);
  }

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
  [[noreturn]] void EndWithoutUnwinding(Fiber* f, absl::StatusCode code, const char* message) {
    {  // nothing that owns memory may stay on the abandoned frames
      launch_->Fail(absl::Status(code, absl::StrCat(ThreadName(*f), ": ", message)));
      f->aborted = true;
      StopClock(f, NowNs(f));
      std::string ignored;
      f->block->Exit(f, &ignored);
    }
    SwitchFiber(f->context, scheduler_context_);
    __builtin_trap();
  }

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
  absl::Status StartBlock(Slot& slot, uint64_t linear);
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

namespace {

// ---- The ABI table: kernel code calls these on its fibers. ----

Worker& OwnerOf(Fiber* f) { return *static_cast<Worker*>(f->owner); }

int AbiBarrier(void* fiber, unsigned int id, unsigned int count, int wait, int op,
               int predicate, const char* what) {
  Fiber* f = Self(fiber);
  Worker& w = OwnerOf(f);
  const int64_t now = NowNs(f);
  StopClock(f, now);
  const Wait result =
      f->block->Barrier(f, id, count, wait != 0, op, predicate != 0, what, w.error());
  if (!w.error()->empty()) [[unlikely]] {
    w.FailWithError(f, absl::StatusCode::kFailedPrecondition);
  }
  if (result == Wait::kPark) {
    w.Park(f, now);
  } else {  // a completer woke its waiters: that work is the runtime's, not the thread's
    StartClock(f, NowNs(f));
  }
  f->last_was_spin = false;
  return static_cast<int>(f->result);
}

unsigned long long AbiWarp(void* fiber, int op, unsigned int mask, unsigned long long value,
                           unsigned int arg, const char* what) {
  Fiber* f = Self(fiber);
  Worker& w = OwnerOf(f);
  const int64_t now = NowNs(f);
  StopClock(f, now);
  const Wait result = f->block->WarpCollective(f, op, mask, value, arg, what, w.error());
  if (!w.error()->empty()) [[unlikely]] {
    w.FailWithError(f, absl::StatusCode::kFailedPrecondition);
  }
  if (result == Wait::kPark) {
    w.Park(f, now);
  } else {  // a completer woke its waiters: that work is the runtime's, not the thread's
    StartClock(f, NowNs(f));
  }
  f->last_was_spin = false;
  return f->result;
}

unsigned int AbiActiveMask(void* fiber) {
  Fiber* f = Self(fiber);
  return f->block->ActiveMask(f);
}

void* AbiShared(void* fiber, unsigned int site, unsigned long long bytes,
                unsigned long long align, const char* name) {
  Fiber* f = Self(fiber);
  std::string error;
  void* p = f->block->Shared(site, bytes, align == 0 ? 1 : align, name, &error);
  if (!error.empty()) {
    OwnerOf(f).FailFromFiber(f, absl::StatusCode::kResourceExhausted, error);
  }
  return p;
}

void AbiMbarrierWait(void* fiber, unsigned long long* bar, unsigned int parity) {
  Fiber* f = Self(fiber);
  f->last_was_spin = false;
  const int64_t now = NowNs(f);
  StopClock(f, now);
  if (f->block->MbarrierWait(f, bar, parity) == Wait::kPark) {
    OwnerOf(f).Park(f, now);
  } else {  // a completer woke its waiters: that work is the runtime's, not the thread's
    StartClock(f, NowNs(f));
  }
}

void AbiMbarrierArrived(void* fiber, unsigned long long* bar, int completed) {
  Fiber* f = Self(fiber);
  StopClock(f, NowNs(f));  // vtime is the arrival's time
  f->block->MbarrierArrived(f, bar, completed != 0);
  // The thread runs on from its arrival: a completing arrival's release of the waiters
  // (any number of them) is the runtime's work, not the thread's, so its clock restarts
  // after it, as a completer's does at a barrier.
  if (completed != 0) StartClock(f, NowNs(f));
}

void AbiSpin(void* fiber, const volatile void* address, unsigned long long value,
             const char* what) {
  Fiber* f = Self(fiber);
  OwnerOf(f).Spin(f, address, value, what);
}

void FlushCopies(std::vector<Fiber::Copy>& copies) {
  for (const Fiber::Copy& c : copies) std::memcpy(c.dst, c.src, c.bytes);
  copies.clear();
}

void AbiCpAsync(void* fiber, void* dst, const void* src, unsigned int bytes) {
  Self(fiber)->open_copies.push_back({dst, src, bytes});
}

void AbiCpAsyncCommit(void* fiber) {
  Fiber* f = Self(fiber);
  f->copy_groups.push_back(std::move(f->open_copies));
  f->open_copies.clear();
}

void AbiCpAsyncWaitPrior(void* fiber, unsigned int groups) {
  Fiber* f = Self(fiber);
  while (f->copy_groups.size() > groups) {
    FlushCopies(f->copy_groups.front());
    f->copy_groups.pop_front();
  }
}

unsigned long long AbiClock(void* fiber) {
  return static_cast<unsigned long long>(CorrectedClock(Self(fiber), NowNs(Self(fiber))));
}

void AbiFail(void* fiber, const char* message) {
  Fiber* f = Self(fiber);
  OwnerOf(f).EndWithoutUnwinding(f, absl::StatusCode::kAborted, message);
}

const WarptraceHostRuntime kAbi = {
    &AbiBarrier,  &AbiWarp,     &AbiActiveMask,    &AbiShared,
    &AbiMbarrierWait, &AbiMbarrierArrived, &AbiSpin, &AbiCpAsync,
    &AbiCpAsyncCommit, &AbiCpAsyncWaitPrior, &AbiClock, &AbiFail,
};

}  // namespace

void Worker::FiberMain(void* arg) {
  Fiber* f = Self(arg);
  Worker& w = OwnerOf(f);
  if (!f->aborted) {
    try {
      w.launch_->spec.entry(w.launch_->spec.args);
    } catch (const FiberAborted&) {
      // The launch failed; the reason is in the launch state.
    } catch (const std::exception& e) {
      w.launch_->Fail(absl::InternalError(absl::StrCat(ThreadName(*f), " threw: ", e.what())));
    } catch (...) {
      w.launch_->Fail(
          absl::InternalError(absl::StrCat(ThreadName(*f), " threw a non-std exception")));
    }
  }
  StopClock(f, NowNs(f));
  w.Publish(f->vtime);
  {  // nothing that owns memory may stay on this frame: it is never returned from
    std::string error;
    f->block->Exit(f, &error);
    if (!error.empty() && !f->aborted) {
      w.launch_->Fail(absl::FailedPreconditionError(
          absl::StrCat(f->block->Name(), ": ", error)));
    }
  }
  SwitchFiber(f->context, w.scheduler_context_);
  __builtin_trap();  // an exited fiber is never resumed
}

absl::Status Worker::StartBlock(Slot& slot, uint64_t linear) {
  const LaunchSpec& spec = launch_->spec;
  const uint32_t n = launch_->num_threads;
  if (slot.fibers.size() < n) slot.fibers.resize(n);
  while (slot.stacks.size() < n) {
    absl::StatusOr<FiberStack> stack = FiberStack::Allocate(options_.fiber_stack_bytes);
    if (!stack.ok()) return stack.status();
    slot.stacks.push_back(*std::move(stack));
  }
  const uint64_t arena = WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES + spec.dynamic_shared_bytes;
  if (slot.arena_bytes < arena) {
    slot.arena.reset(static_cast<char*>(std::aligned_alloc(128, (arena + 127) / 128 * 128)));
    if (slot.arena == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", arena, " bytes of shared memory"));
    }
    slot.arena_bytes = arena;
  }
  const WarptraceHostDim idx = {static_cast<uint32_t>(linear % spec.grid.x),
                                static_cast<uint32_t>(linear / spec.grid.x % spec.grid.y),
                                static_cast<uint32_t>(linear / spec.grid.x / spec.grid.y)};
  Block& block = slot.block.emplace(&ready_, linear, idx, spec.block, spec.grid, index_,
                                    slot.fibers.data(), n, slot.arena.get(),
                                    spec.dynamic_shared_bytes, &kAbi, &launch_->clock,
                                    slot.end_vtime);
  for (uint32_t t = 0; t < n; ++t) {
    Fiber* f = block.fiber(t);
    f->owner = this;
    f->context.Start(slot.stacks[t], &Worker::FiberMain, f);
    MakeReady(f);
  }
  return absl::OkStatus();
}

// Fills free slots with the next blocks of the grid. False when nothing is resident.
bool Worker::Admit() {
  if (!launch_->failed.load(std::memory_order_relaxed)) {
    for (Slot& slot : slots_) {
      if (slot.block.has_value()) continue;
      const uint64_t linear = launch_->next_block.fetch_add(1);
      if (linear >= launch_->num_blocks) break;
      absl::Status started = StartBlock(slot, linear);
      if (!started.ok()) {
        launch_->Fail(absl::Status(started.code(),
                                   absl::StrCat("block ", linear, ": ", started.message())));
        break;
      }
      if (idle_) BecomeBusy();
    }
  }
  return HasResident();
}

void Worker::Run(Fiber* f) {
  Enter(f, NowNs(f));
  SwitchFiber(scheduler_context_, f->context);
}

void Worker::AfterRun(Fiber* f) {
  Block& block = *f->block;
  if (f->wait == WaitKind::kSpin && f->spin_unchanged) {
    ++unchanged_spins_;
  } else {
    unchanged_spins_ = 0;
    idle_rounds_ = 0;
    if (idle_) BecomeBusy();
  }
  if (block.Finished()) {
    for (Slot& slot : slots_) {
      if (slot.block.has_value() && &*slot.block == &block) {
        slot.end_vtime = block.EndVtime();
        slot.block.reset();
      }
    }
    return;
  }
  if (block.Deadlocked() && !launch_->failed.load()) {
    launch_->Fail(absl::DeadlineExceededError(absl::StrFormat(
        "deadlock in %s (linear %u, virtual SM %u): every thread that has not exited waits on "
        "a barrier, warp collective or mbarrier of the block that can no longer complete: %s",
        block.Name(), block.linear(), index_, block.Census())));
  }
}

void Worker::AbortResident() {
  if (aborted_resident_) return;
  aborted_resident_ = true;
  {
    absl::MutexLock lock(&launch_->mu);
    if (launch_->want_census) {
      for (Slot& slot : slots_) {
        if (!slot.block.has_value()) continue;
        launch_->census.push_back(absl::StrFormat("%s (linear %u) on virtual SM %u: %s",
                                                  slot.block->Name(), slot.block->linear(),
                                                  index_, slot.block->Census()));
      }
    }
  }
  for (Slot& slot : slots_) {
    if (!slot.block.has_value()) continue;
    Block& block = *slot.block;
    block.DropWaiters();  // their chains are rebuilt below as one ready queue
    for (uint32_t t = 0; t < block.num_threads(); ++t) {
      Fiber* f = block.fiber(t);
      if (f->wait == WaitKind::kExited) continue;
      f->aborted = true;
      if (f->wait == WaitKind::kBarrier || f->wait == WaitKind::kWarp ||
          f->wait == WaitKind::kMbarrier) {
        f->wait = WaitKind::kNone;
        block.Unpark();
        MakeReady(f);
      }
    }
  }
}

void Worker::BecomeIdle() {
  idle_ = true;
  launch_->idle_workers.fetch_add(1);
}

void Worker::BecomeBusy() {
  idle_ = false;
  have_snapshot_ = false;
  launch_->idle_workers.fetch_sub(1);
  launch_->busy_transitions.fetch_add(1);
}

// A full round of this worker's ready fibers spun without seeing a change.
void Worker::Idle(std::vector<std::unique_ptr<Worker>>& all) {
  unchanged_spins_ = 0;
  if (!idle_) BecomeIdle();
  rounds().fetch_add(1);
  if (launch_->idle_workers.load() == all.size()) {
    const uint64_t transitions = launch_->busy_transitions.load();
    if (!have_snapshot_ || transitions != snapshot_transitions_) {
      have_snapshot_ = true;
      snapshot_transitions_ = transitions;
      snapshot_rounds_.clear();
      for (auto& w : all) snapshot_rounds_.push_back(w->rounds().load());
    } else {
      bool all_polled_again = true;
      for (size_t i = 0; i < all.size(); ++i) {
        const uint64_t r = all[i]->rounds().load();
        if (r != kNoRounds && r < snapshot_rounds_[i] + 2) all_polled_again = false;
      }
      if (all_polled_again && launch_->idle_workers.load() == all.size()) {
        launch_->Fail(absl::DeadlineExceededError(
                          "deadlock: every resident block's threads wait, and a full round of "
                          "their spin-waits saw no change"),
                      /*with_census=*/true);
      }
    }
  }
  if (++idle_rounds_ > 2) std::this_thread::sleep_for(std::chrono::microseconds(20));
}

void Worker::RunLaunch(LaunchState& launch, std::vector<std::unique_ptr<Worker>>& all) {
  launch_ = &launch;
  all_ = &all;
  latest_.store(launch.start_ns);
  for (Slot& slot : slots_) slot.end_vtime = launch.start_ns;
  idle_ = false;
  have_snapshot_ = false;
  aborted_resident_ = false;
  unchanged_spins_ = 0;
  idle_rounds_ = 0;
  rounds().store(0);
  steps_ = 0;
  for (;;) {
    if (launch.failed.load(std::memory_order_relaxed)) AbortResident();
    if (!Admit()) break;
    Fiber* f = PopReady();
    if (f == nullptr) {  // cannot happen: a block with no runnable thread is deadlocked
      launch.Fail(absl::InternalError("host runtime: resident blocks but no runnable thread"),
                  true);
      AbortResident();
      continue;
    }
    Run(f);
    AfterRun(running_);  // fibers may have switched among themselves
    if (unchanged_spins_ > 0 && unchanged_spins_ >= ready_.size()) Idle(all);
    if (++steps_ >= kStepsPerClockCheck) {
      steps_ = 0;
      if (std::chrono::steady_clock::now() > launch.deadline && !launch.failed.load()) {
        launch.Fail(absl::DeadlineExceededError(absl::StrCat(
                        "the launch ran longer than its limit of ",
                        absl::FormatDuration(options_.launch_timeout),
                        " (RuntimeOptions::launch_timeout; a livelock?)")),
                    /*with_census=*/true);
      }
    }
  }
  if (!idle_) BecomeIdle();
  rounds().store(kNoRounds);
  warptrace_host_current = nullptr;
}

Runtime::Runtime(RuntimeOptions options) : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::Create(RuntimeOptions options) {
  if (options.blocks_per_sm == 0) {
    return absl::InvalidArgumentError("RuntimeOptions::blocks_per_sm must be at least 1");
  }
  if (options.num_sms == 0) options.num_sms = std::thread::hardware_concurrency();
  options.num_sms = std::max<uint32_t>(options.num_sms, 2);
  std::unique_ptr<Runtime> runtime(new Runtime(options));
  for (uint32_t i = 0; i < runtime->options_.num_sms; ++i) {
    runtime->workers_.push_back(std::make_unique<Worker>(i, runtime->options_));
  }
  for (auto& worker : runtime->workers_) {
    Worker* w = worker.get();
    Runtime* r = runtime.get();
    runtime->threads_.emplace_back([r, w] { r->WorkerMain(w); });
  }
  return runtime;
}

Runtime::~Runtime() {
  {
    absl::MutexLock lock(&mu_);
    shutdown_ = true;
    start_cv_.SignalAll();
  }
  for (std::thread& t : threads_) t.join();
}

void Runtime::WorkerMain(Worker* worker) {
  uint64_t seen = 0;
  for (;;) {
    LaunchState* launch = nullptr;
    {
      absl::MutexLock lock(&mu_);
      while (!shutdown_ && generation_ == seen) start_cv_.Wait(&mu_);
      if (shutdown_) return;
      seen = generation_;
      launch = launch_;
    }
    worker->RunLaunch(*launch, workers_);
    absl::MutexLock lock(&mu_);
    if (++finished_ == workers_.size()) done_cv_.Signal();
  }
}

absl::Status Runtime::Launch(const LaunchSpec& spec) {
  absl::MutexLock serialize(&launch_mu_);
  LaunchState launch;
  launch.spec = spec;
  launch.num_blocks = uint64_t{spec.grid.x} * spec.grid.y * spec.grid.z;
  launch.num_threads = spec.block.x * spec.block.y * spec.block.z;
  launch.deadline = std::chrono::steady_clock::now() +
                    absl::ToChronoNanoseconds(options_.launch_timeout);
  launch.clock = LaunchClock();
  launch.start_ns = launch.clock.ns_base;
  {
    absl::MutexLock lock(&mu_);
    launch_ = &launch;
    finished_ = 0;
    ++generation_;
    start_cv_.SignalAll();
    while (finished_ < num_sms()) done_cv_.Wait(&mu_);
    launch_ = nullptr;
  }
  absl::MutexLock lock(&launch.mu);
  if (launch.failure.ok()) return absl::OkStatus();
  std::string message = absl::StrCat(spec.what, ": ", launch.failure.message());
  if (!launch.census.empty()) {
    std::sort(launch.census.begin(), launch.census.end());
    absl::StrAppend(&message, "\n  ", absl::StrJoin(launch.census, "\n  "));
  }
  return absl::Status(launch.failure.code(), message);
}

}  // namespace warptrace::host
