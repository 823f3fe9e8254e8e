// bazel run //examples:first_kernel -- [common flags: --device, --unit, --out, --cost, ...]
//
// docs/builder.md's first kernel, verbatim between the readme markers
// (tests/examples/readme_test.cc checks that docs/builder.md quotes exactly this function,
// and //tests/docs:doc_blocks_test compiles and runs the page's copy): a 1-D smoothing
// described with KernelBuilder. Like every other example, main hands the problem (the
// kernel, its arguments, the check of y) to RunExampleMain, which runs and profiles it and
// writes the trace, the Perfetto file, the raw buffer and the verdicts
// (examples/example_main.h).
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "examples/example_main.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace::examples {

// [readme-begin]
absl::StatusOr<Kernel> SmoothKernel() {
  KernelBuilder b("smooth");
  b.Param("const float*", "x").Param("float*", "y").Param("int", "n");
  b.Grid({4, 1, 1}).Block({256, 1, 1});
  b.SharedArray("float", "tile", 256);
  b.Stmt("const int i = blockIdx.x * 256 + threadIdx.x;\nfloat acc = 0.0f;");
  b.Region("load", [&] { b.Stmt("tile[threadIdx.x] = i < n ? x[i] : 0.0f;"); });
  b.Barrier("tile ready", BarrierRecord::kAlways);  // its wait is recorded
  b.For("j", 0, 8, TripCount::Exact(8), [&] {
    b.Region("accumulate", [&] { b.Stmt("acc += tile[(threadIdx.x + j) % 256];"); });
  });
  b.Region("store", [&] { b.Stmt("if (i < n) y[i] = acc / 8.0f;"); });
  return b.Build();
}
// [readme-end]

namespace {

constexpr char kUsage[] =
    "runs, profiles and checks docs/builder.md's first kernel (a 1-D smoothing of 1024 "
    "floats) on a GPU or the host backend.\n"
    "  bazel run //examples:first_kernel -- [--out=DIR] [--device=host] [--barrier_waits]";

absl::StatusOr<ExampleProblem> MakeProblem() {
  ASSIGN_OR_RETURN(Kernel kernel, SmoothKernel());
  struct Data {
    std::vector<float> x = std::vector<float>(1024, 1.0f);
    std::vector<float> y = std::vector<float>(1024, 0.0f);
    std::vector<double> reference = std::vector<double>(1024, 1.0);  // the mean of 8 ones
  };
  auto data = std::make_shared<Data>();
  ExampleProblem problem;
  problem.description = "y[i] = mean of x[i..i+7] within the block, 1024 floats, 4 blocks";
  problem.kernel = std::move(kernel);
  problem.args = {KernelArg::In(absl::MakeConstSpan(data->x)),
                  KernelArg::Out(absl::MakeSpan(data->y)), KernelArg::Scalar<int>(1024)};
  problem.check = [data] {
    return CompareToReference("y", data->y, data->reference, /*rel_tolerance=*/0,
                              /*abs_tolerance=*/0);
  };
  problem.storage = data;
  return problem;
}

}  // namespace
}  // namespace warptrace::examples

int main(int argc, char** argv) {
  return warptrace::examples::RunExampleMain(argc, argv, "first_kernel",
                                             warptrace::examples::kUsage,
                                             warptrace::examples::MakeProblem);
}
