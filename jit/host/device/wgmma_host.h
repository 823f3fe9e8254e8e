// The host backend's emulation of sm_90a wgmma and setmaxnreg (the API is
// jit/primitives/wgmma_sm90.cuh, which calls in here). Included by cuda_on_cpu.h; part of
// every kernel's shared object. Warpgroup-wide instructions gather their operands with the
// runtime's operand exchange (warptrace_host::Exchange, host_abi.h).
//
// The shared-memory window. A descriptor holds an 18-bit shared-memory address (bits 13-0 =
// address >> 4), so the host gives every block a 256 KiB window over its two areas: window
// address 0 is the page holding the dynamic shared memory's start (so a window address and
// the host pointer agree modulo 4096, and a 1024-byte-aligned tile stays aligned for the
// swizzle), the dynamic area follows, and the static __shared__ area starts at the next page
// boundary after it. A kernel within a GPU's 227 KiB of shared memory fits. A descriptor of
// a pointer outside both areas, or past the window, fails the launch.
// __cvta_generic_to_shared(p) returns the same window address.
//
// Data movement (exact): each element of A (64 x 16) and B (given as its N x 16 transpose) is
// read from the canonical layout of its descriptor (K-major or MN-major, no swizzle or 128B /
// 64B / 32B; the formulas are in wgmma_sm90.cuh), the swizzle applied to the window address;
// A from registers (RS) is gathered from the warpgroup's fragments; D in the accumulator
// layout. Each thread decodes 1/128 of A and of B and hands its share to the exchange, so
// the warpgroup reads every element once and every thread gets all of them; then every
// thread computes its own N/2 accumulators.
//
// Arithmetic (documented order; the PTX ISA leaves it unspecified): for each accumulator,
// d = (scale_d ? d : 0), then d = d + a_k * b_k for k = 0, 1, ..., 15 in fp32, each product
// and each sum rounded to fp32 (a product of two bf16 values is exact in fp32 unless it
// overflows or underflows, so a fused multiply-add gives the same result).
//
// Asynchrony. wgmma.mma_async computes its result at issue (shared memory is read then) and
// keeps it in the thread's pending state; the accumulator registers are overwritten with a
// poison NaN (0x7fe0dead) until the wgmma.wait_group that retires the group, which writes
// the results. The rules are the PTX ISA's (wgmma.fence, wgmma.mma_async, wgmma.wait_group),
// decided on the registers each instruction and each access actually touches at run time
// (addresses), never on names:
//   - "Accessing the accumulator register or the input registers containing fragments of
//     matrix A of a wgmma.mma_async instruction without first performing a wgmma.wait_group
//     instruction that waits on a wgmma-group including that wgmma.mma_async instruction is
//     an undefined behavior": an ordinary read or write of an element of a pending wgmma's
//     accumulator (or of its A fragment, RS form) is a launch error at the access, naming
//     the thread, the array, the register and the statement's builder path. The source
//     lowering (source_lowering.h) routes element accesses through Access() below; an
//     access that passes a whole (sub-)array on (to a wgmma, or to a helper) is not an
//     access of its registers, so chaining through helpers of any parameter names is fine.
//   - "... except when these are accumulator register accesses across multiple
//     wgmma.mma_async instructions of the same shape. In that case, ordering is guaranteed
//     by default": a wgmma of the same shape (m64nNk16, the same N) on exactly the registers
//     of a pending one, in the same group or a later one, chains on its result (the usual
//     k-loop; CUTLASS's two groups in flight); a wgmma whose accumulator overlaps a pending
//     one's registers otherwise (another N, another start) is a launch error, and so is an
//     A fragment (RS) that is a pending wgmma's accumulator.
//   - "The wgmma.fence instruction must be used ... before the first wgmma.mma_async
//     operation in a warpgroup [and] between a register access by a thread in the
//     warpgroup and any wgmma.mma_async instruction that accesses the same registers, either
//     as accumulator or input register containing fragments of matrix A": a wgmma whose
//     accumulator or A fragment ordinary code accessed since the thread's last wgmma.fence
//     (or with no wgmma.fence before it at all) is a launch error saying what is missing.
//     (MmaGroup starts with a wgmma.fence.)
//   - an access the lowering cannot see (through a pointer to the array, or under a name
//     no wgmma takes) reads the NaN; a write there is a launch error at the retiring wait
//     (or at the next wgmma on the same accumulator), naming the register.
//   - not detected: shared memory changed between issue and wait (the emulation has
//     already read it), and a thread exiting with groups pending.
// Misuse that fails the launch, naming block, thread and instruction: descriptors, scale-d,
// transposes or N differing across the warpgroup; a warp missing from any warpgroup-wide
// instruction (the exchange); wait_group N > 7; a descriptor with a nonzero base offset (not
// emulated: tiles start on their swizzle pattern's boundary); an operand element outside the
// block's shared memory; setmaxnreg counts outside 24..256, not a multiple of 8 or not the
// same across the warpgroup. commit_group with nothing pending commits an empty group.
// setmaxnreg does no register accounting on the host (there is no register file).
#ifndef WARPTRACE_JIT_HOST_WGMMA_HOST_H_
#define WARPTRACE_JIT_HOST_WGMMA_HOST_H_

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace warptrace_host {
namespace wgmma {

inline constexpr unsigned long long kWindowBytes = 1ull << 18;
inline constexpr unsigned long long kPageBytes = 4096;
inline constexpr unsigned int kPoison = 0x7fe0deadu;
inline constexpr unsigned int kWarpgroup = WARPTRACE_HOST_GROUP_WARPGROUP;

// Fails the launch for the calling thread (the runtime prefixes block and thread).
[[noreturn]] inline void Fail(const char* format, ...) __attribute__((format(printf, 1, 2)));
WARPTRACE_HOST_OWN_FN inline void Fail(const char* format, ...) {
  char message[2048];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  WARPTRACE_HOST_RT(fail)(Fiber(), message);
  __builtin_unreachable();
}

// ---- The shared-memory window ----

struct Window {
  const char* origin;         // window address 0
  const char* dynamic_begin;  // the dynamic area: [dynamic_begin, dynamic_end)
  const char* dynamic_end;
  unsigned long long static_window;  // the window address of the static area
  const char* static_begin;
};

WARPTRACE_HOST_OWN_FN inline Window CurrentWindow() {
  const WarptraceHostThread& t = Current();
  Window w;
  w.dynamic_begin = static_cast<const char*>(t.dynamic_shared);
  w.dynamic_end = w.dynamic_begin + t.dynamic_shared_bytes;
  w.origin = reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(w.dynamic_begin) &
                                           ~static_cast<uintptr_t>(kPageBytes - 1));
  const unsigned long long dynamic_top = static_cast<unsigned long long>(w.dynamic_end - w.origin);
  w.static_window = (dynamic_top + kPageBytes - 1) & ~(kPageBytes - 1);
  w.static_begin = static_cast<const char*>(t.static_shared);
  return w;
}

// The window address of `p`; -1 when it is in neither area.
WARPTRACE_HOST_OWN_FN inline long long WindowAddress(const Window& w, const void* p) {
  const char* c = static_cast<const char*>(p);
  if (c >= w.dynamic_begin && c < w.dynamic_end) return c - w.origin;
  if (c >= w.static_begin && c < w.static_begin + WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES) {
    return static_cast<long long>(w.static_window) + (c - w.static_begin);
  }
  return -1;
}

// The host pointer of the `bytes` at window address `a`; null unless all are in one area.
WARPTRACE_HOST_OWN_FN inline const char* WindowPointer(const Window& w, unsigned long long a,
                                                       unsigned int bytes) {
  const unsigned long long dynamic_lo = static_cast<unsigned long long>(w.dynamic_begin - w.origin);
  const unsigned long long dynamic_hi = static_cast<unsigned long long>(w.dynamic_end - w.origin);
  if (a >= dynamic_lo && a + bytes <= dynamic_hi) return w.origin + a;
  if (a >= w.static_window &&
      a + bytes <= w.static_window + WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES) {
    return w.static_begin + (a - w.static_window);
  }
  return nullptr;
}

// ---- Descriptors ----

struct Desc {
  unsigned long long start, lbo, sbo;  // bytes
  unsigned int base_offset;
  int swizzle;  // WARPTRACE_SWIZZLE_*: 0 none, 1 128B, 2 64B, 3 32B
};

WARPTRACE_HOST_OWN_FN inline Desc Decode(unsigned long long d) {
  return {(d & 0x3fffull) << 4, ((d >> 16) & 0x3fffull) << 4, ((d >> 32) & 0x3fffull) << 4,
          static_cast<unsigned int>((d >> 49) & 7u), static_cast<int>(d >> 62)};
}

WARPTRACE_HOST_OWN_FN inline const char* SwizzleName(int swizzle) {
  static const char* const kNames[] = {"no swizzle", "128B swizzle", "64B swizzle",
                                       "32B swizzle"};
  return kNames[swizzle & 3];
}

// Bytes per row of the swizzle atom: 128, 64, 32 (16 without a swizzle: one core-matrix row).
WARPTRACE_HOST_OWN_FN inline unsigned long long RowBytes(int swizzle) {
  return swizzle == 1 ? 128 : swizzle == 2 ? 64 : swizzle == 3 ? 32 : 16;
}

// CuTe Swizzle<b,4,3> on a byte address: bits [4, 4+b) ^= bits [7, 7+b).
WARPTRACE_HOST_OWN_FN inline unsigned long long Swizzle(unsigned long long a, int swizzle) {
  if (swizzle == 0) return a;
  const unsigned long long mask = swizzle == 1 ? 7 : swizzle == 2 ? 3 : 1;
  return a ^ (((a >> 7) & mask) << 4);
}

// The byte offset (before the swizzle) of element (mn, k) of an MN x 16 bf16 operand in the
// canonical layout (CuTe make_gmma_desc; PTX ISA "Shared Memory Matrix Layout").
WARPTRACE_HOST_OWN_FN inline unsigned long long CanonicalOffset(unsigned int mn, unsigned int k,
                                                                const Desc& d, bool mn_major) {
  const unsigned long long row = RowBytes(d.swizzle);
  if (!mn_major) {
    // ((8,m),(8,2)) elements: rows of a core matrix `row` bytes apart, core matrices SBO
    // apart along MN; along K: the two 8-element halves LBO apart (no swizzle) or adjacent.
    const unsigned long long k_part = d.swizzle == 0 ? (k % 8) * 2 + (k / 8) * d.lbo : k * 2;
    return (mn % 8) * row + (mn / 8) * d.sbo + k_part;
  }
  if (d.swizzle == 0) {
    // ((8,m),(8,k)): 8 MN-contiguous elements per 16 bytes, 8 k rows 16 bytes apart; SBO
    // between core matrices along MN, LBO along K.
    return (mn % 8) * 2 + (mn / 8) * d.sbo + (k % 8) * 16 + (k / 8) * d.lbo;
  }
  // ((8,W,m),(8,k)), W = row/16: an atom is 8 k rows of `row` bytes; LBO between atoms
  // along MN, SBO along K.
  const unsigned int w = static_cast<unsigned int>(row / 16);
  return (mn % 8) * 2 + ((mn / 8) % w) * 16 + (mn / (8 * w)) * d.lbo + (k % 8) * row +
         (k / 8) * d.sbo;
}

WARPTRACE_HOST_OWN_FN inline unsigned long long Descriptor(const void* smem, unsigned int lbo,
                                                           unsigned int sbo, int swizzle) {
  const char* what = "warptrace_wgmma_desc";
  const long long a = WindowAddress(CurrentWindow(), smem);
  if (a < 0) {
    Fail("%s: %p is not in this block's shared memory (wgmma operands must be)", what, smem);
  }
  if (static_cast<unsigned long long>(a) >= kWindowBytes) {
    Fail("%s: %p is at shared-memory address 0x%llx, past the 256 KiB a descriptor addresses",
         what, smem, static_cast<unsigned long long>(a));
  }
  if (a % 16 != 0 || lbo % 16 != 0 || sbo % 16 != 0 || lbo >= kWindowBytes ||
      sbo >= kWindowBytes) {
    Fail("%s: the start address (0x%llx), LBO (%u) and SBO (%u) must be multiples of 16 "
         "bytes below 256 KiB (the descriptor keeps bits 17-4 of each)",
         what, static_cast<unsigned long long>(a), lbo, sbo);
  }
  if (swizzle < 0 || swizzle > 3) {
    Fail("%s: swizzle %d is not a WARPTRACE_SWIZZLE_* mode (0 none, 1 128B, 2 64B, 3 32B)",
         what, swizzle);
  }
  return (static_cast<unsigned long long>(a) >> 4) |
         (static_cast<unsigned long long>(lbo >> 4) << 16) |
         (static_cast<unsigned long long>(sbo >> 4) << 32) |
         (static_cast<unsigned long long>(swizzle) << 62);
}

}  // namespace wgmma
}  // namespace warptrace_host

// The TMA boxes and the operand layout check (uses the window, descriptors and Fail above).
#include "wgmma_layout_host.h"

namespace warptrace_host {
namespace wgmma {

// ---- Per-thread asynchronous state ----

struct PendingMma {
  float* d;
  unsigned int count;  // N/2
  bool superseded;     // a later wgmma on the same accumulator took its result
  const char* what;
  const unsigned int* a;  // RS: the A fragment's 4 registers; null for SS
  float result[128];
};

// Bytes [lo, hi) of a thread's registers (its arrays on the fiber's stack).
struct RegisterRange {
  const char* lo;
  const char* hi;
};

struct ThreadState {
  long long launch = 0;  // the launch's clock base: differs at every launch
  WarptraceHostDim block{~0u, ~0u, ~0u};
  std::vector<PendingMma> open;                 // issued, not committed
  std::vector<std::vector<PendingMma>> groups;  // committed, oldest first
  // Registers ordinary code accessed (through Access) since the thread's last wgmma.fence,
  // merged where adjacent; and whether the thread executed a wgmma.fence at all.
  std::vector<RegisterRange> accessed;
  const char* accessed_name = nullptr;  // the array of the first access recorded
  const char* accessed_site = nullptr;  // and its statement
  bool fenced = false;
};

// The calling CUDA thread's state. The fibers of a block run on one worker thread, so a
// worker-thread-local table keyed by the thread's ABI record needs no lock; an entry left by
// an earlier block or launch in the same fiber is reset.
WARPTRACE_HOST_OWN_FN inline ThreadState& State() {
  static thread_local std::unordered_map<const WarptraceHostThread*, ThreadState> states;
  const WarptraceHostThread& t = Current();
  ThreadState& s = states[&t];
  if (s.launch != t.clock->ns_base || s.block.x != t.block_idx.x ||
      s.block.y != t.block_idx.y || s.block.z != t.block_idx.z) {
    s.open.clear();
    s.groups.clear();
    s.accessed.clear();
    s.accessed_name = nullptr;
    s.accessed_site = nullptr;
    s.fenced = false;
    s.launch = t.clock->ns_base;
    s.block = t.block_idx;
  }
  return s;
}

WARPTRACE_HOST_OWN_FN inline bool IsPoison(const float& f) {
  unsigned int bits;
  __builtin_memcpy(&bits, &f, 4);
  return bits == kPoison;
}

// Fails unless every register of `p`'s accumulator still holds the poison.
WARPTRACE_HOST_OWN_FN inline void CheckUntouched(const PendingMma& p, const char* at) {
  for (unsigned int i = 0; i < p.count; ++i) {
    if (IsPoison(p.d[i])) continue;
    unsigned int bits;
    __builtin_memcpy(&bits, &p.d[i], 4);
    Fail("%s: accumulator register d[%u] of a pending %s was written (0x%08x) before the "
         "wgmma.wait_group that retires its group: on a GPU that races with the tensor core "
         "(touch the accumulator only after the wait)",
         at, i, p.what, bits);
  }
}

// Whether [lo, hi) and [p_lo, p_hi) share a byte.
WARPTRACE_HOST_OWN_FN inline bool Overlaps(const char* lo, const char* hi, const char* p_lo,
                                           const char* p_hi) {
  return lo < p_hi && p_lo < hi;
}

// Records that ordinary code accessed [lo, hi) (for the wgmma.fence rule), merging it with
// an adjacent or overlapping range (an element loop grows one range).
WARPTRACE_HOST_OWN_FN inline void NoteAccess(ThreadState& s, const char* lo, const char* hi,
                                             const char* name, const char* site) {
  for (RegisterRange& r : s.accessed) {
    if (lo <= r.hi && r.lo <= hi) {
      if (lo < r.lo) r.lo = lo;
      if (hi > r.hi) r.hi = hi;
      return;
    }
  }
  if (s.accessed.empty()) {
    s.accessed_name = name;
    s.accessed_site = site;
  }
  s.accessed.push_back(RegisterRange{lo, hi});
}

// Fails when [lo, hi), an element `name` that ordinary code reads or writes at `site`,
// holds registers of a wgmma of this thread that no wgmma.wait_group retired yet.
WARPTRACE_HOST_OWN_FN inline void CheckElementAccess(const char* lo, const char* hi,
                                                     const char* name, const char* site) {
  ThreadState& s = State();
  auto check = [&](const std::vector<PendingMma>& ops) {
    for (const PendingMma& p : ops) {
      const char* p_lo = reinterpret_cast<const char*>(p.d);
      const char* p_hi = p_lo + p.count * sizeof(float);
      if (!p.superseded && Overlaps(lo, hi, p_lo, p_hi)) {
        Fail("%s: accumulator '%s' is read (or written) while a %s on it is pending (its "
             "register d[%u] of %u): no wgmma.wait_group retired its group yet, so on a GPU "
             "it holds no result (the host backend's poison NaN) and a write races with the "
             "tensor cores; wait for the group first (WaitMmaGroups, "
             "warptrace_wgmma_wait_group)",
             site, name, p.what, static_cast<unsigned int>((lo - p_lo) / sizeof(float)),
             p.count);
      }
      const char* a_lo = reinterpret_cast<const char*>(p.a);
      if (p.a != nullptr && Overlaps(lo, hi, a_lo, a_lo + 4 * sizeof(unsigned int))) {
        Fail("%s: '%s' is read (or written) while a %s holding it as its A fragment (register "
             "a[%u] of 4) is pending: no wgmma.wait_group retired its group yet, and the PTX "
             "ISA makes accessing a pending wgmma's A registers undefined; wait for the "
             "group first (WaitMmaGroups, warptrace_wgmma_wait_group)",
             site, name, p.what, static_cast<unsigned int>((lo - a_lo) / sizeof(unsigned int)));
      }
    }
  };
  for (const std::vector<PendingMma>& group : s.groups) check(group);
  check(s.open);
  NoteAccess(s, lo, hi, name, site);
}

// `name[...]...` in kernel code, at builder path (or file) `site`: the host's source
// lowering (source_lowering.h) wraps each subscript expression of an identifier that some
// wgmma in the translation unit takes as its accumulator or A fragment (over-approximating:
// a name reused in another scope, or a helper's parameter, only costs a check). Decided on
// what the expression is at run time: an element (a scalar) is an access of its registers,
// checked (CheckElementAccess) and noted for the wgmma.fence rule; a (sub-)array is passed on
// as registers (to a wgmma, whose rules are MmaAsync's, or to a helper, whose own accesses
// are checked), not accessed.
template <typename T>
WARPTRACE_HOST_OWN_FN inline T& Access(T& x, const char* name, const char* site) {
  if constexpr (!std::is_array_v<T>) {
    const char* lo = reinterpret_cast<const char*>(&x);
    CheckElementAccess(lo, lo + sizeof(T), name, site);
  }
  return x;
}

// ---- Instructions ----

struct Nothing {
  char unused;
};

WARPTRACE_HOST_OWN_FN inline void Fence() {
  Exchange(kWarpgroup, Nothing{0}, "wgmma.fence.sync.aligned");
  ThreadState& s = State();
  s.fenced = true;
  s.accessed.clear();
  s.accessed_name = nullptr;
  s.accessed_site = nullptr;
}

// The wgmma.fence rule for registers [lo, hi) of the wgmma `what` at `site` (`operand`:
// "accumulator" or "A fragment").
WARPTRACE_HOST_OWN_FN inline void CheckFenced(const ThreadState& s, const char* lo, const char* hi,
                                              const char* what, const char* site,
                                              const char* operand) {
  if (!s.fenced) {
    Fail("%s at %s: no wgmma.fence.sync.aligned before this thread's first wgmma.mma_async; "
         "the PTX ISA requires one before the first wgmma of a warpgroup (and after the "
         "registers it uses were last accessed): call warptrace_wgmma_fence() first (an "
         "MmaGroup starts with one)",
         what, site != nullptr ? site : "?");
  }
  for (const RegisterRange& r : s.accessed) {
    if (!Overlaps(lo, hi, r.lo, r.hi)) continue;
    const char* first = lo > r.lo ? lo : r.lo;
    Fail("%s at %s: its %s register %s[%u] was accessed by ordinary code (first: '%s' at %s) "
         "after the last wgmma.fence: the PTX ISA requires a wgmma.fence between a register "
         "access and a wgmma.mma_async that uses the same registers. Missing: "
         "warptrace_wgmma_fence() after the last access (an MmaGroup starts with one)",
         what, site != nullptr ? site : "?", operand, operand[0] == 'A' ? "a" : "d",
         static_cast<unsigned int>((first - lo) / 4),
         s.accessed_name != nullptr ? s.accessed_name : "?",
         s.accessed_site != nullptr ? s.accessed_site : "?");
  }
}

WARPTRACE_HOST_OWN_FN inline void CommitGroup() {
  Exchange(kWarpgroup, Nothing{0}, "wgmma.commit_group.sync.aligned");
  ThreadState& s = State();
  s.groups.push_back(std::move(s.open));
  s.open.clear();
  WARPTRACE_HOST_SANITIZE_EVENT(WARPTRACE_HOST_EVENT_MMA_COMMIT, 0);
}

WARPTRACE_HOST_OWN_FN inline void Retire(PendingMma& p, const char* what) {
  if (p.superseded) return;
  CheckUntouched(p, what);
  WARPTRACE_HOST_RAW_COPY(p.d, p.result, p.count * sizeof(float));
}

WARPTRACE_HOST_OWN_FN inline void WaitGroup(unsigned int n) {
  const char* what = "wgmma.wait_group.sync.aligned";
  if (n > 7) Fail("%s %u: the group count must be 0..7 (an immediate)", what, n);
  const unsigned int* all = Exchange(kWarpgroup, n, what);
  const unsigned int first = Current().linear_tid / kWarpgroup * kWarpgroup;
  for (unsigned int i = 1; i < kWarpgroup; ++i) {
    if (all[i] != all[0]) {
      Fail("%s: the group count must be the same in every thread of the warpgroup (threads "
           "%u-%u), but thread %u waits for %u where thread %u waits for %u",
           what, first, first + kWarpgroup - 1, first + i, all[i], first, all[0]);
    }
  }
  WARPTRACE_HOST_SANITIZE_EVENT(WARPTRACE_HOST_EVENT_MMA_WAIT, n);
  ThreadState& s = State();
  if (s.groups.size() <= n) return;
  const size_t retire = s.groups.size() - n;
  for (size_t g = 0; g < retire; ++g) {
    for (PendingMma& p : s.groups[g]) Retire(p, what);
  }
  s.groups.erase(s.groups.begin(), s.groups.begin() + static_cast<std::ptrdiff_t>(retire));
}

// What each thread of the warpgroup hands in: its operands, and its share of the decoded
// shared-memory operands (every thread decodes 1/128 of A and of B, so the warpgroup reads
// each element once; the exchange then gives everyone all of them).
struct MmaOperands {
  unsigned long long desc_a, desc_b;
  unsigned int a[4];
  int n, trans_a, trans_b, scale_d, rs;
  unsigned short a_share[8];   // SS: A elements 8p .. 8p+7 of A (64 x 16, index 16 m + k)
  unsigned short b_share[32];  // B elements p N/8 .. of B's transpose (N x 16, index 16 n + k)
  LayoutCheck a_layout, b_layout;  // the shares checked against the TMA boxes they lie in
};

// The operand's layout, checked over the warpgroup: fails in the first thread whose share
// disagrees (with itself, or with the first thread that read a TMA box).
WARPTRACE_HOST_OWN_FN inline void CheckOperandLayout(const MmaOperands* all,
                                                     LayoutCheck MmaOperands::*field,
                                                     unsigned long long raw, bool mn_major,
                                                     const char* what, const char* site,
                                                     const char* operand) {
  const unsigned int position = Current().linear_tid % kWarpgroup;
  const LayoutCheck* first = nullptr;
  for (unsigned int i = 0; i < kWarpgroup; ++i) {
    const LayoutCheck& c = all[i].*field;
    if (c.state == 0) continue;
    if (c.state == 2) {
      if (i == position) {
        FailLayout(c.box, c.first, c.bad, raw, mn_major, what, site, operand);
      }
      return;
    }
    if (first == nullptr) {
      first = &c;
      continue;
    }
    if (c.x0 != first->x0 || c.y0 != first->y0 || c.z != first->z ||
        c.box.tensor != first->box.tensor) {
      if (i == position) {
        FailLayout(c.box, first->first, c.first, raw, mn_major, what, site, operand);
      }
      return;
    }
  }
}

// Fails when the calling thread's `field` differs from position 0's: the first differing
// thread reports it (the others are stopped when the launch fails), so the check costs one
// comparison per thread when all agree.
WARPTRACE_HOST_OWN_FN inline void CheckUniform(const MmaOperands* all, const char* what,
                                               const char* field,
                                               unsigned long long (*get)(const MmaOperands&)) {
  const unsigned int position = Current().linear_tid % kWarpgroup;
  if (get(all[position]) == get(all[0])) return;
  unsigned int i = 1;
  while (get(all[i]) == get(all[0])) ++i;
  if (i != position) return;
  const unsigned int first = Current().linear_tid - position;
  Fail("%s: %s must be the same in every thread of the warpgroup (threads %u-%u), but thread "
       "%u has 0x%llx where thread %u has 0x%llx",
       what, field, first, first + kWarpgroup - 1, first + i, get(all[i]), first,
       get(all[0]));
}

// The bf16 bits of element (mn, k) of the operand `d` describes. Not instrumented in
// sanitize mode: the read is the wgmma's (async proxy), in flight until the wait_group that
// retires its group, and reported so.
WARPTRACE_HOST_OWN_FN inline unsigned short Element(const Window& window, const Desc& d,
                                                    unsigned long long raw, unsigned int mn,
                                                    unsigned int k, bool mn_major, const char* what,
                                                    const char* operand, LayoutCheck* layout) {
  const unsigned long long address =
      Swizzle(d.start + CanonicalOffset(mn, k, d, mn_major), d.swizzle);
  const char* p = WindowPointer(window, address, 2);
  if (p == nullptr) {
    Fail("%s: %s element (%s %u, k %u) of descriptor 0x%016llx (%s-major, %s, LBO %llu, SBO "
         "%llu) is at shared-memory address 0x%llx, outside this block's shared memory",
         what, operand, operand[0] == 'A' ? "m" : "n", mn, k, raw, mn_major ? "MN" : "K",
         SwizzleName(d.swizzle), d.lbo, d.sbo, address);
  }
  CheckElementLayout(*layout, p, mn, k, mn_major);
  WARPTRACE_HOST_ACCESS(p, 2, WARPTRACE_HOST_ACCESS_MMA_READ);
  unsigned short bits;
  __builtin_memcpy(&bits, p, 2);
  return bits;
}

WARPTRACE_HOST_OWN_FN inline Desc CheckedDesc(unsigned long long raw, const char* what,
                                              const char* operand) {
  const Desc d = Decode(raw);
  if (d.base_offset != 0) {
    Fail("%s: %s descriptor 0x%016llx has base offset %u: the host backend emulates base "
         "offset 0 only (swizzled tiles starting on their pattern's 1024/512/256-byte boundary)",
         what, operand, raw, d.base_offset);
  }
  return d;
}

// The operands that must agree across the warpgroup do (else the launch fails).
WARPTRACE_HOST_OWN_FN inline void CheckMmaUniform(const MmaOperands* all, bool rs,
                                                  const char* what) {
  CheckUniform(all, what, "N", [](const MmaOperands& o) { return (unsigned long long)o.n; });
  if (!rs) {
    CheckUniform(all, what, "the A descriptor",
                 [](const MmaOperands& o) { return o.desc_a; });
  }
  CheckUniform(all, what, "the B descriptor", [](const MmaOperands& o) { return o.desc_b; });
  CheckUniform(all, what, "scale-d",
               [](const MmaOperands& o) { return (unsigned long long)o.scale_d; });
  CheckUniform(all, what, "imm-trans-a",
               [](const MmaOperands& o) { return (unsigned long long)o.trans_a; });
  CheckUniform(all, what, "imm-trans-b",
               [](const MmaOperands& o) { return (unsigned long long)o.trans_b; });
}

// The input accumulator of a wgmma on the `count` registers at `d` (A fragment `a`, RS): a
// pending wgmma's result on the same registers of the same shape (which this one
// supersedes: ordered by the ISA), or the registers themselves. Any other overlap with a
// pending wgmma's registers fails.
WARPTRACE_HOST_OWN_FN inline const float* MmaInput(ThreadState& s, float* d, unsigned int count,
                             const unsigned int* a, const char* what) {
  const float* input = d;
  const char* lo = reinterpret_cast<const char*>(d);
  const char* hi = lo + count * sizeof(float);
  const char* a_lo = reinterpret_cast<const char*>(a);
  auto chain = [&](std::vector<PendingMma>& ops) {
    for (PendingMma& q : ops) {
      if (q.superseded) continue;
      const char* q_lo = reinterpret_cast<const char*>(q.d);
      const char* q_hi = q_lo + q.count * sizeof(float);
      if (a != nullptr && Overlaps(a_lo, a_lo + 4 * sizeof(unsigned int), q_lo, q_hi)) {
        Fail("%s: its A fragment is registers of the accumulator of a pending %s that no "
             "wgmma.wait_group retired yet (they hold no result until then); wait for that "
             "group before converting its accumulator into an A fragment",
             what, q.what);
      }
      if (!Overlaps(lo, hi, q_lo, q_hi)) continue;
      if (q.d == d && q.count != count) {
        Fail("%s: its accumulator is the pending accumulator of a %s (%u registers, not %u) "
             "that no wgmma.wait_group retired yet: only wgmma.mma_async of the same shape "
             "are ordered on one accumulator (PTX ISA, wgmma.fence); wait for that group "
             "first",
             what, q.what, q.count, count);
      }
      if (q.d != d) {
        Fail("%s: its accumulator (%u registers) overlaps the pending accumulator of a %s "
             "(%u registers, %+lld registers away) that no wgmma.wait_group retired yet: "
             "only wgmma.mma_async of the same shape on the same registers are ordered (PTX "
             "ISA, wgmma.fence); wait for that group first",
             what, count, q.what, q.count,
             static_cast<long long>((q_lo - lo) / static_cast<long long>(sizeof(float))));
      }
      CheckUntouched(q, what);
      q.superseded = true;
      input = q.result;
    }
  };
  for (std::vector<PendingMma>& group : s.groups) chain(group);
  chain(s.open);
  return input;
}

// Decodes the calling thread's share of the shared-memory operands into `mine` (its
// position's 8 elements of A unless RS, and `b_per_thread` of B's transpose).
WARPTRACE_HOST_OWN_FN inline void DecodeShares(MmaOperands& mine, unsigned int position,
                                               unsigned int b_per_thread, const char* what) {
  const Window window = CurrentWindow();
  if (!mine.rs) {
    const Desc da = CheckedDesc(mine.desc_a, what, "A");
    for (unsigned int e = 0; e < 8; ++e) {
      const unsigned int index = 8 * position + e;
      mine.a_share[e] = Element(window, da, mine.desc_a, index / 16, index % 16,
                                mine.trans_a != 0, what, "A", &mine.a_layout);
    }
  }
  const Desc db = CheckedDesc(mine.desc_b, what, "B");
  for (unsigned int e = 0; e < b_per_thread; ++e) {
    const unsigned int index = b_per_thread * position + e;
    mine.b_share[e] = Element(window, db, mine.desc_b, index / 16, index % 16,
                              mine.trans_b != 0, what, "B", &mine.b_layout);
  }
}

// Not instrumented in sanitize mode (sanitize_host.h): its arithmetic on the exchanged
// operands and its own stack would be most of a sanitized GEMM's time; the shared-memory
// operand reads are Element's, which is instrumented (and not inlined here).
WARPTRACE_HOST_UNINSTRUMENTED inline void MmaAsync(
    float* d, int n, unsigned long long desc_a, const unsigned int* a,
    unsigned long long desc_b, int trans_a, int trans_b, int scale_d, const char* what,
    const char* site = nullptr) {
  const bool rs = a != nullptr;
  const unsigned int position = Current().linear_tid % kWarpgroup;
  const unsigned int b_per_thread = static_cast<unsigned int>(n) / 8;  // N x 16 / 128
  MmaOperands mine{desc_a, desc_b, {0, 0, 0, 0}, n, trans_a, trans_b, scale_d != 0, rs,
                   {},     {},     {},           {}};
  if (rs) __builtin_memcpy(mine.a, a, sizeof mine.a);
  DecodeShares(mine, position, b_per_thread, what);
  const MmaOperands* all = Exchange(kWarpgroup, mine, what);
  CheckMmaUniform(all, rs, what);
  if (!rs) CheckOperandLayout(all, &MmaOperands::a_layout, desc_a, trans_a != 0, what, site, "A");
  CheckOperandLayout(all, &MmaOperands::b_layout, desc_b, trans_b != 0, what, site, "B");

  const unsigned int warp = position / 32, lane = position % 32, g = lane >> 2, tq = lane & 3;
  // A's rows 16w + g (h = 0) and 16w + g + 8 (h = 1), all 16 k.
  float av[2][16];
  for (unsigned int h = 0; h < 2; ++h) {
    const unsigned int row = 16 * warp + g + 8 * h;
    for (unsigned int k = 0; k < 16; ++k) {
      unsigned short bits;
      if (rs) {
        // Element i of a thread's fragment: row 16w + g + 8*((i>>1)&1), k 8*(i>>2) + 2t +
        // (i&1), in register i/2 (even i in the low half). So (row, k) is held by lane
        // 4g + (k%8)/2 of the same warp, element 4*(k/8) + 2h + k%2.
        const MmaOperands& holder = all[warp * 32 + 4 * g + (k % 8) / 2];
        const unsigned int element = 4 * (k / 8) + 2 * h + k % 2;
        const unsigned int reg = holder.a[element / 2];
        bits = static_cast<unsigned short>(element % 2 == 0 ? reg & 0xffffu : reg >> 16);
      } else {
        const unsigned int index = 16 * row + k;
        bits = all[index / 8].a_share[index % 8];
      }
      av[h][k] = BfloatBitsToFloat(bits);
    }
  }
  // B's columns 8j + 2t + q for j < N/8, q < 2, all 16 k, as bv[k][j] = (b(j,0), b(j,1),
  // b(j,0), b(j,1)): the operand of accumulators 4j .. 4j+3 (below).
  typedef float V4 __attribute__((vector_size(16)));
  // N/8 elements per thread: any N multiple of 8 (not only powers of two).
  V4 bv[16][32];
  for (unsigned int j = 0; j < static_cast<unsigned int>(n) / 8; ++j) {
    const unsigned int index0 = 16 * (8 * j + 2 * tq), index1 = index0 + 16;  // columns
    for (unsigned int k = 0; k < 16; ++k) {
      const float b0 = BfloatBitsToFloat(
          all[(index0 + k) / b_per_thread].b_share[(index0 + k) % b_per_thread]);
      const float b1 = BfloatBitsToFloat(
          all[(index1 + k) / b_per_thread].b_share[(index1 + k) % b_per_thread]);
      bv[k][j] = V4{b0, b1, b0, b1};
    }
  }

  ThreadState& s = State();
  const unsigned int count = static_cast<unsigned int>(n) / 2;
  PendingMma p;
  p.d = d;
  p.count = count;
  p.superseded = false;
  p.what = what;
  p.a = a;
  {
    const char* lo = reinterpret_cast<const char*>(d);
    CheckFenced(s, lo, lo + count * sizeof(float), what, site, "accumulator");
    if (rs) {
      const char* a_lo = reinterpret_cast<const char*>(a);
      CheckFenced(s, a_lo, a_lo + 4 * sizeof(unsigned int), what, site, "A fragment");
    }
  }
  const float* input = MmaInput(s, d, count, a, what);

  // d_i = 4j + 2h + q (j = i>>2, h = (i>>1)&1, q = i&1) is row h, column 2j + q: the four
  // accumulators 4j .. 4j+3 take (a_h0, a_h0, a_h1, a_h1) * (b_j0, b_j1, b_j0, b_j1) at each
  // k, each lane a separate fp32 multiply and add, in k order (k outermost).
  V4 acc[32];
  if (scale_d != 0) {
    WARPTRACE_HOST_RAW_COPY(acc, input, count * sizeof(float));
  } else {
    for (unsigned int j = 0; j < count / 4; ++j) acc[j] = V4{0.0f, 0.0f, 0.0f, 0.0f};
  }
  for (unsigned int k = 0; k < 16; ++k) {
    const V4 a = {av[0][k], av[0][k], av[1][k], av[1][k]};
    for (unsigned int j = 0; j < count / 4; ++j) acc[j] += a * bv[k][j];
  }
  WARPTRACE_HOST_RAW_COPY(p.result, acc, count * sizeof(float));
  for (unsigned int i = 0; i < count; ++i) __builtin_memcpy(&d[i], &kPoison, 4);
  s.open.push_back(p);
}

WARPTRACE_HOST_OWN_FN inline void SetMaxNReg(unsigned int regs, bool inc) {
  const char* what = inc ? "setmaxnreg.inc.sync.aligned.u32" : "setmaxnreg.dec.sync.aligned.u32";
  if (regs < 24 || regs > 256 || regs % 8 != 0) {
    Fail("%s %u: the register count must be in 24..256 and a multiple of 8", what, regs);
  }
  const unsigned int* all = Exchange(kWarpgroup, regs, what);
  const unsigned int first = Current().linear_tid / kWarpgroup * kWarpgroup;
  for (unsigned int i = 1; i < kWarpgroup; ++i) {
    if (all[i] != all[0]) {
      Fail("%s: the register count must be the same in every thread of the warpgroup "
           "(threads %u-%u), but thread %u asks for %u where thread %u asks for %u",
           what, first, first + kWarpgroup - 1, first + i, all[i], first, all[0]);
    }
  }
}

}  // namespace wgmma
}  // namespace warptrace_host

// The shared-memory window address of `p` (see above); fails the launch for a pointer that
// is not in the block's shared memory.
WARPTRACE_HOST_OWN_FN inline size_t __cvta_generic_to_shared(const void* p) {
  const long long a =
      ::warptrace_host::wgmma::WindowAddress(::warptrace_host::wgmma::CurrentWindow(), p);
  if (a < 0) {
    ::warptrace_host::wgmma::Fail("__cvta_generic_to_shared: %p is not in this block's shared "
                                  "memory",
                                  p);
  }
  return static_cast<size_t>(a);
}

#endif  // WARPTRACE_JIT_HOST_WGMMA_HOST_H_
