// Test-only: writes the saved traces tests/python/warptrace_test.py reads, as PREFIX.bin +
// PREFIX.json (sidecar.h), into DIR:
//   write_test_traces DIR
//     DIR/clean            tests/profiler/buffer_fixture.h's buffer, 2000 events
//     DIR/clean_large      the same shape, 4000 events (the other side of a diff)
//     DIR/big              about 2,000,000 events (the no-copy check)
//     DIR/pipeline         a producer-bound pipeline with hand-offs (pipeline_synthesizer.h)
//     DIR/corrupt_<name>   `clean` with one synthesizer corruption (trace_synthesizer.h) on
//                          record 2, for each corruption that applies to it
// and DIR/corruptions.txt, one <name> per line.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "profiler/imports/sidecar.h"
#include "profiler/testing/pipeline_synthesizer.h"
#include "profiler/testing/trace_synthesizer.h"
#include "tests/profiler/buffer_fixture.h"

namespace warptrace {
namespace {

absl::Status Write(const std::string& dir) {
  ASSIGN_OR_RETURN(testing::SyntheticBuffer clean, testing::MakeSyntheticBuffer(2000));
  RETURN_IF_ERROR(SaveTrace(dir + "/clean", clean.layout, clean.words));
  ASSIGN_OR_RETURN(testing::SyntheticBuffer large, testing::MakeSyntheticBuffer(4000));
  RETURN_IF_ERROR(SaveTrace(dir + "/clean_large", large.layout, large.words));
  // A producer-bound pipeline with its hand-offs (trace version 2), for what_if.
  testing::PipelineSpec pipeline;
  pipeline.handoff_payloads = true;
  ASSIGN_OR_RETURN(testing::PipelineTrace piped, testing::SynthesizePipeline(pipeline));
  RETURN_IF_ERROR(SaveTrace(dir + "/pipeline", piped.layout, piped.words));
  ASSIGN_OR_RETURN(testing::SyntheticBuffer big, testing::MakeSyntheticBuffer(2'000'000));
  RETURN_IF_ERROR(SaveTrace(dir + "/big", big.layout, big.words));
  std::string names;
  for (int k = 0; k <= static_cast<int>(testing::Corruption::kAsyncNeverCompleted); ++k) {
    const auto kind = static_cast<testing::Corruption>(k);
    std::vector<uint32_t> words = clean.words;
    if (!testing::InjectCorruption(clean.layout, {kind, /*record=*/2}, absl::MakeSpan(words))
             .ok()) {
      continue;  // does not apply to this layout (e.g. hand-off corruptions)
    }
    const std::string name = testing::CorruptionName(kind);
    RETURN_IF_ERROR(SaveTrace(absl::StrCat(dir, "/corrupt_", name), clean.layout, words));
    absl::StrAppend(&names, name, "\n");
  }
  return WriteFileAtomically(dir + "/corruptions.txt", names);
}

}  // namespace
}  // namespace warptrace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_test_traces DIR\n");
    return 1;
  }
  const absl::Status status = warptrace::Write(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "write_test_traces: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
