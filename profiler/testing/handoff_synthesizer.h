// Test-only: a small warp-specialized trace (trace version 2) with every hand-off kind the
// recorder writes (links.h): barrier arrivals, phase waits and async copies, simulated
// exactly and written by the trace synthesizer (trace_synthesizer.h). The known answer for
// the hand-off verification, the timeline's instants / async spans / flows and the trace
// writers' flow events.
//
// Each block has two warps sharing `stages` buffers guarded by phase barriers full[s]
// (id s) and empty[s] (id stages + s), each completing a phase with 1 recorded arrival.
// Iteration i uses stage s = i % stages, phase k = i / stages:
//   warp 0 (producer): [wait empty[s] phase k-1 (i >= stages)] issue async copy i on
//                      full[s], observe its completion `load_cycles` later, arrive on
//                      full[s] phase k;
//   warp 1 (consumer): wait full[s] phase k, region "mma" (`mma_cycles`), arrive on
//                      empty[s] phase k;
// all inside one "kernel" region per warp. Every stamp comes at least `step_cycles` after
// the previous one of its unit; a wait's release comes `step_cycles` after the later of its
// start and the arrival it waited for. Units of a block share the SM clock (same start
// clock and globaltimer), so the recorded times are the simulated ones.
//
//   HandoffSpec spec;
//   ASSERT_OK_AND_ASSIGN(HandoffTrace t, SynthesizeHandoffs(spec));
//   // t.layout (sites below, barrier table), t.words; per block: t.arrivals, ...
#ifndef WARPTRACE_PROFILER_TESTING_HANDOFF_SYNTHESIZER_H_
#define WARPTRACE_PROFILER_TESTING_HANDOFF_SYNTHESIZER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "format/layout.h"
#include "profiler/testing/trace_synthesizer.h"

namespace warptrace::testing {

// Site ids of the layout.
inline constexpr uint32_t kHandoffKernelSite = 0;      // "kernel" (kKernel)
inline constexpr uint32_t kHandoffArriveFullSite = 1;  // "arrive full" (kBarrierArrive)
inline constexpr uint32_t kHandoffArriveEmptySite = 2; // "arrive empty" (kBarrierArrive)
inline constexpr uint32_t kHandoffWaitFullSite = 3;    // "wait full" (kPhaseWait)
inline constexpr uint32_t kHandoffWaitEmptySite = 4;   // "wait empty" (kPhaseWait)
inline constexpr uint32_t kHandoffCopySite = 5;        // "copy" (kAsyncCopy)
inline constexpr uint32_t kHandoffMmaSite = 6;         // "mma" (kRegion)

struct HandoffSpec {
  uint32_t blocks = 2;
  uint32_t stages = 2;
  uint32_t iterations = 4;
  uint64_t load_cycles = 300;
  uint64_t mma_cycles = 100;
  uint64_t step_cycles = 20;
  bool barrier_table = true;  // fill TraceLayout::barriers (else empty: counts unchecked)
  // Trace version 5's copies on a barrier: the copy site is a TMA load (kTma2d) whose
  // begin carries (full[s], phase) and which records no end; the dump derives it from the
  // consumer's release of that phase. Else each copy records its end after load_cycles.
  bool derived_copy_ends = false;
  SynthOptions synth;         // event_cost_cycles is forced to 0 (steps are simulated)
};

struct HandoffTrace {
  TraceLayout layout;  // grid (blocks,1,1), block 64 threads, warp units
  std::vector<uint32_t> words;
  // Per block (the same in every block): the number of links of each kind.
  uint32_t arrival_links_per_block = 0;  // one per wait (each phase has 1 arrival)
  uint32_t copy_links_per_block = 0;     // one per iteration
};

// InvalidArgument for zero blocks, stages or iterations; the synthesizer's errors.
absl::StatusOr<HandoffTrace> SynthesizeHandoffs(const HandoffSpec& spec);

}  // namespace warptrace::testing

#endif  // WARPTRACE_PROFILER_TESTING_HANDOFF_SYNTHESIZER_H_
