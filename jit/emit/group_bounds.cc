#include "jit/emit/group_bounds.h"

#include <algorithm>

namespace warptrace {
namespace {

using Bound = std::optional<uint32_t>;

Bound Max(Bound a, Bound b) {
  if (!a.has_value() || !b.has_value()) return std::nullopt;
  return std::max(*a, *b);
}

Bound PlusOne(Bound a) {
  if (!a.has_value() || *a >= GroupBounds::kMaxBound) return std::nullopt;
  return *a + 1;
}

}  // namespace

GroupBounds::GroupBounds(const std::vector<KernelNode>& body, const KernelNode* site,
                         KernelNode::Kind wait_kind)
    : site_(site), wait_kind_(wait_kind) {
  Walk(body, 0u);
}

std::optional<uint32_t> GroupBounds::AtWait(const KernelNode* wait) const {
  const auto it = at_wait_.find(wait);
  return it == at_wait_.end() ? std::nullopt : it->second;
}

GroupBounds::Bound GroupBounds::Walk(const std::vector<KernelNode>& body, Bound in) {
  for (const KernelNode& n : body) in = Node(n, in);
  return in;
}

GroupBounds::Bound GroupBounds::Node(const KernelNode& n, Bound in) {
  if (n.kind == wait_kind_) {
    const auto [it, inserted] = at_wait_.emplace(&n, in);
    if (!inserted) it->second = Max(it->second, in);
    // What the wait leaves in flight: at most its count, and no more than there were.
    return in.has_value() ? std::min(*in, n.async_pending) : n.async_pending;
  }
  switch (n.kind) {
    case KernelNode::Kind::kLoop:
      return Loop(n, in);
    case KernelNode::Kind::kIf:
      return Max(Walk(n.body, in), n.has_else ? Walk(n.else_body, in) : in);
    case KernelNode::Kind::kRoles: {
      // Each role's threads take one path: the most over the roles.
      Bound out = in;
      for (const KernelNode& role : n.roles) out = Max(out, Walk(role.body, in));
      return out;
    }
    default:
      break;
  }
  // A construct's own body (a region's, an MMA group's instructions), then its commit.
  Bound out = Walk(n.body, in);
  return &n == site_ ? PlusOne(out) : out;
}

// A loop runs its body any number of times: the bound after it is the least fixpoint of
// in, body(in), body(body(in)) ... which, if it grows past kMaxBound, is none. The waits
// inside see every iteration's bound (Node takes the most).
GroupBounds::Bound GroupBounds::Loop(const KernelNode& n, Bound in) {
  Bound cur = in;
  for (uint32_t i = 0; i <= kMaxBound + 1; ++i) {
    const Bound next = Max(cur, Walk(n.body, cur));
    if (next == cur) return cur;
    cur = next;
    if (!cur.has_value()) break;
  }
  Walk(n.body, std::nullopt);  // no bound holds: every wait inside sees none
  return std::nullopt;
}

}  // namespace warptrace
