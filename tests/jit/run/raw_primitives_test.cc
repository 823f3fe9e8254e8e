// A kernel that calls the device primitives (jit/primitives/warptrace_primitives.cuh) only
// from raw statements: the emitter includes the primitives header for them, so the kernel
// compiles on both backends (the host compiler and RunKernel's NVRTC check for sm_90) and
// computes the right answer on the host.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/emit/emitter.h"
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::Each;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// One warp: A (16 x 16) and B (16 x 8, stored as 8 rows of 16: "col") all bf16 ones through
// ldmatrix into mma.m16n8k16: every element of D is 16.
Kernel RawMma() {
  KernelBuilder b("raw_mma");
  b.Param("float*", "out").Grid({1, 1, 1}).Block({32, 1, 1});
  b.Stmt(
      "__shared__ __align__(16) unsigned short a[16 * 16];\n"
      "__shared__ __align__(16) unsigned short bt[8 * 16];\n"
      "for (int i = threadIdx.x; i < 16 * 16; i += 32) a[i] = 0x3F80;\n"
      "for (int i = threadIdx.x; i < 8 * 16; i += 32) bt[i] = 0x3F80;\n"
      "__syncwarp();");
  b.Stmt(
      "unsigned int ra[4], rb[2];\n"
      "warptrace_ldmatrix_x4(ra[0], ra[1], ra[2], ra[3],\n"
      "                      &a[(threadIdx.x % 16) * 16 + (threadIdx.x / 16) * 8]);\n"
      "warptrace_ldmatrix_x2(rb[0], rb[1], &bt[(threadIdx.x % 8) * 16 + (threadIdx.x / 8) % 2 * 8]);\n"
      "float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n"
      "warptrace_mma_m16n8k16_f32_bf16(d, ra, rb, d);\n"
      "for (int k = 0; k < 4; ++k) out[threadIdx.x * 4 + k] = d[k];");
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return *kernel;
}

class RawPrimitivesTest : public testing::HostRunTest {};

TEST_F(RawPrimitivesTest, KernelCallingPrimitivesOnlyFromRawStatementsRunsWithTheirHeader) {
  const Kernel kernel = RawMma();
  EXPECT_THAT(kernel.primitives_use, HasSubstr("kernel raw_mma > statement"));
  EXPECT_THAT(EmitUnprofiledKernel(kernel).source,
              HasSubstr("#include \"warptrace_primitives.cuh\""));
  std::vector<float> out(32 * 4, 0.0f);
  const std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out))};
  RunOptions options;
  options.check_gpu_compile = true;  // NVRTC for sm_90 as well as the host compiler
  ASSERT_THAT(RunKernel(device(), kernel, args, options), IsOk());
  EXPECT_THAT(out, Each(16.0f));
}

// ldmatrix reads shared memory only: on a GPU a global address is undefined behaviour (it
// reads whatever shared memory that address maps to); the host backend fails the launch,
// naming the lane (thread) and the raw statement's path.
TEST_F(RawPrimitivesTest, LdmatrixGivenAGlobalMemoryRowFailsNamingThreadAndPath) {
  KernelBuilder b("global_ldmatrix");
  b.Param("const unsigned short*", "in").Param("float*", "out").Grid({1, 1, 1});
  b.Block({32, 1, 1});
  b.Stmt(
      "unsigned int r0;\n"
      "warptrace_ldmatrix_x1(r0, &in[(threadIdx.x % 8) * 8]);\n"
      "out[threadIdx.x] = static_cast<float>(r0);");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<uint16_t> in(64, 1);
  std::vector<float> out(32, 0.0f);
  const std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(in)),
                                       KernelArg::Out(absl::MakeSpan(out))};
  EXPECT_THAT(
      RunKernel(device(), *kernel, args, RunOptions{}).status(),
      StatusIs(absl::StatusCode::kAborted,
               AllOf(HasSubstr("block (0,0,0) thread (0,0,0): "
                               "ldmatrix.sync.aligned.m8n8.x1.shared.b16 at kernel "
                               "global_ldmatrix > statement `unsigned int r0;"),
                     HasSubstr("lane 0 passes row address"),
                     HasSubstr("which is not in this block's shared memory"))));
}

// A host compile error starts with the compiler's line naming the statement's builder path
// (an error there, or "required from here" for one inside a header it instantiated), not
// with the compiler's command line (now at the end of the message).
TEST_F(RawPrimitivesTest, AHostCompileErrorStartsWithTheBuilderPath) {
  KernelBuilder b("bad_n");
  b.Param("float*", "out").Grid({1, 1, 1}).Block({128, 1, 1});
  b.Stmt("float acc[4] = {};\nunsigned long long da = 0, db = 0;");
  b.MmaGroup("g", [&] { b.Stmt("warptrace_wgmma_mma_async_bf16_ss<12>(acc, da, db, 0);"); });
  b.WaitMmaGroups(0);
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  std::vector<float> out(128, 0.0f);
  const std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out))};
  RunOptions options;
  options.check_gpu_compile = false;  // the host compiler's message
  const absl::Status status = RunKernel(device(), *kernel, args, options).status();
  ASSERT_TRUE(absl::IsInvalidArgument(status)) << status;
  const std::string message(status.message());
  const std::string head = message.substr(0, message.find('\n'));
  EXPECT_THAT(head, HasSubstr("host compiler failed on kernel bad_n (exit 1): kernel bad_n > "
                              "mma group g > statement `warptrace_wgmma_mma_async_bf1...`:1:"));
  EXPECT_THAT(head, HasSubstr("error: no matching function for call to "
                              "'warptrace_wgmma_mma_async_bf16_ss<12>"));
  EXPECT_THAT(message, HasSubstr("\ncommand: "));
}

}  // namespace
}  // namespace warptrace
