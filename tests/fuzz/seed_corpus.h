// Test-only: the dump fuzzer's seed corpus, built from the trace synthesizer
// (profiler/testing/trace_synthesizer.h) so that the fuzzer starts from buffers the device
// really writes rather than from noise: valid traces of every trace unit kind, placement,
// sampling and clock situation (wraparound, coarse globaltimer, calibration and nominal
// fallback), one buffer per corruption class in strict and allow_truncated mode, a buffer of
// the wrong size, warptrace sidecars, and Mosaic GPU buffers and sidecars (valid,
// overflowed, odd traces_used). Inputs are in dump_fuzz_target.h's format.
//
//   ASSIGN_OR_RETURN(std::vector<Seed> seeds, SeedCorpus());
//   for (const Seed& s : seeds) RETURN_IF_ERROR(RunDumpFuzzInput(AsBytes(s.data)));
//
// Deterministic: the same seeds, byte for byte, on every run. Each seed is under 4 KiB
// (libFuzzer's default -max_len for a corpus of small files).
#ifndef WARPTRACE_TESTS_FUZZ_SEED_CORPUS_H_
#define WARPTRACE_TESTS_FUZZ_SEED_CORPUS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace warptrace::fuzz {

struct Seed {
  std::string name;  // a file name: [a-z0-9_]+
  std::string data;  // the fuzz input
};

// Errors are the synthesizer's or InjectCorruption's (a seed that could not be built).
absl::StatusOr<std::vector<Seed>> SeedCorpus();

}  // namespace warptrace::fuzz

#endif  // WARPTRACE_TESTS_FUZZ_SEED_CORPUS_H_
