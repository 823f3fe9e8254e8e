// The races check on global memory (docs/sanitizer.md, jit/host/runtime/global_races.h):
// within a block, global accesses are ordered as shared ones are (barriers); between blocks
// only a fence-and-atomic protocol orders them. Builder kernels with a missing barrier, two
// blocks writing the same output, and a block reading others' partial results without a
// protocol are named; the legal patterns (a barrier, atomics from every block, CUDA's
// threadFenceReduction "last block" pattern) pass, with their results checked.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/platform/sanitize.h"
#include "jit/platform/tensor_map.h"
#include "jit/run/run.h"
#include "tests/e2e/sanitized_run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// Each block copies `in` to out[0..63], scaled by its block number: two blocks write the
// same 64 floats (a tile-index bug: `out[threadIdx.x]` for `out[blockIdx.x * 64 + ...]`).
absl::StatusOr<Kernel> SameTileKernel() {
  KernelBuilder b("same_tile");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({2, 1, 1}).Block({64, 1, 1});
  b.Stmt("out[threadIdx.x] = in[threadIdx.x] * (blockIdx.x + 1);");
  return b.Build();
}

// One block writes out[0..63], then reads it reversed into out[64..127]; `barrier`: a
// __syncthreads between (without it thread 32 reads what thread 31 wrote, unordered).
absl::StatusOr<Kernel> GlobalReverseKernel(bool barrier) {
  KernelBuilder b("global_reverse");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({64, 1, 1});
  b.Stmt("out[threadIdx.x] = in[threadIdx.x] + threadIdx.x;");
  if (barrier) b.Barrier("written");
  b.Stmt("out[64 + threadIdx.x] = out[63 - threadIdx.x];");
  return b.Build();
}

// Four blocks each write a partial sum to out[blockIdx.x]; the last block to finish adds
// them into out[4]. `protocol`: the writer's __threadfence() and an atomic ticket in out[8]
// (CUDA's threadFenceReduction sample); without it block 0 reads the partials at once.
absl::StatusOr<Kernel> LastBlockSumKernel(bool protocol) {
  KernelBuilder b("last_block_sum");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({4, 1, 1}).Block({32, 1, 1});
  b.Stmt("if (threadIdx.x == 0) out[blockIdx.x] = in[blockIdx.x] * (blockIdx.x + 1);");
  if (protocol) {
    b.Stmt(
        "if (threadIdx.x == 0) { __threadfence(); "
        "const float ticket = atomicAdd(&out[8], 1.0f); "
        "if (ticket == gridDim.x - 1.0f) { float s = 0.0f; "
        "for (int i = 0; i < 4; ++i) s += out[i]; out[4] = s; } }");
  } else {
    b.Stmt(
        "if (threadIdx.x == 0 && blockIdx.x == 0) { float s = 0.0f; "
        "for (int i = 0; i < 4; ++i) s += out[i]; out[4] = s; }");
  }
  return b.Build();
}

// Every thread of two blocks adds its input to out[0] with atomicAdd.
absl::StatusOr<Kernel> AtomicSumKernel() {
  KernelBuilder b("atomic_sum");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({2, 1, 1}).Block({64, 1, 1});
  b.Stmt("atomicAdd(&out[0], in[blockIdx.x * 64 + threadIdx.x]);");
  return b.Build();
}

// Each block fills a 64 x 32 bf16 tile (fenced for the async proxy) and thread 0 TMA-stores
// it at rows `same_tile` ? 0 : 32 x blockIdx.x of a 64 x 64 tensor.
absl::StatusOr<Kernel> TmaStoreTilesKernel(bool same_tile) {
  KernelBuilder b("store_tiles");
  b.Param("CUtensorMap", "tm_out");
  b.Grid({2, 1, 1}).Block({128, 1, 1});
  b.Stmt("__shared__ __align__(1024) unsigned short tile[2048];");
  b.Stmt("for (int i = 0; i < 16; ++i) tile[threadIdx.x * 16 + i] = 0x3f80;");
  b.Stmt("warptrace_fence_proxy_async();");
  b.Barrier("written");
  AsyncCopySpec store;
  store.name = "store tile";
  store.tensor_map = "tm_out";
  store.src = "tile";
  store.coords = {"0", same_tile ? "0" : "32 * blockIdx.x"};
  b.TmaStore(store);
  b.WaitTmaStores(0);
  return b.Build();
}

class GlobalRacesTest : public testing::SanitizedRunTest {
 protected:
  GlobalRacesTest() : SanitizedRunTest(SanitizeOptions{false, false, true}) {}
};

TEST_F(GlobalRacesTest, NamesTwoBlocksWritingTheSameOutput) {
  const absl::Status status = Run(SameTileKernel(), 64, 64).status();
  EXPECT_THAT(
      status,
      StatusIs(absl::StatusCode::kFailedPrecondition,
               AllOf(HasSubstr("sanitizer: 1 finding"),
                     HasSubstr("data race between blocks (two writes): block (1,0,0) thread "
                               "(0,0,0) writes bytes 0-255 of argument `out` (float*) at "
                               "kernel same_tile > statement `out[threadIdx.x] = in["),
                     HasSubstr("; block (0,0,0) thread (0,0,0) writes them at kernel "
                               "same_tile > statement"),
                     HasSubstr("nothing orders the two blocks' accesses"))))
      << status;
  // Unprofiled, the same (the recorder is not what orders or disorders them).
  EXPECT_THAT(Run(SameTileKernel(), 64, 64, /*profile=*/false).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("data race between blocks (two writes)")));
}

TEST_F(GlobalRacesTest, NamesAGlobalReadWithoutTheBarrierAfterAnotherThreadsWrite) {
  const absl::Status status = Run(GlobalReverseKernel(false), 64, 128).status();
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("data race (read after write): block (0,0,0) thread "
                                       "(32,0,0) reads 4 bytes at byte 124 of argument `out` "
                                       "(float*) at kernel global_reverse > statement "
                                       "`out[64 + threadIdx.x] = "),
                             HasSubstr("; block (0,0,0) thread (31,0,0)'s write at kernel "
                                       "global_reverse > statement `out[threadIdx.x] = "),
                             HasSubstr("no barrier (__syncthreads, bar.sync), mbarrier phase "
                                       "wait or async completion orders them"))))
      << status;
}

// Legal: bar.sync "guarantees that all prior memory accesses requested by threads are
// performed relative to all threads participating in the barrier" (PTX ISA, bar.sync):
// global memory included.
TEST_F(GlobalRacesTest, ABarrierOrdersGlobalAccessesOfABlock) {
  ASSERT_THAT(Run(GlobalReverseKernel(true), 64, 128), IsOk());
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out_[64 + i], 1.0f + (63 - i)) << i;
}

TEST_F(GlobalRacesTest, NamesABlockReadingPartialsWithoutAProtocol) {
  const absl::Status status = Run(LastBlockSumKernel(false), 4, 16).status();
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("data race between blocks (a write and a read)"),
                             HasSubstr("of argument `out` (float*)"),
                             HasSubstr("only a fence-and-atomic protocol orders one block's "
                                       "global accesses before another's"),
                             Not(HasSubstr("these blocks use fences or atomics")))))
      << status;
}

// Legal: CUDA's threadFenceReduction pattern. The writer's __threadfence() (fence.sc, PTX
// ISA "Memory Consistency Model": a fence followed by a write establishes release pattern)
// before its atomic ticket, and the last block's atomic before its reads, order every
// partial before the sum.
TEST_F(GlobalRacesTest, TheLastBlockPatternWithFenceAndAtomicDoesNotRace) {
  ASSERT_THAT(Run(LastBlockSumKernel(true), 4, 16), IsOk());
  EXPECT_EQ(out_[4], 1.0f + 2.0f + 3.0f + 4.0f);
  EXPECT_EQ(out_[8], 4.0f);
}

// Legal: atomic operations on one address are performed one at a time (PTX ISA, atom),
// whichever blocks make them.
TEST_F(GlobalRacesTest, GlobalAtomicsFromEveryBlockDoNotRace) {
  ASSERT_THAT(Run(AtomicSumKernel(), 128, 1), IsOk());
  EXPECT_EQ(out_[0], 128.0f);
}

// The verdict does not depend on the schedule: the same report every run, on 1 virtual SM
// (blocks one after the other) as on 2 (blocks side by side), for a race between blocks and
// one within a block.
TEST_F(GlobalRacesTest, TheReportIsTheSameEveryRunOnAnyNumberOfVirtualSms) {
  HostDeviceOptions options;
  options.num_virtual_sms = 1;
  options.sanitize = checks_;
  absl::StatusOr<std::unique_ptr<HostDevice>> one_sm =
      testing::CreateSandboxedHostDevice(options);
  ASSERT_THAT(one_sm, IsOk());
  for (const bool between_blocks : {true, false}) {
    const absl::Status first = between_blocks ? Run(LastBlockSumKernel(false), 4, 16).status()
                                              : Run(GlobalReverseKernel(false), 64, 128).status();
    ASSERT_THAT(first, StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("data race")));
    for (int run = 0; run < 3; ++run) {
      EXPECT_EQ(between_blocks ? Run(LastBlockSumKernel(false), 4, 16).status()
                               : Run(GlobalReverseKernel(false), 64, 128).status(),
                first);
    }
    std::swap(device_, *one_sm);  // the same kernels on one virtual SM
    EXPECT_EQ(between_blocks ? Run(LastBlockSumKernel(false), 4, 16).status()
                             : Run(GlobalReverseKernel(false), 64, 128).status(),
              first);
    std::swap(device_, *one_sm);
  }
}

// TMA stores write global memory too: two blocks storing one tile race; storing their own
// tiles they do not.
TEST_F(GlobalRacesTest, NamesTwoBlocksTmaStoringTheSameTile) {
  std::vector<uint16_t> out(64 * 64);
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kBFloat16;
  spec.dims = {64, 64};
  spec.strides_bytes = {128};
  spec.box = {64, 32};
  spec.swizzle = TensorMapSwizzle::k128B;
  ASSERT_THAT(RunTensorMapOut(TmaStoreTilesKernel(false), out, spec), IsOk());
  for (uint16_t v : out) ASSERT_EQ(v, 0x3f80);
  const absl::Status status = RunTensorMapOut(TmaStoreTilesKernel(true), out, spec);
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("data race between blocks (two writes): block (1,0,0) "
                                       "thread (0,0,0) writes bytes 0-4095 of the tensor of "
                                       "argument `tm_out` (CUtensorMap) at kernel store_tiles > "
                                       "tma store store tile"),
                             HasSubstr("; block (0,0,0) thread (0,0,0) writes them at kernel "
                                       "store_tiles > tma store store tile"))))
      << status;
}

}  // namespace
}  // namespace warptrace
