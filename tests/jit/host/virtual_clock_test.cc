// The host runtime's virtual clock (jit/host/runtime/virtual_clock.h): the steady mode's preemption
// correction, as a pure function of the (wall, CPU) readings it is given, and what the
// deterministic mode's launch clock reads.
#include "jit/host/runtime/virtual_clock.h"

#include <time.h>

#include <cstdint>

#include "gtest/gtest.h"
#include "jit/host/device/host_abi.h"

namespace warptrace::host {
namespace {

constexpr int64_t kMs = 1'000'000;

// A worker checkpointed at wall 1 ms / CPU 0.5 ms; a fiber resumed long before.
struct Correction {
  CpuCheckpoint checkpoint{1 * kMs, kMs / 2};
  int64_t resumed_wall = 0;
  int64_t raw = 5000 * kMs;
  int64_t last_read = 0;
  int64_t Run(int64_t wall_since, int64_t cpu_since) {
    const int64_t now_wall = checkpoint.wall + wall_since;
    const int64_t now_cpu = checkpoint.cpu + cpu_since;
    return TakeOutPreemption(raw, now_wall, now_cpu, resumed_wall, last_read, &checkpoint);
  }
};

TEST(VirtualClockTest, TimeTheWorkerWasPreemptedIsTakenOut) {
  Correction c;
  // 20 ms of wall time of which the worker ran 10 us: 19.99 ms were someone else's.
  EXPECT_EQ(c.Run(20 * kMs + 10'000, 10'000), 5000 * kMs - 20 * kMs);
  EXPECT_EQ(c.checkpoint.wall, 21 * kMs + 10'000);
  EXPECT_EQ(c.checkpoint.cpu, kMs / 2 + 10'000);
}

TEST(VirtualClockTest, GapsBelowASchedulerSliceAreMeasurementNoise) {
  Correction c;
  EXPECT_EQ(c.Run(kMinPreemption - 1 + 10'000, 10'000), c.raw);
}

TEST(VirtualClockTest, NoMoreThanTheTimeSinceTheFiberResumedIsTakenOut) {
  Correction c;
  c.resumed_wall = c.checkpoint.wall + 15 * kMs;  // resumed 5 ms before now
  EXPECT_EQ(c.Run(20 * kMs, 0), c.raw - 5 * kMs);
}

TEST(VirtualClockTest, TheCorrectionNeverGoesBelowTheLastValueTheFiberRead) {
  Correction c;
  c.last_read = c.raw - 1000;
  EXPECT_EQ(c.Run(20 * kMs, 0), c.last_read);
}

TEST(VirtualClockTest, TheDeterministicClockReadsNoRealClockAndChargesEachRead) {
  const WarptraceHostClock clock = LaunchClock(ClockMode::kDeterministic);
  EXPECT_EQ(clock.read_cost_ns, kDeterministicReadCostNs);
  EXPECT_EQ(warptrace_host_now_ns(&clock), 0);
  WarptraceHostThread thread{};
  thread.clock = &clock;
  thread.clock_offset_ns = 1000;
  thread.clock_limit_ns = 0;  // would call the runtime in the steady mode; never here
  EXPECT_EQ(warptrace_host_virtual_ns(&thread), 1002);
  EXPECT_EQ(warptrace_host_virtual_ns(&thread), 1004);
  EXPECT_EQ(thread.clock_last_ns, 1004);
  EXPECT_EQ(warptrace_host_cycles(&thread) - warptrace_host_cycles_at(1004), 3u);
}

TEST(VirtualClockTest, TheSteadyClockStartsAtTheLaunchOnClockMonotonic) {
  const WarptraceHostClock clock = LaunchClock(ClockMode::kSteady);
  EXPECT_EQ(clock.read_cost_ns, 0);
  EXPECT_GE(warptrace_host_now_ns(&clock), clock.ns_base);
}

constexpr char kInvariantFlags[] =
    "flags\t\t: fpu vme tsc msr constant_tsc rep_good nopl nonstop_tsc cpuid tsc_known_freq";

TEST(VirtualClockTest, AnInvariantTscNeedsConstantAndNonstopFlags) {
  EXPECT_TRUE(CpuinfoHasInvariantTsc(kInvariantFlags));
  EXPECT_FALSE(CpuinfoHasInvariantTsc("flags\t\t: fpu tsc msr constant_tsc rep_good"));
  EXPECT_FALSE(CpuinfoHasInvariantTsc("flags\t\t: fpu tsc msr nonstop_tsc"));
  // A flag is a whole word: "constant_tsc_x" is not constant_tsc.
  EXPECT_FALSE(CpuinfoHasInvariantTsc("flags\t\t: constant_tsc_x nonstop_tsc"));
  EXPECT_FALSE(CpuinfoHasInvariantTsc(""));
}

TEST(VirtualClockTest, TheTscIsReadOnlyWhenInvariantAndTheKernelsClocksource) {
  EXPECT_TRUE(TscClockUsable(kInvariantFlags, "tsc\n", nullptr));
  EXPECT_TRUE(TscClockUsable(kInvariantFlags, "tsc\n", "1"));
  // The kernel did not choose the TSC (a VM's kvm-clock, hpet): its cores' TSCs may not
  // agree, so clock_gettime it is.
  EXPECT_FALSE(TscClockUsable(kInvariantFlags, "kvm-clock\n", nullptr));
  EXPECT_FALSE(TscClockUsable("flags\t\t: fpu tsc constant_tsc", "tsc\n", nullptr));
  // WARPTRACE_HOST_TSC=0 forces CLOCK_MONOTONIC.
  EXPECT_FALSE(TscClockUsable(kInvariantFlags, "tsc\n", "0"));
}

TEST(VirtualClockTest, TheSteadyClockFollowsClockMonotonicOverALaunch) {
  // Whichever source this machine gets (TSC or clock_gettime), a reading stays within the
  // TSC rate's calibration error of CLOCK_MONOTONIC: here within 1 ms over ~10 ms.
  const WarptraceHostClock clock = LaunchClock(ClockMode::kSteady);
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  const int64_t start_ns = start.tv_sec * 1000000000ll + start.tv_nsec;
  timespec now{};
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (now.tv_sec * 1000000000ll + now.tv_nsec < start_ns + 10000000);
  const int64_t before = now.tv_sec * 1000000000ll + now.tv_nsec;
  const int64_t read = warptrace_host_now_ns(&clock);
  clock_gettime(CLOCK_MONOTONIC, &now);
  const int64_t after = now.tv_sec * 1000000000ll + now.tv_nsec;
  EXPECT_GT(read, before - 1000000);
  EXPECT_LT(read, after + 1000000);
}

}  // namespace
}  // namespace warptrace::host
