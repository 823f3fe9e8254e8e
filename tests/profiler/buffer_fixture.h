// Test-only: a synthesized raw trace buffer (profiler/testing/trace_synthesizer.h) shaped
// like timeline_fixture.h's Timelines, for the dump benchmark and the CLI tests.
//
//   ASSIGN_OR_RETURN(SyntheticBuffer buffer, MakeSyntheticBuffer(/*events=*/1'000'000));
//   ASSIGN_OR_RETURN(DecodedTrace decoded, Decode(buffer.layout, buffer.words));
//
// Every unit (a warpgroup, two per block) runs kernel { 33 x mainloop { load, mma } }:
// 200 events, about 31 us at 1.5 GHz (long enough to calibrate its clock). SM ids cycle
// over 132 SMs; the clock starts near 2^32 so it wraps inside the first units.
#ifndef WARPTRACE_TESTS_PROFILER_BUFFER_FIXTURE_H_
#define WARPTRACE_TESTS_PROFILER_BUFFER_FIXTURE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "format/layout.h"

namespace warptrace::testing {

inline constexpr uint32_t kSyntheticEventsPerUnit = 200;

struct SyntheticBuffer {
  TraceLayout layout;
  std::vector<uint32_t> words;
  uint64_t events = 0;  // events in the buffer
};

// About `events` events (at least one block of two units). Errors are the synthesizer's.
absl::StatusOr<SyntheticBuffer> MakeSyntheticBuffer(uint64_t events);

}  // namespace warptrace::testing

#endif  // WARPTRACE_TESTS_PROFILER_BUFFER_FIXTURE_H_
