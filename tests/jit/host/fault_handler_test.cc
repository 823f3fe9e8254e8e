// Faults in kernel threads on the host backend (jit/host/runtime/fault_handler.h): an access past
// the end of a block's dynamic shared memory or of a device buffer (each between guard
// pages, jit/host/runtime/guarded_memory.h), a null pointer, a stack overflow: the launch fails with
// OutOfRange naming kernel, block, thread, the allocation and how far out of bounds the
// access was; the process survives and the next launch works.
//
// Under --config=asan the same is asserted: kernels are compiled by the host compiler without
// ASan (only the runtime is instrumented), so their out-of-bounds accesses are not ASan's to
// see; they reach the guard pages, and our handler, which stays in front of ASan's and hands
// it every fault that is not a fiber's.
#include "jit/host/runtime/fault_handler.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "tests/jit/test_kernels.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::Each;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::RunSimpleKernel;
using ::warptrace::testing::SimpleKernel;
using ::warptrace::testing::StatusIs;

class FaultTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    HostDeviceOptions options;
    options.cache_directory = TestTempPath("cache");
    absl::StatusOr<std::unique_ptr<HostDevice>> device = HostDevice::Create(options);
    ASSERT_THAT(device.status(), IsOk());
    device_ = device->release();
  }
  static void TearDownTestSuite() {
    delete device_;
    device_ = nullptr;
  }

  // A kernel of one block of 64 threads whose thread t writes element 5t of a 1024-byte
  // dynamic shared array (256 floats): thread 52 is the first past its end, at byte 1040.
  static absl::StatusOr<Kernel> ShortSharedKernel() {
    KernelBuilder b("short_shared");
    b.Param("float*", "out").Grid({1, 1, 1}).Block({64, 1, 1});
    b.DynamicShared("float", "tile", 1024);
    b.Stmt("tile[threadIdx.x * 5] = 1.0f;");
    b.Stmt("out[threadIdx.x] = tile[threadIdx.x * 5];");
    return b.Build();
  }

  // Then a launch that is right runs and computes.
  static void ExpectAGoodLaunchWorks() {
    KernelBuilder b("good");
    b.Param("float*", "out").Grid({2, 1, 1}).Block({64, 1, 1});
    b.DynamicShared("float", "tile", 256);
    b.Stmt("tile[threadIdx.x] = threadIdx.x + 1.0f;");
    b.Stmt("__syncthreads();");
    b.Stmt("out[blockIdx.x * 64 + threadIdx.x] = tile[63 - threadIdx.x];");
    absl::StatusOr<Kernel> kernel = b.Build();
    ASSERT_THAT(kernel.status(), IsOk());
    std::vector<float> out(128);
    RunOptions options;
    options.profile.unit = UnitSpec::Warp();
    ASSERT_THAT(RunKernel(*device_, *kernel, {KernelArg::Out(absl::MakeSpan(out))}, options)
                    .status(),
                IsOk());
    for (int i = 0; i < 128; ++i) EXPECT_EQ(out[i], 64 - i % 64) << i;
  }

  static HostDevice* device_;
};

HostDevice* FaultTest::device_ = nullptr;

TEST_F(FaultTest, DynamicSharedMemoryTooSmallFailsTheLaunchNamingThreadAndBytes) {
  absl::StatusOr<Kernel> kernel = ShortSharedKernel();
  ASSERT_THAT(kernel.status(), IsOk());
  for (bool profile : {false, true}) {
    SCOPED_TRACE(profile ? "profiled, events in global memory" : "not profiled");
    std::vector<float> out(64);
    RunOptions options;
    options.profile.enabled = profile;
    options.profile.unit = UnitSpec::Warp();
    options.profile.placement = Placement::kGlobal;  // the array stays the end of the memory
    EXPECT_THAT(
        RunKernel(*device_, *kernel, {KernelArg::Out(absl::MakeSpan(out))}, options).status(),
        StatusIs(absl::StatusCode::kOutOfRange,
                 AllOf(HasSubstr("kernel short_shared"),
                       HasSubstr("block (0,0,0) thread (52,0,0): invalid memory access at "),
                       HasSubstr("16 bytes past the end of the dynamic shared memory (1024 "
                                 "bytes at "))));
    ExpectAGoodLaunchWorks();
  }
}

TEST_F(FaultTest, WritingPastADeviceBufferFailsTheLaunchNamingTheBuffer) {
  KernelBuilder b("past_buffer");
  b.Param("int*", "out").Grid({1, 1, 1}).Block({64, 1, 1});
  b.Stmt("out[threadIdx.x * 3] = 1;");  // out has 64 ints: thread 22 writes out[66]
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel.status(), IsOk());
  std::vector<int> out(64);
  RunOptions options;
  options.profile.enabled = false;
  EXPECT_THAT(
      RunKernel(*device_, *kernel, {KernelArg::Out(absl::MakeSpan(out))}, options).status(),
      StatusIs(absl::StatusCode::kOutOfRange,
               AllOf(HasSubstr("kernel past_buffer"), HasSubstr("block (0,0,0) thread (22,0,0)"),
                     HasSubstr("8 bytes past the end of the device buffer (256 bytes at "))));
  ExpectAGoodLaunchWorks();
}

TEST_F(FaultTest, ReadingBeforeADeviceBufferNamesTheDistanceBeforeItsStart) {
  std::vector<int> out;
  EXPECT_THAT(RunSimpleKernel(*device_, SimpleKernel("before_buffer", R"(
  if (threadIdx.x == 7) out[0] = *(volatile int*)((char*)out - 4096 - 12);
)"),
                              {1, 1, 1}, {32, 1, 1}, 64, &out),
              StatusIs(absl::StatusCode::kOutOfRange,
                       AllOf(HasSubstr("thread (7,0,0)"),
                             HasSubstr("4108 bytes before the start of the device buffer (256 "
                                       "bytes at "))));
  ExpectAGoodLaunchWorks();
}

TEST_F(FaultTest, ANullPointerFailsTheLaunchInsteadOfKillingTheProcess) {
  std::vector<int> out;
  EXPECT_THAT(RunSimpleKernel(*device_, SimpleKernel("null_store", R"(
  __syncthreads();
  if (blockIdx.x == 1 && threadIdx.x == 3) *(volatile int*)nullptr = 1;
  out[blockIdx.x * 32 + threadIdx.x] = 1;
)"),
                              {2, 1, 1}, {32, 1, 1}, 64, &out),
              StatusIs(absl::StatusCode::kOutOfRange,
                       AllOf(HasSubstr("kernel null_store"),
                             HasSubstr("block (1,0,0) thread (3,0,0): invalid memory access at "),
                             HasSubstr("not in or next to any shared memory or device buffer"))));
  ExpectAGoodLaunchWorks();
}

TEST_F(FaultTest, AFiberStackOverflowIsReportedAsOne) {
  std::vector<int> out;
  EXPECT_THAT(RunSimpleKernel(*device_, SimpleKernel("deep", R"(
  out[threadIdx.x] = Deep(threadIdx.x == 1 ? 1 << 20 : 1);
)",
                                                      R"(
__device__ __noinline__ int Deep(int n) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(n);
  return n <= 1 ? frame[0] : Deep(n - 1) + frame[0];
}
)"),
                              {1, 1, 1}, {32, 1, 1}, 32, &out),
              StatusIs(absl::StatusCode::kOutOfRange,
                       AllOf(HasSubstr("thread (1,0,0)"), HasSubstr("a stack overflow"),
                             HasSubstr("fiber_stack_bytes"))));
  ExpectAGoodLaunchWorks();
}

TEST_F(FaultTest, ManyFaultingLaunchesInARowLeaveTheDeviceWorking) {
  for (int i = 0; i < 20; ++i) {
    std::vector<int> out;
    ASSERT_THAT(RunSimpleKernel(*device_, SimpleKernel("past_end", "out[threadIdx.x * 4] = 1;"),
                                {4, 1, 1}, {64, 1, 1}, 64, &out),
                StatusIs(absl::StatusCode::kOutOfRange))
        << "launch " << i;
  }
  std::vector<int> out;
  ASSERT_THAT(RunSimpleKernel(*device_, SimpleKernel("in_bounds", "out[threadIdx.x] = 1;"),
                              {1, 1, 1}, {64, 1, 1}, 64, &out),
              IsOk());
  EXPECT_THAT(out, Each(1));
}

}  // namespace
}  // namespace warptrace
