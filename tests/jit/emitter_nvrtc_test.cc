// Every emitted example kernel, profiling off and on in every unit kind and placement,
// compiles with NVRTC for sm_80 and sm_90 with an empty log (no warnings). Links NVRTC
// directly and hands it the embedded recorder headers, as the devices do.
#include <nvrtc.h>

#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/emitter.h"
#include "jit/kernels/reduction.h"
#include "jit/kernels/tiled_gemm.h"
#include "jit/kernels/warp_specialized_pipeline.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;

struct NvrtcResult {
  nvrtcResult status = NVRTC_SUCCESS;
  std::string log;
  std::string ptx;
};

NvrtcResult Compile(const KernelSource& source, const std::string& arch) {
  NvrtcResult result;
  std::vector<const char*> header_texts, header_names;
  for (const EmbeddedFile& h : source.headers) {
    header_texts.push_back(h.contents.c_str());
    header_names.push_back(h.name.c_str());
  }
  nvrtcProgram prog;
  result.status = nvrtcCreateProgram(&prog, source.source.c_str(),
                                     (source.kernel_name + ".cu").c_str(),
                                     static_cast<int>(header_texts.size()), header_texts.data(),
                                     header_names.data());
  if (result.status != NVRTC_SUCCESS) return result;
  const std::string arch_flag = "-arch=" + arch;
  const char* options[] = {arch_flag.c_str(), "-std=c++17"};
  result.status = nvrtcCompileProgram(prog, 2, options);
  size_t size = 0;
  nvrtcGetProgramLogSize(prog, &size);
  std::string log(size, '\0');
  if (size > 0) nvrtcGetProgramLog(prog, log.data());
  result.log = log.c_str();  // drop the terminating NUL
  if (result.status == NVRTC_SUCCESS) {
    nvrtcGetPTXSize(prog, &size);
    std::string ptx(size, '\0');
    nvrtcGetPTX(prog, ptx.data());
    result.ptx = ptx.c_str();
  }
  nvrtcDestroyProgram(&prog);
  return result;
}

// The pipeline in every variant the example runs: cp.async (sm_80+) or bulk copies (sm_90
// only: mbarrier expect_tx), one tile per block or persistent, with delays.
enum class Example {
  kTiledGemm,
  kPipeline,
  kReduction,
  kPipelinePersistentDelays,
  kPipelineBulk,
  kPipelineBulkPersistentDelays,
};

bool NeedsSm90(Example example) {
  return example == Example::kPipelineBulk || example == Example::kPipelineBulkPersistentDelays;
}

PipelineShape PipelineVariant(CopyKind copy, bool persistent) {
  PipelineShape shape{32, 64, 256, 3, 2};
  shape.copy = copy;
  if (persistent) {
    shape.persistent_blocks = 3;
    shape.producer_delay = 100;
    shape.consumer_delay = 200;
  }
  return shape;
}

Kernel Build(Example example) {
  absl::StatusOr<Kernel> kernel;
  switch (example) {
    case Example::kTiledGemm:
      kernel = TiledGemm({64, 64, 128, 16});
      break;
    case Example::kPipeline:
      kernel = WarpSpecializedPipeline({32, 64, 256, 3, 2});
      break;
    case Example::kReduction:
      kernel = Reduction({4096, 8, 256});
      break;
    case Example::kPipelinePersistentDelays:
      kernel = WarpSpecializedPipeline(PipelineVariant(CopyKind::kCpAsync, true));
      break;
    case Example::kPipelineBulk:
      kernel = WarpSpecializedPipeline(PipelineVariant(CopyKind::kBulk, false));
      break;
    case Example::kPipelineBulkPersistentDelays:
      kernel = WarpSpecializedPipeline(PipelineVariant(CopyKind::kBulk, true));
      break;
  }
  EXPECT_THAT(kernel, IsOk());
  return *kernel;
}

// (example, profiled, unit, placement, arch)
using Case = std::tuple<Example, bool, UnitKind, Placement, std::string>;

UnitSpec Unit(UnitKind kind) {
  switch (kind) {
    case UnitKind::kWarp: return UnitSpec::Warp();
    case UnitKind::kWarpgroup: return UnitSpec::Warpgroup();
    case UnitKind::kBlock: return UnitSpec::Block();
    case UnitKind::kCustom: return UnitSpec::Custom(32, 64, 1);  // warps 1-2, lane 1 records
  }
  return {};
}

class EmitterNvrtcTest : public ::testing::TestWithParam<Case> {};

TEST_P(EmitterNvrtcTest, CompilesWithAnEmptyLog) {
  const auto& [example, profiled, unit, placement, arch] = GetParam();
  const Kernel kernel = Build(example);
  ProfileOptions options;
  options.enabled = profiled;
  options.unit = Unit(unit);
  options.placement = placement;
  options.policy.loop_iterations = true;
  options.policy.barrier_waits = true;
  absl::StatusOr<KernelSource> source = EmitKernel(kernel, options);
  ASSERT_THAT(source, IsOk());
  const NvrtcResult result = Compile(*source, arch);
  EXPECT_EQ(result.status, NVRTC_SUCCESS) << result.log << "\n" << source->source;
  EXPECT_EQ(result.log, "") << source->source;
  EXPECT_THAT(result.ptx, HasSubstr(".entry " + kernel.name));
  EXPECT_THAT(result.ptx, HasSubstr(".target " + arch));
  if (profiled) {
    EXPECT_THAT(result.ptx, HasSubstr("%globaltimer"));
  } else {
    EXPECT_THAT(result.ptx, ::testing::Not(HasSubstr("%globaltimer")));
  }
  if (example != Example::kTiledGemm && example != Example::kReduction) {
    EXPECT_THAT(result.ptx, HasSubstr("mbarrier.init.shared.b64"));
    EXPECT_THAT(result.ptx, HasSubstr("mbarrier.arrive"));
    EXPECT_THAT(result.ptx, HasSubstr(arch == "sm_90" ? "mbarrier.try_wait.parity"
                                                      : "mbarrier.test_wait.parity"));
    EXPECT_THAT(result.ptx, HasSubstr(NeedsSm90(example) ? "cp.async.bulk.shared::cluster"
                                                         : "cp.async.cg.shared.global"));
  }
}

// A kernel with every warp-specialization construct inside roles: named barriers (sync and
// arrive), phase barrier arrays, arrivals by every thread and by one, expect_tx, phase
// waits, cp.async copies with their wait, and (sm_90) bulk copies.
Kernel WarpSpecializedConstructs(bool bulk) {
  KernelBuilder b(bulk ? "handoffs_bulk" : "handoffs");
  b.Param("const float*", "in").Param("float*", "out").Grid({2, 1, 1}).Block({256, 1, 1});
  b.SharedArray("float", "tile", 2 * 8 * 32);
  b.PhaseBarriers("full", 2, bulk ? 1 : 128);
  b.PhaseBarriers("empty", 2, 4);
  b.Roles(RoleAxis::kWarpgroup,
          {{"producer", 1, "", [&] {
              b.For("k", 0, 4, TripCount::Exact(4), [&] {
                b.WaitPhase("empty", "k % 2", "k / 2");
                AsyncCopySpec copy;
                copy.name = "tile copy";
                copy.dst = "tile + (k % 2) * 256";
                copy.src = "in + k * 256";
                copy.rows = 8;
                copy.row_bytes = 128;
                copy.src_row_stride_bytes = "128";
                if (bulk) {
                  b.ArriveExpectTx("full", "k % 2", "k / 2", 8 * 128);
                  copy.barrier = "full";
                  copy.barrier_index = "k % 2";
                  copy.barrier_phase = "k / 2";
                  b.AsyncCopy(copy);
                } else {
                  b.AsyncCopy(copy);
                  b.WaitAsyncCopies(1);  // the group history (profiled)
                  b.WaitAsyncCopies();
                  b.Arrive("full", "k % 2", "k / 2");
                }
              });
              b.NamedBarrierSync("producer sync", 1, 128);
            }},
           {"consumer", 1, "", [&] {
              b.For("first", 0, 2, TripCount::Exact(2), [&] {
                b.If("threadIdx.x % 32 == 0", [&] { b.Arrive("empty", "first", 0); });
              });
              b.Stmt("float acc = 0.0f;");
              b.For("k", 0, 4, TripCount::Exact(4), [&] {
                b.WaitPhase("full", "k % 2", "k / 2");
                b.Stmt("acc += tile[(k % 2) * 256 + threadIdx.x % 128];");
                b.NamedBarrierArrive("consumer done", 2, 128);
                b.If("threadIdx.x % 32 == 0", [&] { b.Arrive("empty", "k % 2", "k / 2 + 1"); });
              });
              b.Stmt("out[blockIdx.x * 128 + threadIdx.x % 128] = acc;");
            }}});
  absl::StatusOr<Kernel> kernel = b.Build();
  EXPECT_THAT(kernel, IsOk());
  return kernel.ok() ? *kernel : Kernel{};
}

TEST(EmitterNvrtcSmokeTest, WarpSpecializationConstructsCompileWithAnEmptyLog) {
  for (bool bulk : {false, true}) {
    const Kernel kernel = WarpSpecializedConstructs(bulk);
    for (bool profiled : {false, true}) {
      ProfileOptions options;
      options.enabled = profiled;
      options.unit = UnitSpec::Warp();
      absl::StatusOr<KernelSource> source = EmitKernel(kernel, options);
      ASSERT_THAT(source, IsOk());
      for (const char* arch : {"sm_80", "sm_90"}) {
        if (bulk && std::string(arch) == "sm_80") continue;
        SCOPED_TRACE(absl::StrCat(kernel.name, profiled ? " profiled " : " ", arch));
        const NvrtcResult result = Compile(*source, arch);
        EXPECT_EQ(result.status, NVRTC_SUCCESS) << result.log << "\n" << source->source;
        EXPECT_EQ(result.log, "") << source->source;
        EXPECT_THAT(result.ptx, HasSubstr("bar.sync "));
        EXPECT_THAT(result.ptx, HasSubstr("bar.arrive "));
        if (std::string(arch) == "sm_90") {
          EXPECT_THAT(result.ptx, HasSubstr("fence.mbarrier_init.release.cluster"));
        }
      }
    }
  }
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const auto& [example, profiled, unit, placement, arch] = info.param;
  const char* names[] = {"TiledGemm",    "Pipeline",
                         "Reduction",    "PipelinePersistentDelays",
                         "PipelineBulk", "PipelineBulkPersistentDelays"};
  std::string name = names[static_cast<int>(example)];
  if (!profiled) return absl::StrCat(name, "Unprofiled_", arch);
  return absl::StrCat(name, "_", UnitKindName(unit), "_", PlacementName(placement), "_", arch);
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (Example example :
       {Example::kTiledGemm, Example::kPipeline, Example::kReduction,
        Example::kPipelinePersistentDelays, Example::kPipelineBulk,
        Example::kPipelineBulkPersistentDelays}) {
    for (const char* arch : {"sm_80", "sm_90"}) {
      if (NeedsSm90(example) && std::string(arch) == "sm_80") continue;
      cases.emplace_back(example, false, UnitKind::kWarpgroup, Placement::kAuto, arch);
      for (UnitKind unit :
           {UnitKind::kWarp, UnitKind::kWarpgroup, UnitKind::kBlock, UnitKind::kCustom}) {
        for (Placement placement : {Placement::kGlobal, Placement::kShared, Placement::kAuto}) {
          cases.emplace_back(example, true, unit, placement, arch);
        }
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllExamples, EmitterNvrtcTest, ::testing::ValuesIn(AllCases()),
                         CaseName);

// A kernel using every construct: an early return inside a region inside a loop, an
// if/else, a warp role split with index variables, dynamic shared memory.
TEST(EmitterNvrtcSmokeTest, EveryConstructCompilesWithAnEmptyLog) {
  KernelBuilder b("everything");
  b.Param("float*", "x").Param("int", "n").Grid({2, 1, 1}).Block({128, 1, 1});
  b.DynamicShared("float", "dyn", 128 * 4);
  b.SharedArray("int", "flags", 4);
  b.Stmt("dyn[threadIdx.x] = 0.0f;\nif (threadIdx.x < 4) flags[threadIdx.x] = 0;");
  b.Barrier("init");
  b.For("i", 0, "n", TripCount::UpperBound(16), [&] {
    b.Region("body", [&] {
      b.If("x[i] < 0.0f", [&] { b.Return(); },
           [&] { b.Stmt("dyn[threadIdx.x] += x[i];"); });
    });
  });
  b.Roles(RoleAxis::kWarp, {{"first", 1, "w", [&] { b.Region("a", [&] { b.Stmt("x[w] = dyn[0];"); }); }},
                            {"rest", 3, "v", [&] { b.Stmt("x[v + 1] = dyn[1] + flags[v];"); }}});
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel, IsOk());
  for (bool profiled : {false, true}) {
    ProfileOptions options;
    options.enabled = profiled;
    options.unit = UnitSpec::Warp();
    options.policy = {true, true, true, true};
    absl::StatusOr<KernelSource> source = EmitKernel(*kernel, options);
    ASSERT_THAT(source, IsOk());
    for (const char* arch : {"sm_80", "sm_90"}) {
      const NvrtcResult result = Compile(*source, arch);
      EXPECT_EQ(result.status, NVRTC_SUCCESS) << result.log << "\n" << source->source;
      EXPECT_EQ(result.log, "") << source->source;
    }
  }
}

}  // namespace
}  // namespace warptrace
