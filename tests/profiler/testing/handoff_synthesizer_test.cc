#include "profiler/testing/handoff_synthesizer.h"

#include <cstdint>
#include <vector>

#include "format/layout.h"
#include "format/trace_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/trace/decode.h"
#include "tests/status_matchers.h"

namespace warptrace::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(HandoffSynthesizerTest, WritesAProducerAndAConsumerPerBlockWithEveryHandoffKind) {
  HandoffSpec spec;
  spec.blocks = 3;
  spec.stages = 2;
  spec.iterations = 5;
  absl::StatusOr<HandoffTrace> trace = SynthesizeHandoffs(spec);
  ASSERT_THAT(trace, IsOk());
  EXPECT_THAT(ValidateLayout(trace->layout), IsOk());
  ASSERT_THAT(trace->layout.barriers, SizeIs(4));
  EXPECT_EQ(trace->layout.barriers[1].name, "full[1]");
  EXPECT_EQ(trace->layout.barriers[2].name, "empty[0]");
  EXPECT_EQ(trace->layout.barriers[2].arrivals_per_phase, 1u);
  // 5 full waits + 3 empty waits (iterations 2..4) released; 5 copies.
  EXPECT_EQ(trace->arrival_links_per_block, 8u);
  EXPECT_EQ(trace->copy_links_per_block, 5u);
  absl::StatusOr<DecodedTrace> decoded = Decode(trace->layout, trace->words);
  ASSERT_THAT(decoded, IsOk());
  ASSERT_THAT(decoded->records, SizeIs(6));
  for (const DecodedRecord& r : decoded->records) {
    EXPECT_TRUE(r.complete());
    EXPECT_EQ(r.version, abi::kTraceVersion);
    EXPECT_EQ(r.dropped(), 0u);
    // Count each kind of event, payload slots stepped over.
    uint32_t arrivals = 0, waits = 0, copies = 0;
    for (uint32_t i = 0; i < r.events.size(); i = r.NextEvent(i)) {
      const uint32_t site = r.SiteOf(r.events[i].tag);
      const bool exit = abi::TagIsExit(r.events[i].tag);
      if (trace->layout.sites[site].kind == SiteKind::kBarrierArrive) ++arrivals;
      if (trace->layout.sites[site].kind == SiteKind::kPhaseWait && exit) ++waits;
      if (trace->layout.sites[site].kind == SiteKind::kAsyncCopy && !exit) ++copies;
      if (SiteKindHasPayload(trace->layout.sites[site].kind)) {
        EXPECT_NE(r.PayloadOf(i), nullptr) << "record " << r.record_index << " slot " << i;
      }
    }
    EXPECT_EQ(arrivals, 5u);
    EXPECT_EQ(waits, r.unit_index == 0 ? 3u : 5u);
    EXPECT_EQ(copies, r.unit_index == 0 ? 5u : 0u);
  }
}

TEST(HandoffSynthesizerTest, RejectsAnEmptyPipeline) {
  HandoffSpec spec;
  spec.stages = 0;
  EXPECT_THAT(SynthesizeHandoffs(spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("stages")));
}

}  // namespace
}  // namespace warptrace::testing
