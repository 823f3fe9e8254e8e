// Fibers: user-level execution contexts, each on its own stack, switched cooperatively on one
// OS thread. The host backend runs every CUDA thread as a fiber (jit/host/runtime/runtime.h).
//
//   FiberStack stack = *FiberStack::Allocate(256 * 1024);
//   FiberContext main_context, fiber_context;
//   fiber_context.Start(stack, [](void* arg) { ... SwitchFiber(mine, main) ...; }, &arg);
//   SwitchFiber(main_context, fiber_context);   // runs the fiber until it switches back
//
// On x86-64 a switch is a hand-written save/restore of the callee-saved registers and the
// stack pointer: a few ns, against about 400 ns for ucontext's swapcontext, which makes a
// sigprocmask system call per switch, and on a par with boost::context (measured, see
// tests/jit/host:runtime_benchmark's BM_FiberSwitch). The floating-point environment (MXCSR,
// x87 control word) is the worker thread's, shared by its fibers: kernels do not change it. Elsewhere it falls back to
// ucontext. Under AddressSanitizer every switch is announced to it
// (__sanitizer_start_switch_fiber), so ASan follows the stacks.
//
// A fiber's entry function must never return: it switches away for the last time
// instead (the runtime does so when a CUDA thread finishes). Exceptions must not escape
// the entry function. Not thread-safe: a context is switched to and from on one thread.
#ifndef WARPTRACE_JIT_HOST_FIBER_H_
#define WARPTRACE_JIT_HOST_FIBER_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace warptrace::host {

// An mmap'ed stack with an inaccessible guard page below it (an overflow faults instead of
// corrupting a neighbour). Move-only; unmapped when destroyed.
class FiberStack {
 public:
  // Errors: ResourceExhausted when the memory cannot be mapped.
  static absl::StatusOr<FiberStack> Allocate(size_t bytes);
  FiberStack() = default;
  FiberStack(FiberStack&& other) noexcept;
  FiberStack& operator=(FiberStack&& other) noexcept;
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;
  ~FiberStack();

  char* bottom() const { return usable_; }  // lowest usable address
  size_t size() const { return usable_size_; }
  // Bytes left unused at the top. Stacks are page-aligned, so without it the hot top
  // frames of every fiber would map to the same cache sets (measured: most of a switch's
  // cost was those misses); each stack gets another multiple of 64 bytes.
  size_t color() const { return color_; }

 private:
  char* mapping_ = nullptr;
  size_t mapping_size_ = 0;
  char* usable_ = nullptr;
  size_t usable_size_ = 0;
  size_t color_ = 0;
};

using FiberEntry = void (*)(void* arg);

// The saved state of a suspended fiber (or of the thread that runs fibers).
class FiberContext {
 public:
  // Prepares this context to run entry(arg) on `stack` when first switched to.
  void Start(const FiberStack& stack, FiberEntry entry, void* arg);
  // Where a switch to this context will read its saved registers (for a prefetch).
  const void* saved_state() const {
#if defined(__x86_64__)
    return sp_;
#else
    return &context_;
#endif
  }

 private:
  friend void SwitchFiber(FiberContext& from, FiberContext& to);
#if defined(__x86_64__)
  void* sp_ = nullptr;
#else
  ucontext_t context_;
  FiberEntry entry_ = nullptr;
  void* arg_ = nullptr;
  static void Trampoline(unsigned int high, unsigned int low);
#endif
  // The stack this context runs on (null for a thread's own stack), for ASan.
  const void* stack_bottom_ = nullptr;
  size_t stack_size_ = 0;
  bool fiber_stack_ = false;  // runs on a FiberStack (not a thread's own stack)
};

// Saves the running context into `from` and resumes `to`. Returns when something switches
// back to `from`.
void SwitchFiber(FiberContext& from, FiberContext& to);

// Which switch this build uses: "x86-64 assembly" or "ucontext".
const char* FiberSwitchKind();

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_FIBER_H_
