// The host backend's sanitizer, kernel side (included by cuda_on_cpu.h; host_abi.h
// WARPTRACE_HOST_SANITIZE_*; the runtime side: jit/host/runtime/sanitizer.h).
#ifndef WARPTRACE_JIT_HOST_SANITIZE_HOST_H_
#define WARPTRACE_JIT_HOST_SANITIZE_HOST_H_

// Compiled with -fsanitize=kernel-address and the call threshold 0, every load and store
// the optimizer keeps calls __asan_{load,store}{1,2,4,8,16,N}_noabort; no sanitizer runtime
// is linked: these forward to the runtime, which checks the shared arrays and device
// buffers (the fiber's own stack, most accesses, is skipped here). Not instrumented
// themselves. The host compiler puts WARPTRACE_HOST_STATEMENT() before each builder
// statement, so findings name it.
#ifdef WARPTRACE_HOST_SANITIZE
namespace warptrace_host {
// The AND of the shadow bytes: 3, all warptrace's own; bit 1 set, all written or own (no
// bounds or init check has work; with the races check, only it has).
__attribute__((no_sanitize_address, always_inline)) inline unsigned int ShadowAnd(
    const unsigned char* shadow, unsigned long long bytes) {
  unsigned long long all = ~0ull;
  unsigned long long i = 0;
  for (; i + 8 <= bytes; i += 8) {
    unsigned long long word;
    __builtin_memcpy(&word, shadow + i, 8);
    all &= word;
  }
  if (i + 4 <= bytes) {
    unsigned int word;
    __builtin_memcpy(&word, shadow + i, 4);
    all &= 0xffffffff00000000ull | word;
    i += 4;
  }
  for (; i < bytes; ++i) all &= 0xffffffffffffff00ull | shadow[i];
  all &= all >> 32;
  all &= all >> 16;
  all &= all >> 8;
  return static_cast<unsigned int>(all & 0xff);
}
// Fast path without the races check: bytes already written (2) or warptrace's own (3),
// fine to read and to write again.
__attribute__((no_sanitize_address, always_inline)) inline bool Written(
    const unsigned char* shadow, unsigned long long bytes) {
  return (ShadowAnd(shadow, bytes) & 2u) != 0;
}
// The races check of an in-bounds access at `off` of the CTA's own shared `area` whose
// bytes are all written: a plain read or write joins the thread's batch (the runtime
// checks it at the thread's next runtime call, before anything orders memory or another
// thread runs), another kind goes to the runtime's races entry at once; nothing for
// warptrace's own bytes. False when a byte is not written: the runtime's access entry
// decides.
__attribute__((no_sanitize_address, always_inline)) inline bool RaceOnly(
    WarptraceHostThread* t, const unsigned char* shadow, int area, unsigned long long off,
    unsigned long long bytes, int kind) {
  const unsigned int state = ShadowAnd(shadow + off, bytes);
  if ((state & 2u) == 0) return false;
  if (state == 3u) return true;
  if ((kind == WARPTRACE_HOST_ACCESS_READ || kind == WARPTRACE_HOST_ACCESS_WRITE) &&
      bytes <= 0xffffu) {
    if (t->race_pending == WARPTRACE_HOST_RACE_BATCH) t->rt->race_flush(t->fiber);
    WarptraceHostRaceAccess& e = t->race_batch[t->race_pending++];
    e.offset = static_cast<unsigned int>(off);
    e.bytes = static_cast<unsigned short>(bytes);
    e.flags = static_cast<unsigned short>(
        area | (kind == WARPTRACE_HOST_ACCESS_WRITE ? WARPTRACE_HOST_RACE_WRITE : 0u));
    e.statement = t->statement;
    return true;
  }
  t->rt->race(t->fiber, area, off, bytes, kind);
  return true;
}
__attribute__((no_sanitize_address, always_inline)) inline void SanitizeAccess(
    const void* p, unsigned long long bytes, int kind) {
  WarptraceHostThread* t = warptrace_host_current;
  const unsigned long long a = reinterpret_cast<unsigned long long>(p);
  if (t == nullptr || a - t->stack_lo < t->stack_bytes ||
      a - reinterpret_cast<unsigned long long>(t) < sizeof(WarptraceHostThread)) {
    return;  // its stack, its threadIdx, statement marker, ...
  }
  // With the races check every access of the kernel's shared memory goes to the runtime
  // (its happens-before shadow); else written bytes need nothing more.
  constexpr bool kRaces = (WARPTRACE_HOST_SANITIZE & WARPTRACE_HOST_SANITIZE_RACES) != 0;
  unsigned long long off = a - reinterpret_cast<unsigned long long>(t->static_shared);
  if (off < WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES) {
    if (off + bytes <= WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES &&
        (kRaces ? RaceOnly(t, t->shadow_static, 0, off, bytes, kind)
                : Written(t->shadow_static + off, bytes))) {
      return;
    }
  } else if ((off = a - reinterpret_cast<unsigned long long>(t->dynamic_shared)) <
             t->dynamic_shared_bytes) {
    if (off + bytes <= t->dynamic_shared_bytes &&
        (kRaces ? RaceOnly(t, t->shadow_dynamic, 1, off, bytes, kind)
                : Written(t->shadow_dynamic + off, bytes))) {
      return;
    }
  } else if (a + 4096 - reinterpret_cast<unsigned long long>(t->dynamic_shared) <
             t->dynamic_shared_bytes + 2 * 4096) {
    // next to the dynamic shared memory (its slack, its guard pages): the runtime says
  } else {
    const unsigned long long* w = t->buffer_windows;
    unsigned int i = a - t->buffers_lo < t->buffers_hi - t->buffers_lo ? 0 : t->num_buffers;
    for (; i < t->num_buffers; ++i, w += 4) {
      if (a - w[0] < w[1]) {
        // In bounds: fine, unless the races check follows this buffer's accesses (or the
        // access is an atomic, which may order other blocks' accesses).
        if (a >= w[2] && a + bytes <= w[3] &&
            !(kRaces && (t->buffer_races[i] != 0 || kind == WARPTRACE_HOST_ACCESS_ATOMIC))) {
          return;
        }
        break;
      }
    }
    // Near no device buffer: not checked, except in a cluster, where it may be a peer
    // CTA's shared memory (a multicast delivery, a mapa pointer): the runtime finds the
    // peer and checks and marks the access in its shadow.
    if (i == t->num_buffers && t->cluster_dim.x * t->cluster_dim.y * t->cluster_dim.z <= 1) {
      return;
    }
  }
  t->rt->access(t->fiber, p, bytes, kind);
}
}  // namespace warptrace_host
namespace warptrace_host {
inline void NoteAtomic(const void* p, unsigned long long bytes) {
  SanitizeAccess(p, bytes, WARPTRACE_HOST_ACCESS_ATOMIC);
}
inline void NoteFence() {
  if constexpr ((WARPTRACE_HOST_SANITIZE & WARPTRACE_HOST_SANITIZE_RACES) != 0) {
    const WarptraceHostThread& t = Current();
    t.rt->access(t.fiber, nullptr, 0, WARPTRACE_HOST_EVENT_FENCE);
  }
}
}  // namespace warptrace_host
// The empty volatile asm ends GCC's removal of "redundant" sanitizer checks (its sanopt
// pass drops a check of an address that a dominating check of the same address covers, with
// no call or volatile asm between): for the bounds check a load's check covers a later store
// of the same bytes, but the races check must see the store too. So no access of one builder
// statement hides an access of another (within one statement, `x[i] += 1`, GCC still checks
// only the load: docs/sanitizer.md "What it does not see").
#define WARPTRACE_HOST_STATEMENT() \
  (::warptrace_host::MutableCurrent().statement = __FILE__); __asm__ volatile("");
#define WARPTRACE_HOST_SANITIZE_CALLBACKS(n)                                                   \
  extern "C" __attribute__((visibility("hidden"), no_sanitize_address)) void                 \
      __asan_load##n##_noabort(void* p) {                                                      \
    ::warptrace_host::SanitizeAccess(p, n, WARPTRACE_HOST_ACCESS_READ);                      \
  }                                                                                            \
  extern "C" __attribute__((visibility("hidden"), no_sanitize_address)) void                 \
      __asan_store##n##_noabort(void* p) {                                                     \
    ::warptrace_host::SanitizeAccess(p, n, WARPTRACE_HOST_ACCESS_WRITE);                     \
  }
WARPTRACE_HOST_SANITIZE_CALLBACKS(1)
WARPTRACE_HOST_SANITIZE_CALLBACKS(2)
WARPTRACE_HOST_SANITIZE_CALLBACKS(4)
WARPTRACE_HOST_SANITIZE_CALLBACKS(8)
WARPTRACE_HOST_SANITIZE_CALLBACKS(16)
#undef WARPTRACE_HOST_SANITIZE_CALLBACKS
extern "C" __attribute__((visibility("hidden"), no_sanitize_address)) void
__asan_loadN_noabort(void* p, size_t n) {
  ::warptrace_host::SanitizeAccess(p, n, WARPTRACE_HOST_ACCESS_READ);
}
extern "C" __attribute__((visibility("hidden"), no_sanitize_address)) void
__asan_storeN_noabort(void* p, size_t n) {
  ::warptrace_host::SanitizeAccess(p, n, WARPTRACE_HOST_ACCESS_WRITE);
}
extern "C" __attribute__((visibility("hidden"), no_sanitize_address)) void
__asan_handle_no_return(void) {}
// An async delivery of `n` bytes at `p` (a TMA load, a bulk copy) completing on the mbarrier
// `bar` (null: none).
#define WARPTRACE_HOST_ASYNC_WRITE(p, n, bar)                 \
  do {                                                        \
    ::warptrace_host::MutableCurrent().async_barrier = (bar); \
    ::warptrace_host::SanitizeAccess((p), (n), WARPTRACE_HOST_ACCESS_ASYNC_WRITE); \
  } while (0)
// Another access of `n` bytes at `p` of kind WARPTRACE_HOST_ACCESS_* (a wgmma's operand
// read, a bulk store's read, an atomic), made by code that is not instrumented.
#define WARPTRACE_HOST_ACCESS(p, n, kind) ::warptrace_host::SanitizeAccess((p), (n), (kind))
// An async-group event (WARPTRACE_HOST_EVENT_*) with its argument.
#define WARPTRACE_HOST_SANITIZE_EVENT(kind, n)                                        \
  (::warptrace_host::Current().rt->access(::warptrace_host::Current().fiber, nullptr, \
                                          (n), (kind)))
#else
#define WARPTRACE_HOST_STATEMENT()
#define WARPTRACE_HOST_ASYNC_WRITE(p, n, bar) ((void)0)
#define WARPTRACE_HOST_ACCESS(p, n, kind) ((void)0)
#define WARPTRACE_HOST_SANITIZE_EVENT(kind, n) ((void)0)
#endif

#endif  // WARPTRACE_JIT_HOST_SANITIZE_HOST_H_
