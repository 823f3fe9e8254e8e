// libFuzzer entry point of the dump fuzz target (dump_fuzz_target.h). Under --config=fuzz it
// is linked with libFuzzer's main; otherwise with replay_main.cc, which runs files through it.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "tests/fuzz/dump_fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::Status status =
      warptrace::fuzz::RunDumpFuzzInput(absl::MakeConstSpan(data, size));
  if (!status.ok()) {
    std::fprintf(stderr, "dump_fuzzer: %s\n", status.ToString().c_str());
    std::fflush(stderr);
    __builtin_trap();
  }
  return 0;
}
