// Faults in kernel code on the host backend: a SIGSEGV or SIGBUS raised by a fiber (an
// out-of-bounds access that reached a guard page of shared memory or a device buffer, see
// guarded_memory.h, a null or stray pointer, a fiber stack overflow) ends that fiber and
// fails its launch instead of killing the process.
//
// How: a process-wide SIGSEGV/SIGBUS handler running on each worker thread's alternate
// signal stack (WorkerSignalStack) checks that the fault came from the running fiber (its
// stack pointer lies in the fiber's stack); if so it records the address in the Fiber and
// makes the interrupted context continue in the landing function (Worker::LandFault) on the
// fiber's own stack, below the faulting frame (or at the top of the stack after an
// overflow). The landing fails the launch and abandons the fiber; no more of that block
// runs (the failed launch aborts it). Any other fault goes to the handler installed before
// (AddressSanitizer's, under --config=asan) and then gets the default action, as without it.
// x86-64 Linux only; elsewhere InstallFaultHandler does nothing and a fault still kills the
// process.
//
// Caveat: a fault inside a C library call that holds a lock (printf of a bad pointer) leaves
// the lock held.
#ifndef WARPTRACE_JIT_HOST_FAULT_HANDLER_H_
#define WARPTRACE_JIT_HOST_FAULT_HANDLER_H_

#include <signal.h>

#include <cstddef>

#include "absl/status/status.h"

namespace warptrace::host {

// Where a faulting fiber continues: landing(fiber) must not return.
using FaultLanding = void (*)(void* fiber);

// Installs the handler once per process (later calls do nothing and return its first
// result). Errors: Internal when sigaction fails.
absl::Status InstallFaultHandler(FaultLanding landing);

// Puts the handler back in front when something installed its own since (LLVM's crash
// handler is installed lazily, the first time a file is written with removal on signal), and
// chains to that one. Runtime::Launch calls it at every launch: another handler in front of
// ours would see a fiber's fault first (LLVM's uninstalls every handler and re-executes the
// access, which races with faults on other workers). Errors: Internal when sigaction fails.
absl::Status KeepFaultHandlerFirst();

// The calling thread's alternate signal stack while it lives (the previous one restored
// after). A worker thread holds one for its lifetime.
class WorkerSignalStack {
 public:
  WorkerSignalStack();
  ~WorkerSignalStack();
  WorkerSignalStack(const WorkerSignalStack&) = delete;
  WorkerSignalStack& operator=(const WorkerSignalStack&) = delete;

 private:
  void* memory_ = nullptr;
  stack_t previous_ = {};
  bool installed_ = false;
};

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_FAULT_HANDLER_H_
