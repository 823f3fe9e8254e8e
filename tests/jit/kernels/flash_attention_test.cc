#include "jit/kernels/flash_attention.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/plan/record_plan.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::IsOkAndHolds;
using ::warptrace::testing::StatusIs;

// Slots per record site, derived by hand (payload events take 2 slots): the kernel span 2,
// a region 2, a phase wait 3 (enter without a payload + exit with one, trace version 4), an
// arrival 2, an async copy (TMA box) 2 (its issue with a payload: trace version 5 derives
// its completion from the waits on its phase), a wgmma
// group 2 (commit + retire, numbered by order: no payload), a named barrier sync with a wait
// record 2 (enter + exit, no payload); a named barrier arrive records nothing.
constexpr uint64_t kKernel = 2, kRegion = 2, kWait = 3, kArrive = 2, kCopy = 2, kMma = 2,
                   kTurn = 2;

// Warpgroup units: the producer (unit 0) issues every copy and arrival of its role.
// With --overlap (a wait leaving a wgmma group in flight) the wgmma groups' ends are derived
// at their waits (trace version 5): every unit records a wait(0) before the exit, 2 slots.
uint64_t ProducerEvents(uint64_t boxes_per_tile, uint64_t kv_tiles, bool overlap = false) {
  const uint64_t q = kRegion + boxes_per_tile * kCopy + kArrive;
  const uint64_t per_tile = 2 * (kWait + kRegion + boxes_per_tile * kCopy + kArrive);
  return kKernel + q + kv_tiles * per_tile + (overlap ? 2 : 0);
}

// A consumer: the first lap's 2 x 2 empty arrivals, the wait for Q, per KV tile the waits on
// k_full and v_full, the qk and pv groups, the arrivals on k_empty and v_empty, the softmax
// region (plus, with --overlap, a rescale region), with --pingpong a turn per group issue
// (overlap: per issue of qk + pv together); the epilogue.
uint64_t ConsumerEvents(uint64_t kv_tiles, bool pingpong, bool overlap) {
  uint64_t events = kKernel + 2 * 2 * kArrive + kWait + kRegion;
  const uint64_t per_tile = 2 * kWait + 2 * kMma + 2 * kArrive + kRegion;
  events += kv_tiles * per_tile;
  if (overlap) events += kv_tiles * kRegion;  // rescale
  // --overlap: the 2 x kv_tiles groups' ends derived at their 2 x kv_tiles waits (trace
  // version 5: a group records its commit alone, 1 slot; a wait 2) and the exit's wait(0).
  if (overlap) events = events - 2 * kv_tiles * kMma + 2 * kv_tiles * (1 + 2) + 2;
  if (pingpong) events += (overlap ? kv_tiles + 1 : 2 * kv_tiles) * kTurn;
  return events;
}

TEST(FlashAttentionTest, ShapeGridBarriersAndSharedMemory) {
  FlashAttentionShape shape;  // batch 1, heads 2, seq 256, head_dim 64
  shape.batch = 3;
  absl::StatusOr<Kernel> kernel = FlashAttention(shape);
  ASSERT_THAT(kernel, IsOk());
  EXPECT_EQ(kernel->block, (Dim3{384, 1, 1}));
  EXPECT_EQ(kernel->grid, (Dim3{2, 2, 3}));
  // Q 128 x 64, 2 stages of K and V 128 x 64, bf16, + 1024 alignment slack.
  EXPECT_EQ(kernel->dynamic_shared.bytes, (128u + 4 * 128) * 64 * 2 + 1024);
  shape.head_dim = 128;
  EXPECT_EQ(FlashAttentionSharedBytes(shape), (128u + 4 * 128) * 128 * 2 + 1024);
  ASSERT_EQ(kernel->phase_barriers.size(), 5u);
  EXPECT_EQ(kernel->phase_barriers[0].arrivals, 1u);    // q_full: the producer's arrive
  EXPECT_EQ(kernel->phase_barriers[1].arrivals, 1u);    // k_full
  EXPECT_EQ(kernel->phase_barriers[2].arrivals, 1u);    // v_full
  EXPECT_EQ(kernel->phase_barriers[3].arrivals, 256u);  // k_empty: both consumers
  EXPECT_EQ(kernel->phase_barriers[4].arrivals, 256u);  // v_empty
}

TEST(FlashAttentionTest, PlanCountsAreExactForEveryVariant) {
  for (uint32_t head_dim : {64u, 128u}) {
    for (bool pingpong : {false, true}) {
      for (bool overlap : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "head_dim " << head_dim << " pingpong "
                                          << pingpong << " overlap " << overlap);
        FlashAttentionShape shape;
        shape.seq = 384;  // 3 KV tiles
        shape.head_dim = head_dim;
        shape.pingpong = pingpong;
        shape.overlap = overlap;
        absl::StatusOr<Kernel> kernel = FlashAttention(shape);
        ASSERT_THAT(kernel, IsOk());
        absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, ProfileOptions{});
        ASSERT_THAT(plan, IsOk());
        EXPECT_FALSE(plan->per_block());
        EXPECT_THAT(plan->ExactEventsForUnit(0), IsOkAndHolds(ProducerEvents(head_dim / 64, 3, overlap)));
        const uint64_t consumer = ConsumerEvents(3, pingpong, overlap);
        EXPECT_THAT(plan->ExactEventsForUnit(1), IsOkAndHolds(consumer));
        // Ping-pong: consumer 1 passes the first turn with a bar.arrive (no record).
        EXPECT_THAT(plan->ExactEventsForUnit(2), IsOkAndHolds(consumer));
      }
    }
  }
}

TEST(FlashAttentionTest, CausalBlocksArePlannedWithTheirOwnKvTileCounts) {
  for (bool overlap : {false, true}) {
    SCOPED_TRACE(overlap ? "overlap" : "plain");
    FlashAttentionShape shape;
    shape.seq = 384;
    shape.causal = true;
    shape.overlap = overlap;
    shape.pingpong = true;
    absl::StatusOr<Kernel> kernel = FlashAttention(shape);
    ASSERT_THAT(kernel, IsOk());
    absl::StatusOr<RecordPlan> plan = RecordPlan::Create(*kernel, ProfileOptions{});
    ASSERT_THAT(plan, IsOk());
    EXPECT_TRUE(plan->per_block());
    for (uint32_t x = 0; x < 3; ++x) {
      EXPECT_EQ(FlashAttentionKvTiles(shape, x), x + 1);
      for (uint32_t head = 0; head < 2; ++head) {
        const uint32_t block = head * 3 + x;  // blockIdx.x fastest
        EXPECT_THAT(plan->ExactEventsForBlockUnit(block, 0),
                    IsOkAndHolds(ProducerEvents(1, x + 1, overlap)))
            << "block " << block;
        EXPECT_THAT(plan->ExactEventsForBlockUnit(block, 1),
                    IsOkAndHolds(ConsumerEvents(x + 1, true, overlap)))
            << "block " << block;
      }
    }
  }
}

TEST(FlashAttentionTest, DelaysAddBusyWorkToLoadsAndSoftmax) {
  FlashAttentionShape shape;
  shape.producer_delay = 1234;
  shape.consumer_delay = 5678;
  absl::StatusOr<KernelBuilder> builder = FlashAttentionBuilder(shape);
  ASSERT_THAT(builder, IsOk());
  absl::StatusOr<Kernel> kernel = builder->Build();
  ASSERT_THAT(kernel, IsOk());
  absl::StatusOr<Kernel> plain = FlashAttention(FlashAttentionShape{});
  ASSERT_THAT(plain, IsOk());
  absl::StatusOr<RecordPlan> delayed_plan = RecordPlan::Create(*kernel, ProfileOptions{});
  absl::StatusOr<RecordPlan> plain_plan = RecordPlan::Create(*plain, ProfileOptions{});
  ASSERT_THAT(delayed_plan, IsOk());
  ASSERT_THAT(plain_plan, IsOk());
  // The delays are busy work, not record sites.
  EXPECT_EQ(delayed_plan->ExactEventsForUnit(1).value_or(0),
            plain_plan->ExactEventsForUnit(1).value_or(1));
}

TEST(FlashAttentionTest, RejectsBadHeadDimSequenceAndGrid) {
  FlashAttentionShape shape;
  shape.head_dim = 96;
  EXPECT_THAT(FlashAttention(shape).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("head_dim=96; use 64 or 128")));
  shape.head_dim = 64;
  shape.seq = 200;
  EXPECT_THAT(FlashAttention(shape).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("seq=200 must be a positive multiple of 128")));
  shape.seq = 128;
  shape.heads = 0;
  EXPECT_THAT(FlashAttention(shape).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("heads=0")));
}

}  // namespace
}  // namespace warptrace
