#include "jit/emit/group_bounds.h"

#include <algorithm>

namespace warptrace {
namespace {

using Most = std::optional<uint32_t>;

Most Max(Most a, Most b) {
  if (!a.has_value() || !b.has_value()) return std::nullopt;
  return std::max(*a, *b);
}

Most PlusOne(Most a) {
  if (!a.has_value() || *a >= GroupBounds::kMaxBound) return std::nullopt;
  return *a + 1;
}

}  // namespace

GroupBounds::GroupBounds(const std::vector<KernelNode>& body, const KernelNode* site,
                         KernelNode::Kind wait_kind)
    : site_(site), wait_kind_(wait_kind) {
  at_end_ = Walk(body, Bound{});
}

std::optional<uint32_t> GroupBounds::AtWait(const KernelNode* wait) const {
  const auto it = at_wait_.find(wait);
  return it == at_wait_.end() ? std::nullopt : it->second.most;
}

std::optional<uint32_t> GroupBounds::ExactlyAtWait(const KernelNode* wait) const {
  const auto it = at_wait_.find(wait);
  if (it == at_wait_.end() || it->second.most != it->second.least) return std::nullopt;
  return it->second.least;
}

bool GroupBounds::ExactEverywhere() const {
  if (at_end_.most != 0u) return false;
  for (const auto& [wait, bound] : at_wait_) {
    if (bound.most != bound.least) return false;
  }
  return true;
}

namespace {

// Either of two paths: the least of the least, the most of the most.
template <typename B>
B Either(const B& a, const B& b) {
  return B{std::min(a.least, b.least), Max(a.most, b.most)};
}

}  // namespace

GroupBounds::Bound GroupBounds::Walk(const std::vector<KernelNode>& body, Bound in) {
  for (const KernelNode& n : body) in = Node(n, in);
  return in;
}

GroupBounds::Bound GroupBounds::Node(const KernelNode& n, Bound in) {
  if (n.kind == wait_kind_) {
    const auto [it, inserted] = at_wait_.emplace(&n, in);
    if (!inserted) it->second = Either(it->second, in);
    // What the wait leaves in flight: at most its count, and no more than there were; with
    // a count, possibly none of this site's.
    const uint32_t most = in.most.has_value() ? std::min(*in.most, n.async_pending)
                                              : n.async_pending;
    return Bound{0, most};
  }
  switch (n.kind) {
    case KernelNode::Kind::kLoop:
      return Loop(n, in);
    case KernelNode::Kind::kIf:
      return Either(Walk(n.body, in), n.has_else ? Walk(n.else_body, in) : in);
    case KernelNode::Kind::kRoles: {
      // Each role's threads take one path: the least and most over the roles.
      Bound out = in;
      for (const KernelNode& role : n.roles) out = Either(out, Walk(role.body, in));
      return out;
    }
    default:
      break;
  }
  // A construct's own body (a region's, an MMA group's instructions), then its commit.
  Bound out = Walk(n.body, in);
  if (&n == site_) out = Bound{out.least + 1, PlusOne(out.most)};
  return out;
}

// A loop runs its body any number of times: the bound after it is the least fixpoint of
// in, body(in), body(body(in)) ... which, if it grows past kMaxBound, is none. The waits
// inside see every iteration's bound (Node merges them).
GroupBounds::Bound GroupBounds::Loop(const KernelNode& n, Bound in) {
  Bound cur = in;
  for (uint32_t i = 0; i <= kMaxBound + 1; ++i) {
    const Bound next = Either(cur, Walk(n.body, cur));
    if (next == cur) return cur;
    cur = next;
    if (!cur.most.has_value()) break;
  }
  Walk(n.body, Bound{0, std::nullopt});  // no bound holds: every wait inside sees none
  return Bound{0, std::nullopt};
}

}  // namespace warptrace
