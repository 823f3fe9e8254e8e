#include "jit/host/runtime/fault_handler.h"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "jit/host/runtime/block.h"
#include "jit/host/device/host_abi.h"

namespace warptrace::host {
namespace {

FaultLanding landing_function = nullptr;  // set once, before the handler is installed
struct sigaction previous_segv;
struct sigaction previous_bus;

// Hands the fault to whoever handled it before us (AddressSanitizer's handler reports and
// exits; LLVM's crash handler, installed by llvm::sys::RemoveFileOnSignal, cleans up and
// returns), then lets it kill the process as it would have without us: with the default
// action, returning re-executes the access, which faults again.
void Chain(int sig, siginfo_t* info, void* context) {
  const struct sigaction previous = sig == SIGBUS ? previous_bus : previous_segv;
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN &&
             previous.sa_handler != nullptr) {
    previous.sa_handler(sig);
  }
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(sig, &default_action, nullptr);
}

#if defined(__x86_64__) && defined(__linux__)
// Async-signal-safe: reads the thread-local current thread and writes its fiber's fields.
void Handler(int sig, siginfo_t* info, void* context) {
  WarptraceHostThread* current = warptrace_host_current;
  auto* uc = static_cast<ucontext_t*>(context);
  if (current == nullptr || landing_function == nullptr) return Chain(sig, info, context);
  Fiber* f = static_cast<Fiber*>(current->fiber);
  const uintptr_t sp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
  const uintptr_t lo = reinterpret_cast<uintptr_t>(f->stack_lo);
  const uintptr_t hi = reinterpret_cast<uintptr_t>(f->stack_hi);
  // Past the bottom by up to the guard page: a stack overflow of this fiber.
  constexpr uintptr_t kGuardSlack = 64 * 1024;
  if (lo == 0 || sp >= hi || sp + kGuardSlack < lo) return Chain(sig, info, context);
  f->fault_address = reinterpret_cast<uintptr_t>(info->si_addr);
  f->fault_signal = sig;
  // The landing's frame: well below the faulting one (past its red zone), or, when the
  // stack is (nearly) exhausted, in the middle of it (every frame of the fiber is abandoned
  // anyway).
  constexpr uintptr_t kRoom = 16 * 1024;
  uintptr_t land = sp - 512;
  if (sp < lo + kRoom) land = lo + (hi - lo) / 2;
  land = (land & ~uintptr_t{15}) - 8;  // as if called: rsp + 8 is 16-byte aligned
  uc->uc_mcontext.gregs[REG_RSP] = static_cast<greg_t>(land);
  uc->uc_mcontext.gregs[REG_RIP] = reinterpret_cast<greg_t>(landing_function);
  uc->uc_mcontext.gregs[REG_RDI] = reinterpret_cast<greg_t>(f);
}
#endif

constexpr size_t kSignalStackBytes = 64 * 1024;

}  // namespace

absl::Status InstallFaultHandler(FaultLanding landing) {
  static const absl::Status installed = [landing]() -> absl::Status {
    landing_function = landing;
    return KeepFaultHandlerFirst();
  }();
  return installed;
}

absl::Status KeepFaultHandlerFirst() {
#if defined(__x86_64__) && defined(__linux__)
  static absl::Mutex mu(absl::kConstInit);
  absl::MutexLock lock(&mu);
  struct sigaction action = {};
  action.sa_sigaction = &Handler;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS}) {
    struct sigaction current = {};
    if (sigaction(sig, nullptr, &current) != 0) {
      return absl::InternalError(absl::StrCat("cannot read the handler of signal ", sig, ": ",
                                              std::strerror(errno)));
    }
    if ((current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == &Handler) continue;
    // Ours first; what was there is chained to for faults that are not a fiber's.
    (sig == SIGBUS ? previous_bus : previous_segv) = current;
    if (sigaction(sig, &action, nullptr) != 0) {
      return absl::InternalError(absl::StrCat(
          "cannot install the host backend's fault handler: ", std::strerror(errno)));
    }
  }
#endif
  return absl::OkStatus();
}

WorkerSignalStack::WorkerSignalStack() {
  void* memory = mmap(nullptr, kSignalStackBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return;  // faults then run the handler on the faulting stack
  stack_t stack = {};
  stack.ss_sp = memory;
  stack.ss_size = kSignalStackBytes;
  if (sigaltstack(&stack, &previous_) != 0) {
    munmap(memory, kSignalStackBytes);
    return;
  }
  memory_ = memory;
  installed_ = true;
}

WorkerSignalStack::~WorkerSignalStack() {
  if (!installed_) return;
  if ((previous_.ss_flags & SS_DISABLE) != 0) {
    stack_t disable = {};
    disable.ss_flags = SS_DISABLE;
    sigaltstack(&disable, nullptr);
  } else {
    sigaltstack(&previous_, nullptr);
  }
  munmap(memory_, kSignalStackBytes);
}

}  // namespace warptrace::host
