#include "jit/kernels/split_softmax.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace warptrace {
namespace {

constexpr uint32_t kThreads = kSplitSoftmaxThreads;
constexpr uint32_t kPartition = kSplitSoftmaxPartition;  // each thread takes two values


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

}  // namespace

absl::Status CheckSplitSoftmaxShape(const SplitSoftmaxShape& shape) {
  if (shape.rows == 0 || shape.rows > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rows must be 1 to 65535, not ", shape.rows));
  }
  if (shape.max_len == 0 || shape.max_len % kPartition != 0 ||
      shape.max_len / kPartition > kThreads) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_len must be a multiple of ", kPartition, " up to ", kPartition * kThreads,
        ", not ", shape.max_len));
  }
  return absl::OkStatus();
}

absl::StatusOr<Kernel> SplitSoftmaxPartition(const SplitSoftmaxShape& shape) {
  if (absl::Status s = CheckSplitSoftmaxShape(shape); !s.ok()) return s;
  return PartitionKernel(shape.rows, shape.max_len / kPartition);
}

absl::StatusOr<Kernel> SplitSoftmaxReduce(const SplitSoftmaxShape& shape) {
  if (absl::Status s = CheckSplitSoftmaxShape(shape); !s.ok()) return s;
  return ReduceKernel(shape.rows, shape.max_len);
}

}  // namespace warptrace
