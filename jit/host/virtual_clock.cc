#include "jit/host/virtual_clock.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "base/clock.h"

namespace warptrace::host {
namespace {

int64_t MonotonicNs() { return ReadClockNs(CLOCK_MONOTONIC); }

int64_t ThreadCpuNs() { return ReadClockNs(CLOCK_THREAD_CPUTIME_ID); }

#if defined(__x86_64__)
struct TscPoint {
  uint64_t tsc = 0;
  int64_t ns = 0;
};

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
  std::FILE* f =
      std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  if (f == nullptr) return false;
  char name[32] = {};
  const bool tsc =
      std::fgets(name, sizeof(name), f) != nullptr && std::strcmp(name, "tsc\n") == 0;
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

}  // namespace

WarptraceHostClock LaunchClock(ClockMode mode) {
  WarptraceHostClock clock{0, MonotonicNs(), 0, 0};
  if (mode == ClockMode::kDeterministic) {
    clock.read_cost_ns = kDeterministicReadCostNs;
    return clock;
  }
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

int64_t TakeOutPreemption(int64_t raw, int64_t now_wall, int64_t now_cpu,
                          int64_t resumed_wall, int64_t last_read, CpuCheckpoint* checkpoint) {
  int64_t preempted = (now_wall - checkpoint->wall) - (now_cpu - checkpoint->cpu);
  if (preempted < kMinPreemption) preempted = 0;
  *checkpoint = {now_wall, now_cpu};
  const int64_t slice = now_wall - resumed_wall;
  return std::max<int64_t>(raw - std::clamp<int64_t>(preempted, 0, slice), last_read);
}

int64_t CorrectedClock(Fiber* f, int64_t now) {
  const int64_t v = TakeOutPreemption(now + f->abi.clock_offset_ns, now, ThreadCpuNs(),
                                      f->resumed_wall, f->abi.clock_last_ns,
                                      &worker_checkpoint);
  f->abi.clock_offset_ns = v - now;
  f->abi.clock_limit_ns = v + kClockSlice;
  return v;
}

[[gnu::noinline]] int64_t RefreshCpuCheckpoint(const Fiber* f) {
  worker_checkpoint.cpu = ThreadCpuNs();
  return worker_checkpoint.wall = NowNs(f);
}

}  // namespace warptrace::host
