#include "jit/host/runtime/fiber.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WARPTRACE_FIBER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define WARPTRACE_FIBER_ASAN 1
#endif
#if defined(WARPTRACE_FIBER_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__x86_64__)
// warptrace_host_fiber_switch(void** save_sp, void* next_sp): pushes the callee-saved
// registers onto the current stack, stores the stack
// pointer in *save_sp, loads next_sp and pops the same frame from it, resuming with an
// indirect jump rather than `ret` (a `ret` to another context's caller mispredicts the
// return stack buffer on every switch: 3x slower when measured). A new fiber's stack is
// prepared (FiberContext::Start) so that the final jump lands in
// warptrace_host_fiber_trampoline with the entry in r13 and its argument in r12.
asm(R"(
.text
.globl warptrace_host_fiber_switch
.type warptrace_host_fiber_switch,@function
.p2align 4
warptrace_host_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  popq %rax
  jmpq *%rax
.size warptrace_host_fiber_switch,.-warptrace_host_fiber_switch

.globl warptrace_host_fiber_trampoline
.type warptrace_host_fiber_trampoline,@function
.p2align 4
warptrace_host_fiber_trampoline:
  .cfi_startproc
  .cfi_undefined rip
  movq %r12, %rdi
  callq *%r13
  ud2
  .cfi_endproc
.size warptrace_host_fiber_trampoline,.-warptrace_host_fiber_trampoline
)");

extern "C" void warptrace_host_fiber_switch(void** save_sp, void* next_sp);
extern "C" void warptrace_host_fiber_trampoline();
#endif

namespace warptrace::host {
namespace {

// A fiber's last frames are abandoned, never returned from, so ASan's poisoned redzones of
// them stay behind; clear them before the stack (or its address range) is used again.
void Unpoison(char* bottom, size_t size) {
#if defined(WARPTRACE_FIBER_ASAN)
  __asan_unpoison_memory_region(bottom, size);
#else
  (void)bottom;
  (void)size;
#endif
}

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

#if defined(WARPTRACE_FIBER_ASAN)
// The bounds of the calling thread's own stack (for contexts that run on it).
void ThreadStackBounds(const void** bottom, size_t* size) {
  pthread_attr_t attr;
  void* addr = nullptr;
  size_t bytes = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstack(&attr, &addr, &bytes);
    pthread_attr_destroy(&attr);
  }
  *bottom = addr;
  *size = bytes;
}
#endif

// What a new fiber runs first: tells ASan the switch finished, then the entry.
struct StartFrame {
  FiberEntry entry;
  void* arg;
};

}  // namespace

absl::StatusOr<FiberStack> FiberStack::Allocate(size_t bytes) {
  const size_t page = PageSize();
  const size_t usable = (bytes + page - 1) / page * page;
  const size_t total = usable + page;
  void* mapping = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (mapping == MAP_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot map a fiber stack of ", total, " bytes: ", std::strerror(errno)));
  }
  if (mprotect(mapping, page, PROT_NONE) != 0) {
    const int error = errno;
    munmap(mapping, total);
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot protect a fiber stack's guard page: ", std::strerror(error)));
  }
  FiberStack stack;
  stack.mapping_ = static_cast<char*>(mapping);
  stack.mapping_size_ = total;
  stack.usable_ = stack.mapping_ + page;
  stack.usable_size_ = usable;
  // Spread over the 64 sets of a 4 KiB L1 way and 16 pages (L2 sets).
  static std::atomic<uint64_t> next_color{0};
  const uint64_t n = next_color.fetch_add(1, std::memory_order_relaxed);
  stack.color_ = std::min<size_t>((n % 64) * 64 + (n / 64 % 16) * 4096, usable / 2);
  Unpoison(stack.usable_, usable);
  // Fault in the pages a fiber touches first now, not inside the kernel (where the fault
  // would be charged to the thread's virtual clock).
  char* top = stack.usable_ + usable - stack.color_;
  for (size_t touched = 0; touched < 8192 && touched + page <= usable; touched += page) {
    *(top - 1 - touched) = 0;
  }
  return stack;
}

FiberStack::FiberStack(FiberStack&& other) noexcept
    : mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_size_(std::exchange(other.mapping_size_, 0)),
      usable_(std::exchange(other.usable_, nullptr)),
      usable_size_(std::exchange(other.usable_size_, 0)),
      color_(std::exchange(other.color_, 0)) {}

FiberStack& FiberStack::operator=(FiberStack&& other) noexcept {
  if (this != &other) {
    if (mapping_ != nullptr) {
      Unpoison(usable_, usable_size_);
      munmap(mapping_, mapping_size_);
    }
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_size_ = std::exchange(other.mapping_size_, 0);
    usable_ = std::exchange(other.usable_, nullptr);
    usable_size_ = std::exchange(other.usable_size_, 0);
    color_ = std::exchange(other.color_, 0);
  }
  return *this;
}

FiberStack::~FiberStack() {
  if (mapping_ == nullptr) return;
  Unpoison(usable_, usable_size_);
  munmap(mapping_, mapping_size_);
}

#if defined(__x86_64__)

namespace {
void StartThunk(void* frame_ptr) {
#if defined(WARPTRACE_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
  const StartFrame frame = *static_cast<StartFrame*>(frame_ptr);
  frame.entry(frame.arg);
  __builtin_trap();  // entries never return
}
}  // namespace

void FiberContext::Start(const FiberStack& stack, FiberEntry entry, void* arg) {
  stack_bottom_ = stack.bottom();
  stack_size_ = stack.size();
  fiber_stack_ = true;
  Unpoison(stack.bottom(), stack.size());
  // The StartFrame lives at the top of the fiber's own stack, below the stack's color.
  uintptr_t top = reinterpret_cast<uintptr_t>(stack.bottom() + stack.size()) - stack.color();
  top = (top - sizeof(StartFrame)) & ~uintptr_t{15};
  auto* frame = reinterpret_cast<StartFrame*>(top);
  *frame = {entry, arg};
  top -= 16;  // 16-byte aligned after the trampoline address is popped
  uint64_t* sp = reinterpret_cast<uint64_t*>(top) - 7;
  sp[0] = 0;                                          // r15
  sp[1] = 0;                                          // r14
  sp[2] = reinterpret_cast<uint64_t>(&StartThunk);    // r13: entry
  sp[3] = reinterpret_cast<uint64_t>(frame);          // r12: its argument
  sp[4] = 0;                                          // rbx
  sp[5] = 0;                                          // rbp
  sp[6] = reinterpret_cast<uint64_t>(&warptrace_host_fiber_trampoline);
  sp_ = sp;
}

void SwitchFiber(FiberContext& from, FiberContext& to) {
#if defined(WARPTRACE_FIBER_ASAN)
  if (to.stack_bottom_ == nullptr) {
    ThreadStackBounds(&to.stack_bottom_, &to.stack_size_);
  } else if (to.fiber_stack_) {
    // The dead part of the stack below the resumed frames may hold redzones of frames left
    // by an exception or never returned from: clear them before new frames land there.
    Unpoison(static_cast<char*>(const_cast<void*>(to.stack_bottom_)),
             static_cast<size_t>(static_cast<char*>(to.sp_) -
                                 static_cast<const char*>(to.stack_bottom_)));
  }
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, to.stack_bottom_, to.stack_size_);
  warptrace_host_fiber_switch(&from.sp_, to.sp_);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#else
  warptrace_host_fiber_switch(&from.sp_, to.sp_);
#endif
}

const char* FiberSwitchKind() { return "x86-64 assembly"; }

#else  // ucontext

void FiberContext::Trampoline(unsigned int high, unsigned int low) {
#if defined(WARPTRACE_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
  auto* self = reinterpret_cast<FiberContext*>((uintptr_t{high} << 32) | uintptr_t{low});
  self->entry_(self->arg_);
  __builtin_trap();
}

void FiberContext::Start(const FiberStack& stack, FiberEntry entry, void* arg) {
  stack_bottom_ = stack.bottom();
  stack_size_ = stack.size();
  Unpoison(stack.bottom(), stack.size());
  entry_ = entry;
  arg_ = arg;
  getcontext(&context_);
  context_.uc_stack.ss_sp = stack.bottom();
  context_.uc_stack.ss_size = stack.size();
  context_.uc_link = nullptr;
  const uintptr_t self = reinterpret_cast<uintptr_t>(this);
  makecontext(&context_, reinterpret_cast<void (*)()>(&FiberContext::Trampoline), 2,
              static_cast<unsigned int>(self >> 32), static_cast<unsigned int>(self));
}

void SwitchFiber(FiberContext& from, FiberContext& to) {
#if defined(WARPTRACE_FIBER_ASAN)
  if (to.stack_bottom_ == nullptr) ThreadStackBounds(&to.stack_bottom_, &to.stack_size_);
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, to.stack_bottom_, to.stack_size_);
  swapcontext(&from.context_, &to.context_);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#else
  swapcontext(&from.context_, &to.context_);
#endif
}

const char* FiberSwitchKind() { return "ucontext"; }

#endif

}  // namespace warptrace::host
