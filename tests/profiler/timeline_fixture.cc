#include "tests/profiler/timeline_fixture.h"

#include <algorithm>

namespace warptrace::testing {

uint64_t SyntheticEventsPerUnit(const SyntheticTimelineSpec& spec) {
  return 2 * (1 + 3 * uint64_t{spec.iterations});
}

Timeline SyntheticTimeline(const SyntheticTimelineSpec& spec) {
  Timeline t;
  TraceLayout& layout = t.layout;
  layout.kernel_name = "synthetic_gemm";
  layout.device_name = "synthetic device";
  layout.grid = {spec.blocks, 1, 1};
  layout.block = {128 * spec.units_per_block, 1, 1};
  layout.unit = UnitSpec::Warpgroup();
  layout.capacity = static_cast<uint32_t>(SyntheticEventsPerUnit(spec));
  layout.clock.num_sms = spec.num_sms;
  layout.sites = {{0, "kernel", SiteKind::kKernel, "fixture.cc:1"},
                  {1, "mainloop", SiteKind::kLoopBody, "fixture.cc:2"},
                  {2, "load", SiteKind::kRegion, "fixture.cc:3"},
                  {3, "mma", SiteKind::kRegion, "fixture.cc:4"}};
  t.origin_ns = spec.origin_ns;
  t.clock_note = "calibrated per unit from globaltimer";
  t.units.reserve(uint64_t{spec.blocks} * spec.units_per_block);
  int64_t end = spec.origin_ns;
  for (uint32_t b = 0; b < spec.blocks; ++b) {
    for (uint32_t u = 0; u < spec.units_per_block; ++u) {
      UnitTimeline& unit = t.units.emplace_back();
      unit.record_index = uint64_t{b} * spec.units_per_block + u;
      unit.block_linear = b;
      unit.block_index = {b, 0, 0};
      unit.unit_index = u;
      unit.sm_id = b % spec.num_sms;
      unit.cycles_per_ns = 1.755;
      unit.overhead_cycles = 6;
      unit.events = static_cast<uint32_t>(SyntheticEventsPerUnit(spec));
      unit.start_ns = spec.origin_ns + (b % 7) * 13 + u;
      unit.slices.reserve(1 + 3 * uint64_t{spec.iterations});
      int64_t now = unit.start_ns + 5;
      const size_t kernel_index = unit.slices.size();
      unit.slices.push_back(Slice{0, 0, now, 0, false});
      for (uint32_t i = 0; i < spec.iterations; ++i) {
        const int64_t load = 100 + (b * 31 + u * 17 + i * 7) % 97;
        const int64_t mma = 300 + (b * 13 + u * 5 + i * 11) % 211;
        const int64_t begin = now + 1;
        unit.slices.push_back(Slice{1, 1, begin, begin + 2 + load + mma + 2, false});
        unit.slices.push_back(Slice{2, 2, begin + 1, begin + 1 + load, false});
        unit.slices.push_back(Slice{3, 2, begin + 2 + load, begin + 2 + load + mma, false});
        now = begin + 2 + load + mma + 2;
      }
      unit.slices[kernel_index].end_ns = now + 1;
      unit.end_ns = now + 4;
      end = std::max(end, unit.end_ns);
    }
  }
  t.end_ns = end;
  return t;
}

SyntheticTimelineSpec SpecForEvents(uint64_t events) {
  SyntheticTimelineSpec spec;
  spec.units_per_block = 2;
  spec.iterations = 33;  // 200 events per unit
  const uint64_t units = std::max<uint64_t>(1, events / SyntheticEventsPerUnit(spec));
  spec.blocks = static_cast<uint32_t>(std::max<uint64_t>(1, units / spec.units_per_block));
  return spec;
}

}  // namespace warptrace::testing
