#include "jit/emit/emitter.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "format/embedded_headers.h"
#include "format/links.h"
#include "format/trace_abi.h"
#include "jit/emit/kernel_frame.h"
#include "jit/emit/source_writer.h"
#include "jit/primitives/embedded_primitives.h"

namespace warptrace {
namespace {

// The block's linear index, as the prologue and the epilogue compute it.
constexpr char kBlockLinear[] = "blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)";

// The payload of a cp.async copy's events: no barrier.
constexpr char kNoBarrierOperand[] = "0xffffffffu";
static_assert(kNoBarrier == 0xffffffffu, "kNoBarrierOperand spells format/links.h's kNoBarrier");

bool IsSimpleOperand(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::string Operand(const std::string& text) {
  return IsSimpleOperand(text) ? text : absl::StrCat("(", text, ")");
}

class Emitter {
 public:
  Emitter(const Kernel& kernel, const RecordPlan* plan)
      : kernel_(kernel), plan_(plan), out_(absl::StrCat(kernel.name, ".cu")) {
    role_threads_ = kernel.ThreadsPerBlock();
    if (plan_ != nullptr) CollectCopies(kernel.body);
    for (const GroupKind* kind : {&kCpAsyncGroups, &kMmaGroups, &kStoreGroups}) {
      History& h = HistoryOf(*kind);
      uint32_t sites = 0;
      for (const CopySite& c : copies_) sites += (c.*kind->member)() ? 1 : 0;
      if (sites == 0) h.depth = 0;
      if (h.depth == 0) continue;
      h.bits = 1;
      while ((uint64_t{1} << h.bits) - 1 < sites) ++h.bits;  // all ones stays free: none
    }
  }

  // InvalidArgument when a kind's history does not fit in 64 bits (over 511 recorded
  // sites of one kind with a wait leaving 7 groups in flight).
  absl::Status Check() const {
    for (const GroupKind* kind : {&kCpAsyncGroups, &kMmaGroups, &kStoreGroups}) {
      const History& h = HistoryOf(*kind);
      if (h.bits * h.depth <= 64) continue;
      return absl::InvalidArgumentError(absl::StrFormat(
          "kernel %s: too many recorded sites of %s (%d bits each) for the emitter to track "
          "%d groups in flight per thread in 64 bits; record fewer of them "
          "(RecordPolicy) or leave fewer in flight",
          kernel_.name, kind->what, h.bits, h.depth));
    }
    return absl::OkStatus();
  }

  std::string Run() {
    WriteHeader(out_, kernel_, plan_);
    WriteSignature(out_, kernel_, plan_ != nullptr);
    Line(0, "{");
    WriteDeclarations(out_, kernel_);
    if (plan_ != nullptr) Prologue();
    if (NeedsTid() && plan_ == nullptr) {
      Line(1, "const unsigned int warptrace_tid = threadIdx.x + blockDim.x * (threadIdx.y + "
              "blockDim.y * threadIdx.z);");
    }
    WritePhaseBarrierInit(out_, kernel_);
    CopyTracking();
    Body(kernel_.body, 1);
    const bool ends_with_return =
        !kernel_.body.empty() && kernel_.body.back().kind == KernelNode::Kind::kReturn;
    if (plan_ != nullptr && !ends_with_return) Exits(1, "kernel end");
    Line(0, "}");
    WriteHostEntry(out_, kernel_, plan_ != nullptr);
    return out_.Take();
  }

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
    bool mma() const { return node->kind == KernelNode::Kind::kMmaGroup; }
    bool store() const { return node->kind == KernelNode::Kind::kTmaStore; }
    bool bulk() const { return !mma() && !store() && !node->copy.barrier.empty(); }
    bool cp_async() const { return !mma() && !store() && !bulk(); }
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
  // The bulk copies' state: one struct in shared memory, so that the issuing thread reaches
  // all of it from one base address (separate arrays each cost an address register).
  static constexpr char kCopiesPrefix[] = "warptrace_copies.";
  static constexpr char kTrack[] = "warptrace_track";  // the per-unit state, in shared memory
  const GroupKind& KindOf(const CopySite& c) const {
    return c.mma() ? kMmaGroups : c.store() ? kStoreGroups : kCpAsyncGroups;
  }
  // A group site's counters and a kind's history, as the code names them.
  std::string Slot(const char* name, bool per_unit) const {
    return per_unit ? absl::StrCat(kTrack, "[", kRecorderUnit, "].", name) : std::string(name);
  }
  std::string Issued(const CopySite& c) const {
    return Slot(absl::StrCat(c.var, "_issued").c_str(), KindOf(c).per_unit);
  }
  std::string Done(const CopySite& c) const {
    return Slot(absl::StrCat(c.var, "_done").c_str(), KindOf(c).per_unit);
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
  struct History {
    uint32_t bits = 0;   // 0: no history (no wait leaves groups in flight)
    uint32_t depth = 0;  // the most groups a wait leaves in flight (<= 7)
    bool wide() const { return bits * depth > 32; }
    uint64_t none() const { return (uint64_t{1} << bits) - 1; }
  };

  void Line(int depth, const std::string& text) { out_.Line(depth, text); }
  void Attributed(int depth, const std::string& path, absl::string_view text) {
    out_.Attributed(depth, path, text);
  }

  bool NeedsTid() const {
    return Contains(kernel_.body, {KernelNode::Kind::kRoles}) || UsesPrimitives(kernel_);
  }

  void Prologue() {
    const TraceLayout& layout = plan_->layout();
    const bool shared = layout.placement == Placement::kShared;
    const uint32_t unit_threads = UnitThreads(layout);
    const uint32_t first = layout.unit.kind == UnitKind::kCustom ? layout.unit.first_thread : 0;
    const uint32_t recorder =
        layout.unit.kind == UnitKind::kCustom ? layout.unit.recorder_offset : 0;
    Line(1, "// warptrace prologue");
    Line(1, "constexpr warptrace::device::Config warptrace_config = {");
    Line(3, absl::StrFormat("/*unit_threads=*/%du, /*unit_first_thread=*/%du, "
                            "/*recorder_offset=*/%du,",
                            unit_threads, first, recorder));
    Line(3, absl::StrFormat("/*units_per_block=*/%du, /*capacity=*/%du, /*shared=*/%du,",
                            plan_->units_per_block(), layout.capacity, shared ? 1 : 0));
    Line(3, absl::StrFormat("/*sample_begin=*/%du, /*sample_end=*/%du, /*sample_stride=*/%du};",
                            layout.sample.begin, layout.sample.end, layout.sample.stride));
    if (shared) {
      Line(1, absl::StrFormat("__shared__ unsigned long long warptrace_staging[%d];",
                              uint64_t{plan_->units_per_block()} * layout.capacity));
    }
    Line(1, "const unsigned int warptrace_tid = threadIdx.x + blockDim.x * (threadIdx.y + "
            "blockDim.y * threadIdx.z);");
    Line(1, "warptrace::device::UnitState warptrace_unit;");
    Line(1, absl::StrCat(
                "warptrace::device::Prologue(warptrace_unit, warptrace_config, ", kTraceParam,
                ", ",
                shared ? "reinterpret_cast<unsigned int*>(warptrace_staging)" : "nullptr",
                ", warptrace_tid, ", kBlockLinear, ");"));
    if (plan_->kernel_site().has_value()) {
      const SiteInfo& site = plan_->sites()[*plan_->kernel_site()];
      Enter(1, site);
    }
  }

  void Enter(int depth, const SiteInfo& site) {
    Line(depth, absl::StrFormat("warptrace::device::Record(warptrace_unit, %du);  // enter %s",
                                site.id, site.name));
    open_sites_.push_back(site);
  }
  void Exit(int depth, const SiteInfo& site, const char* why = "") {
    Line(depth, absl::StrFormat("warptrace::device::Record(warptrace_unit, 0x%08xu);  // exit %s%s",
                                abi::MakeTag(site.id, true), site.name, why));
  }
  void Leave(int depth) {
    Exit(depth, open_sites_.back());
    open_sites_.pop_back();
  }

  // Exits of every open site, innermost first, then the epilogue.
  void Exits(int depth, const char* why) {
    ObservePendingCopies(depth);
    const std::string note = absl::StrCat(" (", why, ")");
    for (auto it = open_sites_.rbegin(); it != open_sites_.rend(); ++it) {
      Exit(depth, *it, note.c_str());
    }
    Line(depth, absl::StrCat("warptrace::device::Epilogue(warptrace_unit, warptrace_config, ",
                             kTraceParam, ", warptrace_tid, ", kBlockLinear, ");"));
  }

  const SiteInfo* SiteOf(const KernelNode& node) const {
    if (plan_ == nullptr) return nullptr;
    std::optional<uint32_t> id = plan_->SiteOf(node.ordinal);
    return id.has_value() ? &plan_->sites()[*id] : nullptr;
  }

  void Body(const std::vector<KernelNode>& body, int depth) {
    for (const KernelNode& node : body) Node(node, depth);
  }

  void Node(const KernelNode& node, int depth) {
    switch (node.kind) {
      case KernelNode::Kind::kStatement:
        Attributed(depth, node.path, node.text);
        return;
      case KernelNode::Kind::kRegion:
        Line(depth, absl::StrCat("{  // region ", node.text));
        RecordedBody(node, depth + 1);
        Line(depth, "}");
        return;
      case KernelNode::Kind::kLoop:
        Line(depth, LoopHead(node));
        RecordedBody(node, depth + 1);
        Line(depth, "}");
        return;
      case KernelNode::Kind::kIf:
        Line(depth, absl::StrCat("if (", node.text, ") {"));
        Body(node.body, depth + 1);
        if (node.has_else) {
          Line(depth, "} else {");
          Body(node.else_body, depth + 1);
        }
        Line(depth, "}");
        return;
      case KernelNode::Kind::kRoles:
        Roles(node, depth);
        return;
      case KernelNode::Kind::kBarrier: {
        const SiteInfo* site = SiteOf(node);
        if (site != nullptr) Enter(depth, *site);
        Attributed(depth, node.path, absl::StrCat("__syncthreads();  // barrier ", node.text));
        if (site != nullptr) Leave(depth);
        return;
      }
      case KernelNode::Kind::kReturn:
        if (plan_ != nullptr) Exits(depth, "early return");
        Line(depth, "return;");
        return;
      case KernelNode::Kind::kNamedBarrier:
        NamedBarrier(node, depth);
        return;
      case KernelNode::Kind::kArrive:
        Arrive(node, depth);
        return;
      case KernelNode::Kind::kPhaseWait:
        PhaseWait(node, depth);
        return;
      case KernelNode::Kind::kAsyncCopy:
        if (node.copy.barrier.empty()) {
          GroupCopy(node, depth);
        } else {
          BulkCopy(node, depth);
        }
        return;
      case KernelNode::Kind::kAsyncWait:
        Line(depth, absl::StrFormat("warptrace_cp_async_wait_prior(%du);  // wait async copies",
                                    node.async_pending));
        EndGroupCopies(depth, kCpAsyncGroups, node.async_pending);
        return;
      case KernelNode::Kind::kMmaGroup:
        MmaGroup(node, depth);
        return;
      case KernelNode::Kind::kMmaWait:
        Line(depth, absl::StrFormat("warptrace_wgmma_wait_group(%du);  // wait mma groups",
                                    node.async_pending));
        EndGroupCopies(depth, kMmaGroups, node.async_pending);
        return;
      case KernelNode::Kind::kTmaStore:
        TmaStore(node, depth);
        return;
      case KernelNode::Kind::kTmaStoreWait:
        Line(depth, absl::StrCat("if (", Elected(), ") {  // wait tma stores"));
        Line(depth + 1, absl::StrFormat("warptrace_bulk_wait_group_read(%du);",
                                        node.async_pending));
        EndGroupCopies(depth + 1, kStoreGroups, node.async_pending);
        Line(depth, "}");
        return;
      case KernelNode::Kind::kSetMaxRegisters:
        Line(depth, absl::StrFormat(
                        "warptrace_setmaxnreg_%s<%du>();",
                        node.register_change == RegisterChange::kIncrease ? "inc" : "dec",
                        node.registers));
        return;
      case KernelNode::Kind::kRole:
        return;
    }
  }

  // ---- Warp specialization (jit/builder/kernel.h). Record points carry the payloads of
  // format/links.h; an arrival is recorded before it happens and a wait's release after,
  // so a trace always shows the release later than the arrivals that caused it.

  void RecordPayload(int depth, const SiteInfo& site, bool exit, const std::string& a,
                     const std::string& b, const std::string& what) {
    Line(depth, absl::StrFormat(
                    "warptrace::device::RecordWithPayload(warptrace_unit, 0x%08xu, %s, %s);  "
                    "// %s %s",
                    abi::MakeTag(site.id, exit), a, b, what, site.name));
  }

  const PhaseBarrierDecl& Decl(const std::string& name) const {
    return *kernel_.FindPhaseBarriers(name);  // validated by Build()
  }
  static std::string BarrierId(const PhaseBarrierDecl& decl, const std::string& bar) {
    return decl.first_id == 0 ? bar : absl::StrCat(decl.first_id, "u + ", bar);
  }
  std::string Elected() const { return absl::StrCat("warptrace_tid == ", role_first_, "u"); }
  static std::string IsIssuer(const CopySite& c) {
    return absl::StrCat("warptrace_tid == ", c.issuer, "u");
  }
  // Whether the code being emitted may run on `c`'s issuing thread: outside roles, or in a
  // role holding that thread.
  bool MayRunOnIssuer(const CopySite& c) const {
    if (current_role_ == nullptr) return true;
    return c.issuer >= role_first_ && c.issuer < role_first_ + role_threads_;
  }
  // `warptrace_bar`, the element of the barrier array a construct works on.
  void DeclareBar(int depth, const std::string& index) {
    Line(depth, absl::StrCat("const unsigned int warptrace_bar = static_cast<unsigned int>(",
                             index, ");"));
  }
  // `warptrace_e`, a loop over every element of `decl` (the block is left open).
  void ForEachElement(int depth, const PhaseBarrierDecl& decl) {
    Line(depth, absl::StrFormat(
                    "for (unsigned int warptrace_e = 0; warptrace_e < %du; ++warptrace_e) {",
                    decl.size));
  }

  void NamedBarrier(const KernelNode& node, int depth) {
    if (node.named_arrive) {
      Line(depth, absl::StrFormat("warptrace_named_barrier_arrive(%du, %du);  // named barrier %s",
                                  node.barrier_id, node.threads, node.text));
      return;
    }
    const SiteInfo* site = SiteOf(node);
    if (site != nullptr) Enter(depth, *site);
    Attributed(depth, node.path,
               absl::StrFormat("warptrace_named_barrier_sync(%du, %du);  // named barrier %s",
                               node.barrier_id, node.threads, node.text));
    if (site != nullptr) Leave(depth);
  }

  void Arrive(const KernelNode& node, int depth) {
    const PhaseBarrierDecl& decl = Decl(node.text);
    const bool one = node.arrive_by == ArriveBy::kOneThread;
    Line(depth, absl::StrCat("{  // ", node.tx_bytes.empty() ? "arrive " : "arrive_expect_tx ",
                             node.text, "[", node.index, "], phase ", node.phase,
                             one ? ", one thread" : ""));
    int d = depth + 1;
    if (one) Line(d++, absl::StrCat("if (", Elected(), ") {"));
    DeclareBar(d, node.index);
    const SiteInfo* site = SiteOf(node);
    if (site != nullptr) {
      RecordPayload(d, *site, false, BarrierId(decl, "warptrace_bar"),
                    absl::StrCat("static_cast<unsigned int>(", node.phase, ")"), "arrival");
    }
    if (node.tx_bytes.empty()) {
      Line(d, absl::StrCat("(void)warptrace_mbarrier_arrive(&", node.text, "[warptrace_bar]);"));
    } else {
      Line(d, absl::StrCat("(void)warptrace_mbarrier_arrive_expect_tx(&", node.text,
                           "[warptrace_bar], static_cast<unsigned int>(", node.tx_bytes, "));"));
    }
    if (one) Line(depth + 1, "}");
    Line(depth, "}");
  }

  void PhaseWait(const KernelNode& node, int depth) {
    const PhaseBarrierDecl& decl = Decl(node.text);
    Line(depth, absl::StrCat("{  // wait ", node.text, "[", node.index, "], phase ", node.phase));
    const int d = depth + 1;
    DeclareBar(d, node.index);
    Line(d, absl::StrCat("const unsigned int warptrace_phase = static_cast<unsigned int>(",
                         node.phase, ");"));
    const SiteInfo* site = SiteOf(node);
    const std::string id = BarrierId(decl, "warptrace_bar");
    if (site != nullptr) RecordPayload(d, *site, false, id, "warptrace_phase", "enter");
    std::vector<const CopySite*> polled;
    for (const CopySite& c : copies_) {
      if (c.bulk() && c.role == current_role_ && MayRunOnIssuer(c)) polled.push_back(&c);
    }
    if (polled.empty()) {
      Attributed(d, node.path,
                 absl::StrCat("warptrace_mbarrier_wait_parity(&", node.text,
                              "[warptrace_bar], warptrace_phase & 1u);"));
    } else {
      // While it waits, the thread looks at its bulk copies in flight and records each
      // completion it sees (on the host, try_wait returns only when the phase completed).
      Attributed(d, node.path,
                 absl::StrCat("while (!warptrace_mbarrier_try_wait_parity(&", node.text,
                              "[warptrace_bar], warptrace_phase & 1u)) {"));
      // Polled copies are the role's, issued by its first thread.
      Line(d + 1, absl::StrCat("if (", IsIssuer(*polled.front()), ") {"));
      for (const CopySite* c : polled) PollPending(d + 2, *c);
      Line(d + 1, "}");
      Line(d, "}");
    }
    if (site != nullptr) RecordPayload(d, *site, true, id, "warptrace_phase", "exit");
    // The issuing thread's bulk copies on the element are complete now.
    for (const CopySite& c : copies_) {
      if (c.node->copy.barrier != node.text || !MayRunOnIssuer(c)) continue;
      Line(d, absl::StrCat("if (", IsIssuer(c), " && ", c.var, "_pending[warptrace_bar] != 0u) {"));
      RecordCopyEnd(d + 1, c, absl::StrCat(c.var, "_pending[warptrace_bar]"), id);
      Line(d, "}");
    }
    Line(depth, "}");
  }

  void GroupCopy(const KernelNode& node, int depth) {
    const AsyncCopySpec& c = node.copy;
    const uint32_t chunks = c.row_bytes / 16;
    Line(depth, absl::StrFormat("{  // copy %s: %d rows x %d bytes, cp.async by %d threads",
                                c.name, c.rows, c.row_bytes, role_threads_));
    const int d = depth + 1;
    const CopySite* tracked = Tracked(node);
    if (tracked != nullptr) {
      const int r = RecorderOnly(d, kCpAsyncGroups);
      RecordPayload(r, tracked->site, false, Issued(*tracked), kNoBarrierOperand, "begin of");
      Line(r, absl::StrCat("++", Issued(*tracked), ";"));
      CloseRecorderOnly(d, kCpAsyncGroups);
    }
    CopyPointers(d, c);
    Line(d, absl::StrFormat("for (unsigned int warptrace_i = warptrace_tid - %du; warptrace_i < "
                            "%du; warptrace_i += %du) {",
                            role_first_, uint64_t{c.rows} * chunks, role_threads_));
    Line(d + 1, absl::StrFormat("const unsigned int warptrace_r = warptrace_i / %du;", chunks));
    Line(d + 1, absl::StrFormat("const unsigned int warptrace_c = warptrace_i %% %du;", chunks));
    Line(d + 1, absl::StrFormat(
                    "warptrace_cp_async(warptrace_dst + warptrace_r * %du + warptrace_c * 16u, "
                    "warptrace_src + warptrace_r * static_cast<unsigned long long>(%s) + "
                    "warptrace_c * 16u, 16u);",
                    c.row_bytes, c.src_row_stride_bytes));
    Line(d, "}");
    Line(d, "warptrace_cp_async_commit();");
    PushHistory(d, kCpAsyncGroups, tracked);
    Line(depth, "}");
  }

  void BulkCopy(const KernelNode& node, int depth) {
    const AsyncCopySpec& c = node.copy;
    const PhaseBarrierDecl& decl = Decl(c.barrier);
    Line(depth, c.tma() ? absl::StrFormat("{  // copy %s: TMA box of %s (%d bytes) on %s[%s], "
                                          "phase %s",
                                          c.name, c.tensor_map, c.Bytes(), c.barrier,
                                          c.barrier_index, c.barrier_phase)
                        : absl::StrFormat("{  // copy %s: %d rows x %d bytes, bulk on %s[%s], "
                                          "phase %s",
                                          c.name, c.rows, c.row_bytes, c.barrier,
                                          c.barrier_index, c.barrier_phase));
    int d = depth + 1;
    Line(d++, absl::StrCat("if (", Elected(), ") {"));
    DeclareBar(d, c.barrier_index);
    const CopySite* tracked = Tracked(node);
    if (tracked != nullptr) {
      const std::string id = BarrierId(decl, "warptrace_bar");
      ObservePending(d, *tracked, "warptrace_bar", id);
      RecordPayload(d, tracked->site, false, absl::StrCat(tracked->var, "_issued"), id,
                    "begin of");
      Line(d, absl::StrCat(tracked->var, "_pending[warptrace_bar] = ++", tracked->var,
                           "_issued;"));
      Line(d, absl::StrCat(tracked->var, "_phase[warptrace_bar] = static_cast<unsigned int>(",
                           c.barrier_phase, ");"));
    }
    if (c.tma()) {
      // The box's bytes, expected before the copy can complete them.
      Line(d, absl::StrFormat("warptrace_mbarrier_expect_tx(&%s[warptrace_bar], %du);",
                              c.barrier, c.Bytes()));
      std::vector<std::string> coords;
      for (const std::string& x : c.coords) {
        coords.push_back(absl::StrCat("static_cast<int>(", x, ")"));
      }
      Line(d, absl::StrFormat("warptrace_tma_load_%dd(%s, &%s, %s, &%s[warptrace_bar]);",
                              c.coords.size(), Operand(c.dst), c.tensor_map,
                              absl::StrJoin(coords, ", "), c.barrier));
    } else {
      CopyPointers(d, c);
      Line(d, absl::StrFormat(
                  "for (unsigned int warptrace_r = 0; warptrace_r < %du; ++warptrace_r) {",
                  c.rows));
      Line(d + 1, absl::StrFormat(
                      "warptrace_bulk_copy_g2s(warptrace_dst + warptrace_r * %du, warptrace_src "
                      "+ warptrace_r * static_cast<unsigned long long>(%s), %du, "
                      "&%s[warptrace_bar]);",
                      c.row_bytes, c.src_row_stride_bytes, c.row_bytes, c.barrier));
      Line(d, "}");
    }
    Line(depth + 1, "}");
    Line(depth, "}");
  }

  // By the role's first thread: the begin of the store's async span, the store, its commit.
  void TmaStore(const KernelNode& node, int depth) {
    const AsyncCopySpec& c = node.copy;
    Line(depth, absl::StrCat("if (", Elected(), ") {  // tma store ", c.name, " to ",
                             c.tensor_map));
    const int d = depth + 1;
    const CopySite* tracked = Tracked(node);
    if (tracked != nullptr) {
      const int r = RecorderOnly(d, kStoreGroups);
      RecordPayload(r, tracked->site, false, Issued(*tracked), kNoBarrierOperand, "begin of");
      Line(r, absl::StrCat("++", Issued(*tracked), ";"));
      CloseRecorderOnly(d, kStoreGroups);
    }
    std::vector<std::string> coords;
    for (const std::string& x : c.coords) coords.push_back(absl::StrCat("static_cast<int>(", x, ")"));
    Line(d, absl::StrFormat("warptrace_tma_store_2d(&%s, %s, %s);", c.tensor_map, Operand(c.src),
                            absl::StrJoin(coords, ", ")));
    Line(d, "warptrace_bulk_commit_group();");
    PushHistory(d, kStoreGroups, tracked);
    Line(depth, "}");
  }

  // wgmma.fence, the group's instructions, the begin of its async span, wgmma.commit_group.
  void MmaGroup(const KernelNode& node, int depth) {
    Line(depth, absl::StrCat("{  // mma group ", node.text));
    const int d = depth + 1;
    Line(d, "warptrace_wgmma_fence();");
    Body(node.body, d);
    const CopySite* tracked = Tracked(node);
    if (tracked != nullptr) {
      RecordPayload(d, tracked->site, false, Issued(*tracked), kNoBarrierOperand, "commit of");
      Line(d, absl::StrCat("++", Issued(*tracked), ";"));
    }
    Line(d, "warptrace_wgmma_commit_group();");
    PushHistory(d, kMmaGroups, tracked);
    Line(depth, "}");
  }

  // `warptrace_src` and `warptrace_dst`, the copy's pointers as bytes.
  void CopyPointers(int depth, const AsyncCopySpec& c) {
    Line(depth, absl::StrCat("const char* warptrace_src = reinterpret_cast<const char*>(",
                             c.src, ");"));
    Line(depth, absl::StrCat("char* warptrace_dst = reinterpret_cast<char*>(", c.dst, ");"));
  }

  // Records the end of the bulk copy in flight whose issue + 1 is in `pending`, and clears it.
  void RecordCopyEnd(int depth, const CopySite& c, const std::string& pending,
                     const std::string& barrier_id) {
    RecordPayload(depth, c.site, true, absl::StrCat(pending, " - 1u"), barrier_id, "end of");
    Line(depth, absl::StrCat(pending, " = 0u;"));
  }

  // Records the end of each of `c`'s copies in flight whose phase has completed, without
  // waiting (test_wait).
  // By the issuing thread (the caller checks); the loop is not unrolled (it runs while the
  // thread waits, and unrolled copies of it cost compile time).
  void PollPending(int depth, const CopySite& c) {
    const PhaseBarrierDecl& decl = Decl(c.node->copy.barrier);
    const std::string pending = absl::StrCat(c.var, "_pending[warptrace_e]");
    NoUnroll(depth);
    ForEachElement(depth, decl);
    Line(depth + 1, absl::StrCat("if (", pending, " != 0u && warptrace_mbarrier_test_wait_parity(&",
                                 c.node->copy.barrier, "[warptrace_e], ", c.var,
                                 "_phase[warptrace_e] & 1u)) {"));
    RecordCopyEnd(depth + 2, c, pending, BarrierId(decl, "warptrace_e"));
    Line(depth + 1, "}");
    Line(depth, "}");
  }

  // `#pragma unroll 1` for NVRTC (the host compiler does not know it).
  void NoUnroll(int depth) {
    Line(0, "#if defined(__CUDACC__)");
    Line(depth, "#pragma unroll 1");
    Line(0, "#endif");
  }

  // A bulk copy still pending on element `bar`: wait for its phase (complete already when
  // the kernel's protocol ordered it), then record its end.
  void ObservePending(int depth, const CopySite& c, const std::string& bar,
                      const std::string& id) {
    const std::string pending = absl::StrCat(c.var, "_pending[", bar, "]");
    Line(depth, absl::StrCat("if (", pending, " != 0u) {"));
    Line(depth + 1, absl::StrCat("warptrace_mbarrier_wait_parity(&", c.node->copy.barrier, "[",
                                 bar, "], ", c.var, "_phase[", bar, "] & 1u);"));
    RecordCopyEnd(depth + 1, c, pending, id);
    Line(depth, "}");
  }

  // A group just committed: its site (none: not recorded) enters the kind's history.
  void PushHistory(int depth, const GroupKind& kind, const CopySite* tracked) {
    const History& h = HistoryOf(kind);
    if (h.bits == 0) return;
    const uint64_t site = tracked != nullptr ? tracked->group_index : h.none();
    const std::string var = HistoryVar(kind);
    const std::string push = absl::StrFormat("%s = (%s << %d) | %d%s;", var, var, h.bits, site,
                                             h.wide() ? "ull" : "u");
    if (!kind.per_unit) {
      Line(depth, push);
    } else {
      Line(depth, absl::StrFormat("if (%s < %du) %s", kRecorderUnit, plan_->units_per_block(),
                                  push));
    }
  }

  // Groups issued and not yet ended are complete after a wait_group 0. With `pending`
  // groups left in flight, those are the thread's most recent ones: each site keeps as
  // many copies open as it has among them (the history's lowest `pending` entries).
  // `in_recorder_block`: the caller opened RecorderOnly already.
  void EndGroupCopies(int depth, const GroupKind& kind, uint32_t pending = 0,
                      bool in_recorder_block = false) {
    const History& h = HistoryOf(kind);
    if (h.bits == 0) pending = 0;  // no history: the plan has no wait leaving groups in flight
    if (!std::any_of(copies_.begin(), copies_.end(),
                     [&](const CopySite& c) { return (c.*kind.member)(); })) {
      return;
    }
    const int d = in_recorder_block ? depth : RecorderOnly(depth, kind);
    for (const CopySite& c : copies_) {
      if (!(c.*kind.member)()) continue;
      std::string keep;
      if (pending > 0) {
        std::vector<std::string> terms;
        for (uint32_t j = 0; j < pending; ++j) {
          terms.push_back(absl::StrFormat("(((%s >> %du) & %d%s) == %du ? 1u : 0u)",
                                          HistoryVar(kind), j * h.bits, h.none(),
                                          h.wide() ? "ull" : "u", c.group_index));
        }
        keep = absl::StrCat(" + (", absl::StrJoin(terms, " + "), ")");
      }
      NoUnroll(d);  // usually one or two iterations; unrolled, a lot of code
      Line(d, absl::StrCat("for (; ", Done(c), keep, " < ", Issued(c), "; ++", Done(c), ") {"));
      RecordPayload(d + 1, c.site, true, Done(c), kNoBarrierOperand,
                    c.mma() ? "retirement of" : "end of");
      Line(d, "}");
    }
    if (!in_recorder_block) CloseRecorderOnly(depth, kind);
  }

  // Before leaving the kernel: every copy of this thread still in flight completes and is
  // recorded, so each copy records exactly its begin and its end.
  void ObservePendingCopies(int depth) {
    for (const GroupKind* kind : {&kCpAsyncGroups, &kMmaGroups, &kStoreGroups}) {
      std::vector<std::string> open;
      for (const CopySite& c : copies_) {
        if ((c.*kind->member)()) open.push_back(absl::StrCat(Done(c), " < ", Issued(c)));
      }
      if (open.empty()) continue;
      const int d = RecorderOnly(depth, *kind);
      Line(d, absl::StrCat("if (", absl::StrJoin(open, " || "), ") ", kind->wait, "(0u);"));
      EndGroupCopies(d, *kind, 0, /*in_recorder_block=*/true);
      CloseRecorderOnly(depth, *kind);
    }
    for (const CopySite& c : copies_) {
      if (!c.bulk() || !MayRunOnIssuer(c)) continue;
      const PhaseBarrierDecl& decl = Decl(c.node->copy.barrier);
      Line(depth, absl::StrCat("if (", IsIssuer(c), ") {"));
      NoUnroll(depth + 1);
      ForEachElement(depth + 1, decl);
      ObservePending(depth + 2, c, "warptrace_e", BarrierId(decl, "warptrace_e"));
      Line(depth + 1, "}");
      Line(depth, "}");
    }
  }

  // The state of each recorded copy site: issue numbers, and which copies are still to be
  // observed complete. Group kinds: per thread, in registers. Bulk and TMA copies on a
  // barrier array: the issue count in a register of the issuing thread, the per-element
  // state in shared memory (indexed by a run-time stage, it would be a local-memory array
  // in every thread's stack); only the issuing thread touches it, so no barrier orders it.
  void CopyTracking() {
    const uint32_t units = plan_ == nullptr ? 0 : plan_->units_per_block();
    // The per-unit state: one struct per trace unit in one shared array, so that the
    // recorder reaches all of it from one base address.
    std::vector<std::string> fields, recorder_init, copy_fields, copy_init;
    for (const GroupKind* kind : {&kCpAsyncGroups, &kMmaGroups, &kStoreGroups}) {
      const History& h = HistoryOf(*kind);
      if (h.bits == 0) continue;
      const std::string comment =
          absl::StrFormat("  // sites of the last %d %s, %d bits each", h.depth, kind->what, h.bits);
      const char* type = h.wide() ? "unsigned long long" : "unsigned int";
      const char* all_ones = h.wide() ? "~0ull" : "~0u";
      if (!kind->per_unit) {
        Line(1, absl::StrCat(type, " ", kind->history, " = ", all_ones, ";", comment));
      } else {
        // 64-bit fields first: no padding.
        fields.insert(h.wide() ? fields.begin() : fields.end(),
                      absl::StrCat(type, " ", kind->history, ";", comment));
        recorder_init.push_back(absl::StrCat(HistoryVar(*kind), " = ", all_ones, ";"));
      }
    }
    for (const CopySite& c : copies_) {
      if (!c.bulk() && !KindOf(c).per_unit) {  // wgmma groups: registers
        Line(1, absl::StrCat("unsigned int ", c.var, "_issued = 0u;  // copy ", c.site.name));
        Line(1, absl::StrCat("unsigned int ", c.var, "_done = 0u;"));
        continue;
      }
      if (!c.bulk()) {  // cp.async and TMA store groups: the recorder's, in shared memory
        fields.push_back(absl::StrCat("unsigned int ", c.var, "_issued;  // copy ", c.site.name));
        fields.push_back(absl::StrCat("unsigned int ", c.var, "_done;"));
        recorder_init.push_back(absl::StrCat(Issued(c), " = 0u;"));
        recorder_init.push_back(absl::StrCat(Done(c), " = 0u;"));
        continue;
      }
      const uint32_t size = Decl(c.node->copy.barrier).size;
      const std::string bare(absl::StripPrefix(c.var, kCopiesPrefix));
      copy_fields.push_back(absl::StrCat("unsigned int ", bare, "_issued;  // copy ", c.site.name,
                                         ", by thread ", c.issuer));
      copy_fields.push_back(absl::StrCat("unsigned int ", bare, "_pending[", size,
                                         "];  // issue + 1 of the copy in flight per element, or 0"));
      copy_fields.push_back(absl::StrCat("unsigned int ", bare, "_phase[", size, "];"));
      copy_init.push_back(absl::StrCat("if (", IsIssuer(c), ") {"));
      copy_init.push_back(absl::StrCat("  ", c.var, "_issued = 0u;"));
      copy_init.push_back(absl::StrFormat("  for (unsigned int warptrace_e = 0; warptrace_e < %du; "
                                          "++warptrace_e) %s_pending[warptrace_e] = 0u;",
                                          size, c.var));
      copy_init.push_back("}");
    }
    if (!copy_fields.empty()) {
      Line(1, "struct warptrace_copy_track {  // the bulk copies' state, their issuers'");
      for (const std::string& field : copy_fields) Line(2, field);
      Line(1, "};");
      Line(1, absl::StrCat("__shared__ warptrace_copy_track ",
                           absl::StripSuffix(kCopiesPrefix, "."), ";"));
      for (const std::string& line : copy_init) Line(1, line);
    }
    if (recorder_init.empty()) return;
    Line(1, "struct warptrace_unit_track {  // a trace unit's group bookkeeping, its recorder's");
    for (const std::string& field : fields) Line(2, field);
    Line(1, "};");
    Line(1, absl::StrCat("__shared__ warptrace_unit_track ", kTrack, "[", units, "];"));
    Line(1, absl::StrFormat("// the trace unit this thread records (%d: none; only a recorder "
                            "keeps the state above)",
                            units));
    Line(1, absl::StrCat("const unsigned int ", kRecorderUnit,
                         " = warptrace::device::RecordedUnit(warptrace_config, warptrace_tid, ",
                         kBlockLinear, ");"));
    Line(1, absl::StrFormat("if (%s < %du) {", kRecorderUnit, units));
    for (const std::string& init : recorder_init) Line(2, init);
    Line(1, "}");
  }

  void CollectCopies(const std::vector<KernelNode>& body, const KernelNode* role = nullptr,
                     uint64_t issuer = 0) {
    for (const KernelNode& n : body) {
      if (n.kind == KernelNode::Kind::kAsyncCopy || n.kind == KernelNode::Kind::kMmaGroup ||
          n.kind == KernelNode::Kind::kTmaStore) {
        if (const SiteInfo* site = SiteOf(n)) {
          const bool mma = n.kind == KernelNode::Kind::kMmaGroup;
          const bool store = n.kind == KernelNode::Kind::kTmaStore;
          const bool bulk = !mma && !store && !n.copy.barrier.empty();
          uint32_t group_index = 0;
          for (const CopySite& c : copies_) {
            group_index += mma ? c.mma() : store ? c.store() : (!bulk && c.cp_async());
          }
          // A bulk copy's state is a member of the block's warptrace_copies (CopyTracking).
          copies_.push_back(CopySite{&n, *site,
                                     absl::StrCat(bulk ? kCopiesPrefix : "",
                                                  mma ? "warptrace_mma" : "warptrace_copy",
                                                  n.ordinal),
                                     role, group_index, issuer});
        }
      }
      CollectCopies(n.body, role, issuer);
      CollectCopies(n.else_body, role, issuer);
      for (const KernelNode& r : n.roles) {
        CollectCopies(r.body, &r, uint64_t{r.first} * RoleAxisThreads(n.axis));
      }
      const GroupKind* kind = n.kind == KernelNode::Kind::kAsyncWait  ? &kCpAsyncGroups
                              : n.kind == KernelNode::Kind::kMmaWait  ? &kMmaGroups
                              : n.kind == KernelNode::Kind::kTmaStoreWait ? &kStoreGroups
                                                                          : nullptr;
      if (kind != nullptr) {
        History& h = HistoryOf(*kind);
        h.depth = std::max(h.depth, n.async_pending);
      }
    }
  }

  const CopySite* Tracked(const KernelNode& node) const {
    for (const CopySite& c : copies_) {
      if (c.node == &node) return &c;
    }
    return nullptr;
  }

  static bool EndsWithReturn(const std::vector<KernelNode>& body) {
    return !body.empty() && body.back().kind == KernelNode::Kind::kReturn;
  }

  // A region's or loop iteration's body between the enter and exit of its site (if it
  // has one); a body ending in a return has recorded the exit already.
  void RecordedBody(const KernelNode& node, int depth) {
    const SiteInfo* site = SiteOf(node);
    if (site != nullptr) Enter(depth, *site);
    Body(node.body, depth);
    if (site != nullptr && !EndsWithReturn(node.body)) Leave(depth);
    if (site != nullptr && EndsWithReturn(node.body)) open_sites_.pop_back();
  }

  std::string LoopHead(const KernelNode& node) const {
    const std::string& v = node.text;
    const std::string step = node.step == "1" ? absl::StrCat("++", v)
                                              : absl::StrCat(v, " += ", Operand(node.step));
    return absl::StrCat("for (int ", v, " = ", Operand(node.begin), "; ", v, " < ",
                        Operand(node.end), "; ", step, ") {");
  }

  void Roles(const KernelNode& node, int depth) {
    const uint32_t unit = RoleAxisThreads(node.axis);
    std::vector<std::string> parts;
    for (const KernelNode& role : node.roles) {
      parts.push_back(role.count == 1
                          ? absl::StrCat(role.text, " ", role.first)
                          : absl::StrCat(role.text, " ", role.first, "-",
                                         role.first + role.count - 1));
    }
    Line(depth, absl::StrCat("{  // roles by ", RoleAxisName(node.axis), ": ",
                             absl::StrJoin(parts, ", ")));
    Line(depth + 1, absl::StrCat("const unsigned int warptrace_role = warptrace_tid / ", unit,
                                 "u;"));
    for (size_t i = 0; i < node.roles.size(); ++i) {
      const KernelNode& role = node.roles[i];
      const bool last = i + 1 == node.roles.size();
      const std::string head =
          last ? "} else {" : absl::StrCat("if (warptrace_role < ", role.first + role.count, "u) {");
      if (i == 0) {
        Line(depth + 1, last ? "{" : head);
      } else {
        Line(depth + 1, last ? head : absl::StrCat("} else ", head));
      }
      Line(depth + 2, absl::StrCat("// role ", role.text));
      if (!role.index_var.empty()) {
        Line(depth + 2, absl::StrCat("const int ", role.index_var,
                                     " = static_cast<int>(warptrace_role - ", role.first, "u);"));
      }
      role_first_ = uint64_t{role.first} * unit;
      role_threads_ = uint64_t{role.count} * unit;
      current_role_ = &role;
      Body(role.body, depth + 2);
      current_role_ = nullptr;
      role_first_ = 0;
      role_threads_ = kernel_.ThreadsPerBlock();
    }
    Line(depth + 1, "}");
    Line(depth, "}");
  }

  const Kernel& kernel_;
  const RecordPlan* plan_;
  SourceWriter out_;
  std::vector<SiteInfo> open_sites_;
  std::vector<CopySite> copies_;
  // The enclosing role's first thread and thread count (the block's outside roles).
  uint64_t role_first_ = 0;
  uint64_t role_threads_ = 0;
  const KernelNode* current_role_ = nullptr;  // the role being emitted, if any
  // Profiled with a WaitAsyncCopies(n > 0): each thread remembers its last n groups'
  // sites. The same for wgmma groups, with a WaitMmaGroups(n > 0), and TMA stores.
  History group_history_, mma_history_, store_history_;
  History& HistoryOf(const GroupKind& kind) {
    return &kind == &kCpAsyncGroups ? group_history_
           : &kind == &kMmaGroups   ? mma_history_
                                    : store_history_;
  }
  const History& HistoryOf(const GroupKind& kind) const {
    return const_cast<Emitter*>(this)->HistoryOf(kind);
  }
};

KernelSource Common(const Kernel& kernel) {
  KernelSource source;
  source.kernel_name = kernel.name;
  source.host_entry = absl::StrCat("warptrace_host_entry_", kernel.name);
  source.params = kernel.params;
  source.grid = kernel.grid;
  source.block = kernel.block;
  source.dynamic_shared_bytes = kernel.dynamic_shared.bytes;
  source.sm90a_use = kernel.sm90a_use;
  return source;
}

}  // namespace

KernelSource EmitUnprofiledKernel(const Kernel& kernel) {
  KernelSource source = Common(kernel);
  // A preamble may include <math_constants.h>, which comes with the primitives' headers.
  if (IncludesPrimitives(kernel) || !kernel.preamble.empty()) {
    source.headers = EmbeddedPrimitivesHeaders();
  }
  source.source = Emitter(kernel, nullptr).Run();
  return source;
}

absl::StatusOr<KernelSource> EmitKernel(const Kernel& kernel, const RecordPlan& plan) {
  const TraceLayout& layout = plan.layout();
  if (layout.kernel_name != kernel.name || !(layout.grid == kernel.grid) ||
      !(layout.block == kernel.block)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", kernel.name, ": the record plan was made for kernel ", layout.kernel_name,
        " (or another launch shape); make the plan from this kernel"));
  }
  KernelSource source = Common(kernel);
  Emitter emitter(kernel, &plan);
  RETURN_IF_ERROR(emitter.Check());
  source.source = emitter.Run();
  source.headers = EmbeddedDeviceHeaders();
  if (IncludesPrimitives(kernel) || !kernel.preamble.empty()) {
    for (const EmbeddedFile& header : EmbeddedPrimitivesHeaders()) {
      source.headers.push_back(header);
    }
  }
  source.params.push_back(KernelParam{"unsigned int*", kTraceParam, 8, true});
  source.profiled = true;
  source.layout = layout;
  return source;
}

absl::StatusOr<KernelSource> EmitKernel(const Kernel& kernel, const ProfileOptions& options) {
  if (!options.enabled) return EmitUnprofiledKernel(kernel);
  ASSIGN_OR_RETURN(RecordPlan plan, RecordPlan::Create(kernel, options));
  return EmitKernel(kernel, plan);
}

}  // namespace warptrace
