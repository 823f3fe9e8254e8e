#include "examples/gemm_problem.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "examples/example_data.h"
#include "jit/kernels/tiled_gemm.h"

namespace warptrace::examples {

ExampleProblem GemmProblem(Kernel kernel, uint32_t m, uint32_t n, uint32_t k, uint64_t seed,
                           std::string description) {
  struct Data {
    std::vector<float> a, b, c;
    std::vector<double> reference;
  };
  auto data = std::make_shared<Data>();
  data->a = RandomFloats(uint64_t{m} * k, seed);
  data->b = RandomFloats(uint64_t{k} * n, seed + 1);
  data->c.assign(uint64_t{m} * n, 0.0f);
  const std::vector<float> reference =
      ReferenceGemm(data->a, data->b, TiledGemmShape{.m = m, .n = n, .k = k});
  data->reference.assign(reference.begin(), reference.end());

  ExampleProblem problem;
  problem.description = std::move(description);
  problem.kernel = std::move(kernel);
  problem.args = {KernelArg::In(absl::MakeConstSpan(data->a)),
                  KernelArg::In(absl::MakeConstSpan(data->b)),
                  KernelArg::Out(absl::MakeSpan(data->c))};
  problem.check = [data, n] {
    return CompareToReference("C", data->c, data->reference, /*rel_tolerance=*/1e-4,
                              /*abs_tolerance=*/1e-4, /*row_length=*/n);
  };
  problem.storage = data;
  return problem;
}

}  // namespace warptrace::examples
