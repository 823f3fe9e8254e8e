// bazel run //examples:split_softmax -- [--rows=4 --max_len=2048] [common flags]
//
// A program of two kernels, the shape of a split-KV decode (vLLM's paged attention v2: a
// partition kernel, then a reduce kernel reading what it wrote): a softmax over rows of
// different lengths, each row cut into partitions of 512.
//   partition  grid (partitions, rows): a block whose partition starts past its row's length
//              returns at once (Return(ReturnScope::kBlock)); the others take their
//              partition's max and sum of exponentials with two block reductions, each a
//              device function called with KernelBuilder::Call (block_max, block_sum: a
//              halving loop with a barrier per step), and write the exponentials and the
//              partition's max and sum;
//   reduce     grid (rows): the row's max and total over its partitions, with the same
//              device functions, then every element normalized.
// Blocks are labelled by row and partition (BlockLabel), so the tracks and the diagnosis
// say which; the pipeline's one timeline (NAME.pftrace, NAME.trace.json) holds both
// launches. Checked against a double-precision CPU softmax of each row.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "examples/example_data.h"
#include "examples/example_main.h"
#include "jit/builder/kernel_builder.h"
#include "jit/kernels/split_softmax.h"

ABSL_FLAG(uint32_t, rows, 4, "rows (sequences); row r holds max_len * (r + 1) / rows values");
ABSL_FLAG(uint32_t, max_len, 2048, "the longest row: a multiple of 512 (the partition size)");

namespace warptrace::examples {
namespace {

constexpr char kUsage[] =
    "runs, profiles and checks a softmax over rows of different lengths as a program of two "
    "kernels (partition, reduce), the shape of a split-KV decode, on a GPU or the host "
    "backend.\n"
    "  bazel run //examples:split_softmax -- [--rows=4 --max_len=2048] [--device=host] "
    "[--barrier_waits]";

absl::StatusOr<ExampleProblem> MakeProblem() {
  const SplitSoftmaxShape shape{.rows = absl::GetFlag(FLAGS_rows),
                                .max_len = absl::GetFlag(FLAGS_max_len)};
  RETURN_IF_ERROR(CheckSplitSoftmaxShape(shape));
  const uint32_t rows = shape.rows, max_len = shape.max_len;
  const uint32_t partitions = max_len / kSplitSoftmaxPartition;
  ASSIGN_OR_RETURN(Kernel partition, SplitSoftmaxPartition(shape));
  ASSIGN_OR_RETURN(Kernel reduce, SplitSoftmaxReduce(shape));

  struct Data {
    std::vector<float> x, tmp, part_max, part_sum, y;
    std::vector<int> lens;
    std::vector<double> reference;
  };
  auto data = std::make_shared<Data>();
  data->x = RandomFloats(uint64_t{rows} * max_len, /*seed=*/11);
  data->tmp.assign(data->x.size(), 0.0f);
  data->y.assign(data->x.size(), 0.0f);
  data->part_max.assign(uint64_t{rows} * partitions, 0.0f);
  data->part_sum.assign(uint64_t{rows} * partitions, 0.0f);
  data->reference.assign(data->x.size(), 0.0);
  for (uint32_t r = 0; r < rows; ++r) {
    const uint32_t len = std::max<uint32_t>(1, static_cast<uint32_t>(
                                                   uint64_t{max_len} * (r + 1) / rows));
    data->lens.push_back(static_cast<int>(len));
    const float* row = &data->x[uint64_t{r} * max_len];
    const double m = *std::max_element(row, row + len);
    double sum = 0;
    for (uint32_t i = 0; i < len; ++i) sum += std::exp(row[i] - m);
    for (uint32_t i = 0; i < len; ++i) {
      data->reference[uint64_t{r} * max_len + i] = std::exp(row[i] - m) / sum;
    }
  }

  ExampleProblem problem;
  problem.description = absl::StrFormat(
      "softmax of %u rows of 1..%u floats as two kernels: partition (%u x %u blocks of %u "
      "values) and reduce (%u blocks)",
      rows, max_len, partitions, rows, kSplitSoftmaxPartition, rows);
  problem.kernel = std::move(partition);
  problem.first_launch = "partition";
  problem.args = {KernelArg::In(absl::MakeConstSpan(data->x)),
                  KernelArg::In(absl::MakeConstSpan(data->lens)),
                  KernelArg::Out(absl::MakeSpan(data->tmp)),
                  KernelArg::Out(absl::MakeSpan(data->part_max)),
                  KernelArg::Out(absl::MakeSpan(data->part_sum)),
                  KernelArg::Scalar<int>(static_cast<int>(max_len))};
  problem.then.push_back(
      {"reduce", std::move(reduce),
       {KernelArg::In(absl::MakeConstSpan(data->tmp)),
        KernelArg::In(absl::MakeConstSpan(data->lens)),
        KernelArg::In(absl::MakeConstSpan(data->part_max)),
        KernelArg::In(absl::MakeConstSpan(data->part_sum)),
        KernelArg::Out(absl::MakeSpan(data->y)),
        KernelArg::Scalar<int>(static_cast<int>(max_len)),
        KernelArg::Scalar<int>(static_cast<int>(partitions))}});
  problem.check = [data] {
    return CompareToReference("y", data->y, data->reference, /*rel_tolerance=*/1e-4,
                              /*abs_tolerance=*/1e-7);
  };
  problem.storage = data;
  return problem;
}

}  // namespace
}  // namespace warptrace::examples

int main(int argc, char** argv) {
  return warptrace::examples::RunExampleMain(argc, argv, "split_softmax",
                                             warptrace::examples::kUsage,
                                             warptrace::examples::MakeProblem);
}
