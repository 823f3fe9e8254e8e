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

ABSL_FLAG(uint32_t, rows, 4, "rows (sequences); row r holds max_len * (r + 1) / rows values");
ABSL_FLAG(uint32_t, max_len, 2048, "the longest row: a multiple of 512 (the partition size)");

namespace warptrace::examples {
namespace {

constexpr uint32_t kThreads = 256;
constexpr uint32_t kPartition = 2 * kThreads;  // each thread takes two values

constexpr char kUsage[] =
    "runs, profiles and checks a softmax over rows of different lengths as a program of two "
    "kernels (partition, reduce), the shape of a split-KV decode, on a GPU or the host "
    "backend.\n"
    "  bazel run //examples:split_softmax -- [--rows=4 --max_len=2048] [--device=host] "
    "[--barrier_waits]";

// A block reduction of the block's 256 values of `v` with `op` (fmaxf, or add2 of
// the preamble), through shared `red`: a barrier after the store and after each halving step.
KernelBuilder::DeviceFunction BlockReduce(const char* name, const char* op) {
  const std::string combine =
      absl::StrCat("if (threadIdx.x < s) red[threadIdx.x] = ", op,
                   "(red[threadIdx.x], red[threadIdx.x + s]);");
  return {name, {"float v"}, "float", [combine](KernelBuilder& b) {
            b.Stmt("red[threadIdx.x] = v;");
            b.Barrier("stored");
            b.For({"s", static_cast<int>(kThreads / 2), "s > 0", "s >>= 1"},
                  TripCount::Exact(8), [&] {
                    b.Stmt(combine);
                    b.Barrier("halved");
                  });
            b.Stmt("result = red[0];");
            b.Barrier("read");  // every thread has it before red is written again
          }};
}

void CommonParts(KernelBuilder& b) {
  b.Preamble("__device__ float add2(float a, float b) { return a + b; }");
  b.SharedArray("float", "red", kThreads);
  b.Block({kThreads, 1, 1});
}

absl::StatusOr<Kernel> PartitionKernel(uint32_t rows, uint32_t partitions) {
  const KernelBuilder::DeviceFunction block_max = BlockReduce("block_max", "fmaxf");
  const KernelBuilder::DeviceFunction block_sum = BlockReduce("block_sum", "add2");
  KernelBuilder b("softmax_partition");
  b.Param("const float*", "x").Param("const int*", "lens").Param("float*", "tmp");
  b.Param("float*", "part_max").Param("float*", "part_sum").Param("int", "max_len");
  CommonParts(b);
  b.Grid({partitions, rows, 1});
  b.BlockLabel({{"row", "blockIdx.y"}, {"partition", "blockIdx.x"}});
  b.Stmt(absl::StrFormat("const int row = blockIdx.y;\nconst int len = lens[row];\n"
                         "const int start = blockIdx.x * %d;",
                         kPartition));
  // Past the row's end: nothing to do (every thread of the block alike).
  b.If("start >= len", [&] { b.Return(ReturnScope::kBlock); }, Uniform::kBlock);
  b.Stmt("const int i0 = start + threadIdx.x, i1 = i0 + " + std::to_string(kThreads) + ";");
  b.Stmt("float v0 = -INFINITY, v1 = -INFINITY;");
  b.Region("load", [&] {
    b.Stmt("if (i0 < len) v0 = x[row * max_len + i0];\n"
           "if (i1 < len) v1 = x[row * max_len + i1];");
  });
  b.Call(block_max, {"fmaxf(v0, v1)"}, "m");
  b.Stmt("float e0 = 0.0f, e1 = 0.0f;");
  b.Region("exp", [&] {
    b.Stmt("if (i0 < len) { e0 = expf(v0 - m); tmp[row * max_len + i0] = e0; }\n"
           "if (i1 < len) { e1 = expf(v1 - m); tmp[row * max_len + i1] = e1; }");
  });
  b.Call(block_sum, {"e0 + e1"}, "s");
  b.Region("publish", [&] {
    b.Stmt("if (threadIdx.x == 0) {\n"
           "  part_max[row * gridDim.x + blockIdx.x] = m;\n"
           "  part_sum[row * gridDim.x + blockIdx.x] = s;\n"
           "}");
  });
  return b.Build();
}

absl::StatusOr<Kernel> ReduceKernel(uint32_t rows, uint32_t max_len) {
  const KernelBuilder::DeviceFunction block_max = BlockReduce("block_max", "fmaxf");
  const KernelBuilder::DeviceFunction block_sum = BlockReduce("block_sum", "add2");
  KernelBuilder b("softmax_reduce");
  b.Param("const float*", "tmp").Param("const int*", "lens").Param("const float*", "part_max");
  b.Param("const float*", "part_sum").Param("float*", "y").Param("int", "max_len");
  b.Param("int", "partitions");
  CommonParts(b);
  b.Grid({rows, 1, 1});
  b.BlockLabel({{"row", "blockIdx.x"}});
  b.Stmt(absl::StrFormat("const int row = blockIdx.x;\nconst int len = lens[row];\n"
                         "const int used = (len + %d) / %d;  // partitions the row fills\n"
                         "const int t = threadIdx.x;\n"
                         "const float pm = t < used ? part_max[row * partitions + t] : "
                         "-INFINITY;",
                         kPartition - 1, kPartition));
  b.Call(block_max, {"pm"}, "row_max");
  b.Call(block_sum, {"t < used ? part_sum[row * partitions + t] * expf(pm - row_max) : 0.0f"},
         "total");
  b.Region("normalize", [&] {
    b.For("i", "t", "len", kThreads, TripCount::UpperBound(max_len / kThreads), [&] {
      b.Stmt(absl::StrFormat(
          "y[row * max_len + i] = tmp[row * max_len + i] *\n"
          "    expf(part_max[row * partitions + i / %d] - row_max) / total;",
          kPartition));
    });
  });
  return b.Build();
}

absl::StatusOr<ExampleProblem> MakeProblem() {
  const uint32_t rows = absl::GetFlag(FLAGS_rows);
  const uint32_t max_len = absl::GetFlag(FLAGS_max_len);
  if (rows == 0 || rows > 1024) {
    return absl::InvalidArgumentError(absl::StrCat("--rows must be 1 to 1024, not ", rows));
  }
  if (max_len == 0 || max_len % kPartition != 0 || max_len / kPartition > kThreads) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_len must be a multiple of ", kPartition, " up to ", kPartition * kThreads,
        ", not ", max_len));
  }
  const uint32_t partitions = max_len / kPartition;
  ASSIGN_OR_RETURN(Kernel partition, PartitionKernel(rows, partitions));
  ASSIGN_OR_RETURN(Kernel reduce, ReduceKernel(rows, max_len));

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
      rows, max_len, partitions, rows, kPartition, rows);
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
