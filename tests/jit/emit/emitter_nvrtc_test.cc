// Every emitted example kernel, profiling off and on in every unit kind and placement,
// compiles with NVRTC for sm_80 and sm_90 (to PTX and a cubin) with an empty log (no
// warnings), handing NVRTC the embedded headers in memory, as the devices do. The variants
// of one example and architecture are compiled as a few NVRTC programs
// (tests/jit/nvrtc_batch.h); a failure names the variant and shows its own log.
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/emit/emitter.h"
#include "jit/kernels/reduction.h"
#include "jit/kernels/tiled_gemm.h"
#include "jit/kernels/warp_specialized_pipeline.h"
#include "tests/jit/nvrtc_batch.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::CompileNvrtcBatches;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::NvrtcBatchMember;
using ::warptrace::testing::NvrtcBatchResult;

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

UnitSpec Unit(UnitKind kind) {
  switch (kind) {
    case UnitKind::kWarp: return UnitSpec::Warp();
    case UnitKind::kWarpgroup: return UnitSpec::Warpgroup();
    case UnitKind::kBlock: return UnitSpec::Block();
    case UnitKind::kCustom: return UnitSpec::Custom(32, 64, 1);  // warps 1-2, lane 1 records
  }
  return {};
}

const char* ExampleName(Example example) {
  const char* names[] = {"TiledGemm",    "Pipeline",
                         "Reduction",    "PipelinePersistentDelays",
                         "PipelineBulk", "PipelineBulkPersistentDelays"};
  return names[static_cast<int>(example)];
}

void PrintTo(Example example, std::ostream* os) { *os << ExampleName(example); }

// One emitted variant of an example: unprofiled, or profiled in one unit kind and placement.
struct Variant {
  std::string label;  // "Pipeline_warp_shared_sm_80", "PipelineUnprofiled_sm_80"
  bool profiled = false;
  KernelSource source;
};

// Every variant of `kernel` for `arch`: unprofiled, then every unit kind in every placement.
std::vector<Variant> Variants(const Kernel& kernel, Example example, const std::string& arch) {
  std::vector<Variant> variants;
  auto add = [&](bool profiled, UnitKind unit, Placement placement) {
    ProfileOptions options;
    options.enabled = profiled;
    options.unit = Unit(unit);
    options.placement = placement;
    options.policy.loop_iterations = true;
    options.policy.barrier_waits = true;
    Variant variant;
    variant.profiled = profiled;
    variant.label =
        profiled ? absl::StrCat(ExampleName(example), "_", UnitKindName(unit), "_",
                                PlacementName(placement), "_", arch)
                 : absl::StrCat(ExampleName(example), "Unprofiled_", arch);
    absl::StatusOr<KernelSource> source = EmitKernel(kernel, options);
    EXPECT_THAT(source, IsOk()) << variant.label;
    if (!source.ok()) return;
    variant.source = *std::move(source);
    variants.push_back(std::move(variant));
  };
  add(false, UnitKind::kWarpgroup, Placement::kAuto);
  for (UnitKind unit :
       {UnitKind::kWarp, UnitKind::kWarpgroup, UnitKind::kBlock, UnitKind::kCustom}) {
    for (Placement placement : {Placement::kGlobal, Placement::kShared, Placement::kAuto}) {
      add(true, unit, placement);
    }
  }
  return variants;
}

// Compiles `sources` (labelled) for `arch` (sm_XY: PTX and a cubin) as batches
// (tests/jit/nvrtc_batch.h); one result per source, in order.
std::vector<NvrtcBatchResult> CompileAll(
    const std::vector<std::pair<std::string, KernelSource>>& sources, const std::string& arch) {
  std::vector<NvrtcBatchMember> members;
  for (const auto& [label, source] : sources) {
    members.push_back({label, source.source, source.kernel_name, source.headers});
  }
  absl::StatusOr<std::vector<NvrtcBatchResult>> results =
      CompileNvrtcBatches(members, arch);
  EXPECT_THAT(results, IsOk());
  return results.ok() ? *std::move(results) : std::vector<NvrtcBatchResult>(sources.size());
}

// What every compile must give: success, an empty log (its own, and its batch's), and PTX
// for `arch` holding its kernel.
void ExpectCleanCompile(const NvrtcBatchResult& result, const std::string& source,
                        const std::string& arch) {
  EXPECT_THAT(result.status, IsOk()) << source;
  EXPECT_EQ(result.log, "") << source;
  EXPECT_EQ(result.batch_log, "")
      << "each kernel compiles alone with an empty log, but not in its batch: the batching "
         "(tests/jit/nvrtc_batch.h) is at fault";
  EXPECT_THAT(result.ptx, HasSubstr(".entry " + result.entry + "("));
  EXPECT_THAT(result.ptx, HasSubstr(".target " + arch));
}

// (example, arch): every variant of one example for one architecture.
using Case = std::tuple<Example, std::string>;

class EmitterNvrtcTest : public ::testing::TestWithParam<Case> {};

// Each variant is checked under its own name (e.g. "Pipeline_warp_shared_sm_80"). The
// variants are compiled as a few NVRTC programs (tests/jit/nvrtc_batch.h): an auto placement
// emits byte for byte the source of the placement it chooses, which is then compiled once.
TEST_P(EmitterNvrtcTest, EveryVariantCompilesWithAnEmptyLog) {
  const auto& [example, arch] = GetParam();
  const Kernel kernel = Build(example);
  const std::vector<Variant> variants = Variants(kernel, example, arch);
  ASSERT_EQ(variants.size(), 13u);
  std::vector<std::pair<std::string, KernelSource>> sources;
  for (const Variant& variant : variants) sources.emplace_back(variant.label, variant.source);
  const std::vector<NvrtcBatchResult> results = CompileAll(sources, arch);
  ASSERT_EQ(results.size(), variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    const Variant& variant = variants[i];
    const std::string& ptx = results[i].ptx;
    SCOPED_TRACE(variant.label);
    ExpectCleanCompile(results[i], variant.source.source, arch);
    if (variant.profiled) {
      EXPECT_THAT(ptx, HasSubstr("%globaltimer"));
    } else {
      EXPECT_THAT(ptx, ::testing::Not(HasSubstr("%globaltimer")));
    }
    if (example != Example::kTiledGemm && example != Example::kReduction) {
      EXPECT_THAT(ptx, HasSubstr("mbarrier.init.shared.b64"));
      EXPECT_THAT(ptx, HasSubstr("mbarrier.arrive"));
      EXPECT_THAT(ptx, HasSubstr(arch == "sm_90" ? "mbarrier.try_wait.parity"
                                                 : "mbarrier.test_wait.parity"));
      EXPECT_THAT(ptx, HasSubstr(NeedsSm90(example) ? "cp.async.bulk.shared::cluster"
                                                    : "cp.async.cg.shared.global"));
    }
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
                  b.WaitAsyncCopies(1);  // a wait leaving a group in flight (profiled: recorded)
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
  for (const std::string arch : {"sm_80", "sm_90"}) {
    std::vector<std::pair<std::string, KernelSource>> sources;
    for (bool bulk : {false, true}) {
      if (bulk && arch == "sm_80") continue;
      const Kernel kernel = WarpSpecializedConstructs(bulk);
      for (bool profiled : {false, true}) {
        ProfileOptions options;
        options.enabled = profiled;
        options.unit = UnitSpec::Warp();
        absl::StatusOr<KernelSource> source = EmitKernel(kernel, options);
        ASSERT_THAT(source, IsOk());
        sources.emplace_back(absl::StrCat(kernel.name, profiled ? " profiled " : " ", arch),
                             *std::move(source));
      }
    }
    const std::vector<NvrtcBatchResult> results = CompileAll(sources, arch);
    ASSERT_EQ(results.size(), sources.size());
    for (size_t i = 0; i < sources.size(); ++i) {
      SCOPED_TRACE(sources[i].first);
      ExpectCleanCompile(results[i], sources[i].second.source, arch);
      EXPECT_THAT(results[i].ptx, HasSubstr("bar.sync "));
      EXPECT_THAT(results[i].ptx, HasSubstr("bar.arrive "));
      if (arch == "sm_90") {
        EXPECT_THAT(results[i].ptx, HasSubstr("fence.mbarrier_init.release.cluster"));
      }
    }
  }
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const auto& [example, arch] = info.param;
  return absl::StrCat(ExampleName(example), "_", arch);
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (Example example :
       {Example::kTiledGemm, Example::kPipeline, Example::kReduction,
        Example::kPipelinePersistentDelays, Example::kPipelineBulk,
        Example::kPipelineBulkPersistentDelays}) {
    for (const char* arch : {"sm_80", "sm_90"}) {
      if (NeedsSm90(example) && std::string(arch) == "sm_80") continue;
      cases.emplace_back(example, arch);
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
  std::vector<std::pair<std::string, KernelSource>> sources;
  for (bool profiled : {false, true}) {
    ProfileOptions options;
    options.enabled = profiled;
    options.unit = UnitSpec::Warp();
    options.policy = {true, true, true, true};
    absl::StatusOr<KernelSource> source = EmitKernel(*kernel, options);
    ASSERT_THAT(source, IsOk());
    sources.emplace_back(profiled ? "everything profiled" : "everything", *std::move(source));
  }
  for (const std::string arch : {"sm_80", "sm_90"}) {
    const std::vector<NvrtcBatchResult> results = CompileAll(sources, arch);
    ASSERT_EQ(results.size(), sources.size());
    for (size_t i = 0; i < sources.size(); ++i) {
      SCOPED_TRACE(absl::StrCat(sources[i].first, " ", arch));
      ExpectCleanCompile(results[i], sources[i].second.source, arch);
    }
  }
}

}  // namespace
}  // namespace warptrace
