// sm_90a wgmma and setmaxnreg on the host backend (jit/host/device/wgmma_host.h behind
// jit/primitives/wgmma_sm90.cuh): layout conformance against tables derived here from the
// PTX ISA and CuTe, GEMM numerics against a CPU reference, and every misuse rule. The
// kernels are tests/jit/primitives/wgmma_kernels.h (the NVRTC test compiles the same text).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/host/host_device.h"
#ifdef WARPTRACE_WGMMA_TEST_ON_GPU
#include <optional>

#include "jit/cuda/cuda_device.h"
#include "tests/jit/cuda/cuda_driver_presence.h"
#endif
#include "tests/jit/primitives/wgmma_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

#ifdef WARPTRACE_WGMMA_TEST_ON_GPU
// The same checks on a real GPU (tests/jit/cuda:wgmma_gpu_test): the emulation and the
// hardware must agree with the same tables. Every test skips where there is no CUDA driver.
::warptrace::Device* GpuOrNull(std::string* why) {
  static std::string* reason = new std::string();
  static ::warptrace::Device* device = [] () -> ::warptrace::Device* {
    CudaDeviceOptions options;
    options.cache_directory = TestTempPath("wgmma_gpu_cache");
    absl::StatusOr<std::unique_ptr<CudaDevice>> d = CudaDevice::Create(options);
    if (d.ok()) return d->release();
    if (std::optional<std::string> none = ::warptrace::testing::NoCudaDriver()) {
      *reason = *none;
    } else {
      *reason = absl::StrCat("a CUDA driver is present, yet: ", d.status().ToString());
    }
    return nullptr;
  }();
  *why = *reason;
  return device;
}

class GpuEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    std::string why;
    if (GpuOrNull(&why) != nullptr) return;
    if (::warptrace::testing::NoCudaDriver()) GTEST_SKIP() << why;
    FAIL() << why;
  }
};
const ::testing::Environment* const kGpuEnvironment =
    ::testing::AddGlobalTestEnvironment(new GpuEnvironment);

::warptrace::Device& Device() {
  std::string why;
  return *GpuOrNull(&why);
}
#else
::warptrace::Device& Device() {
  static HostDevice* device = [] {
    HostDeviceOptions options;
    options.cache_directory = TestTempPath("wgmma_cache");
    absl::StatusOr<std::unique_ptr<HostDevice>> d = HostDevice::Create(options);
    EXPECT_THAT(d, IsOk());
    return d.ok() ? d->release() : nullptr;
  }();
  return *device;
}
#endif

LoadedKernel& Kernel(const KernelSource& source) {
  static auto* kernels = new std::map<std::string, std::unique_ptr<LoadedKernel>>();
  std::unique_ptr<LoadedKernel>& k = (*kernels)[source.kernel_name];
  if (k == nullptr) {
    absl::StatusOr<std::unique_ptr<LoadedKernel>> loaded = Device().Load(source);
    EXPECT_THAT(loaded, IsOk());
    if (loaded.ok()) k = *std::move(loaded);
  }
  return *k;
}

// Copies `in` to the device, launches, copies `out_words` words back.
template <typename In, typename Out>
absl::Status RunKernel(LoadedKernel& kernel, Dim3 grid, Dim3 block, const std::vector<In>& in,
                 std::vector<Out>* out, size_t out_words) {
  absl::StatusOr<DeviceBuffer> out_buffer = DeviceBuffer::Allocate(Device(), out_words * 4);
  absl::StatusOr<DeviceBuffer> in_buffer =
      DeviceBuffer::Allocate(Device(), std::max<size_t>(in.size(), 1) * sizeof(In));
  if (!out_buffer.ok()) return out_buffer.status();
  if (!in_buffer.ok()) return in_buffer.status();
  if (absl::Status s = out_buffer->Zero(); !s.ok()) return s;
  if (absl::Status s = in_buffer->CopyFrom(in.data(), in.size() * sizeof(In)); !s.ok()) {
    return s;
  }
  void* out_ptr = out_buffer->get();
  void* in_ptr = in_buffer->get();
  void* args[] = {&out_ptr, &in_ptr};
  const absl::Status launched = Device().Launch(kernel, grid, block, 0, args);
  out->resize(out_words);
  if (absl::Status s = out_buffer->CopyTo(out->data(), out_words * 4); !s.ok()) return s;
  return launched;
}

uint16_t Bf16Bits(float f) {  // exact for the small integers used here
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}
float Bf16Value(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// Round to nearest even (the inputs of the GEMM tests are finite).
uint16_t Bf16Round(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// ---- The PTX ISA's register fragments (Warpgroup-level matrix fragments, m64nNk16) ----
// Accumulator D (f32), and A from registers (bf16, element i; register i/2, even i in the
// low half): thread T of the warpgroup, w = T/32, g = (T%32)/4, t = T%4, holds element i at
//   row 16w + g + 8*((i>>1)&1),  col 8*(i>>2) + 2t + (i&1).
// (Figures "WGMMA .m64nNk16 register fragment layout for accumulator matrix D" and "... for
// matrix A"; CuTe CLayout_64xN = ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)).)
int FragmentRow(int thread, int i) { return 16 * (thread / 32) + (thread % 32) / 4 + 8 * ((i >> 1) & 1); }
int FragmentCol(int thread, int i) { return 8 * (i >> 2) + 2 * (thread % 4) + (i & 1); }

// ---- Canonical shared-memory layouts, transcribed from CuTe's make_gmma_desc comment ----
// In bytes for bf16 (T = 8 elements = 16 bytes); a coordinate splits over its modes
// colexicographically (the first mode fastest). An operand is MN x 16 (A: M x K; B: its
// N x K transpose).
//   K-major  INTERLEAVE: ((8,m),(T,2)):((1T,SBO),(1,LBO))
//   K-major  B128/B64/B32: Swizzle<3|2|1,4,3> o ((8,m),(T,2)):((8T|4T|2T,SBO),(1,T))
//   MN-major INTERLEAVE: ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
//   MN-major B128/B64/B32: Swizzle<3|2|1,4,3> o ((T,W,m),(8,k)):((1,T,LBO),(WT,SBO)), W = 8|4|2
struct Mode {
  int shape;
  int64_t stride;
};
int64_t Evaluate(int coordinate, const std::vector<Mode>& modes) {
  int64_t offset = 0;
  for (const Mode& m : modes) {
    offset += (coordinate % m.shape) * m.stride;
    coordinate /= m.shape;
  }
  return offset;
}
constexpr int kUnbounded = 1 << 20;

int SwizzleBytes(int swizzle) { return swizzle == 1 ? 128 : swizzle == 2 ? 64 : swizzle == 3 ? 32 : 0; }

// Swizzle<b,4,3> on a byte offset from a 1024-byte-aligned base: bits [4,4+b) ^= [7,7+b).
int64_t ApplySwizzle(int64_t offset, int swizzle) {
  const int b = swizzle == 1 ? 3 : swizzle == 2 ? 2 : swizzle == 3 ? 1 : 0;
  return offset ^ (((offset >> 7) & ((1 << b) - 1)) << 4);
}

struct Operand {
  int rows;  // MN
  bool mn_major;
  int swizzle;
  int start = 0;  // bytes: the descriptor's start, from the image's (aligned) base
  int lbo = 0, sbo = 0;
  int64_t Offset(int mn, int k) const {
    std::vector<Mode> mn_modes, k_modes;
    const int s = SwizzleBytes(swizzle);
    if (!mn_major && swizzle == 0) {
      mn_modes = {{8, 16}, {kUnbounded, sbo}};
      k_modes = {{8, 2}, {2, lbo}};
    } else if (!mn_major) {
      mn_modes = {{8, s}, {kUnbounded, sbo}};
      k_modes = {{8, 2}, {2, 16}};
    } else if (swizzle == 0) {
      mn_modes = {{8, 2}, {1, 16}, {kUnbounded, sbo}};
      k_modes = {{8, 16}, {2, lbo}};
    } else {
      mn_modes = {{8, 2}, {s / 16, 16}, {kUnbounded, lbo}};
      k_modes = {{8, s}, {2, sbo}};
    }
    return ApplySwizzle(start + Evaluate(mn, mn_modes) + Evaluate(k, k_modes), swizzle);
  }
};

// Strides chosen per layout so that LBO and SBO differ and the image fits: see each case.
Operand MakeOperand(int rows, bool mn_major, int swizzle, bool offset_start) {
  Operand o{rows, mn_major, swizzle};
  const int s = SwizzleBytes(swizzle);
  if (!mn_major && swizzle == 0) {
    o.sbo = 128;               // core matrices along MN adjacent
    o.lbo = rows / 8 * 128;    // the second k half after all of them
  } else if (!mn_major) {
    o.sbo = 8 * s;             // dense 8-row atoms
    o.lbo = 2048;              // unused by swizzled K-major layouts: a wrong use shows
    // The k16 slice 32 bytes into a 128- or 64-byte row, as a k loop advances it.
    if (offset_start && s >= 64) o.start = 32;
  } else if (swizzle == 0) {
    o.lbo = 128;               // core matrices along K adjacent
    o.sbo = 256;               // along MN
  } else {
    o.sbo = 8 * s;             // the two k atoms adjacent
    o.lbo = 16 * s;            // then the next MN atom
  }
  return o;
}

struct LayoutCase {
  int n, swizzle;
  bool rs, trans_a, trans_b;
  int pattern;  // 0: one-hot A, index-coded B; 1: index-coded A, one-hot B
  bool shape_2d = false;  // the accumulator as float[N/16][8] (float[N/8][4] if N % 16 != 0)
  std::string Name() const {
    return absl::StrFormat("m64n%dk16 %s swizzle %d trans-a %d trans-b %d pattern %d%s", n,
                           rs ? "RS" : "SS", swizzle, trans_a, trans_b, pattern,
                           shape_2d ? " 2-D accumulator" : "");
  }
};

// Logical operands: integers of at most 128 in magnitude (exact in bf16), so every D is an
// exact integer and any misplaced element changes it.
float ValueA(int pattern, int m, int k) {
  return pattern == 0 ? (k == (3 * m + 1) % 16 ? 1.0f : 0.0f)
                      : static_cast<float>((13 * m + 7 * k) % 257 - 128);
}
float ValueB(int pattern, int k, int n) {
  return pattern == 0 ? static_cast<float>((37 * k + 11 * n) % 257 - 128)
                      : (k == (5 * n + 2) % 16 ? 1.0f : 0.0f);
}

void Place(const Operand& o, bool is_a, int pattern, std::vector<uint32_t>* image,
           size_t image_words) {
  std::vector<uint16_t> halves(image_words * 2, 0);
  for (int mn = 0; mn < o.rows; ++mn) {
    for (int k = 0; k < 16; ++k) {
      const int64_t at = o.Offset(mn, k);
      ASSERT_GE(at, 0);
      ASSERT_LT(at + 2, static_cast<int64_t>(image_words * 4) + 1) << "image too small";
      ASSERT_EQ(at % 2, 0);
      halves[at / 2] = Bf16Bits(is_a ? ValueA(pattern, mn, k) : ValueB(pattern, k, mn));
    }
  }
  image->resize(image_words);
  std::memcpy(image->data(), halves.data(), image_words * 4);
}

void RunLayoutCase(const LayoutCase& c) {
  SCOPED_TRACE(c.Name());
  const Operand a = MakeOperand(64, c.trans_a, c.swizzle, c.pattern == 1);
  const Operand b = MakeOperand(c.n, c.trans_b, c.swizzle, c.pattern == 1);
  std::vector<uint32_t> in(testing::kWgmmaConfigWords, 0);
  in[testing::kCfgN] = c.n;
  in[testing::kCfgSwizzle] = c.swizzle;
  in[testing::kCfgRs] = c.rs;
  in[testing::kCfgTransA] = c.trans_a;
  in[testing::kCfgTransB] = c.trans_b;
  in[testing::kCfgStartA] = a.start;
  in[testing::kCfgStartB] = b.start;
  in[testing::kCfgLboA] = a.lbo;
  in[testing::kCfgSboA] = a.sbo;
  in[testing::kCfgLboB] = b.lbo;
  in[testing::kCfgSboB] = b.sbo;
  in[testing::kCfgShape2d] = c.shape_2d;
  std::vector<uint32_t> image_a, image_b;
  ASSERT_NO_FATAL_FAILURE(Place(a, true, c.pattern, &image_a, testing::kWgmmaImageAWords));
  ASSERT_NO_FATAL_FAILURE(Place(b, false, c.pattern, &image_b, testing::kWgmmaImageBWords));
  in.insert(in.end(), image_a.begin(), image_a.end());
  in.insert(in.end(), image_b.begin(), image_b.end());
  for (int t = 0; t < 128; ++t) {  // A fragments (RS)
    for (int j = 0; j < 4; ++j) {
      const uint32_t lo = Bf16Bits(ValueA(c.pattern, FragmentRow(t, 2 * j), FragmentCol(t, 2 * j)));
      const uint32_t hi =
          Bf16Bits(ValueA(c.pattern, FragmentRow(t, 2 * j + 1), FragmentCol(t, 2 * j + 1)));
      in.push_back(lo | hi << 16);
    }
  }
  std::vector<float> out;
  const int regs = c.n / 2;
  ASSERT_THAT(RunKernel(Kernel(testing::WgmmaLayoutKernel()), {1, 1, 1}, {128, 1, 1}, in, &out,
                  128 * regs),
              IsOk());
  int mismatches = 0;
  for (int t = 0; t < 128; ++t) {
    for (int i = 0; i < regs; ++i) {
      const int row = FragmentRow(t, i), col = FragmentCol(t, i);
      float expected = 0;
      for (int k = 0; k < 16; ++k) expected += ValueA(c.pattern, row, k) * ValueB(c.pattern, k, col);
      const float got = out[t * regs + i];
      if (got != expected && ++mismatches <= 5) {
        ADD_FAILURE() << "thread " << t << " d[" << i << "] (row " << row << ", col " << col
                      << "): " << got << ", expected " << expected;
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

class WgmmaLayoutTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

// Every N and swizzle; SS with each of trans-a / trans-b, RS with each trans-b; two operand
// patterns (the second also starts K-major swizzled operands 32 bytes into their rows).
TEST_P(WgmmaLayoutTest, AccumulatorsMatchThePtxIsaTables) {
  const auto [n, swizzle] = GetParam();
  for (int pattern = 0; pattern < 2; ++pattern) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        RunLayoutCase({n, swizzle, false, ta != 0, tb != 0, pattern});
      }
    }
    for (int tb = 0; tb < 2; ++tb) RunLayoutCase({n, swizzle, true, false, tb != 0, pattern});
  }
}

// The two-dimensional accumulator (CUTLASS's float[N/16][8]) holds the same registers in
// row-major order: every layout, as above, against the same reference matmul.
TEST_P(WgmmaLayoutTest, TwoDimensionalAccumulatorsHoldTheFlatRegistersInRowMajorOrder) {
  const auto [n, swizzle] = GetParam();
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) RunLayoutCase({n, swizzle, false, ta != 0, tb != 0, 0, true});
  }
  for (int tb = 0; tb < 2; ++tb) RunLayoutCase({n, swizzle, true, false, tb != 0, 1, true});
}

std::string ShapeName(const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
  static const char* const kSwizzle[] = {"NoSwizzle", "Swizzle128B", "Swizzle64B",
                                         "Swizzle32B"};
  return absl::StrCat("N", std::get<0>(info.param), kSwizzle[std::get<1>(info.param)]);
}

INSTANTIATE_TEST_SUITE_P(AllShapes, WgmmaLayoutTest,
                         ::testing::Combine(::testing::Values(8, 16, 24, 32, 64, 128, 192, 256),
                                            ::testing::Values(0, 1, 2, 3)),
                         ShapeName);

// ---- GEMM numerics ----

// C = A * B through wgmma_gemm against a double-precision reference over the same bf16
// inputs. The products of bf16 values are exact in fp32, so the only error is fp32
// accumulation of K terms: |error| <= K * 2^-24 * sum_k |a_k b_k| (recursive summation
// bound, first order), which holds for any accumulation order.
void CheckGemm(int m, int n, int k) {
  std::vector<uint16_t> a(static_cast<size_t>(m) * k), bt(static_cast<size_t>(n) * k);
  uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
  };
  for (uint16_t& x : a) x = Bf16Round(next());
  for (uint16_t& x : bt) x = Bf16Round(next());
  absl::StatusOr<DeviceBuffer> c_buf = DeviceBuffer::Allocate(Device(), size_t{4} * m * n);
  absl::StatusOr<DeviceBuffer> a_buf = DeviceBuffer::Allocate(Device(), a.size() * 2);
  absl::StatusOr<DeviceBuffer> b_buf = DeviceBuffer::Allocate(Device(), bt.size() * 2);
  ASSERT_THAT(c_buf, IsOk());
  ASSERT_THAT(a_buf, IsOk());
  ASSERT_THAT(b_buf, IsOk());
  ASSERT_THAT(a_buf->CopyFrom(a.data(), a.size() * 2), IsOk());
  ASSERT_THAT(b_buf->CopyFrom(bt.data(), bt.size() * 2), IsOk());
  void* c_ptr = c_buf->get();
  void* a_ptr = a_buf->get();
  void* b_ptr = b_buf->get();
  void* args[] = {&c_ptr, &a_ptr, &b_ptr, &m, &n, &k};
  ASSERT_THAT(Device().Launch(Kernel(testing::WgmmaGemmKernel()),
                              {static_cast<uint32_t>(n / 128), static_cast<uint32_t>(m / 128), 1},
                              {256, 1, 1}, 0, args),
              IsOk());
  std::vector<float> c(static_cast<size_t>(m) * n);
  ASSERT_THAT(c_buf->CopyTo(c.data(), c.size() * 4), IsOk());
  int bad = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (int kk = 0; kk < k; ++kk) {
        const double p = static_cast<double>(Bf16Value(a[size_t{1} * i * k + kk])) *
                         Bf16Value(bt[size_t{1} * j * k + kk]);
        exact += p;
        magnitude += std::fabs(p);
      }
      const double tolerance = k * std::ldexp(1.0, -24) * magnitude;
      const double got = c[size_t{1} * i * n + j];
      if (!(std::fabs(got - exact) <= tolerance) && ++bad <= 5) {
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got << ", expected " << exact
                      << " within " << tolerance;
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(WgmmaGemmTest, Gemm128x128x64MatchesTheFp32Reference) { CheckGemm(128, 128, 64); }
TEST(WgmmaGemmTest, Gemm256x256x256MatchesTheFp32Reference) { CheckGemm(256, 256, 256); }

// ---- setmaxnreg ----

TEST(SetmaxnregTest, ProducerDecAndConsumerIncRun) {
  std::vector<int> out;
  ASSERT_THAT(RunKernel(Kernel(testing::SetmaxnregRolesKernel()), {1, 1, 1}, {384, 1, 1},
                  std::vector<int>{7}, &out, 384),
              IsOk());
  for (int t = 0; t < 384; ++t) EXPECT_EQ(out[t], (t < 128 ? 40 : 232) + 7) << t;
}

TEST(SetmaxnregTest, CompileTimeCountOutsideTheRangeIsACompileError) {
  for (int regs : {16, 100, 264}) {
    SCOPED_TRACE(regs);
    absl::StatusOr<std::unique_ptr<LoadedKernel>> k =
        Device().Load(testing::SetmaxnregStaticKernel(regs));
    EXPECT_THAT(k.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("setmaxnreg: the register count must be in "
                                               "24..256 and a multiple of 8")));
  }
}

// ---- Misuse: each a launch error naming block, thread and instruction ----

absl::Status RunMisuse(int mode, int arg, std::vector<float>* out, uint32_t threads = 128) {
  return RunKernel(Kernel(testing::WgmmaMisuseKernel()), {1, 1, 1}, {threads, 1, 1},
             std::vector<int>{mode, arg}, out, threads * 64);
}

TEST(WgmmaMisuseTest, CorrectUseComputesOnesTimesOnes) {
  std::vector<float> out;
  ASSERT_THAT(RunMisuse(testing::kMisuseNone, 0, &out, 256), IsOk());
  for (float v : out) ASSERT_EQ(v, 16.0f);
}

TEST(WgmmaMisuseTest, ChainedWgmmasAccumulateBeforeTheWait) {
  std::vector<float> out;
  ASSERT_THAT(RunMisuse(testing::kMisuseChained, 0, &out), IsOk());
  for (float v : out) ASSERT_EQ(v, 32.0f);
}

TEST(WgmmaMisuseTest, EmptyCommitGroupsAreFine) {
  std::vector<float> out;
  ASSERT_THAT(RunMisuse(testing::kMisuseEmptyCommits, 0, &out), IsOk());
  for (float v : out) ASSERT_EQ(v, 16.0f);
}

TEST(WgmmaMisuseTest, DescriptorDifferingAcrossTheWarpgroupFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseDescriptorDiffers, 0, &out),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("block (0,0,0) thread ("),
                             HasSubstr("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"),
                             HasSubstr("the B descriptor must be the same in every thread of "
                                       "the warpgroup (threads 0-127), but thread 32 has"))));
}

TEST(WgmmaMisuseTest, NDifferingAcrossTheWarpgroupFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseNDiffers, 0, &out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("block (0,0,0) thread ("),
                             HasSubstr("m64n64k16"), HasSubstr("m64n128k16"),
                             HasSubstr("must execute the same instruction"))));
}

TEST(WgmmaMisuseTest, WarpMissingFromTheWarpgroupFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseWarpMissing, 0, &out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("block (0,0,0) thread ("),
                             HasSubstr("wgmma.fence.sync.aligned in warpgroup 0 (threads "
                                       "0-127)"),
                             HasSubstr("exited and will never arrive"))));
}

TEST(WgmmaMisuseTest, ScaleDDifferingAcrossTheWarpgroupFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseScaleDiffers, 0, &out),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("block (0,0,0) thread ("),
                             HasSubstr("scale-d must be the same in every thread of the "
                                       "warpgroup (threads 0-127), but thread 64 has 0x1"))));
}

TEST(WgmmaMisuseTest, TransposeDifferingAcrossTheWarpgroupFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseTransDiffers, 0, &out),
              StatusIs(absl::StatusCode::kAborted,
                       HasSubstr("imm-trans-b must be the same in every thread of the "
                                 "warpgroup (threads 0-127), but thread 32 has 0x1")));
}

// The access itself fails (the source lowering routes d[...] through the check), naming
// the thread, the array and the file (a builder path for a builder kernel).
TEST(WgmmaMisuseTest, WritingTheAccumulatorBeforeTheWaitFails) {
  std::vector<float> out;
  EXPECT_THAT(
      RunMisuse(testing::kMisuseWriteBeforeWait, 0, &out),
      StatusIs(absl::StatusCode::kAborted,
               AllOf(HasSubstr("block (0,0,0) thread ("),
                     HasSubstr("wgmma_misuse"),
                     HasSubstr(": accumulator 'd' is read (or written) while a "
                               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 (A and B "
                               "descriptors) on it is pending (its register d[5] of 64)"))));
}

// Reading before the wait used to read the poison NaN silently.
TEST(WgmmaMisuseTest, ReadingTheAccumulatorBeforeTheWaitFails) {
  std::vector<float> out;
  EXPECT_THAT(
      RunMisuse(testing::kMisuseReadBeforeWait, 0, &out),
      StatusIs(absl::StatusCode::kAborted,
               AllOf(HasSubstr("block (0,0,0) thread ("),
                     HasSubstr(": accumulator 'd' is read (or written) while a "
                               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 (A and B "
                               "descriptors) on it is pending (its register d[3] of 64): no "
                               "wgmma.wait_group retired its group yet"))));
}

TEST(WgmmaMisuseTest, WaitGroupPastSevenFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseWaitOutOfRange, 8, &out),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("block (0,0,0) thread ("),
                             HasSubstr("wgmma.wait_group.sync.aligned 8: the group count must "
                                       "be 0..7"))));
}

TEST(WgmmaMisuseTest, DescriptorOfGlobalMemoryFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseDescriptorNotShared, 0, &out),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("block (0,0,0) thread ("),
                             HasSubstr("warptrace_wgmma_desc: "),
                             HasSubstr("is not in this block's shared memory"))));
}

TEST(WgmmaMisuseTest, NonzeroBaseOffsetFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseBaseOffset, 0, &out),
              StatusIs(absl::StatusCode::kAborted,
                       HasSubstr("B descriptor 0x")));
  EXPECT_THAT(RunMisuse(testing::kMisuseBaseOffset, 0, &out),
              StatusIs(absl::StatusCode::kAborted, HasSubstr("has base offset 1")));
}

TEST(WgmmaMisuseTest, PendingAccumulatorReusedWithAnotherNFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseChainedOtherN, 0, &out),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("m64n64k16"),
                             HasSubstr("is the pending accumulator of a "
                                       "wgmma.mma_async.sync.aligned.m64n128k16"))));
}

// PTX ISA, wgmma.fence: "The wgmma.fence instruction must be used ... between a register
// access by a thread in the warpgroup and any wgmma.mma_async instruction that accesses the
// same registers". The kernel writes d[7] after its fence.
TEST(WgmmaMisuseTest, AccumulatorWrittenAfterTheFenceFailsAtTheWgmma) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseAccessAfterFence, 0, &out),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("block (0,0,0) thread ("),
                             HasSubstr("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                                       "(A and B descriptors) at "),
                             HasSubstr(": its accumulator register d[7] was accessed by "
                                       "ordinary code (first: 'd' at "),
                             HasSubstr("after the last wgmma.fence"),
                             HasSubstr("Missing: warptrace_wgmma_fence() after the last "
                                       "access"))));
}

// "... before the first wgmma.mma_async operation in a warpgroup".
TEST(WgmmaMisuseTest, NoFenceBeforeTheFirstWgmmaFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseNoFence, 0, &out),
              StatusIs(absl::StatusCode::kAborted,
                       HasSubstr("no wgmma.fence.sync.aligned before this thread's first "
                                 "wgmma.mma_async")));
}

// Only wgmmas "of the same shape" are ordered on one accumulator: an m64n64k16 on registers
// 16..47 of a pending m64n128k16's 64 is not.
TEST(WgmmaMisuseTest, WgmmaOverlappingAPendingAccumulatorElsewhereFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseOverlapOtherStart, 0, &out),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                                       "(A and B descriptors): its accumulator (32 registers) "
                                       "overlaps the pending accumulator of a "
                                       "wgmma.mma_async.sync.aligned.m64n128k16"),
                             HasSubstr("(64 registers, -16 registers away)"))));
}

// "Accessing ... the input registers containing fragments of matrix A of a wgmma.mma_async
// instruction without first performing a wgmma.wait_group ... is an undefined behavior."
TEST(WgmmaMisuseTest, AFragmentWrittenWhileItsWgmmaIsPendingFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseAFragmentWritten, 0, &out),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("block (0,0,0) thread ("),
                             HasSubstr(": 'a' is read (or written) while a "
                                       "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                                       "(A in registers) holding it as its A fragment "
                                       "(register a[1] of 4) is pending"))));
}

TEST(WgmmaMisuseTest, SetmaxnregCountOutsideTheRulesFails) {
  for (int regs : {16, 100, 264}) {
    SCOPED_TRACE(regs);
    std::vector<float> out;
    EXPECT_THAT(RunMisuse(testing::kMisuseSetmaxnregCount, regs, &out),
                StatusIs(absl::StatusCode::kAborted,
                         AllOf(HasSubstr("block (0,0,0) thread ("),
                               HasSubstr(absl::StrCat("setmaxnreg.inc.sync.aligned.u32 ", regs,
                                                      ": the register count must be in "
                                                      "24..256 and a multiple of 8")))));
  }
}

TEST(WgmmaMisuseTest, SetmaxnregNotUniformAcrossTheWarpgroupFails) {
  std::vector<float> out;
  EXPECT_THAT(RunMisuse(testing::kMisuseSetmaxnregNonUniform, 0, &out),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("block (0,0,0) thread ("),
                             HasSubstr("setmaxnreg.inc.sync.aligned.u32: the register count "
                                       "must be the same in every thread of the warpgroup "
                                       "(threads 0-127), but thread 32 asks for 240 where "
                                       "thread 0 asks for 232"))));
  EXPECT_THAT(RunMisuse(testing::kMisuseSetmaxnregIncDec, 0, &out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("setmaxnreg.dec.sync.aligned.u32"),
                             HasSubstr("setmaxnreg.inc.sync.aligned.u32"),
                             HasSubstr("must execute the same instruction"))));
}

}  // namespace
}  // namespace warptrace
