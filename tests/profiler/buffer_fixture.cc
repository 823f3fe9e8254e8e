#include "tests/profiler/buffer_fixture.h"

#include <algorithm>
#include <utility>

#include "base/status_macros.h"
#include "profiler/testing/trace_synthesizer.h"

namespace warptrace::testing {

absl::StatusOr<SyntheticBuffer> MakeSyntheticBuffer(uint64_t events) {
  constexpr uint32_t kUnitsPerBlock = 2;
  const uint64_t blocks =
      std::max<uint64_t>(1, events / (uint64_t{kSyntheticEventsPerUnit} * kUnitsPerBlock));
  SyntheticBuffer out;
  TraceLayout& layout = out.layout;
  layout.kernel_name = "synthetic_gemm";
  layout.device_name = "synthetic device (trace_synthesizer)";
  layout.grid = {static_cast<uint32_t>(blocks), 1, 1};
  layout.block = {128 * kUnitsPerBlock, 1, 1};
  layout.unit = UnitSpec::Warpgroup();
  layout.capacity = kSyntheticEventsPerUnit;
  layout.clock.nominal_sm_clock_khz = 1'500'000;
  layout.clock.num_sms = 132;
  layout.sites = {{0, "kernel", SiteKind::kKernel, "fixture.cc:1"},
                  {1, "mainloop", SiteKind::kLoopBody, "fixture.cc:2"},
                  {2, "load", SiteKind::kRegion, "fixture.cc:3"},
                  {3, "mma", SiteKind::kRegion, "fixture.cc:4"}};
  UnitScript body;
  body.Begin(1).Region(2, 300).Work(4).Region(3, 1000).End(1);
  UnitScript script;
  script.Begin(0).Repeat(33, body).Work(5).End(0);
  SynthOptions options;
  options.cycles_per_ns = 1.5;
  options.start_clock = 0xfff00000u;
  options.clock_offset_per_record = 7919;
  options.unit_stagger_ns = 3;
  options.num_virtual_sms = 132;
  TraceSynthesizer synth(layout, options);
  synth.SetScript(script);
  ASSIGN_OR_RETURN(out.words, synth.Build());
  out.events = blocks * kUnitsPerBlock * kSyntheticEventsPerUnit;
  return out;
}

}  // namespace warptrace::testing
