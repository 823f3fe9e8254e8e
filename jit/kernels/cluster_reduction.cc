#include "jit/kernels/cluster_reduction.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/substitute.h"
#include "jit/kernels/reduction.h"

namespace warptrace {

absl::StatusOr<Kernel> ClusterReduction(const ClusterReductionShape& shape) {
  const uint32_t t = shape.threads;
  if (t < 32 || t > 1024 || (t & (t - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cluster reduction: threads ", t, " must be a power of two in 32..1024"));
  }
  if (shape.n == 0 || shape.blocks == 0) {
    return absl::InvalidArgumentError(absl::StrCat("cluster reduction: n (", shape.n,
                                                   ") and blocks (", shape.blocks,
                                                   ") must be positive"));
  }
  if (shape.cluster == 0 || shape.cluster > 8 || shape.blocks % shape.cluster != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster reduction: cluster ", shape.cluster, " must be in 1..8 and divide blocks (",
        shape.blocks, ")"));
  }
  KernelBuilder b("cluster_reduction");
  b.Param("const float*", "x").Param("float*", "out");
  b.Grid({shape.blocks, 1, 1}).Block({t, 1, 1}).Cluster({shape.cluster, 1, 1});
  AddBlockPartialSum(b, {.n = shape.n, .blocks = shape.blocks, .threads = t});
  // barrier.cluster.arrive.release / wait.acquire: every CTA's partial[0] is visible.
  b.ClusterSync("partials ready");
  b.Region("cluster sum", [&] {
    b.Stmt(absl::Substitute(
        "if (warptrace_cluster_ctarank() == 0 && tid == 0) {\n"
        "  float sum = 0.0f;\n"
        "  for (unsigned int r = 0; r < $0u; ++r) sum += warptrace_cluster_map(partial, r)[0];\n"
        "  out[warptrace_cluster_id_x()] = sum;\n"
        "}",
        shape.cluster));
  });
  b.ClusterSync("peers read");
  return b.Build();
}

std::vector<double> ReferenceClusterSums(const std::vector<float>& x,
                                         const ClusterReductionShape& shape) {
  std::vector<double> sums(shape.blocks / shape.cluster, 0.0);
  const uint64_t stride = uint64_t{shape.blocks} * shape.threads;
  for (size_t i = 0; i < x.size(); ++i) {
    const uint64_t block = (i % stride) / shape.threads;
    sums[block / shape.cluster] += x[i];
  }
  return sums;
}

}  // namespace warptrace
