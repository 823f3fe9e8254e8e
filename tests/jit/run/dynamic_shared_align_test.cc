// DynamicShared(..., align): the dynamic shared memory's base has the alignment the kernel
// asks for, profiled and unprofiled. Profiling adds static shared memory (the recorder's
// staging and counters), which on a GPU sits before the dynamic base and would move it off a
// 1024-byte boundary only when profiled; the emitted declaration is `__align__(align)` (the
// PTX says `.align 1024`) and the host backend places the base on it too.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/compile/nvrtc_compiler.h"
#include "jit/cuda/cuda_device.h"
#include "jit/emit/emitter.h"
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// Thread 0 writes its dynamic shared base's address mod 1024 and mod `align`. 1000 bytes (not
// a multiple of 1024) and an odd static array, so no placement is aligned by accident.
Kernel AlignedBase(uint32_t align) {
  KernelBuilder b("aligned_base");
  b.Param("unsigned int*", "out").Grid({1, 1, 1}).Block({128, 1, 1});
  b.SharedArray("float", "odd", 3);
  b.DynamicShared("unsigned char", "smem", 1000, align);
  b.Region("probe", [&] {
    b.Stmt("if (threadIdx.x == 0) { odd[0] = 1.0f; smem[0] = 1; }");
    b.Stmt(absl::StrCat(
        "if (threadIdx.x == 0) { out[0] = (unsigned int)((unsigned long long)smem % 1024ull); "
        "out[1] = (unsigned int)((unsigned long long)smem % ",
        align, "ull); }"));
  });
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return *kernel;
}

class DynamicSharedAlignTest : public testing::HostRunTest {
 protected:
  // {base % 1024, base % align} of a run.
  std::vector<uint32_t> Run(const Kernel& kernel, bool profile) {
    std::vector<uint32_t> out = {7777, 7777};
    RunOptions options;
    options.profile.enabled = profile;
    const std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out))};
    EXPECT_THAT(RunKernel(device(), kernel, args, options).status(), IsOk());
    return out;
  }
};

TEST_F(DynamicSharedAlignTest, TheHostBaseIs1024AlignedProfiledAndUnprofiled) {
  const Kernel kernel = AlignedBase(1024);
  EXPECT_EQ(Run(kernel, /*profile=*/false), (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(Run(kernel, /*profile=*/true), (std::vector<uint32_t>{0, 0}));
}

TEST_F(DynamicSharedAlignTest, TheDefaultAlignmentIs128OnTheHostAsOnAGpu) {
  const Kernel kernel = AlignedBase(128);
  EXPECT_EQ(Run(kernel, /*profile=*/false)[1], 0u);
  EXPECT_EQ(Run(kernel, /*profile=*/true)[1], 0u);
}

TEST(DynamicSharedAlignSourceTest, TheEmittedSourceAndPtxStateTheAlignment) {
  const Kernel kernel = AlignedBase(1024);
  for (bool profiled : {false, true}) {
    ProfileOptions options;
    options.enabled = profiled;
    absl::StatusOr<KernelSource> source = EmitKernel(kernel, options);
    ASSERT_THAT(source, IsOk());
    EXPECT_THAT(source->source,
                HasSubstr("WARPTRACE_DYNAMIC_SHARED_ALIGNED(unsigned char, smem, 1024);"));
    EXPECT_EQ(source->dynamic_shared_align, 1024u);
    // As CudaDevice::Load compiles it (its prelude defines WARPTRACE_DYNAMIC_SHARED
    // 16-byte aligned: the builder's declaration must not go through that macro).
    NvrtcCompiler compiler;
    absl::StatusOr<CompiledKernel> compiled =
        compiler.Compile(*CudaCompileRequest(*source, CudaTarget::Default()));
    ASSERT_THAT(compiled, IsOk());
    EXPECT_THAT(compiled->ptx, ContainsRegex(R"(\.extern \.shared \.align 1024 \.b8 smem\[\])"))
        << (profiled ? "profiled" : "unprofiled");
  }
}

TEST(DynamicSharedAlignBuildTest, AnAlignmentThatIsNotAPowerOfTwoUpTo1024IsRejected) {
  for (uint32_t align : {0u, 8u, 96u, 2048u}) {
    KernelBuilder b("bad_align");
    b.Grid({1, 1, 1}).Block({32, 1, 1});
    b.DynamicShared("float", "smem", 1024, align);
    EXPECT_THAT(b.Build().status(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(absl::StrCat("asks for ", align,
                                                "-byte alignment; give a power of two from 16 "
                                                "to 1024"))));
  }
}

}  // namespace
}  // namespace warptrace
