// sm_90a warpgroup tensor-core instructions (wgmma) and register reallocation (setmaxnreg):
// one source for the GPU (inline PTX; NVRTC --gpu-architecture=sm_90a) and the host backend
// (jit/host/device/wgmma_host.h, the emulation: exact layouts, fp32 arithmetic in a documented
// order, misuse a launch error). Included by warptrace_primitives.cuh.
//
// A warpgroup is 4 consecutive warps (threads 128i .. 128i+127 of the block); every thread
// of it executes each instruction below (`.sync.aligned`), with the same descriptors, N,
// transposes and scale-d.
//
//   __shared__ __align__(1024) __nv_bfloat16 sA[64 * 64], sB[128 * 64];  // 128B-swizzled tiles
//   float acc[64];                                                        // m64n128: N/2 regs
//   const unsigned long long da = warptrace_wgmma_desc(sA, 16, 1024, WARPTRACE_SWIZZLE_128B);
//   const unsigned long long db = warptrace_wgmma_desc(sB, 16, 1024, WARPTRACE_SWIZZLE_128B);
//   warptrace_wgmma_fence();                          // before the first wgmma (and after
//   warptrace_wgmma_fence_operand(acc);               //  the registers were written)
//   for (int k = 0; k < 4; ++k)                       // k16 steps inside the 128-byte rows:
//     warptrace_wgmma_mma_async_bf16_ss<128>(acc, da + 2 * k, db + 2 * k, k > 0);  // +32 B
//   warptrace_wgmma_commit_group();
//   warptrace_wgmma_wait_group(0);                    // acc holds D from here on
//   warptrace_wgmma_fence_operand(acc);
//
// Descriptors (PTX ISA, "Asynchronous Warpgroup Level Matrix Shared Memory Layout: Matrix
// Descriptor"): bits 13-0 start address, 29-16 leading-dimension byte offset (LBO), 45-32
// stride-dimension byte offset (SBO), each (x & 0x3FFFF) >> 4; bits 51-49 base offset (0
// here: swizzled tiles start on their pattern's boundary, 1024 / 512 / 256 bytes for
// 128B / 64B / 32B); bits 63-62 the swizzle (the enum below).
//   warptrace_wgmma_desc(smem, lbo_bytes, sbo_bytes, swizzle)
// Canonical layouts (byte offset of element (mn, k) of the MN x 16 operand before the swizzle;
// A is M x K, B is given as its N x K transpose; bf16, so a 16-byte chunk holds 8 elements):
//   K-major, no swizzle: (mn%8)*16 + (mn/8)*SBO + (k%8)*2 + (k/8)*LBO   (8x16-byte cores)
//   K-major, S-byte swizzle (S = 128, 64, 32): (mn%8)*S + (mn/8)*SBO + k*2  (LBO unused)
//   MN-major, no swizzle: (mn%8)*2 + (mn/8)*SBO + (k%8)*16 + (k/8)*LBO
//   MN-major, S-byte swizzle, W = S/16: (mn%8)*2 + ((mn/8)%W)*16 + (mn/(8W))*LBO
//                                        + (k%8)*S + (k/8)*SBO
// and the swizzle XORs address bits [4, 4+b) with bits [7, 7+b), b = 3, 2, 1 for 128B, 64B,
// 32B (CuTe Swizzle<b,4,3>) on the shared-memory address itself (the start address included).
//
// Instructions:
//   warptrace_wgmma_fence()                  wgmma.fence.sync.aligned
//   warptrace_wgmma_commit_group()           wgmma.commit_group.sync.aligned
//   warptrace_wgmma_wait_group(n)            wgmma.wait_group.sync.aligned n, n in 0..7
//   warptrace_wgmma_mma_async_bf16_ss<N, TransA = 0, TransB = 0>(d, desc_a, desc_b, scale_d)
//   warptrace_wgmma_mma_async_bf16_rs<N, TransB = 0>(d, a, desc_b, scale_d)
//       wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16, N any multiple of 8 in 8..256
//       (as the PTX ISA allows for bf16; a static_assert rejects others), imm-scale-a =
//       imm-scale-b = 1; the template parameters in PTX's operand order (imm-trans-a, then
//       imm-trans-b; the RS form has no trans-a): 1 means the operand is MN-major;
//       scale_d 0: D = A*B, nonzero: D += A*B. d: N/2 f32 registers, either flat
//       (float d[N/2]) or two-dimensional as CUTLASS-style code holds them (float
//       d[N/16][8], or any float d[R][C] with R*C = N/2: the same registers in row-major
//       order, d[r][c] being register r*C + c), register i holding
//       D(16w + g + 8*((i>>1)&1), 8*(i>>2) + 2t + (i&1)) for the thread's warp w in the
//       warpgroup, g = lane>>2, t = lane&3. RS: a[j] holds A's bf16 elements 2j (low half)
//       and 2j+1 of A(16w + g + 8*((i>>1)&1), 8*(i>>2) + 2t + (i&1)), element i.
//   warptrace_wgmma_fence_operand(d)          keeps the compiler from moving accesses of d
//                                             (flat or two-dimensional) across the
//                                             asynchronous wgmma (CUTLASS's
//                                             warpgroup_fence_operand); a no-op on the host
//   warptrace_setmaxnreg_inc<R>() / _dec<R>()  setmaxnreg.{inc,dec}.sync.aligned.u32 R,
//                                             R in 24..256, a multiple of 8 (static_assert)
//   warptrace_setmaxnreg_inc(r) / _dec(r)     the same with a run-time count (a switch over
//                                             the legal immediates; any other traps)
//
// Targets: everything but warptrace_wgmma_desc exists only on sm_90a (NVRTC defines
// __CUDA_ARCH_FEAT_SM90_ALL for --gpu-architecture=sm_90a). A kernel using them compiled for
// another architecture fails to compile with a static_assert saying so.
#ifndef WARPTRACE_WGMMA_SM90_CUH_
#define WARPTRACE_WGMMA_SM90_CUH_

// The descriptor's bits 63-62.
enum {
  WARPTRACE_SWIZZLE_NONE = 0,
  WARPTRACE_SWIZZLE_128B = 1,
  WARPTRACE_SWIZZLE_64B = 2,
  WARPTRACE_SWIZZLE_32B = 3
};

#if defined(WARPTRACE_HOST_BACKEND)
#define WARPTRACE_WGMMA_FN inline
#else
#define WARPTRACE_WGMMA_FN __device__ __forceinline__
#endif

// The instruction's name for N (messages on the host, the PTX opcode on the GPU).
template <int N>
struct WarptraceWgmmaShape {
  static_assert(N >= 8 && N <= 256 && N % 8 == 0,
                "wgmma m64nNk16 bf16: N must be a multiple of 8 from 8 to 256");
};
// Every N the PTX ISA allows for bf16 (X-macro: X(8) X(16) ... X(256)).
#define WARPTRACE_WGMMA_EACH_N(X)                                                          \
  X(8) X(16) X(24) X(32) X(40) X(48) X(56) X(64) X(72) X(80) X(88) X(96) X(104) X(112)   \
  X(120) X(128) X(136) X(144) X(152) X(160) X(168) X(176) X(184) X(192) X(200) X(208)    \
  X(216) X(224) X(232) X(240) X(248) X(256)
#define WARPTRACE_WGMMA_SHAPE(N_)                                                         \
  template <>                                                                            \
  struct WarptraceWgmmaShape<N_> {                                                       \
    static constexpr const char* kSs =                                                   \
        "wgmma.mma_async.sync.aligned.m64n" #N_ "k16.f32.bf16.bf16 (A and B descriptors)"; \
    static constexpr const char* kRs =                                                   \
        "wgmma.mma_async.sync.aligned.m64n" #N_ "k16.f32.bf16.bf16 (A in registers)";     \
  };
WARPTRACE_WGMMA_EACH_N(WARPTRACE_WGMMA_SHAPE)
#undef WARPTRACE_WGMMA_SHAPE
#undef WARPTRACE_WGMMA_EACH_N

// A two-dimensional accumulator float[R][C] as the flat float[N/2] it is.
template <int N, int R, int C>
struct WarptraceWgmmaAccumulator {
  static_assert(R * C == N / 2,
                "wgmma m64nNk16: a two-dimensional accumulator float[R][C] must hold N/2 "
                "registers (R*C == N/2, e.g. float[N/16][8])");
  typedef float Flat[N / 2];
};

template <unsigned Regs>
struct WarptraceSetmaxnregCount {
  static_assert(Regs >= 24 && Regs <= 256 && Regs % 8 == 0,
                "setmaxnreg: the register count must be in 24..256 and a multiple of 8");
  static constexpr unsigned kValue = Regs;
};

#if defined(WARPTRACE_HOST_BACKEND)

inline unsigned long long warptrace_wgmma_desc(const void* smem, unsigned lbo_bytes,
                                               unsigned sbo_bytes, int swizzle) {
  return ::warptrace_host::wgmma::Descriptor(smem, lbo_bytes, sbo_bytes, swizzle);
}
inline void warptrace_wgmma_fence() { ::warptrace_host::wgmma::Fence(); }
inline void warptrace_wgmma_commit_group() { ::warptrace_host::wgmma::CommitGroup(); }
inline void warptrace_wgmma_wait_group(unsigned n) { ::warptrace_host::wgmma::WaitGroup(n); }
// `site` (host only): the caller's file, i.e. the builder path of the raw statement (the
// emitter's #line directives), for the layout check against the TMA copies.
template <int N, int TransA = 0, int TransB = 0>
inline void warptrace_wgmma_mma_async_bf16_ss(float (&d)[N / 2], unsigned long long desc_a,
                                              unsigned long long desc_b, int scale_d,
                                              const char* site = __builtin_FILE()) {
  static_assert(TransA == 0 || TransA == 1, "wgmma: TransA must be 0 or 1");
  static_assert(TransB == 0 || TransB == 1, "wgmma: TransB must be 0 or 1");
  ::warptrace_host::wgmma::MmaAsync(d, N, desc_a, nullptr, desc_b, TransA, TransB, scale_d,
                                    WarptraceWgmmaShape<N>::kSs, site);
}
template <int N, int TransB = 0>
inline void warptrace_wgmma_mma_async_bf16_rs(float (&d)[N / 2], const unsigned (&a)[4],
                                              unsigned long long desc_b, int scale_d,
                                              const char* site = __builtin_FILE()) {
  static_assert(TransB == 0 || TransB == 1, "wgmma: TransB must be 0 or 1");
  ::warptrace_host::wgmma::MmaAsync(d, N, 0, a, desc_b, 0, TransB, scale_d,
                                    WarptraceWgmmaShape<N>::kRs, site);
}
template <int N, int TransA = 0, int TransB = 0, int R, int C>
inline void warptrace_wgmma_mma_async_bf16_ss(float (&d)[R][C], unsigned long long desc_a,
                                              unsigned long long desc_b, int scale_d,
                                              const char* site = __builtin_FILE()) {
  warptrace_wgmma_mma_async_bf16_ss<N, TransA, TransB>(
      reinterpret_cast<typename WarptraceWgmmaAccumulator<N, R, C>::Flat&>(d), desc_a, desc_b,
      scale_d, site);
}
template <int N, int TransB = 0, int R, int C>
inline void warptrace_wgmma_mma_async_bf16_rs(float (&d)[R][C], const unsigned (&a)[4],
                                              unsigned long long desc_b, int scale_d,
                                              const char* site = __builtin_FILE()) {
  warptrace_wgmma_mma_async_bf16_rs<N, TransB>(
      reinterpret_cast<typename WarptraceWgmmaAccumulator<N, R, C>::Flat&>(d), a, desc_b,
      scale_d, site);
}
template <int Count>
inline void warptrace_wgmma_fence_operand(float (&)[Count]) {}
template <int R, int C>
inline void warptrace_wgmma_fence_operand(float (&)[R][C]) {}
inline void warptrace_setmaxnreg_inc(unsigned regs) {
  ::warptrace_host::wgmma::SetMaxNReg(regs, true);
}
inline void warptrace_setmaxnreg_dec(unsigned regs) {
  ::warptrace_host::wgmma::SetMaxNReg(regs, false);
}
template <unsigned Regs>
inline void warptrace_setmaxnreg_inc() {
  warptrace_setmaxnreg_inc(WarptraceSetmaxnregCount<Regs>::kValue);
}
template <unsigned Regs>
inline void warptrace_setmaxnreg_dec() {
  warptrace_setmaxnreg_dec(WarptraceSetmaxnregCount<Regs>::kValue);
}

#else  // the GPU

WARPTRACE_WGMMA_FN unsigned long long warptrace_wgmma_desc(const void* smem,
                                                           unsigned lbo_bytes,
                                                           unsigned sbo_bytes, int swizzle) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  return static_cast<unsigned long long>((address & 0x3FFFFu) >> 4) |
         (static_cast<unsigned long long>((lbo_bytes & 0x3FFFFu) >> 4) << 16) |
         (static_cast<unsigned long long>((sbo_bytes & 0x3FFFFu) >> 4) << 32) |
         (static_cast<unsigned long long>(swizzle & 3) << 62);
}

template <int Count>
WARPTRACE_WGMMA_FN void warptrace_wgmma_fence_operand(float (&d)[Count]) {
#pragma unroll
  for (int i = 0; i < Count; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int R, int C>
WARPTRACE_WGMMA_FN void warptrace_wgmma_fence_operand(float (&d)[R][C]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int c = 0; c < C; ++c) asm volatile("" : "+f"(d[r][c])::"memory");
  }
}

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)

// Not sm_90a: every use is a compile error (templates, so that merely including this header
// compiles for any architecture).
template <int>
struct WarptraceNeedsSm90a {
  static constexpr bool kValue = false;
};
#define WARPTRACE_NEEDS_SM90A(T)                                                         \
  static_assert(WarptraceNeedsSm90a<T>::kValue,                                          \
                "wgmma and setmaxnreg need sm_90a: compile with --gpu-architecture=sm_90a " \
                "(they do not exist on plain sm_90 or on other architectures)")
template <int Unused = 0>
WARPTRACE_WGMMA_FN void warptrace_wgmma_fence() {
  WARPTRACE_NEEDS_SM90A(Unused);
}
template <int Unused = 0>
WARPTRACE_WGMMA_FN void warptrace_wgmma_commit_group() {
  WARPTRACE_NEEDS_SM90A(Unused);
}
template <int Unused = 0>
WARPTRACE_WGMMA_FN void warptrace_wgmma_wait_group(unsigned) {
  WARPTRACE_NEEDS_SM90A(Unused);
}
template <int N, int TransA = 0, int TransB = 0>
WARPTRACE_WGMMA_FN void warptrace_wgmma_mma_async_bf16_ss(float (&)[N / 2], unsigned long long,
                                                          unsigned long long, int) {
  WARPTRACE_NEEDS_SM90A(N);
}
template <int N, int TransB = 0>
WARPTRACE_WGMMA_FN void warptrace_wgmma_mma_async_bf16_rs(float (&)[N / 2], const unsigned (&)[4],
                                                          unsigned long long, int) {
  WARPTRACE_NEEDS_SM90A(N);
}
template <int N, int TransA = 0, int TransB = 0, int R, int C>
WARPTRACE_WGMMA_FN void warptrace_wgmma_mma_async_bf16_ss(float (&)[R][C], unsigned long long,
                                                          unsigned long long, int) {
  WARPTRACE_NEEDS_SM90A(N);
}
template <int N, int TransB = 0, int R, int C>
WARPTRACE_WGMMA_FN void warptrace_wgmma_mma_async_bf16_rs(float (&)[R][C], const unsigned (&)[4],
                                                          unsigned long long, int) {
  WARPTRACE_NEEDS_SM90A(N);
}
template <unsigned Regs>
WARPTRACE_WGMMA_FN void warptrace_setmaxnreg_inc() {
  WARPTRACE_NEEDS_SM90A(static_cast<int>(Regs));
}
template <unsigned Regs>
WARPTRACE_WGMMA_FN void warptrace_setmaxnreg_dec() {
  WARPTRACE_NEEDS_SM90A(static_cast<int>(Regs));
}
template <int Unused = 0>
WARPTRACE_WGMMA_FN void warptrace_setmaxnreg_inc(unsigned) {
  WARPTRACE_NEEDS_SM90A(Unused);
}
template <int Unused = 0>
WARPTRACE_WGMMA_FN void warptrace_setmaxnreg_dec(unsigned) {
  WARPTRACE_NEEDS_SM90A(Unused);
}
#undef WARPTRACE_NEEDS_SM90A

#else  // sm_90a (or a host compilation pass of nvcc, which never emits these)

WARPTRACE_WGMMA_FN void warptrace_wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
WARPTRACE_WGMMA_FN void warptrace_wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
WARPTRACE_WGMMA_FN void warptrace_wgmma_wait_group(unsigned n) {
  switch (n) {
    case 0: asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); break;
    case 1: asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); break;
    case 2: asm volatile("wgmma.wait_group.sync.aligned 2;" ::: "memory"); break;
    case 3: asm volatile("wgmma.wait_group.sync.aligned 3;" ::: "memory"); break;
    case 4: asm volatile("wgmma.wait_group.sync.aligned 4;" ::: "memory"); break;
    case 5: asm volatile("wgmma.wait_group.sync.aligned 5;" ::: "memory"); break;
    case 6: asm volatile("wgmma.wait_group.sync.aligned 6;" ::: "memory"); break;
    case 7: asm volatile("wgmma.wait_group.sync.aligned 7;" ::: "memory"); break;
    default: __trap();  // not an instruction: the host backend reports it by name
  }
}

// The accumulator operand lists for R = N/2 registers: WARPTRACE_WGMMA_REGS<R> is
// "%0, %1, ..., %<R-1>" and WARPTRACE_WGMMA_DS<R> is "+f"(d[0]), ..., four at a time.
#define WARPTRACE_WGMMA_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define WARPTRACE_WGMMA_REGS4 "%0, %1, %2, %3"
#define WARPTRACE_WGMMA_DS4 WARPTRACE_WGMMA_D4(0)
#define WARPTRACE_WGMMA_REGS8 WARPTRACE_WGMMA_REGS4 ", %4, %5, %6, %7"
#define WARPTRACE_WGMMA_DS8 WARPTRACE_WGMMA_DS4, WARPTRACE_WGMMA_D4(4)
#define WARPTRACE_WGMMA_REGS12 WARPTRACE_WGMMA_REGS8 ", %8, %9, %10, %11"
#define WARPTRACE_WGMMA_DS12 WARPTRACE_WGMMA_DS8, WARPTRACE_WGMMA_D4(8)
#define WARPTRACE_WGMMA_REGS16 WARPTRACE_WGMMA_REGS12 ", %12, %13, %14, %15"
#define WARPTRACE_WGMMA_DS16 WARPTRACE_WGMMA_DS12, WARPTRACE_WGMMA_D4(12)
#define WARPTRACE_WGMMA_REGS20 WARPTRACE_WGMMA_REGS16 ", %16, %17, %18, %19"
#define WARPTRACE_WGMMA_DS20 WARPTRACE_WGMMA_DS16, WARPTRACE_WGMMA_D4(16)
#define WARPTRACE_WGMMA_REGS24 WARPTRACE_WGMMA_REGS20 ", %20, %21, %22, %23"
#define WARPTRACE_WGMMA_DS24 WARPTRACE_WGMMA_DS20, WARPTRACE_WGMMA_D4(20)
#define WARPTRACE_WGMMA_REGS28 WARPTRACE_WGMMA_REGS24 ", %24, %25, %26, %27"
#define WARPTRACE_WGMMA_DS28 WARPTRACE_WGMMA_DS24, WARPTRACE_WGMMA_D4(24)
#define WARPTRACE_WGMMA_REGS32 WARPTRACE_WGMMA_REGS28 ", %28, %29, %30, %31"
#define WARPTRACE_WGMMA_DS32 WARPTRACE_WGMMA_DS28, WARPTRACE_WGMMA_D4(28)
#define WARPTRACE_WGMMA_REGS36 WARPTRACE_WGMMA_REGS32 ", %32, %33, %34, %35"
#define WARPTRACE_WGMMA_DS36 WARPTRACE_WGMMA_DS32, WARPTRACE_WGMMA_D4(32)
#define WARPTRACE_WGMMA_REGS40 WARPTRACE_WGMMA_REGS36 ", %36, %37, %38, %39"
#define WARPTRACE_WGMMA_DS40 WARPTRACE_WGMMA_DS36, WARPTRACE_WGMMA_D4(36)
#define WARPTRACE_WGMMA_REGS44 WARPTRACE_WGMMA_REGS40 ", %40, %41, %42, %43"
#define WARPTRACE_WGMMA_DS44 WARPTRACE_WGMMA_DS40, WARPTRACE_WGMMA_D4(40)
#define WARPTRACE_WGMMA_REGS48 WARPTRACE_WGMMA_REGS44 ", %44, %45, %46, %47"
#define WARPTRACE_WGMMA_DS48 WARPTRACE_WGMMA_DS44, WARPTRACE_WGMMA_D4(44)
#define WARPTRACE_WGMMA_REGS52 WARPTRACE_WGMMA_REGS48 ", %48, %49, %50, %51"
#define WARPTRACE_WGMMA_DS52 WARPTRACE_WGMMA_DS48, WARPTRACE_WGMMA_D4(48)
#define WARPTRACE_WGMMA_REGS56 WARPTRACE_WGMMA_REGS52 ", %52, %53, %54, %55"
#define WARPTRACE_WGMMA_DS56 WARPTRACE_WGMMA_DS52, WARPTRACE_WGMMA_D4(52)
#define WARPTRACE_WGMMA_REGS60 WARPTRACE_WGMMA_REGS56 ", %56, %57, %58, %59"
#define WARPTRACE_WGMMA_DS60 WARPTRACE_WGMMA_DS56, WARPTRACE_WGMMA_D4(56)
#define WARPTRACE_WGMMA_REGS64 WARPTRACE_WGMMA_REGS60 ", %60, %61, %62, %63"
#define WARPTRACE_WGMMA_DS64 WARPTRACE_WGMMA_DS60, WARPTRACE_WGMMA_D4(60)
#define WARPTRACE_WGMMA_REGS68 WARPTRACE_WGMMA_REGS64 ", %64, %65, %66, %67"
#define WARPTRACE_WGMMA_DS68 WARPTRACE_WGMMA_DS64, WARPTRACE_WGMMA_D4(64)
#define WARPTRACE_WGMMA_REGS72 WARPTRACE_WGMMA_REGS68 ", %68, %69, %70, %71"
#define WARPTRACE_WGMMA_DS72 WARPTRACE_WGMMA_DS68, WARPTRACE_WGMMA_D4(68)
#define WARPTRACE_WGMMA_REGS76 WARPTRACE_WGMMA_REGS72 ", %72, %73, %74, %75"
#define WARPTRACE_WGMMA_DS76 WARPTRACE_WGMMA_DS72, WARPTRACE_WGMMA_D4(72)
#define WARPTRACE_WGMMA_REGS80 WARPTRACE_WGMMA_REGS76 ", %76, %77, %78, %79"
#define WARPTRACE_WGMMA_DS80 WARPTRACE_WGMMA_DS76, WARPTRACE_WGMMA_D4(76)
#define WARPTRACE_WGMMA_REGS84 WARPTRACE_WGMMA_REGS80 ", %80, %81, %82, %83"
#define WARPTRACE_WGMMA_DS84 WARPTRACE_WGMMA_DS80, WARPTRACE_WGMMA_D4(80)
#define WARPTRACE_WGMMA_REGS88 WARPTRACE_WGMMA_REGS84 ", %84, %85, %86, %87"
#define WARPTRACE_WGMMA_DS88 WARPTRACE_WGMMA_DS84, WARPTRACE_WGMMA_D4(84)
#define WARPTRACE_WGMMA_REGS92 WARPTRACE_WGMMA_REGS88 ", %88, %89, %90, %91"
#define WARPTRACE_WGMMA_DS92 WARPTRACE_WGMMA_DS88, WARPTRACE_WGMMA_D4(88)
#define WARPTRACE_WGMMA_REGS96 WARPTRACE_WGMMA_REGS92 ", %92, %93, %94, %95"
#define WARPTRACE_WGMMA_DS96 WARPTRACE_WGMMA_DS92, WARPTRACE_WGMMA_D4(92)
#define WARPTRACE_WGMMA_REGS100 WARPTRACE_WGMMA_REGS96 ", %96, %97, %98, %99"
#define WARPTRACE_WGMMA_DS100 WARPTRACE_WGMMA_DS96, WARPTRACE_WGMMA_D4(96)
#define WARPTRACE_WGMMA_REGS104 WARPTRACE_WGMMA_REGS100 ", %100, %101, %102, %103"
#define WARPTRACE_WGMMA_DS104 WARPTRACE_WGMMA_DS100, WARPTRACE_WGMMA_D4(100)
#define WARPTRACE_WGMMA_REGS108 WARPTRACE_WGMMA_REGS104 ", %104, %105, %106, %107"
#define WARPTRACE_WGMMA_DS108 WARPTRACE_WGMMA_DS104, WARPTRACE_WGMMA_D4(104)
#define WARPTRACE_WGMMA_REGS112 WARPTRACE_WGMMA_REGS108 ", %108, %109, %110, %111"
#define WARPTRACE_WGMMA_DS112 WARPTRACE_WGMMA_DS108, WARPTRACE_WGMMA_D4(108)
#define WARPTRACE_WGMMA_REGS116 WARPTRACE_WGMMA_REGS112 ", %112, %113, %114, %115"
#define WARPTRACE_WGMMA_DS116 WARPTRACE_WGMMA_DS112, WARPTRACE_WGMMA_D4(112)
#define WARPTRACE_WGMMA_REGS120 WARPTRACE_WGMMA_REGS116 ", %116, %117, %118, %119"
#define WARPTRACE_WGMMA_DS120 WARPTRACE_WGMMA_DS116, WARPTRACE_WGMMA_D4(116)
#define WARPTRACE_WGMMA_REGS124 WARPTRACE_WGMMA_REGS120 ", %120, %121, %122, %123"
#define WARPTRACE_WGMMA_DS124 WARPTRACE_WGMMA_DS120, WARPTRACE_WGMMA_D4(120)
#define WARPTRACE_WGMMA_REGS128 WARPTRACE_WGMMA_REGS124 ", %124, %125, %126, %127"
#define WARPTRACE_WGMMA_DS128 WARPTRACE_WGMMA_DS124, WARPTRACE_WGMMA_D4(124)

template <int N>
struct WarptraceWgmmaAsm;
// SS: %R desc-a, %R+1 desc-b, %R+2 scale-d, %R+3..%R+6 the immediates (R = N/2). RS: %R..%R+3
// A, %R+4 desc-b, %R+5 scale-d, %R+6..%R+8 the immediates.
#define WARPTRACE_WGMMA_ASM(N_, REGS, DS, SS_SCALE, SS_TAIL, RS_SCALE, RS_TAIL)              \
  template <>                                                                               \
  struct WarptraceWgmmaAsm<N_> {                                                            \
    template <int TransA, int TransB>                                                       \
    static WARPTRACE_WGMMA_FN void Ss(float (&d)[N_ / 2], unsigned long long desc_a,        \
                                      unsigned long long desc_b, int scale_d) {             \
      asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %" SS_SCALE ", 0;\n\t"             \
                   "wgmma.mma_async.sync.aligned.m64n" #N_ "k16.f32.bf16.bf16 {" REGS "}, " \
                   SS_TAIL ";\n}\n"                                                         \
                   : DS                                                                     \
                   : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(1), "n"(1), "n"(TransA),   \
                     "n"(TransB)                                                            \
                   : "memory");                                                             \
    }                                                                                       \
    template <int TransB>                                                                   \
    static WARPTRACE_WGMMA_FN void Rs(float (&d)[N_ / 2], const unsigned (&a)[4],           \
                                      unsigned long long desc_b, int scale_d) {             \
      asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %" RS_SCALE ", 0;\n\t"             \
                   "wgmma.mma_async.sync.aligned.m64n" #N_ "k16.f32.bf16.bf16 {" REGS "}, " \
                   RS_TAIL ";\n}\n"                                                         \
                   : DS                                                                     \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), \
                     "n"(1), "n"(1), "n"(TransB)                                            \
                   : "memory");                                                             \
    }                                                                                       \
  };
WARPTRACE_WGMMA_ASM(8, WARPTRACE_WGMMA_REGS4, WARPTRACE_WGMMA_DS4, "6",
                    "%4, %5, p, %7, %8, %9, %10", "9",
                    "{%4, %5, %6, %7}, %8, p, %10, %11, %12")
WARPTRACE_WGMMA_ASM(16, WARPTRACE_WGMMA_REGS8, WARPTRACE_WGMMA_DS8, "10",
                    "%8, %9, p, %11, %12, %13, %14", "13",
                    "{%8, %9, %10, %11}, %12, p, %14, %15, %16")
WARPTRACE_WGMMA_ASM(24, WARPTRACE_WGMMA_REGS12, WARPTRACE_WGMMA_DS12, "14",
                    "%12, %13, p, %15, %16, %17, %18", "17",
                    "{%12, %13, %14, %15}, %16, p, %18, %19, %20")
WARPTRACE_WGMMA_ASM(32, WARPTRACE_WGMMA_REGS16, WARPTRACE_WGMMA_DS16, "18",
                    "%16, %17, p, %19, %20, %21, %22", "21",
                    "{%16, %17, %18, %19}, %20, p, %22, %23, %24")
WARPTRACE_WGMMA_ASM(40, WARPTRACE_WGMMA_REGS20, WARPTRACE_WGMMA_DS20, "22",
                    "%20, %21, p, %23, %24, %25, %26", "25",
                    "{%20, %21, %22, %23}, %24, p, %26, %27, %28")
WARPTRACE_WGMMA_ASM(48, WARPTRACE_WGMMA_REGS24, WARPTRACE_WGMMA_DS24, "26",
                    "%24, %25, p, %27, %28, %29, %30", "29",
                    "{%24, %25, %26, %27}, %28, p, %30, %31, %32")
WARPTRACE_WGMMA_ASM(56, WARPTRACE_WGMMA_REGS28, WARPTRACE_WGMMA_DS28, "30",
                    "%28, %29, p, %31, %32, %33, %34", "33",
                    "{%28, %29, %30, %31}, %32, p, %34, %35, %36")
WARPTRACE_WGMMA_ASM(64, WARPTRACE_WGMMA_REGS32, WARPTRACE_WGMMA_DS32, "34",
                    "%32, %33, p, %35, %36, %37, %38", "37",
                    "{%32, %33, %34, %35}, %36, p, %38, %39, %40")
WARPTRACE_WGMMA_ASM(72, WARPTRACE_WGMMA_REGS36, WARPTRACE_WGMMA_DS36, "38",
                    "%36, %37, p, %39, %40, %41, %42", "41",
                    "{%36, %37, %38, %39}, %40, p, %42, %43, %44")
WARPTRACE_WGMMA_ASM(80, WARPTRACE_WGMMA_REGS40, WARPTRACE_WGMMA_DS40, "42",
                    "%40, %41, p, %43, %44, %45, %46", "45",
                    "{%40, %41, %42, %43}, %44, p, %46, %47, %48")
WARPTRACE_WGMMA_ASM(88, WARPTRACE_WGMMA_REGS44, WARPTRACE_WGMMA_DS44, "46",
                    "%44, %45, p, %47, %48, %49, %50", "49",
                    "{%44, %45, %46, %47}, %48, p, %50, %51, %52")
WARPTRACE_WGMMA_ASM(96, WARPTRACE_WGMMA_REGS48, WARPTRACE_WGMMA_DS48, "50",
                    "%48, %49, p, %51, %52, %53, %54", "53",
                    "{%48, %49, %50, %51}, %52, p, %54, %55, %56")
WARPTRACE_WGMMA_ASM(104, WARPTRACE_WGMMA_REGS52, WARPTRACE_WGMMA_DS52, "54",
                    "%52, %53, p, %55, %56, %57, %58", "57",
                    "{%52, %53, %54, %55}, %56, p, %58, %59, %60")
WARPTRACE_WGMMA_ASM(112, WARPTRACE_WGMMA_REGS56, WARPTRACE_WGMMA_DS56, "58",
                    "%56, %57, p, %59, %60, %61, %62", "61",
                    "{%56, %57, %58, %59}, %60, p, %62, %63, %64")
WARPTRACE_WGMMA_ASM(120, WARPTRACE_WGMMA_REGS60, WARPTRACE_WGMMA_DS60, "62",
                    "%60, %61, p, %63, %64, %65, %66", "65",
                    "{%60, %61, %62, %63}, %64, p, %66, %67, %68")
WARPTRACE_WGMMA_ASM(128, WARPTRACE_WGMMA_REGS64, WARPTRACE_WGMMA_DS64, "66",
                    "%64, %65, p, %67, %68, %69, %70", "69",
                    "{%64, %65, %66, %67}, %68, p, %70, %71, %72")
WARPTRACE_WGMMA_ASM(136, WARPTRACE_WGMMA_REGS68, WARPTRACE_WGMMA_DS68, "70",
                    "%68, %69, p, %71, %72, %73, %74", "73",
                    "{%68, %69, %70, %71}, %72, p, %74, %75, %76")
WARPTRACE_WGMMA_ASM(144, WARPTRACE_WGMMA_REGS72, WARPTRACE_WGMMA_DS72, "74",
                    "%72, %73, p, %75, %76, %77, %78", "77",
                    "{%72, %73, %74, %75}, %76, p, %78, %79, %80")
WARPTRACE_WGMMA_ASM(152, WARPTRACE_WGMMA_REGS76, WARPTRACE_WGMMA_DS76, "78",
                    "%76, %77, p, %79, %80, %81, %82", "81",
                    "{%76, %77, %78, %79}, %80, p, %82, %83, %84")
WARPTRACE_WGMMA_ASM(160, WARPTRACE_WGMMA_REGS80, WARPTRACE_WGMMA_DS80, "82",
                    "%80, %81, p, %83, %84, %85, %86", "85",
                    "{%80, %81, %82, %83}, %84, p, %86, %87, %88")
WARPTRACE_WGMMA_ASM(168, WARPTRACE_WGMMA_REGS84, WARPTRACE_WGMMA_DS84, "86",
                    "%84, %85, p, %87, %88, %89, %90", "89",
                    "{%84, %85, %86, %87}, %88, p, %90, %91, %92")
WARPTRACE_WGMMA_ASM(176, WARPTRACE_WGMMA_REGS88, WARPTRACE_WGMMA_DS88, "90",
                    "%88, %89, p, %91, %92, %93, %94", "93",
                    "{%88, %89, %90, %91}, %92, p, %94, %95, %96")
WARPTRACE_WGMMA_ASM(184, WARPTRACE_WGMMA_REGS92, WARPTRACE_WGMMA_DS92, "94",
                    "%92, %93, p, %95, %96, %97, %98", "97",
                    "{%92, %93, %94, %95}, %96, p, %98, %99, %100")
WARPTRACE_WGMMA_ASM(192, WARPTRACE_WGMMA_REGS96, WARPTRACE_WGMMA_DS96, "98",
                    "%96, %97, p, %99, %100, %101, %102", "101",
                    "{%96, %97, %98, %99}, %100, p, %102, %103, %104")
WARPTRACE_WGMMA_ASM(200, WARPTRACE_WGMMA_REGS100, WARPTRACE_WGMMA_DS100, "102",
                    "%100, %101, p, %103, %104, %105, %106", "105",
                    "{%100, %101, %102, %103}, %104, p, %106, %107, %108")
WARPTRACE_WGMMA_ASM(208, WARPTRACE_WGMMA_REGS104, WARPTRACE_WGMMA_DS104, "106",
                    "%104, %105, p, %107, %108, %109, %110", "109",
                    "{%104, %105, %106, %107}, %108, p, %110, %111, %112")
WARPTRACE_WGMMA_ASM(216, WARPTRACE_WGMMA_REGS108, WARPTRACE_WGMMA_DS108, "110",
                    "%108, %109, p, %111, %112, %113, %114", "113",
                    "{%108, %109, %110, %111}, %112, p, %114, %115, %116")
WARPTRACE_WGMMA_ASM(224, WARPTRACE_WGMMA_REGS112, WARPTRACE_WGMMA_DS112, "114",
                    "%112, %113, p, %115, %116, %117, %118", "117",
                    "{%112, %113, %114, %115}, %116, p, %118, %119, %120")
WARPTRACE_WGMMA_ASM(232, WARPTRACE_WGMMA_REGS116, WARPTRACE_WGMMA_DS116, "118",
                    "%116, %117, p, %119, %120, %121, %122", "121",
                    "{%116, %117, %118, %119}, %120, p, %122, %123, %124")
WARPTRACE_WGMMA_ASM(240, WARPTRACE_WGMMA_REGS120, WARPTRACE_WGMMA_DS120, "122",
                    "%120, %121, p, %123, %124, %125, %126", "125",
                    "{%120, %121, %122, %123}, %124, p, %126, %127, %128")
WARPTRACE_WGMMA_ASM(248, WARPTRACE_WGMMA_REGS124, WARPTRACE_WGMMA_DS124, "126",
                    "%124, %125, p, %127, %128, %129, %130", "129",
                    "{%124, %125, %126, %127}, %128, p, %130, %131, %132")
WARPTRACE_WGMMA_ASM(256, WARPTRACE_WGMMA_REGS128, WARPTRACE_WGMMA_DS128, "130",
                    "%128, %129, p, %131, %132, %133, %134", "133",
                    "{%128, %129, %130, %131}, %132, p, %134, %135, %136")
#undef WARPTRACE_WGMMA_ASM
#undef WARPTRACE_WGMMA_D4
#undef WARPTRACE_WGMMA_REGS4
#undef WARPTRACE_WGMMA_DS4
#undef WARPTRACE_WGMMA_REGS8
#undef WARPTRACE_WGMMA_DS8
#undef WARPTRACE_WGMMA_REGS12
#undef WARPTRACE_WGMMA_DS12
#undef WARPTRACE_WGMMA_REGS16
#undef WARPTRACE_WGMMA_DS16
#undef WARPTRACE_WGMMA_REGS20
#undef WARPTRACE_WGMMA_DS20
#undef WARPTRACE_WGMMA_REGS24
#undef WARPTRACE_WGMMA_DS24
#undef WARPTRACE_WGMMA_REGS28
#undef WARPTRACE_WGMMA_DS28
#undef WARPTRACE_WGMMA_REGS32
#undef WARPTRACE_WGMMA_DS32
#undef WARPTRACE_WGMMA_REGS36
#undef WARPTRACE_WGMMA_DS36
#undef WARPTRACE_WGMMA_REGS40
#undef WARPTRACE_WGMMA_DS40
#undef WARPTRACE_WGMMA_REGS44
#undef WARPTRACE_WGMMA_DS44
#undef WARPTRACE_WGMMA_REGS48
#undef WARPTRACE_WGMMA_DS48
#undef WARPTRACE_WGMMA_REGS52
#undef WARPTRACE_WGMMA_DS52
#undef WARPTRACE_WGMMA_REGS56
#undef WARPTRACE_WGMMA_DS56
#undef WARPTRACE_WGMMA_REGS60
#undef WARPTRACE_WGMMA_DS60
#undef WARPTRACE_WGMMA_REGS64
#undef WARPTRACE_WGMMA_DS64
#undef WARPTRACE_WGMMA_REGS68
#undef WARPTRACE_WGMMA_DS68
#undef WARPTRACE_WGMMA_REGS72
#undef WARPTRACE_WGMMA_DS72
#undef WARPTRACE_WGMMA_REGS76
#undef WARPTRACE_WGMMA_DS76
#undef WARPTRACE_WGMMA_REGS80
#undef WARPTRACE_WGMMA_DS80
#undef WARPTRACE_WGMMA_REGS84
#undef WARPTRACE_WGMMA_DS84
#undef WARPTRACE_WGMMA_REGS88
#undef WARPTRACE_WGMMA_DS88
#undef WARPTRACE_WGMMA_REGS92
#undef WARPTRACE_WGMMA_DS92
#undef WARPTRACE_WGMMA_REGS96
#undef WARPTRACE_WGMMA_DS96
#undef WARPTRACE_WGMMA_REGS100
#undef WARPTRACE_WGMMA_DS100
#undef WARPTRACE_WGMMA_REGS104
#undef WARPTRACE_WGMMA_DS104
#undef WARPTRACE_WGMMA_REGS108
#undef WARPTRACE_WGMMA_DS108
#undef WARPTRACE_WGMMA_REGS112
#undef WARPTRACE_WGMMA_DS112
#undef WARPTRACE_WGMMA_REGS116
#undef WARPTRACE_WGMMA_DS116
#undef WARPTRACE_WGMMA_REGS120
#undef WARPTRACE_WGMMA_DS120
#undef WARPTRACE_WGMMA_REGS124
#undef WARPTRACE_WGMMA_DS124
#undef WARPTRACE_WGMMA_REGS128
#undef WARPTRACE_WGMMA_DS128

template <int N, int TransA = 0, int TransB = 0>
WARPTRACE_WGMMA_FN void warptrace_wgmma_mma_async_bf16_ss(float (&d)[N / 2],
                                                          unsigned long long desc_a,
                                                          unsigned long long desc_b,
                                                          int scale_d) {
  static_assert(TransA == 0 || TransA == 1, "wgmma: TransA must be 0 or 1");
  static_assert(TransB == 0 || TransB == 1, "wgmma: TransB must be 0 or 1");
  static_assert(sizeof(WarptraceWgmmaShape<N>) > 0, "");  // its static_assert on N
  WarptraceWgmmaAsm<N>::template Ss<TransA, TransB>(d, desc_a, desc_b, scale_d);
}
template <int N, int TransB = 0>
WARPTRACE_WGMMA_FN void warptrace_wgmma_mma_async_bf16_rs(float (&d)[N / 2],
                                                          const unsigned (&a)[4],
                                                          unsigned long long desc_b,
                                                          int scale_d) {
  static_assert(TransB == 0 || TransB == 1, "wgmma: TransB must be 0 or 1");
  static_assert(sizeof(WarptraceWgmmaShape<N>) > 0, "");
  WarptraceWgmmaAsm<N>::template Rs<TransB>(d, a, desc_b, scale_d);
}
template <int N, int TransA = 0, int TransB = 0, int R, int C>
WARPTRACE_WGMMA_FN void warptrace_wgmma_mma_async_bf16_ss(float (&d)[R][C],
                                                          unsigned long long desc_a,
                                                          unsigned long long desc_b,
                                                          int scale_d) {
  warptrace_wgmma_mma_async_bf16_ss<N, TransA, TransB>(
      reinterpret_cast<typename WarptraceWgmmaAccumulator<N, R, C>::Flat&>(d), desc_a, desc_b,
      scale_d);
}
template <int N, int TransB = 0, int R, int C>
WARPTRACE_WGMMA_FN void warptrace_wgmma_mma_async_bf16_rs(float (&d)[R][C],
                                                          const unsigned (&a)[4],
                                                          unsigned long long desc_b,
                                                          int scale_d) {
  warptrace_wgmma_mma_async_bf16_rs<N, TransB>(
      reinterpret_cast<typename WarptraceWgmmaAccumulator<N, R, C>::Flat&>(d), a, desc_b,
      scale_d);
}

template <unsigned Regs>
WARPTRACE_WGMMA_FN void warptrace_setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(WarptraceSetmaxnregCount<Regs>::kValue));
}
template <unsigned Regs>
WARPTRACE_WGMMA_FN void warptrace_setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(WarptraceSetmaxnregCount<Regs>::kValue));
}
// Run-time counts: one case per legal immediate.
#define WARPTRACE_SETMAXNREG_CASES(OP)                                              \
  switch (regs) {                                                                   \
    case 24: OP<24>(); break;   case 32: OP<32>(); break;   case 40: OP<40>(); break;   \
    case 48: OP<48>(); break;   case 56: OP<56>(); break;   case 64: OP<64>(); break;   \
    case 72: OP<72>(); break;   case 80: OP<80>(); break;   case 88: OP<88>(); break;   \
    case 96: OP<96>(); break;   case 104: OP<104>(); break; case 112: OP<112>(); break; \
    case 120: OP<120>(); break; case 128: OP<128>(); break; case 136: OP<136>(); break; \
    case 144: OP<144>(); break; case 152: OP<152>(); break; case 160: OP<160>(); break; \
    case 168: OP<168>(); break; case 176: OP<176>(); break; case 184: OP<184>(); break; \
    case 192: OP<192>(); break; case 200: OP<200>(); break; case 208: OP<208>(); break; \
    case 216: OP<216>(); break; case 224: OP<224>(); break; case 232: OP<232>(); break; \
    case 240: OP<240>(); break; case 248: OP<248>(); break; case 256: OP<256>(); break; \
    default: __trap();  /* not an instruction: the host backend reports it by name */   \
  }
WARPTRACE_WGMMA_FN void warptrace_setmaxnreg_inc(unsigned regs) {
  WARPTRACE_SETMAXNREG_CASES(warptrace_setmaxnreg_inc)
}
WARPTRACE_WGMMA_FN void warptrace_setmaxnreg_dec(unsigned regs) {
  WARPTRACE_SETMAXNREG_CASES(warptrace_setmaxnreg_dec)
}
#undef WARPTRACE_SETMAXNREG_CASES

#endif  // sm_90a
#endif  // WARPTRACE_HOST_BACKEND

#undef WARPTRACE_WGMMA_FN

#endif  // WARPTRACE_WGMMA_SM90_CUH_
