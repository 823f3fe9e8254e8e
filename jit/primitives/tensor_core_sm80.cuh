// Warp-wide tensor-core and matrix-movement primitives (included by warptrace_primitives.cuh):
// one source for the GPU (inline PTX) and the host backend (an exact emulation on the host
// runtime's operand exchange, jit/host/device/host_abi.h).
//
// sm_80:
//   warptrace_mma_m16n8k16_f32_bf16(d, a, b, c)   mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
//   warptrace_mma_m16n8k16_f32_f16(d, a, b, c)    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
//       float d[4], const unsigned a[4] (A 16x16, row-major, two 16-bit elements a register:
//       element 2j in the low half), const unsigned b[2] (B 16x8, "col"), const float c[4];
//       D = A * B + C. d may be c.
//   warptrace_ldmatrix_x1/_x2/_x4(r0[, r1, r2, r3], smem_row)   ldmatrix.sync.aligned.m8n8.xN.shared.b16
//   warptrace_ldmatrix_x1/_x2/_x4_trans(...)                    the same with .trans
//       Loads 1, 2 or 4 8x8 matrices of 16-bit elements: lane 8m + r passes the address of row
//       r of matrix m (16 bytes, 16-byte aligned, in shared memory; lanes past 8 x N pass
//       anything). Register m of lane l receives row l / 4, columns 2 (l % 4) and
//       2 (l % 4) + 1 of matrix m (the lower column in the low half); with .trans, column
//       l / 4, rows 2 (l % 4) and 2 (l % 4) + 1.
// sm_90 (a kernel using them compiled for an older arch fails to compile, saying so):
//   warptrace_stmatrix_x1/_x2/_x4(smem_row, r0[, r1, r2, r3])   stmatrix.sync.aligned.m8n8.xN.shared.b16
//   warptrace_stmatrix_x1/_x2/_x4_trans(...)                    the same with .trans
//       The inverse of ldmatrix (the same lanes pass the rows' addresses, the same registers
//       hold the same elements).
//   warptrace_elect_sync()   elect.sync with membermask 0xffffffff: true in exactly one lane
//                            (on the host: the lowest lane that has not exited)
//
// Every one of them is warp-wide (.sync.aligned): all 32 lanes execute the same instruction.
// On the host backend a lane that exited, a lane missing (a partial warp; a lane that never
// arrives is a deadlock naming the instruction and the lanes missing) or a lane executing
// another instruction fails the launch naming block, threads and instruction, and so does an
// ldmatrix / stmatrix row address that is not 16-byte aligned (naming the lane).
//
// The host emulation. Data movement is exact: every register element goes where the PTX
// ISA's fragment layouts put it ("Matrix Fragments for mma.m16n8k16 with floating point
// type", ldmatrix, stmatrix). ldmatrix reads every row when its lane arrives (all lanes
// arrive before any continues, so a later store by any lane cannot leak into the result);
// stmatrix writes each row when its lane continues (visible to the other lanes after a
// __syncwarp, as on the GPU). mma arithmetic: each D element starts as C's, then the 16
// products of its row of A and column of B are added in order k = 0..15, each product and
// each sum an fp32 operation rounded to nearest even (a bf16 x bf16 or f16 x f16 product is
// exact in fp32 unless it under- or overflows it, which only bf16's extreme exponents do; so
// this is 16 rounded fp32 additions). The PTX ISA leaves the order and rounding of the
// hardware's accumulation unspecified: compare against a tolerance, not bits.
#ifndef WARPTRACE_TENSOR_CORE_SM80_CUH_
#define WARPTRACE_TENSOR_CORE_SM80_CUH_

#if defined(WARPTRACE_HOST_BACKEND)

namespace warptrace_host {

inline float Bf16LowFloat(unsigned int r) { return BfloatBitsToFloat(static_cast<unsigned short>(r)); }
inline float Bf16HighFloat(unsigned int r) {
  return BfloatBitsToFloat(static_cast<unsigned short>(r >> 16));
}
inline float F16LowFloat(unsigned int r) { return HalfBitsToFloat(static_cast<unsigned short>(r)); }
inline float F16HighFloat(unsigned int r) {
  return HalfBitsToFloat(static_cast<unsigned short>(r >> 16));
}

struct MmaM16n8k16Operands {
  unsigned int a[4];
  unsigned int b[2];
};

// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}: the layouts are the PTX ISA's, with
// groupID g = lane >> 2 and threadID_in_group t = lane % 4:
//   A a_i (i = 0..7, register i / 2): row g + 8 ((i / 2) % 2), col 2t + (i % 2) + 8 (i / 4)
//   B b_i (i = 0..3, register i / 2): row (k) 2t + (i % 2) + 8 (i / 2), col (n) g
//   C, D c_i (i = 0..3): row g + 8 (i / 2), col 2t + (i % 2)
// So A(row, k) is in lane 4 (row % 8) + (k % 8) / 2, register (row / 8) + 2 (k / 8); B(k, n)
// in lane 4n + (k % 8) / 2, register k / 8; the half is k % 2 for both.
// Not instrumented in sanitize mode (WARPTRACE_HOST_OWN_FN): it reads the warp's exchanged
// registers only.
template <float (*Low)(unsigned int), float (*High)(unsigned int)>
WARPTRACE_HOST_OWN_FN inline void MmaM16n8k16(float (&d)[4], const unsigned int (&a)[4], const unsigned int (&b)[2],
                        const float (&c)[4], const char* what) {
  const MmaM16n8k16Operands mine = {{a[0], a[1], a[2], a[3]}, {b[0], b[1]}};
  const MmaM16n8k16Operands* all = Exchange(WARPTRACE_HOST_GROUP_WARP, mine, what);
  const unsigned int lane = Current().lane;
  const unsigned int g = lane >> 2, t = lane & 3u;
  // The lane's D elements need rows g and g + 8 of A and columns 2t and 2t + 1 of B:
  // decoded once each (k in pairs: one register holds k and k + 1).
  float a_rows[2][16], b_cols[2][16];
  for (unsigned int h = 0; h < 2; ++h) {
    for (unsigned int k = 0; k < 16; k += 2) {
      const unsigned int ra = all[4 * g + (k % 8) / 2].a[h + 2 * (k / 8)];  // row g + 8h
      a_rows[h][k] = Low(ra);
      a_rows[h][k + 1] = High(ra);
      const unsigned int rb = all[4 * (2 * t + h) + (k % 8) / 2].b[k / 8];  // col 2t + h
      b_cols[h][k] = Low(rb);
      b_cols[h][k + 1] = High(rb);
    }
  }
  // The four elements' sums are independent chains, stepped together over k (their own
  // order stays k = 0..15). Products are exact in fp32 except under- or overflow (extreme
  // bf16 exponents).
  float out[4] = {c[0], c[1], c[2], c[3]};
  for (unsigned int k = 0; k < 16; ++k) {
    out[0] += a_rows[0][k] * b_cols[0][k];
    out[1] += a_rows[0][k] * b_cols[1][k];
    out[2] += a_rows[1][k] * b_cols[0][k];
    out[3] += a_rows[1][k] * b_cols[1][k];
  }
  for (unsigned int i = 0; i < 4; ++i) d[i] = out[i];
}

// The lane's row address of an ldmatrix / stmatrix with `num` matrices: lanes 0..8 num - 1
// pass one, which must be 16-byte aligned.
inline void CheckMatrixRow(const void* row, unsigned int num, const char* what,
                           const char* site) {
  const unsigned int lane = Current().lane;
  if (lane < 8 * num &&
      ::warptrace_host::wgmma::WindowAddress(::warptrace_host::wgmma::CurrentWindow(), row) < 0) {
    char message[1024];
    snprintf(message, sizeof message,
             "%s at %s: lane %u passes row address %p, which is not in this block's shared "
             "memory (ldmatrix and stmatrix move rows of shared memory only; a global-memory "
             "tile must be copied to shared memory first, or read with plain loads)",
             what, site != nullptr ? site : "?", lane, row);
    Rt().fail(Fiber(), message);
  }
  if (lane < 8 * num && (reinterpret_cast<unsigned long long>(row) & 15u) != 0) {
    char message[256];
    snprintf(message, sizeof message,
             "%s: lane %u passes row address %p, which is not 16-byte aligned (each lane "
             "0-%u passes the start of one 16-byte matrix row)",
             what, lane, row, 8 * num - 1);
    Rt().fail(Fiber(), message);
  }
}

struct MatrixRow {
  unsigned char bytes[16];
};

// ldmatrix.sync.aligned.m8n8.x{Num}{.trans}.shared.b16 (PTX ISA, ldmatrix): row r of matrix
// m comes from lane 8m + r. Without .trans, register m of lane l holds row l / 4, columns
// 2 (l % 4) and 2 (l % 4) + 1; with .trans, column l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1.
// Each lane reads its own row when it arrives.
template <unsigned int Num, bool Trans>
inline void Ldmatrix(unsigned int* r, const void* row, const char* what,
                     const char* site = nullptr) {
  CheckMatrixRow(row, Num, what, site);
  MatrixRow mine = {};
  if (Current().lane < 8 * Num) __builtin_memcpy(mine.bytes, row, 16);
  const MatrixRow* all = Exchange(WARPTRACE_HOST_GROUP_WARP, mine, what);
  const unsigned int lane = Current().lane;
  for (unsigned int m = 0; m < Num; ++m) {
    unsigned short lo = 0, hi = 0;
    if (!Trans) {
      const unsigned char* p = all[8 * m + lane / 4].bytes + 4 * (lane % 4);
      __builtin_memcpy(&lo, p, 2);
      __builtin_memcpy(&hi, p + 2, 2);
    } else {
      __builtin_memcpy(&lo, all[8 * m + 2 * (lane % 4)].bytes + 2 * (lane / 4), 2);
      __builtin_memcpy(&hi, all[8 * m + 2 * (lane % 4) + 1].bytes + 2 * (lane / 4), 2);
    }
    r[m] = static_cast<unsigned int>(lo) | (static_cast<unsigned int>(hi) << 16);
  }
}

struct StmatrixRegisters {
  unsigned int r[4];
};

// stmatrix.sync.aligned.m8n8.x{Num}{.trans}.shared.b16: the same layout as Ldmatrix, stored.
// Lane 8m + r writes row r of matrix m: element (r, c) is, without .trans, half c % 2 of
// register m of lane 4r + c / 2; with .trans, half r % 2 of register m of lane 4c + r / 2.
template <unsigned int Num, bool Trans>
inline void Stmatrix(void* row, const unsigned int* r, const char* what,
                     const char* site = nullptr) {
  CheckMatrixRow(row, Num, what, site);
  StmatrixRegisters mine = {};
  for (unsigned int m = 0; m < Num; ++m) mine.r[m] = r[m];
  const StmatrixRegisters* all = Exchange(WARPTRACE_HOST_GROUP_WARP, mine, what);
  const unsigned int lane = Current().lane;
  if (lane >= 8 * Num) return;
  const unsigned int m = lane / 8, rr = lane % 8;
  unsigned short out[8];
  for (unsigned int c = 0; c < 8; ++c) {
    const unsigned int reg = Trans ? all[4 * c + rr / 2].r[m] : all[4 * rr + c / 2].r[m];
    const unsigned int half = Trans ? rr % 2 : c % 2;
    out[c] = static_cast<unsigned short>(reg >> (16 * half));
  }
  __builtin_memcpy(row, out, 16);
}

}  // namespace warptrace_host

inline void warptrace_mma_m16n8k16_f32_bf16(float (&d)[4], const unsigned int (&a)[4],
                                            const unsigned int (&b)[2], const float (&c)[4]) {
  ::warptrace_host::MmaM16n8k16<&::warptrace_host::Bf16LowFloat,
                                &::warptrace_host::Bf16HighFloat>(
      d, a, b, c, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
}
inline void warptrace_mma_m16n8k16_f32_f16(float (&d)[4], const unsigned int (&a)[4],
                                           const unsigned int (&b)[2], const float (&c)[4]) {
  ::warptrace_host::MmaM16n8k16<&::warptrace_host::F16LowFloat,
                                &::warptrace_host::F16HighFloat>(
      d, a, b, c, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
}

inline void warptrace_ldmatrix_x1(unsigned int& r0, const void* smem_row, const char* site = __builtin_FILE()) {
  unsigned int r[1];
  ::warptrace_host::Ldmatrix<1, false>(r, smem_row, "ldmatrix.sync.aligned.m8n8.x1.shared.b16", site);
  r0 = r[0];
}
inline void warptrace_ldmatrix_x1_trans(unsigned int& r0, const void* smem_row, const char* site = __builtin_FILE()) {
  unsigned int r[1];
  ::warptrace_host::Ldmatrix<1, true>(r, smem_row,
                                      "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16", site);
  r0 = r[0];
}
inline void warptrace_ldmatrix_x2(unsigned int& r0, unsigned int& r1, const void* smem_row, const char* site = __builtin_FILE()) {
  unsigned int r[2];
  ::warptrace_host::Ldmatrix<2, false>(r, smem_row, "ldmatrix.sync.aligned.m8n8.x2.shared.b16", site);
  r0 = r[0];
  r1 = r[1];
}
inline void warptrace_ldmatrix_x2_trans(unsigned int& r0, unsigned int& r1,
                                        const void* smem_row, const char* site = __builtin_FILE()) {
  unsigned int r[2];
  ::warptrace_host::Ldmatrix<2, true>(r, smem_row,
                                      "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", site);
  r0 = r[0];
  r1 = r[1];
}
inline void warptrace_ldmatrix_x4(unsigned int& r0, unsigned int& r1, unsigned int& r2,
                                  unsigned int& r3, const void* smem_row, const char* site = __builtin_FILE()) {
  unsigned int r[4];
  ::warptrace_host::Ldmatrix<4, false>(r, smem_row, "ldmatrix.sync.aligned.m8n8.x4.shared.b16", site);
  r0 = r[0];
  r1 = r[1];
  r2 = r[2];
  r3 = r[3];
}
inline void warptrace_ldmatrix_x4_trans(unsigned int& r0, unsigned int& r1, unsigned int& r2,
                                        unsigned int& r3, const void* smem_row, const char* site = __builtin_FILE()) {
  unsigned int r[4];
  ::warptrace_host::Ldmatrix<4, true>(r, smem_row,
                                      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", site);
  r0 = r[0];
  r1 = r[1];
  r2 = r[2];
  r3 = r[3];
}

inline void warptrace_stmatrix_x1(void* smem_row, unsigned int r0, const char* site = __builtin_FILE()) {
  const unsigned int r[1] = {r0};
  ::warptrace_host::Stmatrix<1, false>(smem_row, r, "stmatrix.sync.aligned.m8n8.x1.shared.b16", site);
}
inline void warptrace_stmatrix_x1_trans(void* smem_row, unsigned int r0, const char* site = __builtin_FILE()) {
  const unsigned int r[1] = {r0};
  ::warptrace_host::Stmatrix<1, true>(smem_row, r,
                                      "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16", site);
}
inline void warptrace_stmatrix_x2(void* smem_row, unsigned int r0, unsigned int r1, const char* site = __builtin_FILE()) {
  const unsigned int r[2] = {r0, r1};
  ::warptrace_host::Stmatrix<2, false>(smem_row, r, "stmatrix.sync.aligned.m8n8.x2.shared.b16", site);
}
inline void warptrace_stmatrix_x2_trans(void* smem_row, unsigned int r0, unsigned int r1, const char* site = __builtin_FILE()) {
  const unsigned int r[2] = {r0, r1};
  ::warptrace_host::Stmatrix<2, true>(smem_row, r,
                                      "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16", site);
}
inline void warptrace_stmatrix_x4(void* smem_row, unsigned int r0, unsigned int r1,
                                  unsigned int r2, unsigned int r3, const char* site = __builtin_FILE()) {
  const unsigned int r[4] = {r0, r1, r2, r3};
  ::warptrace_host::Stmatrix<4, false>(smem_row, r, "stmatrix.sync.aligned.m8n8.x4.shared.b16", site);
}
inline void warptrace_stmatrix_x4_trans(void* smem_row, unsigned int r0, unsigned int r1,
                                        unsigned int r2, unsigned int r3, const char* site = __builtin_FILE()) {
  const unsigned int r[4] = {r0, r1, r2, r3};
  ::warptrace_host::Stmatrix<4, true>(smem_row, r,
                                      "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16", site);
}

// The lowest lane of the warp that has not exited (a partial warp's missing lanes do not
// take part); a lane that exited fails the launch, as every warp collective does.
inline bool warptrace_elect_sync() {
  const unsigned long long voters =
      ::warptrace_host::Warp(WARPTRACE_HOST_WARP_BALLOT, 0xffffffffu, 1, 0, "elect.sync");
  return voters != 0 &&
         static_cast<unsigned int>(__builtin_ctzll(voters)) == ::warptrace_host::Current().lane;
}

#else  // the GPU

#if defined(__CUDA_ARCH__)
#define WARPTRACE_SM80_TARGET_ARCH __CUDA_ARCH__
#else
#define WARPTRACE_SM80_TARGET_ARCH 1000  // nvcc's host pass: never executed
#endif

// sm_90 instructions are templates whose default argument is the target arch, so a kernel
// that calls one compiled for an older arch fails to compile with this message, while
// kernels that do not call it compile for any arch.
#define WARPTRACE_REQUIRE_SM90(Arch, NAME)                                                   \
  static_assert(Arch >= 900, NAME " needs sm_90 or newer: compile the kernel for "          \
                             "--gpu-architecture=sm_90 (or sm_90a)")

__device__ __forceinline__ void warptrace_mma_m16n8k16_f32_bf16(float (&d)[4],
                                                                const unsigned int (&a)[4],
                                                                const unsigned int (&b)[2],
                                                                const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}
__device__ __forceinline__ void warptrace_mma_m16n8k16_f32_f16(float (&d)[4],
                                                               const unsigned int (&a)[4],
                                                               const unsigned int (&b)[2],
                                                               const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

__device__ __forceinline__ unsigned int warptrace_matrix_row_address(const void* p) {
  return static_cast<unsigned int>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void warptrace_ldmatrix_x1(unsigned int& r0, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"
               : "=r"(r0)
               : "r"(warptrace_matrix_row_address(smem_row))
               : "memory");
}
__device__ __forceinline__ void warptrace_ldmatrix_x1_trans(unsigned int& r0,
                                                            const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];"
               : "=r"(r0)
               : "r"(warptrace_matrix_row_address(smem_row))
               : "memory");
}
__device__ __forceinline__ void warptrace_ldmatrix_x2(unsigned int& r0, unsigned int& r1,
                                                      const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
               : "=r"(r0), "=r"(r1)
               : "r"(warptrace_matrix_row_address(smem_row))
               : "memory");
}
__device__ __forceinline__ void warptrace_ldmatrix_x2_trans(unsigned int& r0, unsigned int& r1,
                                                            const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
               : "=r"(r0), "=r"(r1)
               : "r"(warptrace_matrix_row_address(smem_row))
               : "memory");
}
__device__ __forceinline__ void warptrace_ldmatrix_x4(unsigned int& r0, unsigned int& r1,
                                                      unsigned int& r2, unsigned int& r3,
                                                      const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(warptrace_matrix_row_address(smem_row))
               : "memory");
}
__device__ __forceinline__ void warptrace_ldmatrix_x4_trans(unsigned int& r0, unsigned int& r1,
                                                            unsigned int& r2, unsigned int& r3,
                                                            const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(warptrace_matrix_row_address(smem_row))
               : "memory");
}

template <int Arch = WARPTRACE_SM80_TARGET_ARCH>
__device__ __forceinline__ void warptrace_stmatrix_x1(void* smem_row, unsigned int r0) {
  WARPTRACE_REQUIRE_SM90(Arch, "warptrace_stmatrix_x1 (stmatrix)");
  asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};"
               :
               : "r"(warptrace_matrix_row_address(smem_row)), "r"(r0)
               : "memory");
}
template <int Arch = WARPTRACE_SM80_TARGET_ARCH>
__device__ __forceinline__ void warptrace_stmatrix_x1_trans(void* smem_row, unsigned int r0) {
  WARPTRACE_REQUIRE_SM90(Arch, "warptrace_stmatrix_x1_trans (stmatrix)");
  asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};"
               :
               : "r"(warptrace_matrix_row_address(smem_row)), "r"(r0)
               : "memory");
}
template <int Arch = WARPTRACE_SM80_TARGET_ARCH>
__device__ __forceinline__ void warptrace_stmatrix_x2(void* smem_row, unsigned int r0,
                                                      unsigned int r1) {
  WARPTRACE_REQUIRE_SM90(Arch, "warptrace_stmatrix_x2 (stmatrix)");
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};"
               :
               : "r"(warptrace_matrix_row_address(smem_row)), "r"(r0), "r"(r1)
               : "memory");
}
template <int Arch = WARPTRACE_SM80_TARGET_ARCH>
__device__ __forceinline__ void warptrace_stmatrix_x2_trans(void* smem_row, unsigned int r0,
                                                            unsigned int r1) {
  WARPTRACE_REQUIRE_SM90(Arch, "warptrace_stmatrix_x2_trans (stmatrix)");
  asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};"
               :
               : "r"(warptrace_matrix_row_address(smem_row)), "r"(r0), "r"(r1)
               : "memory");
}
template <int Arch = WARPTRACE_SM80_TARGET_ARCH>
__device__ __forceinline__ void warptrace_stmatrix_x4(void* smem_row, unsigned int r0,
                                                      unsigned int r1, unsigned int r2,
                                                      unsigned int r3) {
  WARPTRACE_REQUIRE_SM90(Arch, "warptrace_stmatrix_x4 (stmatrix)");
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
               :
               : "r"(warptrace_matrix_row_address(smem_row)), "r"(r0), "r"(r1), "r"(r2),
                 "r"(r3)
               : "memory");
}
template <int Arch = WARPTRACE_SM80_TARGET_ARCH>
__device__ __forceinline__ void warptrace_stmatrix_x4_trans(void* smem_row, unsigned int r0,
                                                            unsigned int r1, unsigned int r2,
                                                            unsigned int r3) {
  WARPTRACE_REQUIRE_SM90(Arch, "warptrace_stmatrix_x4_trans (stmatrix)");
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
               :
               : "r"(warptrace_matrix_row_address(smem_row)), "r"(r0), "r"(r1), "r"(r2),
                 "r"(r3)
               : "memory");
}

template <int Arch = WARPTRACE_SM80_TARGET_ARCH>
__device__ __forceinline__ bool warptrace_elect_sync() {
  WARPTRACE_REQUIRE_SM90(Arch, "warptrace_elect_sync (elect.sync)");
  unsigned int elected = 0;
  asm volatile(
      "{\n\t.reg .b32 leader;\n\t.reg .pred p;\n\t"
      "elect.sync leader|p, 0xffffffff;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(elected)
      :
      : "memory");
  return elected != 0;
}

#undef WARPTRACE_REQUIRE_SM90
#undef WARPTRACE_SM80_TARGET_ARCH
#endif  // WARPTRACE_HOST_BACKEND

#endif  // WARPTRACE_TENSOR_CORE_SM80_CUH_
