// The host backend's sanitizer, kernel side (included by cuda_on_cpu.h; host_abi.h
// WARPTRACE_HOST_SANITIZE_*; the runtime side: jit/host/runtime/sanitizer.h).
#ifndef WARPTRACE_JIT_HOST_SANITIZE_HOST_H_
#define WARPTRACE_JIT_HOST_SANITIZE_HOST_H_

// Compiled with the compiler's ThreadSanitizer instrumentation (the host compiler's
// SanitizeFlags), every load and store the optimizer keeps calls __tsan_{read,write}N (a
// read-modify-write both); no sanitizer runtime is linked: these forward to the runtime,
// which checks the shared arrays and device buffers (the fiber's own stack, most accesses,
// is skipped here). Not instrumented themselves. The host compiler puts
// WARPTRACE_HOST_STATEMENT() before each builder statement, so findings name it.
#ifdef WARPTRACE_HOST_SANITIZE
namespace warptrace_host {
// The AND of the shadow bytes: 3, all warptrace's own; bit 1 set, all written or own (no
// bounds or init check has work; with the races check, only it has).
WARPTRACE_HOST_UNINSTRUMENTED __attribute__((always_inline)) inline unsigned int ShadowAnd(
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
// ShadowAnd's verdict (shadow bytes are 0 to 3): 0 when a byte is not written (bit 1 clear),
// else the AND (3: all warptrace's own); a compare or two for a word's or a double's.
WARPTRACE_HOST_UNINSTRUMENTED __attribute__((always_inline)) inline unsigned int ShadowState(
    const unsigned char* shadow, unsigned long long bytes) {
  if (bytes == 4) {
    unsigned int w;
    __builtin_memcpy(&w, shadow, 4);
    if ((w & 0x02020202u) != 0x02020202u) return 0;
    return w == 0x03030303u ? 3u : 2u;
  }
  if (bytes == 8) {
    unsigned long long w;
    __builtin_memcpy(&w, shadow, 8);
    if ((w & 0x0202020202020202ull) != 0x0202020202020202ull) return 0;
    return w == 0x0303030303030303ull ? 3u : 2u;
  }
  const unsigned int all = ShadowAnd(shadow, bytes);
  return (all & 2u) == 0 ? 0u : all;
}
// Fast path without the races check: bytes already written (2) or warptrace's own (3),
// fine to read and to write again.
WARPTRACE_HOST_UNINSTRUMENTED __attribute__((always_inline)) inline bool Written(
    const unsigned char* shadow, unsigned long long bytes) {
  return ShadowState(shadow, bytes) != 0;
}
// The runtime's entries, out of line: a callback's common path then keeps no register
// across a call (no frame to set up). A plain access (`off`, `bytes`, `flags`) that starts
// a new run of a full batch: the runtime checks the batch first.
WARPTRACE_HOST_UNINSTRUMENTED __attribute__((noinline, cold)) inline void BatchFull(
    WarptraceHostThread* t, unsigned int off, unsigned short bytes, unsigned short flags) {
  t->rt->race_flush(t->fiber);
  WarptraceHostRaceAccess& e = t->race_batch[0];
  e.offset = off;
  e.bytes = bytes;
  e.flags = flags;
  e.statement = t->statement;
  e.stride = 0;
  e.last = off;
  t->race_last = 0;
  t->race_pending = 1;
}
WARPTRACE_HOST_UNINSTRUMENTED __attribute__((noinline)) inline void ToRuntime(
    WarptraceHostThread* t, const void* p, unsigned long long bytes, int kind) {
  t->rt->access(t->fiber, p, bytes, kind);
}
WARPTRACE_HOST_UNINSTRUMENTED __attribute__((noinline)) inline void RaceToRuntime(
    WarptraceHostThread* t, int area, unsigned long long off, unsigned long long bytes,
    int kind) {
  t->rt->race(t->fiber, area, off, bytes, kind);
}
// Whether a plain access (`off`, `bytes`, `flags`, statement `at`) continues batch entry
// `e`: the next of its run, or, where the run has one access, its second (any stride
// after it for the entry the thread's last access did not join, `other`: the interleaved
// stream of a loop reading a row and a column; the next bytes for the other entry).
WARPTRACE_HOST_UNINSTRUMENTED __attribute__((always_inline)) inline bool Continues(
    WarptraceHostRaceAccess& e, unsigned int off, unsigned short bytes, unsigned short flags,
    const char* at, bool other) {
  const unsigned int stride = e.stride;
  if (stride != 0) {
    if (off != e.last + stride) return false;
  } else if (other) {
    if (off <= e.offset) return false;
  } else if (off != e.offset + bytes) {
    return false;
  }
  // `bytes` and `flags` in one compare (adjacent 16-bit fields, little-endian).
  static_assert(__builtin_offsetof(WarptraceHostRaceAccess, flags) ==
                        __builtin_offsetof(WarptraceHostRaceAccess, bytes) + 2 &&
                    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "WarptraceHostRaceAccess: bytes, then flags");
  unsigned int size_flags;
  __builtin_memcpy(&size_flags, &e.bytes, 4);
  if (e.statement != at || size_flags != (bytes | static_cast<unsigned int>(flags) << 16)) {
    return false;
  }
  e.stride = off - e.last;
  e.last = off;
  return true;
}
// Adds a plain access to the thread's batch: to one of its last two runs when it continues
// one (a loop's accesses of one statement, mostly), else as a new entry.
WARPTRACE_HOST_UNINSTRUMENTED __attribute__((always_inline)) inline void Batch(
    WarptraceHostThread* t, unsigned int off, unsigned short bytes, unsigned short flags) {
  const char* const at = t->statement;
  unsigned int n = t->race_pending;
  WarptraceHostRaceAccess* const b = t->race_batch;
  if (n != 0) {
    const unsigned int last = t->race_last;  // < n
    // The other of the last two runs first: a loop's two interleaved streams alternate.
    const unsigned int other = last == n - 1 ? n - 2 : n - 1;
    if (n >= 2 && Continues(b[other], off, bytes, flags, at, true)) {
      t->race_last = other;
      return;
    }
    if (Continues(b[last], off, bytes, flags, at, false)) return;
    if (n == WARPTRACE_HOST_RACE_BATCH) {
      BatchFull(t, off, bytes, flags);
      return;
    }
  }
  WarptraceHostRaceAccess& e = b[n];
  e.offset = off;
  e.bytes = bytes;
  e.flags = flags;
  e.statement = at;
  e.stride = 0;
  e.last = off;
  t->race_last = n;
  t->race_pending = n + 1;
}
// The races check of an in-bounds access at `off` of the CTA's own shared `area` whose
// bytes are all written: a plain read or write joins the thread's batch (the runtime
// checks it at the thread's next runtime call, before anything orders memory or another
// thread runs), another kind goes to the runtime's races entry at once; nothing for
// warptrace's own bytes. False when a byte is not written: the runtime's access entry
// decides.
WARPTRACE_HOST_UNINSTRUMENTED __attribute__((always_inline)) inline bool RaceOnly(
    WarptraceHostThread* t, const unsigned char* shadow, int area, unsigned long long off,
    unsigned long long bytes, int kind) {
  const unsigned int state = ShadowState(shadow + off, bytes);
  if (state == 0) return false;
  if (state == 3u) return true;
  if ((kind == WARPTRACE_HOST_ACCESS_READ || kind == WARPTRACE_HOST_ACCESS_WRITE) &&
      bytes <= 0xffffu) {
    Batch(t, static_cast<unsigned int>(off), static_cast<unsigned short>(bytes),
          static_cast<unsigned short>(
              area | (kind == WARPTRACE_HOST_ACCESS_WRITE ? WARPTRACE_HOST_RACE_WRITE : 0u)));
    return true;
  }
  RaceToRuntime(t, area, off, bytes, kind);
  return true;
}
WARPTRACE_HOST_UNINSTRUMENTED __attribute__((always_inline)) inline void SanitizeAccess(
    const void* p, unsigned long long bytes, int kind) {
  WarptraceHostThread* t = warptrace_host_current;
  if (t == nullptr) return;
  const unsigned long long a = reinterpret_cast<unsigned long long>(p);
  // With the races check every access of the kernel's shared memory goes to the runtime
  // (its happens-before shadow); else written bytes need nothing more. Shared memory first
  // (most checked accesses): neither area holds the fiber's stack or its thread state.
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
  } else if (a - t->stack_lo < t->stack_bytes ||
             a - reinterpret_cast<unsigned long long>(t) < sizeof(WarptraceHostThread)) {
    return;  // its stack, its threadIdx, statement marker, ...
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
  ToRuntime(t, p, bytes, kind);
}
}  // namespace warptrace_host
namespace warptrace_host {
WARPTRACE_HOST_UNINSTRUMENTED inline void NoteAtomic(const void* p, unsigned long long bytes) {
  SanitizeAccess(p, bytes, WARPTRACE_HOST_ACCESS_ATOMIC);
}
WARPTRACE_HOST_UNINSTRUMENTED inline void NoteFence() {
  if constexpr ((WARPTRACE_HOST_SANITIZE & WARPTRACE_HOST_SANITIZE_RACES) != 0) {
    const WarptraceHostThread& t = Current();
    t.rt->access(t.fiber, nullptr, 0, WARPTRACE_HOST_EVENT_FENCE);
  }
}
}  // namespace warptrace_host
// Which builder statement the thread runs (findings name it). A volatile store: the
// compiler takes the instrumentation's calls for leaf calls that read no memory of the
// kernel's, so a plain store would be merged into the next statement's. On x86-64 an asm
// store, which the instrumentation does not see (a volatile store calls it).
#if defined(__x86_64__)
#define WARPTRACE_HOST_STATEMENT()                                                    \
  asm volatile("movq %1, %0"                                                          \
               : "=m"(::warptrace_host::MutableCurrent().statement)                   \
               : "r"(static_cast<const char*>(__FILE__)));
#else
#define WARPTRACE_HOST_STATEMENT() \
  (*static_cast<const char* volatile*>(&::warptrace_host::MutableCurrent().statement) = __FILE__);
#endif
// The compiler's ThreadSanitizer instrumentation (-fsanitize=thread, no function entry/exit
// hooks) calls these for every load and store of memory the kernel can share, a
// read-modify-write (`x[i] += 1`) as a read and then a write; no sanitizer runtime is
// linked (the host compiler links the object without -fsanitize): they forward to
// warptrace's runtime. Not instrumented themselves.
#define WARPTRACE_HOST_UNCHECKED_C \
  extern "C" __attribute__((visibility("hidden"))) WARPTRACE_HOST_UNINSTRUMENTED
#define WARPTRACE_HOST_SANITIZE_CALLBACK(name, n, kind)                                \
  WARPTRACE_HOST_UNCHECKED_C void name(void* p) {                                        \
    ::warptrace_host::SanitizeAccess(p, n, WARPTRACE_HOST_ACCESS_##kind);                \
  }
#define WARPTRACE_HOST_SANITIZE_CALLBACKS(n)                                           \
  WARPTRACE_HOST_SANITIZE_CALLBACK(__tsan_read##n, n, READ)                            \
  WARPTRACE_HOST_SANITIZE_CALLBACK(__tsan_write##n, n, WRITE)                          \
  WARPTRACE_HOST_SANITIZE_CALLBACK(__tsan_unaligned_read##n, n, READ)                  \
  WARPTRACE_HOST_SANITIZE_CALLBACK(__tsan_unaligned_write##n, n, WRITE)                \
  WARPTRACE_HOST_SANITIZE_CALLBACK(__tsan_volatile_read##n, n, READ)                   \
  WARPTRACE_HOST_SANITIZE_CALLBACK(__tsan_volatile_write##n, n, WRITE)
WARPTRACE_HOST_SANITIZE_CALLBACKS(1)
WARPTRACE_HOST_SANITIZE_CALLBACKS(2)
WARPTRACE_HOST_SANITIZE_CALLBACKS(4)
WARPTRACE_HOST_SANITIZE_CALLBACKS(8)
WARPTRACE_HOST_SANITIZE_CALLBACKS(16)
#undef WARPTRACE_HOST_SANITIZE_CALLBACKS
#undef WARPTRACE_HOST_SANITIZE_CALLBACK
WARPTRACE_HOST_UNCHECKED_C void __tsan_read_range(void* p, unsigned long n) {
  ::warptrace_host::SanitizeAccess(p, n, WARPTRACE_HOST_ACCESS_READ);
}
WARPTRACE_HOST_UNCHECKED_C void __tsan_write_range(void* p, unsigned long n) {
  ::warptrace_host::SanitizeAccess(p, n, WARPTRACE_HOST_ACCESS_WRITE);
}
// A store or load of an object's vtable pointer (a class with virtual functions constructed
// in shared memory).
WARPTRACE_HOST_UNCHECKED_C void __tsan_vptr_update(void** p, void*) {
  ::warptrace_host::SanitizeAccess(p, sizeof(void*), WARPTRACE_HOST_ACCESS_WRITE);
}
WARPTRACE_HOST_UNCHECKED_C void __tsan_vptr_read(void** p) {
  ::warptrace_host::SanitizeAccess(p, sizeof(void*), WARPTRACE_HOST_ACCESS_READ);
}
// The kernel's memcpy, memmove and memset: compiled as calls (-fno-builtin-*) and linked
// with --wrap for each (host_compiler.cc SanitizeFlags, LinkArgv), they come here, are
// checked as the read and the write they make and then go to the C library's.
extern "C" void* __real_memmove(void*, const void*, size_t);
extern "C" void* __real_memset(void*, int, size_t);
WARPTRACE_HOST_UNCHECKED_C void* __wrap_memcpy(void* d, const void* s, size_t n) {
  if (n != 0) {
    ::warptrace_host::SanitizeAccess(s, n, WARPTRACE_HOST_ACCESS_READ);
    ::warptrace_host::SanitizeAccess(d, n, WARPTRACE_HOST_ACCESS_WRITE);
  }
  return __real_memcpy(d, s, n);
}
WARPTRACE_HOST_UNCHECKED_C void* __wrap_memmove(void* d, const void* s, size_t n) {
  if (n != 0) {
    ::warptrace_host::SanitizeAccess(s, n, WARPTRACE_HOST_ACCESS_READ);
    ::warptrace_host::SanitizeAccess(d, n, WARPTRACE_HOST_ACCESS_WRITE);
  }
  return __real_memmove(d, s, n);
}
WARPTRACE_HOST_UNCHECKED_C void* __wrap_memset(void* d, int c, size_t n) {
  if (n != 0) ::warptrace_host::SanitizeAccess(d, n, WARPTRACE_HOST_ACCESS_WRITE);
  return __real_memset(d, c, n);
}
// clang 15 and later call these for the copies it would otherwise expand inline.
WARPTRACE_HOST_UNCHECKED_C void* __tsan_memcpy(void* d, const void* s, size_t n) {
  return __wrap_memcpy(d, s, n);
}
WARPTRACE_HOST_UNCHECKED_C void* __tsan_memmove(void* d, const void* s, size_t n) {
  return __wrap_memmove(d, s, n);
}
WARPTRACE_HOST_UNCHECKED_C void* __tsan_memset(void* d, int c, size_t n) {
  return __wrap_memset(d, c, n);
}
// The module constructor's call, and the function hooks a compiler that ignores
// tsan-instrument-func-entry-exit=0 would still emit: nothing to do.
WARPTRACE_HOST_UNCHECKED_C void __tsan_init(void) {}
WARPTRACE_HOST_UNCHECKED_C void __tsan_func_entry(void*) {}
WARPTRACE_HOST_UNCHECKED_C void __tsan_func_exit(void) {}
// The instrumentation's atomic entries: the compiler turns each __atomic_* / __sync_*
// builtin (std::atomic, cuda::atomic_ref, a raw builtin in a kernel) into a call of
// __tsan_atomicN_OP. Each reports itself as an atomic access (which the races check never
// counts against another atomic) and then does the operation, sequentially consistent (at
// least as strong as the order the kernel asked for). No 128-bit atomics (the library
// they would need is not linked either).
namespace warptrace_host {
template <typename T>
WARPTRACE_HOST_UNINSTRUMENTED __attribute__((always_inline)) inline volatile T* NoteAtomicAt(
    const volatile T* p) {
  SanitizeAccess(const_cast<const T*>(p), sizeof(T), WARPTRACE_HOST_ACCESS_ATOMIC);
  return const_cast<volatile T*>(p);
}
}  // namespace warptrace_host

#define WARPTRACE_HOST_TSAN_ATOMICS(n, T)                                                    \
  WARPTRACE_HOST_UNCHECKED_C T __tsan_atomic##n##_load(const volatile T* a, int) {          \
    return __atomic_load_n(::warptrace_host::NoteAtomicAt(a), __ATOMIC_SEQ_CST);            \
  }                                                                                          \
  WARPTRACE_HOST_UNCHECKED_C void __tsan_atomic##n##_store(volatile T* a, T v, int) {       \
    __atomic_store_n(::warptrace_host::NoteAtomicAt(a), v, __ATOMIC_SEQ_CST);               \
  }                                                                                          \
  WARPTRACE_HOST_UNCHECKED_C T __tsan_atomic##n##_exchange(volatile T* a, T v, int) {       \
    return __atomic_exchange_n(::warptrace_host::NoteAtomicAt(a), v, __ATOMIC_SEQ_CST);     \
  }                                                                                          \
  WARPTRACE_HOST_TSAN_RMW(n, T, fetch_add)                                                   \
  WARPTRACE_HOST_TSAN_RMW(n, T, fetch_sub)                                                   \
  WARPTRACE_HOST_TSAN_RMW(n, T, fetch_and)                                                   \
  WARPTRACE_HOST_TSAN_RMW(n, T, fetch_or)                                                    \
  WARPTRACE_HOST_TSAN_RMW(n, T, fetch_xor)                                                   \
  WARPTRACE_HOST_TSAN_RMW(n, T, fetch_nand)                                                  \
  WARPTRACE_HOST_UNCHECKED_C int __tsan_atomic##n##_compare_exchange_strong(                \
      volatile T* a, T* c, T v, int, int) {                                                  \
    return __atomic_compare_exchange_n(::warptrace_host::NoteAtomicAt(a), c, v, false,      \
                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                 \
  }                                                                                          \
  WARPTRACE_HOST_UNCHECKED_C int __tsan_atomic##n##_compare_exchange_weak(                  \
      volatile T* a, T* c, T v, int, int) {                                                  \
    return __atomic_compare_exchange_n(::warptrace_host::NoteAtomicAt(a), c, v, true,       \
                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                 \
  }                                                                                          \
  WARPTRACE_HOST_UNCHECKED_C T __tsan_atomic##n##_compare_exchange_val(volatile T* a, T c,  \
                                                                       T v, int, int) {     \
    __atomic_compare_exchange_n(::warptrace_host::NoteAtomicAt(a), &c, v, false,            \
                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                        \
    return c;                                                                                \
  }
#define WARPTRACE_HOST_TSAN_RMW(n, T, op)                                                    \
  WARPTRACE_HOST_UNCHECKED_C T __tsan_atomic##n##_##op(volatile T* a, T v, int) {           \
    return __atomic_##op(::warptrace_host::NoteAtomicAt(a), v, __ATOMIC_SEQ_CST);           \
  }
WARPTRACE_HOST_TSAN_ATOMICS(8, char)
WARPTRACE_HOST_TSAN_ATOMICS(16, short)
WARPTRACE_HOST_TSAN_ATOMICS(32, int)
WARPTRACE_HOST_TSAN_ATOMICS(64, long long)
#undef WARPTRACE_HOST_TSAN_RMW
#undef WARPTRACE_HOST_TSAN_ATOMICS
// A fence the kernel wrote as a builtin (__sync_synchronize, std::atomic_thread_fence): a
// __threadfence() to the races check.
WARPTRACE_HOST_UNCHECKED_C void __tsan_atomic_thread_fence(int) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  ::warptrace_host::NoteFence();
}
WARPTRACE_HOST_UNCHECKED_C void __tsan_atomic_signal_fence(int) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

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
#define WARPTRACE_HOST_SANITIZE_EVENT(kind, n) \
  (WARPTRACE_HOST_RT(access)(::warptrace_host::Fiber(), nullptr, (n), (kind)))
#else
#define WARPTRACE_HOST_STATEMENT()
#define WARPTRACE_HOST_ASYNC_WRITE(p, n, bar) ((void)0)
#define WARPTRACE_HOST_ACCESS(p, n, kind) ((void)0)
#define WARPTRACE_HOST_SANITIZE_EVENT(kind, n) ((void)0)
#endif

#endif  // WARPTRACE_JIT_HOST_SANITIZE_HOST_H_
