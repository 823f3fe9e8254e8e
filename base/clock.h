// ReadClockNs(clock): one clock_gettime clock in nanoseconds (CLOCK_MONOTONIC,
// CLOCK_THREAD_CPUTIME_ID, ...).
#ifndef WARPTRACE_BASE_CLOCK_H_
#define WARPTRACE_BASE_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace warptrace {

inline int64_t ReadClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace warptrace

#endif  // WARPTRACE_BASE_CLOCK_H_
