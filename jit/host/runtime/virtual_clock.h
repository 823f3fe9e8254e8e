// The host runtime's virtual clocks (the model is in host_abi.h): the steady clock a launch
// reads, and how a fiber's virtual time stops and restarts around the points where it
// leaves the CPU (synchronization, spin-waits, exit).
//
// Two modes (ClockMode in runtime.h, chosen per runtime: RuntimeOptions::clock):
//   kSteady         a fiber's clock runs on the steady clock (the TSC scaled to ns, else
//                   CLOCK_MONOTONIC) while it runs, in slices of at most kClockSlice: past
//                   one, the clock is re-checked against the worker thread's CPU time and
//                   the time the OS did not run the worker is taken out (on a loaded machine
//                   a preempted thread would otherwise be milliseconds late at the next
//                   barrier, and its barrier would release everyone that late).
//   kDeterministic  no real clock is read: the launch clock's read_cost_ns makes every clock
//                   read take kDeterministicReadCostNs, and nothing else but explicit delays
//                   (__nanosleep) and synchronization (a waiter moves to its releaser's time)
//                   moves a thread's clock. Same kernel, same inputs: same times, whatever
//                   the machine's load. What a spin-wait on a value another thread changes
//                   observes (the latest time any thread reached) still depends on scheduling.
//
// Internal to the runtime; everything here runs on the worker thread that owns the fiber.
#ifndef WARPTRACE_JIT_HOST_VIRTUAL_CLOCK_H_
#define WARPTRACE_JIT_HOST_VIRTUAL_CLOCK_H_

#include <climits>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "jit/host/runtime/block.h"
#include "jit/host/device/host_abi.h"
#include "jit/host/runtime/runtime.h"

namespace warptrace::host {

// The cost of one clock read in the deterministic mode: 2 ns, exactly 3 cycles at the
// nominal 1.5 GHz, so cycle differences are whole multiples of 3.
inline constexpr int64_t kDeterministicReadCostNs = 2;

// The clock of a launch starting now (host_abi.h, WarptraceHostClock): ns_base is
// CLOCK_MONOTONIC now in either mode (the launch's virtual start); in kSteady the TSC rate
// where TscClockUsable says so for this machine (the rate calibrated against
// CLOCK_MONOTONIC from the process's first launch on), else none: CLOCK_MONOTONIC is read.
WarptraceHostClock LaunchClock(ClockMode mode);

// Whether the first "flags" line of /proc/cpuinfo names an invariant TSC: constant_tsc
// (a constant rate whatever the core's frequency) and nonstop_tsc (it keeps counting in
// deep C-states).
bool CpuinfoHasInvariantTsc(absl::string_view cpuinfo_flags);

// Whether the host clock may read the TSC instead of clock_gettime(CLOCK_MONOTONIC): the
// TSC is invariant, the kernel's clocksource (the contents of .../clocksource0/
// current_clocksource) is "tsc" (so the kernel found the cores' TSCs synchronized: fibers
// of one block may read it on any core a worker migrates to), and `env`
// (WARPTRACE_HOST_TSC) is not "0", which forces CLOCK_MONOTONIC (to compare, or where a
// TSC misbehaves).
bool TscClockUsable(absl::string_view cpuinfo_flags, absl::string_view clocksource,
                    const char* env);

// The steady-clock ns a fiber's clock is read against (0 in the deterministic mode).
inline int64_t NowNs(const Fiber* f) { return warptrace_host_now_ns(f->abi.clock); }

inline bool IsDeterministic(const Fiber* f) { return f->abi.clock->read_cost_ns != 0; }

// kSteady's slice and the smallest gap between wall and CPU time taken for a preemption
// (below a scheduler time slice the difference is measurement noise: the two clocks are
// read a little apart, and correcting for it would only pull paired reads apart).
inline constexpr int64_t kClockSlice = 20000;      // ns
inline constexpr int64_t kMinPreemption = 50000;  // ns

// A worker thread's last (steady-clock, thread CPU time) pair.
struct CpuCheckpoint {
  int64_t wall = 0;
  int64_t cpu = 0;
};

// The preemption correction of kSteady, as a pure function: a fiber whose uncorrected
// virtual time at steady-clock `now_wall` is `raw`, resumed at `resumed_wall`, on a worker
// whose CPU time is `now_cpu` and whose last checkpoint was `*checkpoint` (updated to now).
// Takes out the wall time since the checkpoint the worker did not run (at most since the
// fiber resumed; nothing below kMinPreemption), never going below `last_read` (the last
// value the fiber read: two reads around a preemption, e.g. the recorder's globaltimer and
// clock stamps, stay together).
int64_t TakeOutPreemption(int64_t raw, int64_t now_wall, int64_t now_cpu,
                          int64_t resumed_wall, int64_t last_read, CpuCheckpoint* checkpoint);

// f's virtual time at `now` with the preemption taken out (TakeOutPreemption against the
// worker's checkpoint); starts a new slice. What WarptraceHostRuntime::clock returns.
int64_t CorrectedClock(Fiber* f, int64_t now);

// Stops f's virtual clock at `now`: f->vtime is its virtual time.
inline void StopClock(Fiber* f, int64_t now) {
  const int64_t raw = now + f->abi.clock_offset_ns;
  f->vtime = raw <= f->abi.clock_limit_ns ? raw : CorrectedClock(f, now);
}

// The worker thread's checkpoint (constant-initialized: read without a TLS wrapper).
inline thread_local constinit CpuCheckpoint worker_checkpoint{};

// A new CPU-time checkpoint of the worker thread; returns the steady clock after it (the
// check's own cost is nobody's).
int64_t RefreshCpuCheckpoint(const Fiber* f);

// Restarts f's clock at `now` from f->vtime (which a synchronization may have moved
// forward). In the deterministic mode the slice never ends: nothing is corrected.
inline void StartClock(Fiber* f, int64_t now) {
  if (IsDeterministic(f)) {
    f->resumed_wall = 0;
    f->abi.clock_offset_ns = f->vtime;
    f->abi.clock_limit_ns = LLONG_MAX;
    f->abi.clock_last_ns = f->vtime;
    return;
  }
  if (now - worker_checkpoint.wall > kClockSlice) [[unlikely]] now = RefreshCpuCheckpoint(f);
  f->resumed_wall = now;
  f->abi.clock_offset_ns = f->vtime - now;
  f->abi.clock_limit_ns = f->vtime + kClockSlice;
  f->abi.clock_last_ns = f->vtime;
}

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_VIRTUAL_CLOCK_H_
