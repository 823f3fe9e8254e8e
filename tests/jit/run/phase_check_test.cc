// A wait for phase n of a phase barrier returns on the host as on the GPU when the barrier's
// current parity differs from n's, which is also the case while phase n - 1 is still open:
// the wait aliased phase n - 2's parity (a phase number off by one). The host backend counts
// the phases each barrier completed and fails the launch at the wait's builder path.
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
#include "jit/host/host_device.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// A producer warp and a consumer warp: per step k the consumer announces itself (bar.arrive)
// and waits for phase `wait_phase` of `full`; the producer, once the consumer is there
// (bar.sync), arrives for phase k. Right: "k". Off by one: "k + 1", which on the GPU returns
// at once at k = 0 (parity 1 differs from the open phase 0's) and reads data not yet there.
Kernel ProducerConsumer(const std::string& wait_phase) {
  KernelBuilder b("phase_ring");
  b.Param("float*", "out").Grid({1, 1, 1}).Block({64, 1, 1});
  b.PhaseBarriers("full", 1, 1);
  b.Roles(RoleAxis::kWarp,
          {Role{"producer", 1, "",
                [&] {
                  b.For("k", 0, 4, TripCount::Exact(4), [&] {
                    b.NamedBarrierSync("consumer here", 1, 64);
                    b.Stmt("out[threadIdx.x] += 1.0f;");
                    b.Arrive("full", 0, "k", ArriveBy::kOneThread);
                  });
                }},
           Role{"consumer", 1, "", [&] {
                  b.For("k", 0, 4, TripCount::Exact(4), [&] {
                    b.NamedBarrierArrive("consumer here", 1, 64);
                    b.WaitPhase("full", 0, wait_phase);
                    b.Stmt("out[threadIdx.x] += 1.0f;");
                  });
                }}});
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return *kernel;
}

class PhaseCheckTest : public testing::HostRunTest {
 protected:
  absl::Status Run(const Kernel& kernel) {
    const std::vector<KernelArg> args = {KernelArg::Out(absl::MakeSpan(out_))};
    return RunKernel(*device_, kernel, args, RunOptions{}).status();
  }
  std::vector<float> out_ = std::vector<float>(64, 0.0f);
};

TEST_F(PhaseCheckTest, WaitsForTheRightPhasesRun) {
  EXPECT_THAT(Run(ProducerConsumer("k")), IsOk());
  EXPECT_EQ(out_[0], 4.0f);
  EXPECT_EQ(out_[32], 4.0f);
}

TEST_F(PhaseCheckTest, AWaitReturningWhileTheEarlierPhaseIsOpenFailsAtItsPath) {
  EXPECT_THAT(
      Run(ProducerConsumer("k + 1")),
      StatusIs(absl::StatusCode::kAborted,
               AllOf(HasSubstr("kernel phase_ring > roles by warp > role consumer > loop k > wait "
                         "full[0]: waits for phase 1, but phase 0 has not completed: phase "
                         "numbers off by one?"),
                     HasSubstr("phase 1's parity 1 is that of the barrier's initial state"))));
}

}  // namespace
}  // namespace warptrace
