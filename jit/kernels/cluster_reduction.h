// A cluster reduction through distributed shared memory: the sum of a float array per
// thread-block cluster, as a KernelBuilder kernel launched in clusters of `cluster` CTAs
// (sm_90). Each CTA reduces its grid-stride slice to one partial in shared memory as the
// block reduction does ("accumulate", "tree"); a cluster barrier ("partials ready") makes
// every CTA's partial visible to the cluster; thread 0 of CTA rank 0 reads each peer's
// partial from the peer's own shared memory (mapa: warptrace_cluster_map) and writes the
// cluster's sum ("cluster sum"); a last cluster barrier ("peers read") keeps every CTA alive
// until rank 0 has read its shared memory (a CTA must not exit while a peer can still reach
// it).
//
// Kernel parameters, in order: const float* x, float* out (one float per cluster, in
// cluster order).
//
//   ASSIGN_OR_RETURN(Kernel sum, ClusterReduction({.n = 1 << 20, .blocks = 128,
//                                                  .threads = 256, .cluster = 2}));
//
// Events per trace unit with the default policy: kernel 2 + accumulate 2 + tree 2 +
// cluster sum 2 = 8; with RecordPolicy::barrier_waits, + 2 per block barrier
// (1 + log2(threads)) and 2 per cluster barrier (2).
#ifndef WARPTRACE_JIT_KERNELS_CLUSTER_REDUCTION_H_
#define WARPTRACE_JIT_KERNELS_CLUSTER_REDUCTION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace {

struct ClusterReductionShape {
  uint32_t n = 4096;       // elements of x
  uint32_t blocks = 8;     // grid size: a multiple of `cluster`
  uint32_t threads = 256;  // block size: a power of two, 32..1024
  uint32_t cluster = 2;    // CTAs per cluster: 1..8
};

// InvalidArgument when n or blocks is 0, threads is not a power of two in 32..1024, or
// cluster is not in 1..8 or does not divide blocks.
absl::StatusOr<Kernel> ClusterReduction(const ClusterReductionShape& shape);

// The CPU reference of each cluster's sum (in double), for the kernel's partition of x:
// element i goes to block (i mod blocks x threads) / threads, whose cluster is block /
// cluster.
std::vector<double> ReferenceClusterSums(const std::vector<float>& x,
                                         const ClusterReductionShape& shape);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNELS_CLUSTER_REDUCTION_H_
