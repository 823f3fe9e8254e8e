// Every device primitive the host backend provides, each a kernel (the same text NVRTC
// compiles in tests/jit/primitives/primitives_nvrtc_test.cc) compiled and run on the host,
// checked against its CUDA / PTX ISA definition.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/host/host_device.h"
#include "tests/jit/primitives/primitive_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::FindPrimitiveKernel;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::PrimitiveKernelSource;
using ::warptrace::testing::StatusIs;

class PrimitivesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HostDeviceOptions options;
    // One cache for the whole suite (under the first test's directory): kernels are reused.
    static const std::string* const cache = new std::string(TestTempPath("cache"));
    options.cache_directory = *cache;
    absl::StatusOr<std::unique_ptr<HostDevice>> device = HostDevice::Create(options);
    ASSERT_THAT(device, IsOk());
    device_ = *std::move(device);
  }

  // Runs kernel `name` on one block of `threads` with `in`; returns `out_ints` ints.
  absl::Status Run(const std::string& name, uint32_t threads, const std::vector<int>& in,
                   size_t out_ints, std::vector<int>* out) {
    absl::StatusOr<std::unique_ptr<LoadedKernel>> kernel =
        device_->Load(PrimitiveKernelSource(FindPrimitiveKernel(name)));
    if (!kernel.ok()) return kernel.status();
    absl::StatusOr<DeviceBuffer> out_buffer = DeviceBuffer::Allocate(*device_, out_ints * 4);
    absl::StatusOr<DeviceBuffer> in_buffer =
        DeviceBuffer::Allocate(*device_, std::max<size_t>(in.size(), 1) * 4);
    if (!out_buffer.ok()) return out_buffer.status();
    if (!in_buffer.ok()) return in_buffer.status();
    if (absl::Status s = out_buffer->Zero(); !s.ok()) return s;
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

enum Mode { kBfly, kIdx, kUp, kDown };

// shfl.sync as the PTX ISA defines it ("Parallel Synchronization and Communication
// Instructions: shfl.sync"), for CUDA's __shfl*_sync(mask, var, b, width), which pass
// c = ((32 - width) << 8) | clamp with clamp 0 for .up and 0x1f otherwise.
int PtxShflSource(Mode mode, int lane, int b, int width) {
  const int c = ((32 - width) << 8) | (mode == kUp ? 0 : 0x1f);
  const int segmask = (c >> 8) & 0x1f;
  const int max_lane = (lane & segmask) | ((c & 0x1f) & ~segmask);
  const int min_lane = lane & segmask;
  int j = 0;
  bool pval = false;
  switch (mode) {
    case kUp:
      j = lane - b;
      pval = j >= max_lane;
      break;
    case kDown:
      j = lane + b;
      pval = j <= max_lane;
      break;
    case kBfly:
      j = lane ^ b;
      pval = j <= max_lane;
      break;
    case kIdx:
      j = min_lane | ((b & 0x1f) & ~segmask);
      pval = j <= max_lane;
      break;
  }
  return pval ? j : lane;  // "if (!pval) d = Regs[lane]" — the lane keeps its own value
}

TEST_F(PrimitivesTest, ShufflesMatchThePtxDefinitionForEveryWidthOperandAndLane) {
  std::vector<int> out;
  ASSERT_THAT(Run("shuffle_table", 32, {}, 4 * 5 * 32 * 32, &out), IsOk());
  int mismatches = 0;
  for (Mode mode : {kBfly, kIdx, kUp, kDown}) {
    for (int w = 0; w < 5; ++w) {
      const int width = 2 << w;
      for (int b = 0; b < 32; ++b) {
        for (int lane = 0; lane < 32; ++lane) {
          const int got = out[((mode * 5 + w) * 32 + b) * 32 + lane];
          const int want = PtxShflSource(mode, lane, b, width);
          if (got != want && ++mismatches <= 10) {
            ADD_FAILURE() << "mode " << mode << " width " << width << " operand " << b
                          << " lane " << lane << ": got lane " << got << ", PTX says " << want;
          }
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
  // Spot checks of __shfl_xor_sync with a lane mask >= width, by hand from the ISA: lane 8
  // of width 8 reads lane 0 (a lower segment: j = 0 <= maxLane 15); lane 0 keeps its own
  // (j = 8 > maxLane 7).
  EXPECT_EQ(out[((0 * 5 + 2) * 32 + 8) * 32 + 8], 0);
  EXPECT_EQ(out[((0 * 5 + 2) * 32 + 8) * 32 + 0], 0);
  EXPECT_EQ(out[((0 * 5 + 2) * 32 + 8) * 32 + 9], 1);
  EXPECT_EQ(out[((0 * 5 + 2) * 32 + 8) * 32 + 1], 1);
  EXPECT_EQ(out[((0 * 5 + 4) * 32 + 16) * 32 + 3], 19);
}

TEST_F(PrimitivesTest, VotesAndMatchesHonourTheirMasks) {
  std::vector<int> in(32);
  for (int t = 0; t < 32; ++t) in[t] = (t % 3 == 0) || t >= 24 ? 1 : 0;
  std::vector<int> out;
  ASSERT_THAT(Run("votes", 32, in, 32 * 8, &out), IsOk());
  unsigned int ballot = 0;
  for (int t = 0; t < 32; ++t) ballot |= static_cast<unsigned int>(in[t]) << t;
  int count = 0;
  for (int v : in) count += v;
  for (int t = 0; t < 32; ++t) {
    SCOPED_TRACE(t);
    const unsigned int half = t < 16 ? 0x0000ffffu : 0xffff0000u;
    EXPECT_EQ(static_cast<unsigned int>(out[t * 8 + 0]), ballot & half);
    EXPECT_EQ(out[t * 8 + 1], (ballot & half) != 0);
    EXPECT_EQ(out[t * 8 + 2], (ballot & half) == half);
    unsigned int same = 0;
    for (int o = 0; o < 32; ++o) {
      if (((half >> o) & 1) && in[o] / 2 == in[t] / 2) same |= 1u << o;
    }
    EXPECT_EQ(static_cast<unsigned int>(out[t * 8 + 3]), same);
    EXPECT_EQ(static_cast<unsigned int>(out[t * 8 + 4]), half);  // lane / 16 is equal
    EXPECT_EQ(out[t * 8 + 5], 1);
    EXPECT_EQ(static_cast<unsigned int>(out[t * 8 + 6]), ballot);
    EXPECT_EQ(out[t * 8 + 7], count * 100 + 0 * 10 + 1);
  }
}

TEST_F(PrimitivesTest, NamedBarriersHandOffBetweenProducerAndConsumerWarps) {
  std::vector<int> out;
  ASSERT_THAT(Run("named_barriers", 256, {}, 128, &out), IsOk());
  for (int i = 0; i < 128; ++i) {
    // Rounds 0..7 of slot (i+1) % 128: sum of round * 1000 + index.
    EXPECT_EQ(out[i], 28000 + 8 * ((i + 1) % 128)) << i;
  }
}

TEST_F(PrimitivesTest, AnMbarrierRingLetsTheProducerRunSeveralPhasesAhead) {
  std::vector<int> out;
  ASSERT_THAT(Run("mbarrier_ring", 64, {}, 65, &out), IsOk());
  for (int t = 0; t < 32; ++t) EXPECT_EQ(out[t], 100 * (15 * 16 / 2) + 16 * t) << t;
  // The producer filled all 4 stages before any consumer ran: 4 phases ahead.
  EXPECT_EQ(out[64], 4);
}

TEST_F(PrimitivesTest, CpAsyncGroupsBecomeVisibleOneWaitAtATime) {
  std::vector<int> in(192);
  for (int i = 0; i < 192; ++i) in[i] = 7 * i + 1;
  std::vector<int> out;
  ASSERT_THAT(Run("cp_async_groups", 64, in, 192, &out), IsOk());
  EXPECT_EQ(out, in);
}

TEST_F(PrimitivesTest, ABulkCopyReleasesWaitersWhenItsTransactionsComplete) {
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[i] = i * i;
  std::vector<int> out;
  ASSERT_THAT(Run("bulk_copy", 64, in, 64, &out), IsOk());
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], 2 * i * i) << i;
}

TEST_F(PrimitivesTest, AMissingMbarrierArrivalIsADeadlockReportedAtOnce) {
  std::vector<int> out;
  EXPECT_THAT(Run("missing_arrival", 32, {}, 32, &out),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       AllOf(HasSubstr("deadlock in block (0,0,0)"),
                             HasSubstr("threads 0-31: wait at mbarrier bar (shared memory "
                                       "offset "),
                             HasSubstr("for the phase of parity 0 to complete (1 of 2 arrivals "
                                       "pending, no transactions outstanding)"))));
}

TEST_F(PrimitivesTest, VectorTypesHalfFloatsSleepsAndBitHelpersFollowCuda) {
  std::vector<int> out;
  ASSERT_THAT(Run("scalars", 1, {3, 5}, 10, &out), IsOk());
  EXPECT_EQ(out[0], 10 + 15);
  EXPECT_EQ(out[1], 16 * 100 + 8 * 10 + 1);  // alignof float4, float2, int4 / 16
  EXPECT_EQ(out[2], 0x3555);                 // __half(1/3), round to nearest even
  EXPECT_EQ(out[3], 375);                    // 1.5 + 2.25 in half
  EXPECT_EQ(out[4], 0x3eab);                 // __nv_bfloat16(1/3)
  EXPECT_EQ(out[5], 0x7c00);                 // 65520 rounds to infinity
  EXPECT_EQ(out[6], 0x0001);                 // 2^-24: the smallest subnormal
  EXPECT_EQ(out[7], 1);                      // __nanosleep(1000) advanced clock64 >= 1500
  EXPECT_EQ(out[8], 8 + 4 * 100 + 31 * 1000);
  EXPECT_EQ(out[9], 1);
}

}  // namespace
}  // namespace warptrace
