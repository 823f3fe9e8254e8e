#include "jit/plan/event_counter.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace warptrace::plan_internal {

Flow Counter::Body(const std::vector<KernelNode>& body, int depth,
          std::vector<std::string>* terms) {
  Flow flow{Range::Of(0), {}};
  for (const KernelNode& node : body) {
    const size_t line = Reserve();
    std::string label;
    const Flow f = Node(node, depth, &label);
    NoteDataDependent(node, f);
    flow.ret = Union(flow.ret, Add(flow.fall, f.ret));
    flow.fall = Add(flow.fall, f.fall);
    const uint64_t max = f.Any().max;
    if (max > 0 && terms != nullptr) terms->push_back(absl::StrCat(KernelNodeLabel(node, NodeLabelStyle::kCount), " ", max));
    Fill(line, max > 0 ? label : "", depth);
  }
  return flow;
}

void Counter::NoteDataDependent(const KernelNode& node, const Flow& f) {
  const Range any = f.Any();
  if (!data_dependent_.empty() || any.min == any.max) return;
  // Report the innermost construct: children were visited first and set it already.
  data_dependent_ = node.path;
}

size_t Counter::Reserve() {
  if (lines_ == nullptr) return 0;
  lines_->emplace_back();
  return lines_->size() - 1;
}

void Counter::Fill(size_t line, const std::string& text, int depth) {
  if (lines_ == nullptr) return;
  (*lines_)[line] = text.empty() ? "" : std::string(2 * depth, ' ') + text;
}

Flow Counter::Node(const KernelNode& node, int depth, std::string* label) {
  switch (node.kind) {
    case KernelNode::Kind::kStatement:
      return Sites(0);
    case KernelNode::Kind::kReturn:
      return {{}, Range::Of(0)};
    case KernelNode::Kind::kBarrier:
    case KernelNode::Kind::kClusterBarrier: {
      const uint64_t n = SiteEvents(node);
      *label = absl::StrCat(KernelNodeLabel(node, NodeLabelStyle::kCount), " ", n);
      return Sites(n);
    }
    case KernelNode::Kind::kRegion: {
      std::vector<std::string> terms{"2"};
      Flow body = Body(node.body, depth + 1, &terms);
      const Flow f{Add(body.fall, Range::Of(2)), Add(body.ret, Range::Of(2))};
      *label = terms.size() == 1
                   ? absl::StrCat("region ", node.text, " 2")
                   : absl::StrCat("region ", node.text, " -> ", Join(terms), " = ",
                                  f.Any().max);
      return f;
    }
    case KernelNode::Kind::kLoop:
      return Loop(node, depth, label);
    case KernelNode::Kind::kIf: {
      std::vector<std::string> then_terms, else_terms;
      const Flow t = Body(node.body, depth + 1, &then_terms);
      const Flow e = Body(node.else_body, depth + 1, &else_terms);
      const Flow f{Union(t.fall, e.fall), Union(t.ret, e.ret)};
      *label = absl::StrCat("if (", node.text, ") -> max(then ", t.Any().max, ", else ",
                            e.Any().max, ") = ", f.Any().max);
      return f;
    }
    case KernelNode::Kind::kRoles:
      return Roles(node, depth, label);
    case KernelNode::Kind::kNamedBarrier:
    case KernelNode::Kind::kArrive:
    case KernelNode::Kind::kPhaseWait:
    case KernelNode::Kind::kAsyncCopy:
    case KernelNode::Kind::kAsyncWait:
    case KernelNode::Kind::kMmaGroup:
    case KernelNode::Kind::kMmaWait:
    case KernelNode::Kind::kSetMaxRegisters:
    case KernelNode::Kind::kTmaStore:
    case KernelNode::Kind::kTmaStoreWait: {
      const uint64_t n = HandoffSlots(node);
      *label = absl::StrCat(KernelNodeLabel(node, NodeLabelStyle::kCount), " ", n);
      return Sites(n);
    }
    case KernelNode::Kind::kRole:
      break;
  }
  return Sites(0);
}

Flow Counter::Loop(const KernelNode& node, int depth, std::string* label) {
  std::vector<std::string> terms;
  const uint64_t site = SiteEvents(node);
  if (site > 0) terms.push_back(absl::StrCat("loop ", node.text, " 2"));
  Flow body = Body(node.body, depth + 1, &terms);
  body.fall = Add(body.fall, Range::Of(site));
  body.ret = Add(body.ret, Range::Of(site));
  const bool per_block = node.trip.kind() == TripCount::Kind::kPerBlock;
  const uint64_t n = per_block ? per_block_.trip[node.ordinal] : node.trip.count();
  // A per-block count is exact for the block being counted.
  const bool exact = per_block || node.trip.kind() == TripCount::Kind::kExact;
  Flow f;
  if (!node.trip.bounded()) {
    // The plan rejected record sites here, so the body records nothing.
    f.fall = Range::Of(0);
    f.ret = body.ret.possible ? Range::Of(0) : Range{};
  } else {
    if (n == 0) {
      f.fall = Range::Of(0);
    } else if (body.fall.possible) {
      f.fall = {true, exact ? SatMul(n, body.fall.min) : 0, SatMul(n, body.fall.max)};
    } else {
      f.fall = exact ? Range{} : Range::Of(0);
    }
    if (n > 0 && body.ret.possible) {
      const uint64_t before = body.fall.possible ? SatMul(n - 1, body.fall.max) : 0;
      f.ret = {true, body.ret.min, SatAdd(before, body.ret.max)};
    }
  }
  std::string how = !node.trip.bounded() ? "x?"
                    : per_block         ? absl::StrCat("x ", per_block_.how[node.ordinal])
                                        : absl::StrCat(exact ? "x" : "x<=", n);
  *label = absl::StrCat("loop ", node.text, " ", how, " -> (", Join(terms), ") x ", n, " = ",
                        f.Any().max);
  return f;
}

Flow Counter::Roles(const KernelNode& node, int depth, std::string* label) {
  std::vector<std::string> parts;
  Flow f;
  bool any = false;
  for (const KernelNode& role : node.roles) {
    const uint64_t first = uint64_t{role.first} * RoleAxisThreads(node.axis);
    const uint64_t end = first + uint64_t{role.count} * RoleAxisThreads(node.axis);
    const bool taken = !thread_.has_value() || (*thread_ >= first && *thread_ < end);
    if (!taken) continue;
    if (thread_.has_value()) role_ = role.text;
    const uint64_t saved_first = role_first_;
    role_first_ = first;
    const size_t line = Reserve();
    std::vector<std::string> terms;
    const Flow r = Body(role.body, depth + 2, &terms);
    Fill(line, absl::StrCat("role ", role.text, " (", role.count, " ",
                            RoleAxisName(node.axis), "s) -> ", Join(terms), " = ",
                            r.Any().max),
         depth + 1);
    role_first_ = saved_first;
    parts.push_back(absl::StrCat(role.text, " ", r.Any().max));
    f = any ? Flow{Union(f.fall, r.fall), Union(f.ret, r.ret)} : r;
    any = true;
  }
  *label = absl::StrCat("roles by ", RoleAxisName(node.axis), " -> max(",
                        absl::StrJoin(parts, ", "), ") = ", f.Any().max);
  return f;
}

}  // namespace warptrace::plan_internal
