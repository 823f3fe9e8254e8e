// Test-only: builds valid Timelines of any size directly (no buffer, no decode), for the
// Chrome trace and summary tests and the dump benchmark.
//
//   Timeline t = SyntheticTimeline({.blocks = 64, .units_per_block = 2, .iterations = 100});
//
// Every unit runs on SM (block % num_sms) and holds one "kernel" slice (depth 0) around
// `iterations` "mainloop" slices (depth 1), each around a "load" and an "mma" slice
// (depth 2): 2 * (1 + 3 * iterations) events per unit. Times are deterministic and vary per
// unit and iteration so durations and timestamps are not all alike.
#ifndef WARPTRACE_TESTS_PROFILER_TIMELINE_FIXTURE_H_
#define WARPTRACE_TESTS_PROFILER_TIMELINE_FIXTURE_H_

#include <cstdint>

#include "profiler/timeline/timeline_types.h"

namespace warptrace::testing {

struct SyntheticTimelineSpec {
  uint32_t blocks = 4;
  uint32_t units_per_block = 2;  // warpgroups: the block is 128 * units_per_block threads
  uint32_t iterations = 3;
  uint32_t num_sms = 132;
  int64_t origin_ns = 1'700'000'000'000'000'123;  // an absolute globaltimer value
};

// Events per unit for `spec`: 2 * (1 + 3 * iterations).
uint64_t SyntheticEventsPerUnit(const SyntheticTimelineSpec& spec);

Timeline SyntheticTimeline(const SyntheticTimelineSpec& spec);

// A spec whose timeline holds about `events` events (at least one unit), split into units of
// about 200 events on a grid of warpgroups.
SyntheticTimelineSpec SpecForEvents(uint64_t events);

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_PROFILER_TIMELINE_FIXTURE_H_
