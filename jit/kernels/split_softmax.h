// A softmax over rows of different lengths as a program of two kernels, the shape of a
// split-KV decode (vLLM's paged attention v2: a partition kernel, then a reduce kernel
// reading what it wrote); each row cut into partitions of kSplitSoftmaxPartition values.
//   SplitSoftmaxPartition  grid (partitions, rows), 256 threads: a block whose partition
//     starts past its row's length returns at once (Return(ReturnScope::kBlock)); the others
//     take their partition's max and sum of exponentials with two block reductions, each a
//     device function called with KernelBuilder::Call (block_max, block_sum: a halving loop
//     with a barrier per step), and write the exponentials and the partition's max and sum.
//     Parameters: const float* x, const int* lens, float* tmp, float* part_max,
//     float* part_sum, int max_len.
//   SplitSoftmaxReduce  grid (rows): the row's max and total over its partitions with the
//     same device functions, then every element normalized. Parameters: const float* tmp,
//     const int* lens, const float* part_max, const float* part_sum, float* y, int max_len,
//     int partitions.
// Blocks are labelled by row and partition (BlockLabel). examples/split_softmax.cc runs the
// two as one program with its CPU reference.
#ifndef WARPTRACE_JIT_KERNELS_SPLIT_SOFTMAX_H_
#define WARPTRACE_JIT_KERNELS_SPLIT_SOFTMAX_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace {

inline constexpr uint32_t kSplitSoftmaxThreads = 256;
inline constexpr uint32_t kSplitSoftmaxPartition = 2 * kSplitSoftmaxThreads;

struct SplitSoftmaxShape {
  uint32_t rows = 4;
  uint32_t max_len = 2048;  // a multiple of kSplitSoftmaxPartition, at most 256 partitions
};

// InvalidArgument for a shape outside the bounds above (naming the flag-like field).
absl::Status CheckSplitSoftmaxShape(const SplitSoftmaxShape& shape);
absl::StatusOr<Kernel> SplitSoftmaxPartition(const SplitSoftmaxShape& shape);
absl::StatusOr<Kernel> SplitSoftmaxReduce(const SplitSoftmaxShape& shape);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_KERNELS_SPLIT_SOFTMAX_H_
