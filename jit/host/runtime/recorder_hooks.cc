// What kernels' shared objects bind to in the program when they are loaded (host_abi.h):
// the worker thread's current CUDA thread, the recorder's clock, globaltimer and SM id
// hooks, and the target of the kernel's assert(). Exported by the program (see BUILD).
#include <cstdio>
#include <cstring>

#include "jit/host/device/host_abi.h"

extern "C" {

__thread WarptraceHostThread* warptrace_host_current = nullptr;

unsigned long long warptrace_host_globaltimer(void) {
  WarptraceHostThread& t = *warptrace_host_current;
  const auto ns = static_cast<unsigned long long>(warptrace_host_virtual_ns(&t));
  t.paired_globaltimer_ns = ns;
  t.has_paired_globaltimer = 1;
  return ns;
}

unsigned int warptrace_host_clock(void) {
  WarptraceHostThread& t = *warptrace_host_current;
  if (t.has_paired_globaltimer) {  // the second read of a stamp pair: the same instant
    t.has_paired_globaltimer = 0;
    return static_cast<unsigned int>(warptrace_host_cycles_at(t.paired_globaltimer_ns));
  }
  return static_cast<unsigned int>(warptrace_host_cycles(&t));
}

unsigned int warptrace_host_smid(void) { return warptrace_host_current->sm_id; }

void warptrace_host_assert_fail(const char* assertion, const char* file, unsigned int line,
                                const char* function) {
  char message[1024];
  const char* base = std::strrchr(file, '/');  // the compiler saw a temporary directory
  std::snprintf(message, sizeof(message), "assertion `%s` failed at %s:%u in %s", assertion,
                base != nullptr ? base + 1 : file, line, function);
  const WarptraceHostThread& t = *warptrace_host_current;
  t.rt->fail(t.fiber, message);
  __builtin_unreachable();
}

void warptrace_host_trips_differ(const char* loop, unsigned long long declared,
                                 unsigned long long ran) {
  char message[1024];
  const WarptraceHostThread& t = *warptrace_host_current;
  std::snprintf(message, sizeof(message),
                "loop %s was declared TripCount::Exact(%llu) but this thread (warp %u, lane %u) "
                "ran %llu iterations; the trace records one thread per trace unit, so the host "
                "backend checks every thread's count",
                loop, declared, t.warp, t.lane, ran);
  t.rt->fail(t.fiber, message);
  __builtin_unreachable();
}

}  // extern "C"
