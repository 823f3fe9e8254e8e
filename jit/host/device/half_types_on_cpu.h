// The host backend's __half, __nv_bfloat16 and their pairs. Two parts: the bit conversions
// (namespace warptrace_host), which cuda_on_cpu.h includes for the emulation's own use, and
// the CUDA types and functions, declared only where WARPTRACE_HOST_HALF_TYPES is defined:
// by the host's stand-ins for <cuda_fp16.h> and <cuda_bf16.h> (host_compiler.cc), so that
// a kernel needs the include on the host as it does with NVRTC. Not a header to include by
// itself.
#ifndef WARPTRACE_JIT_HOST_HALF_TYPES_ON_CPU_H_
#define WARPTRACE_JIT_HOST_HALF_TYPES_ON_CPU_H_

// Storage as CUDA's (2 bytes, the bits in a member; the pairs 4 bytes, 4-aligned, .x the low
// half). Conversions are bit-exact with the CUDA headers' host definitions on every input
// (tests/jit/host/half_types_test.cc compares them with the toolkit's cuda_fp16.h and
// cuda_bf16.h): float -> 16 bits rounds as its name says (_rn to nearest even, the default;
// _rz toward zero, _rd down, _ru up), overflow goes to infinity (or the largest finite value
// where the rounding direction says so), subnormals are kept, every NaN becomes the
// canonical 0x7fff; 16 bits -> float is exact (a half NaN becomes 0x7fffffff, a bfloat16 NaN
// keeps its bits). Arithmetic and comparisons go through float and round once at the end,
// as the headers' host paths do.

namespace warptrace_host {

inline unsigned int FloatBits(float f) {
  unsigned int u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}
inline float BitsFloat(unsigned int u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

enum Rounding { kRoundNearestEven, kRoundTowardZero, kRoundDown, kRoundUp };

// A narrowed value before rounding: the truncated 16 bits, the discarded part as a 32-bit
// fraction of the last place (0x80000000 is exactly half), and the sign.
struct Truncated {
  unsigned int bits;
  unsigned int remainder;
  bool negative;
};
inline unsigned short Round(Truncated t, Rounding mode) {
  bool up = false;
  switch (mode) {
    case kRoundNearestEven:
      up = t.remainder > 0x80000000u || (t.remainder == 0x80000000u && (t.bits & 1u) != 0);
      break;
    case kRoundTowardZero:
      break;
    case kRoundDown:
      up = t.remainder != 0 && t.negative;
      break;
    case kRoundUp:
      up = t.remainder != 0 && !t.negative;
      break;
  }
  return static_cast<unsigned short>(t.bits + (up ? 1u : 0u));
}

// binary32 -> binary16 before rounding. Rounding the magnitude's bits up by one is always the
// next representable magnitude (a subnormal's carry makes the smallest normal; 0x7bff's makes
// infinity).
inline Truncated TruncateToHalf(float f) {
  const unsigned int x = FloatBits(f);
  const unsigned int u = x & 0x7fffffffu;
  const unsigned int sign = (x >> 16) & 0x8000u;
  const bool negative = sign != 0;
  if (u > 0x7f800000u) return {0x7fffu, 0, negative};            // NaN: canonical
  if (u == 0x7f800000u) return {sign | 0x7c00u, 0, negative};    // infinity
  // At least 65520, halfway from 65504 (the largest finite value) to 65536: the largest
  // finite value with the rounding bit set (to nearest and up: infinity; toward zero: 65504).
  if (u > 0x477fefffu) return {sign | 0x7bffu, 0x80000000u, negative};
  if (u >= 0x38800000u) {  // normal in binary16
    return {sign | ((u - 0x38000000u) >> 13), u << 19, negative};
  }
  if (u < 0x33000001u) return {sign, u, negative};  // at most half the smallest subnormal
  const unsigned int shift = 0x7eu - (u >> 23);     // subnormal in binary16: 14..24
  const unsigned int mantissa = (u & 0x7fffffu) | 0x800000u;
  return {(sign | (mantissa >> shift)) & 0xffffu, mantissa << (32 - shift), negative};
}
inline unsigned short FloatToHalfBits(float f, Rounding mode = kRoundNearestEven) {
  return Round(TruncateToHalf(f), mode);
}
inline float HalfBitsToFloat(unsigned short h) {
  const unsigned int sign = (static_cast<unsigned int>(h) & 0x8000u) << 16;
  const unsigned int exponent = (h >> 10) & 0x1fu;
  const unsigned int mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return BitsFloat(mantissa != 0 ? 0x7fffffffu : (sign | 0x7f800000u));
  if (exponent == 0) {  // zero or subnormal: mantissa x 2^-24, exact in binary32
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  return BitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}
inline unsigned short FloatToBfloatBits(float f, Rounding mode = kRoundNearestEven) {
  const unsigned int x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;  // NaN: canonical
  return Round({x >> 16, x << 16, (x >> 31) != 0}, mode);
}
inline float BfloatBitsToFloat(unsigned short b) {
  return BitsFloat(static_cast<unsigned int>(b) << 16);
}
inline unsigned short FloatToHalfBitsRn(float f) { return FloatToHalfBits(f); }
inline unsigned short FloatToBfloatBitsRn(float f) { return FloatToBfloatBits(f); }

// A 16-bit float stored as its bits (`__x`, as CUDA names it), computing through float.
template <unsigned short (*ToBits)(float), float (*ToFloat)(unsigned short), typename Raw>
struct Float16 {
  unsigned short __x;
  Float16() = default;
  constexpr Float16(Raw raw) : __x(raw.x) {}  // NOLINT: implicit like CUDA's
  Float16(float f) : __x(ToBits(f)) {}        // NOLINT
  Float16(double d) : __x(ToBits(static_cast<float>(d))) {}
  Float16(int i) : __x(ToBits(static_cast<float>(i))) {}
  Float16(unsigned int i) : __x(ToBits(static_cast<float>(i))) {}
  Float16(long long i) : __x(ToBits(static_cast<float>(i))) {}
  Float16(unsigned long long i) : __x(ToBits(static_cast<float>(i))) {}
  Float16(short i) : __x(ToBits(static_cast<float>(i))) {}
  Float16(unsigned short i) : __x(ToBits(static_cast<float>(i))) {}
  operator Raw() const { return Raw{__x}; }
  operator float() const { return ToFloat(__x); }
  Float16& operator+=(Float16 o) { return *this = Float16(float(*this) + float(o)); }
  Float16& operator-=(Float16 o) { return *this = Float16(float(*this) - float(o)); }
  Float16& operator*=(Float16 o) { return *this = Float16(float(*this) * float(o)); }
  Float16& operator/=(Float16 o) { return *this = Float16(float(*this) / float(o)); }
  friend Float16 operator+(Float16 a, Float16 b) { return Float16(float(a) + float(b)); }
  friend Float16 operator-(Float16 a, Float16 b) { return Float16(float(a) - float(b)); }
  friend Float16 operator*(Float16 a, Float16 b) { return Float16(float(a) * float(b)); }
  friend Float16 operator/(Float16 a, Float16 b) { return Float16(float(a) / float(b)); }
  friend Float16 operator-(Float16 a) { return FromBits(a.__x ^ 0x8000u); }
  friend Float16 operator+(Float16 a) { return a; }
  friend bool operator==(Float16 a, Float16 b) { return float(a) == float(b); }
  friend bool operator!=(Float16 a, Float16 b) { return float(a) != float(b); }
  friend bool operator<(Float16 a, Float16 b) { return float(a) < float(b); }
  friend bool operator<=(Float16 a, Float16 b) { return float(a) <= float(b); }
  friend bool operator>(Float16 a, Float16 b) { return float(a) > float(b); }
  friend bool operator>=(Float16 a, Float16 b) { return float(a) >= float(b); }
  static Float16 FromBits(unsigned int bits) { return Float16(Raw{static_cast<unsigned short>(bits)}); }
};

template <typename T>
struct __attribute__((aligned(4))) Pair16 {
  T x, y;
};

}  // namespace warptrace_host

#endif  // WARPTRACE_JIT_HOST_HALF_TYPES_ON_CPU_H_

#if defined(WARPTRACE_HOST_HALF_TYPES) && !defined(WARPTRACE_JIT_HOST_HALF_TYPES_ON_CPU_TYPES_)
#define WARPTRACE_JIT_HOST_HALF_TYPES_ON_CPU_TYPES_

struct __half_raw {
  unsigned short x;
};
struct __nv_bfloat16_raw {
  unsigned short x;
};
typedef ::warptrace_host::Float16<&::warptrace_host::FloatToHalfBitsRn,
                                  &::warptrace_host::HalfBitsToFloat, __half_raw>
    __half;
typedef ::warptrace_host::Float16<&::warptrace_host::FloatToBfloatBitsRn,
                                  &::warptrace_host::BfloatBitsToFloat, __nv_bfloat16_raw>
    __nv_bfloat16;
typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;
typedef ::warptrace_host::Pair16<__half> __half2;
typedef ::warptrace_host::Pair16<__nv_bfloat16> __nv_bfloat162;
typedef __half2 half2;
typedef __nv_bfloat162 nv_bfloat162;
struct __attribute__((aligned(4))) __half2_raw {
  unsigned short x, y;
};
struct __attribute__((aligned(4))) __nv_bfloat162_raw {
  unsigned short x, y;
};
static_assert(sizeof(__half) == 2 && alignof(__half) == 2, "__half is 2 bytes, as in CUDA");
static_assert(sizeof(__nv_bfloat16) == 2, "__nv_bfloat16 is 2 bytes, as in CUDA");
static_assert(sizeof(__half2) == 4 && alignof(__half2) == 4, "__half2: 4 bytes, 4-aligned");
static_assert(sizeof(__nv_bfloat162) == 4 && alignof(__nv_bfloat162) == 4,
              "__nv_bfloat162: 4 bytes, 4-aligned");

// float -> __half
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __float2half_rz(float f) {
  return __half(__half_raw{::warptrace_host::FloatToHalfBits(f, ::warptrace_host::kRoundTowardZero)});
}
inline __half __float2half_rd(float f) {
  return __half(__half_raw{::warptrace_host::FloatToHalfBits(f, ::warptrace_host::kRoundDown)});
}
inline __half __float2half_ru(float f) {
  return __half(__half_raw{::warptrace_host::FloatToHalfBits(f, ::warptrace_host::kRoundUp)});
}
inline float __half2float(__half h) { return static_cast<float>(h); }
inline __half2 __floats2half2_rn(float lo, float hi) { return __half2{__half(lo), __half(hi)}; }
inline __half2 __float22half2_rn(float2 v) { return __floats2half2_rn(v.x, v.y); }
inline __half2 __float2half2_rn(float f) { return __floats2half2_rn(f, f); }
inline float2 __half22float2(__half2 v) { return make_float2(float(v.x), float(v.y)); }
inline float __low2float(__half2 v) { return float(v.x); }
inline float __high2float(__half2 v) { return float(v.y); }
inline __half __low2half(__half2 v) { return v.x; }
inline __half __high2half(__half2 v) { return v.y; }
inline __half2 __halves2half2(__half lo, __half hi) { return __half2{lo, hi}; }
inline __half2 __half2half2(__half h) { return __half2{h, h}; }
inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2{a.x, b.x}; }
inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2{a.y, b.y}; }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline short __half_as_short(__half h) { return static_cast<short>(h.__x); }
inline __half __ushort_as_half(unsigned short bits) { return __half(__half_raw{bits}); }
inline __half __short_as_half(short bits) {
  return __half(__half_raw{static_cast<unsigned short>(bits)});
}

// float -> __nv_bfloat16
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rz(float f) {
  return __nv_bfloat16(__nv_bfloat16_raw{
      ::warptrace_host::FloatToBfloatBits(f, ::warptrace_host::kRoundTowardZero)});
}
inline __nv_bfloat16 __float2bfloat16_rd(float f) {
  return __nv_bfloat16(
      __nv_bfloat16_raw{::warptrace_host::FloatToBfloatBits(f, ::warptrace_host::kRoundDown)});
}
inline __nv_bfloat16 __float2bfloat16_ru(float f) {
  return __nv_bfloat16(
      __nv_bfloat16_raw{::warptrace_host::FloatToBfloatBits(f, ::warptrace_host::kRoundUp)});
}
inline float __bfloat162float(__nv_bfloat16 b) { return static_cast<float>(b); }
inline __nv_bfloat162 __floats2bfloat162_rn(float lo, float hi) {
  return __nv_bfloat162{__nv_bfloat16(lo), __nv_bfloat16(hi)};
}
inline __nv_bfloat162 __float22bfloat162_rn(float2 v) { return __floats2bfloat162_rn(v.x, v.y); }
inline __nv_bfloat162 __float2bfloat162_rn(float f) { return __floats2bfloat162_rn(f, f); }
inline float2 __bfloat1622float2(__nv_bfloat162 v) { return make_float2(float(v.x), float(v.y)); }
inline float __low2float(__nv_bfloat162 v) { return float(v.x); }
inline float __high2float(__nv_bfloat162 v) { return float(v.y); }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 v) { return v.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 v) { return v.y; }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  return __nv_bfloat162{lo, hi};
}
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 b) { return __nv_bfloat162{b, b}; }
inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) {
  return __nv_bfloat162{a.x, b.x};
}
inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) {
  return __nv_bfloat162{a.y, b.y};
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.__x; }
inline short __bfloat16_as_short(__nv_bfloat16 b) { return static_cast<short>(b.__x); }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short bits) {
  return __nv_bfloat16(__nv_bfloat16_raw{bits});
}
inline __nv_bfloat16 __short_as_bfloat16(short bits) {
  return __nv_bfloat16(__nv_bfloat16_raw{static_cast<unsigned short>(bits)});
}

// Arithmetic (through float, rounded once to nearest even), for both types and their pairs.
#define WARPTRACE_HOST_HALF_MATH(T, T2, INF)                                                 \
  inline T __hadd(T a, T b) { return a + b; }                                              \
  inline T __hsub(T a, T b) { return a - b; }                                              \
  inline T __hmul(T a, T b) { return a * b; }                                              \
  inline T __hdiv(T a, T b) { return a / b; }                                              \
  inline T __hneg(T a) { return -a; }                                                      \
  inline T __habs(T a) { return T::FromBits(a.__x & 0x7fffu); }                            \
  inline T __hfma(T a, T b, T c) { return T(fmaf(float(a), float(b), float(c))); }        \
  inline T __hmax(T a, T b) { return T(fmaxf(float(a), float(b))); }                      \
  inline T __hmin(T a, T b) { return T(fminf(float(a), float(b))); }                      \
  inline bool __heq(T a, T b) { return a == b; }                                           \
  inline bool __hlt(T a, T b) { return a < b; }                                            \
  inline bool __hgt(T a, T b) { return a > b; }                                            \
  inline bool __hisnan(T a) { return (a.__x & 0x7fffu) > INF; }                          \
  inline T2 __hadd2(T2 a, T2 b) { return T2{a.x + b.x, a.y + b.y}; }                       \
  inline T2 __hsub2(T2 a, T2 b) { return T2{a.x - b.x, a.y - b.y}; }                       \
  inline T2 __hmul2(T2 a, T2 b) { return T2{a.x * b.x, a.y * b.y}; }                       \
  inline T2 __hfma2(T2 a, T2 b, T2 c) { return T2{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)}; } \
  inline T2 __hneg2(T2 a) { return T2{-a.x, -a.y}; }
WARPTRACE_HOST_HALF_MATH(__half, __half2, 0x7c00u)
WARPTRACE_HOST_HALF_MATH(__nv_bfloat16, __nv_bfloat162, 0x7f80u)
#undef WARPTRACE_HOST_HALF_MATH

#endif  // WARPTRACE_HOST_HALF_TYPES
