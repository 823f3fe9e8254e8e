// The host backend's __half, __nv_bfloat16 and their pairs (jit/host/device/cuda_on_cpu.h) are
// bit-exact with the CUDA toolkit's own definitions: this test compiles the toolkit's
// cuda_fp16.h and cuda_bf16.h (their host-side code, which the host compiler builds alone)
// and compares them with kernels run on HostDevice, on every 16-bit pattern (16 bits ->
// float) and on every edge class of floats plus a large deterministic sample (float -> 16
// bits, each rounding mode).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/host/host_device.h"
#include "tests/jit/primitives/tensor_core_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::FindTensorCoreKernel;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::PrimitiveKernelSource;

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t Bits(__half h) { return static_cast<__half_raw>(h).x; }
uint32_t Bits(__nv_bfloat16 b) { return static_cast<__nv_bfloat16_raw>(b).x; }

class HalfTypesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HostDeviceOptions options;
    static const std::string* const cache = new std::string(TestTempPath("cache"));
    options.cache_directory = *cache;
    absl::StatusOr<std::unique_ptr<HostDevice>> device = HostDevice::Create(options);
    ASSERT_THAT(device, IsOk());
    device_ = *std::move(device);
  }

  absl::Status Run(const std::string& name, uint32_t threads, const std::vector<int>& in,
                   size_t out_ints, std::vector<int>* out) {
    absl::StatusOr<std::unique_ptr<LoadedKernel>> kernel =
        device_->Load(PrimitiveKernelSource(FindTensorCoreKernel(name)));
    if (!kernel.ok()) return kernel.status();
    absl::StatusOr<DeviceBuffer> out_buffer = DeviceBuffer::Allocate(*device_, out_ints * 4);
    absl::StatusOr<DeviceBuffer> in_buffer =
        DeviceBuffer::Allocate(*device_, std::max<size_t>(in.size(), 1) * 4);
    if (!out_buffer.ok()) return out_buffer.status();
    if (!in_buffer.ok()) return in_buffer.status();
    if (absl::Status s = in_buffer->CopyFrom(in.data(), in.size() * 4); !s.ok()) return s;
    void* out_ptr = out_buffer->get();
    void* in_ptr = in_buffer->get();
    void* args[] = {&out_ptr, &in_ptr};
    absl::Status launched = device_->Launch(**kernel, {1, 1, 1}, {threads, 1, 1}, 0, args);
    out->resize(out_ints);
    if (absl::Status s = out_buffer->CopyTo(out->data(), out_ints * 4); !s.ok()) return s;
    return launched;
  }

  std::unique_ptr<HostDevice> device_;
};

TEST_F(HalfTypesTest, EverySixteenBitPatternConvertsToTheFloatCudaGives) {
  std::vector<int> out;
  ASSERT_THAT(Run("half_bits_to_float", 256, {}, 2 * 65536, &out), IsOk());
  int mismatches = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const unsigned short bits = static_cast<unsigned short>(i);
    const uint32_t half = Bits(__half2float(__ushort_as_half(bits)));
    const uint32_t bf16 = Bits(__bfloat162float(__ushort_as_bfloat16(bits)));
    if (static_cast<uint32_t>(out[i]) != half && ++mismatches <= 10) {
      ADD_FAILURE() << std::hex << "__half2float(0x" << i << ") = 0x" << out[i]
                    << ", CUDA: 0x" << half;
    }
    if (static_cast<uint32_t>(out[65536 + i]) != bf16 && ++mismatches <= 10) {
      ADD_FAILURE() << std::hex << "__bfloat162float(0x" << i << ") = 0x" << out[65536 + i]
                    << ", CUDA: 0x" << bf16;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// Floats of every exponent and sign with mantissas at the rounding boundaries of both
// formats (bf16 drops 16 bits; binary16 drops 13 from a normal and 14-24 from a subnormal:
// the halfway bit, just below and above it, the lowest kept bit), NaNs (quiet, signalling,
// payloads, both signs), infinities, zeros, and a deterministic sample of other patterns.
std::vector<uint32_t> Samples() {
  std::vector<uint32_t> mantissas = {0, 0x7fffff, 0x7ffffe, 0x400000, 0x3fffff, 0x400001};
  for (int j = 0; j < 23; ++j) {
    for (uint32_t m : {1u << j, (1u << j) - 1, (1u << j) + 1, 3u << j, (1u << j) | 0x2000u,
                       (1u << j) | 0x10000u, (1u << j) | 0x1fffu}) {
      mantissas.push_back(m & 0x7fffff);
    }
  }
  std::vector<uint32_t> samples;
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t exponent = 0; exponent < 256; ++exponent) {
      for (uint32_t m : mantissas) samples.push_back(sign << 31 | exponent << 23 | m);
    }
  }
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < (1 << 18); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    samples.push_back(static_cast<uint32_t>(state >> 32));
  }
  return samples;
}

TEST_F(HalfTypesTest, FloatsRoundToTheSixteenBitsCudaGivesInEveryMode) {
  const std::vector<uint32_t> samples = Samples();
  std::vector<int> in(1 + samples.size());
  in[0] = static_cast<int>(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) in[1 + i] = static_cast<int>(samples[i]);
  std::vector<int> out;
  ASSERT_THAT(Run("float_to_16_bits", 256, in, samples.size() * 12, &out), IsOk());
  const char* kNames[] = {"__float2half",        "__float2half_rn",     "__float2half_rz",
                          "__float2half_rd",     "__float2half_ru",     "__float2bfloat16",
                          "__float2bfloat16_rn", "__float2bfloat16_rz", "__float2bfloat16_rd",
                          "__float2bfloat16_ru", "__floats2half2_rn",   "__floats2bfloat162_rn"};
  int mismatches = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const float x = FromBits(samples[i]);
    const __half2 h2 = __floats2half2_rn(x, -x);
    const __nv_bfloat162 b2 = __floats2bfloat162_rn(x, -x);
    const uint32_t want[12] = {
        Bits(__float2half(x)),        Bits(__float2half_rn(x)),
        Bits(__float2half_rz(x)),     Bits(__float2half_rd(x)),
        Bits(__float2half_ru(x)),     Bits(__float2bfloat16(x)),
        Bits(__float2bfloat16_rn(x)), Bits(__float2bfloat16_rz(x)),
        Bits(__float2bfloat16_rd(x)), Bits(__float2bfloat16_ru(x)),
        Bits(__low2half(h2)) | Bits(__high2half(h2)) << 16,
        Bits(__low2bfloat16(b2)) | Bits(__high2bfloat16(b2)) << 16};
    for (int j = 0; j < 12; ++j) {
      const uint32_t got = static_cast<uint32_t>(out[i * 12 + j]);
      if (got != want[j] && ++mismatches <= 10) {
        ADD_FAILURE() << std::hex << kNames[j] << "(float bits 0x" << samples[i] << ") = 0x"
                      << got << ", CUDA: 0x" << want[j];
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << samples.size() << " samples";
}

TEST_F(HalfTypesTest, PairHelpersAndArithmeticMatchCuda) {
  for (auto [x, y] : {std::pair<float, float>{1.0f / 3, -2.71828f}, {65519.0f, 1e-7f},
                      {3.0e38f, -0.0f}, {5.9604645e-08f, 1.00390625f}}) {
    SCOPED_TRACE(x);
    std::vector<int> out;
    ASSERT_THAT(Run("half_pairs", 1, {static_cast<int>(Bits(x)), static_cast<int>(Bits(y))}, 11,
                    &out),
                IsOk());
    const __nv_bfloat162 b = __float22bfloat162_rn(make_float2(x, y));
    const __half2 h = __float22half2_rn(make_float2(x, y));
    const __nv_bfloat162 swapped = __halves2bfloat162(__high2bfloat16(b), __low2bfloat16(b));
    const __half2 hs = __halves2half2(__high2half(h), __low2half(h));
    const float2 bf = __bfloat1622float2(b);
    const float2 hf = __half22float2(h);
    const uint32_t want[11] = {
        Bits(__low2float(b)),
        Bits(__high2float(b)),
        Bits(__low2float(h)),
        Bits(__high2float(h)),
        Bits(__low2bfloat16(swapped)) | Bits(__high2bfloat16(swapped)) << 16,
        Bits(__low2half(hs)) | Bits(__high2half(hs)) << 16,
        Bits(bf.x + bf.y),
        Bits(hf.x + hf.y),
        Bits(__hadd(__low2bfloat16(b), __high2bfloat16(b))),
        Bits(__hmul(__low2half(h), __high2half(h))),
        static_cast<uint32_t>(sizeof(__nv_bfloat162) * 100 + alignof(__nv_bfloat162) * 10 +
                              sizeof(__nv_bfloat16))};
    for (int j = 0; j < 11; ++j) {
      EXPECT_EQ(static_cast<uint32_t>(out[j]), want[j]) << "output " << j;
    }
  }
}

}  // namespace
}  // namespace warptrace
