#include "jit/platform/tensor_map.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/enum_table.h"

namespace warptrace {
namespace {

constexpr uint64_t kMaxDim = uint64_t{1} << 32;
constexpr uint64_t kMaxStride = uint64_t{1} << 40;
constexpr uint32_t kMaxBox = 256;

bool IsFloat(TensorMapDataType type) {
  return type == TensorMapDataType::kFloat16 || type == TensorMapDataType::kFloat32 ||
         type == TensorMapDataType::kFloat64 || type == TensorMapDataType::kBFloat16;
}

}  // namespace

uint32_t ElementBytes(TensorMapDataType type) {
  switch (type) {
    case TensorMapDataType::kUInt8:
      return 1;
    case TensorMapDataType::kUInt16:
    case TensorMapDataType::kFloat16:
    case TensorMapDataType::kBFloat16:
      return 2;
    case TensorMapDataType::kUInt32:
    case TensorMapDataType::kInt32:
    case TensorMapDataType::kFloat32:
      return 4;
    case TensorMapDataType::kFloat64:
      return 8;
  }
  return 0;
}

namespace {

constexpr EnumTable<TensorMapDataType, 8> kDataTypes{"tensor map data type", {{
    {TensorMapDataType::kUInt8, "u8"},
    {TensorMapDataType::kUInt16, "u16"},
    {TensorMapDataType::kUInt32, "u32"},
    {TensorMapDataType::kInt32, "s32"},
    {TensorMapDataType::kFloat16, "f16"},
    {TensorMapDataType::kFloat32, "f32"},
    {TensorMapDataType::kFloat64, "f64"},
    {TensorMapDataType::kBFloat16, "bf16"},
}}};
// (The values are CUtensorMapDataType's, not 0..7: no Covers check.)

}  // namespace

const char* DataTypeName(TensorMapDataType type) { return kDataTypes.Name(type); }

namespace {

constexpr EnumTable<TensorMapSwizzle, 4> kSwizzles{"swizzle", {{
    {TensorMapSwizzle::kNone, "none"},
    {TensorMapSwizzle::k32B, "32B"},
    {TensorMapSwizzle::k64B, "64B"},
    {TensorMapSwizzle::k128B, "128B"},
}}};
static_assert(kSwizzles.Covers(4));

}  // namespace

const char* SwizzleName(TensorMapSwizzle swizzle) { return kSwizzles.Name(swizzle); }

uint32_t SwizzleBytes(TensorMapSwizzle swizzle) {
  switch (swizzle) {
    case TensorMapSwizzle::kNone:
      return 0;
    case TensorMapSwizzle::k32B:
      return 32;
    case TensorMapSwizzle::k64B:
      return 64;
    case TensorMapSwizzle::k128B:
      return 128;
  }
  return 0;
}

uint64_t BoxBytes(const TensorMapSpec& spec) {
  uint64_t bytes = ElementBytes(spec.type);
  for (uint32_t b : spec.box) bytes *= b;
  return bytes;
}

std::string DescribeTensorMap(const TensorMapSpec& spec) {
  std::vector<uint64_t> dims(spec.dims.rbegin(), spec.dims.rend());
  std::vector<uint32_t> box(spec.box.rbegin(), spec.box.rend());
  return absl::StrCat(DataTypeName(spec.type), " [", absl::StrJoin(dims, " x "), "] box [",
                      absl::StrJoin(box, " x "), "] swizzle ", SwizzleName(spec.swizzle));
}

absl::Status ValidateTensorMap(const TensorMapSpec& spec, uint64_t buffer_bytes,
                               uint64_t global_address, absl::string_view what) {
  auto fail = [&](auto&&... parts) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor map ", what, " (", DescribeTensorMap(spec), "): ", parts...));
  };
  const size_t rank = spec.dims.size();
  if (rank < 1 || rank > 5) {
    return fail("rank ", rank, ": cuTensorMapEncodeTiled takes 1 to 5 dimensions");
  }
  if (spec.strides_bytes.size() != rank - 1) {
    return fail(spec.strides_bytes.size(), " strides for rank ", rank, ": give rank - 1 = ",
                rank - 1, " byte strides (dimensions 1..", rank - 1,
                "; dimension 0 is contiguous)");
  }
  if (spec.box.size() != rank) {
    return fail(spec.box.size(), " box dimensions for rank ", rank, ": give one per dimension");
  }
  const uint32_t elem = ElementBytes(spec.type);
  if (elem == 0) return fail("unknown element type ", static_cast<uint32_t>(spec.type));
  if (global_address % 16 != 0) {
    return fail("global address 0x", absl::Hex(global_address),
                " (buffer + offset_bytes ", spec.offset_bytes,
                ") is not 16-byte aligned, as cuTensorMapEncodeTiled requires");
  }
  for (size_t i = 0; i < rank; ++i) {
    if (spec.dims[i] == 0 || spec.dims[i] > kMaxDim) {
      return fail("dims[", i, "] = ", spec.dims[i], ": each dimension must be in 1..2^32");
    }
  }
  for (size_t i = 0; i < rank - 1; ++i) {
    const uint64_t s = spec.strides_bytes[i];
    if (s % 16 != 0) {
      return fail("strides_bytes[", i, "] = ", s, " (dimension ", i + 1,
                  ") is not a multiple of 16 bytes, as cuTensorMapEncodeTiled requires; pad the "
                  "rows");
    }
    if (s == 0 || s >= kMaxStride) {
      return fail("strides_bytes[", i, "] = ", s, " (dimension ", i + 1,
                  ") must be in 16..2^40 - 16 bytes");
    }
  }
  for (size_t i = 0; i < rank; ++i) {
    if (spec.box[i] == 0 || spec.box[i] > kMaxBox) {
      return fail("box[", i, "] = ", spec.box[i], ": each box dimension must be in 1..256");
    }
  }
  const uint64_t inner_bytes = uint64_t{spec.box[0]} * elem;
  if (inner_bytes % 16 != 0) {
    return fail("the box's inner dimension is ", inner_bytes, " bytes (box[0] = ", spec.box[0],
                " x ", elem, "), not a multiple of 16 bytes, as cuTensorMapEncodeTiled requires");
  }
  const uint32_t span = SwizzleBytes(spec.swizzle);
  if (span != 0 && inner_bytes > span) {
    return fail("the box's inner dimension is ", inner_bytes, " bytes, more than the ", span,
                "-byte span of swizzle ", SwizzleName(spec.swizzle),
                " (cuTensorMapEncodeTiled requires at most ", span,
                "); use a narrower box or a wider swizzle");
  }
  if (spec.oob_fill == TensorMapOobFill::kNanRequestZeroFma && !IsFloat(spec.type)) {
    return fail("a NaN out-of-bounds fill needs a floating-point element type, not ",
                DataTypeName(spec.type));
  }
  // The tensor's last byte must lie in the buffer (what the map may read or write).
  unsigned __int128 last = spec.offset_bytes + (spec.dims[0] - 1) * uint64_t{elem} + elem;
  for (size_t i = 1; i < rank; ++i) {
    last += static_cast<unsigned __int128>(spec.dims[i] - 1) * spec.strides_bytes[i - 1];
  }
  if (last > buffer_bytes) {
    return fail("the tensor ends at byte ", static_cast<uint64_t>(last),
                " (offset_bytes + the last element's offset + its size) but the buffer it views "
                "has ",
                buffer_bytes, " bytes");
  }
  return absl::OkStatus();
}

}  // namespace warptrace
