// A block reduction: the sum of a float array, as a KernelBuilder kernel. Each thread adds
// a grid-stride slice of the input ("accumulate" region), the block combines the partial
// sums in shared memory with a barrier per halving step ("tree" region, log2(threads)
// steps), and thread 0 of each block adds the block's sum to *out with atomicAdd
// ("publish" region). *out must be zero before the launch.
//
// Kernel parameters, in order: const float* x, float* out.
//
//   ASSIGN_OR_RETURN(Kernel sum, Reduction({.n = 1 << 20, .blocks = 64, .threads = 256}));
//
// Events per trace unit with the default policy: kernel 2 + accumulate 2 + tree 2 +
// publish 2 = 8; with RecordPolicy::barrier_waits, + 2 per barrier (1 + log2(threads)).
#ifndef WARPTRACE_JIT_KERNELS_REDUCTION_H_
#define WARPTRACE_JIT_KERNELS_REDUCTION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace {

struct ReductionShape {
  uint32_t n = 4096;       // elements of x
  uint32_t blocks = 8;     // grid size
  uint32_t threads = 256;  // block size: a power of two, 32..1024
};

// The block's part of the reduction, on a builder that already has `x` and its grid: the
// `partial` shared array, `tid` and `acc`, the "accumulate" region (a grid-stride slice of
// x), the "partials written" barrier and the "tree" region (log2(threads) halving steps,
// each with its "halved" barrier), leaving the block's sum in partial[0]. `shape` must be
// valid (ReductionBuilder checks it). Shared by the reduction and cluster_reduction kernels.
void AddBlockPartialSum(KernelBuilder& b, const ReductionShape& shape);

// InvalidArgument when n or blocks is 0 or threads is not a power of two in 32..1024.
absl::StatusOr<KernelBuilder> ReductionBuilder(const ReductionShape& shape);
absl::StatusOr<Kernel> Reduction(const ReductionShape& shape);

// The CPU reference (in double; the kernel's float result differs by rounding).
double ReferenceSum(const std::vector<float>& x);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNELS_REDUCTION_H_
