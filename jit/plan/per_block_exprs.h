// What the plan evaluates per block when a kernel is launched: the scalar values a
// per-block expression (jit/builder/trip_expr.h) reads, and the blocks' user labels
// (KernelBuilder::BlockLabel).
//
//   LaunchScalars scalars = {{"num_seqs", 4}};
//   ASSIGN_OR_RETURN(std::vector<int64_t> values,
//                    ResolveScalars(expr, kernel, scalars, "kernel k > loop t",
//                                   "per-block trip count"));
//   RETURN_IF_ERROR(FillBlockLabels(kernel, scalars, layout));  // layout.block_labels
#ifndef WARPTRACE_JIT_PLAN_PER_BLOCK_EXPRS_H_
#define WARPTRACE_JIT_PLAN_PER_BLOCK_EXPRS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "format/layout.h"
#include "jit/builder/kernel.h"
#include "jit/builder/trip_expr.h"

namespace warptrace {

// The kernel's integer scalar arguments of one launch, by parameter name: what per-block
// trip counts and block labels read (jit/run/run.cc fills it from the KernelArgs).
using LaunchScalars = std::map<std::string, int64_t, std::less<>>;

// The values of expr.scalars(), in that order: the kernel's constants by name, else the
// launch's scalars. InvalidArgument, starting with `path` and naming `what` ("per-block trip
// count"), for a name that is not an integer scalar parameter or constant of the kernel, or
// a scalar missing from `scalars`.
absl::StatusOr<std::vector<int64_t>> ResolveScalars(const TripExpr& expr, const Kernel& kernel,
                                                    const LaunchScalars& scalars,
                                                    absl::string_view path,
                                                    absl::string_view what);

// Sets layout.block_labels (one per sampled block of `layout`) and layout.grid_dim_names
// from kernel.block_label; clears both when the kernel has no label. InvalidArgument, with
// the label part's builder path, for an expression that does not parse, reads what
// ResolveScalars refuses, or fails to evaluate for a block (naming it).
// Cost: one evaluation per part and sampled block.
absl::Status FillBlockLabels(const Kernel& kernel, const LaunchScalars& scalars,
                             TraceLayout& layout);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_PLAN_PER_BLOCK_EXPRS_H_
