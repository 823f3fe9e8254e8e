// Device functions described with constructs (KernelBuilder::Call, issue 54 item 5): a
// softmax whose block max and block sum are one function each, called like vLLM's
// block_max/block_sum helpers; their barriers checked by Build() where they are called,
// their regions and waits on the timeline at each call; run on the host backend and
// compiled by NVRTC.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/run/run.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

class DeviceFunctionTest : public ::warptrace::testing::HostRunTest {};

// A block reduction of 256 threads' values with `op` (a C++ function of two floats).
KernelBuilder::DeviceFunction BlockReduce(const std::string& name, const std::string& op) {
  return {name, {"float v"}, "float", [op](KernelBuilder& b) {
            b.Stmt("red[threadIdx.x] = v;");
            b.Barrier("stored", BarrierRecord::kAlways);
            b.For({"s", 128, "s > 0", "s >>= 1"}, TripCount::Exact(8), [&] {
              b.Stmt("if (threadIdx.x < s) red[threadIdx.x] = " + op +
                     "(red[threadIdx.x], red[threadIdx.x + s]);");
              b.Barrier("halved", BarrierRecord::kAlways);
            });
            b.Stmt("result = red[0];");
            b.Barrier("read", BarrierRecord::kAlways);  // before red is written again
          }};
}

absl::StatusOr<Kernel> Softmax(bool divergent_call) {
  const KernelBuilder::DeviceFunction block_max = BlockReduce("block_max", "fmaxf");
  const KernelBuilder::DeviceFunction block_sum = BlockReduce("block_sum", "warptrace_add");
  KernelBuilder b("softmax");
  b.Param("const float*", "x").Param("float*", "y").Grid({2, 1, 1}).Block({256, 1, 1});
  b.Preamble("__device__ float warptrace_add(float a, float b) { return a + b; }");
  b.SharedArray("float", "red", 256);
  b.Stmt("const int i = blockIdx.x * 256 + threadIdx.x;\nconst float v = x[i];");
  if (divergent_call) {
    b.If("threadIdx.x < 128", [&] { b.Call(block_max, {"v"}, "m"); });
    return b.Build();
  }
  b.Call(block_max, {"v"}, "m");
  b.Stmt("const float e = expf(v - m);");
  b.Call(block_sum, {"e"}, "total");
  b.Region("normalize", [&] { b.Stmt("y[i] = e / total;"); });
  return b.Build();
}

TEST_F(DeviceFunctionTest, EachCallRunsAndShowsTheFunctionsRegionsAndWaits) {
  absl::StatusOr<Kernel> kernel = Softmax(false);
  ASSERT_THAT(kernel, IsOk());
  std::vector<float> x(512), y(512, -1.0f);
  for (int i = 0; i < 512; ++i) x[i] = 0.01f * static_cast<float>((i * 37) % 101);
  RunOptions options;
  options.profile.unit = UnitSpec::Warp();
  absl::StatusOr<RunResult> run =
      RunKernel(device(), *kernel,
                {KernelArg::In(absl::MakeConstSpan(x)), KernelArg::Out(absl::MakeSpan(y))},
                options);
  ASSERT_THAT(run, IsOk());
  for (int block = 0; block < 2; ++block) {
    double m = -1e30, sum = 0;
    for (int t = 0; t < 256; ++t) m = std::max<double>(m, x[block * 256 + t]);
    for (int t = 0; t < 256; ++t) sum += std::exp(x[block * 256 + t] - m);
    for (int t = 0; t < 256; ++t) {
      ASSERT_NEAR(y[block * 256 + t], std::exp(x[block * 256 + t] - m) / sum, 1e-6) << t;
    }
  }
  // Per warp: kernel 2 + per call (its region 2 + stored 2 + 8 x halved 2 + read 2) x 2
  // + normalize 2.
  EXPECT_EQ(run->plan->ExactEventsForUnit(0).value_or(0), 2u + 2 * (2 + 2 + 16 + 2) + 2);
  EXPECT_THAT(run->plan->Explain(), HasSubstr("call block_sum"));
  ASSERT_NE(run->trace, nullptr);
  EXPECT_TRUE(run->trace->report.ok());
  const TraceLayout& layout = run->trace->layout;
  for (const UnitTimeline& unit : run->trace->timeline.units) {
    int max_spans = 0, sum_spans = 0, halved = 0;
    for (const Slice& slice : unit.slices) {
      const std::string& name = layout.sites[slice.site].name;
      max_spans += name == "block_max";
      sum_spans += name == "block_sum";
      halved += name == "halved";
    }
    EXPECT_EQ(max_spans, 1);
    EXPECT_EQ(sum_spans, 1);
    EXPECT_EQ(halved, 16);  // 8 in each call
  }
}

TEST(DeviceFunctionBuildTest, ItsBarrierIsCheckedWhereItIsCalled) {
  EXPECT_THAT(Softmax(true).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("softmax > if (threadIdx.x < 128) > call block_max > barrier "
                                 "stored: the barrier is under `if (threadIdx.x < 128)`")));
}

TEST(DeviceFunctionBuildTest, ArgumentsResultsAndRecursionAreChecked) {
  const KernelBuilder::DeviceFunction sum = BlockReduce("block_sum", "fmaxf");
  KernelBuilder two("k");
  two.Param("float*", "out").SharedArray("float", "red", 256).Block({256, 1, 1});
  two.Call(sum, {"1.0f", "2.0f"}, "t");
  EXPECT_THAT(two.Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("call block_sum(1.0f, 2.0f): 2 argument(s) for the 1 "
                                 "parameter(s) of block_sum (float v)")));
  KernelBuilder none("k");
  none.Param("float*", "out").SharedArray("float", "red", 256).Block({256, 1, 1});
  none.Call(sum, {"1.0f"});
  EXPECT_THAT(none.Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("block_sum returns float: give Call a variable to hold it")));
  KernelBuilder::DeviceFunction forever{"forever", {}, "", nullptr};
  forever.body = [&forever](KernelBuilder& b) { b.Call(forever, {}); };
  KernelBuilder self("k");
  self.Param("float*", "out");
  self.Call(forever, {});
  EXPECT_THAT(self.Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("calls nested more than 8 deep (does forever call itself?)")));
}

}  // namespace
}  // namespace warptrace
