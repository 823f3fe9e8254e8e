// The device recorder: the code every profiled kernel includes. Generated kernels call
//
//   warptrace::recorder::UnitState wt;                     // one per thread, in registers
//                                                          // (SharedUnitState: shared placement)
//   warptrace::recorder::Prologue(wt, kWtConfig, wt_trace, wt_smem, tid_linear, block_linear);
//   warptrace::recorder::Record(wt, tag);                  // at each record point
//   warptrace::recorder::RecordWithPayload(wt, tag, a, b); // an event with a payload slot
//   warptrace::recorder::RecordAt<k>(wt, tag);             // a straight-line run of record
//   warptrace::recorder::RecordWithPayloadAt<k>(wt, ...);  //   points at immediate offsets,
//   warptrace::recorder::Advance<n>(wt);                   //   then one state update
//   warptrace::recorder::Epilogue(wt, kWtConfig, wt_trace, tid_linear, block_linear);
//                                                        // before every exit of the kernel
//
// where kWtConfig is a constexpr Config emitted from the RecordPlan. Every thread of the
// block calls all three; only the recorder thread of each trace unit of a sampled block gets
// a non-zero capacity, so for everyone else Record is a clock read, one compare and the
// (loop-amortized) pointer and count updates.
//
// Record's store is bounded: the attempted count (capacity - left, written to the header as
// `attempted`) always advances, and an event at or past capacity is counted but never
// written. `bazel run //jit/cost:recorder_cost` prints what one Record costs.
//
// Compiles three ways:
//   * NVRTC / nvcc device code (__CUDA_ARCH__ defined): %clock, %globaltimer, %smid.
//   * Host C++ (the CPU backend, or a test): the program defines, with C linkage (the host
//     backend's runtime does, jit/host/device/host_abi.h; a test may define its own),
//       unsigned int warptrace_host_clock(void);         // 32-bit "SM cycles"
//       unsigned long long warptrace_host_globaltimer(void);  // ns
//       unsigned int warptrace_host_smid(void);          // virtual SM of this thread's block
// The file depends on nothing but trace_abi.h and includes no standard header, so NVRTC
// can compile it as an in-memory header.
#ifndef WARPTRACE_FORMAT_RECORDER_CUH_
#define WARPTRACE_FORMAT_RECORDER_CUH_

#include "trace_abi.h"

#if defined(__CUDA_ARCH__)
#define WARPTRACE_DEVICE_INLINE __device__ __forceinline__
#elif defined(__CUDACC__)
#define WARPTRACE_DEVICE_INLINE __host__ __device__ inline
#else
#define WARPTRACE_DEVICE_INLINE inline
extern "C" unsigned int warptrace_host_clock(void);
extern "C" unsigned long long warptrace_host_globaltimer(void);
extern "C" unsigned int warptrace_host_smid(void);
#endif

// Exact trip counts checked by every thread on the host backend (a trace holds only each
// unit's recorder thread, so a warp that ran fewer iterations than its unit's recorder is
// invisible in it). The emitter wraps a TripCount::Exact loop of a profiled kernel as
//   WARPTRACE_TRIPS_BEGIN(7); for (...) { WARPTRACE_TRIPS_STEP(7); ... }
//   WARPTRACE_TRIPS_END(7, 8ull, "kernel k > loop i");
// On the host, a thread whose count differs calls warptrace_host_trips_differ (the host
// runtime fails the launch naming the block, thread, warp, loop and both counts): a 64-bit
// counter, an increment per iteration and one compare per loop. On a GPU the macros expand
// to nothing: no register, no instruction (the GPU checks the recorder threads' counts
// from the trace, profiler/trace/plan_check.h).
#if defined(__CUDA_ARCH__)
#define WARPTRACE_TRIPS_BEGIN(n)
#define WARPTRACE_TRIPS_STEP(n)
#define WARPTRACE_TRIPS_END(n, declared, loop)
#else
extern "C" __attribute__((noreturn)) void warptrace_host_trips_differ(
    const char* loop, unsigned long long declared, unsigned long long ran);
#define WARPTRACE_TRIPS_BEGIN(n) unsigned long long warptrace_trips_##n = 0
#define WARPTRACE_TRIPS_STEP(n) ++warptrace_trips_##n
#define WARPTRACE_TRIPS_END(n, declared, loop) \
  if (warptrace_trips_##n != (declared)) warptrace_host_trips_differ(loop, declared, warptrace_trips_##n)
#endif

// The block's and the thread's linear indices (blockIdx.x + gridDim.x * (blockIdx.y +
// gridDim.y * blockIdx.z), the same of threadIdx and blockDim), read again where they are
// used: the emitted epilogue's arguments. On the device, volatile special-register reads,
// so that the compiler recomputes them (a few instructions at each exit) instead of holding
// the prologue's values in registers for the whole kernel.
#if defined(__CUDA_ARCH__)
#define WARPTRACE_BLOCK_LINEAR_NOW ::warptrace::recorder::ReadLinear<true>()
#define WARPTRACE_THREAD_LINEAR_NOW ::warptrace::recorder::ReadLinear<false>()
#else
#define WARPTRACE_BLOCK_LINEAR_NOW (blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z))
#define WARPTRACE_THREAD_LINEAR_NOW \
  (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))
#endif

namespace warptrace {
namespace recorder {

using abi::u32;
using abi::u64;

// Compile-time shape of the trace, emitted as a constexpr from the RecordPlan.
struct Config {
  u32 unit_threads;       // threads per trace unit: 32 (warp), 128 (warpgroup), block, custom
  u32 unit_first_thread;  // first linear thread of unit 0 (0 unless a custom subset)
  u32 recorder_offset;    // the recorder's position within its unit (0 = first thread)
  u32 units_per_block;    // trace units per block
  u32 capacity;           // event slots per unit, from the plan
  u32 shared;             // 1: stage events in shared memory, copy out in the epilogue
  u32 sample_begin;       // record blocks b with sample_begin <= b < sample_end and
  u32 sample_end;         //   (b - sample_begin) % sample_stride == 0
  u32 sample_stride;
};

// Per-thread recorder state; lives in registers, three of them (every thread of the kernel
// holds it for the whole kernel, so it competes with the kernel's own registers: nothing
// the epilogue can recompute is kept here). Record keeps a running pointer and a count of
// slots left (not an index), so that each event costs a clock read, a compare against an
// immediate, and one predicated 64-bit store (STG.E.64 / STS.64): no address arithmetic,
// no 64-bit multiply. A unit records fewer than 2^31 events past its capacity.
//
// kShared: the events are staged in shared memory (Config::shared), stored with
// st.shared through a 32-bit shared-window address; otherwise with generic stores (right
// for either placement). The placement is in the type, a constant when the record code is
// compiled: a record point spelled with a run-time choice of store (or one the compiler
// folds only after its loop unroller ran) is weighed with both, and loops the unprofiled
// kernel unrolls stay rolled (issue 51). The emitter declares SharedUnitState for shared
// placement and UnitState for global.
template <bool kShared>
struct BasicUnitState {
  u64* next;  // where the next event goes (global or shared); advances on every Record.
              // Non-recorders point at the buffer and never store through it.
  int left;   // slots left: capacity - attempted; <= 0 once full (events then dropped);
              // 0 for every thread that does not record
};
using UnitState = BasicUnitState<false>;
using SharedUnitState = BasicUnitState<true>;

WARPTRACE_DEVICE_INLINE u32 ReadClock() {
#if defined(__CUDA_ARCH__)
  u32 c;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(c) : : "memory");
  return c;
#else
  return warptrace_host_clock();
#endif
}

WARPTRACE_DEVICE_INLINE u64 ReadGlobaltimer() {
#if defined(__CUDA_ARCH__)
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
  return t;
#else
  return warptrace_host_globaltimer();
#endif
}

#if defined(__CUDA_ARCH__)
// kBlock: the block's linear index, else the thread's in its block (WARPTRACE_*_NOW).
template <bool kBlock>
WARPTRACE_DEVICE_INLINE u32 ReadLinear() {
  u32 x, y, z, nx, ny;
  if (kBlock) {
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(x));
    asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(y));
    asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(z));
    asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(nx));
    asm volatile("mov.u32 %0, %%nctaid.y;" : "=r"(ny));
  } else {
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(x));
    asm volatile("mov.u32 %0, %%tid.y;" : "=r"(y));
    asm volatile("mov.u32 %0, %%tid.z;" : "=r"(z));
    asm volatile("mov.u32 %0, %%ntid.x;" : "=r"(nx));
    asm volatile("mov.u32 %0, %%ntid.y;" : "=r"(ny));
  }
  return x + nx * (y + ny * z);
}
#endif

WARPTRACE_DEVICE_INLINE u32 ReadSmId() {
#if defined(__CUDA_ARCH__)
  u32 id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
#else
  return warptrace_host_smid();
#endif
}

// Records one event at slot kAt past the state's pointer (checked against kAt slots
// past its count of slots left) and leaves the state alone: the emitter groups the record
// points of a straight-line run (jit/emit/record_runs.h) as RecordAt<0>, RecordAt<1>, ...
// then one Advance<n>, so that each event costs a clock read, a compare against an
// immediate, the tag and one predicated store at an immediate offset (four SASS), and the
// run one pointer and one count update (issue 51: the per-event pointer and count copies
// were two more per event). The same slots, in the same order, as n Record calls.
//
// On the device, the clock read, the bound check and the store are one inline-asm statement
// (mov %clock, setp, a predicated st.v2.u32). One statement, not C++ around an asm clock
// read, because the kernel must compile as it does unprofiled: LLVM's unroller weighs a
// loop by its IR, and a record point spelled as a branch and a store per event made loops
// the unprofiled kernel unrolls stay rolled (issue 51: HGMMA 16 -> 4). The statement is
// volatile (never removed or reordered against the kernel's own asm, so events keep program
// order against wgmma, mbarrier and copy instructions) but has no "memory" clobber: it
// fences none of the kernel's own loads and stores. The slots it writes are read only by
// Epilogue, which opens with a compiler fence.
template <u32 kAt, bool kShared>
WARPTRACE_DEVICE_INLINE void RecordAt(BasicUnitState<kShared>& s, u32 tag) {
#if defined(__CUDA_ARCH__)
  // Shared: a 32-bit shared-window address (STS.64), as the compiler's own store would be.
  if (kShared) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t.reg .u32 c;\n\t"
        "mov.u32 c, %%clock;\n\t"
        "setp.gt.s32 p, %1, %3;\n\t"
        "@p st.shared.v2.u32 [%0+%4], {%2, c};\n\t}"
        :
        : "r"(static_cast<u32>(__cvta_generic_to_shared(s.next))), "r"(s.left), "r"(tag),
          "n"(kAt), "n"(kAt * 8u));
  } else {
    asm volatile(
        "{\n\t.reg .pred p;\n\t.reg .u32 c;\n\t"
        "mov.u32 c, %%clock;\n\t"
        "setp.gt.s32 p, %1, %3;\n\t"
        "@p st.v2.u32 [%0+%4], {%2, c};\n\t}"
        :
        : "l"(s.next), "r"(s.left), "r"(tag), "n"(kAt), "n"(kAt * 8u));
  }
#else
  const u32 clock = ReadClock();
  if (s.left > static_cast<int>(kAt)) {
    // One 64-bit store, tag in the low word; slots are 8-byte aligned (64-byte header,
    // aligned buffer).
    s.next[kAt] = static_cast<u64>(tag) | (static_cast<u64>(clock) << 32);
  }
#endif
}

// Moves the state past the kCount slots its run's RecordAt calls used.
template <u32 kCount, bool kShared>
WARPTRACE_DEVICE_INLINE void Advance(BasicUnitState<kShared>& s) {
  s.next += kCount;
  s.left -= static_cast<int>(kCount);
}

// Records one event: tag = site id | kExitFlag for a region's exit (RecordAt<0>, then
// Advance<1>: three SASS for the event, plus the pointer and count updates).
template <bool kShared>
WARPTRACE_DEVICE_INLINE void Record(BasicUnitState<kShared>& s, u32 tag) {
  RecordAt<0>(s, tag);
  Advance<1>(s);
}

// Records one event followed by its payload slot (trace version 2) at slots kAt and kAt + 1
// past the state's pointer, leaving the state alone (RecordAt says why): the tag gets
// abi::kPayloadFlag, the next slot holds (a, b) (format/links.h says what they mean per site
// kind). Both slots count towards `attempted`. The event is stored while a slot is left and
// its payload only while two are, so at the capacity edge the event's slot may be written
// without its payload (the dump counts that event as dropped); a payload is never written
// without its event.
template <u32 kAt, bool kShared>
WARPTRACE_DEVICE_INLINE void RecordWithPayloadAt(BasicUnitState<kShared>& s, u32 tag, u32 a,
                                                 u32 b) {
#if defined(__CUDA_ARCH__)
  // One statement per placement, no memory clobber: RecordAt's comments say why.
  if (kShared) {
    asm volatile(
        "{\n\t.reg .pred p, q;\n\t.reg .u32 c;\n\t"
        "mov.u32 c, %%clock;\n\t"
        "setp.gt.s32 p, %1, %5;\n\t"
        "setp.gt.s32 q, %1, %6;\n\t"
        "@p st.shared.v2.u32 [%0+%7], {%2, c};\n\t"
        "@q st.shared.v2.u32 [%0+%8], {%3, %4};\n\t}"
        :
        : "r"(static_cast<u32>(__cvta_generic_to_shared(s.next))), "r"(s.left),
          "r"(tag | abi::kPayloadFlag), "r"(a), "r"(b), "n"(kAt), "n"(kAt + 1u),
          "n"(kAt * 8u), "n"(kAt * 8u + 8u));
  } else {
    asm volatile(
        "{\n\t.reg .pred p, q;\n\t.reg .u32 c;\n\t"
        "mov.u32 c, %%clock;\n\t"
        "setp.gt.s32 p, %1, %5;\n\t"
        "setp.gt.s32 q, %1, %6;\n\t"
        "@p st.v2.u32 [%0+%7], {%2, c};\n\t"
        "@q st.v2.u32 [%0+%8], {%3, %4};\n\t}"
        :
        : "l"(s.next), "r"(s.left), "r"(tag | abi::kPayloadFlag), "r"(a), "r"(b), "n"(kAt),
          "n"(kAt + 1u), "n"(kAt * 8u), "n"(kAt * 8u + 8u));
  }
#else
  const u32 clock = ReadClock();
  if (s.left > static_cast<int>(kAt)) {
    s.next[kAt] = static_cast<u64>(tag | abi::kPayloadFlag) | (static_cast<u64>(clock) << 32);
  }
  if (s.left > static_cast<int>(kAt + 1u)) {
    s.next[kAt + 1u] = static_cast<u64>(a) | (static_cast<u64>(b) << 32);
  }
#endif
}

// Records one event and its payload slot (RecordWithPayloadAt<0>, then Advance<2>).
template <bool kShared>
WARPTRACE_DEVICE_INLINE void RecordWithPayload(BasicUnitState<kShared>& s, u32 tag, u32 a, u32 b) {
  RecordWithPayloadAt<0>(s, tag, a, b);
  Advance<2>(s);
}

#if defined(__CUDA_ARCH__)
// The ends of asynchronous copies in flight on kCount elements of an mbarrier array,
// recorded by their issuing thread (jit/emit/observed_copy_ends.cc; device only: the host
// backend's emitted code does the same in C++ with its own mbarrier functions). For
// element e < kCount, `pending[e]` holds the issue + 1 of the copy in flight (0: none) and
// `pending[e + kStride]` the phase it completes (the issuer's words in shared memory),
// `bar[e]` is the mbarrier. For each element with a copy in flight whose phase has
// completed (kWait: once it has, waiting with mbarrier.try_wait; otherwise tested once with
// mbarrier.test_wait), `pending[e]` is cleared and the event (kTag | kPayloadFlag, clock)
// with payload (issue, first_id + e) recorded as RecordWithPayload would.
//
// Used only for copy sites that keep an observed end (SiteInfo::end_observed; trace
// version 5 derives the others' ends in the dump).
// One asm statement, its loop over the elements (none for one element: straight-line
// code, issue 51) and its branches inside: LLVM weighs it as one instruction, so the
// kernel's loop around it unrolls as unprofiled (Record's comment).
// The element loop carries `.pragma "nounroll"`: ptxas would otherwise unroll it (about 25
// SASS per element, kCount elements, in every unrolled copy of the kernel's loop around the
// wait): hopper_gemm's profiled SASS 2530 -> 2167, SYNCS 93 -> 69, for the same checks.
// Few registers (the tag, count and stride are immediates; the state is updated in place):
// a producer warpgroup may run it at 40 registers (setmaxnreg). It clobbers memory: the
// emitted C++ also writes `pending` (at the copy's issue).
template <bool kWait, u32 kTag, u32 kCount, u32 kStride, bool kShared>
WARPTRACE_DEVICE_INLINE void RecordCopyEnds(BasicUnitState<kShared>& s, u32* pending, u64* bar,
                                            u32 first_id) {
  // %0 next (in-out: shared u32 or generic u64), %1 left (in-out), %2 pending and %3 bar
  // (shared addresses, in-out: advanced per element), %4 first_id, %5 tag, %6 count,
  // %7 the phase words' offset in bytes.
#define WARPTRACE_COPY_ENDS_ASM(ADDR, STORE, OP, MISS, HEAD, TAIL)             \
  "{\n\t.reg .pred p;\n\t.reg .u32 pend, ph, t, e;\n\t"                       \
  "mov.u32 e, 0;\n\t"                                                      \
  HEAD                                                                     \
  "ld.shared.u32 pend, [%2];\n\t"                                          \
  "setp.ne.u32 p, pend, 0;\n\t"                                            \
  "@!p bra WARPTRACE_COPY_ENDS_NEXT;\n\t"                                  \
  "ld.shared.u32 ph, [%2+%7];\n\t"                                         \
  "and.b32 ph, ph, 1;\n\t"                                                 \
  "WARPTRACE_COPY_ENDS_WAIT:\n\t"                                          \
  "mbarrier." OP ".parity.shared.b64 p, [%3], ph;\n\t"                     \
  "@!p bra WARPTRACE_COPY_ENDS_" MISS ";\n\t"                              \
  "st.shared.u32 [%2], 0;\n\t"                                             \
  "mov.u32 ph, %%clock;\n\t"                                               \
  "sub.u32 pend, pend, 1;\n\t"                                             \
  "mov.u32 t, %5;\n\t"                                                     \
  "setp.gt.s32 p, %1, 0;\n\t"                                              \
  "@p " STORE " [%0], {t, ph};\n\t"                                        \
  "add.u32 t, %4, e;\n\t"                                                  \
  "setp.gt.s32 p, %1, 1;\n\t"                                              \
  "@p " STORE " [%0+8], {pend, t};\n\t"                                    \
  "add." ADDR " %0, %0, 16;\n\t"                                           \
  "sub.s32 %1, %1, 2;\n\t"                                                 \
  "WARPTRACE_COPY_ENDS_NEXT:\n\t"                                          \
  "add.u32 %2, %2, 4;\n\tadd.u32 %3, %3, 8;\n\tadd.u32 e, e, 1;\n\t"          \
  TAIL "}"
// The element loop (HEAD, TAIL), or for one element (kCount 1: a copy's wait at its next
// issue) straight-line code with no backward branch.
#define WARPTRACE_COPY_ENDS_LOOP_HEAD "WARPTRACE_COPY_ENDS_ELEMENT:\n\t.pragma \"nounroll\";\n\t"
#define WARPTRACE_COPY_ENDS_LOOP_TAIL \
  "setp.lt.u32 p, e, %6;\n\t@p bra WARPTRACE_COPY_ENDS_ELEMENT;\n\t"
#define WARPTRACE_COPY_ENDS_STATEMENT(AT, STORE, OP, MISS, HEAD, TAIL)                  \
  asm volatile(WARPTRACE_COPY_ENDS_ASM(AT, STORE, OP, MISS, HEAD, TAIL)                 \
               : "+" AT_CONSTRAINT(next), "+r"(s.left), "+r"(pa), "+r"(ba)              \
               : "r"(first_id), "n"(kTag | abi::kPayloadFlag), "n"(kCount),             \
                 "n"(kStride * 4u)                                                      \
               : "memory")
#define WARPTRACE_COPY_ENDS(AT, STORE, OP, MISS)                                         \
  if (kCount == 1u) {                                                                    \
    WARPTRACE_COPY_ENDS_STATEMENT(AT, STORE, OP, MISS, "", "");                          \
  } else {                                                                               \
    WARPTRACE_COPY_ENDS_STATEMENT(AT, STORE, OP, MISS, WARPTRACE_COPY_ENDS_LOOP_HEAD,    \
                                  WARPTRACE_COPY_ENDS_LOOP_TAIL);                        \
  }
  u32 pa = static_cast<u32>(__cvta_generic_to_shared(pending));
  u32 ba = static_cast<u32>(__cvta_generic_to_shared(bar));
  if (kShared) {
    const u32 before = static_cast<u32>(__cvta_generic_to_shared(s.next));
    u32 next = before;
#define AT_CONSTRAINT(x) "r"(x)
    if (kWait) {
      WARPTRACE_COPY_ENDS("u32", "st.shared.v2.u32", "try_wait", "WAIT");
    } else {
      WARPTRACE_COPY_ENDS("u32", "st.shared.v2.u32", "test_wait", "NEXT");
    }
#undef AT_CONSTRAINT
    s.next += (next - before) / 8u;
  } else {
    u64 next = reinterpret_cast<u64>(s.next);
#define AT_CONSTRAINT(x) "l"(x)
    if (kWait) {
      WARPTRACE_COPY_ENDS("u64", "st.v2.u32", "try_wait", "WAIT");
    } else {
      WARPTRACE_COPY_ENDS("u64", "st.v2.u32", "test_wait", "NEXT");
    }
#undef AT_CONSTRAINT
    s.next = reinterpret_cast<u64*>(next);
  }
#undef WARPTRACE_COPY_ENDS
#undef WARPTRACE_COPY_ENDS_STATEMENT
#undef WARPTRACE_COPY_ENDS_LOOP_TAIL
#undef WARPTRACE_COPY_ENDS_LOOP_HEAD
#undef WARPTRACE_COPY_ENDS_ASM
}
#endif  // __CUDA_ARCH__

// Writes header words i and i+1 (i even: records are 8-byte aligned) with one 64-bit store
// on the device. Fewer, wider stores make the prologue and epilogue cheaper to run and to
// compile: NVRTC's time grows with every memory operation in the kernel.
WARPTRACE_DEVICE_INLINE void StorePair(u32* words, u32 lo, u32 hi) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<u64*>(words) = static_cast<u64>(lo) | (static_cast<u64>(hi) << 32);
#else
  words[0] = lo;
  words[1] = hi;
#endif
}

WARPTRACE_DEVICE_INLINE bool IsSampled(const Config& c, u32 block_linear) {
  return block_linear >= c.sample_begin && block_linear < c.sample_end &&
         (block_linear - c.sample_begin) % c.sample_stride == 0u;
}

// The unit this thread records (its index in the block), or c.units_per_block when the
// thread records nothing: its block is not sampled, or it is not its unit's recorder.
WARPTRACE_DEVICE_INLINE u32 RecordedUnit(const Config& c, u32 thread_linear, u32 block_linear) {
  if (!IsSampled(c, block_linear)) return c.units_per_block;
  const u32 rel = thread_linear - c.unit_first_thread;  // wraps for threads before the subset
  if (rel >= c.unit_threads * c.units_per_block) return c.units_per_block;
  if (rel % c.unit_threads != c.recorder_offset) return c.units_per_block;
  return rel / c.unit_threads;
}

// The record of `unit` of block `block_linear` (a sampled block) in the trace buffer.
WARPTRACE_DEVICE_INLINE u32* RecordOf(const Config& c, u32* buffer, u32 unit, u32 block_linear) {
  const u32 ordinal = (block_linear - c.sample_begin) / c.sample_stride;
  return buffer + (static_cast<u64>(ordinal) * c.units_per_block + unit) *
                      abi::RecordWords(c.capacity);
}

// Sets up the thread's state and, for a recorder, writes the record's identity and start
// stamps. `buffer` is the launch's trace buffer; `shared_slots` is the block's staging area
// (units_per_block * capacity * 2 words, 8-byte aligned) or null for global placement.
template <bool kShared>
WARPTRACE_DEVICE_INLINE void Prologue(BasicUnitState<kShared>& s, const Config& c, u32* buffer,
                                      u32* shared_slots, u32 thread_linear,
                                      u32 block_linear) {
  // Shared placement: every thread points into the staging area, so the compiler sees one
  // address space and stores with STS.
  s.next = reinterpret_cast<u64*>(c.shared ? shared_slots : buffer);
  s.left = 0;
#if defined(__CUDA_ARCH__)
  // A SharedUnitState stores with st.shared: only for shared placement (folds: the emitted
  // Config is a constant).
  if (kShared && c.shared == 0u) __trap();
#endif
  const u32 unit = RecordedUnit(c, thread_linear, block_linear);
  if (unit >= c.units_per_block) return;
  u32* const record = RecordOf(c, buffer, unit, block_linear);
  s.left = static_cast<int>(c.capacity);
  u32* const slots = c.shared ? shared_slots + static_cast<u64>(unit) * c.capacity * 2u
                              : record + abi::kHeaderWords;
  s.next = reinterpret_cast<u64*>(slots);

  const u32 sm_id = ReadSmId();
  StorePair(record + 0, abi::kTraceMagic, abi::kTraceVersion);
  StorePair(record + 2, sm_id, block_linear);
  StorePair(record + 4, unit, 0u);
  StorePair(record + 6, c.capacity, c.shared ? abi::kFlagShared : 0u);
  StorePair(record + 14, abi::kHeaderWords,
            abi::HeaderChecksum(abi::kTraceMagic, abi::kTraceVersion, sm_id, block_linear,
                                unit, c.capacity));
  const u64 gt = ReadGlobaltimer();
  const u32 clock = ReadClock();
  StorePair(record + 8, clock, 0u);  // start_clock; end_clock stays 0 until the epilogue
  StorePair(record + 10, static_cast<u32>(gt), static_cast<u32>(gt >> 32));
}

// Writes the end stamps and the attempted count, copies staged events out for shared
// placement (the recorder copies its own unit's events, so no barrier is needed), folds
// the stored events into the checksum word, and marks the record complete. `buffer`,
// `thread_linear` and `block_linear` are the Prologue's (the record is found again from
// them rather than kept in registers for the whole kernel). Safe to call from every
// thread; only recorders act, once: a second call (e.g. after an early return path) finds
// its record complete and does nothing. `exit_flags` is 0 at the kernel's end and
// abi::kFlagEarlyReturn on an early return's path; it is or-ed into the header's flags.
template <bool kShared>
WARPTRACE_DEVICE_INLINE void Epilogue(BasicUnitState<kShared>& s, const Config& c, u32* buffer,
                                      u32 thread_linear, u32 block_linear,
                                      u32 exit_flags = 0u) {
#if defined(__CUDA_ARCH__)
  // Record's stores are asm the compiler does not see write memory: they come before the
  // reads below (once per exit, after the kernel's last record point).
  asm volatile("" ::: "memory");
#endif
  const u32 unit = RecordedUnit(c, thread_linear, block_linear);
  if (unit >= c.units_per_block) return;
  u32* const record = RecordOf(c, buffer, unit, block_linear);
  if ((record[7] & abi::kFlagComplete) != 0u) return;
  const u64 gt = ReadGlobaltimer();
  const u32 clock = ReadClock();
  const u32 attempted = c.capacity - static_cast<u32>(s.left);
  // The stored slots, min(attempted, capacity), are folded into the checksum word (trace
  // version 3, trace_abi.h) starting from the header checksum the prologue wrote: for shared
  // placement while they are copied out, for global placement in a pass that rereads them.
  // Record itself is unchanged: the cost is here, once per unit.
  const u32 n = s.left > 0 ? attempted : c.capacity;
  u64* const dst = reinterpret_cast<u64*>(record + abi::kHeaderWords);
  const u64* const src = s.next - attempted;  // the unit's first slot (staging or record)
  u32 sum = record[15];
  // Not unrolled: the loop runs once per unit, and an unrolled loop costs compile time in
  // every profiled kernel (tests/jit/compile_benchmark).
#if defined(__CUDACC__)
#pragma unroll 1
#endif
  for (u32 i = 0; i < n; ++i) {
    const u64 slot = src[i];
    if (c.shared) dst[i] = slot;
    sum = abi::EventChecksumStep(sum, static_cast<u32>(slot), static_cast<u32>(slot >> 32));
  }
  // Words 5 (attempted), 6-7 (capacity, flags: written whole, no read-modify-write), 9
  // (end_clock), 12-13 (end globaltimer).
  record[5] = attempted;
  StorePair(record + 6, c.capacity,
            abi::kFlagComplete | (c.shared ? abi::kFlagShared : 0u) | exit_flags);
  record[9] = clock;
  StorePair(record + 12, static_cast<u32>(gt), static_cast<u32>(gt >> 32));
  record[15] = sum;
  s.left = 0;  // a Record after it is counted nowhere and stores nothing
}

}  // namespace recorder
}  // namespace warptrace

#endif  // WARPTRACE_FORMAT_RECORDER_CUH_
