#include "jit/emit/emitter.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
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
#include "jit/emit/async_sites.h"
#include "jit/emit/emit_lines.h"
#include "jit/emit/kernel_frame.h"
#include "jit/emit/record_runs.h"
#include "jit/emit/source_writer.h"
#include "jit/primitives/embedded_primitives.h"

namespace warptrace {
namespace {

class Emitter {
 public:
  Emitter(const Kernel& kernel, const RecordPlan* plan)
      : kernel_(kernel),
        plan_(plan),
        out_(absl::StrCat(kernel.name, ".cu")),
        role_{0, kernel.ThreadsPerBlock(), nullptr},
        sites_(kernel, plan, out_, role_,
               [this](const std::vector<KernelNode>& body, int depth) { Body(body, depth); }) {}

  absl::Status Check() const { return sites_.Check(); }

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
    sites_.CopyTracking();
    const bool ends_with_return =
        !kernel_.body.empty() && kernel_.body.back().kind == KernelNode::Kind::kReturn;
    if (ends_with_return) final_return_ = &kernel_.body.back();
    Body(kernel_.body, 1);
    if (plan_ != nullptr && !ends_with_return) Exits(1, "kernel end");
    Line(0, "}");
    WriteHostEntry(out_, kernel_, plan_ != nullptr);
    // Record points in straight-line runs at immediate offsets (issue 51).
    return plan_ == nullptr ? out_.Take() : out_.Take(GroupRecordRuns);
  }

 private:
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
    Line(1, "constexpr warptrace::recorder::Config warptrace_config = {");
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
    // The placement is in the state's type (format/recorder.cuh: the store each record
    // point compiles to is then a constant).
    Line(1, shared ? "warptrace::recorder::SharedUnitState warptrace_unit;"
                   : "warptrace::recorder::UnitState warptrace_unit;");
    Line(1, absl::StrCat(
                "warptrace::recorder::Prologue(warptrace_unit, warptrace_config, ", kTraceParam,
                ", ",
                shared ? "reinterpret_cast<unsigned int*>(warptrace_staging)" : "nullptr",
                ", warptrace_tid, ", kBlockLinear, ");"));
    if (plan_->kernel_site().has_value()) {
      const SiteInfo& site = plan_->sites()[*plan_->kernel_site()];
      Enter(1, site);
    }
  }

  void Enter(int depth, const SiteInfo& site) {
    Line(depth, absl::StrFormat("warptrace::recorder::Record(warptrace_unit, %du);  // enter %s",
                                site.id, site.name));
    open_sites_.push_back(site);
  }
  void Exit(int depth, const SiteInfo& site, const char* why = "") {
    Line(depth, absl::StrFormat("warptrace::recorder::Record(warptrace_unit, 0x%08xu);  // exit %s%s",
                                abi::MakeTag(site.id, true), site.name, why));
  }
  void Leave(int depth) {
    Exit(depth, open_sites_.back());
    open_sites_.pop_back();
  }

  // Exits of every open site, innermost first, then the epilogue.
  // `early`: the header records that the unit left through an early return.
  void Exits(int depth, const char* why, bool early = false) {
    sites_.ObservePendingCopies(depth);
    const std::string note = absl::StrCat(" (", why, ")");
    for (auto it = open_sites_.rbegin(); it != open_sites_.rend(); ++it) {
      Exit(depth, *it, note.c_str());
    }
    // The thread's and the block's indices read again (WARPTRACE_*_LINEAR_NOW), not kept
    // in registers across the kernel from the prologue's: those registers raised the
    // kernel's count (issue 51: warp_specialized_pipeline 40 -> 48, a block fewer per SM)
    // or were spilled (flash_attention at 168 registers).
    Line(depth, absl::StrCat("warptrace::recorder::Epilogue(warptrace_unit, warptrace_config, ",
                             kTraceParam,
                             ", WARPTRACE_THREAD_LINEAR_NOW, WARPTRACE_BLOCK_LINEAR_NOW",
                             early ? ", warptrace::abi::kFlagEarlyReturn);" : ");"));
  }

  const SiteInfo* SiteOf(const KernelNode& node) const {
    return plan_ == nullptr ? nullptr : plan_->SiteInfoOf(node.ordinal);
  }

  // A copy on a phase barrier (AsyncSites::BulkCopy).
  static bool IsBarrierCopy(const KernelNode& node) {
    return node.kind == KernelNode::Kind::kAsyncCopy && !node.copy.barrier.empty();
  }

  void Body(const std::vector<KernelNode>& body, int depth) {
    for (size_t i = 0; i < body.size();) {
      size_t run = i;
      while (run < body.size() && IsBarrierCopy(body[run])) ++run;
      if (run - i < 2) {
        Node(body[i++], depth);
        continue;
      }
      // Consecutive copies on phase barriers: every begin, then every issue (no record
      // point between their expect_tx: AsyncSites::CopyPart).
      for (size_t k = i; k < run; ++k) {
        sites_.BulkCopy(body[k], depth, AsyncSites::CopyPart::kBegin);
      }
      for (size_t k = i; k < run; ++k) {
        sites_.BulkCopy(body[k], depth, AsyncSites::CopyPart::kIssue);
      }
      i = run;
    }
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
        Loop(node, depth);
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
        // The kernel's last statement is its end, not an early return.
        if (plan_ != nullptr && &node == final_return_) Exits(depth, "kernel end");
        if (plan_ != nullptr && &node != final_return_) Exits(depth, "early return", true);
        Line(depth, "return;");
        return;
      case KernelNode::Kind::kNamedBarrier:
        NamedBarrier(node, depth);
        return;
      case KernelNode::Kind::kClusterBarrier:
        ClusterBarrier(node, depth);
        return;
      case KernelNode::Kind::kArrive:
        Arrive(node, depth);
        return;
      case KernelNode::Kind::kPhaseWait:
        PhaseWait(node, depth);
        return;
      case KernelNode::Kind::kAsyncCopy:
        if (node.copy.barrier.empty()) {
          sites_.GroupCopy(node, depth);
        } else {
          sites_.BulkCopy(node, depth);
        }
        return;
      case KernelNode::Kind::kAsyncWait:
        Line(depth, absl::StrFormat("warptrace_cp_async_wait_prior(%du);  // wait async copies",
                                    node.async_pending));
        sites_.EndGroupsOfWait(depth, node);
        return;
      case KernelNode::Kind::kMmaGroup:
        sites_.MmaGroup(node, depth);
        return;
      case KernelNode::Kind::kMmaWait:
        Line(depth, absl::StrFormat("warptrace_wgmma_wait_group(%du);  // wait mma groups",
                                    node.async_pending));
        sites_.EndGroupsOfWait(depth, node);
        return;
      case KernelNode::Kind::kTmaStore:
        sites_.TmaStore(node, depth);
        return;
      case KernelNode::Kind::kTmaStoreWait:
        Line(depth, absl::StrCat("if (", Elected(), ") {  // wait tma stores"));
        Line(depth + 1, absl::StrFormat("warptrace_bulk_wait_group_read(%du);",
                                        node.async_pending));
        sites_.EndGroupsOfWait(depth + 1, node);
        Line(depth, "}");
        return;
      case KernelNode::Kind::kSetMaxRegisters:
        Line(depth, absl::StrFormat(
                        "warptrace_setmaxnreg_%s<%du>();",
                        RegisterChangeName(node.register_change),
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
    warptrace::RecordPayload(out_, depth, site, exit, a, b, what);
  }

  const PhaseBarrierDecl& Decl(const std::string& name) const {
    return *kernel_.FindPhaseBarriers(name);  // validated by Build()
  }
  std::string Elected() const { return IsThread(role_.first); }
  void DeclareBar(int depth, const std::string& index) {
    warptrace::DeclareBar(out_, depth, index);
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

  // barrier.cluster (jit/primitives/cluster_sm90.cuh); a wait's record site spans the wait
  // (a sync's: its arrival and wait).
  void ClusterBarrier(const KernelNode& node, int depth) {
    const char* call = "warptrace_cluster_sync();";
    switch (node.cluster_op) {
      case ClusterBarrierOp::kSync: break;
      case ClusterBarrierOp::kArrive: call = "warptrace_cluster_arrive();"; break;
      case ClusterBarrierOp::kArriveRelaxed: call = "warptrace_cluster_arrive_relaxed();"; break;
      case ClusterBarrierOp::kWait: call = "warptrace_cluster_wait();"; break;
    }
    const SiteInfo* site = node.named_arrive ? nullptr : SiteOf(node);
    if (site != nullptr) Enter(depth, *site);
    Attributed(depth, node.path, absl::StrCat(call, "  // cluster barrier ", node.text));
    if (site != nullptr) Leave(depth);
  }

  void Arrive(const KernelNode& node, int depth) {
    const PhaseBarrierDecl& decl = Decl(node.text);
    const uint32_t stride = ArriveByStride(node.arrive_by);
    const bool one = stride != 1;
    Line(depth, absl::StrCat("{  // ", node.tx_bytes.empty() ? "arrive " : "arrive_expect_tx ",
                             node.text, "[", node.index, "], phase ", node.phase,
                             stride == 0     ? ", one thread"
                             : stride == 128 ? ", one thread per warpgroup"
                             : stride == 32  ? ", one thread per warp"
                                             : ""));
    int d = depth + 1;
    if (stride == 0) Line(d++, absl::StrCat("if (", Elected(), ") {"));
    if (stride > 1) {
      Line(d++, absl::StrCat("if ((warptrace_tid - ", role_.first, "u) % ", stride, "u == 0u) {"));
    }
    DeclareBar(d, node.index);
    const SiteInfo* site = SiteOf(node);
    if (site != nullptr) {
      RecordPayload(d, *site, false,
                    node.cta.empty() ? BarrierId(decl, "warptrace_bar")
                                     : BarrierIdOfCta(decl, "warptrace_bar", node.cta),
                    absl::StrCat("static_cast<unsigned int>(", node.phase, ")"), "arrival");
    }
    if (!node.cta.empty()) {  // mbarrier.arrive.release.cluster.shared::cluster
      Line(d, absl::StrCat("warptrace_mbarrier_arrive_cluster(&", node.text,
                           "[warptrace_bar], static_cast<unsigned int>(", node.cta, "));"));
    } else if (node.tx_bytes.empty()) {
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
    // The enter carries no payload: the dump links the exit (format/links.h).
    if (site != nullptr) RecordDerived(out_, d, *site, false, "enter");
    if (!sites_.PollsWhileWaiting()) {
      Attributed(d, node.path,
                 absl::StrCat("warptrace_mbarrier_wait_parity(&", node.text,
                              "[warptrace_bar], warptrace_phase & 1u);"));
    } else {
      // While it waits, the issuer of copies whose ends it observes (SiteInfo::end_observed)
      // looks at them in flight and records each completion it sees (on the host, try_wait
      // returns only when the phase completed).
      Attributed(d, node.path,
                 absl::StrCat("while (!warptrace_mbarrier_try_wait_parity(&", node.text,
                              "[warptrace_bar], warptrace_phase & 1u)) {"));
      sites_.PollWhileWaiting(d + 1);
      Line(d, "}");
    }
    // The host backend knows how many phases completed: a wait whose parity aliased an
    // older phase fails there, naming this path (a no-op on the GPU).
    Attributed(d, node.path,
               absl::StrCat("warptrace_mbarrier_check_phase(&", node.text,
                            "[warptrace_bar], warptrace_phase);"));
    // The first exit of a phase is also the derived end of the copies completing it
    // (format/links.h, version 5).
    if (site != nullptr) RecordPayload(d, *site, true, id, "warptrace_phase", "exit");
    // The issuing thread's observed copies on the element are complete now.
    sites_.EndCopiesOnWait(d, node.text, id);
    Line(depth, "}");
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

  // A profiled kernel's Exact loop counts its iterations in every thread on the host
  // backend (format/recorder.cuh, WARPTRACE_TRIPS_*; nothing on a GPU).
  void Loop(const KernelNode& node, int depth) {
    const bool check = plan_ != nullptr && plan_->host_trip_checks() &&
                       node.trip.kind() == TripCount::Kind::kExact &&
                       !Contains(node.body, {KernelNode::Kind::kReturn});
    if (check) Line(depth, absl::StrFormat("WARPTRACE_TRIPS_BEGIN(%d);", node.ordinal));
    Line(depth, LoopHead(node));
    if (check) Line(depth + 1, absl::StrFormat("WARPTRACE_TRIPS_STEP(%d);", node.ordinal));
    RecordedBody(node, depth + 1);
    Line(depth, "}");
    if (check) {
      Line(depth, absl::StrFormat("WARPTRACE_TRIPS_END(%d, %dull, \"%s\");", node.ordinal,
                                  node.trip.count(), absl::CHexEscape(node.path)));
    }
  }

  std::string LoopHead(const KernelNode& node) const {
    const std::string& v = node.text;
    if (!node.condition.empty()) {
      return absl::StrCat("for (int ", v, " = ", Operand(node.begin), "; ", node.condition, "; ",
                          node.update, ") {");
    }
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
      role_.first = uint64_t{role.first} * unit;
      role_.threads = uint64_t{role.count} * unit;
      role_.node = &role;
      Body(role.body, depth + 2);
      role_.node = nullptr;
      role_.first = 0;
      role_.threads = kernel_.ThreadsPerBlock();
    }
    Line(depth + 1, "}");
    Line(depth, "}");
  }

  const Kernel& kernel_;
  const KernelNode* final_return_ = nullptr;  // the body's last node when it is a Return
  const RecordPlan* plan_;
  SourceWriter out_;
  std::vector<SiteInfo> open_sites_;
  AsyncSites::Role role_;  // the role being emitted (the block outside roles)
  AsyncSites sites_;
};

KernelSource Common(const Kernel& kernel) {
  KernelSource source;
  source.kernel_name = kernel.name;
  source.host_entry = absl::StrCat("warptrace_host_entry_", kernel.name);
  source.params = kernel.params;
  source.grid = kernel.grid;
  source.block = kernel.block;
  source.dynamic_shared_bytes = kernel.dynamic_shared.bytes;
  if (!kernel.dynamic_shared.type.empty()) {
    source.dynamic_shared_align = kernel.dynamic_shared.align;
  }
  source.requirements = kernel.requirements;
  source.cluster = kernel.cluster;
  source.non_portable_cluster = kernel.non_portable_cluster;
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
