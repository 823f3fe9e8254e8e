// TensorMapSpec: what a TMA tensor map (CUtensorMap) describes, in warptrace's words, and
// the rules the driver's cuTensorMapEncodeTiled enforces, checked before any launch on both
// backends so that a map the driver would reject is the same clear error everywhere.
//
//   TensorMapSpec spec;                         // a 2-D bf16 matrix, rows of 64 elements
//   spec.type = TensorMapDataType::kBFloat16;
//   spec.dims = {64, 128};                      // innermost first: 64 columns, 128 rows
//   spec.strides_bytes = {64 * 2};              // rank - 1 entries: row pitch in bytes
//   spec.box = {64, 32};                        // a TMA copy moves 64 x 32 elements
//   spec.swizzle = TensorMapSwizzle::k128B;
//   RETURN_IF_ERROR(ValidateTensorMap(spec, buffer_bytes, device_address, "argument 0 (tmA)"));
//
// On CUDA the spec is encoded by cuTensorMapEncodeTiled (jit/cuda/cuda_device.cc); on the
// host backend into warptrace's own 128-byte descriptor with the same meaning
// (jit/host/device/host_tma.h). Both see the device address of the buffer the map views plus
// `offset_bytes`.
#ifndef WARPTRACE_JIT_PLATFORM_TENSOR_MAP_H_
#define WARPTRACE_JIT_PLATFORM_TENSOR_MAP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace warptrace {

// The element types; the values are CUtensorMapDataType's (cuda.h).
enum class TensorMapDataType : uint32_t {
  kUInt8 = 0,
  kUInt16 = 1,
  kUInt32 = 2,
  kInt32 = 3,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBFloat16 = 9,
};

// Shared-memory swizzle of the box; the values are CUtensorMapSwizzle's.
enum class TensorMapSwizzle : uint32_t { kNone = 0, k32B = 1, k64B = 2, k128B = 3 };

// What out-of-bounds elements of a load read; the values are CUtensorMapFloatOOBfill's.
// kNanRequestZeroFma: a NaN (floating-point types only).
enum class TensorMapOobFill : uint32_t { kZero = 0, kNanRequestZeroFma = 1 };

struct TensorMapSpec {
  TensorMapDataType type = TensorMapDataType::kFloat32;
  // Elements per dimension, innermost first; rank = dims.size() (1..5).
  std::vector<uint64_t> dims;
  // Byte strides of dimensions 1..rank-1 (rank - 1 entries; dimension 0 is contiguous).
  std::vector<uint64_t> strides_bytes;
  // Elements a copy moves per dimension (rank entries), innermost first.
  std::vector<uint32_t> box;
  TensorMapSwizzle swizzle = TensorMapSwizzle::kNone;
  TensorMapOobFill oob_fill = TensorMapOobFill::kZero;
  // Where the tensor starts in the buffer the map views (the global address is the
  // buffer's device address plus this; it must be 16-byte aligned).
  uint64_t offset_bytes = 0;
};

// 1, 2, 4 or 8.
uint32_t ElementBytes(TensorMapDataType type);
const char* DataTypeName(TensorMapDataType type);  // "bf16", "f32", ...
const char* SwizzleName(TensorMapSwizzle swizzle);  // "none", "32B", ...
// 0 for kNone, else 32, 64 or 128.
uint32_t SwizzleBytes(TensorMapSwizzle swizzle);
// Bytes one copy of the box moves (and completes on the mbarrier, also for a box partly
// out of bounds): the product of `box` times the element size.
uint64_t BoxBytes(const TensorMapSpec& spec);

// The rules of cuTensorMapEncodeTiled (CUDA driver API reference, "Tensor Map Object
// Management") for a tiled map without interleave and with element strides of 1, plus
// the buffer's bounds:
//   rank 1..5; dims, strides and box with rank, rank - 1 and rank entries;
//   the global address (device address + offset_bytes) 16-byte aligned;
//   every dim in 1..2^32; every stride a multiple of 16 and below 2^40;
//   every box entry in 1..256; box[0] * element bytes a multiple of 16;
//   with a swizzle, box[0] * element bytes at most the swizzle's span (32, 64, 128);
//   a NaN fill only for floating-point types;
//   (warptrace) the last element of the tensor inside the buffer: offset_bytes +
//   sum((dims[i] - 1) * stride_i) + element bytes <= buffer_bytes.
// InvalidArgument naming `what` (e.g. "argument 2 (tmA) of kernel k") and the rule broken.
absl::Status ValidateTensorMap(const TensorMapSpec& spec, uint64_t buffer_bytes,
                               uint64_t global_address, absl::string_view what);

// "bf16 [128 x 64] box [32 x 64] swizzle 128B": for messages (outermost first, as C arrays).
std::string DescribeTensorMap(const TensorMapSpec& spec);

// A tensor map's 128 bytes as passed to the kernel (CUtensorMap on both backends).
struct alignas(64) TensorMapBytes {
  unsigned char bytes[128] = {};
};
static_assert(sizeof(TensorMapBytes) == 128, "CUtensorMap is 128 bytes");

}  // namespace warptrace

#endif  // WARPTRACE_JIT_PLATFORM_TENSOR_MAP_H_
