// The cluster reduction (jit/kernels/cluster_reduction.h): shape errors, exact plan counts,
// and a run on the host backend (NVRTC for sm_90 too) whose per-cluster sums, read through
// the peers' shared memory, match the CPU reference.
#include "jit/kernels/cluster_reduction.h"

#include <cmath>
#include <vector>

#include "absl/types/span.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/plan/record_plan.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

TEST(ClusterReductionShapeTest, RejectsAClusterThatDoesNotDivideTheGrid) {
  EXPECT_THAT(ClusterReduction({4096, 6, 256, 4}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cluster 4 must be in 1..8 and divide blocks (6)")));
}

TEST(ClusterReductionShapeTest, PlanCountsTheClusterBarriersWaits) {
  absl::StatusOr<Kernel> kernel = ClusterReduction({4096, 8, 256, 2});
  ASSERT_THAT(kernel, IsOk());
  ProfileOptions options;
  options.unit = UnitSpec::Warp();
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, options);
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(plan->ExactEventsForUnit(7), IsOkAndHolds(8u));
  // + 9 block barriers and 2 cluster barriers, 2 events each.
  options.policy.barrier_waits = true;
  plan = RecordPlan::Create(*kernel, options);
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(plan->ExactEventsForUnit(0), IsOkAndHolds(8u + 18u + 4u));
  EXPECT_EQ(plan->layout().cluster, (Dim3{2, 1, 1}));
}

class ClusterReductionRunTest : public testing::HostRunTest {};

TEST_F(ClusterReductionRunTest, ClusterSumsMatchTheReference) {
  for (uint32_t cluster : {2u, 4u}) {
    const ClusterReductionShape shape{.n = 10000, .blocks = 8, .threads = 128,
                                      .cluster = cluster};
    absl::StatusOr<Kernel> kernel = ClusterReduction(shape);
    ASSERT_THAT(kernel, IsOk());
    std::vector<float> x(shape.n);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37 % 101) - 50) / 8;
    std::vector<float> out(shape.blocks / cluster, 0.0f);
    RunOptions options;
    options.check_gpu_compile = true;
    options.profile.policy.barrier_waits = true;
    absl::StatusOr<RunResult> run =
        RunKernel(device(), *kernel,
                  {KernelArg::In(absl::MakeConstSpan(x)), KernelArg::Out(absl::MakeSpan(out))},
                  options);
    ASSERT_THAT(run, IsOk());
    const std::vector<double> reference = ReferenceClusterSums(x, shape);
    ASSERT_EQ(out.size(), reference.size());
    for (size_t c = 0; c < out.size(); ++c) {
      EXPECT_NEAR(out[c], reference[c], 1e-3) << "cluster " << c << " of " << cluster;
    }
    ASSERT_NE(run->trace, nullptr);
    EXPECT_TRUE(run->trace->report.ok());
  }
}

}  // namespace
}  // namespace warptrace
