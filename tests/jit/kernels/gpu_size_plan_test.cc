// The kernels at the GPU bundle's sizes (GEMMs 4096^3, the persistent grid = an SM count;
// attention sequence 4096, 16 heads, head dim 128) build and plan on the host: running them
// here would take hours, so this checks what a GPU run needs before it launches — the kernel
// builds for the shape, RecordPlan::Create succeeds, the buffer is sized from the plan's
// maximum events per unit (and stays small next to a GPU's memory), and the persistent tile
// loop is planned exactly per block.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <vector>

#include "examples/example_data.h"
#include "gtest/gtest.h"
#include "jit/kernels/ampere_gemm.h"
#include "jit/kernels/flash_attention.h"
#include "jit/kernels/hopper_gemm.h"
#include "jit/plan/record_plan.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::IsOk;

constexpr uint32_t kGpuSize = 4096;
// The SM counts of the GPUs the bundle meets: H100 PCIe 114, H100 SXM / H200 132.
constexpr uint32_t kSmCounts[] = {114, 132};
// A trace buffer the host decodes in seconds and a GPU holds without noticing.
constexpr uint64_t kReasonableBufferBytes = uint64_t{256} << 20;

HopperGemmShape GpuHopperShape() {
  HopperGemmShape shape;
  shape.m = shape.n = shape.k = kGpuSize;
  return shape;
}

// Events per block summed over its units, each exact.
uint64_t ExactBlockEvents(const RecordPlan& plan, uint32_t block) {
  uint64_t sum = 0;
  for (uint32_t unit = 0; unit < plan.units_per_block(); ++unit) {
    absl::StatusOr<uint64_t> events = plan.ExactEventsForBlockUnit(block, unit);
    EXPECT_THAT(events.status(), IsOk()) << "block " << block << " unit " << unit;
    if (events.ok()) sum += *events;
  }
  return sum;
}

TEST(GpuSizePlanTest, HopperCooperative4096CubedPlansEveryTile) {
  const HopperGemmShape shape = GpuHopperShape();
  absl::StatusOr<Kernel> kernel = HopperGemm(shape);
  ASSERT_THAT(kernel.status(), IsOk());
  absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, ProfileOptions{});
  ASSERT_THAT(plan.status(), IsOk());
  // One 128 x 128 tile per block: (4096 / 128)^2 blocks, 3 warpgroups each.
  const TraceLayout& layout = plan->layout();
  EXPECT_EQ(uint64_t{layout.grid.x} * layout.grid.y * layout.grid.z, 32u * 32u);
  EXPECT_EQ(HopperGemmTiles(shape), 32u * 32u);
  EXPECT_EQ(plan->units_per_block(), 3u);
  EXPECT_GT(plan->max_events(), 0u);
  EXPECT_EQ(plan->capacity(), plan->max_events());
  EXPECT_LE(plan->buffer_bytes(), kReasonableBufferBytes) << plan->Explain();
  // Sized from the plan: at least one 8-byte event slot per planned event of every unit.
  EXPECT_GE(plan->buffer_bytes(), uint64_t{32} * 32 * 3 * plan->max_events() * 8);
  std::cout << "hopper cooperative: " << plan->max_events() << " events/unit max, buffer "
            << plan->buffer_bytes() << " bytes\n";

  // The mainloop is recorded per K step: the count grows by the same amount per K step
  // (K 1024 -> 2048 -> 4096 adds 16, then 32 steps of 64).
  std::vector<uint64_t> events;
  for (uint32_t k : {1024u, 2048u, 4096u}) {
    HopperGemmShape smaller = shape;
    smaller.k = k;
    absl::StatusOr<Kernel> kk = HopperGemm(smaller);
    ASSERT_THAT(kk.status(), IsOk());
    absl::StatusOr<RecordPlan> p = RecordPlan::Create(*kk, ProfileOptions{});
    ASSERT_THAT(p.status(), IsOk());
    events.push_back(p->max_events());
  }
  EXPECT_GT(events[1], events[0]);
  EXPECT_EQ(events[2] - events[1], 2 * (events[1] - events[0]));
  EXPECT_EQ(events[2], plan->max_events());
}

TEST(GpuSizePlanTest, HopperPingpongPersistentOneBlockPerSm) {
  for (uint32_t sms : kSmCounts) {
    HopperGemmShape shape = GpuHopperShape();
    shape.pingpong = true;
    shape.persistent_blocks = sms;
    absl::StatusOr<Kernel> kernel = HopperGemm(shape);
    ASSERT_THAT(kernel.status(), IsOk()) << sms << " blocks";
    absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, ProfileOptions{});
    ASSERT_THAT(plan.status(), IsOk()) << sms << " blocks";
    const TraceLayout& layout = plan->layout();
    EXPECT_EQ(uint64_t{layout.grid.x} * layout.grid.y * layout.grid.z, sms);
    EXPECT_LE(plan->buffer_bytes(), kReasonableBufferBytes) << plan->Explain();
    // Ping-pong tiles are 64 x 128: 64 x 32 of them over `sms` blocks. Blocks that loop
    // over more tiles record more: the most loaded block records more than the least one,
    // and the per-block counts are exact for every block of the grid.
    const uint32_t tiles = HopperGemmTiles(shape);
    EXPECT_EQ(tiles, 64u * 32u);
    ASSERT_NE(tiles % sms, 0u) << "the check below needs an uneven split";
    uint64_t most = 0, least = UINT64_MAX;
    for (uint32_t block = 0; block < sms; ++block) {
      const uint64_t events = ExactBlockEvents(*plan, block);
      most = std::max(most, events);
      least = std::min(least, events);
    }
    EXPECT_GT(most, least) << sms << " blocks for " << tiles << " tiles";
    std::cout << "hopper pingpong persistent " << sms << " blocks: " << least << ".." << most
              << " events/block, buffer " << plan->buffer_bytes() << " bytes\n";
    // Past the grid nothing is recorded.
    EXPECT_EQ(plan->EventsForBlockUnit(sms, 0), (EventRange{0, 0}));
  }
}

TEST(GpuSizePlanTest, Ampere4096CubedPlans) {
  for (uint32_t warps : {4u, 8u}) {
    AmpereGemmShape shape;
    shape.m = shape.n = shape.k = kGpuSize;
    shape.warps = warps;
    absl::StatusOr<Kernel> kernel = AmpereGemm(shape);
    ASSERT_THAT(kernel.status(), IsOk()) << warps << " warps";
    absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, ProfileOptions{});
    ASSERT_THAT(plan.status(), IsOk()) << warps << " warps";
    const TraceLayout& layout = plan->layout();
    EXPECT_EQ(uint64_t{layout.grid.x} * layout.grid.y * layout.grid.z, 32u * 32u);
    EXPECT_GT(plan->max_events(), 0u);
    EXPECT_LE(plan->buffer_bytes(), kReasonableBufferBytes) << plan->Explain();
    // The planner bounds the cp.async prefetch's `if (kt + 2 < K / 32)` as data-dependent
    // (it is not: kt is the loop counter), so a unit's count is a range; the buffer is sized
    // from its maximum, which the plan knows exactly.
    const EventRange range = plan->EventsForUnit(0);
    EXPECT_EQ(range.max, plan->max_events());
    EXPECT_GE(plan->buffer_bytes(),
              uint64_t{32} * 32 * plan->units_per_block() * plan->max_events() * 8);
    std::cout << "ampere " << warps << " warps: " << plan->units_per_block() << " units/block, "
              << plan->max_events() << " events/unit max, buffer " << plan->buffer_bytes()
              << " bytes\n";
  }
}

TEST(GpuSizePlanTest, FlashAttentionSeq4096Heads16Plans) {
  for (bool pingpong : {false, true}) {
    FlashAttentionShape shape;
    shape.batch = 1;
    shape.heads = 16;
    shape.seq = 4096;
    shape.head_dim = 128;
    shape.pingpong = pingpong;
    absl::StatusOr<Kernel> kernel = FlashAttention(shape);
    ASSERT_THAT(kernel.status(), IsOk()) << "pingpong " << pingpong;
    absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, ProfileOptions{});
    ASSERT_THAT(plan.status(), IsOk()) << "pingpong " << pingpong;
    // A grid over (query tile, head, batch): 4096 / 128 x 16 x 1.
    const TraceLayout& layout = plan->layout();
    EXPECT_EQ(uint64_t{layout.grid.x} * layout.grid.y * layout.grid.z, 32u * 16u);
    EXPECT_GT(plan->max_events(), 0u);
    EXPECT_LE(plan->buffer_bytes(), kReasonableBufferBytes) << plan->Explain();
    std::cout << "flash_attention" << (pingpong ? " pingpong" : "") << ": "
              << plan->units_per_block() << " units/block, " << plan->max_events()
              << " events/unit max, buffer " << plan->buffer_bytes() << " bytes\n";
  }
  // The example's check: 2^30 / (2 seq head_dim) = 1024 of the 65536 query rows, two in
  // every 128-row query tile of every head.
  const std::vector<uint32_t> rows = examples::CheckedRows(16 * 4096, 4096, 2 * 128);
  ASSERT_EQ(rows.size(), 1024u);
  std::vector<int> per_tile(16 * 4096 / 128);
  for (uint32_t row : rows) ++per_tile[row / 128];
  for (int count : per_tile) EXPECT_EQ(count, 2);
}

// The examples' check at these sizes: the reference of sampled rows, one per band, covering
// every 128-row tile and every offset within a band.
TEST(GpuSizePlanTest, CheckedRowsSampleEveryTileAtGpuSizes) {
  const std::vector<uint32_t> all = examples::CheckedRows(1024, 1024, 1024);
  ASSERT_EQ(all.size(), 1024u);  // 2^30 multiply-adds: every row
  for (uint32_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], i);

  const std::vector<uint32_t> rows = examples::CheckedRows(kGpuSize, kGpuSize, kGpuSize);
  ASSERT_EQ(rows.size(), 64u);  // 2^30 / 4096^2
  std::vector<bool> tile_seen(kGpuSize / 128), offset_seen(64);
  for (size_t j = 0; j < rows.size(); ++j) {
    ASSERT_LT(rows[j], kGpuSize);
    if (j > 0) {
      EXPECT_LT(rows[j - 1], rows[j]);
    }
    EXPECT_EQ(rows[j] / 64, j);  // band j
    tile_seen[rows[j] / 128] = true;
    offset_seen[rows[j] % 64] = true;
  }
  for (bool seen : tile_seen) EXPECT_TRUE(seen);
  for (bool seen : offset_seen) EXPECT_TRUE(seen);
  EXPECT_EQ(examples::CheckedRows(64, 1u << 20, 1u << 20).size(), 1u);  // at least one row
}

}  // namespace
}  // namespace warptrace
