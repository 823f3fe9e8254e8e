// The event counter of RecordPlan (record_plan.h): walks a built kernel along one recorder
// thread's path and counts the events each construct records: a region adds 2, a loop
// multiplies its body by its trip count, a branch takes the larger side, a role split the
// recorder's role, an early return ends the path. It writes the plan's derivation lines
// (Explain) as it goes. Internal to jit/plan: record_plan.cc is its only user;
// tests/jit/plan:event_counter_test tests it by name.
#ifndef WARPTRACE_JIT_PLAN_EVENT_COUNTER_H_
#define WARPTRACE_JIT_PLAN_EVENT_COUNTER_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "format/layout.h"
#include "jit/builder/kernel.h"
#include "jit/builder/trip_expr.h"

namespace warptrace::plan_internal {

inline constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

inline uint64_t SatAdd(uint64_t a, uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }
inline uint64_t SatMul(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSaturated / b ? kSaturated : a * b;
}

// Events on the paths of one kind (falling through, or returning early); `possible` is
// false when no path of that kind exists.
struct Range {
  bool possible = false;
  uint64_t min = 0;
  uint64_t max = 0;
  static Range Of(uint64_t v) { return {true, v, v}; }
};

inline Range Add(Range a, Range b) {
  if (!a.possible || !b.possible) return {};
  return {true, SatAdd(a.min, b.min), SatAdd(a.max, b.max)};
}
inline Range Union(Range a, Range b) {
  if (!a.possible) return b;
  if (!b.possible) return a;
  return {true, std::min(a.min, b.min), std::max(a.max, b.max)};
}

struct Flow {
  Range fall;  // paths that reach the end of the construct
  Range ret;   // paths that return early inside it
  Range Any() const { return Union(fall, ret); }
};

inline Flow Sites(uint64_t events) { return {Range::Of(events), {}}; }

inline std::string Join(const std::vector<std::string>& terms) {
  return terms.empty() ? "0" : absl::StrJoin(terms, " + ");
}

// Counts events along the path of one recorder thread (or, with no thread, the largest
// role of each split, for Explain).
// Per-block loops' trip counts for the block being counted, by KernelNode::ordinal, and
// (for Explain) how each was derived.
struct PerBlockTrips {
  std::vector<uint64_t> trip;
  std::vector<std::string> how;
};

class Counter {
 public:
  Counter(const std::vector<std::optional<uint32_t>>& site_of_node, std::optional<uint64_t> thread,
          const PerBlockTrips& per_block, std::vector<std::string>* lines)
      : site_of_node_(site_of_node), thread_(thread), per_block_(per_block), lines_(lines) {}

  Flow Body(const std::vector<KernelNode>& body, int depth,
            std::vector<std::string>* terms);

  // The first construct on the path whose count depends on data.
  const std::string& data_dependent() const { return data_dependent_; }
  const std::string& role() const { return role_; }
  // The site table (SiteInfo::end_observed: a copy that keeps an observed end records 4
  // slots, not 2); unset, every copy on a barrier has its end derived.
  void set_sites(const std::vector<SiteInfo>* sites) { sites_ = sites; }

 private:
  void NoteDataDependent(const KernelNode& node, const Flow& f);

  size_t Reserve();
  void Fill(size_t line, const std::string& text, int depth);

  uint64_t SiteEvents(const KernelNode& node) const {
    return site_of_node_[node.ordinal].has_value() ? 2 : 0;
  }

  // Whether the recorder thread being counted is the role's (or block's) first thread, which
  // runs ArriveBy::kOneThread arrivals and issues bulk copies (for Explain: assume so).
  bool Elected() const { return !thread_.has_value() || *thread_ == role_first_; }
  // Whether the recorder thread runs an arrival by `by` (for Explain: assume so).
  bool Arrives(ArriveBy by) const {
    const uint32_t stride = ArriveByStride(by);
    if (stride == 1) return true;
    if (stride == 0) return Elected();
    return !thread_.has_value() || (*thread_ - role_first_) % stride == 0;
  }

  // Slots a warp-specialization construct records on this path.
  uint64_t HandoffSlots(const KernelNode& node) const {
    // A wait of a group kind whose ends are derived at its waits records one event with
    // the groups it leaves in flight as payload (SiteInfo::ends_at_waits), a store group
    // wait by the role's first thread alone; otherwise waits have no site.
    if (node.kind == KernelNode::Kind::kAsyncWait) {
      return ClassEndsAtWaits(GroupClass::kCpAsync) ? 2 : 0;
    }
    if (node.kind == KernelNode::Kind::kMmaWait) {
      return ClassEndsAtWaits(GroupClass::kMma) ? 2 : 0;
    }
    if (node.kind == KernelNode::Kind::kTmaStoreWait) {
      return ClassEndsAtWaits(GroupClass::kStore) && Elected() ? 2 : 0;
    }
    if (!site_of_node_[node.ordinal].has_value()) return 0;
    // A group whose end is derived at the waits records its begin alone.
    const uint64_t group = EndsAtWaits(node) ? 1 : 2;
    switch (node.kind) {
      case KernelNode::Kind::kNamedBarrier:
        return 2;
      case KernelNode::Kind::kArrive:  // one event + payload
        return Arrives(node.arrive_by) ? 2 : 0;
      // Payloads as format/links.h says (trace version 5): a wait's enter and the events
      // of in-order groups (cp.async, wgmma, bulk store groups) carry none; a copy on a
      // phase barrier records its begin alone (the dump derives its end).
      case KernelNode::Kind::kPhaseWait:  // enter, exit + payload
        return 3;
      case KernelNode::Kind::kAsyncCopy:
        // A bulk copy on a barrier, by its issuing thread: begin + payload (and, where its
        // end is observed, the end + payload); a cp.async group by every recorder: begin
        // and end.
        if (node.copy.barrier.empty()) return group;
        return !Elected() ? 0 : EndObserved(node) ? 4 : 2;
      case KernelNode::Kind::kMmaGroup:  // commit and retirement
        return group;
      case KernelNode::Kind::kTmaStore:  // issue and retirement by the role's first thread
        return Elected() ? group : 0;
      case KernelNode::Kind::kStatement:
      case KernelNode::Kind::kRegion:
      case KernelNode::Kind::kLoop:
      case KernelNode::Kind::kIf:
      case KernelNode::Kind::kRoles:
      case KernelNode::Kind::kRole:
      case KernelNode::Kind::kBarrier:
      case KernelNode::Kind::kClusterBarrier:
      case KernelNode::Kind::kReturn:
      case KernelNode::Kind::kAsyncWait:
      case KernelNode::Kind::kMmaWait:
      case KernelNode::Kind::kSetMaxRegisters:
      case KernelNode::Kind::kTmaStoreWait:
        return 0;
    }
    return 0;
  }

  bool EndsAtWaits(const KernelNode& node) const {
    const std::optional<uint32_t> site = site_of_node_[node.ordinal];
    return sites_ != nullptr && site.has_value() && *site < sites_->size() &&
           (*sites_)[*site].ends_at_waits;
  }
  bool ClassEndsAtWaits(GroupClass c) const {
    if (sites_ == nullptr) return false;
    return std::any_of(sites_->begin(), sites_->end(), [c](const SiteInfo& s) {
      return s.ends_at_waits && GroupClassOf(s) == c;
    });
  }

  bool EndObserved(const KernelNode& node) const {
    const std::optional<uint32_t> site = site_of_node_[node.ordinal];
    return sites_ != nullptr && site.has_value() && *site < sites_->size() &&
           (*sites_)[*site].end_observed;
  }

  Flow Node(const KernelNode& node, int depth, std::string* label);

  Flow Loop(const KernelNode& node, int depth, std::string* label);

  Flow Roles(const KernelNode& node, int depth, std::string* label);

  const std::vector<std::optional<uint32_t>>& site_of_node_;
  const std::vector<SiteInfo>* sites_ = nullptr;
  std::optional<uint64_t> thread_;
  const PerBlockTrips& per_block_;
  std::vector<std::string>* lines_;
  std::string data_dependent_;
  std::string role_;
  uint64_t role_first_ = 0;  // first thread of the enclosing role (0 outside roles)
};

}  // namespace warptrace::plan_internal

#endif  // WARPTRACE_JIT_PLAN_EVENT_COUNTER_H_
