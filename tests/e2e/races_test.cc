// The sanitizer's races check (docs/sanitizer.md, jit/host/runtime/races.h): builder kernels
// with a missing barrier, a cp.async read before its wait, and legal patterns (a barrier, a
// wait then a barrier, shared-memory atomics, __syncwarp between lanes) run end to end on
// HostDevice with --sanitize=races: each race named with both accesses, the legal ones pass.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/kernels/hopper_gemm.h"
#include "jit/platform/tensor_map.h"
#include "jit/platform/sanitize.h"
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

// Stages 64 floats in shared memory and reads them back reversed; `barrier`: a
// __syncthreads between the write and the read (without it the read races).
absl::StatusOr<Kernel> ReverseKernel(bool barrier) {
  KernelBuilder b("reverse");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({2, 1, 1}).Block({64, 1, 1});
  b.Stmt("__shared__ float tile[64];");
  b.Stmt("tile[threadIdx.x] = in[threadIdx.x];");
  if (barrier) b.Barrier("staged");
  b.Stmt("out[blockIdx.x * 64 + threadIdx.x] = tile[63 - threadIdx.x];");
  return b.Build();
}

// The same through cp.async: `wait` 0 omits the cp.async.wait_group, 1 waits without a
// barrier after it (other threads' copies are still unordered), 2 waits and then syncs.
absl::StatusOr<Kernel> CpAsyncReverseKernel(int wait) {
  KernelBuilder b("cp_async_reverse");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({64, 1, 1});
  b.Stmt("__shared__ __align__(16) float tile[64];");
  b.Stmt("warptrace_cp_async(&tile[threadIdx.x], &in[threadIdx.x], 4);");
  b.Stmt("warptrace_cp_async_commit();");
  if (wait >= 1) b.Stmt("warptrace_cp_async_wait_prior(0);");
  if (wait >= 2) b.Barrier("landed");
  b.Stmt("out[threadIdx.x] = tile[63 - threadIdx.x];");
  return b.Build();
}

// A shared-memory histogram: every thread atomicAdds into one of 4 bins, then thread 0
// reads them after a barrier (legal: atomics do not race with each other).
absl::StatusOr<Kernel> HistogramKernel() {
  KernelBuilder b("histogram");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({128, 1, 1});
  b.Stmt("__shared__ unsigned int bins[4];");
  b.Stmt("if (threadIdx.x < 4) bins[threadIdx.x] = 0u;");
  b.Barrier("cleared");
  b.Stmt("atomicAdd(&bins[threadIdx.x % 4], 1u);");
  b.Barrier("counted");
  b.Stmt("if (threadIdx.x < 4) out[threadIdx.x] = static_cast<float>(bins[threadIdx.x]);");
  return b.Build();
}

// Every thread adds 1 to one shared counter with a plain `+=` (one statement: a read and a
// write of the same word), the lost update of a histogram written without atomics; with
// `atomic`, through the host compiler's own builtin where the kernel is compiled for the
// host backend (legal, as atomicAdd).
absl::StatusOr<Kernel> CounterKernel(bool atomic) {
  KernelBuilder b("counter");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({64, 1, 1});
  b.Stmt("__shared__ unsigned int count[1];");
  b.Stmt("if (threadIdx.x == 0) count[0] = 0u;");
  b.Barrier("cleared");
  b.Stmt(atomic ? "\n#ifdef WARPTRACE_HOST_BACKEND\n"
                  "__atomic_fetch_add(&count[0], 1u, __ATOMIC_RELAXED);\n"
                  "#else\n"
                  "atomicAdd(&count[0], 1u);\n"
                  "#endif\n"
                : "count[0] += 1u;");
  b.Barrier("counted");
  b.Stmt("if (threadIdx.x == 0) out[0] = static_cast<float>(count[0]);");
  return b.Build();
}

// Lane 0 of each warp writes a value that the warp's lanes read after `sync` (__syncwarp:
// legal; nothing: a race between lanes).
absl::StatusOr<Kernel> WarpBroadcastKernel(bool sync) {
  KernelBuilder b("warp_broadcast");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({64, 1, 1});
  b.Stmt("__shared__ float lead[2];");
  b.Stmt("if (threadIdx.x % 32 == 0) lead[threadIdx.x / 32] = in[threadIdx.x];");
  if (sync) b.Stmt("__syncwarp();");
  b.Stmt("out[threadIdx.x] = lead[threadIdx.x / 32];");
  return b.Build();
}

// Every thread reads one word that thread 0 staged; then thread 62 overwrites it, after a
// barrier when `barrier` (legal) or right after its own read, a statement later: a race with
// the reads of the threads that ran before it (63, which completed the barrier, then 0..61,
// which the races check keeps as one read of threads 0..61).
absl::StatusOr<Kernel> BroadcastThenOverwriteKernel(bool barrier) {
  KernelBuilder b("overwrite");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({64, 1, 1});
  b.Stmt("__shared__ float v[1];");
  b.Stmt("if (threadIdx.x == 0) v[0] = in[0];");
  b.Barrier("staged");
  b.Stmt("out[threadIdx.x] = v[0];");
  if (barrier) b.Barrier("read");
  b.Stmt("if (threadIdx.x == 62) v[0] = 2.0f;");
  return b.Build();
}

// Lane 5 of each of the four warps reads a word thread 0 staged (threads 5, 37, 69, 101:
// one read-set entry of stride 32); thread 100 overwrites it a statement later, between
// the third and the fourth reader: a race with the first three reads, and the fourth
// read races with the write.
absl::StatusOr<Kernel> LaneOfEachWarpThenOverwriteKernel() {
  KernelBuilder b("lane_reads");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({128, 1, 1});
  b.Stmt("__shared__ float v[1];");
  b.Stmt("if (threadIdx.x == 0) v[0] = in[0];");
  b.Barrier("staged");
  b.Stmt("if (threadIdx.x % 32 == 5) out[threadIdx.x / 32] = v[0];");
  b.Stmt("if (threadIdx.x == 100) v[0] = 2.0f;");
  return b.Build();
}

// Each thread writes two rows of a 64 x 129 matrix (33 KiB: past a page of the races
// check's shadow, 16 KiB), a barrier, then reads its row and its column interleaved (two
// runs of the thread's batch, the column's crossing the page at row 32). With `plant`,
// thread 5 writes m[40][3] after the barrier: thread 3's column read of it, the 41st of
// its run and on the second page, races with that write.
absl::StatusOr<Kernel> RowTimesColumnKernel(bool plant) {
  KernelBuilder b("row_times_column");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({32, 1, 1});
  b.Stmt("__shared__ float m[64 * 129];");
  b.Stmt("for (int r = threadIdx.x; r < 64; r += 32) {\n"
         "  for (int i = 0; i < 129; ++i) m[r * 129 + i] = in[i] * (r + 1);\n"
         "}");
  b.Barrier("written");
  if (plant) b.Stmt("if (threadIdx.x == 5) m[40 * 129 + 3] = 0.0f;");
  b.Stmt("float sum = 0.0f;\n"
         "for (int i = 0; i < 64; ++i) {\n"
         "  sum += m[threadIdx.x * 129 + i] * m[i * 129 + threadIdx.x];\n"
         "}\n"
         "out[threadIdx.x] = sum;");
  return b.Build();
}

// Threads 0 and 1 each write a row of 100 words (more than a batch of the races check's
// plain accesses, host_abi.h WARPTRACE_HOST_RACE_BATCH), then read the other's row with no
// barrier between: every one of thread 1's 200 accesses races with one of thread 0's,
// including those that thread 0 made last before it exited.
absl::StatusOr<Kernel> SwapRowsKernel() {
  KernelBuilder b("swap_rows");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({32, 1, 1});
  b.Stmt("__shared__ float rows[200];");
  b.Stmt(
      "if (threadIdx.x < 2) {\n"
      "  for (int i = 0; i < 100; ++i) rows[threadIdx.x * 100 + i] = in[i];\n"
      "  float sum = 0.0f;\n"
      "  for (int i = 0; i < 100; ++i) sum += rows[(1 - threadIdx.x) * 100 + i];\n"
      "  out[threadIdx.x] = sum;\n"
      "}");
  return b.Build();
}

// Warp 0 reads a whole row of 32 words (one read set for the row's words), a barrier, warp
// 1 reads its first 16 words (their set changes, the other 16 words' does not), and thread
// 61, which runs last of them, writes words 20 and 5: only the write of word 5 races (with
// warp 1's reads; the barrier orders warp 0's before both writes).
absl::StatusOr<Kernel> SharedRowReadsKernel() {
  KernelBuilder b("row_reads");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({64, 1, 1});
  b.Stmt("__shared__ float row[32];");
  b.Stmt("if (threadIdx.x < 32) row[threadIdx.x] = in[threadIdx.x];");
  b.Barrier("staged");
  b.Stmt("float sum = 0.0f;\n"
         "if (threadIdx.x < 32) {\n"
         "  for (int i = 0; i < 32; ++i) sum += row[i];\n"
         "}");
  b.Barrier("summed");
  b.Stmt("if (threadIdx.x >= 32) {\n"
         "  for (int i = 0; i < 16; ++i) sum += row[i];\n"
         "}");
  b.Stmt("if (threadIdx.x == 61) {\n"
         "  row[20] = sum;\n"
         "  row[5] = sum;\n"
         "}");
  b.Stmt("out[threadIdx.x] = sum;");
  return b.Build();
}

// Every thread writes its 16 bf16 of a 64 x 32 tile through the generic proxy, then (with
// `fence`) fence.proxy.async, a barrier, and thread 0 TMA-stores the tile.
absl::StatusOr<Kernel> GenericThenTmaStoreKernel(bool fence) {
  KernelBuilder b("store_tile");
  b.Param("CUtensorMap", "tm_out");
  b.Grid({1, 1, 1}).Block({128, 1, 1});
  b.Stmt("__shared__ __align__(1024) unsigned short tile[2048];");
  b.Stmt("for (int i = 0; i < 16; ++i) tile[threadIdx.x * 16 + i] = 0x3f80;");
  if (fence) b.Stmt("warptrace_fence_proxy_async();");
  b.Barrier("written");
  AsyncCopySpec store;
  store.name = "store tile";
  store.tensor_map = "tm_out";
  store.src = "tile";
  store.coords = {"0", "0"};
  b.TmaStore(store);
  b.WaitTmaStores(0);
  return b.Build();
}

class RacesTest : public testing::SanitizedRunTest {
 protected:
  RacesTest() : SanitizedRunTest(SanitizeOptions{false, false, true}) {}
};

TEST_F(RacesTest, NamesAReadWithoutTheBarrierAfterAnotherThreadsWrite) {
  // The threads run in order, each to its end: thread 32 is the first to read a byte that
  // another thread (31) wrote, and thread 32's write is the first after another's read.
  const absl::Status status = Run(ReverseKernel(false), 64, 128).status();
  EXPECT_THAT(
      status,
      StatusIs(absl::StatusCode::kFailedPrecondition,
               AllOf(HasSubstr("sanitizer: 2 distinct findings (128 faulty accesses):\n"),
                     HasSubstr("data race (read after write): block (0,0,0) thread (32,0,0) "
                               "reads 4 bytes at tile[31] (byte offset 124 of __shared__ tile, "
                               "64 elements of 4 bytes) at kernel reverse > statement `out["),
                     HasSubstr("; block (0,0,0) thread (31,0,0)'s write at kernel reverse > "
                               "statement `tile[threadIdx.x] = in[thread...` is not ordered "
                               "before it: no barrier (__syncthreads, bar.sync), mbarrier "
                               "phase wait or async completion orders them"),
                     HasSubstr("data race (write after read): block (0,0,0) thread (32,0,0) "
                               "writes 4 bytes at tile[32]"))))
      << status;
}

// Legal: bar.sync orders memory (PTX ISA, bar.sync: "guarantees that all prior memory
// accesses requested by threads are performed relative to all threads participating in the
// barrier").
TEST_F(RacesTest, ABarrierOrdersThem) {
  EXPECT_THAT(Run(ReverseKernel(true), 64, 128), IsOk());
  EXPECT_THAT(Run(ReverseKernel(true), 64, 128, /*profile=*/false), IsOk());
}

TEST_F(RacesTest, NamesAReadOfACpAsyncCopyBeforeItsWait) {
  const absl::Status status = Run(CpAsyncReverseKernel(0), 64, 64).status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kFailedPrecondition,
                               AllOf(HasSubstr("data race (read after write)"),
                                     HasSubstr("; the cp.async (group 1) of block (0,0,0) "
                                               "thread (31,0,0) issued at"),
                                     HasSubstr("is not ordered before it: no "
                                               "cp.async.wait_group of block (0,0,0) thread "
                                               "(31,0,0) covering group 1, then a barrier"))))
      << status;
}

// cp.async.wait_group makes a thread's completed copies visible to that thread only (PTX
// ISA, cp.async.wait_group: it "waits for the completion of ... cp.async-groups" of the
// executing thread); other threads need a barrier after it. Legal: wait, then barrier.
TEST_F(RacesTest, ACpAsyncWaitWithoutABarrierOrdersOnlyTheThreadsOwnCopies) {
  const absl::Status status = Run(CpAsyncReverseKernel(1), 64, 64).status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kFailedPrecondition,
                               HasSubstr("data race (read after write)")))
      << status;
  EXPECT_THAT(Run(CpAsyncReverseKernel(2), 64, 64), IsOk());
}

TEST_F(RacesTest, NamesTheFirstOfAWarpsReadsThatAWriteRacesWith) {
  const absl::Status status = Run(BroadcastThenOverwriteKernel(false), 1, 64).status();
  EXPECT_THAT(
      status,
      StatusIs(absl::StatusCode::kFailedPrecondition,
               AllOf(HasSubstr("sanitizer: 1 finding (1 faulty access):"),
                     HasSubstr("data race (write after read): block (0,0,0) thread (62,0,0) "
                               "writes 4 bytes at v[0]"),
                     HasSubstr("; block (0,0,0) thread (0,0,0)'s read at kernel overwrite > "
                               "statement `out[threadIdx.x] = v[0];` is not ordered before it"))))
      << status;
  // Legal: the barrier orders every lane's read before the write (PTX ISA, bar.sync).
  EXPECT_THAT(Run(BroadcastThenOverwriteKernel(true), 1, 64), IsOk());
}

TEST_F(RacesTest, NamesTheFirstOfOneLaneOfEachWarpsReadsThatAWriteRacesWith) {
  const absl::Status status = Run(LaneOfEachWarpThenOverwriteKernel(), 1, 4).status();
  EXPECT_THAT(
      status,
      StatusIs(absl::StatusCode::kFailedPrecondition,
               AllOf(HasSubstr("sanitizer: 2 distinct findings (2 faulty accesses):"),
                     HasSubstr("data race (write after read): block (0,0,0) thread (100,0,0) "
                               "writes 4 bytes at v[0]"),
                     HasSubstr("; block (0,0,0) thread (5,0,0)'s read at kernel lane_reads > "
                               "statement `if (threadIdx.x % 32 == 5) ou...` is not "
                               "ordered before it"),
                     HasSubstr("data race (read after write): block (0,0,0) thread (101,0,0) "
                               "reads 4 bytes at v[0]"))))
      << status;
}

TEST_F(RacesTest, ChecksEveryAccessOfALongRunAndAThreadsLastBeforeItExits) {
  const absl::Status status = Run(SwapRowsKernel(), 100, 32).status();
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("sanitizer: 2 distinct findings (200 faulty accesses):"),
                             HasSubstr("data race (write after read): block (0,0,0) thread "
                                       "(1,0,0) writes 4 bytes at rows[100]"),
                             HasSubstr("data race (read after write): block (0,0,0) thread "
                                       "(1,0,0) reads 4 bytes at rows[0]"))))
      << status;
}

// A thread's interleaved row and column reads are kept as two runs of its batch; each of
// their accesses is still checked, on either page of the shadow.
TEST_F(RacesTest, ChecksEveryAccessOfInterleavedRunsAcrossShadowPages) {
  const absl::Status status = Run(RowTimesColumnKernel(true), 129, 32).status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kFailedPrecondition,
                               AllOf(HasSubstr("sanitizer: 1 finding (1 faulty access):"),
                                     HasSubstr("data race (write after read): block "
                                               "(0,0,0) thread (5,0,0) writes 4 bytes at "
                                               "m[5163]"),
                                     HasSubstr("statement `if (threadIdx.x == 5) m[40 * ...`; "
                                               "block (0,0,0) thread (3,0,0)'s read at kernel "
                                               "row_times_column > statement `float sum = "))))
      << status;
  // Legal without the planted write: the barrier orders the rows' writes before every
  // read (PTX ISA, bar.sync); out[t] = sum over i of (t + 1) (i + 1).
  ASSERT_THAT(Run(RowTimesColumnKernel(false), 129, 32), IsOk());
  for (int t = 0; t < 32; ++t) EXPECT_EQ(out_[t], static_cast<float>((t + 1) * 2080)) << t;
}

// Words with equal reads share one read set in the races check; a read of some of them
// changes theirs alone: the write of word 20 finds only warp 0's reads, which the barrier
// orders before it (PTX ISA, bar.sync), the write of word 5 warp 1's too.
TEST_F(RacesTest, AReadOfSomeWordsOfARowLeavesTheOtherWordsReadsAsTheyWere) {
  const absl::Status status = Run(SharedRowReadsKernel(), 32, 64).status();
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("sanitizer: 1 finding (1 faulty access):"),
                             HasSubstr("data race (write after read): block (0,0,0) thread "
                                       "(61,0,0) writes 4 bytes at row[5]"),
                             HasSubstr("block (0,0,0) thread (32,0,0)'s read at kernel "
                                       "row_reads > statement `if (threadIdx.x >= 32) {"),
                             Not(HasSubstr("row[20]")))))
      << status;
}

// Legal: atomic operations on the same address are performed one at a time (PTX ISA,
// atom: "atomic read-modify-write"); the barrier orders them before the read.
TEST_F(RacesTest, SharedMemoryAtomicsDoNotRace) {
  ASSERT_THAT(Run(HistogramKernel(), 1, 4), IsOk());
  EXPECT_EQ(out_, (std::vector<float>{32.0f, 32.0f, 32.0f, 32.0f}));
}

// `count[0] += 1u` by every thread: the write of thread 0's read-modify-write is a write
// (the compiler checked only the load of such a statement before host ABI 14, so the
// other threads' increments were read against read and not found).
TEST_F(RacesTest, NamesANonAtomicIncrementOfOneCounterByEveryThread) {
  const absl::Status status = Run(CounterKernel(false), 1, 1).status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kFailedPrecondition,
                               AllOf(HasSubstr("sanitizer: 2 distinct findings (126 faulty "
                                               "accesses)"),
                                     HasSubstr("data race (read after write): block (0,0,0) "
                                               "thread (0,0,0) reads 4 bytes at count[0]"),
                                     HasSubstr("data race (write after write): block (0,0,0) "
                                               "thread (0,0,0) writes 4 bytes at count[0]"),
                                     HasSubstr("statement `count[0] += 1u;`"))))
      << status;
}

// Legal: the compiler's atomic builtins are atomic operations too (sanitize_host.h's
// __tsan_atomic32_fetch_add reports an atomic access and performs it).
TEST_F(RacesTest, TheCompilersAtomicBuiltinsDoNotRace) {
  ASSERT_THAT(Run(CounterKernel(true), 1, 1), IsOk());
  EXPECT_EQ(out_, (std::vector<float>{64.0f}));
}

// The same with clang as the host compiler (tools/setup.sh installs clang-14): its
// instrumentation keeps the read of a read-modify-write only when told to
// (host_compiler.cc SanitizeFlags), and its no_sanitize("thread") still instruments
// atomics, so the callbacks' own atomics must be out of its sight (host_abi.h
// WARPTRACE_HOST_UNINSTRUMENTED: without it the atomic callback called itself until the
// stack overflowed).
class RacesWithClangTest : public testing::SanitizedRunTest {
 protected:
  RacesWithClangTest()
      : SanitizedRunTest(SanitizeOptions{false, false, true}, "clang++-14") {}
};

TEST_F(RacesWithClangTest, NamesANonAtomicIncrementAndPassesAtomics) {
  const absl::Status status = Run(CounterKernel(false), 1, 1).status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kFailedPrecondition,
                               AllOf(HasSubstr("data race (read after write)"),
                                     HasSubstr("data race (write after write)"),
                                     HasSubstr("statement `count[0] += 1u;`"))))
      << status;
  ASSERT_THAT(Run(CounterKernel(true), 1, 1), IsOk());
  EXPECT_EQ(out_, (std::vector<float>{64.0f}));
  ASSERT_THAT(Run(HistogramKernel(), 1, 4), IsOk());
  EXPECT_EQ(out_, (std::vector<float>{32.0f, 32.0f, 32.0f, 32.0f}));
}

// Legal: __syncwarp (bar.warp.sync) "guarantees memory ordering among threads
// participating in the barrier" (CUDA programming guide, __syncwarp); without it the lanes
// of a warp are not ordered (independent thread scheduling).
TEST_F(RacesTest, SyncwarpOrdersTheLanesOfAWarp) {
  EXPECT_THAT(Run(WarpBroadcastKernel(true), 64, 64), IsOk());
  EXPECT_THAT(Run(WarpBroadcastKernel(false), 64, 64).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("data race (read after write)")));
}

// The Hopper GEMM (one 128 x 128 tile, K = 256: 4 uses of a 2-stage ring) with a planted
// bug, on the host with the races check.
absl::Status RunHopperGemm(HostDevice& device, HopperGemmRaceBug bug) {
  HopperGemmShape shape{.m = 128, .n = 128, .k = 256, .bn = 128, .stages = 2,
                        .out_f32 = true};
  shape.planted_bug = bug;
  absl::StatusOr<Kernel> kernel = HopperGemm(shape);
  if (!kernel.ok()) return kernel.status();
  std::vector<uint16_t> a(size_t{shape.m} * shape.k, 0x3f80), b(size_t{shape.n} * shape.k, 0x3f80);
  std::vector<float> out(size_t{shape.m} * shape.n);
  auto map = [&](uint32_t rows) {
    TensorMapSpec spec;
    spec.type = TensorMapDataType::kBFloat16;
    spec.dims = {shape.k, rows};
    spec.strides_bytes = {uint64_t{shape.k} * 2};
    spec.box = {kHopperGemmBk, rows};
    spec.swizzle = TensorMapSwizzle::k128B;
    return spec;
  };
  const std::vector<KernelArg> args = {
      KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(a)), map(shape.m)),
      KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(b)), map(shape.n)),
      KernelArg::Out(absl::MakeSpan(out))};
  RunOptions options;
  options.sanitize = device.sanitize();
  options.profile.unit = UnitSpec::Warpgroup();
  return RunKernel(device, *kernel, args, options).status();
}

TEST_F(RacesTest, TheHopperGemmWithoutABugHasNoRace) {
  EXPECT_THAT(RunHopperGemm(*device_, HopperGemmRaceBug::kNone), IsOk());
}

constexpr char kConsumerMma[] =
    "kernel hopper_gemm > roles by warpgroup > role consumer > loop jj > loop kt > region mma "
    "> mma group wgmma > statement `for (int kk = 0; kk < 4; ++kk...`";
constexpr char kProducerLoad[] =
    "kernel hopper_gemm > roles by warpgroup > role producer > loop jj > loop kt > region load "
    "> copy A tile";

// Use 2 of the ring reads stage 0 without the wait on full[0] for phase 1: the consumers'
// wgmma reads the stage the producer's TMA refilled.
TEST_F(RacesTest, NamesAConsumerThatReadsAStageWithoutWaitingOnFull) {
  const absl::Status status = RunHopperGemm(*device_, HopperGemmRaceBug::kConsumerSkipsFullWait);
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr(absl::StrCat(
                                 "data race (read after write): a wgmma of block (0,0,0) "
                                 "thread (128,0,0) at ",
                                 kConsumerMma,
                                 " reads its operand at smem[0] (byte 0 of the dynamic shared "
                                 "memory smem, elements of 1 bytes); the TMA load issued at ",
                                 kProducerLoad,
                                 " (delivered on mbarrier full[0] (shared memory offset 32), "
                                 "phase 1) is not ordered before it: no wait on mbarrier "
                                 "full[0] (shared memory offset 32) for phase 1 between them "
                                 "(the second access's thread has observed its phases up to "
                                 "0)")))))
      << status;
}

// Use 3 refills stage 1 without the wait on empty[1]: the TMA overwrites the stage while
// use 1's copy into it may still be landing and its wgmma group still reads it. On the host
// the consumers then read the refilled stage, which the wgmma layout check also reports;
// the races are said with it. (Until trace version 5 the profiled producer also waited for
// its previous copy on the stage before the refill, a wait of the record code's that made
// the overwrite land after use 1's copy: the race found then was the wgmma's read against
// the refill. The profiled kernel now does what the unprofiled one does.)
TEST_F(RacesTest, NamesAProducerThatRefillsAStageBeforeEmpty) {
  const absl::Status status =
      RunHopperGemm(*device_, HopperGemmRaceBug::kProducerSkipsEmptyWait);
  EXPECT_THAT(
      status,
      StatusIs(absl::StatusCode::kAborted,
               AllOf(HasSubstr("before the failure, the sanitizer: "),
                     HasSubstr(absl::StrCat(
                         "data race (write after write): the TMA load issued by block (0,0,0) "
                         "thread (0,0,0) at ",
                         kProducerLoad,
                         " writes 16384 bytes at smem[32768] (byte 32768 of the dynamic shared "
                         "memory smem, elements of 1 bytes); the TMA load issued at ",
                         kProducerLoad,
                         " (delivered on mbarrier full[1] (shared memory offset 40), phase 0) is "
                         "not ordered before it: no wait on mbarrier full[1] (shared memory "
                         "offset 40) for phase 0 between them (the second access's thread never "
                         "observed a phase of it)")),
                     HasSubstr(absl::StrCat(
                         "data race (read after write): a wgmma of block (0,0,0) thread "
                         "(128,0,0) at ",
                         kConsumerMma,
                         " reads its operand at smem[32800]")))))
      << status;
}

// Every use arrives on empty[s] before the wgmma.wait_group: the producer's refill of stage
// 0 waited for that arrival, but the wgmma of group 1 still read the stage.
TEST_F(RacesTest, NamesAReleaseBeforeTheWgmmaReadingTheStageRetired) {
  const absl::Status status =
      RunHopperGemm(*device_, HopperGemmRaceBug::kReleaseBeforeMmaRetires);
  EXPECT_THAT(
      status,
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr(absl::StrCat(
                   "data race (write after read): the TMA load issued by block (0,0,0) thread "
                   "(0,0,0) at ",
                   kProducerLoad,
                   " writes 16384 bytes at smem[0] (byte 0 of the dynamic shared memory smem, "
                   "elements of 1 bytes); the shared-memory operand read of wgmma group 1 of "
                   "warpgroup 1 (threads 128-255) of block (0,0,0), issued at ",
                   kConsumerMma,
                   " (it reads until a wgmma.wait_group retires the group) is not ordered "
                   "before it: the second access's thread waited for mbarrier empty[0] (shared "
                   "memory offset 80) phase 1, which warpgroup 1 released before its "
                   "wgmma.wait_group retired group 1 (the arrival must come after the "
                   "wait_group that retires the wgmma reading the memory)"))))
      << status;
}

// Generic writes to shared memory read by the async proxy (a TMA store, a wgmma) need
// fence.proxy.async after them (PTX ISA, "Async proxy"; CUTLASS's tma_store_fence() before
// its TMA stores; ../shared/reference/tensor-cores-and-tma.md). Legal: the fenced store.
TEST_F(RacesTest, NamesATmaStoreOfGenericWritesWithoutAProxyFence) {
  std::vector<uint16_t> out(64 * 32);
  TensorMapSpec spec;
  spec.type = TensorMapDataType::kBFloat16;
  spec.dims = {64, 32};
  spec.strides_bytes = {128};
  spec.box = {64, 32};
  spec.swizzle = TensorMapSwizzle::k128B;
  EXPECT_THAT(RunTensorMapOut(GenericThenTmaStoreKernel(true), out, spec), IsOk());
  const absl::Status status = RunTensorMapOut(GenericThenTmaStoreKernel(false), out, spec);
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("missing fence.proxy.async: the TMA store of block "
                                       "(0,0,0) thread (0,0,0) at kernel store_tile > tma store "
                                       "store tile reads through the async proxy tile[0] "
                                       "(byte offset 0 of __shared__ tile, 2048 elements of 2 "
                                       "bytes)"),
                             HasSubstr("which block (0,0,0) thread (0,0,0) wrote through the "
                                       "generic proxy at kernel store_tile > statement `for "
                                       "(int i = 0; i < 16; ++i) ...` with no "
                                       "fence.proxy.async after the write"))))
      << status;
}

}  // namespace
}  // namespace warptrace
