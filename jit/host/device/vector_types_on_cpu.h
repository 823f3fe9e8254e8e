// The host backend's CUDA vector types (CUDA's vector_types.h: sizes and alignments),
// included by cuda_on_cpu.h (uint3, which host_abi.h names, is defined there).
#ifndef WARPTRACE_JIT_HOST_VECTOR_TYPES_ON_CPU_H_
#define WARPTRACE_JIT_HOST_VECTOR_TYPES_ON_CPU_H_

#define WARPTRACE_HOST_VEC1(T, N, A)               \
  struct __attribute__((aligned(A))) N##1 { T x; };   \
  inline N##1 make_##N##1(T x) { return N##1{x}; }
#define WARPTRACE_HOST_VEC2(T, N, A)                  \
  struct __attribute__((aligned(A))) N##2 { T x, y; }; \
  inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define WARPTRACE_HOST_VEC3(T, N)                                      \
  struct N##3 { T x, y, z; };                                          \
  inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }
#define WARPTRACE_HOST_VEC4(T, N, A)                        \
  struct __attribute__((aligned(A))) N##4 { T x, y, z, w; }; \
  inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
#define WARPTRACE_HOST_VECS(T, N, A1, A2, A4) \
  WARPTRACE_HOST_VEC1(T, N, A1)               \
  WARPTRACE_HOST_VEC2(T, N, A2)               \
  WARPTRACE_HOST_VEC3(T, N)                   \
  WARPTRACE_HOST_VEC4(T, N, A4)
WARPTRACE_HOST_VECS(signed char, char, 1, 2, 4)
WARPTRACE_HOST_VECS(unsigned char, uchar, 1, 2, 4)
WARPTRACE_HOST_VECS(short, short, 2, 4, 8)
WARPTRACE_HOST_VECS(unsigned short, ushort, 2, 4, 8)
WARPTRACE_HOST_VECS(int, int, 4, 8, 16)
WARPTRACE_HOST_VEC1(unsigned int, uint, 4)
WARPTRACE_HOST_VEC2(unsigned int, uint, 8)
WARPTRACE_HOST_VEC4(unsigned int, uint, 16)
WARPTRACE_HOST_VECS(long long, longlong, 8, 16, 16)
WARPTRACE_HOST_VECS(unsigned long long, ulonglong, 8, 16, 16)
WARPTRACE_HOST_VECS(float, float, 4, 8, 16)
WARPTRACE_HOST_VECS(double, double, 8, 16, 16)
#undef WARPTRACE_HOST_VECS
#undef WARPTRACE_HOST_VEC1
#undef WARPTRACE_HOST_VEC2
#undef WARPTRACE_HOST_VEC3
#undef WARPTRACE_HOST_VEC4
inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }

#endif  // WARPTRACE_JIT_HOST_VECTOR_TYPES_ON_CPU_H_
