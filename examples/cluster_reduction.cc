// bazel run //examples:cluster_reduction -- [--n=4096 --blocks=8 --threads=256 --cluster=2]
//     [common flags]
//
// A cluster reduction through distributed shared memory (jit/kernels/cluster_reduction.h,
// sm_90): every CTA reduces its slice to one partial in shared memory, a cluster barrier
// makes the partials visible to the cluster, CTA rank 0 of each cluster reads its peers'
// partials from their own shared memory (mapa) and writes the cluster's sum, and a last
// cluster barrier keeps every CTA alive until it has. --barrier_waits records every wait,
// the cluster barriers' included (the time a CTA waited for its peers). Checks each
// cluster's sum against a double-precision CPU reference.
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "examples/example_data.h"
#include "examples/example_main.h"
#include "jit/kernels/cluster_reduction.h"

ABSL_FLAG(uint32_t, n, 4096, "elements to sum");
ABSL_FLAG(uint32_t, blocks, 8, "grid size (blocks): a multiple of --cluster");
ABSL_FLAG(uint32_t, threads, 256, "block size: a power of two in 32..1024");
ABSL_FLAG(uint32_t, cluster, 2, "CTAs per cluster: 1..8");

namespace warptrace::examples {
namespace {

constexpr char kUsage[] =
    "runs, profiles and checks a cluster reduction through distributed shared memory (sm_90) "
    "on a GPU or the host backend.\n"
    "  bazel run //examples:cluster_reduction -- [--n=4096 --blocks=8 --threads=256 "
    "--cluster=2] [--barrier_waits]\n"
    "  [--device=host] [--unit=warp|warpgroup|block] [--placement=global|shared|auto] "
    "[--profile=false]";

absl::StatusOr<ExampleProblem> MakeProblem() {
  const ClusterReductionShape shape{.n = absl::GetFlag(FLAGS_n),
                                    .blocks = absl::GetFlag(FLAGS_blocks),
                                    .threads = absl::GetFlag(FLAGS_threads),
                                    .cluster = absl::GetFlag(FLAGS_cluster)};
  absl::StatusOr<Kernel> kernel = ClusterReduction(shape);
  if (!kernel.ok()) return kernel.status();

  struct Data {
    std::vector<float> x;
    std::vector<float> out;
    std::vector<double> reference;
    double magnitude = 0;  // sum of |x|: what float rounding error scales with
  };
  auto data = std::make_shared<Data>();
  data->x = RandomFloats(shape.n, /*seed=*/7);
  data->out.assign(shape.blocks / shape.cluster, 0.0f);
  data->reference = ReferenceClusterSums(data->x, shape);
  for (float v : data->x) data->magnitude += std::abs(v);

  ExampleProblem problem;
  problem.description =
      absl::StrFormat("sum of %u floats per cluster, %u blocks x %u threads in clusters of %u",
                      shape.n, shape.blocks, shape.threads, shape.cluster);
  problem.kernel = *std::move(kernel);
  problem.args = {KernelArg::In(absl::MakeConstSpan(data->x)),
                  KernelArg::Out(absl::MakeSpan(data->out))};
  problem.check = [data] {
    return CompareToReference("cluster sums", data->out, data->reference,
                              /*rel_tolerance=*/1e-5,
                              /*abs_tolerance=*/1e-5 * data->magnitude + 1e-6);
  };
  problem.storage = data;
  return problem;
}

}  // namespace
}  // namespace warptrace::examples

int main(int argc, char** argv) {
  return warptrace::examples::RunExampleMain(argc, argv, "cluster_reduction",
                                             warptrace::examples::kUsage,
                                             warptrace::examples::MakeProblem);
}
