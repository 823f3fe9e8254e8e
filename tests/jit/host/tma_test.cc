// TMA on the host backend: tensor maps passed as KernelArg::TensorMap through RunKernel,
// loads (2-D and 3-D, every swizzle, boxes partly and wholly out of bounds, zero and NaN
// fill) and stores (partial boxes) against the reference of tests/jit/primitives/
// tma_kernels.h, and the misuse a GPU would punish silently (a misaligned box, a wrong
// expect_tx count, a map of another rank) as launch errors.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "tests/jit/primitives/tma_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::ReferenceLoad;
using ::warptrace::testing::ReferenceStore;
using ::warptrace::testing::StatusIs;

class TmaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    HostDeviceOptions options;
    options.cache_directory = TestTempPath("cache");
    absl::StatusOr<std::unique_ptr<HostDevice>> device = HostDevice::Create(options);
    ASSERT_THAT(device, IsOk());
    device_ = device->release();
  }
  static void TearDownTestSuite() {
    delete device_;
    device_ = nullptr;
  }

  static absl::Status Run(const Kernel& kernel, const std::vector<KernelArg>& args) {
    RunOptions options;
    return RunKernel(*device_, kernel, args, options).status();
  }

  // Loads the box of `spec` at `coords` from `tensor` (expecting `expect` bytes, the box's
  // bytes when 0) into the shared buffer + `offset`; returns the box's bytes.
  static absl::StatusOr<std::vector<uint8_t>> Load(std::vector<uint8_t> tensor,
                                                   const TensorMapSpec& spec,
                                                   const std::vector<int>& coords,
                                                   uint32_t expect = 0, uint32_t offset = 0) {
    const uint32_t bytes = static_cast<uint32_t>(BoxBytes(spec));
    if (expect == 0) expect = bytes;
    std::vector<uint8_t> out(bytes);
    absl::StatusOr<Kernel> kernel =
        coords.size() == 3 ? testing::TmaLoad3dKernel() : testing::TmaLoad2dKernel();
    if (!kernel.ok()) return kernel.status();
    std::vector<KernelArg> args = {
        KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(tensor)), spec),
        KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(coords[0]),
        KernelArg::Scalar<int>(coords[1])};
    if (coords.size() == 3) {
      args.push_back(KernelArg::Scalar<int>(coords[2]));
      args.push_back(KernelArg::Scalar<unsigned>(expect));
    } else {
      args.push_back(KernelArg::Scalar<unsigned>(expect));
      args.push_back(KernelArg::Scalar<unsigned>(offset));
    }
    args.push_back(KernelArg::Scalar<unsigned>(bytes));
    if (absl::Status s = Run(*kernel, args); !s.ok()) return s;
    return out;
  }

  static HostDevice* device_;
};

HostDevice* TmaTest::device_ = nullptr;

// A tensor of `bytes` bytes, each distinct from its neighbours (never 0, so a fill shows).
std::vector<uint8_t> Pattern(uint64_t bytes) {
  std::vector<uint8_t> v(bytes);
  for (uint64_t i = 0; i < bytes; ++i) v[i] = static_cast<uint8_t>(1 + (i * 7 + i / 251) % 255);
  return v;
}

uint64_t FootprintBytes(const TensorMapSpec& spec) {
  uint64_t last = spec.offset_bytes + spec.dims[0] * ElementBytes(spec.type);
  for (size_t i = 1; i < spec.dims.size(); ++i) {
    last += (spec.dims[i] - 1) * spec.strides_bytes[i - 1];
  }
  return last;
}

// A bf16 matrix of 100 x 40 with padded rows (208 bytes) and a box as wide as the swizzle's
// span (64 bytes without one) and 16 rows.
TensorMapSpec Bf16Matrix(TensorMapSwizzle swizzle) {
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kBFloat16;
  spec.dims = {100, 40};
  spec.strides_bytes = {208};
  const uint32_t span = SwizzleBytes(swizzle) == 0 ? 64 : SwizzleBytes(swizzle);
  spec.box = {span / 2, 16};
  spec.swizzle = swizzle;
  return spec;
}

TEST_F(TmaTest, LoadsCopyTheBoxWithEverySwizzleAndFillOutOfBoundsWithZeros) {
  for (TensorMapSwizzle swizzle : {TensorMapSwizzle::kNone, TensorMapSwizzle::k32B,
                                   TensorMapSwizzle::k64B, TensorMapSwizzle::k128B}) {
    const TensorMapSpec spec = Bf16Matrix(swizzle);
    const std::vector<uint8_t> tensor = Pattern(FootprintBytes(spec));
    const int w = static_cast<int>(spec.box[0]);
    // Inside, in the middle, over the right and bottom edges, before the start, wholly out.
    for (const std::vector<int>& c : std::vector<std::vector<int>>{
             {0, 0}, {8, 5}, {100 - w / 2, 40 - 5}, {-4, -3}, {-w, 0}, {110, 50}}) {
      SCOPED_TRACE(absl::StrCat("swizzle ", SwizzleName(swizzle), " at (", c[0], ", ", c[1], ")"));
      absl::StatusOr<std::vector<uint8_t>> box = Load(tensor, spec, c);
      ASSERT_THAT(box, IsOk());  // the full box's bytes completed the phase
      EXPECT_EQ(*box, ReferenceLoad(tensor, spec, c));
    }
  }
}

TEST_F(TmaTest, ASwizzledLoadMovesSixteenByteChunksWithinEachLine) {
  // The pattern itself, independent of any reference code: a 128B-swizzled box of 64 bf16
  // columns x 8 rows puts chunk j of row r (bytes 16j..16j+15 of the row) at chunk j ^ r.
  TensorMapSpec spec = Bf16Matrix(TensorMapSwizzle::k128B);
  spec.box = {64, 8};
  const std::vector<uint8_t> tensor = Pattern(FootprintBytes(spec));
  absl::StatusOr<std::vector<uint8_t>> box = Load(tensor, spec, {0, 0});
  ASSERT_THAT(box, IsOk());
  for (int r = 0; r < 8; ++r) {
    for (int j = 0; j < 8; ++j) {
      const uint8_t* want = &tensor[r * 208 + j * 16];
      const uint8_t* got = &(*box)[r * 128 + (j ^ r) * 16];
      EXPECT_EQ(std::memcmp(want, got, 16), 0) << "row " << r << " chunk " << j;
    }
  }
}

TEST_F(TmaTest, ThreeDimensionalLoadsClipEveryDimension) {
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kFloat32;
  spec.dims = {20, 9, 5};
  spec.strides_bytes = {96, 96 * 9};
  spec.box = {8, 4, 3};
  spec.swizzle = TensorMapSwizzle::k32B;
  const std::vector<uint8_t> tensor = Pattern(FootprintBytes(spec));
  for (const std::vector<int>& c :
       std::vector<std::vector<int>>{{0, 0, 0}, {16, 7, 3}, {-2, 0, -1}, {4, 2, 1}}) {
    SCOPED_TRACE(absl::StrCat("(", c[0], ", ", c[1], ", ", c[2], ")"));
    absl::StatusOr<std::vector<uint8_t>> box = Load(tensor, spec, c);
    ASSERT_THAT(box, IsOk());
    EXPECT_EQ(*box, ReferenceLoad(tensor, spec, c));
  }
}

TEST_F(TmaTest, NanFillMakesOutOfBoundsElementsNaN) {
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kFloat32;
  spec.dims = {10, 6};
  spec.strides_bytes = {48};
  spec.box = {8, 4};
  spec.oob_fill = TensorMapOobFill::kNanRequestZeroFma;
  std::vector<uint8_t> tensor(FootprintBytes(spec));
  for (size_t i = 0; i + 4 <= tensor.size(); i += 4) {
    const float v = static_cast<float>(i);
    std::memcpy(&tensor[i], &v, 4);
  }
  const std::vector<int> c = {5, 4};
  absl::StatusOr<std::vector<uint8_t>> box = Load(tensor, spec, c);
  ASSERT_THAT(box, IsOk());
  std::vector<uint64_t> nans;
  std::vector<uint8_t> want = ReferenceLoad(tensor, spec, c, &nans);
  ASSERT_EQ(nans.size(), 32u - 5u * 2u);  // columns 5..9 of rows 4..5 are inside
  for (uint64_t at : nans) {
    float got;
    std::memcpy(&got, &(*box)[at], 4);
    EXPECT_TRUE(std::isnan(got)) << "box byte " << at;
    std::memset(&(*box)[at], 0, 4);  // the rest must match exactly
  }
  EXPECT_EQ(*box, want);
}

TEST_F(TmaTest, StoresWriteOnlyTheInBoundsElementsOfTheBox) {
  absl::StatusOr<Kernel> kernel = testing::TmaStore2dKernel();
  ASSERT_THAT(kernel, IsOk());
  for (TensorMapSwizzle swizzle : {TensorMapSwizzle::kNone, TensorMapSwizzle::k32B,
                                   TensorMapSwizzle::k64B, TensorMapSwizzle::k128B}) {
    const TensorMapSpec spec = Bf16Matrix(swizzle);
    const uint32_t bytes = static_cast<uint32_t>(BoxBytes(spec));
    const std::vector<uint8_t> box = Pattern(bytes + 3);  // offset 3: differs from the tensor
    const std::vector<uint8_t> smem(box.begin() + 3, box.end());
    const int w = static_cast<int>(spec.box[0]);
    for (const std::vector<int>& c :
         std::vector<std::vector<int>>{{8, 5}, {100 - w / 2, 40 - 5}, {-4, -3}}) {
      SCOPED_TRACE(absl::StrCat("swizzle ", SwizzleName(swizzle), " at (", c[0], ", ", c[1], ")"));
      std::vector<uint8_t> tensor(FootprintBytes(spec), 0xab);
      const std::vector<uint8_t> want = ReferenceStore(tensor, spec, c, smem);
      ASSERT_THAT(Run(*kernel, {KernelArg::TensorMap(KernelArg::InOut(absl::MakeSpan(tensor)), spec),
                                KernelArg::In(absl::MakeConstSpan(smem)),
                                KernelArg::Scalar<int>(c[0]), KernelArg::Scalar<int>(c[1]),
                                KernelArg::Scalar<unsigned>(bytes)}),
                  IsOk());
      EXPECT_EQ(tensor, want);
    }
  }
}

TEST_F(TmaTest, ABoxNotAlignedToTheSwizzlePeriodFailsNamingThreadAndInstruction) {
  const TensorMapSpec spec = Bf16Matrix(TensorMapSwizzle::k128B);
  const std::vector<uint8_t> tensor = Pattern(FootprintBytes(spec));
  EXPECT_THAT(Load(tensor, spec, {0, 0}, 0, /*offset=*/512).status(),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("block (0,0,0) thread (0,0,0)"),
                             HasSubstr("cp.async.bulk.tensor.2d.shared::cluster.global"),
                             HasSubstr("not 1024-byte aligned"))));
  const TensorMapSpec plain = Bf16Matrix(TensorMapSwizzle::kNone);
  EXPECT_THAT(Load(tensor, plain, {0, 0}, 0, /*offset=*/64).status(),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("thread (0,0,0)"), HasSubstr("not 128-byte aligned"))));
  // 128-byte aligned is enough without a swizzle.
  EXPECT_THAT(Load(tensor, plain, {0, 0}, 0, /*offset=*/128).status(), IsOk());
}

TEST_F(TmaTest, AnExpectTxCountLargerThanTheBoxLeavesThePhaseOpenAndTheReportSaysSo) {
  const TensorMapSpec spec = Bf16Matrix(TensorMapSwizzle::k64B);
  const std::vector<uint8_t> tensor = Pattern(FootprintBytes(spec));
  const uint32_t bytes = static_cast<uint32_t>(BoxBytes(spec));
  EXPECT_THAT(Load(tensor, spec, {0, 0}, bytes + 48).status(),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       AllOf(HasSubstr("deadlock in block (0,0,0)"),
                             HasSubstr("wait at mbarrier full (shared memory offset"),
                             HasSubstr("(0 of 1 arrivals pending, 48 bytes of transactions "
                                       "still expected)"))));
}

TEST_F(TmaTest, ACopyThroughAMapOfAnotherRankFailsTheLaunch) {
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kFloat32;
  spec.dims = {8, 4, 2};
  spec.strides_bytes = {32, 128};
  spec.box = {8, 4, 2};
  const std::vector<uint8_t> tensor = Pattern(FootprintBytes(spec));
  absl::StatusOr<Kernel> kernel = testing::TmaLoad2dKernel();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint8_t> out(256);
  EXPECT_THAT(Run(*kernel, {KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(tensor)), spec),
                            KernelArg::Out(absl::MakeSpan(out)), KernelArg::Scalar<int>(0),
                            KernelArg::Scalar<int>(0), KernelArg::Scalar<unsigned>(256),
                            KernelArg::Scalar<unsigned>(0), KernelArg::Scalar<unsigned>(256)}),
              StatusIs(absl::StatusCode::kAborted,
                       HasSubstr("a 2-D copy through a tensor map of rank 3")));
}

TEST_F(TmaTest, RunKernelMatchesTensorMapParametersToTensorMapArguments) {
  const TensorMapSpec spec = Bf16Matrix(TensorMapSwizzle::kNone);
  const std::vector<uint8_t> tensor = Pattern(FootprintBytes(spec));
  absl::StatusOr<Kernel> kernel = testing::TmaLoad2dKernel();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint8_t> out(2048);
  auto rest = [&] {
    return std::vector<KernelArg>{KernelArg::Scalar<int>(0), KernelArg::Scalar<int>(0),
                                  KernelArg::Scalar<unsigned>(2048),
                                  KernelArg::Scalar<unsigned>(0),
                                  KernelArg::Scalar<unsigned>(2048)};
  };
  std::vector<KernelArg> plain_buffer = {KernelArg::In(absl::MakeConstSpan(tensor)),
                                         KernelArg::Out(absl::MakeSpan(out))};
  for (const KernelArg& a : rest()) plain_buffer.push_back(a);
  EXPECT_THAT(Run(*kernel, plain_buffer),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("argument 0 (CUtensorMap tm): a In buffer was given"),
                             HasSubstr("KernelArg::TensorMap("))));
  std::vector<KernelArg> map_for_pointer = {
      KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(tensor)), spec),
      KernelArg::TensorMap(KernelArg::Out(absl::MakeSpan(out)), spec)};
  for (const KernelArg& a : rest()) map_for_pointer.push_back(a);
  EXPECT_THAT(Run(*kernel, map_for_pointer),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("argument 1 (unsigned char* out): a TensorMap was given")));
  std::vector<KernelArg> scalar_map = {
      KernelArg::TensorMap(KernelArg::Scalar<int>(1), spec), KernelArg::Out(absl::MakeSpan(out))};
  for (const KernelArg& a : rest()) scalar_map.push_back(a);
  EXPECT_THAT(Run(*kernel, scalar_map),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("needs a buffer")));
}

TEST_F(TmaTest, AMapTheDriverWouldRejectFailsBeforeTheLaunchNamingArgumentAndRule) {
  TensorMapSpec spec = Bf16Matrix(TensorMapSwizzle::kNone);
  spec.strides_bytes = {200};  // 100 bf16 unpadded: not a multiple of 16
  const std::vector<uint8_t> tensor = Pattern(FootprintBytes(spec));
  EXPECT_THAT(Load(tensor, spec, {0, 0}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("tensor map argument 0 (tm) of kernel tma_load_2d"),
                             HasSubstr("strides_bytes[0] = 200"),
                             HasSubstr("not a multiple of 16 bytes"))));
  spec = Bf16Matrix(TensorMapSwizzle::k32B);
  spec.box = {32, 16};  // 64 bytes: more than the 32-byte swizzle span
  EXPECT_THAT(Load(Pattern(FootprintBytes(spec)), spec, {0, 0}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("more than the 32-byte span of swizzle 32B")));
}

}  // namespace
}  // namespace warptrace
