// The host backend as a sanitizer (docs/sanitizer.md): planted bugs in builder kernels run
// end to end (build, emit, compile in sanitize mode, run on HostDevice, dump) are each named
// by array, index, extent, thread and builder statement; the same kernels without the bug
// pass; and a run without sanitize is unchanged.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
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

constexpr int kThreads = 256;

// A block reduction the way vLLM's paged attention writes it, with `slot` the index each
// warp's lane 0 writes: "warp" is right, "warp + 1" writes red_smem[8], one past the end.
absl::StatusOr<Kernel> BlockSumKernel(const std::string& slot) {
  KernelBuilder b("block_sum");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({2, 1, 1}).Block({kThreads, 1, 1});
  b.Stmt("__shared__ float red_smem[8];");
  b.Stmt("float v = in[blockIdx.x * blockDim.x + threadIdx.x];");
  b.Stmt("for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);");
  b.Stmt(absl::StrCat("if (threadIdx.x % 32 == 0) red_smem[", slot, "] = v;"));
  b.Barrier("partials");
  b.Stmt("if (threadIdx.x == 0) {\n"
         "  float s = 0.0f;\n"
         "  for (int w = 0; w < 8; ++w) s += red_smem[w];\n"
         "  out[blockIdx.x] = s;\n"
         "}");
  return b.Build();
}

// Copies in[i + shift] to out[i] for i < n: shift 1 reads one element past `in`.
absl::StatusOr<Kernel> ShiftKernel(int shift) {
  KernelBuilder b("shift");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({64, 1, 1});
  b.Stmt("const int i = threadIdx.x;");
  b.Stmt(absl::StrCat("out[i] = in[i + ", shift, "];"));
  return b.Build();
}

// Stages `written` of 64 floats in shared memory and reads all 64 back.
absl::StatusOr<Kernel> StageKernel(int written) {
  KernelBuilder b("stage");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({64, 1, 1});
  b.Stmt("__shared__ float tile[64];");
  b.Stmt(absl::StrCat("if (threadIdx.x < ", written, ") tile[threadIdx.x] = in[threadIdx.x];"));
  b.Barrier("staged");
  b.Stmt("out[threadIdx.x] = tile[63 - threadIdx.x];");
  return b.Build();
}

// Thread 0 copies 64 + `extra` floats into a 64-float shared array with one memcpy whose
// length the compiler does not know (it comes from the input), then every thread reads one.
absl::StatusOr<Kernel> MemcpyStageKernel(int extra) {
  KernelBuilder b("memcpy_stage");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({64, 1, 1});
  b.Stmt("__shared__ float tile[64];");
  b.Stmt(absl::StrCat("const int n = 64 + ", extra, " * static_cast<int>(in[0]);"));
  b.Stmt("if (threadIdx.x == 0) memcpy(tile, in, n * sizeof(float));");
  b.Barrier("staged");
  b.Stmt("out[threadIdx.x] = tile[63 - threadIdx.x];");
  return b.Build();
}

// Stages 64 floats in dynamic shared memory of `floats` floats (64 fit: legal).
absl::StatusOr<Kernel> DynamicStageKernel(uint32_t floats) {
  KernelBuilder b("dynamic_stage");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({64, 1, 1});
  b.DynamicShared("float", "stage", floats * 4, 16);
  b.Stmt("stage[threadIdx.x] = in[threadIdx.x];");
  b.Barrier("staged");
  b.Stmt("out[threadIdx.x] = stage[63 - threadIdx.x];");
  return b.Build();
}

class SanitizerTest : public testing::SanitizedRunTest {
 protected:
  SanitizerTest() : SanitizedRunTest(SanitizeOptions{true, true}) {}
};

TEST_F(SanitizerTest, NamesAOnePastSharedWriteBelowTheRecordersStaging) {
  // Profiled with the default placement, warptrace's staging array is declared right after
  // red_smem: without the sanitizer the stray float lands there.
  EXPECT_THAT(Run(BlockSumKernel("threadIdx.x / 32 + 1"), 2 * kThreads, 2).status(),
              StatusIs(absl::StatusCode::kOutOfRange,
                       AllOf(HasSubstr("sanitizer: 2 distinct findings (4 faulty accesses):\n"
                                       "  out-of-bounds write: block (0,0,0) thread (224,0,0) "
                                       "writes 4 bytes at red_smem[8] (byte offset 32), past "
                                       "the end of __shared__ red_smem (8 elements of 4 "
                                       "bytes), at kernel block_sum > statement `if "
                                       "(threadIdx.x % 32 == 0) re...`\n"),
                             // Nobody wrote red_smem[0]: warp 0 wrote red_smem[1].
                             HasSubstr("  uninitialized read: block (0,0,0) thread (0,0,0) "
                                       "reads 4 bytes at red_smem[0]"),
                             Not(HasSubstr("site id")))));
}

TEST_F(SanitizerTest, NamesAOnePastSharedWriteUnprofiled) {
  EXPECT_THAT(Run(BlockSumKernel("threadIdx.x / 32 + 1"), 2 * kThreads, 2, false).status(),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("at red_smem[8]")));
}

TEST_F(SanitizerTest, PassesTheCorrectBlockSum) {
  absl::StatusOr<RunResult> run = Run(BlockSumKernel("threadIdx.x / 32"), 2 * kThreads, 2);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(out_, (std::vector<float>{kThreads, kThreads}));
}

TEST_F(SanitizerTest, NamesAGlobalReadPastAnArgument) {
  EXPECT_THAT(Run(ShiftKernel(1), 64, 64).status(),
              StatusIs(absl::StatusCode::kOutOfRange,
                       AllOf(HasSubstr("out-of-bounds read: block (0,0,0) thread (63,0,0) "
                                       "reads 4 bytes at byte 256 of argument `in` (const "
                                       "float*), outside its 256 bytes (element [64] of 64 "
                                       "4-byte elements)"),
                             HasSubstr("at kernel shift > statement `out[i] = in[i + 1];`"))));
}

TEST_F(SanitizerTest, NamesAGlobalReadInTheAlignmentSlack) {
  // 60 floats: 240 bytes, padded to 256, so in[60] does not fault without the sanitizer.
  absl::StatusOr<Kernel> kernel = ShiftKernel(0);
  EXPECT_THAT(Run(kernel, 60, 64).status(),
              StatusIs(absl::StatusCode::kOutOfRange,
                       HasSubstr("reads 4 bytes at byte 240 of argument `in` (const float*), "
                                 "outside its 240 bytes (element [60] of 60 4-byte elements)")));
}

TEST_F(SanitizerTest, NamesAnUninitializedSharedRead) {
  EXPECT_THAT(Run(StageKernel(32), 64, 64).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("uninitialized read: block (0,0,0) thread (0,0,0) "
                                       "reads 4 bytes at tile[63] (byte offset 252 of "
                                       "__shared__ tile, 64 elements of 4 bytes) that no "
                                       "thread of the block wrote"),
                             HasSubstr("at kernel stage > statement `out[threadIdx.x] = "
                                       "tile[63 - ...`"))));
}

TEST_F(SanitizerTest, PassesAFullyWrittenStage) {
  ASSERT_THAT(Run(StageKernel(64), 64, 64), IsOk());
  EXPECT_EQ(out_, std::vector<float>(64, 1.0f));
}

TEST_F(SanitizerTest, NamesADynamicSharedWritePastItsExtent) {
  EXPECT_THAT(Run(DynamicStageKernel(60), 64, 64).status(),
              StatusIs(absl::StatusCode::kOutOfRange,
                       AllOf(HasSubstr("out-of-bounds write: block (0,0,0) thread (60,0,0) "
                                       "writes 4 bytes at stage[60] (byte 240 of the dynamic "
                                       "shared memory stage, elements of 4 bytes), outside its "
                                       "240 bytes"),
                             HasSubstr("at kernel dynamic_stage > statement `stage[threadIdx.x]"))));
  ASSERT_THAT(Run(DynamicStageKernel(64), 64, 64).status(), IsOk());
  EXPECT_EQ(out_, std::vector<float>(64, 1.0f));
}

// A memcpy is a call in sanitize mode (-fno-builtin-memcpy) that the link sends to its
// check (--wrap=memcpy): one read and one write of the whole range. The bytes it wrote
// inside the array count as written (no uninitialized reads of them after it).
TEST_F(SanitizerTest, NamesAMemcpyPastASharedArray) {
  EXPECT_THAT(Run(MemcpyStageKernel(1), 65, 64).status(),
              StatusIs(absl::StatusCode::kOutOfRange,
                       AllOf(HasSubstr("sanitizer: 1 finding (1 faulty access):\n"
                                       "  out-of-bounds write: block (0,0,0) thread (0,0,0) "
                                       "writes 260 bytes at tile[0] (byte offset 0), past the "
                                       "end of __shared__ tile (64 elements of 4 bytes)"),
                             HasSubstr("at kernel memcpy_stage > statement `if (threadIdx.x "
                                       "== 0) memcpy(...`"))));
  ASSERT_THAT(Run(MemcpyStageKernel(0), 64, 64).status(), IsOk());
  EXPECT_EQ(out_, std::vector<float>(64, 1.0f));
}

TEST_F(SanitizerTest, RefusesARunWhoseChecksDifferFromTheDevices) {
  absl::StatusOr<Kernel> kernel = StageKernel(64);
  ASSERT_THAT(kernel, IsOk());
  in_.assign(64, 1.0f);
  out_.assign(64, 0.0f);
  std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(in_)),
                                 KernelArg::Out(absl::MakeSpan(out_))};
  RunOptions options;
  options.sanitize = SanitizeOptions{true, false};
  EXPECT_THAT(RunKernel(*device_, *kernel, args, options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("RunOptions::sanitize is bounds but the host device was "
                                 "created with bounds,init")));
}

// Not the sanitizer's, but asked for with it (issue 53): a deadlocked warp collective names
// which of the kernel's shuffles each lane waits at, in every mode.
TEST(ShuffleDeadlockTest, NamesTheShufflesStatement) {
  KernelBuilder b("half_shuffle");
  b.Param("const float*", "in").Param("float*", "out");
  b.Grid({1, 1, 1}).Block({32, 1, 1});
  b.Stmt("float v = in[threadIdx.x];");
  b.Stmt("if (threadIdx.x < 16) v += __shfl_xor_sync(0xffffffffu, v, 1);");
  b.Stmt("__syncwarp();");
  b.Stmt("out[threadIdx.x] = v;");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  absl::StatusOr<std::unique_ptr<HostDevice>> device = testing::CreateSandboxedHostDevice({});
  ASSERT_THAT(device, IsOk());
  std::vector<float> in(32, 1.0f), out(32, 0.0f);
  std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(in)),
                                 KernelArg::Out(absl::MakeSpan(out))};
  RunOptions options;
  options.profile.enabled = false;
  EXPECT_THAT(RunKernel(**device, *kernel, args, options).status(),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       AllOf(HasSubstr("threads 0-15: wait at __shfl_xor_sync at kernel "
                                       "half_shuffle > statement `if (threadIdx.x < 16) v += "
                                       "__...`, line 1 in warp 0"),
                             HasSubstr("threads 16-31: wait at __syncwarp at kernel "
                                       "half_shuffle > statement `__syncwarp();`, line 1 in "
                                       "warp 0"))));
}

TEST(SanitizeOptionsTest, ParsesChecksAllAndNone) {
  EXPECT_THAT(ParseSanitize("init,bounds"), IsOk());
  EXPECT_EQ(SanitizeName(*ParseSanitize("init,bounds")), "bounds,init");
  EXPECT_EQ(SanitizeName(*ParseSanitize("init,races,bounds")), "all");
  EXPECT_EQ(SanitizeName(*ParseSanitize("races")), "races");
  EXPECT_EQ(SanitizeName(*ParseSanitize("init")), "init");
  EXPECT_EQ(SanitizeName(*ParseSanitize(" bounds ")), "bounds");
  EXPECT_EQ(SanitizeName(*ParseSanitize("all")), "all");
  EXPECT_EQ(SanitizeName(*ParseSanitize("none")), "none");
  EXPECT_EQ(SanitizeName(*ParseSanitize("")), "none");
  EXPECT_THAT(ParseSanitize("bounds,memory"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'memory'")));
  const absl::StatusOr<SanitizeOptions> all = ParseSanitize("all");
  ASSERT_THAT(all, IsOk());
  EXPECT_TRUE(all->bounds && all->init && all->races);
}

}  // namespace
}  // namespace warptrace
