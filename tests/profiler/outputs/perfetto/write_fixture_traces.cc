// Test-only: writes the same synthetic buffers as a Chrome trace (PREFIX.json) and a Perfetto
// trace (PREFIX.pftrace) for perfetto_decode_test.py, which reads the Perfetto output back
// with Perfetto's own published schema and compares it with the JSON.
//
//   write_fixture_traces OUT_DIR
//
// Writes OUT_DIR/{plain,anchored,damaged}.{json,pftrace}:
//   plain     the dump benchmark's buffer (tests/profiler/buffer_fixture.h), 40 units
//   anchored  the same with a host-time anchor in the layout
//   damaged   a smaller one with a truncated (no events), a missing, an overflowed
//             and a truncated (last exit lost) unit, dumped
//             with allow_truncated (repaired slices, verdict instants, a "no record" unit)
//   batched   a 100,000-event buffer: several of the Perfetto writer's batches, each
//             clearing the unit sequence (perfetto_writer.h), written with 3 threads
//   handoffs  a producer/consumer pipeline with its hand-offs recorded (trace version 2,
//             profiler/testing/pipeline_synthesizer.h): arrivals, phase waits, async copies;
//             and handoffs.expect.json: {"arrival_flows": N, "async_flows": N, "blocks": N,
//             "stages": N}, what the pipeline's links say the flows must be
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "profiler/dump/dump.h"
#include "profiler/outputs/chrome_trace.h"
#include "profiler/outputs/chrome_trace_sink.h"
#include "profiler/outputs/perfetto/perfetto_sink.h"
#include "profiler/testing/pipeline_synthesizer.h"
#include "profiler/testing/trace_synthesizer.h"
#include "tests/profiler/buffer_fixture.h"

namespace warptrace::testing {
namespace {

// One dump, two sinks: the Chrome trace and the Perfetto trace are written in the same pass.
absl::Status WriteBoth(const std::string& prefix, const TraceLayout& layout,
                       const std::vector<uint32_t>& words, bool allow_truncated,
                       int threads = 1) {
  DumpOptions options;
  options.verify.allow_truncated = allow_truncated;
  options.threads = threads;
  DumpResult result;
  return WriteLargeFileAtomically(prefix + ".json", [&](llvm::raw_ostream& json) {
    return WriteLargeFileAtomically(prefix + ".pftrace", [&](llvm::raw_ostream& pftrace) {
      ChromeTraceSink chrome({}, json);
      PerfettoTraceSink perfetto(pftrace, {.threads = threads});
      TraceSink* sinks[] = {&chrome, &perfetto};
      return DumpTrace(layout, words, options, sinks, result);
    });
  });
}

absl::Status Run(const std::string& dir) {
  ASSIGN_OR_RETURN(SyntheticBuffer plain, MakeSyntheticBuffer(8000));
  RETURN_IF_ERROR(WriteBoth(dir + "/plain", plain.layout, plain.words, false));

  TraceLayout anchored = plain.layout;
  anchored.host_anchor = {true, 5'000'000, 86'400'000'000'000, 1'764'500'000'000'000'000, 120};
  RETURN_IF_ERROR(WriteBoth(dir + "/anchored", anchored, plain.words, false));

  ASSIGN_OR_RETURN(SyntheticBuffer batched, MakeSyntheticBuffer(100'000));
  RETURN_IF_ERROR(WriteBoth(dir + "/batched", batched.layout, batched.words, false, 3));

  ASSIGN_OR_RETURN(SyntheticBuffer damaged, MakeSyntheticBuffer(2000));
  for (const CorruptionSpec& spec :
       {CorruptionSpec{Corruption::kIncompleteUnit, 1}, CorruptionSpec{Corruption::kMissingUnit, 2},
        CorruptionSpec{Corruption::kDroppedEvents, 3, -1, 4},
        CorruptionSpec{Corruption::kUnpairedEvent, 4}}) {
    RETURN_IF_ERROR(InjectCorruption(damaged.layout, spec, absl::MakeSpan(damaged.words)));
  }
  RETURN_IF_ERROR(WriteBoth(dir + "/damaged", damaged.layout, damaged.words, true));

  PipelineSpec spec;
  spec.blocks = 3;
  spec.consumers = 2;
  spec.stages = 2;
  spec.iterations = 6;
  spec.load_cycles = 100;
  spec.mma_cycles = 250;  // consumer-bound: stages fill up
  spec.event_cost_cycles = 5;
  spec.handoff_payloads = true;
  ASSIGN_OR_RETURN(PipelineTrace pipeline, SynthesizePipeline(spec));
  RETURN_IF_ERROR(WriteBoth(dir + "/handoffs", pipeline.layout, pipeline.words, false));
  std::ofstream expect(dir + "/handoffs.expect.json");
  expect << "{\"arrival_flows\": " << pipeline.links.size()
         << ", \"async_flows\": " << spec.blocks * spec.iterations
         << ", \"blocks\": " << spec.blocks << ", \"stages\": " << spec.stages << "}\n";
  return expect.good() ? absl::OkStatus()
                       : absl::InternalError("cannot write handoffs.expect.json");
}

}  // namespace
}  // namespace warptrace::testing

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_fixture_traces OUT_DIR\n");
    return 2;
  }
  const absl::Status status = warptrace::testing::Run(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "write_fixture_traces: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
