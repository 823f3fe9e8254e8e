// ValidateLayout (format/layout.h): one test per rule, each with the smallest layout that
// breaks only that rule, plus the layouts at each rule's boundary that must pass.
#include "format/layout.h"

#include <cstdint>
#include <limits>
#include <string>

#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::warptrace::testing::IsOk;
using ::warptrace::testing::StatusIs;

// A valid layout: 4 blocks of 256 threads, warpgroup units, 2 sites.
TraceLayout Valid() {
  TraceLayout layout;
  layout.kernel_name = "k";
  layout.grid = {4, 1, 1};
  layout.block = {256, 1, 1};
  layout.unit = UnitSpec::Warpgroup();
  layout.capacity = 16;
  layout.placement = Placement::kGlobal;
  layout.sites = {{0, "kernel", SiteKind::kKernel, "k.cc:1"},
                  {1, "loop", SiteKind::kLoopBody, "k.cc:2"}};
  return layout;
}

auto Rejected(const std::string& substring) {
  return StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(substring));
}

TEST(ValidateLayoutTest, AcceptsAValidLayoutOfEveryUnitKind) {
  TraceLayout layout = Valid();
  EXPECT_THAT(ValidateLayout(layout), IsOk());
  for (UnitSpec unit : {UnitSpec::Warp(), UnitSpec::Warpgroup(), UnitSpec::Block(),
                        UnitSpec::Custom(128, 128, 127)}) {
    layout.unit = unit;
    EXPECT_THAT(ValidateLayout(layout), IsOk()) << UnitKindName(unit.kind);
  }
}

TEST(ValidateLayoutTest, RejectsAZeroGridOrBlockDimension) {
  TraceLayout layout = Valid();
  layout.grid = {4, 0, 1};
  EXPECT_THAT(ValidateLayout(layout), Rejected("grid (4,0,1) and block (256,1,1)"));
  layout = Valid();
  layout.block = {256, 1, 0};
  EXPECT_THAT(ValidateLayout(layout), Rejected("every dimension >= 1"));
}

TEST(ValidateLayoutTest, RejectsAGridWhoseLinearBlockIdDoesNotFitTheHeader) {
  TraceLayout layout = Valid();
  layout.grid = {65536, 65536, 1};  // 2^32 blocks: one more than a uint32 id can name
  EXPECT_THAT(ValidateLayout(layout),
              Rejected("grid has 4294967296 blocks; the trace header holds a 32-bit"));
  layout.grid = {65535, 65537, 1};  // 2^32 - 1 blocks: the largest that fits
  layout.sample = {0, 1, 1};
  EXPECT_THAT(ValidateLayout(layout), IsOk());
}

TEST(ValidateLayoutTest, RejectsABlockThatIsNotAMultipleOfTheUnitAndSuggestsSizes) {
  TraceLayout layout = Valid();
  layout.block = {200, 1, 1};
  EXPECT_THAT(ValidateLayout(layout),
              Rejected("block size 200 (200,1,1) is not a multiple of the warpgroup size 128: "
                       "the last 72 threads would share no trace; use a block of 128 or 256"));
  layout.unit = UnitSpec::Warp();
  EXPECT_THAT(ValidateLayout(layout),
              Rejected("not a multiple of the warp size 32: the last 8 threads"));
  layout.unit = UnitSpec::Block();  // any block size is one block unit
  EXPECT_THAT(ValidateLayout(layout), IsOk());
}

TEST(ValidateLayoutTest, SuggestsOnlyPositiveBlockSizesForABlockSmallerThanTheUnit) {
  TraceLayout layout = Valid();
  layout.block = {64, 1, 1};
  // Was "use a block of 0 or 128 threads".
  EXPECT_THAT(ValidateLayout(layout),
              Rejected("the last 64 threads would share no trace; use a block of 128 threads, "
                       "or a unit that fits (warp or block; left unset, the trace unit is "
                       "chosen to fit the block)"));
  layout.block = {20, 1, 1};
  layout.unit = UnitSpec::Warp();
  EXPECT_THAT(ValidateLayout(layout),
              Rejected("use a block of 32 threads, or a unit that fits (block;"));
}

TEST(ValidateLayoutTest, RejectsACustomUnitOfZeroThreads) {
  TraceLayout layout = Valid();
  layout.unit = UnitSpec::Custom(0, 0);
  EXPECT_THAT(ValidateLayout(layout), Rejected("custom trace unit has 0 threads"));
}

TEST(ValidateLayoutTest, RejectsACustomUnitReachingPastTheBlock) {
  TraceLayout layout = Valid();
  layout.unit = UnitSpec::Custom(200, 57);
  EXPECT_THAT(ValidateLayout(layout),
              Rejected("covers threads [200, 257) but the block has only 256 threads"));
  layout.unit = UnitSpec::Custom(200, 56);  // [200, 256): exactly the end of the block
  EXPECT_THAT(ValidateLayout(layout), IsOk());
  // first + count wraps a uint32: still outside the block.
  layout.unit = UnitSpec::Custom(std::numeric_limits<uint32_t>::max(), 2);
  EXPECT_THAT(ValidateLayout(layout), Rejected("but the block has only 256 threads"));
}

TEST(ValidateLayoutTest, RejectsACustomRecorderOutsideItsUnit) {
  TraceLayout layout = Valid();
  layout.unit = UnitSpec::Custom(0, 64, 64);
  EXPECT_THAT(ValidateLayout(layout),
              Rejected("recorder offset 64 is outside its 64 threads"));
}

TEST(ValidateLayoutTest, RejectsZeroCapacity) {
  TraceLayout layout = Valid();
  layout.capacity = 0;
  EXPECT_THAT(ValidateLayout(layout), Rejected("capacity is 0 events per trace unit"));
}

TEST(ValidateLayoutTest, RejectsASampleStrideOfZero) {
  TraceLayout layout = Valid();
  layout.sample.stride = 0;
  EXPECT_THAT(ValidateLayout(layout), Rejected("block sample stride is 0; use 1"));
}

TEST(ValidateLayoutTest, RejectsASampleThatSelectsNoBlock) {
  TraceLayout layout = Valid();
  layout.sample = {4, 10, 1};  // the grid has blocks 0..3
  EXPECT_THAT(ValidateLayout(layout),
              Rejected("block sample [4, 10) step 1 selects no block of the 4-block grid"));
  layout.sample = {3, 10, 5};  // block 3 only
  EXPECT_THAT(ValidateLayout(layout), IsOk());
  EXPECT_EQ(SampledBlocks(layout), 1u);
}

TEST(ValidateLayoutTest, RejectsABufferWhoseSizeOverflows) {
  TraceLayout layout = Valid();
  // The largest capacity whose record word count still fits 32 bits passes...
  const uint32_t max_capacity = (std::numeric_limits<uint32_t>::max() - abi::kHeaderWords) / 2;
  layout.capacity = max_capacity;
  EXPECT_THAT(ValidateLayout(layout), IsOk());
  // ...one more does not.
  layout.capacity = max_capacity + 1;
  EXPECT_THAT(ValidateLayout(layout), Rejected("records x"));
  // Many records of a large capacity overflow 64-bit bytes.
  layout = Valid();
  layout.grid = {65535, 65535, 1};
  layout.block = {1024, 1, 1};
  layout.unit = UnitSpec::Warp();  // 32 units per block
  layout.capacity = max_capacity;
  EXPECT_THAT(ValidateLayout(layout),
              Rejected("overflows: reduce the capacity or sample fewer blocks"));
}

// The other site-table rule, more sites than the tag's 30 site-id bits hold
// (abi::kMaxSites), needs 2^30 + 1 SiteInfo entries (tens of GB) to trigger; it is not
// tested here.
TEST(ValidateLayoutTest, RejectsSiteIdsThatAreNotTheirIndex) {
  TraceLayout layout = Valid();
  layout.sites[1].id = 2;
  EXPECT_THAT(ValidateLayout(layout),
              Rejected("site table entry 1 (\"loop\") has id 2; ids must be 0..1 in order"));
  layout.sites = {};
  EXPECT_THAT(ValidateLayout(layout), IsOk()) << "an empty site table is valid";
}

TEST(ValidateLayoutTest, RejectsBarrierIdsThatAreNotTheirIndexOrUnnamedBarriers) {
  TraceLayout layout = Valid();
  layout.barriers = {{0, "full[0]", 1}, {1, "empty[0]", 2}};
  EXPECT_THAT(ValidateLayout(layout), IsOk());
  layout.barriers[1].id = 3;
  EXPECT_THAT(ValidateLayout(layout), Rejected("barrier table entry 1 (\"empty[0]\") has id 3; "
                                               "ids must be 0..1 in order"));
  layout.barriers[1] = {1, "", 0};
  EXPECT_THAT(ValidateLayout(layout), Rejected("barrier table entry 1 has an empty name"));
  layout.barriers.clear();
  EXPECT_THAT(ValidateLayout(layout), IsOk()) << "no barrier table is valid";
}

TEST(LayoutTest, BarrierNameIsTheTableNameOrTheId) {
  TraceLayout layout = Valid();
  layout.barriers = {{0, "full[0]", 1}};
  EXPECT_EQ(BarrierName(layout, 0), "full[0]");
  EXPECT_EQ(BarrierName(layout, 7), "barrier 7");
}

TEST(ValidateLayoutTest, RejectsAutoPlacementInARecordedLayout) {
  TraceLayout layout = Valid();
  layout.placement = Placement::kAuto;
  EXPECT_THAT(ValidateLayout(layout), Rejected("must say which placement ran"));
}

TEST(ValidateLayoutTest, RejectsSharedPlacementOverTheBudgetOnlyWhenABudgetIsGiven) {
  TraceLayout layout = Valid();  // 2 units x 16 events x 8 bytes = 256 bytes per block
  layout.placement = Placement::kShared;
  ASSERT_EQ(SharedBytesPerBlock(layout), 256u);
  EXPECT_THAT(ValidateLayout(layout, /*shared_budget_bytes=*/256), IsOk());
  EXPECT_THAT(ValidateLayout(layout, /*shared_budget_bytes=*/255),
              Rejected("shared placement needs 256 bytes per block (2 units x 16 events x 8 "
                       "bytes) but the shared-memory budget is 255 bytes"));
  EXPECT_THAT(ValidateLayout(layout, /*shared_budget_bytes=*/0), IsOk()) << "0: no budget";
  layout.placement = Placement::kGlobal;
  EXPECT_THAT(ValidateLayout(layout, /*shared_budget_bytes=*/1), IsOk())
      << "the budget is for shared placement only";
}

// The link scope is the block today: a scope's records are one block's units (a custom
// unit: one record per block).
TEST(LinkScopeTest, IsTheBlockWithOneRecordPerUnitOfIt) {
  TraceLayout layout;
  layout.block = {384, 1, 1};
  layout.unit.kind = UnitKind::kWarpgroup;
  EXPECT_EQ(LinkScopeOf(layout), LinkScope::kBlock);
  EXPECT_EQ(RecordsPerLinkScope(layout), 3u);
  layout.unit.kind = UnitKind::kWarp;
  EXPECT_EQ(RecordsPerLinkScope(layout), 12u);
  layout.unit.kind = UnitKind::kCustom;
  EXPECT_EQ(RecordsPerLinkScope(layout), 1u);
}

// With a cluster whose CTAs are consecutive linear blocks, the link scope is the cluster and
// one instance is all units of all its CTAs.
TEST(LinkScopeTest, IsTheClusterWhenItsBlocksAreConsecutive) {
  TraceLayout layout = Valid();
  layout.grid = {4, 2, 1};
  layout.cluster = {2, 1, 1};
  EXPECT_TRUE(ClusterIsContiguous(layout));
  EXPECT_EQ(LinkScopeOf(layout), LinkScope::kCluster);
  EXPECT_EQ(BlocksPerLinkScope(layout), 2u);
  EXPECT_EQ(RecordsPerLinkScope(layout), 4u);  // 2 CTAs x 2 warpgroups
  layout.cluster = {4, 2, 1};
  EXPECT_EQ(LinkScopeOf(layout), LinkScope::kCluster);
  EXPECT_EQ(RecordsPerLinkScope(layout), 16u);
}

// A 1x2 cluster in a wider grid is not consecutive blocks: the link scope is still the
// cluster, an instance the grid rows that hold whole clusters (several clusters, their CTAs
// interleaved), and ClusterLinear tells the clusters apart.
TEST(LinkScopeTest, IsTheClusterTooWhenItsBlocksAreNotConsecutive) {
  TraceLayout layout = Valid();
  layout.grid = {4, 2, 1};
  layout.cluster = {1, 2, 1};
  EXPECT_FALSE(ClusterIsContiguous(layout));
  EXPECT_EQ(LinkScopeOf(layout), LinkScope::kCluster);
  EXPECT_EQ(BlocksPerLinkScope(layout), 8u);   // both rows: 4 clusters
  EXPECT_EQ(RecordsPerLinkScope(layout), 16u);
  EXPECT_EQ(ClusterLinear(layout, {3, 0, 0}), 3u);
  EXPECT_EQ(ClusterLinear(layout, {3, 1, 0}), 3u);
  EXPECT_EQ(ClusterOfBlock(layout, {3, 1, 0}).rank, 1u);
  layout.grid = {4, 4, 1};
  layout.cluster = {2, 2, 1};
  EXPECT_EQ(BlocksPerLinkScope(layout), 8u);   // two rows at a time: 2 clusters
  EXPECT_EQ(ClusterLinear(layout, {3, 3, 0}), 3u);
  EXPECT_EQ(ClusterLinear(layout, {0, 2, 0}), 2u);
  layout.grid = {2, 2, 2};
  layout.cluster = {1, 1, 2};
  EXPECT_EQ(BlocksPerLinkScope(layout), 8u);   // both planes
  layout.cluster = {1, 1, 1};
  EXPECT_EQ(LinkScopeOf(layout), LinkScope::kBlock);
  EXPECT_EQ(BlocksPerLinkScope(layout), 1u);
  EXPECT_EQ(ClusterLinear(layout, {1, 1, 1}), 7u);  // the block's own id
}

TEST(ClusterOfBlockTest, RanksRunXFastest) {
  TraceLayout layout = Valid();
  layout.grid = {4, 4, 1};
  layout.cluster = {2, 2, 1};
  const ClusterPosition p = ClusterOfBlock(layout, {3, 2, 0});
  EXPECT_EQ(p.cluster, (Dim3{1, 1, 0}));
  EXPECT_EQ(p.rank, 1u);
  EXPECT_EQ(ClusterOfBlock(layout, {2, 3, 0}).rank, 2u);
  EXPECT_EQ(UnitTrackName(layout, {3, 3, 0}, 1), "block (3,3,0) cluster (1,1,0) rank 3 warpgroup 1");
  layout.cluster = {1, 1, 1};
  EXPECT_EQ(UnitTrackName(layout, {3, 3, 0}, 1), "block (3,3,0) warpgroup 1");
}

TEST(ValidateLayoutTest, RejectsAClusterThatDoesNotDivideTheGridOrASampleCuttingClusters) {
  TraceLayout layout = Valid();
  layout.cluster = {3, 1, 1};
  EXPECT_THAT(ValidateLayout(layout, 0),
              Rejected("cluster (3,1,1) must have 1 to 16 CTAs and divide the grid (4,1,1)"));
  layout.cluster = {2, 1, 1};
  EXPECT_THAT(ValidateLayout(layout, 0), IsOk());
  layout.sample = {1, 4, 1};
  EXPECT_THAT(ValidateLayout(layout, 0),
              Rejected("block sample [1, 4) step 1 does not take whole clusters of 2 CTAs"));
  layout.sample = {0, 4, 2};
  EXPECT_THAT(ValidateLayout(layout, 0), Rejected("step 2 does not take whole clusters"));
  layout.sample = {2, 4, 1};
  EXPECT_THAT(ValidateLayout(layout, 0), IsOk());
  // A 1x2 cluster spans both rows of a (2,2,1) grid: only the whole grid is whole clusters.
  layout.grid = {2, 2, 1};
  layout.cluster = {1, 2, 1};
  layout.sample = {0, 2, 1};
  EXPECT_THAT(ValidateLayout(layout, 0),
              Rejected("so the sample's step must be 1 and its bounds multiples of 4 blocks"));
  layout.sample = {0, 4, 1};
  EXPECT_THAT(ValidateLayout(layout, 0), IsOk());
}

}  // namespace
}  // namespace warptrace
