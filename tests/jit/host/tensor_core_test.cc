// The sm_80 tensor-core primitives (jit/primitives/tensor_core_sm80.cuh) on the host backend:
// each a kernel really compiled and run on HostDevice (the same text NVRTC compiles in
// tests/jit/primitives/tensor_core_nvrtc_test.cc and tests/jit/cuda/tensor_core_gpu_test.cc
// runs on a GPU), checked by tests/jit/primitives/tensor_core_checks.h against tables derived
// from the PTX ISA's formulas; and their misuse, a launch error naming block, thread and
// instruction.
#include <memory>
#include <string>
#include <vector>

#include "base/testing/temp_path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/host/host_device.h"
#include "tests/jit/primitives/tensor_core_checks.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::RunTensorCoreKernel;
using ::warptrace::testing::StatusIs;

class TensorCoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HostDeviceOptions options;
    static const std::string* const cache = new std::string(TestTempPath("cache"));
    options.cache_directory = *cache;
    absl::StatusOr<std::unique_ptr<HostDevice>> device = HostDevice::Create(options);
    ASSERT_THAT(device, IsOk());
    device_ = *std::move(device);
  }
  std::unique_ptr<HostDevice> device_;
};

TEST_F(TensorCoreTest, Bf16MmaSyncPutsEveryElementWhereThePtxIsaSays) {
  ::warptrace::testing::ExpectMmaLayouts(*device_, /*bf16=*/true);
}

TEST_F(TensorCoreTest, F16MmaSyncPutsEveryElementWhereThePtxIsaSays) {
  ::warptrace::testing::ExpectMmaLayouts(*device_, /*bf16=*/false);
}

TEST_F(TensorCoreTest, EveryLdmatrixFormDistributesRowsAsThePtxIsaSays) {
  ::warptrace::testing::ExpectLdmatrixForms(*device_);
}

TEST_F(TensorCoreTest, EveryStmatrixFormStoresFragmentsAsThePtxIsaSays) {
  ::warptrace::testing::ExpectStmatrixForms(*device_);
}

TEST_F(TensorCoreTest, ElectSyncElectsTheLowestLaneOfEachWarp) {
  ::warptrace::testing::ExpectElectElectsOneLanePerWarp(*device_);
  std::vector<int> out;
  ASSERT_THAT(RunTensorCoreKernel(*device_, "elect_one", 64, {}, 64, &out), IsOk());
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[32], 1);
}

TEST_F(TensorCoreTest, ABf16GemmThroughMmaSyncMatchesTheFp32Reference) {
  ::warptrace::testing::ExpectBf16GemmMatchesReference(*device_);
}

TEST_F(TensorCoreTest, AnLdmatrixRowAddressNotSixteenByteAlignedFailsNamingTheLane) {
  std::vector<int> out;
  EXPECT_THAT(RunTensorCoreKernel(*device_, "ldmatrix_misaligned", 32, {}, 32, &out),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("block (0,0,0) thread (5,0,0)"),
                             HasSubstr("ldmatrix.sync.aligned.m8n8.x4.shared.b16: lane 5 passes "
                                       "row address"),
                             HasSubstr("which is not 16-byte aligned"))));
}

TEST_F(TensorCoreTest, AnLdmatrixWithALaneMissingFailsNamingTheLaneAndInstruction) {
  std::vector<int> out;
  EXPECT_THAT(RunTensorCoreKernel(*device_, "ldmatrix_missing_lane", 32, {}, 32, &out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("block (0,0,0) thread (0,0,0)"),
                             HasSubstr("ldmatrix.sync.aligned.m8n8.x1.shared.b16 in warp 0 "
                                       "(threads 0-31): thread 31 exited and will never "
                                       "arrive"))));
}

TEST_F(TensorCoreTest, LanesIssuingDifferentMmasFailTheLaunch) {
  std::vector<int> out;
  EXPECT_THAT(RunTensorCoreKernel(*device_, "mma_divergent", 32, {}, 32, &out),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("block (0,0,0) thread (16,0,0)"),
                             HasSubstr("thread 16 issues "
                                       "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 while "
                                       "threads 0-15 wait in "
                                       "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"))));
}

}  // namespace
}  // namespace warptrace
