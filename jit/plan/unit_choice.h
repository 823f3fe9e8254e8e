// The trace unit a plan uses when ProfileOptions::unit is unset, and what Explain() says of
// the unit: why it was chosen, and which loops its recorder alone cannot show.
//
//   layout.unit = options.unit.value_or(DefaultUnit(kernel.block.Count()));
//   text += ExplainUnit(kernel, layout, site_of_node, options.unit.has_value());
#ifndef WARPTRACE_JIT_PLAN_UNIT_CHOICE_H_
#define WARPTRACE_JIT_PLAN_UNIT_CHOICE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/layout.h"
#include "jit/builder/kernel.h"

namespace warptrace {

// A warpgroup if the block is a multiple of 128 threads, else a warp if it is a multiple of
// 32, else the block.
UnitSpec DefaultUnit(uint64_t block_threads);

// Explain()'s lines about the unit: "unit warpgroup chosen (no unit given): ..." when the
// plan chose it; and, when a unit holds several warps, the loops around a record site whose
// trip count is an upper bound (data-dependent, so the warps of one unit may run different
// counts, as paged attention's warps take different KV blocks): only the recorder's warp's
// iterations are on the timeline, the other warps' show only where they meet it at a
// barrier; UnitSpec::Warp() (--unit=warp) records every warp. Empty when there is nothing
// to say.
std::string ExplainUnit(const Kernel& kernel, const TraceLayout& layout,
                        const std::vector<std::optional<uint32_t>>& site_of_node,
                        bool unit_given);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_PLAN_UNIT_CHOICE_H_
