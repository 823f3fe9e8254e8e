#include "jit/plan/unit_choice.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace warptrace {
namespace {

std::string DefaultUnitReason(uint64_t block_threads) {
  if (block_threads % 128 == 0) return "a multiple of 128";
  if (block_threads % 32 == 0) return "a multiple of 32 but not of 128";
  return "not a multiple of 32";
}

// Upper-bounded loops with a record site in or around their body, outermost first (the loops
// inside one are seen, or not, with it).
void DataDependentLoops(const std::vector<KernelNode>& body,
                        const std::vector<std::optional<uint32_t>>& site_of_node,
                        std::vector<std::string>& out) {
  auto has_site = [&](const KernelNode& n) {
    return n.ordinal < site_of_node.size() && site_of_node[n.ordinal].has_value();
  };
  auto reported = [&](const KernelNode& node) {
    return node.kind == KernelNode::Kind::kLoop &&
           node.trip.kind() == TripCount::Kind::kUpperBound &&
           (has_site(node) || FindNode(node.body, has_site) != nullptr);
  };
  // The context: whether a reported loop encloses the node.
  WalkNodes(
      body, false,
      [&](const KernelNode& node, bool inside) {
        if (!inside && reported(node)) out.push_back(node.path);
      },
      [&](const NestedBody& nested, bool inside) { return inside || reported(*nested.parent); });
}

}  // namespace

UnitSpec DefaultUnit(uint64_t block_threads) {
  if (block_threads % 128 == 0) return UnitSpec::Warpgroup();
  if (block_threads % 32 == 0) return UnitSpec::Warp();
  return UnitSpec::Block();
}

std::string ExplainUnit(const Kernel& kernel, const TraceLayout& layout,
                        const std::vector<std::optional<uint32_t>>& site_of_node,
                        bool unit_given) {
  std::string text;
  if (!unit_given) {
    absl::StrAppend(&text, "unit ", UnitKindName(layout.unit.kind),
                    " chosen (no unit given): the block of ", layout.block.Count(),
                    " threads is ", DefaultUnitReason(layout.block.Count()), "\n");
  }
  const uint32_t warps = (UnitThreads(layout) + 31) / 32;
  if (warps < 2) return text;
  std::vector<std::string> loops;
  DataDependentLoops(kernel.body, site_of_node, loops);
  if (loops.empty()) return text;
  absl::StrAppend(
      &text, "warps of one unit may run different trip counts: ",
      absl::StrJoin(loops, "; "), " (TripCount::UpperBound: data-dependent); a ",
      UnitKindName(layout.unit.kind), " unit records its recorder's warp only, so the other ",
      warps - 1, " warps' iterations are not on the timeline (they show only where they meet "
      "it at a barrier); UnitSpec::Warp() (--unit=warp) records every warp\n");
  return text;
}

}  // namespace warptrace
