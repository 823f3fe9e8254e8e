// The races check for global memory between blocks (WARPTRACE_HOST_SANITIZE_RACES; within a
// block or cluster, RaceDomain checks global accesses as it checks shared ones).
//
// Two blocks of a launch (not of one cluster) are ordered by nothing but a fence-and-atomic
// protocol: block A writes, fences (__threadfence()) and sets a flag with an atomic; block B
// reads the flag with an atomic and then reads what A wrote (CUDA's threadFenceReduction,
// split-K semaphores). So each race domain logs its plain accesses of the launch's tracked
// buffers (kernel arguments that do not point to const) as runs of bytes, each marked
// `released` (a global atomic or fence of its domain came after it) and `acquired` (one
// came before it). When the launch ends, the runs of every domain are merged in address
// order: two runs of different domains that overlap, at least one a write, are a race unless
// one was released and the other acquired. That never calls a correct protocol a race; it
// can miss a race in a kernel that uses such a protocol elsewhere (it counts any fence or
// atomic of the domain, not the one that orders this access), and it does not see global
// accesses through buffers that are not kernel arguments, or through pointers to const.
//
// Deterministic: a domain's runs depend only on its own fibers, whose order is fixed
// (races.h), and the merge sorts them. Internal to the runtime.
#ifndef WARPTRACE_JIT_HOST_RUNTIME_GLOBAL_RACES_H_
#define WARPTRACE_JIT_HOST_RUNTIME_GLOBAL_RACES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace warptrace::host {

class LaunchSanitizer;

// Bytes [start, end) of global memory that one domain accessed alike.
struct GlobalRun {
  uintptr_t start = 0;
  uintptr_t end = 0;
  bool write = false;
  bool released = false;  // a global atomic or fence of its domain came after it
  bool acquired = false;  // one came before it
  const char* at = nullptr;  // the builder statement of its first access
  uint64_t domain = 0;       // its race domain: the linear index of its (first) block
  uint64_t block = 0;        // the first access's block and thread, and their names
  uint32_t thread = 0;
  std::string who;
};

class GlobalRaceLog {
 public:
  // Adds a finished domain's runs.
  void Add(std::vector<GlobalRun> runs) {
    absl::MutexLock lock(&mu_);
    runs_.insert(runs_.end(), std::make_move_iterator(runs.begin()),
                 std::make_move_iterator(runs.end()));
  }
  // Merges every domain's runs and records each race in `launch` (once per pair of
  // statements, the lowest block and thread). Called once, after every domain finished.
  void Check(LaunchSanitizer& launch);

 private:
  absl::Mutex mu_;
  std::vector<GlobalRun> runs_ ABSL_GUARDED_BY(mu_);
};

// A builder statement for a report: `statement`, or what runs before the first one.
inline const char* RaceStatement(const char* statement) {
  return statement != nullptr ? statement : "generated code before the first builder statement";
}

// Coalesces `runs` (one domain's, in any order): sorted by address, adjacent or overlapping
// runs alike (write, released, acquired, statement) become one, keeping the first access.
std::vector<GlobalRun> CoalesceGlobalRuns(std::vector<GlobalRun> runs);

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_RUNTIME_GLOBAL_RACES_H_
