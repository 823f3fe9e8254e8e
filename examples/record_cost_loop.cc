#include "examples/record_cost_loop.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace warptrace::examples {

absl::StatusOr<Kernel> RecordCostLoop(int iterations) {
  if (iterations < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the record cost loop needs at least 1 iteration, not ", iterations));
  }
  KernelBuilder b("record_cost_loop");
  b.Param("unsigned long long*", "cycles").Param("unsigned int*", "sink");
  b.Param("int", "iterations");
  b.Grid({1, 1, 1}).Block({32, 1, 1});
  b.Stmt("unsigned int x = threadIdx.x + 1u;\nconst long long start = clock64();");
  b.For("i", 0, "iterations", TripCount::Exact(static_cast<uint64_t>(iterations)), [&] {
    b.Region("tick", [&] { b.Stmt("x ^= x << 13; x ^= x >> 17; x ^= x << 5;"); });
  });
  b.Stmt(
      "const long long stop = clock64();\n"
      "if (threadIdx.x == 0) cycles[0] = static_cast<unsigned long long>(stop - start);\n"
      "sink[threadIdx.x] = x;");
  return b.Build();
}

}  // namespace warptrace::examples
