#include "jit/builder/kernel_tree_checks.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace warptrace {
namespace {

// Where a node sits in the tree: its preorder index and its enclosing constructs, each
// with the body it is in (0: body, 1: else body, 2 + i: role i).
struct Position {
  const KernelNode* node = nullptr;
  size_t preorder = 0;
  std::vector<std::pair<const KernelNode*, size_t>> ancestry;
};

// Every node's position, in preorder (role nodes themselves excepted, though they count in
// the preorder index).
std::vector<Position> AllPositions(const std::vector<KernelNode>& body) {
  using Ancestry = std::vector<std::pair<const KernelNode*, size_t>>;
  size_t preorder = 0;
  std::vector<Position> all;
  WalkNodes(
      body, Ancestry{},
      [&](const KernelNode& node, const Ancestry& at) {
        all.push_back(Position{&node, preorder++, at});
      },
      [&preorder](const NestedBody& nested, const Ancestry& at) {
        Ancestry inner = at;
        switch (nested.which) {
          case NestedBody::kBody:
            inner.emplace_back(nested.parent, 0);
            break;
          case NestedBody::kElseBody:
            inner.emplace_back(nested.parent, 1);
            break;
          case NestedBody::kRoleBody:
            ++preorder;  // the role node itself
            inner.emplace_back(nested.parent, 2 + nested.role_index);
            break;
        }
        return inner;
      });
  return all;
}

bool IsThreadReturn(const KernelNode& node) {
  return node.kind == KernelNode::Kind::kReturn && node.return_scope == ReturnScope::kThread;
}

// Whether some thread may reach `barrier` after another took `ret`: the return comes
// first in program order, or both are in one loop (a later iteration), or in different
// branches of one if (or different roles).
bool MayRunAfter(const Position& barrier, const Position& ret) {
  if (ret.preorder < barrier.preorder) return true;
  for (size_t i = 0; i < barrier.ancestry.size() && i < ret.ancestry.size(); ++i) {
    if (barrier.ancestry[i].first != ret.ancestry[i].first) break;
    if (barrier.ancestry[i].first->kind == KernelNode::Kind::kLoop) return true;
    if (barrier.ancestry[i].second != ret.ancestry[i].second) return true;
  }
  return false;
}

// `at` may run after `ret` for some threads while others took `ret` and so never arrive at
// `at`: what follows, and what to change.
absl::Status ArrivalAfterReturnError(const Position& at, const Position& ret,
                                     const std::string& consequence_and_fix) {
  return absl::InvalidArgumentError(absl::StrCat(
      at.node->path, ": may run after the return at ", ret.node->path,
      " (which comes first, or shares a loop or an if with it): the threads that took that "
      "return never arrive, so ",
      consequence_and_fix));
}

// A barrier that some threads may reach after others returned: those never arrive.
absl::Status CheckNoBarrierAfterThreadReturn(const std::vector<Position>& all) {
  for (const Position& barrier : all) {
    if (barrier.node->kind != KernelNode::Kind::kBarrier) continue;
    for (const Position& ret : all) {
      if (!IsThreadReturn(*ret.node) || !MayRunAfter(barrier, ret)) continue;
      return ArrivalAfterReturnError(
          barrier, ret,
          "the block would deadlock; put the barrier before any such return or, if every "
          "thread of the block takes that return together (its condition has one value in "
          "the whole block: it reads blockIdx, gridDim, blockDim, kernel arguments, memory "
          "every thread reads alike such as seq_lens[blockIdx.y], or values all threads "
          "computed alike; not threadIdx), write Return(ReturnScope::kBlock)");
    }
  }
  return absl::OkStatus();
}

// The role a node runs in: (role split, 2 + role index), or (null, 0) outside roles.
std::pair<const KernelNode*, size_t> RoleOf(const Position& p) {
  for (auto it = p.ancestry.rbegin(); it != p.ancestry.rend(); ++it) {
    if (it->first->kind == KernelNode::Kind::kRoles) return *it;
  }
  return {nullptr, 0};
}

// Whether `wait` may run after `copy` in the same thread: later in program order, or both
// in one loop (a later iteration); and in the same role.
bool MayObserve(const Position& wait, const Position& copy) {
  if (RoleOf(wait) != RoleOf(copy)) return false;
  if (wait.preorder > copy.preorder) return true;
  for (size_t i = 0; i < wait.ancestry.size() && i < copy.ancestry.size(); ++i) {
    if (wait.ancestry[i].first != copy.ancestry[i].first) break;
    if (wait.ancestry[i].first->kind == KernelNode::Kind::kLoop) return true;
    if (wait.ancestry[i].second != copy.ancestry[i].second) break;
  }
  return false;
}

// Waits on arrays nothing arrives on, and copies whose completion is never awaited.
absl::Status CheckHandoffs(const std::vector<Position>& all) {
  std::set<std::string> arrived;
  for (const Position& p : all) {
    if (p.node->kind == KernelNode::Kind::kArrive) arrived.insert(p.node->text);
  }
  for (const Position& p : all) {
    const KernelNode& node = *p.node;
    if (node.kind == KernelNode::Kind::kPhaseWait && arrived.count(node.text) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": waits on phase barrier array '", node.text,
          "', but no role arrives on it (Arrive / ArriveExpectTx), so no phase ever "
          "completes and the wait would hang; arrive on it where its data is ready, or remove "
          "the wait"));
    }
    if (node.kind == KernelNode::Kind::kMmaGroup) {
      const bool awaited = std::any_of(all.begin(), all.end(), [&](const Position& w) {
        return w.node->kind == KernelNode::Kind::kMmaWait && MayObserve(w, p);
      });
      if (!awaited) {
        return absl::InvalidArgumentError(absl::StrCat(
            node.path, ": mma group '", node.text,
            "' is never retired: no WaitMmaGroups() follows it in its role, so its "
            "accumulators are never known to be complete; call WaitMmaGroups() after it"));
      }
      continue;
    }
    if (node.kind == KernelNode::Kind::kTmaStore) {
      const bool awaited = std::any_of(all.begin(), all.end(), [&](const Position& w) {
        return w.node->kind == KernelNode::Kind::kTmaStoreWait && MayObserve(w, p);
      });
      if (!awaited) {
        return absl::InvalidArgumentError(absl::StrCat(
            node.path, ": TMA store '", node.text,
            "' is never waited for: no WaitTmaStores() follows it in its role, so its shared "
            "memory is never known to be free again; call WaitTmaStores() after it"));
      }
      continue;
    }
    if (node.kind != KernelNode::Kind::kAsyncCopy) continue;
    const bool bulk = !node.copy.barrier.empty();
    const bool awaited = std::any_of(all.begin(), all.end(), [&](const Position& w) {
      // A bulk copy is awaited by whoever waits on its barrier (the issuing thread observes
      // its completion by itself, see AsyncCopySpec).
      if (bulk) {
        return w.node->kind == KernelNode::Kind::kPhaseWait && w.node->text == node.copy.barrier;
      }
      return w.node->kind == KernelNode::Kind::kAsyncWait && MayObserve(w, p);
    });
    if (!awaited) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": the completion of async copy '", node.text, "' is never awaited: ",
          bulk ? absl::StrCat("no role waits on phase barrier array '", node.copy.barrier,
                              "' (WaitPhase), so no thread ever knows its data landed; "
                              "wait on it before reading the data")
               : "no WaitAsyncCopies() follows it in its role, so its data is never known to "
                 "have landed; call WaitAsyncCopies() after it in the same role"));
    }
  }
  return absl::OkStatus();
}

// Arrivals every thread of a role (or of the block) makes — every-thread arrivals on a phase
// barrier, named barriers — that some of those threads may skip by an earlier thread-scope
// Return: the phase or the barrier would never complete and its waiters would hang. A
// Return in another role only matters to a named barrier counting more than its own role.
absl::Status CheckNoHandoffAfterThreadReturn(const std::vector<Position>& all) {
  for (const Position& p : all) {
    const KernelNode& node = *p.node;
    const bool every_arrival =
        node.kind == KernelNode::Kind::kArrive && node.arrive_by == ArriveBy::kEveryThread;
    if (!every_arrival && node.kind != KernelNode::Kind::kNamedBarrier) continue;
    const auto role = RoleOf(p);
    bool role_local = role.first != nullptr;
    if (role_local && node.kind == KernelNode::Kind::kNamedBarrier) {
      const KernelNode& r = role.first->roles[role.second - 2];
      role_local = node.threads <= uint64_t{r.count} * RoleAxisThreads(role.first->axis);
    }
    for (const Position& ret : all) {
      if (!IsThreadReturn(*ret.node)) continue;
      const auto ret_role = RoleOf(ret);
      if (role_local && ret_role.first != nullptr && ret_role != role) continue;
      if (!MayRunAfter(p, ret)) continue;
      return ArrivalAfterReturnError(
          p, ret,
          absl::StrCat(
              every_arrival ? absl::StrCat("phase barrier '", node.text, "' never completes")
                            : absl::StrCat("named barrier ", node.barrier_id,
                                           " never completes"),
              " and its waiters hang; arrive before any such return",
              every_arrival ? ", or let one thread arrive (ArriveBy::kOneThread)" : ""));
    }
  }
  return absl::OkStatus();
}

// Walks the finished tree, checking everything that needs context.
}  // namespace

absl::Status CheckKernelTree(const std::vector<KernelNode>& body) {
  const std::vector<Position> positions = AllPositions(body);
  RETURN_IF_ERROR(CheckHandoffs(positions));
  RETURN_IF_ERROR(CheckNoHandoffAfterThreadReturn(positions));
  return CheckNoBarrierAfterThreadReturn(positions);
}

}  // namespace warptrace
