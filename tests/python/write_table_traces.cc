// Test-only: many saved traces for the tables' engines (tests/python/tables_engines_test.py,
// the tables benchmark): producer/consumer pipelines (pipeline_synthesizer.h) over four
// configurations, as DIR/launch_NNNN.bin + .json, and DIR/tags.json mapping each launch
// name to its tags ({"config": ..., "rank": ...}).
//   write_table_traces DIR LAUNCHES [BLOCKS ITERATIONS]   (defaults: 8 blocks, 8 iterations)
// Deterministic: launch i uses configuration i % 4, rank i % 8, jitter seeded with i; every
// 7th launch has one block running twice as slow (a straggler).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "profiler/imports/sidecar.h"
#include "profiler/testing/pipeline_synthesizer.h"

namespace warptrace {
namespace {

struct Config {
  const char* name;
  uint64_t load_cycles;
  uint64_t mma_cycles;
  uint32_t stages;
};
constexpr Config kConfigs[] = {
    {"load300_mma100_s2", 300, 100, 2},  // producer-bound
    {"load100_mma300_s2", 100, 300, 2},  // consumer-bound
    {"load200_mma150_s4", 200, 150, 4},  // producer-bound
    {"load120_mma200_s3", 120, 200, 3},  // consumer-bound
};

absl::Status Write(const std::string& dir, int launches, uint32_t blocks, uint32_t iterations) {
  std::string tags = "{";
  for (int i = 0; i < launches; ++i) {
    const Config& c = kConfigs[i % 4];
    testing::PipelineSpec spec;
    spec.handoff_payloads = true;
    spec.blocks = blocks;
    spec.iterations = iterations;
    spec.stages = c.stages;
    spec.load_cycles = c.load_cycles;
    spec.mma_cycles = c.mma_cycles;
    spec.jitter_cycles = 40;
    spec.seed = static_cast<uint32_t>(i + 1);
    spec.num_virtual_sms = 4;
    if (i % 7 == 0) spec.block_scale[static_cast<uint32_t>(i) % blocks] = 2;
    ASSIGN_OR_RETURN(testing::PipelineTrace trace, testing::SynthesizePipeline(spec));
    const std::string name = absl::StrFormat("launch_%04d", i);
    RETURN_IF_ERROR(SaveTrace(absl::StrCat(dir, "/", name), trace.layout, trace.words));
    absl::StrAppend(&tags, i == 0 ? "" : ",", "\n\"", name, "\": {\"config\": \"", c.name,
                    "\", \"rank\": \"", i % 8, "\"}");
  }
  absl::StrAppend(&tags, "\n}\n");
  return WriteFileAtomically(dir + "/tags.json", tags);
}

}  // namespace
}  // namespace warptrace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 5) {
    std::fprintf(stderr, "usage: write_table_traces DIR LAUNCHES [BLOCKS ITERATIONS]\n");
    return 1;
  }
  const int launches = std::atoi(argv[2]);
  const uint32_t blocks = argc == 5 ? static_cast<uint32_t>(std::atoi(argv[3])) : 8;
  const uint32_t iterations = argc == 5 ? static_cast<uint32_t>(std::atoi(argv[4])) : 8;
  const absl::Status status = warptrace::Write(argv[1], launches, blocks, iterations);
  if (!status.ok()) {
    std::fprintf(stderr, "write_table_traces: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
