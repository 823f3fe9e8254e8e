// The host runtime (jit/host/runtime/runtime.h) through HostDevice: every test is a kernel really
// compiled and run on the host.
#include "jit/host/runtime/runtime.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/host/host_device.h"
#include "tests/jit/test_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::Lt;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::RunSimpleKernel;
using ::warptrace::testing::SimpleKernel;
using ::warptrace::testing::StatusIs;

std::unique_ptr<HostDevice> MakeDevice(HostDeviceOptions options = {}) {
  options.cache_directory = TestTempPath("cache");
  absl::StatusOr<std::unique_ptr<HostDevice>> device = HostDevice::Create(options);
  EXPECT_THAT(device, IsOk());
  return device.ok() ? *std::move(device) : nullptr;
}

// Runs `body` (a SimpleKernel: `int* out`) on grid x block; `out` has `out_ints` ints,
// zeroed first.
absl::Status RunKernel(HostDevice& device, const std::string& name, const std::string& body,
                       Dim3 grid, Dim3 block, std::vector<int>* out, size_t out_ints,
                       const std::string& prelude = "") {
  return RunSimpleKernel(device, SimpleKernel(name, body, prelude), grid, block, out_ints, out);
}

TEST(RuntimeTest, ResidentBlocksKeepTheirOwnStaticSharedMemory) {
  HostDeviceOptions options;
  options.num_virtual_sms = 2;
  options.blocks_per_sm = 4;
  auto device = MakeDevice(options);
  ASSERT_NE(device, nullptr);
  // Each block writes its id into the same __shared__ array, lets every other resident
  // block run (the barriers interleave them on a worker), then reads it back.
  std::vector<int> out;
  ASSERT_THAT(RunKernel(*device, "shared_per_block", R"(
  __shared__ int tile[64];
  tile[threadIdx.x] = blockIdx.x * 1000 + threadIdx.x;
  __syncthreads();
  __syncthreads();
  out[blockIdx.x * 64 + threadIdx.x] = tile[(threadIdx.x + 1) % 64];
  out[8 * 64 + blockIdx.x] = warptrace_host_smid();
)",
                        {8, 1, 1}, {64, 1, 1}, &out, 8 * 64 + 8,
                        "extern \"C\" unsigned int warptrace_host_smid(void);"),
              IsOk());
  for (int b = 0; b < 8; ++b) {
    for (int t = 0; t < 64; ++t) {
      EXPECT_EQ(out[b * 64 + t], b * 1000 + (t + 1) % 64) << "block " << b << " thread " << t;
    }
  }
  EXPECT_THAT(std::vector<int>(out.begin() + 8 * 64, out.end()), Each(Lt(2)));
}

TEST(RuntimeTest, StaticSharedMemoryOverFortyEightKibFailsTheLaunch) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  EXPECT_THAT(RunKernel(*device, "too_much_shared", R"(
  __shared__ float a[8192];
  __shared__ float b[8192];
  a[threadIdx.x] = 1.0f;
  b[threadIdx.x] = 2.0f;
  out[threadIdx.x] = static_cast<int>(a[threadIdx.x] + b[threadIdx.x]);
)",
                        {1, 1, 1}, {32, 1, 1}, &out, 32),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       AllOf(HasSubstr("__shared__ b (32768 bytes)"),
                             HasSubstr("65536 bytes, over the limit of 49152 bytes"))));
}

HostDeviceOptions Deterministic(HostDeviceOptions options = {}) {
  options.clock = host::ClockMode::kDeterministic;
  return options;
}

// clock() in a kernel once called the C library's clock() (process CPU time in us). With the
// deterministic clock each read takes exactly 3 cycles (2 ns), so the gaps are exact.
TEST(RuntimeTest, ClockIsTheLowWordOfTheSmCycleCounterLikeClock64) {
  auto device = MakeDevice(Deterministic());
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  ASSERT_THAT(RunKernel(*device, "clocks", R"(
  const long long before = clock64();
  const unsigned int c = static_cast<unsigned int>(clock());
  const long long after = clock64();
  out[2 * threadIdx.x] = static_cast<int>(c - static_cast<unsigned int>(before));
  out[2 * threadIdx.x + 1] = static_cast<int>(static_cast<unsigned int>(after) - c);
)",
                        {1, 1, 1}, {32, 1, 1}, &out, 64),
              IsOk());
  EXPECT_THAT(out, Each(3));
}

// Under the deterministic clock, time the worker thread spends outside the kernel's own
// clock reads (here a 20 ms sleep, as an OS preemption would) is nobody's: the read after
// it is one read later, and the barrier releases everyone at thread 0's arrival. (The
// steady clock's preemption correction is TakeOutPreemption, tested in
// virtual_clock_test.cc.)
TEST(RuntimeTest, UnderTheDeterministicClockOnlyClockReadsAndBarriersMoveTime) {
  auto device = MakeDevice(Deterministic());
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  ASSERT_THAT(RunKernel(*device, "descheduled", R"(
  const long long start = clock64();
  if (threadIdx.x == 0) {
    usleep(20000);
    for (int i = 0; i < 9; ++i) clock64();  // 9 reads of 3 cycles
    out[64] = static_cast<int>(clock64() - start);
  }
  __syncthreads();
  out[threadIdx.x] = static_cast<int>(clock64() - start);
)",
                        {1, 1, 1}, {64, 1, 1}, &out, 65, "#include <unistd.h>"),
              IsOk());
  EXPECT_EQ(out[64], 30) << "the read after the sleep: 10 reads later";
  // Thread 0 arrived 10 reads after its start; everyone continues from there (the others
  // arrived at their start), one read later: 11 reads, 33 cycles.
  for (int t = 0; t < 64; ++t) EXPECT_EQ(out[t], 33) << "thread " << t;
}

// An arrival that completes an mbarrier's phase releases its waiters: that is the runtime's
// work (a GPU's barrier hardware), not the arriving thread's, as at __syncthreads; the
// waiters continue at the completing arrival's time. Before the fix the arriving thread's
// clock kept running through the release of all 1023 waiters. Under the deterministic
// clock both gaps are one clock read, and each waiter reads the completer's time.
TEST(RuntimeTest, ReleasingAnMbarriersWaitersIsNotChargedToTheArrivalThatCompletesIt) {
  auto device = MakeDevice(Deterministic());
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  ASSERT_THAT(RunKernel(*device, "mbarrier_release", R"(
  __shared__ unsigned long long all_waiting;
  __shared__ unsigned long long go;
  __shared__ long long released_at;
  if (threadIdx.x == 0) {
    warptrace_mbarrier_init(&all_waiting, blockDim.x - 1);
    warptrace_mbarrier_init(&go, 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    warptrace_mbarrier_wait_parity(&all_waiting, 0);  // every other thread now waits on go
    for (int i = 0; i < 100; ++i) clock64();          // 300 cycles of work
    const long long before = clock64();
    released_at = before;
    warptrace_mbarrier_arrive(&go);  // completes go: releases blockDim.x - 1 waiters
    const long long after = clock64();
    warptrace_mbarrier_arrive(&all_waiting);  // a plain arrival: nobody waits on phase 1
    out[0] = static_cast<int>(after - before);
    out[1] = static_cast<int>(clock64() - after);
  } else {
    warptrace_mbarrier_arrive(&all_waiting);
    warptrace_mbarrier_wait_parity(&go, 0);
    if (clock64() - released_at != 3) atomicAdd(&out[2], 1);  // one read past the release
  }
)",
                        {1, 1, 1}, {1024, 1, 1}, &out, 3),
              IsOk());
  EXPECT_EQ(out[0], 3) << "cycles across the completing arrival";
  EXPECT_EQ(out[1], 3) << "cycles across a plain arrival";
  EXPECT_EQ(out[2], 0) << "waiters that did not continue at the release";
}

TEST(RuntimeTest, ABlockSpinningOnThePreviousBlocksFlagCompletes) {
  HostDeviceOptions options;
  options.num_virtual_sms = 2;
  options.blocks_per_sm = 1;
  auto device = MakeDevice(options);
  ASSERT_NE(device, nullptr);
  // A chained semaphore: block k waits until block k-1 published, then publishes k+1.
  // out[0] is the semaphore, out[1 + k] the order blocks passed it in.
  std::vector<int> out;
  ASSERT_THAT(RunKernel(*device, "semaphore", R"(
  if (threadIdx.x == 0) {
    while (atomicCAS(&out[0], static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.x)) !=
           static_cast<int>(blockIdx.x)) {
    }
    out[1 + blockIdx.x] = atomicAdd(&out[40], 1);
    __threadfence();
    atomicExch(&out[0], static_cast<int>(blockIdx.x) + 1);
  }
  __syncthreads();
)",
                        {32, 1, 1}, {64, 1, 1}, &out, 41),
              IsOk());
  EXPECT_EQ(out[0], 32);
  for (int k = 0; k < 32; ++k) EXPECT_EQ(out[1 + k], k);
}

TEST(RuntimeTest, BlocksSpinningForeverAreReportedAsADeadlockNamingEachBlock) {
  HostDeviceOptions options;
  options.num_virtual_sms = 2;
  options.blocks_per_sm = 1;
  auto device = MakeDevice(options);
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  EXPECT_THAT(RunKernel(*device, "spin_forever", R"(
  if (threadIdx.x == 0) {
    while (warptrace_poll(&out[blockIdx.x]) == 0) {
    }
  }
  __syncthreads();
)",
                        {2, 1, 1}, {32, 1, 1}, &out, 2),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       AllOf(HasSubstr("deadlock: every resident block's threads wait"),
                             HasSubstr("block (0,0,0) (linear 0) on virtual SM"),
                             HasSubstr("block (1,0,0) (linear 1) on virtual SM"),
                             HasSubstr("thread 0: spin in warptrace_poll"),
                             HasSubstr("threads 1-31: wait at __syncthreads (barrier 0: 31 of "
                                       "32 threads arrived)"))));
}

TEST(RuntimeTest, AFailedAssertFailsTheLaunchNamingBlockAndThread) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  EXPECT_THAT(RunKernel(*device, "asserts", R"(
  assert(blockIdx.x != 2 || threadIdx.x != 7);
  __syncthreads();
  out[threadIdx.x] = 1;
)",
                        {4, 1, 1}, {32, 1, 1}, &out, 32, "#include <cassert>"),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("block (2,0,0) thread (7,0,0)"),
                             HasSubstr("assertion `blockIdx.x != 2 || threadIdx.x != 7` failed "
                                       "at asserts.cc:"))));
}

TEST(RuntimeTest, InlinePtxIsACompileErrorSayingItNeedsAGpu) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  EXPECT_THAT(device->Load(SimpleKernel("ptx", R"(
  unsigned int lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  out[threadIdx.x] = lane;
)")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("ptx.cc:5:"),
                             HasSubstr("inline PTX (asm(mov.u32 %0, %%laneid;"),
                             HasSubstr("cannot run on the host backend: this kernel needs a "
                                       "GPU"))));
}

TEST(RuntimeTest, TensorCoreCodeIsACompileErrorSayingItNeedsAGpu) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  EXPECT_THAT(device->Load(SimpleKernel("wmma", R"(
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, float, nvcuda::wmma::row_major> a;
  (void)a;
  out[0] = 1;
)")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("nvcuda::wmma (tensor-core instructions) cannot run on the "
                                 "host backend: this kernel needs a GPU")));
}

// The operand exchange (host_abi.h, WarptraceHostRuntime::exchange) that warp- and
// warpgroup-wide instructions are built on.

TEST(RuntimeTest, AWarpExchangeGivesEveryLaneEveryLanesOperandsRoundAfterRound) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  // Each round's last lane completes the exchange and runs on into the next round's
  // exchange (writing its operands) before the other lanes read this round's: the two
  // buffers keep them apart. out[(round * 64 + thread) * 32 + i]: what the thread saw at
  // position i.
  std::vector<int> out;
  ASSERT_THAT(RunKernel(*device, "warp_exchange", R"(
  for (int round = 0; round < 3; ++round) {
    const int mine = round * 1000 + threadIdx.x;
    const int* all = ::warptrace_host::Exchange(WARPTRACE_HOST_GROUP_WARP, mine, "test.exchange");
    for (int i = 0; i < 32; ++i) out[(round * 64 + threadIdx.x) * 32 + i] = all[i];
  }
)",
                        {1, 1, 1}, {64, 1, 1}, &out, 3 * 64 * 32),
              IsOk());
  for (int round = 0; round < 3; ++round) {
    for (int t = 0; t < 64; ++t) {
      for (int i = 0; i < 32; ++i) {
        ASSERT_EQ(out[(round * 64 + t) * 32 + i], round * 1000 + (t / 32) * 32 + i)
            << "round " << round << " thread " << t << " position " << i;
      }
    }
  }
}

TEST(RuntimeTest, AWarpgroupExchangeSpansFourWarpsAndKeepsWarpgroupsApart) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  ASSERT_THAT(RunKernel(*device, "warpgroup_exchange", R"(
  for (int round = 0; round < 2; ++round) {
    const long long mine = (round + 1) * 100000ll + threadIdx.x;
    const long long* all = ::warptrace_host::Exchange(WARPTRACE_HOST_GROUP_WARPGROUP, mine,
                                                      "test.wg_exchange");
    long long sum = 0;
    for (int i = 0; i < 128; ++i) sum += all[i] * (i + 1);
    out[round * 256 + threadIdx.x] = static_cast<int>(sum % 1000003);
    if (round == 1) __syncwarp();  // a warp collective between exchanges is independent
  }
  out[512 + threadIdx.x] = ::warptrace_host::GroupPosition(WARPTRACE_HOST_GROUP_WARPGROUP);
)",
                        {1, 1, 1}, {256, 1, 1}, &out, 768),
              IsOk());
  for (int round = 0; round < 2; ++round) {
    for (int t = 0; t < 256; ++t) {
      long long sum = 0;
      for (int i = 0; i < 128; ++i) sum += ((round + 1) * 100000ll + (t / 128) * 128 + i) * (i + 1);
      EXPECT_EQ(out[round * 256 + t], static_cast<int>(sum % 1000003)) << round << " " << t;
    }
  }
  for (int t = 0; t < 256; ++t) EXPECT_EQ(out[512 + t], t % 128);
}

TEST(RuntimeTest, ExchangesOfDifferentSizesAlternateWithoutClobberingEachOther) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  // A small exchange, then a large one, then small again: each buffer grows while the other
  // one, which slower threads still read, stays as it was. out[(round * 128 + t)]: the sum
  // the thread saw (a checksum of every position's operands).
  std::vector<int> out;
  ASSERT_THAT(RunKernel(*device, "mixed_sizes", R"(
  struct Big { int v[16]; };
  for (int round = 0; round < 4; ++round) {
    long long sum = 0;
    if (round % 2 == 0) {
      const int mine = round * 1000 + threadIdx.x;
      const int* all = ::warptrace_host::Exchange(WARPTRACE_HOST_GROUP_WARPGROUP, mine, "test.small");
      for (int i = 0; i < 128; ++i) sum += all[i] * (i + 1);
    } else {
      Big mine;
      for (int j = 0; j < 16; ++j) mine.v[j] = round * 1000 + threadIdx.x * 16 + j;
      const Big* all = ::warptrace_host::Exchange(WARPTRACE_HOST_GROUP_WARPGROUP, mine, "test.big");
      for (int i = 0; i < 128; ++i) {
        for (int j = 0; j < 16; ++j) sum += all[i].v[j] * (i + 1) * (j + 1);
      }
    }
    out[round * 128 + threadIdx.x] = static_cast<int>(sum % 1000003);
  }
)",
                        {1, 1, 1}, {128, 1, 1}, &out, 4 * 128),
              IsOk());
  for (int round = 0; round < 4; ++round) {
    long long sum = 0;
    for (int i = 0; i < 128; ++i) {
      if (round % 2 == 0) {
        sum += (round * 1000 + i) * (i + 1);
      } else {
        for (int j = 0; j < 16; ++j) sum += (round * 1000 + i * 16 + j) * (i + 1) * (j + 1);
      }
    }
    for (int t = 0; t < 128; ++t) {
      ASSERT_EQ(out[round * 128 + t], static_cast<int>(sum % 1000003)) << round << " " << t;
    }
  }
}

TEST(RuntimeTest, AnExchangeWhoseMemberExitedFailsNamingTheThreadsAndInstruction) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  // Thread 0 runs first and exits; thread 1 is the first to reach the exchange.
  EXPECT_THAT(RunKernel(*device, "exited_member", R"(
  if (threadIdx.x == 0) return;
  const int mine = threadIdx.x;
  out[threadIdx.x] = ::warptrace_host::Exchange(WARPTRACE_HOST_GROUP_WARP, mine, "test.exchange")[0];
)",
                        {1, 1, 1}, {32, 1, 1}, &out, 32),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("block (0,0,0) thread (1,0,0)"),
                             HasSubstr("test.exchange in warp 0 (threads 0-31): thread 0 exited "
                                       "and will never arrive"))));
}

TEST(RuntimeTest, AMemberExitingWhileItsGroupWaitsFailsTheLaunch) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  EXPECT_THAT(RunKernel(*device, "exiting_member", R"(
  if (threadIdx.x == 9) return;
  const int mine = threadIdx.x;
  out[threadIdx.x] = ::warptrace_host::Exchange(WARPTRACE_HOST_GROUP_WARP, mine, "test.exchange")[0];
)",
                        {1, 1, 1}, {32, 1, 1}, &out, 32),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("block (0,0,0)"),
                             HasSubstr("thread 9 exited while threads 0-8 of warp 0 (threads "
                                       "0-31) wait for it at test.exchange"))));
}

TEST(RuntimeTest, MembersExecutingDifferentInstructionsFailTheLaunch) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  EXPECT_THAT(RunKernel(*device, "different_instructions", R"(
  const int mine = threadIdx.x;
  const char* what = threadIdx.x < 16 ? "test.first" : "test.second";
  out[threadIdx.x] = ::warptrace_host::Exchange(WARPTRACE_HOST_GROUP_WARP, mine, what)[0];
)",
                        {1, 1, 1}, {32, 1, 1}, &out, 32),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("block (0,0,0) thread (16,0,0)"),
                             HasSubstr("test.second in warp 0 (threads 0-31): thread 16 issues "
                                       "test.second while threads 0-15 wait in test.first"))));
}

TEST(RuntimeTest, AMemberThatNeverArrivesIsADeadlockNamingTheMissingThreads) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  EXPECT_THAT(RunKernel(*device, "missing_member", R"(
  if (threadIdx.x == 3 || threadIdx.x >= 32) {
    warptrace_named_barrier_sync(1, 64);  // 33 of 64 threads come
  } else {
    const int mine = threadIdx.x;
    out[threadIdx.x] = ::warptrace_host::Exchange(WARPTRACE_HOST_GROUP_WARP, mine,
                                                  "test.exchange")[0];
  }
)",
                        {1, 1, 1}, {64, 1, 1}, &out, 64),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       AllOf(HasSubstr("deadlock in block (0,0,0)"),
                             HasSubstr("threads 0-2: wait at test.exchange in warp 0 (threads "
                                       "0-31): threads 0-2, 4-31 arrived, threads 3 never did"),
                             HasSubstr("thread 3: wait at bar.sync"))));
}

TEST(RuntimeTest, AWarpgroupExchangeInABlockSmallerThanTheWarpgroupFails) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  EXPECT_THAT(RunKernel(*device, "small_block", R"(
  const int mine = threadIdx.x;
  out[threadIdx.x] = ::warptrace_host::Exchange(WARPTRACE_HOST_GROUP_WARPGROUP, mine,
                                                "test.wg_exchange")[0];
)",
                        {1, 1, 1}, {64, 1, 1}, &out, 64),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("test.wg_exchange is warpgroup-wide: warpgroup 0 is threads "
                                 "0-127, but the block has only 64 threads")));
}

TEST(RuntimeTest, AnOperandThatMustBeUniformAndIsNotFailsNamingTheThread) {
  auto device = MakeDevice();
  ASSERT_NE(device, nullptr);
  std::vector<int> out;
  ASSERT_THAT(RunKernel(*device, "uniform_ok", R"(
  const unsigned long long desc = 0x4000004000010040ull + blockIdx.x;
  out[threadIdx.x] = static_cast<int>(::warptrace_host::Uniform(
      WARPTRACE_HOST_GROUP_WARPGROUP, desc, "test.wgmma", "desc_a") & 0xff);
)",
                        {1, 1, 1}, {128, 1, 1}, &out, 128),
              IsOk());
  EXPECT_THAT(out, Each(0x40));
  EXPECT_THAT(RunKernel(*device, "uniform_bad", R"(
  const unsigned long long desc = threadIdx.x == 37 ? 0x50ull : 0x40ull;
  out[threadIdx.x] = static_cast<int>(::warptrace_host::Uniform(
      WARPTRACE_HOST_GROUP_WARPGROUP, desc, "test.wgmma", "desc_a"));
)",
                        {1, 1, 1}, {128, 1, 1}, &out, 128),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("block (0,0,0) thread (37,0,0)"),
                             HasSubstr("test.wgmma: operand desc_a must be the same in every "
                                       "thread of the warpgroup (threads 0-127), but thread 37 "
                                       "has 0x50 where thread 0 has 0x40"))));
}

}  // namespace
}  // namespace warptrace
