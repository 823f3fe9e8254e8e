// ValidateTensorMap: one test per rule of cuTensorMapEncodeTiled (CUDA driver API reference,
// "Tensor Map Object Management"), each with the message that names the argument and the
// rule, and a valid map at each rule's boundary.
#include "jit/platform/tensor_map.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr char kWhat[] = "argument 3 (tmA) of kernel k";

// 128 rows of 64 bf16 (128 bytes each), a 64 x 32 box with 128B swizzle: valid.
TensorMapSpec Valid() {
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kBFloat16;
  spec.dims = {64, 128};
  spec.strides_bytes = {128};
  spec.box = {64, 32};
  spec.swizzle = TensorMapSwizzle::k128B;
  return spec;
}

constexpr uint64_t kBufferBytes = 128 * 128;
constexpr uint64_t kAddress = 0x7f0000001000;

absl::Status Check(const TensorMapSpec& spec, uint64_t buffer = kBufferBytes,
                   uint64_t address = kAddress) {
  return ValidateTensorMap(spec, buffer, address + spec.offset_bytes, kWhat);
}

::testing::Matcher<absl::Status> Rejected(const std::string& rule) {
  return StatusIs(absl::StatusCode::kInvalidArgument,
                  AllOf(HasSubstr("tensor map argument 3 (tmA) of kernel k ("), HasSubstr(rule)));
}

TEST(TensorMapTest, AValidMapPasses) {
  EXPECT_THAT(Check(Valid()), IsOk());
  EXPECT_EQ(BoxBytes(Valid()), 64u * 32u * 2u);
  EXPECT_EQ(DescribeTensorMap(Valid()), "bf16 [128 x 64] box [32 x 64] swizzle 128B");
}

TEST(TensorMapTest, RankMustBeOneToFive) {
  TensorMapSpec spec;
  EXPECT_THAT(Check(spec), Rejected("rank 0: cuTensorMapEncodeTiled takes 1 to 5 dimensions"));
  spec.dims = {16, 1, 1, 1, 1, 1};
  spec.strides_bytes = {64, 64, 64, 64, 64};
  spec.box = {16, 1, 1, 1, 1, 1};
  EXPECT_THAT(Check(spec), Rejected("rank 6"));
  spec.dims.pop_back();
  spec.strides_bytes.pop_back();
  spec.box.pop_back();
  spec.type = TensorMapDataType::kFloat32;
  EXPECT_THAT(Check(spec, 64), IsOk());  // rank 5
}

TEST(TensorMapTest, StridesAndBoxNeedOneEntryPerDimension) {
  TensorMapSpec spec = Valid();
  spec.strides_bytes = {128, 128};
  EXPECT_THAT(Check(spec), Rejected("2 strides for rank 2: give rank - 1 = 1 byte strides"));
  spec = Valid();
  spec.box = {64};
  EXPECT_THAT(Check(spec), Rejected("1 box dimensions for rank 2"));
}

TEST(TensorMapTest, GlobalAddressMustBeSixteenByteAligned) {
  TensorMapSpec spec = Valid();
  spec.offset_bytes = 8;
  EXPECT_THAT(Check(spec, kBufferBytes + 16), Rejected("is not 16-byte aligned"));
  spec.offset_bytes = 16;
  EXPECT_THAT(Check(spec, kBufferBytes + 16), IsOk());
}

TEST(TensorMapTest, DimensionsMustBeOneToTwoToTheThirtySecond) {
  TensorMapSpec spec = Valid();
  spec.dims[1] = 0;
  EXPECT_THAT(Check(spec), Rejected("dims[1] = 0: each dimension must be in 1..2^32"));
  spec.dims = {64, (uint64_t{1} << 32) + 1};
  EXPECT_THAT(Check(spec, ~uint64_t{0}), Rejected("dims[1] = 4294967297"));
  spec.dims = {64, uint64_t{1} << 32};
  spec.strides_bytes = {128};
  EXPECT_THAT(Check(spec, ~uint64_t{0}), IsOk());
}

TEST(TensorMapTest, StridesMustBeMultiplesOfSixteenBelowTwoToTheFortieth) {
  TensorMapSpec spec = Valid();
  spec.strides_bytes = {136 - 8 + 4};
  EXPECT_THAT(Check(spec, 1 << 20),
              Rejected("strides_bytes[0] = 132 (dimension 1) is not a multiple of 16 bytes"));
  spec.strides_bytes = {uint64_t{1} << 40};
  EXPECT_THAT(Check(spec, ~uint64_t{0}), Rejected("must be in 16..2^40 - 16 bytes"));
  spec.strides_bytes = {(uint64_t{1} << 40) - 16};
  spec.dims = {64, 2};
  EXPECT_THAT(Check(spec, ~uint64_t{0}), IsOk());
}

TEST(TensorMapTest, BoxDimensionsMustBeOneToTwoHundredFiftySix) {
  TensorMapSpec spec = Valid();
  spec.box[1] = 257;
  EXPECT_THAT(Check(spec), Rejected("box[1] = 257: each box dimension must be in 1..256"));
  spec.box[1] = 0;
  EXPECT_THAT(Check(spec), Rejected("box[1] = 0"));
  spec.box[1] = 256;
  EXPECT_THAT(Check(spec), IsOk());
}

TEST(TensorMapTest, InnerBoxBytesMustBeAMultipleOfSixteen) {
  TensorMapSpec spec = Valid();
  spec.swizzle = TensorMapSwizzle::kNone;
  spec.box[0] = 12;  // 24 bytes
  EXPECT_THAT(Check(spec), Rejected("the box's inner dimension is 24 bytes (box[0] = 12 x 2), "
                                    "not a multiple of 16 bytes"));
  spec.box[0] = 8;
  EXPECT_THAT(Check(spec), IsOk());
}

TEST(TensorMapTest, InnerBoxBytesMustFitTheSwizzleSpan) {
  for (auto [swizzle, span] : {std::pair{TensorMapSwizzle::k32B, 32u},
                               std::pair{TensorMapSwizzle::k64B, 64u},
                               std::pair{TensorMapSwizzle::k128B, 128u}}) {
    TensorMapSpec spec = Valid();
    spec.swizzle = swizzle;
    spec.box[0] = span / 2 + 8;  // 16 bytes over the span
    EXPECT_THAT(Check(spec), Rejected("more than the " + std::to_string(span) + "-byte span"));
    spec.box[0] = span / 2;
    EXPECT_THAT(Check(spec), IsOk());
  }
  TensorMapSpec spec = Valid();
  spec.swizzle = TensorMapSwizzle::kNone;
  spec.box = {128, 8};  // 256 bytes: fine without a swizzle
  spec.dims = {128, 128};
  spec.strides_bytes = {256};
  EXPECT_THAT(Check(spec, 256 * 128), IsOk());
}

TEST(TensorMapTest, NanFillNeedsAFloatingPointType) {
  TensorMapSpec spec = Valid();
  spec.oob_fill = TensorMapOobFill::kNanRequestZeroFma;
  EXPECT_THAT(Check(spec), IsOk());
  spec.type = TensorMapDataType::kUInt16;
  EXPECT_THAT(Check(spec), Rejected("a NaN out-of-bounds fill needs a floating-point element "
                                    "type, not u16"));
}

TEST(TensorMapTest, TheTensorMustLieInsideItsBuffer) {
  const TensorMapSpec spec = Valid();
  EXPECT_THAT(Check(spec, kBufferBytes - 1),
              Rejected("the tensor ends at byte 16384 (offset_bytes + the last element's offset + "
                       "its size) but the buffer it views has 16383 bytes"));
  TensorMapSpec padded = spec;  // the last row needs only its elements, not the full stride
  padded.strides_bytes = {256};
  EXPECT_THAT(Check(padded, 127 * 256 + 128), IsOk());
}

TEST(TensorMapTest, ElementSizesFollowTheDriversTypes) {
  EXPECT_EQ(ElementBytes(TensorMapDataType::kUInt8), 1u);
  EXPECT_EQ(ElementBytes(TensorMapDataType::kFloat16), 2u);
  EXPECT_EQ(ElementBytes(TensorMapDataType::kBFloat16), 2u);
  EXPECT_EQ(ElementBytes(TensorMapDataType::kFloat32), 4u);
  EXPECT_EQ(ElementBytes(TensorMapDataType::kInt32), 4u);
  EXPECT_EQ(ElementBytes(TensorMapDataType::kFloat64), 8u);
}

}  // namespace
}  // namespace warptrace
