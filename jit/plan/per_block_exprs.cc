#include "jit/plan/per_block_exprs.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace warptrace {
namespace {

bool IsIntegerScalar(const KernelParam& param) {
  return !param.is_pointer && param.ValueType() != "float" && param.ValueType() != "double";
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> ResolveScalars(const TripExpr& expr, const Kernel& kernel,
                                                    const LaunchScalars& scalars,
                                                    absl::string_view path,
                                                    absl::string_view what) {
  std::vector<int64_t> values;
  for (const std::string& name : expr.scalars()) {
    const auto constant =
        std::find_if(kernel.constants.begin(), kernel.constants.end(),
                     [&](const std::pair<std::string, int64_t>& c) { return c.first == name; });
    if (constant != kernel.constants.end()) {
      values.push_back(constant->second);
      continue;
    }
    const auto param = std::find_if(kernel.params.begin(), kernel.params.end(),
                                    [&](const KernelParam& p) { return p.name == name; });
    if (param == kernel.params.end() || !IsIntegerScalar(*param)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": ", what, " '", expr.text(), "' reads '", name, "', which is not ",
          param == kernel.params.end() ? "a parameter" : "an integer scalar parameter",
          " of the kernel; it may read blockIdx, gridDim, blockDim, integer scalar "
          "parameters and the kernel's constants (KernelBuilder::Constant)"));
    }
    const auto value = scalars.find(name);
    if (value == scalars.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": ", what, " '", expr.text(), "' reads scalar '", name,
          "', whose value is known only at launch; plan for a launch with "
          "RecordPlan::Create(kernel, options, scalars) (RunKernel does)"));
    }
    values.push_back(value->second);
  }
  return values;
}

absl::Status FillBlockLabels(const Kernel& kernel, const LaunchScalars& scalars,
                             TraceLayout& layout) {
  layout.block_labels.clear();
  layout.grid_dim_names.clear();
  if (kernel.block_label.empty()) return absl::OkStatus();
  struct Part {
    std::string name;
    std::string path;
    TripExpr expr;
    std::vector<int64_t> scalars;
  };
  std::vector<Part> parts;
  layout.grid_dim_names.assign(3, "");
  for (const BlockLabelPart& p : kernel.block_label) {
    Part part{p.name, absl::StrCat("kernel ", kernel.name, " > block label > ", p.name), {}, {}};
    absl::StatusOr<TripExpr> expr = TripExpr::Parse(p.expr);
    if (!expr.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(part.path, ": ", expr.status().message()));
    }
    part.expr = *std::move(expr);
    ASSIGN_OR_RETURN(part.scalars, ResolveScalars(part.expr, kernel, scalars, part.path,
                                                  "block label expression"));
    for (int d = 0; d < 3; ++d) {
      if (p.expr == absl::StrCat("blockIdx.", std::string(1, static_cast<char>('x' + d)))) {
        layout.grid_dim_names[d] = p.name;
      }
    }
    parts.push_back(std::move(part));
  }
  if (std::all_of(layout.grid_dim_names.begin(), layout.grid_dim_names.end(),
                  [](const std::string& n) { return n.empty(); })) {
    layout.grid_dim_names.clear();
  }
  TripExprEnv env;
  env.grid_dim = kernel.grid;
  env.block_dim = kernel.block;
  const uint64_t blocks = SampledBlocks(layout);
  layout.block_labels.reserve(blocks);
  for (uint64_t ordinal = 0; ordinal < blocks; ++ordinal) {
    env.block_idx = BlockIndex(kernel.grid, static_cast<uint32_t>(SampledBlockId(layout, ordinal)));
    std::string label;
    for (const Part& part : parts) {
      env.scalars = part.scalars;
      absl::StatusOr<int64_t> value = part.expr.Evaluate(env);
      if (!value.ok()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: for block (%d, %d, %d): %s", part.path, env.block_idx.x, env.block_idx.y,
            env.block_idx.z, value.status().message()));
      }
      absl::StrAppend(&label, label.empty() ? "" : " / ", part.name, " ", *value);
    }
    layout.block_labels.push_back(std::move(label));
  }
  return absl::OkStatus();
}

}  // namespace warptrace
