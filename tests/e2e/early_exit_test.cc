// The diagnosis of a grid where many blocks return early (issue 54, item 9): a split-KV
// decode shape, grid (heads, sequences, partitions), whose partitions past their sequence's
// end return at once. Run on the host backend with the deterministic clock, so every block's
// time is its explicit delays: a working block of sequence s spins (s + 1) us per KV step.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/host/host_device.h"
#include "jit/plan/record_plan.h"
#include "jit/run/run.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/diagnosis.h"
#include "tests/jit/run/host_run_fixture.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

constexpr int kPartition = 4;  // KV steps per partition

absl::StatusOr<Kernel> SplitKvKernel(ReturnScope scope, bool labels = false) {
  KernelBuilder b("split_kv");
  b.Param("const int*", "seq_lens").Param("int*", "out").Param("int", "num_heads");
  b.Grid({2, 4, 3}).Block({64, 1, 1});
  if (labels) {
    b.BlockLabel({{"head", "blockIdx.x"},
                  {"seq", "blockIdx.y"},
                  {"partition", "blockIdx.z"},
                  {"row", "blockIdx.y * num_heads + blockIdx.x"}});
  }
  b.Stmt("const int len = seq_lens[blockIdx.y];");
  b.Stmt(absl::StrCat("const int first = (int)blockIdx.z * ", kPartition, ";"));
  b.If("first >= len", [&] { b.Return(scope); });
  b.Stmt("int acc = 0;");
  b.For("step", "first", absl::StrCat("min(len, first + ", kPartition, ")"),
        TripCount::UpperBound(kPartition), [&] {
          b.Region("kv", [&] {
            // 1500 cycles (1 us at the host's 1.5 GHz) per unit of work, on clock64 (each
            // read takes 3 cycles under the deterministic clock).
            b.Stmt("const long long t0 = clock64();\n"
                   "while (clock64() - t0 < 1500ll * (blockIdx.y + 1u)) {\n}");
            b.Stmt("acc += step;");
          });
        });
  b.Stmt("out[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = acc;");
  return b.Build();
}

class EarlyExitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HostDeviceOptions options;
    options.clock = host::ClockMode::kDeterministic;
    options.num_virtual_sms = 4;
    absl::StatusOr<std::unique_ptr<HostDevice>> device =
        testing::CreateSandboxedHostDevice(options);
    ASSERT_THAT(device, IsOk());
    device_ = *std::move(device);
  }

  // Runs the kernel with seq_lens {12, 4, 8, 2}: sequence 0 has 3 working partitions,
  // 1 one, 2 two, 3 one (of 2 steps); 10 of the 24 blocks return early.
  absl::StatusOr<RunResult> Run(ReturnScope scope, bool labels = false) {
    absl::StatusOr<Kernel> kernel = SplitKvKernel(scope, labels);
    if (!kernel.ok()) return kernel.status();
    seq_lens_ = {12, 4, 8, 2};
    out_.assign(24, -1);
    std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(seq_lens_)),
                                   KernelArg::Out(absl::MakeSpan(out_)),
                                   KernelArg::Scalar<int>(2)};
    RunOptions options;
    options.profile.unit = UnitSpec::Warp();
    options.dump.analysis = true;
    return RunKernel(*device_, *kernel, args, options);
  }

  std::unique_ptr<HostDevice> device_;
  std::vector<int> seq_lens_;
  std::vector<int> out_;
};

std::string Printed(const Analysis& analysis) {
  std::string text;
  llvm::raw_string_ostream os(text);
  PrintDiagnosis(analysis, os);
  return os.str();
}

// Before, the median block was an early-exit one (the grid's 10 early returns take a few ns),
// the diagnosis said nothing of them, and the 12 us blocks were "outliers, 3x the median".
TEST_F(EarlyExitTest, EarlyReturnBlocksAreCountedAndSetApartFromTheWorkingOnes) {
  absl::StatusOr<RunResult> run = Run(ReturnScope::kBlock);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(out_[0], 0 + 1 + 2 + 3);  // block (0,0,0): steps 0..3
  ASSERT_TRUE(run->dump.analysis.has_value());
  const Analysis& a = *run->dump.analysis;
  const GridAnalysis& g = a.grid;
  EXPECT_EQ(g.blocks, 24u);
  EXPECT_EQ(g.early_return_blocks, 10u);
  EXPECT_EQ(g.working_blocks, 14u);
  // Working blocks: six of 4 us (sequence 0), four of 8 us (sequences 1 and 3), four of
  // 12 us (sequence 2): the median (nearest rank, the 7th of 14) is 8 us plus clock reads.
  EXPECT_GE(g.median_block_ns, 8000);
  EXPECT_LT(g.median_block_ns, 8100);
  EXPECT_LT(g.median_early_return_ns, 100);
  // Sequence 2's 12 us blocks are 1.5x the working median, not 3x the early-exit median.
  ASSERT_FALSE(g.outlier_blocks.empty());
  EXPECT_NEAR(g.outlier_blocks.front().ratio, 1.5, 0.02) << Printed(a);
  ASSERT_FALSE(a.diagnosis.empty());
  EXPECT_EQ(a.diagnosis.front().kind, "early_return");
  EXPECT_THAT(a.diagnosis.front().text,
              AllOf(StartsWith("early return: 10 of 24 blocks returned early (median "),
                    HasSubstr("over the 14 working blocks")));
  // Every unit of an early block carries the flag; no unit of a working block does.
  ASSERT_NE(run->trace, nullptr);
  int flagged = 0;
  for (const UnitTimeline& u : run->trace->timeline.units) {
    const bool early = static_cast<int>(u.block_index.z) * kPartition >=
                       seq_lens_[u.block_index.y];
    EXPECT_EQ(u.returned_early, early) << u.block_linear << " unit " << u.unit_index;
    flagged += u.returned_early;
  }
  EXPECT_EQ(flagged, 10 * 2);
}

// The working blocks' time is carried by blockIdx.y (the sequence): each sequence's blocks
// spin (y + 1) us per step, so grouping by y explains nearly all of the variance.
TEST_F(EarlyExitTest, ImbalanceIsGroupedByTheGridDimensionThatCarriesIt) {
  absl::StatusOr<RunResult> run = Run(ReturnScope::kBlock);
  ASSERT_THAT(run, IsOk());
  const Analysis& a = *run->dump.analysis;
  ASSERT_FALSE(a.grid.dims.empty());
  const DimImbalance& top = a.grid.dims.front();
  EXPECT_EQ(top.dim, 'y');
  EXPECT_EQ(top.values, 4u);
  EXPECT_GT(top.explained, 0.99);
  EXPECT_EQ(top.slowest, 2u);  // 4 steps of 3 us
  EXPECT_EQ(top.slowest_blocks, 4u);
  EXPECT_EQ(top.fastest, 0u);  // 4 steps of 1 us
  EXPECT_NEAR(top.ratio, 1.5, 0.02);  // 12 us against the median sequence's 8 us
  bool found = false;
  for (const Diagnosis& d : a.diagnosis) {
    if (d.kind != "dim_imbalance") continue;
    found = true;
    EXPECT_THAT(d.text, AllOf(StartsWith("imbalance by blockIdx.y: its 4 values explain "),
                              HasSubstr("the 4 working blocks with blockIdx.y = 2 took 12.")));
    EXPECT_EQ(d.host_clock, HostClockSupport::kRelative);
  }
  EXPECT_TRUE(found) << Printed(a);
}

// On the host backend the diagnosis says which findings its clock can support.
TEST_F(EarlyExitTest, OnTheHostBackendTheDiagnosisSaysWhatAHostClockSupports) {
  absl::StatusOr<RunResult> run = Run(ReturnScope::kBlock);
  ASSERT_THAT(run, IsOk());
  const Analysis& a = *run->dump.analysis;
  ASSERT_TRUE(a.host_backend);
  const std::string printed = Printed(a);
  EXPECT_THAT(printed, HasSubstr("  host clock, finding 1: counted from the records, not "
                                 "timed: holds on a GPU as it is\n"));
  EXPECT_THAT(printed, HasSubstr(": ratios of host time between blocks or units running the "
                                 "same code"));
  EXPECT_THAT(printed, HasSubstr(": the host's scheduling and clock reads"));
  EXPECT_EQ(a.diagnosis.back().kind, "overhead");
  EXPECT_EQ(a.diagnosis.back().host_clock, HostClockSupport::kHostOnly);
}

// A thread-scope return taken by every thread of the block marks the block the same way.
TEST_F(EarlyExitTest, AThreadScopeReturnTakenByTheWholeBlockCountsAsTheBlocksEarlyReturn) {
  absl::StatusOr<RunResult> run = Run(ReturnScope::kThread);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->dump.analysis->grid.early_return_blocks, 10u);
}

// Block labels (an expression of blockIdx and kernel arguments per part) name each block on
// its tracks, in the diagnosis's block references and, where a part is exactly one blockIdx
// coordinate, the grid dimension the imbalance is grouped by.
TEST_F(EarlyExitTest, BlockLabelsNameTheTracksTheBlocksAndTheGridDimensions) {
  absl::StatusOr<RunResult> run = Run(ReturnScope::kBlock, /*labels=*/true);
  ASSERT_THAT(run, IsOk());
  const TraceLayout& layout = run->trace->layout;
  ASSERT_EQ(layout.block_labels.size(), 24u);
  // Block (1,3,2) is linear 1 + 2 * (3 + 4 * 2) = 23; its row is 3 * 2 + 1.
  EXPECT_EQ(layout.block_labels[23], "head 1 / seq 3 / partition 2 / row 7");
  EXPECT_EQ(layout.grid_dim_names, (std::vector<std::string>{"head", "seq", "partition"}));
  EXPECT_EQ(UnitTrackName(layout, Dim3{1, 3, 2}, 1),
            "block (1,3,2) [head 1 / seq 3 / partition 2 / row 7] warp 1");
  const Analysis& a = *run->dump.analysis;
  bool outliers = false, by_seq = false;
  for (const Diagnosis& d : a.diagnosis) {
    if (d.kind == "outlier_blocks") {
      outliers = true;
      EXPECT_THAT(d.text, HasSubstr("[head 0 / seq 2 / partition 0 / row 4] on SM"));
    }
    if (d.kind == "dim_imbalance") {
      by_seq = true;
      EXPECT_THAT(d.text, AllOf(StartsWith("imbalance by blockIdx.y (seq): "),
                                HasSubstr("with seq = 2 took 12.")));
    }
  }
  EXPECT_TRUE(outliers && by_seq) << Printed(a);
}

TEST(BlockLabelTest, ALabelReadingAFloatParameterIsRefusedAtPlanningNamingThePart) {
  KernelBuilder b("labelled");
  b.Param("float", "scale").Param("int*", "out").Block({32, 1, 1});
  b.BlockLabel({{"scaled", "blockIdx.x * scale"}});
  b.Stmt("out[threadIdx.x] = 1;");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  EXPECT_THAT(RecordPlan::Create(*kernel, ProfileOptions{}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kernel labelled > block label > scaled: block label "
                                 "expression 'blockIdx.x * scale' reads 'scale', which is not "
                                 "an integer scalar parameter")));
}

TEST(BlockLabelTest, ABlockLabelThatDoesNotParseIsABuildError) {
  KernelBuilder b("labelled");
  b.Param("int*", "out").Block({32, 1, 1});
  b.BlockLabel({{"seq", "blockIdx.q"}});
  b.Stmt("out[threadIdx.x] = 1;");
  EXPECT_THAT(b.Build().status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("kernel labelled: block label > seq: ")));
}

}  // namespace
}  // namespace warptrace
