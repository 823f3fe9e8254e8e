// The host backend checks every wgmma descriptor against the layout the TMA copy wrote its
// tile in (jit/host/device/wgmma_host.h): a kernel whose descriptors use another swizzle or stride
// byte offset than the tensor map's 128B swizzle reads its tiles scrambled (on a GPU too,
// silently). A real builder kernel (one warpgroup: two TMA loads, one wgmma group of four
// m64n64k16, C = A * B^T) runs correctly with the right descriptors and fails the launch,
// naming the wgmma's and the copy's builder paths and both layouts, with the wrong ones.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/platform/tensor_map.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr uint32_t kTile = 64;  // M = N = K = 64

AsyncCopySpec Load(const std::string& name, const std::string& map, const std::string& dst) {
  AsyncCopySpec load;
  load.name = name;
  load.tensor_map = map;
  load.dst = dst;
  load.coords = {"0", "0"};
  load.box = {kTile, kTile};
  load.element_bytes = 2;
  load.barrier = "full";
  load.barrier_index = "0";
  load.barrier_phase = "0";
  return load;
}

// `swizzle` and `sbo`: the descriptors' (the tensor maps write 128B swizzle, SBO 1024).
Kernel WgmmaKernel(const std::string& swizzle, uint32_t sbo) {
  KernelBuilder b("wgmma_layout");
  b.Param("CUtensorMap", "tmA").Param("CUtensorMap", "tmB").Param("float*", "c");
  b.Grid({1, 1, 1}).Block({128, 1, 1});
  b.PhaseBarriers("full", 1, 1);
  b.Stmt(
      "__shared__ __align__(1024) unsigned short sa[64 * 64];\n"
      "__shared__ __align__(1024) unsigned short sb[64 * 64];\n"
      "float acc[32];");
  b.AsyncCopy(Load("load A", "tmA", "sa"));
  b.AsyncCopy(Load("load B", "tmB", "sb"));
  b.Arrive("full", 0, 0, ArriveBy::kOneThread);
  b.WaitPhase("full", 0, 0);
  b.MmaGroup("mma", [&] {
    b.Stmt(absl::StrCat(
        "for (int kk = 0; kk < 4; ++kk) {\n"
        "  const unsigned long long da = warptrace_wgmma_desc(sa + kk * 16, 16u, ", sbo, "u, ",
        swizzle, ");\n"
        "  const unsigned long long db = warptrace_wgmma_desc(sb + kk * 16, 16u, ", sbo, "u, ",
        swizzle, ");\n"
        "  warptrace_wgmma_mma_async_bf16_ss<64>(acc, da, db, kk > 0 ? 1 : 0);\n"
        "}"));
  });
  b.WaitMmaGroups(0);
  // The accumulator layout: d[i] of lane l of warp w is row 16w + l/4 + 8((i>>1)&1),
  // column 8(i>>2) + 2(l%4) + (i&1).
  b.Stmt(
      "const unsigned int w = threadIdx.x / 32, l = threadIdx.x % 32;\n"
      "for (int i = 0; i < 32; ++i) {\n"
      "  c[(16 * w + l / 4 + 8 * ((i >> 1) & 1)) * 64 + 8 * (i >> 2) + 2 * (l % 4) + (i & 1)] = "
      "acc[i];\n"
      "}");
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return *kernel;
}

TensorMapSpec Map() {
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kBFloat16;
  spec.dims = {kTile, kTile};
  spec.strides_bytes = {kTile * 2};
  spec.box = {kTile, kTile};
  spec.swizzle = TensorMapSwizzle::k128B;
  return spec;
}

uint16_t Bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);  // exact for the small integers used
}

class WgmmaLayoutTest : public testing::HostRunTest {
 protected:
  void SetUp() override {
    testing::HostRunTest::SetUp();
    if (HasFatalFailure()) return;
    for (uint32_t i = 0; i < kTile * kTile; ++i) {
      fa_[i] = static_cast<float>(static_cast<int>(i * 7 % 5) - 2);
      fb_[i] = static_cast<float>(static_cast<int>(i * 3 % 7) - 3);
      a_[i] = Bf16(fa_[i]);
      b_[i] = Bf16(fb_[i]);
    }
  }
  absl::StatusOr<RunResult> Run(const Kernel& kernel) {
    const std::vector<KernelArg> args = {
        KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(a_)), Map()),
        KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(b_)), Map()),
        KernelArg::Out(absl::MakeSpan(c_))};
    return RunKernel(*device_, kernel, args, RunOptions{});
  }
  std::vector<float> fa_ = std::vector<float>(kTile * kTile);
  std::vector<float> fb_ = std::vector<float>(kTile * kTile);
  std::vector<uint16_t> a_ = std::vector<uint16_t>(kTile * kTile);
  std::vector<uint16_t> b_ = std::vector<uint16_t>(kTile * kTile);
  std::vector<float> c_ = std::vector<float>(kTile * kTile, 0.0f);
};

TEST_F(WgmmaLayoutTest, DescriptorsMatchingTheCopysLayoutComputeC) {
  ASSERT_THAT(Run(WgmmaKernel("WARPTRACE_SWIZZLE_128B", 1024)).status(), IsOk());
  for (uint32_t m = 0; m < kTile; ++m) {
    for (uint32_t n = 0; n < kTile; ++n) {
      float want = 0.0f;
      for (uint32_t k = 0; k < kTile; ++k) want += fa_[m * kTile + k] * fb_[n * kTile + k];
      ASSERT_EQ(c_[m * kTile + n], want) << "C(" << m << ", " << n << ")";
    }
  }
}

TEST_F(WgmmaLayoutTest, ADescriptorSwizzleOtherThanTheTensorMapsFailsNamingBothPaths) {
  EXPECT_THAT(
      Run(WgmmaKernel("WARPTRACE_SWIZZLE_64B", 1024)).status(),
      StatusIs(absl::StatusCode::kAborted,
               AllOf(HasSubstr("at kernel wgmma_layout > mma group mma > statement"),
                     HasSubstr("the A operand's descriptor"), HasSubstr("K-major, 64B swizzle"),
                     HasSubstr("the TMA copy at kernel wgmma_layout > copy load A wrote it "
                               "(box {64, 64} of 2-byte elements, 128B swizzle, rows of 128 "
                               "bytes)"),
                     HasSubstr("WARPTRACE_SWIZZLE_128B and SBO 1024 (8 rows of 128 bytes)"))));
}

TEST_F(WgmmaLayoutTest, AStrideByteOffsetOtherThanTheCopysRowsFails) {
  EXPECT_THAT(Run(WgmmaKernel("WARPTRACE_SWIZZLE_128B", 512)).status(),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("K-major, 128B swizzle, LBO 16, SBO 512"),
                             HasSubstr("copy load A"), HasSubstr("not a sub-tile"))));
}

}  // namespace
}  // namespace warptrace
