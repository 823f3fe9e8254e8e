// bazel run //examples:reduction -- [--n=4096 --blocks=8 --threads=256] [common flags]
//
// A block reduction (jit/kernels/reduction.h): each thread sums a grid-stride slice
// ("accumulate"), the block halves its partial sums in shared memory with a barrier per
// step ("tree"; --barrier_waits records every wait), and thread 0 adds the block's sum to
// the result ("publish"). Checks the sum against a double-precision CPU reference.
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "examples/example_data.h"
#include "examples/example_main.h"
#include "jit/kernels/reduction.h"

ABSL_FLAG(uint32_t, n, 4096, "elements to sum");
ABSL_FLAG(uint32_t, blocks, 8, "grid size (blocks)");
ABSL_FLAG(uint32_t, threads, 256, "block size: a power of two in 32..1024");

namespace warptrace::examples {
namespace {

constexpr char kUsage[] =
    "runs, profiles and checks a block reduction (the sum of a float array) on a "
    "GPU or the host backend.\n"
    "  bazel run //examples:reduction -- [--n=4096 --blocks=8 --threads=256] "
    "[--barrier_waits]\n"
    "  [--device=host] [--unit=warp|warpgroup|block] [--placement=global|shared|auto] "
    "[--profile=false]";

absl::StatusOr<ExampleProblem> MakeProblem() {
  const ReductionShape shape{.n = absl::GetFlag(FLAGS_n),
                             .blocks = absl::GetFlag(FLAGS_blocks),
                             .threads = absl::GetFlag(FLAGS_threads)};
  absl::StatusOr<Kernel> kernel = Reduction(shape);
  if (!kernel.ok()) return kernel.status();

  struct Data {
    std::vector<float> x;
    std::vector<float> out = {0.0f};
    std::vector<double> reference;
    double magnitude = 0;  // sum of |x|: what float rounding error scales with
  };
  auto data = std::make_shared<Data>();
  data->x = RandomFloats(shape.n, /*seed=*/5);
  data->reference = {ReferenceSum(data->x)};
  for (float v : data->x) data->magnitude += std::abs(v);

  ExampleProblem problem;
  problem.description = absl::StrFormat("sum of %u floats, %u blocks x %u threads", shape.n,
                                        shape.blocks, shape.threads);
  problem.kernel = *std::move(kernel);
  problem.args = {KernelArg::In(absl::MakeConstSpan(data->x)),
                  KernelArg::Out(absl::MakeSpan(data->out))};
  problem.check = [data] {
    return CompareToReference("sum", data->out, data->reference, /*rel_tolerance=*/1e-5,
                              /*abs_tolerance=*/1e-5 * data->magnitude + 1e-6);
  };
  problem.storage = data;
  return problem;
}

}  // namespace
}  // namespace warptrace::examples

int main(int argc, char** argv) {
  return warptrace::examples::RunExampleMain(argc, argv, "reduction",
                                             warptrace::examples::kUsage,
                                             warptrace::examples::MakeProblem);
}
