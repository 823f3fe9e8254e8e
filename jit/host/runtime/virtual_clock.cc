#include "jit/host/runtime/virtual_clock.h"

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
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

// The first line of `path` that starts with `prefix` ("" when none, or no such file).
std::string FirstLineStartingWith(const char* path, absl::string_view prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, prefix)) return line;
  }
  return "";
}

// Whether the host clock reads this machine's TSC (TscClockUsable).
bool MachineTscUsable() {
  const std::string flags = FirstLineStartingWith("/proc/cpuinfo", "flags");
  const std::string clocksource = FirstLineStartingWith(
      "/sys/devices/system/clocksource/clocksource0/current_clocksource", "");
  return TscClockUsable(flags, clocksource, std::getenv("WARPTRACE_HOST_TSC"));
}

// The process's first TSC point, taken once at least kCalibrationNs before any rate is
// derived from it. Each launch derives the rate from this point to its own (a baseline as
// long as the process has lived: the error shrinks as it runs). nullopt: no usable TSC.
constexpr int64_t kCalibrationNs = 2000000;
const std::optional<TscPoint>& FirstTscPoint() {
  static const std::optional<TscPoint> first = []() -> std::optional<TscPoint> {
    if (!MachineTscUsable()) return std::nullopt;
    const TscPoint p = ReadTscPoint();
    while (MonotonicNs() < p.ns + kCalibrationNs) {
    }
    return p;
  }();
  return first;
}
#endif

}  // namespace

bool CpuinfoHasInvariantTsc(absl::string_view flags) {
  bool constant = false;
  bool nonstop = false;
  for (absl::string_view flag : absl::StrSplit(flags, absl::ByAnyChar(" \t:"))) {
    constant |= flag == "constant_tsc";
    nonstop |= flag == "nonstop_tsc";
  }
  return constant && nonstop;
}

bool TscClockUsable(absl::string_view cpuinfo_flags, absl::string_view clocksource,
                    const char* env) {
  if (env != nullptr && absl::string_view(env) == "0") return false;
  return CpuinfoHasInvariantTsc(cpuinfo_flags) &&
         absl::StripAsciiWhitespace(clocksource) == "tsc";
}

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
