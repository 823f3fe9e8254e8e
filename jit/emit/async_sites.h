// The recorded async sites of one kernel being emitted: cp.async groups, bulk and TMA copies
// on phase barriers, TMA stores and wgmma groups. Their issue and completion record points
// with the links payloads of format/links.h, and the bookkeeping that finds each group's
// completion: issue counters and group histories. A copy on a phase barrier records only
// its begin, with the barrier and phase it completes: the dump derives its end from the
// waits on that phase (trace version 5), so it keeps no state and no code observes it.
// Where no unit's recorder waits on its barrier (SiteInfo::end_observed, the plan decides),
// the issuing thread observes the end as trace version 4 did (observed_copy_ends.cc): it
// polls while it waits on a phase barrier, at its next issue on the element and before the
// kernel's exit. A group kind whose sites are marked SiteInfo::ends_at_waits (the plan
// decides, trace version 5) records its begins and each of its waits alone (with the
// groups the wait leaves in flight), and a wait(0) before the exit: no counter, history
// or drain loop (CopySite::derived).
// Internal to jit/emit: the emitter (emitter.cc) owns one and calls it for those constructs,
// for the waits that complete them, and before every exit of the kernel.
//
// Where the state lives (what it costs the kernel): observed copies' per-element state in
// one shared struct touched only by the issuing thread; cp.async and TMA-store groups' in a
// shared slot per trace unit kept by the unit's recorder alone; wgmma groups' (collective)
// in registers; group histories as shift registers of site indices, never a local array.
#ifndef WARPTRACE_JIT_EMIT_ASYNC_SITES_H_
#define WARPTRACE_JIT_EMIT_ASYNC_SITES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "format/layout.h"
#include "jit/builder/kernel.h"
#include "jit/emit/emit_lines.h"
#include "jit/emit/source_writer.h"
#include "jit/plan/record_plan.h"

namespace warptrace {

class AsyncSites {
 public:
  // The role being emitted: its first thread and thread count (the block's outside roles)
  // and its node (null outside roles). The emitter updates it as it enters roles.
  struct Role {
    uint64_t first = 0;
    uint64_t threads = 0;
    const KernelNode* node = nullptr;
  };
  // Emits a construct's body (an MmaGroup's instructions) at a depth.
  using BodyFn = std::function<void(const std::vector<KernelNode>&, int)>;

  // `plan` null: unprofiled, no site is recorded (the constructs are still emitted).
  AsyncSites(const Kernel& kernel, const RecordPlan* plan, SourceWriter& out, const Role& role,
             BodyFn body);

  // InvalidArgument when a kind's history does not fit in 64 bits (over 511 recorded
  // sites of one kind with a wait leaving 7 groups in flight).
  absl::Status Check() const;

  void GroupCopy(const KernelNode& node, int depth);

  // A copy on a phase barrier: its begin record (kBegin: one record with the barrier and
  // phase as payload; for an observed end, the wait for its site's previous copy on the
  // element, the begin with (issue, barrier), the pending state), its issue (kIssue:
  // expect_tx and the copy), or both.
  // The emitter records the begins of consecutive copies before the first one's issue, so
  // that no record point sits between their expect_tx (ptxas merges a stage's expect_tx
  // into one arrive when nothing stands between them; issue 51).
  enum class CopyPart { kAll, kBegin, kIssue };
  void BulkCopy(const KernelNode& node, int depth, CopyPart part = CopyPart::kAll);
  void IssueBulkCopy(const AsyncCopySpec& c, const std::string& path, int d);

  // By the role's first thread: the begin of the store's async span, the store, its commit.
  void TmaStore(const KernelNode& node, int depth);

  // wgmma.fence, the group's instructions, the begin of its async span, wgmma.commit_group.
  void MmaGroup(const KernelNode& node, int depth);

  // Before leaving the kernel: every group and observed copy of this thread still in flight
  // completes and is recorded, so each records exactly its begin and its end (other copies
  // on a phase barrier record no end: the dump derives it).
  void ObservePendingCopies(int depth);

  // Declares and initializes the state of each recorded group site and observed copy site:
  // issue numbers, and which are still to be observed complete (where each kind's lives:
  // the file comment). Only the threads that use a piece of it touch it, so no barrier
  // orders it.
  void CopyTracking();

  // A phase wait on barrier array `barrier`: whether the thread polls its observed copies
  // in flight while it waits (then PollWhileWaiting goes inside the try_wait loop), and
  // EndCopiesOnWait after the wait (the issuing thread's observed copies on the element are
  // done). Without observed copies: false, and both emit nothing.
  bool PollsWhileWaiting() const;
  void PollWhileWaiting(int depth);
  void EndCopiesOnWait(int depth, const std::string& barrier, const std::string& barrier_id);

  // EndGroupCopies for the kind a wait node (kAsyncWait, kMmaWait, kTmaStoreWait) retires.
  void EndGroupsOfWait(int depth, const KernelNode& wait);

 private:
  // A recorded async site: a copy (cp.async group, bulk or TMA on a barrier) or a wgmma
  // group.
  struct CopySite {
    const KernelNode* node;
    SiteInfo site;
    std::string var;          // prefix of its per-thread variables
    const KernelNode* role;   // the role it is issued in (null outside roles)
    uint32_t group_index;     // among the sites of its group kind (bulk: unused)
    uint64_t issuer;          // bulk, TMA and store copies: the one thread issuing them
    // A group site whose groups in flight are the same number at each of its kind's waits
    // on every path, and none at the kernel's end (GroupBounds::ExactEverywhere, no wait
    // leaving groups in flight, no early return): its begins and ends are recorded with no
    // issue or retirement counter and no recorder-only guard (issue 51).
    bool exact;
    // A group site whose ends the dump derives at its kind's recorded waits
    // (SiteInfo::ends_at_waits, trace version 5): its begin alone, no counter, no history;
    // each wait of its kind records one event with the groups it leaves in flight.
    bool derived = false;
    bool mma() const { return node->kind == KernelNode::Kind::kMmaGroup; }
    bool store() const { return node->kind == KernelNode::Kind::kTmaStore; }
    bool bulk() const { return !mma() && !store() && !node->copy.barrier.empty(); }
    bool cp_async() const { return !mma() && !store() && !bulk(); }
    // A copy on a phase barrier whose end its issuer observes (SiteInfo::end_observed).
    bool observed() const { return bulk() && site.end_observed; }
  };
  // The per-thread group bookkeeping of cp.async groups and of wgmma groups (the same
  // scheme: completion in commit order, the most recent `pending` groups left in flight).
  //
  // Where the state lives: cp.async and TMA store groups are per thread (each thread waits
  // on its own), but only a unit's recorder stores events, so their state is kept for the
  // recorder alone, in shared memory (a slot per trace unit, indexed by `warptrace_rec`),
  // and every thread that is not a recorder skips their bookkeeping: it costs the kernel
  // no register. wgmma groups are warpgroup-collective (wait_group is .aligned: the exit
  // wait must be executed by every thread alike), so theirs is in every thread's registers.
  struct GroupKind {
    const char* history;  // the sites of the thread's most recent groups, newest lowest
    const char* wait;     // the wait primitive
    const char* what;     // in comments
    bool (CopySite::*member)() const;
    bool per_unit;        // state in shared memory, kept by the unit's recorder only
  };
  static constexpr GroupKind kCpAsyncGroups = {"warptrace_group_sites",
                                               "warptrace_cp_async_wait_prior",
                                               "cp.async groups", &CopySite::cp_async, true};
  static constexpr GroupKind kMmaGroups = {"warptrace_mma_group_sites",
                                           "warptrace_wgmma_wait_group", "wgmma groups",
                                           &CopySite::mma, false};
  static constexpr GroupKind kStoreGroups = {"warptrace_store_group_sites",
                                             "warptrace_bulk_wait_group_read", "TMA store groups",
                                             &CopySite::store, true};
  static constexpr char kRecorderUnit[] = "warptrace_rec";
  static constexpr char kTrack[] = "warptrace_track";  // the per-unit state, in shared memory
  // The observed copies' state: one struct in shared memory, so that the issuing thread
  // reaches all of it from one base address (separate arrays each cost an address register).
  static constexpr char kCopiesPrefix[] = "warptrace_copies.";
  const GroupKind& KindOf(const CopySite& c) const {
    return c.mma() ? kMmaGroups : c.store() ? kStoreGroups : kCpAsyncGroups;
  }
  // A group site's counters and a kind's history, as the code names them.
  std::string Slot(absl::string_view name, bool per_unit) const {
    return per_unit ? absl::StrCat(kTrack, "[", kRecorderUnit, "].", name) : std::string(name);
  }
  std::string Issued(const CopySite& c) const {
    return Slot(absl::StrCat(c.var, "_issued"), KindOf(c).per_unit);
  }
  std::string Done(const CopySite& c) const {
    return Slot(absl::StrCat(c.var, "_done"), KindOf(c).per_unit);
  }
  std::string HistoryVar(const GroupKind& kind) const { return Slot(kind.history, kind.per_unit); }
  // Opens `if (this thread records) {` for a per-unit kind's bookkeeping; returns the depth
  // inside. CloseRecorderOnly closes it.
  int RecorderOnly(int depth, const GroupKind& kind) {
    if (!kind.per_unit) return depth;
    Line(depth, absl::StrFormat("if (%s < %du) {", kRecorderUnit, plan_->units_per_block()));
    return depth + 1;
  }
  void CloseRecorderOnly(int depth, const GroupKind& kind) {
    if (kind.per_unit) Line(depth, "}");
  }
  // A kind's history, when some wait leaves groups of it in flight: a shift register of
  // `bits`-wide site indices (all ones: no recorded site, also what it starts with), as
  // deep as the most groups a wait of the kind leaves in flight. In one register (two when
  // over 32 bits), never an array indexed at run time (local memory).
  // The sites of a kind's most recent groups, `bits` per group, the newest lowest. Binary:
  // the site's index, all ones for a group of no recorded site. One-hot (where it needs no
  // wider word than binary): bit i for site i, 0 for none, so that a site's count among
  // the last n groups is one popcount of a mask (issue 51: the binary compares were the
  // bulk of ampere_gemm's waits).
  struct History {
    uint32_t bits = 0;   // 0: no history (no wait leaves groups in flight)
    uint32_t depth = 0;  // the most groups a wait leaves in flight (<= 7)
    bool one_hot = false;
    bool wide() const { return bits * depth > 32; }
    uint64_t none() const { return one_hot ? 0 : (uint64_t{1} << bits) - 1; }
    // What a group of site index `index` pushes.
    uint64_t Entry(uint32_t index) const { return one_hot ? uint64_t{1} << index : index; }
  };


  void Line(int depth, const std::string& text) { out_.Line(depth, text); }
  void RecordPayload(int depth, const SiteInfo& site, bool exit, const std::string& a,
                     const std::string& b, const std::string& what);
  const PhaseBarrierDecl& Decl(const std::string& name) const {
    return *kernel_.FindPhaseBarriers(name);  // validated by Build()
  }
  std::string Elected() const { return IsThread(role_.first); }
  const SiteInfo* SiteOf(const KernelNode& node) const;
  // The begin of a cp.async or TMA store group site's async span, and its issue count.
  void RecordGroupBegin(int depth, const CopySite& c);
  void DeclareBar(int depth, const std::string& index) {
    warptrace::DeclareBar(out_, depth, index);
  }
  void ForEachElement(int depth, const PhaseBarrierDecl& decl) {
    warptrace::ForEachElement(out_, depth, decl);
  }

  // Groups issued and not yet ended are complete after a wait_group 0. With `pending`
  // groups left in flight, those are the thread's most recent ones: each site keeps as
  // many copies open as it has among them (the history's lowest `pending` entries).
  // `in_recorder_block`: the caller opened RecorderOnly already. `wait`: the wait node
  // (null before an exit): where GroupBounds bounds the ends a site can have there, they
  // are that many conditional records instead of a loop.
  void EndGroupCopies(int depth, const GroupKind& kind, uint32_t pending = 0,
                      bool in_recorder_block = false, const KernelNode* wait = nullptr);
  // The site whose tag a wait of `kind` records under when the kind's ends are derived at
  // its waits (its first derived site, CopySite::derived), else null.
  const CopySite* WaitSite(const GroupKind& kind) const;
  // A wait of a derived kind leaving `pending` groups in flight, recorded at its exit: one
  // event of WaitSite(kind) with payload (pending, kNoBarrier) (format/links.h).
  void RecordGroupWait(int depth, const GroupKind& kind, uint32_t pending);

  // `warptrace_src` and `warptrace_dst`, the copy's pointers as bytes.
  void CopyPointers(int depth, const AsyncCopySpec& c);
  // A multicast copy's begin payload b: phase & 0xffff | ctaMask << 16 (format/links.h).
  static std::string MulticastLanding(const AsyncCopySpec& c);

  // Observed copy ends (observed_copy_ends.cc, trace version 4's observation kept for the
  // sites marked SiteInfo::end_observed).
  // The observed copies the thread running the code being emitted may have issued.
  std::vector<const CopySite*> Polled() const;
  static std::string IsIssuer(const CopySite& c);
  // Whether the code being emitted may run on `c`'s issuing thread: outside roles, or in a
  // role holding that thread.
  bool MayRunOnIssuer(const CopySite& c) const;
  // The begin of an observed copy (the issuer's `warptrace_bar` declared): the wait for the
  // site's previous copy on the element, the begin with (issue, barrier or multicast
  // landing), the pending state.
  void ObservedCopyBegin(int depth, const CopySite& c);
  // Records the end of the copy in flight whose issue + 1 is in `pending`, and clears it.
  void RecordCopyEnd(int depth, const CopySite& c, const std::string& pending,
                     const std::string& barrier_id);
  // Records the end of each of `c`'s copies in flight whose phase has completed, without
  // waiting (test_wait), by the issuing thread (the caller checks).
  void PollPending(int depth, const CopySite& c);
  // A copy still pending on element `bar`: wait for its phase (complete already when the
  // kernel's protocol ordered it), then record its end. `in_loop`: in the kernel's code (on
  // a GPU one recorder call, DeviceCopyEnds), not at its exits.
  void ObservePending(int depth, const CopySite& c, const std::string& bar,
                      const std::string& id, bool in_loop);
  // On a GPU, the ends of `c`'s copies on `count` elements from `first` as one recorder
  // call (recorder::RecordCopyEnds<wait>); opens the `#else` the caller fills for the host.
  void DeviceCopyEnds(int depth, const CopySite& c, const std::string& first,
                      const std::string& first_id, uint32_t count, bool wait);
  // The recorder call alone (device code; the caller writes the `#if`).
  void DeviceCopyEndsCall(int depth, const CopySite& c, const std::string& first,
                          const std::string& first_id, uint32_t count, bool wait);
  // Before the kernel's exit: the issuer's observed copies still in flight, waited for and
  // recorded.
  void DrainObservedCopies(int depth);
  // CopyTracking's part for observed copies: their issuers' struct in shared memory.
  void ObservedCopyTracking();

  // A group just committed: its site (none: not recorded) enters the kind's history.
  void PushHistory(int depth, const GroupKind& kind, const CopySite* tracked);

  // Marks the group sites that need no counters (CopySite::exact).
  void FindExactSites();
  // The wait kind that retires `c`'s groups.
  static KernelNode::Kind WaitKindOf(const CopySite& c);

  // Every recorded copy, mma group and TMA store of `body` into copies_ (in preorder, with
  // the role that issues it), and each group kind's deepest wait into its history.
  void CollectCopies(const std::vector<KernelNode>& body);
  void CollectCopy(const KernelNode& node, const KernelNode* role, uint64_t issuer);

  const CopySite* Tracked(const KernelNode& node) const;

  const Kernel& kernel_;
  const RecordPlan* plan_;
  SourceWriter& out_;
  const Role& role_;
  BodyFn body_;
  std::vector<CopySite> copies_;
  // Profiled with a WaitAsyncCopies(n > 0): each thread remembers its last n groups'
  // sites. The same for wgmma groups, with a WaitMmaGroups(n > 0), and TMA stores.
  History group_history_, mma_history_, store_history_;
  History& HistoryOf(const GroupKind& kind) {
    return &kind == &kCpAsyncGroups ? group_history_
           : &kind == &kMmaGroups   ? mma_history_
                                    : store_history_;
  }
  const History& HistoryOf(const GroupKind& kind) const {
    return const_cast<AsyncSites*>(this)->HistoryOf(kind);
  }
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_EMIT_ASYNC_SITES_H_
