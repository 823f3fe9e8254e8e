// Tests of examples/record_cost_loop.h: the plan counts exactly 2 events per iteration, and
// both variants compile for a GPU with NVRTC (no GPU needed) and run on the host backend.
#include "examples/record_cost_loop.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/compile/nvrtc_compiler.h"
#include "jit/cuda/cuda_device.h"
#include "jit/emit/emitter.h"
#include "jit/plan/record_plan.h"
#include "tests/status_matchers.h"

namespace warptrace::examples {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

ProfileOptions LoopOnly() {
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  options.policy.kernel = false;
  return options;
}

TEST(RecordCostLoopTest, ThePlanCountsTwoEventsPerIterationAndNothingElse) {
  absl::StatusOr<Kernel> kernel = RecordCostLoop(100);
  ASSERT_THAT(kernel.status(), IsOk());
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, LoopOnly());
  ASSERT_THAT(plan.status(), IsOk());
  EXPECT_THAT(plan->ExactEventsForUnit(0), IsOkAndHolds(200u));
  EXPECT_EQ(plan->units_per_block(), 1u);
}

TEST(RecordCostLoopTest, BothVariantsCompileForSm90WithNvrtc) {
  absl::StatusOr<Kernel> kernel = RecordCostLoop(100);
  ASSERT_THAT(kernel.status(), IsOk());
  absl::StatusOr<KernelSource> profiled = EmitKernel(*kernel, LoopOnly());
  ASSERT_THAT(profiled.status(), IsOk());
  const KernelSource unprofiled = EmitUnprofiledKernel(*kernel);
  EXPECT_THAT(unprofiled.source, Not(HasSubstr("warptrace_trace")));
  NvrtcCompiler nvrtc;
  const KernelSource* sources[] = {&*profiled, &unprofiled};
  for (const KernelSource* source : sources) {
    absl::StatusOr<CompiledKernel> compiled = nvrtc.Compile(*CudaCompileRequest(*source, CudaTarget::Default()));
    ASSERT_THAT(compiled.status(), IsOk());
    EXPECT_FALSE(compiled->cubin.empty());
    EXPECT_THAT(compiled->ptx, HasSubstr("clock64"));  // %clock64 reads around the loop
  }
}

TEST(RecordCostLoopTest, RejectsZeroIterations) {
  EXPECT_THAT(RecordCostLoop(0).status(), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace warptrace::examples
