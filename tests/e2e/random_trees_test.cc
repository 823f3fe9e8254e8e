// The end-to-end suite's property test (part of run_test's binaries, tests/e2e/BUILD): for
// random builder trees, the events every trace unit records equal what an independent
// simulation of the tree on the unit's recorder thread predicts, and what the plan predicts.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/clock.h"
#include "base/testing/temp_path.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/builder/kernel_builder.h"
#include "jit/cuda/cuda_device.h"
#include "jit/kernels/reduction.h"
#include "jit/kernels/tiled_gemm.h"
#include "jit/kernels/warp_specialized_pipeline.h"
#include "jit/plan/record_plan.h"
#include "jit/run/device_select.h"
#include "jit/run/run.h"
#include "profiler/dump/collector.h"
#include "profiler/imports/sidecar.h"
#include "profiler/trace/links.h"
#include "tests/jit/cuda/cuda_driver_presence.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/status_matchers.h"


namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Field;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

using ::warptrace::testing::E2eTest;

// ---- Property test over random builder trees ------------------------------------------

// A random kernel tree and an independent model of what it does per thread.
struct RandomNode {
  enum Kind { kAdd, kRegion, kLoop, kIf, kReturn } kind = kAdd;
  int value = 0;         // kAdd: acc += value
  std::string name;      // kRegion, kLoop
  int trips = 0;         // kLoop: the trips it runs
  int bound = 0;         // kLoop: > 0: TripCount::UpperBound(bound) (>= trips); 0: Exact
  int modulus = 2, remainder = 0;  // kIf: ((tid >> 5) % modulus) == remainder
  std::vector<RandomNode> body, else_body;
};

struct RandomKernel {
  // Block 1 returns at once (ReturnScope::kBlock, before everything else).
  bool block_return = false;
  std::vector<RandomNode> prologue;          // before the barrier / role split
  bool barrier = false;                      // a __syncthreads between prologue and roles
  BarrierRecord barrier_record = BarrierRecord::kByPolicy;
  std::vector<std::vector<RandomNode>> roles;  // empty: no role split
  RoleAxis role_axis = RoleAxis::kWarp;
  std::vector<int> role_sizes;  // warps or warpgroups per role
  uint32_t threads = 128;
  // A hand-off ring from role "left" to role "right" at the start of the roles: per use u
  // (ring_uses of them), left waits on empty[u % S] (phase u / S), puts a value in stage
  // u % S (a plain store by its first thread, or a cp.async copy from `src`) and arrives on
  // full; right (which arrived on every empty[s] first) waits on full, adds the value to
  // acc and arrives on empty (phase u / S + 1). Arrivals by every thread of the role or by
  // its first thread only.
  bool ring = false;
  int ring_stages = 1;
  int ring_uses = 1;
  bool ring_copy = false;
  // With ring_copy, on the host suite only (a GPU may be older than sm_90): a bulk copy by
  // the producer's first thread completing on full[s], which it arrives on expecting the
  // bytes (so full_by_one).
  bool ring_bulk = false;
  bool full_by_one = false;
  bool empty_by_one = false;
  // Each role first syncs its own threads on a named barrier (id 1 and 2).
  bool named = false;
};

// Whether this binary is the host backend's suite (tests/e2e/BUILD builds one per device).
const bool kHostSuite = std::string(WARPTRACE_STR(WARPTRACE_E2E_DEVICE)) == "host";

// The values `src` holds: src[i] = 3 i + 1.
constexpr int kRingSourceInts = 4 * 5;
int RingSource(int i) { return 3 * i + 1; }

class TreeGen {
 public:
  explicit TreeGen(uint32_t seed) : rng_(seed) {}
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  // `may_return`: no barrier runs after this body, so a thread-scope Return may end it or
  // any body nested in it.
  std::vector<RandomNode> Body(int depth, bool may_return) {
    std::vector<RandomNode> body;
    const int n = Uniform(1, 3);
    for (int i = 0; i < n; ++i) body.push_back(Node(depth, may_return));
    // A Return must be the last thing in its body; never at the top of the kernel body
    // (the whole tree after it would be dead).
    if (may_return && depth > 0 && Uniform(0, 3) == 0) {
      body.emplace_back();
      body.back().kind = RandomNode::kReturn;
    }
    return body;
  }
  RandomNode Node(int depth, bool may_return) {
    RandomNode node;
    const int pick = depth >= 3 ? 0 : Uniform(0, 3);
    node.kind = static_cast<RandomNode::Kind>(pick);
    switch (node.kind) {
      case RandomNode::kAdd:
        node.value = Uniform(1, 9);
        break;
      case RandomNode::kRegion:
        node.name = absl::StrCat("r", next_region_++);
        node.body = Body(depth + 1, may_return);
        break;
      case RandomNode::kLoop:
        node.trips = Uniform(1, 4);
        if (Uniform(0, 1)) node.bound = node.trips + Uniform(0, 2);
        node.name = absl::StrCat("i", next_loop_++);
        node.body = Body(depth + 1, may_return);
        break;
      case RandomNode::kIf:
        node.modulus = Uniform(2, 3);
        node.remainder = Uniform(0, node.modulus - 1);
        node.body = Body(depth + 1, may_return);
        if (Uniform(0, 1)) node.else_body = Body(depth + 1, may_return);
        break;
      case RandomNode::kReturn:
        break;
    }
    return node;
  }
  RandomKernel Kernel() {
    RandomKernel k;
    k.threads = 128 * static_cast<uint32_t>(Uniform(1, 2));
    k.block_return = Uniform(0, 2) == 0;
    k.barrier = Uniform(0, 1) == 1;
    const BarrierRecord records[] = {BarrierRecord::kByPolicy, BarrierRecord::kAlways,
                                     BarrierRecord::kNever};
    k.barrier_record = records[Uniform(0, 2)];
    k.prologue = Body(0, /*may_return=*/!k.barrier);
    if (Uniform(0, 1)) {
      k.role_axis = k.threads == 256 && Uniform(0, 1) ? RoleAxis::kWarpgroup : RoleAxis::kWarp;
      const int groups = static_cast<int>(k.threads / RoleAxisThreads(k.role_axis));
      const int first = Uniform(1, groups - 1);
      k.role_sizes = {first, groups - first};
      k.roles = {Body(1, /*may_return=*/true), Body(1, /*may_return=*/true)};
      // A ring needs every thread to reach the roles: no Return in the prologue, which a
      // barrier before the roles already rules out.
      k.named = k.barrier && Uniform(0, 1) == 1;
      k.ring = k.barrier && Uniform(0, 3) != 0;
      if (k.ring) {
        k.ring_stages = Uniform(1, 3);
        k.ring_uses = Uniform(1, 5);
        k.ring_copy = Uniform(0, 1) == 1;
        k.full_by_one = Uniform(0, 1) == 1;
        k.ring_bulk = k.ring_copy && kHostSuite && Uniform(0, 1) == 1;
        k.full_by_one = k.full_by_one || k.ring_bulk;
        k.empty_by_one = Uniform(0, 1) == 1;
      }
    }
    return k;
  }

 private:
  std::mt19937 rng_;
  int next_region_ = 0;
  int next_loop_ = 0;
};

void Emit(KernelBuilder& b, const std::vector<RandomNode>& body) {
  for (const RandomNode& node : body) {
    switch (node.kind) {
      case RandomNode::kAdd:
        b.Stmt(absl::StrCat("acc += ", node.value, ";"));
        break;
      case RandomNode::kRegion:
        b.Region(node.name, [&] { Emit(b, node.body); });
        break;
      case RandomNode::kLoop:
        b.For(node.name, 0, node.trips,
              node.bound > 0 ? TripCount::UpperBound(node.bound) : TripCount::Exact(node.trips),
              [&] { Emit(b, node.body); });
        break;
      case RandomNode::kIf: {
        const std::string cond =
            absl::StrCat("((threadIdx.x >> 5) % ", node.modulus, "u) == ", node.remainder, "u");
        if (node.else_body.empty()) {
          b.If(cond, [&] { Emit(b, node.body); });
        } else {
          b.If(cond, [&] { Emit(b, node.body); }, [&] { Emit(b, node.else_body); });
        }
        break;
      }
      case RandomNode::kReturn:
        b.Return();
        break;
    }
  }
}

// The ring's builder constructs for role "left" (producer) or "right" (consumer).
void EmitRing(KernelBuilder& b, const RandomKernel& k, bool producer) {
  const std::string stage = absl::StrCat("ru % ", k.ring_stages);
  const std::string phase = absl::StrCat("ru / ", k.ring_stages);
  const int uses = k.ring_uses;
  if (producer) {
    b.For("ru", 0, uses, TripCount::Exact(static_cast<uint64_t>(uses)), [&] {
      b.WaitPhase("empty", stage, phase);
      if (k.ring_bulk) {
        b.ArriveExpectTx("full", stage, phase, 16, ArriveBy::kOneThread);
        AsyncCopySpec copy;
        copy.name = "ring copy";
        copy.dst = absl::StrCat("ring_copy + (", stage, ") * 4");
        copy.src = "src + ru * 4";
        copy.barrier = "full";
        copy.barrier_index = stage;
        copy.barrier_phase = phase;
        b.AsyncCopy(copy);
        return;  // the expect-tx arrival was full's one arrival
      }
      if (k.ring_copy) {
        AsyncCopySpec copy;
        copy.name = "ring copy";
        copy.dst = absl::StrCat("ring_copy + (", stage, ") * 4");
        copy.src = "src + ru * 4";
        b.AsyncCopy(copy);
        b.WaitAsyncCopies();
      } else {
        b.If(absl::StrCat("threadIdx.x == 0u"),
             [&] { b.Stmt(absl::StrCat("ring[", stage, "] = ru + 1;")); });
      }
      b.Arrive("full", stage, phase,
               k.full_by_one ? ArriveBy::kOneThread : ArriveBy::kEveryThread);
    });
    return;
  }
  const ArriveBy by = k.empty_by_one ? ArriveBy::kOneThread : ArriveBy::kEveryThread;
  b.For("rf", 0, k.ring_stages, TripCount::Exact(static_cast<uint64_t>(k.ring_stages)),
        [&] { b.Arrive("empty", "rf", 0, by); });
  b.For("ru", 0, uses, TripCount::Exact(static_cast<uint64_t>(uses)), [&] {
    b.WaitPhase("full", stage, phase);
    b.Stmt(k.ring_copy ? absl::StrCat("acc += ring_copy[(", stage, ") * 4];")
                       : absl::StrCat("acc += ring[", stage, "];"));
    b.Arrive("empty", stage, absl::StrCat(phase, " + 1"), by);
  });
}

// What one thread does, per the model.
struct ThreadModel {
  uint64_t events = 0;    // events it records (as its unit's recorder thread)
  int64_t acc = 0;
  bool returned = false;  // took a Return: writes no output
};

void Simulate(const std::vector<RandomNode>& body, uint32_t tid, const RecordPolicy& policy,
              ThreadModel& m) {
  for (const RandomNode& node : body) {
    if (m.returned) return;
    switch (node.kind) {
      case RandomNode::kAdd:
        m.acc += node.value;
        break;
      case RandomNode::kRegion:
        m.events += 2;  // the exit is recorded even when the body returns
        Simulate(node.body, tid, policy, m);
        break;
      case RandomNode::kLoop:
        for (int i = 0; i < node.trips && !m.returned; ++i) {
          if (policy.loop_iterations) m.events += 2;
          Simulate(node.body, tid, policy, m);
        }
        break;
      case RandomNode::kIf:
        Simulate(((tid >> 5) % node.modulus) == static_cast<uint32_t>(node.remainder)
                     ? node.body
                     : node.else_body,
                 tid, policy, m);
        break;
      case RandomNode::kReturn:
        m.returned = true;
        break;
    }
  }
}

// The ring, per thread: payload events take 2 slots, and a wait is 3 (its enter has no
// payload), a bulk copy 2 (its begin with a payload: trace version 5 derives its end), a
// cp.async copy 2 (numbered by
// order: no payloads; trace version 4); an arrival by one thread is the role's first
// thread's.
void SimulateRing(const RandomKernel& k, uint32_t tid, bool left, const RecordPolicy& policy,
                  ThreadModel& m) {
  const uint32_t right_first =
      static_cast<uint32_t>(k.role_sizes[0]) * RoleAxisThreads(k.role_axis);
  const uint64_t loop = policy.loop_iterations ? 2 : 0;
  const uint64_t handoff = policy.handoffs ? 1 : 0;
  if (left) {
    // A cp.async copy is every producer thread's; a bulk copy its first thread's.
    const bool arrives = !k.full_by_one || tid == 0;
    const bool copies = k.ring_copy && (!k.ring_bulk || tid == 0);
    for (int u = 0; u < k.ring_uses; ++u) {
      const uint64_t copy = copies ? 2 : 0;  // bulk: begin + payload; cp.async: begin, end
      m.events += loop + handoff * (3 + copy + (arrives ? 2 : 0));
    }
    return;
  }
  const bool arrives = !k.empty_by_one || tid == right_first;
  m.events += static_cast<uint64_t>(k.ring_stages) * (loop + handoff * (arrives ? 2 : 0));
  for (int u = 0; u < k.ring_uses; ++u) {
    m.events += loop + handoff * (3 + (arrives ? 2 : 0));
    m.acc += k.ring_copy ? RingSource(u * 4) : u + 1;
  }
}

ThreadModel SimulateKernel(const RandomKernel& k, uint32_t block, uint32_t tid,
                           const RecordPolicy& policy) {
  ThreadModel m;
  m.events = policy.kernel ? 2 : 0;
  if (k.block_return && block == 1) {
    m.returned = true;
    return m;
  }
  Simulate(k.prologue, tid, policy, m);
  if (m.returned) return m;
  if (k.barrier) {
    const bool recorded = k.barrier_record == BarrierRecord::kAlways ||
                          (k.barrier_record == BarrierRecord::kByPolicy && policy.barrier_waits);
    if (recorded) m.events += 2;
  }
  if (!k.roles.empty()) {
    const uint32_t group = tid / RoleAxisThreads(k.role_axis);
    const bool left = group < static_cast<uint32_t>(k.role_sizes[0]);
    if (k.named && policy.barrier_waits) m.events += 2;  // the role's named barrier sync
    if (k.ring) SimulateRing(k, tid, left, policy, m);
    Simulate(left ? k.roles[0] : k.roles[1], tid, policy, m);
  }
  return m;
}

// A random trace unit for a block of `threads`: warp, warpgroup, block, or a custom subset
// of whole warps with its recorder anywhere inside.
UnitSpec RandomUnit(TreeGen& gen, uint32_t threads) {
  switch (gen.Uniform(0, 3)) {
    case 0:
      return UnitSpec::Warp();
    case 1:
      return UnitSpec::Warpgroup();
    case 2:
      return UnitSpec::Block();
    default: {
      const int warps = static_cast<int>(threads / 32);
      const int first = gen.Uniform(0, warps - 1);
      const int count = gen.Uniform(1, warps - first);
      return UnitSpec::Custom(static_cast<uint32_t>(first * 32), static_cast<uint32_t>(count * 32),
                              static_cast<uint32_t>(gen.Uniform(0, count * 32 - 1)));
    }
  }
}

// The thread that records trace unit `unit` of a block.
uint32_t RecorderThread(const TraceLayout& layout, uint32_t unit) {
  if (layout.unit.kind == UnitKind::kCustom) {
    return layout.unit.first_thread + layout.unit.recorder_offset;
  }
  return unit * UnitThreads(layout);
}

// One random case: the kernel's model and how it is built, profiled and launched, all drawn
// from `seed` (in this order, so a seed always gives the same case).
struct RandomCase {
  RandomKernel model;
  RecordPolicy policy;
  UnitSpec unit;
  Placement placement = Placement::kGlobal;
  uint32_t blocks = 1;
};

RandomCase MakeRandomCase(uint32_t seed) {
  TreeGen gen(seed);
  RandomCase c;
  c.model = gen.Kernel();
  c.policy.loop_iterations = gen.Uniform(0, 1) == 1;
  c.policy.barrier_waits = gen.Uniform(0, 1) == 1;
  c.unit = RandomUnit(gen, c.model.threads);
  c.placement = gen.Uniform(0, 1) ? Placement::kShared : Placement::kGlobal;
  c.blocks = static_cast<uint32_t>(gen.Uniform(1, 3));
  c.policy.handoffs = gen.Uniform(0, 3) != 0;
  return c;
}

// The seeds the suite runs (each its own test, so shards share them out).
constexpr uint32_t kRandomSeeds = 24;

// What the seeds' trees cover, so a generator change cannot quietly stop covering a construct.
TEST(RandomTreesTest, TheSeedsCoverEveryConstructTheGeneratorCanDraw) {
  int returns = 0, block_returns = 0, upper_bounds = 0, warpgroup_roles = 0, custom_units = 0;
  int always = 0, never = 0;
  int rings = 0, ring_copies = 0, ring_one_thread = 0, ring_every_thread = 0, named = 0;
  int ring_bulk = 0;
  std::function<void(const std::vector<RandomNode>&)> count = [&](const auto& body) {
    for (const RandomNode& node : body) {
      returns += node.kind == RandomNode::kReturn;
      upper_bounds += node.kind == RandomNode::kLoop && node.bound > 0;
      count(node.body);
      count(node.else_body);
    }
  };
  for (uint32_t seed = 1; seed <= kRandomSeeds; ++seed) {
    const RandomCase c = MakeRandomCase(seed);
    const RandomKernel& model = c.model;
    count(model.prologue);
    for (const auto& role : model.roles) count(role);
    block_returns += model.block_return && c.blocks > 1;
    warpgroup_roles += !model.roles.empty() && model.role_axis == RoleAxis::kWarpgroup;
    custom_units += c.unit.kind == UnitKind::kCustom;
    always += model.barrier && model.barrier_record == BarrierRecord::kAlways;
    never += model.barrier && model.barrier_record == BarrierRecord::kNever;
    rings += model.ring;
    named += model.named;
    ring_copies += model.ring && model.ring_copy;
    ring_bulk += model.ring && model.ring_bulk;
    ring_one_thread += model.ring && (model.full_by_one || model.empty_by_one);
    ring_every_thread += model.ring && (!model.full_by_one || !model.empty_by_one);
  }
  EXPECT_GT(returns, 0);
  EXPECT_GT(block_returns, 0);
  EXPECT_GT(upper_bounds, 0);
  EXPECT_GT(warpgroup_roles, 0);
  EXPECT_GT(custom_units, 0);
  EXPECT_GT(always, 0);
  EXPECT_GT(never, 0);
  EXPECT_GT(rings, 0);
  EXPECT_GT(ring_copies, 0);
  EXPECT_GT(ring_one_thread, 0);
  EXPECT_GT(ring_every_thread, 0);
  EXPECT_GT(named, 0);
  if (kHostSuite) {
    EXPECT_GT(ring_bulk, 0);
  }
}

class RandomTreeTest : public E2eTest, public ::testing::WithParamInterface<uint32_t> {};

// Each seed's tree, built, run and decoded: every unit recorded exactly the events the
// independent model (SimulateKernel) predicts, and every thread computed what it predicts.
TEST_P(RandomTreeTest, RecordsExactlyWhatAnIndependentModelPredictsPerUnit) {
  const uint32_t seed = GetParam();
  const RandomCase c = MakeRandomCase(seed);
  const RandomKernel& model = c.model;
  const RecordPolicy& policy = c.policy;
  const UnitSpec& unit = c.unit;
  const Placement placement = c.placement;
  const uint32_t blocks = c.blocks;
  KernelBuilder b(absl::StrCat("random_tree_", seed));
  b.Param("int*", "out").Param("const int*", "src");
  b.Grid({blocks, 1, 1}).Block({model.threads, 1, 1});
  if (model.ring) {
    const uint32_t stages = static_cast<uint32_t>(model.ring_stages);
    const uint32_t group = RoleAxisThreads(model.role_axis);
    b.PhaseBarriers("full", stages,
                    model.full_by_one ? 1 : static_cast<uint32_t>(model.role_sizes[0]) * group);
    b.PhaseBarriers("empty", stages,
                    model.empty_by_one ? 1 : static_cast<uint32_t>(model.role_sizes[1]) * group);
    b.SharedArray("int", "ring", stages);
    // Dynamic shared memory is 16-byte aligned, as cp.async needs.
    if (model.ring_copy) b.DynamicShared("int", "ring_copy", stages * 16);
  }
  b.Stmt("int acc = 0;");
  if (model.block_return) b.If("blockIdx.x == 1u", [&] { b.Return(ReturnScope::kBlock); });
  Emit(b, model.prologue);
  if (model.barrier) b.Barrier("sync", model.barrier_record);
  if (!model.roles.empty()) {
    // Role 0 ("left") produces into the ring, role 1 ("right") consumes; each syncs on its
    // own named barrier (ids 1 and 2).
    auto role = [&](int i, const std::string& name) {
      const uint32_t size = static_cast<uint32_t>(model.role_sizes[i]);
      return Role{name, size, "", [&, i, size, name] {
                    if (model.named) {
                      b.NamedBarrierSync(name + " sync", static_cast<uint32_t>(i + 1),
                                         size * RoleAxisThreads(model.role_axis));
                    }
                    if (model.ring) EmitRing(b, model, /*producer=*/i == 0);
                    Emit(b, model.roles[i]);
                  }};
    };
    b.Roles(model.role_axis, {role(0, "left"), role(1, "right")});
  }
  b.Stmt("out[blockIdx.x * blockDim.x + threadIdx.x] = acc;");
  absl::StatusOr<Kernel> kernel = b.Build();
  ASSERT_THAT(kernel.status(), IsOk());

  // -1 stays where a thread returned before writing.
  std::vector<int> out(blocks * model.threads, -1);
  std::vector<int> src(kRingSourceInts);
  for (int i = 0; i < kRingSourceInts; ++i) src[i] = RingSource(i);
  std::vector<KernelArg> args = {KernelArg::InOut(absl::MakeSpan(out)),
                                 KernelArg::In(absl::MakeConstSpan(src))};
  RunOptions options;
  options.profile.unit = unit;
  options.profile.placement = placement;
  options.profile.policy = policy;
  absl::StatusOr<RunResult> run = RunKernel(*device_, *kernel, args, options);
  ASSERT_THAT(run.status(), IsOk());
  const Trace& trace = *run->trace;
  ASSERT_TRUE(trace.report.ok());
  ASSERT_EQ(trace.decoded.records.size(), NumRecords(trace.layout));
  uint64_t max_expected = 0;
  for (const DecodedRecord& record : trace.decoded.records) {
    const uint64_t expected =
        SimulateKernel(model, record.block_linear,
                       RecorderThread(trace.layout, record.unit_index), policy)
            .events;
    max_expected = std::max(max_expected, expected);
    EXPECT_EQ(record.attempted, expected)
        << "block " << record.block_linear << " unit " << record.unit_index;
    EXPECT_EQ(record.events.size(), expected);
    EXPECT_TRUE(record.complete());
    const EventRange range = run->plan->EventsForUnit(record.unit_index);
    EXPECT_LE(range.min, expected);
    EXPECT_GE(range.max, expected);
  }
  for (const UnitVerdict& verdict : trace.report.units) {
    EXPECT_EQ(verdict.verdict, Verdict::kComplete) << verdict.reason;
  }
  EXPECT_GE(run->plan->capacity(), max_expected);
  for (uint32_t t = 0; t < blocks * model.threads; ++t) {
    const ThreadModel m = SimulateKernel(model, t / model.threads, t % model.threads, policy);
    ASSERT_EQ(out[t], m.returned ? -1 : m.acc) << "thread " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomTreeTest, ::testing::Range(1u, kRandomSeeds + 1),
                         [](const ::testing::TestParamInfo<uint32_t>& info) {
                           return absl::StrCat("seed_", info.param);
                         });

}  // namespace
}  // namespace warptrace
