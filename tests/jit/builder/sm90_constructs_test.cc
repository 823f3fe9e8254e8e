// The sm_90a constructs of KernelBuilder (MmaGroup, WaitMmaGroups, SetMaxRegisters) from
// the builder through the plan to the emitted source: what Build() rejects, which record
// sites and event counts the plan derives, what the emitter writes, and which architecture
// NVRTC is asked for. Running such kernels (host emulation of wgmma) is tested with the
// primitives (tests/jit/primitives) and the kernels (tests/jit/kernels).
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/cuda/cuda_device.h"
#include "jit/emit/emitter.h"
#include "jit/plan/record_plan.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

constexpr char kMma[] = "warptrace_wgmma_mma_async_bf16_ss<64>(acc, da, db, 1);";

// One warpgroup: `groups` wgmma groups per k step, retired with WaitMmaGroups(pending).
KernelBuilder Consumer(uint32_t pending) {
  KernelBuilder b("mma_groups");
  b.Param("float*", "out").Grid({2, 1, 1}).Block({128, 1, 1});
  b.Stmt("float acc[32] = {};\nunsigned long long da = 0, db = 0;");
  b.For("k", 0, 4, TripCount::Exact(4), [&] {
    b.MmaGroup("qk", [&] { b.Stmt(kMma); });
    b.Region("softmax", [&] { b.Stmt("out[threadIdx.x] += 1.0f;"); });
    b.WaitMmaGroups(pending);
  });
  b.WaitMmaGroups(0);
  b.Stmt("out[threadIdx.x] += acc[0];");
  return b;
}

TEST(MmaGroupTest, PlanRecordsEachGroupAsAnAsyncSpan) {
  absl::StatusOr<Kernel> kernel = Consumer(0).Build();
  ASSERT_THAT(kernel, IsOk());
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, ProfileOptions{});
  ASSERT_THAT(plan, IsOk());
  int mma_sites = 0;
  for (const SiteInfo& site : plan->sites()) {
    if (site.kind == SiteKind::kMmaGroup) {
      ++mma_sites;
      EXPECT_EQ(site.name, "qk");
      EXPECT_EQ(site.origin, "kernel mma_groups > loop k > mma group qk");
    }
  }
  EXPECT_EQ(mma_sites, 1);
  // kernel 2 + 4 x (group: commit + retirement = 2, numbered by their order (trace version
  // 4: no payload slot); softmax 2).
  EXPECT_THAT(plan->ExactEventsForUnit(0), IsOkAndHolds(2u + 4u * (2u + 2u)));
  EXPECT_THAT(plan->Explain(), HasSubstr("arch sm_90a for NVRTC"));
}

TEST(MmaGroupTest, PolicyCanLeaveGroupsUnrecorded) {
  absl::StatusOr<Kernel> kernel = Consumer(0).Build();
  ASSERT_THAT(kernel, IsOk());
  ProfileOptions options;
  options.policy.mma_groups = false;
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, options);
  ASSERT_THAT(plan, IsOk());
  EXPECT_THAT(plan->ExactEventsForUnit(0), IsOkAndHolds(2u + 4u * 2u));
}

TEST(MmaGroupTest, EmitsFenceCommitWaitAndTheSpanRecords) {
  absl::StatusOr<Kernel> kernel = Consumer(1).Build();
  ASSERT_THAT(kernel, IsOk());
  absl::StatusOr<KernelSource> source = EmitKernel(*kernel, ProfileOptions{});
  ASSERT_THAT(source, IsOk());
  const std::string& s = source->source;
  const size_t fence = s.find("warptrace_wgmma_fence();");
  const size_t mma = s.find(kMma);
  const size_t commit_record = s.find("// commit of qk");
  const size_t commit = s.find("warptrace_wgmma_commit_group();");
  ASSERT_NE(fence, std::string::npos);
  ASSERT_NE(mma, std::string::npos);
  ASSERT_NE(commit_record, std::string::npos);
  ASSERT_NE(commit, std::string::npos);
  EXPECT_LT(fence, mma);
  EXPECT_LT(mma, commit_record);
  EXPECT_LT(commit_record, commit);
  EXPECT_THAT(s, HasSubstr("warptrace_wgmma_wait_group(1u);"));
  // WaitMmaGroups(1) keeps the most recent group open. Every commit is a recorded group, so
  // (trace version 5) the wait records itself with the 1 it leaves in flight and the dump
  // ends the older groups there: no group history or counters in the kernel.
  EXPECT_THAT(s, Not(HasSubstr("warptrace_mma_group_sites")));
  EXPECT_THAT(s, Not(HasSubstr("_issued")));
  EXPECT_THAT(s, HasSubstr("1u, 0xffffffffu);  // wait (1 left in flight) ending wgmma groups, "
                           "under qk"));
  EXPECT_THAT(s, HasSubstr("#include \"warptrace_primitives.cuh\""));
  ASSERT_NE(source->requirements.FirstUse(TargetFeature::kWgmma), nullptr);
  EXPECT_EQ(*source->requirements.FirstUse(TargetFeature::kWgmma),
            "kernel mma_groups > loop k > mma group qk");
  // Unprofiled: the same instructions, no records.
  const KernelSource plain = EmitUnprofiledKernel(*kernel);
  EXPECT_THAT(plain.source, HasSubstr("warptrace_wgmma_commit_group();"));
  EXPECT_THAT(plain.source, Not(HasSubstr("commit of")));
}

TEST(MmaGroupTest, Sm90aKernelsCompileForSm90a) {
  absl::StatusOr<Kernel> kernel = Consumer(0).Build();
  ASSERT_THAT(kernel, IsOk());
  const KernelSource source = EmitUnprofiledKernel(*kernel);
  EXPECT_EQ(CudaCompileRequest(source, CudaTarget::Default())->options.target.ToString(),
            "sm_90a");
  EXPECT_EQ(CudaCompileRequest(source, *CudaTarget::Parse("sm_90a"))->options.target.ToString(),
            "sm_90a");
  // On Blackwell, where wgmma does not exist, the construct and the GPU are named (it used
  // to compile for sm_100 and fail inside NVRTC on "compile with sm_90a").
  EXPECT_THAT(CudaCompileRequest(source, *CudaTarget::Parse("sm_100a")).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("mma group"),
                             HasSubstr("uses wgmma, which exists on sm_90a only"),
                             HasSubstr("the target is sm_100a"))));
  // A kernel without sm_90a constructs stays on the architecture asked for.
  KernelBuilder b("plain");
  b.Param("float*", "out").Grid({1, 1, 1}).Block({128, 1, 1});
  b.Stmt("out[threadIdx.x] = 0.0f;  // warptrace_wgmma_fence() in a comment does not count");
  absl::StatusOr<Kernel> plain = b.Build();
  ASSERT_THAT(plain, IsOk());
  EXPECT_FALSE(plain->requirements.Has(TargetFeature::kWgmma));
  EXPECT_EQ(CudaCompileRequest(EmitUnprofiledKernel(*plain), CudaTarget::Default())
                ->options.target.ToString(),
            "sm_90");
}

TEST(MmaGroupTest, RawWgmmaStatementsNeedSm90aToo) {
  KernelBuilder b("raw");
  b.Param("float*", "out").Grid({1, 1, 1}).Block({128, 1, 1});
  b.Stmt("out[0] = 1.0f;");
  b.Region("r", [&] { b.Stmt("warptrace_wgmma_fence();"); });
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  ASSERT_NE(kernel->requirements.FirstUse(TargetFeature::kWgmma), nullptr);
  EXPECT_EQ(*kernel->requirements.FirstUse(TargetFeature::kWgmma),
            "kernel raw > region r > statement `warptrace_wgmma_fence();`");
}

TEST(MmaGroupTest, BuildRejectsMisuse) {
  {  // never retired
    KernelBuilder b("k");
    b.Grid({1, 1, 1}).Block({128, 1, 1});
    b.MmaGroup("g", [&] { b.Stmt(";"); });
    EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("mma group 'g' is never retired")));
  }
  {  // wait_group over 7
    KernelBuilder b("k");
    b.Grid({1, 1, 1}).Block({128, 1, 1});
    b.MmaGroup("g", [&] { b.Stmt(";"); });
    b.WaitMmaGroups(8);
    EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("wgmma.wait_group allows (0..7)")));
  }
  {  // a construct inside the group
    KernelBuilder b("k");
    b.Grid({1, 1, 1}).Block({128, 1, 1});
    b.MmaGroup("g", [&] { b.Region("r", [&] { b.Stmt(";"); }); });
    b.WaitMmaGroups(0);
    EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("holds the wgmma instructions only")));
  }
  {  // a block that is not whole warpgroups
    KernelBuilder b("k");
    b.Grid({1, 1, 1}).Block({96, 1, 1});
    b.MmaGroup("g", [&] { b.Stmt(";"); });
    b.WaitMmaGroups(0);
    EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("not whole warpgroups")));
  }
  {  // a role of one warp
    KernelBuilder b("k");
    b.Grid({1, 1, 1}).Block({128, 1, 1});
    b.Roles(RoleAxis::kWarp, {Role{"one", 1, "", [&] {
                                     b.MmaGroup("g", [&] { b.Stmt(";"); });
                                     b.WaitMmaGroups(0);
                                   }},
                              Role{"rest", 3, "", [&] { b.Stmt(";"); }}});
    EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("role 'one' is 1 warp(s), not whole warpgroups")));
  }
}

// The warpgroup-wide constructs get Barrier()'s rule one level down: under an if whose
// condition may differ between the threads of a warpgroup, Build() fails with the path.
TEST(WarpgroupWideTest, BuildRejectsEachUnderAThreadDivergentIfNamingThePath) {
  {
    KernelBuilder b("k");
    b.Grid({1, 1, 1}).Block({128, 1, 1});
    b.If("threadIdx.x < 64", [&] { b.SetMaxRegisters(232, RegisterChange::kIncrease); });
    EXPECT_THAT(b.Build(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("kernel k > if (threadIdx.x < 64) > setmaxnreg.inc 232: "
                                   "SetMaxRegisters (setmaxnreg) is a warpgroup-wide "
                                   "instruction under `if (threadIdx.x < 64)` at kernel k > "
                                   "if (threadIdx.x < 64)")));
  }
  {
    KernelBuilder b("k");
    b.Grid({1, 1, 1}).Block({128, 1, 1});
    b.If("threadIdx.x % 32 == 0", [&] { b.MmaGroup("g", [&] { b.Stmt(";"); }); });
    b.WaitMmaGroups(0);
    EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                    AllOf(HasSubstr("mma group g: MmaGroup (wgmma) is a "
                                                    "warpgroup-wide instruction under"),
                                          HasSubstr("Uniform::kWarpgroup"))));
  }
  {
    KernelBuilder b("k");
    b.Grid({1, 1, 1}).Block({128, 1, 1});
    b.MmaGroup("g", [&] { b.Stmt(";"); });
    b.If("threadIdx.x == 0", [&] { b.Stmt(";"); }, [&] { b.WaitMmaGroups(0); });
    b.WaitMmaGroups(0);
    EXPECT_THAT(b.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("WaitMmaGroups (wgmma.wait_group) is a "
                                              "warpgroup-wide instruction under `if "
                                              "(threadIdx.x == 0)`")));
  }
}

TEST(WarpgroupWideTest, BuildAcceptsThemUnderAWarpgroupOrBlockUniformIf) {
  KernelBuilder b("k");
  b.Grid({1, 1, 1}).Block({256, 1, 1});
  b.If("threadIdx.x / 128 == 0", [&] { b.SetMaxRegisters(232, RegisterChange::kIncrease); },
       [&] { b.SetMaxRegisters(40, RegisterChange::kDecrease); }, Uniform::kWarpgroup);
  b.If("blockIdx.x == 0", [&] { b.MmaGroup("g", [&] { b.Stmt(";"); }); }, Uniform::kBlock);
  b.WaitMmaGroups(0);
  EXPECT_THAT(b.Build().status(), IsOk());
  // A block barrier still needs the whole block to agree.
  KernelBuilder d("d");
  d.Grid({1, 1, 1}).Block({256, 1, 1});
  d.If("threadIdx.x / 128 == 0", [&] { d.Barrier(); }, Uniform::kWarpgroup);
  EXPECT_THAT(d.Build(), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("the barrier is under `if (threadIdx.x / 128 == 0)`")));
}

KernelBuilder WarpSpecialized(uint32_t producer_regs, uint32_t consumer_regs) {
  KernelBuilder b("ws");
  b.Param("float*", "out").Grid({1, 1, 1}).Block({384, 1, 1});
  b.Roles(RoleAxis::kWarpgroup,
          {Role{"producer", 1, "",
                [&] {
                  b.SetMaxRegisters(producer_regs, RegisterChange::kDecrease);
                  b.Stmt("out[threadIdx.x] = 0.0f;");
                }},
           Role{"consumer", 2, "", [&] {
                  b.SetMaxRegisters(consumer_regs, RegisterChange::kIncrease);
                  b.Stmt("out[threadIdx.x] = 1.0f;");
                }}});
  return b;
}

TEST(SetMaxRegistersTest, EmitsSetmaxnregAndFixesTheEntryCount) {
  absl::StatusOr<Kernel> kernel = WarpSpecialized(40, 232).Build();
  ASSERT_THAT(kernel, IsOk());
  EXPECT_TRUE(kernel->fixed_register_count);
  ASSERT_NE(kernel->requirements.FirstUse(TargetFeature::kSetMaxNReg), nullptr);
  EXPECT_EQ(*kernel->requirements.FirstUse(TargetFeature::kSetMaxNReg),
            "kernel ws > roles by warpgroup > role producer > setmaxnreg.dec 40");
  const KernelSource source = EmitUnprofiledKernel(*kernel);
  EXPECT_THAT(source.source, HasSubstr("__global__ void __launch_bounds__(384, 1) ws("));
  EXPECT_THAT(source.source, HasSubstr("warptrace_setmaxnreg_dec<40u>();"));
  EXPECT_THAT(source.source, HasSubstr("warptrace_setmaxnreg_inc<232u>();"));
}

TEST(SetMaxRegistersTest, BuildRejectsCountsSetmaxnregCannotTake) {
  for (uint32_t regs : {16u, 20u, 100u, 264u}) {
    EXPECT_THAT(WarpSpecialized(regs, 232).Build(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("24..256 registers, a multiple of 8")))
        << regs;
  }
  EXPECT_THAT(WarpSpecialized(24, 256).Build(), IsOk());
}

}  // namespace
}  // namespace warptrace
