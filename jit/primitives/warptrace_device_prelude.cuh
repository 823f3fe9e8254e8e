// The device prelude: what every kernel sees before its first line, on both backends, so
// that a statement written against a C++ compiler's environment compiles under NVRTC too.
// NVRTC has no C or C++ standard headers (`#include <cstdint>` fails, FLT_MAX and int64_t
// are undefined); the host backend's compiler has them all. This header gives both the same:
//
//   fixed-width integers   int8_t .. int64_t, uint8_t .. uint64_t, intptr_t, uintptr_t,
//                          intmax_t, uintmax_t (also as std::int64_t ...); size_t and
//                          ptrdiff_t are NVRTC built-ins
//   their limits           INT8_MIN .. INT64_MAX, UINT8_MAX .. UINT64_MAX, SIZE_MAX
//   <climits>              CHAR_BIT, SCHAR_MIN/MAX, UCHAR_MAX, SHRT_MIN/MAX, USHRT_MAX,
//                          INT_MIN/MAX, UINT_MAX, LONG_MIN/MAX, ULONG_MAX, LLONG_MIN/MAX,
//                          ULLONG_MAX
//   <cfloat>               FLT_ and DBL_ MAX, MIN, EPSILON, DIG, MANT_DIG, MAX_EXP, MIN_EXP,
//                          TRUE_MIN
//   <cmath>'s constants    INFINITY, NAN (not constant expressions under NVRTC: they are
//                          __int_as_float bit patterns, as CUDA's CUDART_INF_F)
//
// and `#include <cstdint>` (<stdint.h>, <cstddef>, <stddef.h>, <climits>, <limits.h>,
// <cfloat>, <float.h>) resolve under NVRTC to this header (jit/cuda/cuda_device.cc), so a
// ported kernel's includes stay as they are. Under NVRTC the types are CCCL's
// (<cuda/std/cstdint>: int64_t is long long) and the <climits> macros are spelled as CCCL
// spells them, so a kernel may include <cuda/std/cstdint> or <cuda/std/climits> as well. On
// the host backend they are the C++ library's (int64_t is long there: the same width).
//
// NVRTC pre-includes it (warptrace_cuda_prelude.h); the host backend's cuda_on_cpu.h
// includes it. Tested under both by //tests/jit/run:device_prelude_test.
#ifndef WARPTRACE_DEVICE_PRELUDE_CUH_
#define WARPTRACE_DEVICE_PRELUDE_CUH_

#if defined(__CUDACC_RTC__)

typedef signed char int8_t;
typedef signed short int16_t;
typedef signed int int32_t;
typedef signed long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef int64_t intptr_t;
typedef uint64_t uintptr_t;
typedef int64_t intmax_t;
typedef uint64_t uintmax_t;

namespace std {
using ::int16_t;
using ::int32_t;
using ::int64_t;
using ::int8_t;
using ::intmax_t;
using ::intptr_t;
using ::ptrdiff_t;
using ::size_t;
using ::uint16_t;
using ::uint32_t;
using ::uint64_t;
using ::uint8_t;
using ::uintmax_t;
using ::uintptr_t;
}  // namespace std

#define INT8_MIN (-127 - 1)
#define INT8_MAX 127
#define UINT8_MAX 255
#define INT16_MIN (-32767 - 1)
#define INT16_MAX 32767
#define UINT16_MAX 65535
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define UINT32_MAX 4294967295U
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT64_MAX 18446744073709551615ULL
#define SIZE_MAX 18446744073709551615UL

// <climits>, spelled as CCCL's <cuda/std/climits> under NVRTC (an identical redefinition is
// allowed, a different one is not).
#ifndef CHAR_BIT
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define SHRT_MIN (-SHRT_MAX - 1)
#define SHRT_MAX 0x7fff
#define USHRT_MAX 0xffff
#define INT_MIN (-INT_MAX - 1)
#define INT_MAX 0x7fffffff
#define UINT_MAX 0xffffffff
#define LONG_MIN (-LONG_MAX - 1)
#define LONG_MAX LLONG_MAX
#define ULONG_MAX ULLONG_MAX
#define LLONG_MIN (-LLONG_MAX - 1)
#define LLONG_MAX 0x7fffffffffffffffLL
#define ULLONG_MAX 0xffffffffffffffffUL
#endif

// <cfloat> (CCCL defines none of these under NVRTC).
#define FLT_RADIX 2
#define FLT_MANT_DIG 24
#define FLT_DIG 6
#define FLT_MIN_EXP (-125)
#define FLT_MAX_EXP 128
#define FLT_MIN 1.17549435082228750796873653722224568e-38F
#define FLT_MAX 3.40282346638528859811704183484516925e+38F
#define FLT_EPSILON 1.19209289550781250000000000000000000e-7F
#define FLT_TRUE_MIN 1.40129846432481707092372958328991613e-45F
#define DBL_MANT_DIG 53
#define DBL_DIG 15
#define DBL_MIN_EXP (-1021)
#define DBL_MAX_EXP 1024
#define DBL_MIN 2.22507385850720138309023271733240406e-308
#define DBL_MAX 1.79769313486231570814527423731704357e+308
#define DBL_EPSILON 2.22044604925031308084726333618164062e-16
#define DBL_TRUE_MIN 4.94065645841246544176568792868221372e-324

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif

#else  // the host backend: the C++ library's own

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>

#endif  // __CUDACC_RTC__

#endif  // WARPTRACE_DEVICE_PRELUDE_CUH_
