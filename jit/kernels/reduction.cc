#include "jit/kernels/reduction.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/substitute.h"

namespace warptrace {

void AddBlockPartialSum(KernelBuilder& b, const ReductionShape& shape) {
  const uint32_t t = shape.threads;
  uint32_t steps = 0;
  while ((1u << steps) < t) ++steps;
  const uint64_t stride = uint64_t{shape.blocks} * t;
  const uint64_t max_items = (shape.n + stride - 1) / stride;
  b.SharedArray("float", "partial", t);
  b.Stmt("const int tid = threadIdx.x;\nfloat acc = 0.0f;");
  b.Region("accumulate", [&] {
    // Threads past the end run fewer iterations; nothing records inside, so no bound is
    // needed, but the bound keeps loop-iteration sites possible.
    b.For("i", "blockIdx.x * " + std::to_string(t) + " + tid", std::to_string(shape.n),
          std::to_string(stride), TripCount::UpperBound(max_items),
          [&] { b.Stmt("acc += x[i];"); });
    b.Stmt("partial[tid] = acc;");
  });
  b.Barrier("partials written");
  b.Region("tree", [&] {
    b.For("step", 0, static_cast<int64_t>(steps), TripCount::Exact(steps), [&] {
      b.Stmt(absl::Substitute("const int half = $0 >> (step + 1);\n"
                              "if (tid < half) partial[tid] += partial[tid + half];",
                              t));
      b.Barrier("halved");
    });
  });
}

absl::StatusOr<KernelBuilder> ReductionBuilder(const ReductionShape& shape) {
  const uint32_t t = shape.threads;
  if (t < 32 || t > 1024 || (t & (t - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("reduction: threads ", t, " must be a power of two in 32..1024"));
  }
  if (shape.n == 0 || shape.blocks == 0) {
    return absl::InvalidArgumentError(absl::StrCat("reduction: n (", shape.n, ") and blocks (",
                                                   shape.blocks, ") must be positive"));
  }
  KernelBuilder b("reduction");
  b.Param("const float*", "x").Param("float*", "out");
  b.Grid({shape.blocks, 1, 1}).Block({t, 1, 1});
  AddBlockPartialSum(b, shape);
  b.Region("publish", [&] { b.Stmt("if (tid == 0) atomicAdd(out, partial[0]);"); });
  return b;
}

absl::StatusOr<Kernel> Reduction(const ReductionShape& shape) {
  absl::StatusOr<KernelBuilder> b = ReductionBuilder(shape);
  if (!b.ok()) return b.status();
  return b->Build();
}

double ReferenceSum(const std::vector<float>& x) {
  double sum = 0.0;
  for (float v : x) sum += v;
  return sum;
}

}  // namespace warptrace
