// How many of one site's asynchronous groups (a cp.async copy, a wgmma group or a TMA store
// committed as its own group) a thread can have in flight at each wait of their kind,
// over every path through the kernel: the most ends one wait can have to record. Internal
// to jit/emit: AsyncSites records that many ends at the wait with straight-line code, not
// with a loop (a loop inside the kernel's loop is loop-carried control flow the unprofiled
// kernel does not have, issue 51); where no bound holds (a loop that commits without
// waiting), it keeps the loop.
//
//   GroupBounds bounds(kernel.body, &copy_node, KernelNode::Kind::kAsyncWait);
//   std::optional<uint32_t> most = bounds.AtWait(&wait_node);  // nullopt: unbounded
#ifndef WARPTRACE_JIT_EMIT_GROUP_BOUNDS_H_
#define WARPTRACE_JIT_EMIT_GROUP_BOUNDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "jit/builder/kernel.h"

namespace warptrace {

class GroupBounds {
 public:
  // Bounds above this are treated as none (the wait keeps its loop).
  static constexpr uint32_t kMaxBound = 4;

  // `site`: the node committing the groups (kAsyncCopy without a barrier, kMmaGroup,
  // kTmaStore); `wait_kind`: the waits that retire them (kAsyncWait, kMmaWait,
  // kTmaStoreWait). A wait leaving n groups in flight leaves at most n of the site's.
  GroupBounds(const std::vector<KernelNode>& body, const KernelNode* site,
              KernelNode::Kind wait_kind);

  // The most of the site's groups in flight when the thread reaches `wait`, on any path
  // and in any iteration; nullopt when unbounded (or over kMaxBound) or `wait` is not one
  // of the kind's waits in the body.
  std::optional<uint32_t> AtWait(const KernelNode* wait) const;

  // The number of the site's groups in flight at `wait` when it is the same on every path
  // and in every iteration (the least equals the most), else nullopt. A wait leaving groups
  // in flight (n > 0) may leave any of its kind's, so the least after it is 0.
  std::optional<uint32_t> ExactlyAtWait(const KernelNode* wait) const;

  // Whether every wait of the kind in the body sees an exact number of the site's groups
  // and none is in flight at the body's end: the emitter then records the site's begins
  // and ends with no issue or retirement counters (issue 51).
  bool ExactEverywhere() const;

 private:
  struct Bound {
    uint32_t least = 0;
    std::optional<uint32_t> most = 0u;  // nullopt: unbounded
    bool operator==(const Bound& o) const { return least == o.least && most == o.most; }
  };
  Bound Walk(const std::vector<KernelNode>& body, Bound in);
  Bound Node(const KernelNode& n, Bound in);
  Bound Loop(const KernelNode& n, Bound in);

  const KernelNode* site_;
  KernelNode::Kind wait_kind_;
  std::map<const KernelNode*, Bound> at_wait_;
  Bound at_end_;
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_EMIT_GROUP_BOUNDS_H_
