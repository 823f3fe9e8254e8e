#include "profiler/dump/sink.h"

#include <cstdint>

#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace warptrace {
namespace {

using ::warptrace::testing::IsOk;

// A sink that implements only what it must.
class CountingSink : public TraceSink {
 public:
  absl::string_view Name() const override { return "counting"; }
  absl::Status AddUnit(const UnitView& unit) override {
    ++units;
    slices += unit.timeline->slices.size();
    return absl::OkStatus();
  }
  uint64_t units = 0;
  uint64_t slices = 0;
};

TEST(TraceSinkTest, BeginAndEndAcceptByDefault) {
  CountingSink sink;
  TraceLayout layout;
  TraceBegin begin;
  begin.layout = &layout;
  EXPECT_THAT(sink.Begin(begin), IsOk());
  UnitTimeline timeline;
  timeline.slices.resize(3);
  UnitView view;
  view.timeline = &timeline;
  EXPECT_THAT(sink.AddUnit(view), IsOk());
  EXPECT_THAT(sink.End(TraceEnd{}), IsOk());
  EXPECT_EQ(sink.units, 1u);
  EXPECT_EQ(sink.slices, 3u);
  EXPECT_EQ(sink.Name(), "counting");
}

}  // namespace
}  // namespace warptrace
