// Writes a synthesized trace buffer (tests/profiler/buffer_fixture.h) as a saved trace,
// PREFIX.bin + PREFIX.json, for timing `warptrace dump` on a large input:
//
//   bazel build -c opt //tests/profiler/cli:make_synthetic_trace
//   bazel-bin/tests/profiler/cli/make_synthetic_trace /tmp/big 20000000
//   warptrace dump --input=/tmp/big --output=/tmp/big.pftrace
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "profiler/imports/sidecar.h"
#include "tests/profiler/buffer_fixture.h"

namespace {

absl::Status Run(const std::string& prefix, uint64_t events) {
  ASSIGN_OR_RETURN(warptrace::testing::SyntheticBuffer buffer,
                   warptrace::testing::MakeSyntheticBuffer(events));
  RETURN_IF_ERROR(warptrace::SaveTrace(prefix, buffer.layout, buffer.words));
  std::printf("%s.bin, %s.json: %llu events\n", prefix.c_str(), prefix.c_str(),
              static_cast<unsigned long long>(buffer.events));
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PREFIX EVENTS\n", argv[0]);
    return 2;
  }
  const absl::Status status = Run(argv[1], std::strtoull(argv[2], nullptr, 10));
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
