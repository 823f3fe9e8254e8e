// The host backend's tensor map and its TMA copies. A KernelArg::TensorMap on the host
// backend is this descriptor in the 128 bytes of the kernel's `CUtensorMap` parameter,
// written by HostDevice::EncodeTensorMap (from a TensorMapSpec that ValidateTensorMap
// accepted) and read by the TMA primitives of jit/primitives/tma_sm90.cuh, which call the
// copies below. C++17, freestanding: compiled into the runtime's program and into every
// kernel's shared object (embedded with cuda_on_cpu.h).
//
// The copy, as the PTX ISA's cp.async.bulk.tensor (tile mode) and the driver's
// cuTensorMapEncodeTiled define it:
//   - The box is `box[0] x box[1] x ...` elements starting at the signed element coordinates
//     `c[0..rank)`, laid out densely in shared memory, innermost first: element (i0, i1, i2)
//     at byte ((i2 * box[1] + i1) * box[0] + i0) * element bytes of the box.
//   - Swizzle: the 16-byte chunk at byte offset o of the box moves to o ^ (((o >> 7) & m) << 4)
//     with m = 7 (128B), 3 (64B), 1 (32B): CuTe's Swizzle<3,4,3>, <2,4,3>, <1,4,3> on byte
//     offsets. It is a function of the shared-memory address bits, so the destination must be
//     aligned to the pattern's period (1024, 512, 256 bytes), and to 128 bytes without a
//     swizzle (what a launch checks: the kernel's layout assumes the period starts at the
//     box).
//   - Loads: an element outside the tensor (any coordinate < 0 or >= dims) reads 0, or with
//     the NaN fill the element type's canonical quiet NaN (the driver does not document the
//     NaN's bits; CUTLASS only relies on it being a NaN that FMA treats as zero). The
//     mbarrier always receives the FULL box's bytes (CUTLASS's TmaTransactionBytes counts
//     the box, never the in-bounds part), also for a box partly or wholly out of bounds.
//   - Stores: only in-bounds elements are written; the rest of the box is dropped.
#ifndef WARPTRACE_JIT_HOST_HOST_TMA_H_
#define WARPTRACE_JIT_HOST_HOST_TMA_H_

#include <cstdint>
#include <cstdio>
#include <cstring>

#ifndef WARPTRACE_HOST_UNINSTRUMENTED  // the runtime's side (host_abi.h defines it for kernels)
#define WARPTRACE_HOST_UNINSTRUMENTED
#endif

// 'WTMA'; the version word changes with the layout below.
#define WARPTRACE_HOST_TMA_MAGIC 0x414d5457u
#define WARPTRACE_HOST_TMA_VERSION 1u

// Swizzle and fill codes: CUtensorMapSwizzle's and CUtensorMapFloatOOBfill's values.
#define WARPTRACE_HOST_TMA_SWIZZLE_NONE 0u
#define WARPTRACE_HOST_TMA_SWIZZLE_32B 1u
#define WARPTRACE_HOST_TMA_SWIZZLE_64B 2u
#define WARPTRACE_HOST_TMA_SWIZZLE_128B 3u
#define WARPTRACE_HOST_TMA_FILL_ZERO 0u
#define WARPTRACE_HOST_TMA_FILL_NAN 1u

struct WarptraceHostTensorMap {
  uint32_t magic;          // WARPTRACE_HOST_TMA_MAGIC
  uint32_t version;        // WARPTRACE_HOST_TMA_VERSION
  uint32_t rank;           // 1..5
  uint32_t element_bytes;  // 1, 2, 4, 8
  uint32_t data_type;      // CUtensorMapDataType's value (jit/platform/tensor_map.h)
  uint32_t swizzle;        // WARPTRACE_HOST_TMA_SWIZZLE_*
  uint32_t oob_fill;       // WARPTRACE_HOST_TMA_FILL_*
  uint32_t box[5];         // elements per dimension, innermost first
  uint64_t global_address; // the tensor's first element
  uint64_t dims[5];        // elements per dimension, innermost first
  uint64_t strides[4];     // byte strides of dimensions 1..4
};
static_assert(sizeof(WarptraceHostTensorMap) == 128, "the descriptor fills a CUtensorMap");

namespace warptrace_host_tma {

// The swizzle's XOR mask of bits 7.. of an offset (0 without a swizzle) and its period.
inline uint32_t SwizzleMask(uint32_t swizzle) {
  return swizzle == WARPTRACE_HOST_TMA_SWIZZLE_128B   ? 7u
         : swizzle == WARPTRACE_HOST_TMA_SWIZZLE_64B ? 3u
         : swizzle == WARPTRACE_HOST_TMA_SWIZZLE_32B ? 1u
                                                      : 0u;
}
// The alignment a box's shared-memory address needs: the swizzle's period, else 128.
inline uint64_t SharedAlignment(uint32_t swizzle) {
  return swizzle == WARPTRACE_HOST_TMA_SWIZZLE_128B   ? 1024u
         : swizzle == WARPTRACE_HOST_TMA_SWIZZLE_64B ? 512u
         : swizzle == WARPTRACE_HOST_TMA_SWIZZLE_32B ? 256u
                                                      : 128u;
}
// Where byte offset `o` of the dense box lands in shared memory.
inline uint64_t Swizzled(uint64_t o, uint32_t mask) { return o ^ (((o >> 7) & mask) << 4); }

// One element of `elem` bytes (1, 2, 4 or 8), copied with a constant size: no call of
// memcpy, which sanitize mode sees as the kernel's own access (sanitize_host.h).
inline void CopyElement(unsigned char* dst, const unsigned char* src, uint32_t elem) {
  switch (elem) {
    case 1: *dst = *src; return;
    case 2: __builtin_memcpy(dst, src, 2); return;
    case 4: __builtin_memcpy(dst, src, 4); return;
    default: __builtin_memcpy(dst, src, 8); return;
  }
}

inline uint64_t BoxBytes(const WarptraceHostTensorMap& m) {
  uint64_t bytes = m.element_bytes;
  for (uint32_t i = 0; i < m.rank; ++i) bytes *= m.box[i];
  return bytes;
}

// Checks `m` is a descriptor of this version for a `rank`-D copy with its box at `smem`;
// writes why not to `error` and returns false.
inline bool Check(const WarptraceHostTensorMap& m, uint32_t rank, const void* smem,
                  char* error, size_t error_size) {
  if (m.magic != WARPTRACE_HOST_TMA_MAGIC || m.version != WARPTRACE_HOST_TMA_VERSION) {
    snprintf(error, error_size,
             "the tensor map is not one warptrace encoded (magic 0x%08x, version %u; pass a "
             "KernelArg::TensorMap for the CUtensorMap parameter, and the map by pointer to "
             "the parameter itself)",
             m.magic, m.version);
    return false;
  }
  if (m.rank != rank) {
    snprintf(error, error_size, "a %u-D copy through a tensor map of rank %u", rank, m.rank);
    return false;
  }
  const uint64_t align = SharedAlignment(m.swizzle);
  const uintptr_t address = reinterpret_cast<uintptr_t>(smem);
  if (address % align != 0) {
    snprintf(error, error_size,
             "the shared-memory box address %p is not %llu-byte aligned (%s; it is %llu bytes "
             "past a boundary): align the stage buffer (__align__(%llu))",
             smem, static_cast<unsigned long long>(align),
             m.swizzle == WARPTRACE_HOST_TMA_SWIZZLE_NONE
                 ? "cp.async.bulk.tensor needs 128"
                 : "a swizzled box must start at its pattern's period: 256 bytes for 32B, 512 "
                   "for 64B, 1024 for 128B",
             static_cast<unsigned long long>(address % align),
             static_cast<unsigned long long>(align));
    return false;
  }
  return true;
}

// The canonical quiet NaN of an element of `bytes` bytes and CUtensorMapDataType `type`
// (9 = bf16), little-endian in `out`.
inline void NanBits(uint32_t bytes, uint32_t type, unsigned char* out) {
  uint64_t bits = 0;
  if (bytes == 2) bits = type == 9u ? 0x7fc0u : 0x7e00u;
  if (bytes == 4) bits = 0x7fc00000u;
  if (bytes == 8) bits = 0x7ff8000000000000ull;
  for (uint32_t i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(bits >> (8 * i));
}

// Copies the box at element coordinates `c` between the tensor and the dense (swizzled) box
// at `smem`: a load (store == false) fills out-of-bounds elements; a store skips them.
// Assumes Check passed. Not instrumented in sanitize mode: the caller reports the box's
// shared-memory bytes as the async proxy's access (tma_sm90.cuh TmaCopy).
WARPTRACE_HOST_UNINSTRUMENTED inline void CopyBox(const WarptraceHostTensorMap& m, void* smem,
                                                  const int32_t* c, bool store) {
  const uint32_t elem = m.element_bytes;
  const uint32_t mask = SwizzleMask(m.swizzle);
  unsigned char fill[8] = {};
  if (m.oob_fill == WARPTRACE_HOST_TMA_FILL_NAN) NanBits(elem, m.data_type, fill);
  unsigned char* box = static_cast<unsigned char*>(smem);
  const uint64_t row_bytes = uint64_t{m.box[0]} * elem;  // a multiple of 16
  uint32_t box_outer[4] = {1, 1, 1, 1};
  for (uint32_t d = 1; d < m.rank; ++d) box_outer[d - 1] = m.box[d];
  uint64_t row = 0;  // the box row (all dimensions but 0) being copied
  for (uint32_t i4 = 0; i4 < box_outer[3]; ++i4) {
    for (uint32_t i3 = 0; i3 < box_outer[2]; ++i3) {
      for (uint32_t i2 = 0; i2 < box_outer[1]; ++i2) {
        for (uint32_t i1 = 0; i1 < box_outer[0]; ++i1, ++row) {
          const uint32_t index[4] = {i1, i2, i3, i4};
          bool row_in = true;
          uint64_t row_offset = 0;  // bytes from global_address to element (0, c1+i1, ...)
          for (uint32_t d = 1; d < m.rank; ++d) {
            const int64_t g = static_cast<int64_t>(c[d]) + index[d - 1];
            if (g < 0 || static_cast<uint64_t>(g) >= m.dims[d]) {
              row_in = false;
              break;
            }
            row_offset += static_cast<uint64_t>(g) * m.strides[d - 1];
          }
          const int64_t g0 = c[0];
          const bool chunks_in = row_in && g0 >= 0 &&
                                 static_cast<uint64_t>(g0) + m.box[0] <= m.dims[0];
#if defined(WARPTRACE_HOST_SANITIZE)
          // A store's global row, reported as the issuing thread's write (the races check
          // between blocks; global_races.h). Rows the tensor's edge cuts are not reported.
          if (store && chunks_in) {
            WARPTRACE_HOST_ACCESS(reinterpret_cast<unsigned char*>(m.global_address) +
                                      row_offset + static_cast<uint64_t>(g0) * elem,
                                  row_bytes, WARPTRACE_HOST_ACCESS_WRITE);
          }
#endif
          for (uint64_t o = 0; o < row_bytes; o += 16) {
            unsigned char* s = box + Swizzled(row * row_bytes + o, mask);
            if (chunks_in) {  // the whole row inside: 16-byte chunks
              unsigned char* g = reinterpret_cast<unsigned char*>(m.global_address) +
                                 row_offset + static_cast<uint64_t>(g0) * elem + o;
              if (store) {
                __builtin_memcpy(g, s, 16);
              } else {
                __builtin_memcpy(s, g, 16);
              }
              continue;
            }
            for (uint32_t e = 0; e < 16; e += elem) {
              const int64_t x = g0 + static_cast<int64_t>((o + e) / elem);
              const bool in = row_in && x >= 0 && static_cast<uint64_t>(x) < m.dims[0];
              unsigned char* g = in ? reinterpret_cast<unsigned char*>(m.global_address) +
                                          row_offset + static_cast<uint64_t>(x) * elem
                                    : nullptr;
              if (store) {
                if (in) CopyElement(g, s + e, elem);
              } else {
                CopyElement(s + e, in ? g : fill, elem);
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace warptrace_host_tma

#endif  // WARPTRACE_JIT_HOST_HOST_TMA_H_
