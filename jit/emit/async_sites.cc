#include "jit/emit/async_sites.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "format/trace_abi.h"
#include "jit/emit/emit_lines.h"
#include "jit/emit/group_bounds.h"

namespace warptrace {

AsyncSites::AsyncSites(const Kernel& kernel, const RecordPlan* plan, SourceWriter& out,
                       const Role& role, BodyFn body)
    : kernel_(kernel), plan_(plan), out_(out), role_(role), body_(std::move(body)) {
  if (plan_ != nullptr) CollectCopies(kernel.body);
  for (const GroupKind* kind : {&kCpAsyncGroups, &kMmaGroups, &kStoreGroups}) {
    History& h = HistoryOf(*kind);
    if (WaitSite(*kind) != nullptr) h.depth = 0;  // ends derived at the waits: no history
    uint32_t sites = 0;
    for (const CopySite& c : copies_) sites += (c.*kind->member)() ? 1 : 0;
    if (sites == 0) h.depth = 0;
    if (h.depth == 0) continue;
    h.bits = 1;
    while ((uint64_t{1} << h.bits) - 1 < sites) ++h.bits;  // all ones stays free: none
    if (sites * h.depth <= (h.wide() ? 64u : 32u)) {
      h.one_hot = true;
      h.bits = sites;
    }
  }
  FindExactSites();
}

namespace {

bool HasReturn(const std::vector<KernelNode>& body) {
  for (const KernelNode& n : body) {
    if (n.kind == KernelNode::Kind::kReturn || HasReturn(n.body) || HasReturn(n.else_body)) {
      return true;
    }
    for (const KernelNode& role : n.roles) {
      if (HasReturn(role.body)) return true;
    }
  }
  return false;
}

}  // namespace

KernelNode::Kind AsyncSites::WaitKindOf(const CopySite& c) {
  return c.mma() ? KernelNode::Kind::kMmaWait
         : c.store() ? KernelNode::Kind::kTmaStoreWait
                     : KernelNode::Kind::kAsyncWait;
}

// A site is exact when its kind keeps no history (every wait of the kind waits for all),
// the kernel has no early return (whose exit would need the count in flight there), and
// GroupBounds finds the count exact at every wait and zero at the end.
void AsyncSites::FindExactSites() {
  if (HasReturn(kernel_.body)) return;
  for (CopySite& c : copies_) {
    if (c.bulk() || c.derived || HistoryOf(KindOf(c)).bits != 0) continue;
    c.exact = GroupBounds(kernel_.body, c.node, WaitKindOf(c)).ExactEverywhere();
  }
}

void AsyncSites::RecordPayload(int depth, const SiteInfo& site, bool exit, const std::string& a,
                               const std::string& b, const std::string& what) {
  warptrace::RecordPayload(out_, depth, site, exit, a, b, what);
}

const SiteInfo* AsyncSites::SiteOf(const KernelNode& node) const {
  return plan_ == nullptr ? nullptr : plan_->SiteInfoOf(node.ordinal);
}

void AsyncSites::EndGroupsOfWait(int depth, const KernelNode& wait) {
  const GroupKind& kind = wait.kind == KernelNode::Kind::kAsyncWait ? kCpAsyncGroups
                          : wait.kind == KernelNode::Kind::kMmaWait ? kMmaGroups
                                                                    : kStoreGroups;
  EndGroupCopies(depth, kind, wait.async_pending, /*in_recorder_block=*/false, &wait);
}

// InvalidArgument when a kind's history does not fit in 64 bits (over 511 recorded
// sites of one kind with a wait leaving 7 groups in flight).
absl::Status AsyncSites::Check() const {
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

const AsyncSites::CopySite* AsyncSites::WaitSite(const GroupKind& kind) const {
  for (const CopySite& c : copies_) {
    if ((c.*kind.member)() && c.derived) return &c;
  }
  return nullptr;
}

void AsyncSites::RecordGroupWait(int depth, const GroupKind& kind, uint32_t pending) {
  // The dump ends, here, every group of the kind this unit began but the newest `pending`
  // (they complete in commit order): no counter, no history, no loop (issue 51).
  RecordPayload(depth, WaitSite(kind)->site, true, absl::StrCat(pending, "u"), "0xffffffffu",
                absl::StrCat("wait (", pending, " left in flight) ending ", kind.what, ", under"));
}

void AsyncSites::RecordGroupBegin(int depth, const CopySite& c) {
  if (c.exact || c.derived) {  // no counter: the ends at the waits are a known number
    RecordDerived(out_, depth, c.site, false, "begin of");
    return;
  }
  const GroupKind& kind = KindOf(c);
  const int r = RecorderOnly(depth, kind);
  RecordDerived(out_, r, c.site, false, "begin of");  // issue = Issued(c), by order
  Line(r, absl::StrCat("++", Issued(c), ";"));
  CloseRecorderOnly(depth, kind);
}

void AsyncSites::GroupCopy(const KernelNode& node, int depth) {
  const AsyncCopySpec& c = node.copy;
  const uint32_t chunks = c.row_bytes / 16;
  Line(depth, absl::StrFormat("{  // copy %s: %d rows x %d bytes, cp.async by %d threads",
                              c.name, c.rows, c.row_bytes, role_.threads));
  const int d = depth + 1;
  const CopySite* tracked = Tracked(node);
  if (tracked != nullptr) RecordGroupBegin(d, *tracked);
  CopyPointers(d, c);
  Line(d, absl::StrFormat("for (unsigned int warptrace_i = warptrace_tid - %du; warptrace_i < "
                          "%du; warptrace_i += %du) {",
                          role_.first, uint64_t{c.rows} * chunks, role_.threads));
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

// The expect_tx and the copy of BulkCopy (by the elected thread, `warptrace_bar` declared).
void AsyncSites::IssueBulkCopy(const AsyncCopySpec& c, const std::string& path, int d) {
  if (c.tma()) {
    // The box's bytes, expected before the copy can complete them (with multicast, one box
    // from every CTA of the mask).
    const std::string mask =
        c.multicast_mask.empty()
            ? ""
            : absl::StrCat("static_cast<unsigned short>(", c.multicast_mask, ")");
    Line(d, c.multicast_mask.empty()
                ? absl::StrFormat("warptrace_mbarrier_expect_tx(&%s[warptrace_bar], %du);",
                                  c.barrier, c.Bytes())
                : absl::StrFormat("warptrace_mbarrier_expect_tx(&%s[warptrace_bar], %du * "
                                  "static_cast<unsigned int>(__popc(%s)));",
                                  c.barrier, c.Bytes(), mask));
    std::vector<std::string> coords;
    for (const std::string& x : c.coords) {
      coords.push_back(absl::StrCat("static_cast<int>(", x, ")"));
    }
    // Attributed: the host backend names the copy by its builder path (__builtin_FILE) when
    // a wgmma descriptor reads the box in another layout than the copy wrote.
    out_.Attributed(
        d, path,
        c.multicast_mask.empty()
            ? absl::StrFormat("warptrace_tma_load_%dd(%s, &%s, %s, &%s[warptrace_bar]);",
                              c.coords.size(), Operand(c.dst), c.tensor_map,
                              absl::StrJoin(coords, ", "), c.barrier)
            : absl::StrFormat(
                  "warptrace_tma_load_%dd_multicast(%s, &%s, %s, &%s[warptrace_bar], %s);",
                  c.coords.size(), Operand(c.dst), c.tensor_map, absl::StrJoin(coords, ", "),
                  c.barrier, mask));
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
}

void AsyncSites::BulkCopy(const KernelNode& node, int depth, CopyPart part) {
  const AsyncCopySpec& c = node.copy;
  const PhaseBarrierDecl& decl = Decl(c.barrier);
  const CopySite* tracked = Tracked(node);
  const bool begin = part != CopyPart::kIssue;
  const bool issue = part != CopyPart::kBegin;
  if (!issue && tracked == nullptr) return;  // no begin to record
  if (part == CopyPart::kBegin) {
    Line(depth, absl::StrFormat("{  // begin of copy %s on %s[%s]", c.name, c.barrier,
                                c.barrier_index));
  } else if (c.tma()) {
    Line(depth, absl::StrFormat("{  // copy %s: TMA box of %s (%d bytes) on %s[%s], phase %s",
                                c.name, c.tensor_map, c.Bytes(), c.barrier, c.barrier_index,
                                c.barrier_phase));
  } else {
    Line(depth, absl::StrFormat("{  // copy %s: %d rows x %d bytes, bulk on %s[%s], phase %s",
                                c.name, c.rows, c.row_bytes, c.barrier, c.barrier_index,
                                c.barrier_phase));
  }
  int d = depth + 1;
  Line(d++, absl::StrCat("if (", Elected(), ") {"));
  DeclareBar(d, c.barrier_index);
  if (begin && tracked != nullptr && tracked->observed()) {
    ObservedCopyBegin(d, *tracked);
  } else if (begin && tracked != nullptr) {
    // The begin alone, with the barrier and phase the copy completes: the dump derives its
    // end from the first recorded wait exit on that phase (format/links.h, version 5). A
    // multicast copy's b holds its phase and CTA mask: the dump links it into every
    // destination CTA.
    const std::string begin_b =
        c.multicast_mask.empty()
            ? absl::StrCat("static_cast<unsigned int>(", c.barrier_phase, ")")
            : MulticastLanding(c);
    RecordPayload(d, tracked->site, false, BarrierId(decl, "warptrace_bar"), begin_b,
                  "begin of");
  }
  if (issue) IssueBulkCopy(c, node.path, d);
  Line(depth + 1, "}");
  Line(depth, "}");
}

std::string AsyncSites::MulticastLanding(const AsyncCopySpec& c) {
  return absl::StrCat("((static_cast<unsigned int>(", c.barrier_phase,
                      ") & 0xffffu) | (static_cast<unsigned int>(static_cast<unsigned short>(",
                      c.multicast_mask, ")) << 16))");
}

// By the role's first thread: the begin of the store's async span, the store, its commit.
void AsyncSites::TmaStore(const KernelNode& node, int depth) {
  const AsyncCopySpec& c = node.copy;
  Line(depth, absl::StrCat("if (", Elected(), ") {  // tma store ", c.name, " to ",
                           c.tensor_map));
  const int d = depth + 1;
  const CopySite* tracked = Tracked(node);
  if (tracked != nullptr) RecordGroupBegin(d, *tracked);
  std::vector<std::string> coords;
  for (const std::string& x : c.coords) coords.push_back(absl::StrCat("static_cast<int>(", x, ")"));
  // Attributed: the host backend's sanitizer names the store by its builder path.
  out_.Attributed(d, node.path,
                  absl::StrFormat("warptrace_tma_store_2d(&%s, %s, %s);", c.tensor_map,
                                  Operand(c.src), absl::StrJoin(coords, ", ")));
  Line(d, "warptrace_bulk_commit_group();");
  PushHistory(d, kStoreGroups, tracked);
  Line(depth, "}");
}

// wgmma.fence, the group's instructions, the begin of its async span, wgmma.commit_group.
void AsyncSites::MmaGroup(const KernelNode& node, int depth) {
  Line(depth, absl::StrCat("{  // mma group ", node.text));
  const int d = depth + 1;
  Line(d, "warptrace_wgmma_fence();");
  body_(node.body, d);
  const CopySite* tracked = Tracked(node);
  if (tracked != nullptr) {
    RecordDerived(out_, d, tracked->site, false, "commit of");  // issue: by order
    if (!tracked->exact && !tracked->derived) {
      Line(d, absl::StrCat("++", Issued(*tracked), ";"));
    }
  }
  Line(d, "warptrace_wgmma_commit_group();");
  PushHistory(d, kMmaGroups, tracked);
  Line(depth, "}");
}

// `warptrace_src` and `warptrace_dst`, the copy's pointers as bytes.
void AsyncSites::CopyPointers(int depth, const AsyncCopySpec& c) {
  Line(depth, absl::StrCat("const char* warptrace_src = reinterpret_cast<const char*>(",
                           c.src, ");"));
  Line(depth, absl::StrCat("char* warptrace_dst = reinterpret_cast<char*>(", c.dst, ");"));
}

// A group just committed: its site (none: not recorded) enters the kind's history.
void AsyncSites::PushHistory(int depth, const GroupKind& kind, const CopySite* tracked) {
  const History& h = HistoryOf(kind);
  if (h.bits == 0) return;
  const uint64_t site = tracked != nullptr ? h.Entry(tracked->group_index) : h.none();
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
void AsyncSites::EndGroupCopies(int depth, const GroupKind& kind, uint32_t pending,
    bool in_recorder_block, const KernelNode* wait) {
  if (WaitSite(kind) != nullptr) {  // ends derived at the waits: the wait alone
    RecordGroupWait(depth, kind, pending);
    return;
  }
  const History& h = HistoryOf(kind);
  if (h.bits == 0) pending = 0;  // no history: the plan has no wait leaving groups in flight
  bool counted = false;
  for (const CopySite& c : copies_) {
    if (!(c.*kind.member)()) continue;
    if (!c.exact) {
      counted = true;
      continue;
    }
    // Exactly n in flight here on every path: n records, no condition (none at an exit).
    const uint32_t n =
        wait == nullptr
            ? 0
            : GroupBounds(kernel_.body, c.node, wait->kind).ExactlyAtWait(wait).value_or(0);
    for (uint32_t i = 0; i < n; ++i) {
      RecordDerived(out_, depth, c.site, true, c.mma() ? "retirement of" : "end of");
    }
  }
  if (!counted) return;
  const int d = in_recorder_block ? depth : RecorderOnly(depth, kind);
  for (const CopySite& c : copies_) {
    if (!(c.*kind.member)() || c.exact) continue;
    std::string keep;
    if (pending > 0 && h.one_hot) {
      uint64_t mask = 0;
      for (uint32_t j = 0; j < pending; ++j) mask |= h.Entry(c.group_index) << (j * h.bits);
      keep = absl::StrFormat(" - static_cast<unsigned int>(%s(%s & 0x%x%s))",
                             h.wide() ? "__popcll" : "__popc", HistoryVar(kind), mask,
                             h.wide() ? "ull" : "u");
    } else if (pending > 0) {
      std::vector<std::string> terms;
      for (uint32_t j = 0; j < pending; ++j) {
        terms.push_back(absl::StrFormat("(((%s >> %du) & %d%s) == %du ? 1u : 0u)",
                                        HistoryVar(kind), j * h.bits, h.none(),
                                        h.wide() ? "ull" : "u", c.group_index));
      }
      keep = absl::StrCat(" - (", absl::StrJoin(terms, " + "), ")");
    }
    const char* what = c.mma() ? "retirement of" : "end of";
    // At most `most` of the site's groups are in flight here: as many conditional records,
    // no loop (group_bounds.h); none, no code.
    const std::optional<uint32_t> most =
        wait == nullptr ? std::nullopt
                        : GroupBounds(kernel_.body, c.node, wait->kind).AtWait(wait);
    const uint32_t at_most = most.value_or(0);
    if (most.has_value() && at_most == 0) continue;
    // The site's counts are read into registers once and its done count written back once:
    // read and written in shared memory at every test, they made ampere_gemm's waits the
    // bulk of its record code (issue 51). `warptrace_ended`: the groups retired by now.
    Line(d, absl::StrCat("{  // ", what, " ", c.site.name));
    Line(d + 1, absl::StrCat("unsigned int warptrace_done = ", Done(c), ";"));
    Line(d + 1, absl::StrCat("const unsigned int warptrace_ended = ", Issued(c), keep, ";"));
    if (most.has_value()) {
      for (uint32_t i = 0; i < at_most; ++i) {
        Line(d + 1, absl::StrCat("if (warptrace_done < warptrace_ended) {  // ", i + 1, " of ",
                                 at_most, " at most"));
        RecordDerived(out_, d + 2, c.site, true, what);  // issue = warptrace_done, by order
        Line(d + 2, "++warptrace_done;");
        Line(d + 1, "}");
      }
    } else {
      NoUnroll(out_, d + 1);  // usually one or two iterations; unrolled, a lot of code
      Line(d + 1, "for (; warptrace_done < warptrace_ended; ++warptrace_done) {");
      RecordDerived(out_, d + 2, c.site, true, what);  // issue = warptrace_done, by order
      Line(d + 1, "}");
    }
    Line(d + 1, absl::StrCat(Done(c), " = warptrace_done;"));
    Line(d, "}");
  }
  if (!in_recorder_block) CloseRecorderOnly(depth, kind);
}

// Before leaving the kernel: every copy of this thread still in flight completes and is
// recorded, so each copy records exactly its begin and its end.
void AsyncSites::ObservePendingCopies(int depth) {
  for (const GroupKind* kind : {&kCpAsyncGroups, &kMmaGroups, &kStoreGroups}) {
    if (WaitSite(*kind) != nullptr) {
      // Whether groups are in flight here is known at run time only: a recorded wait(0)
      // in every unit, as the plan counts (plan_barriers.h, MarkGroupEndsAtWaits).
      Line(depth, absl::StrCat(kind->wait, "(0u);"));
      RecordGroupWait(depth, *kind, 0);
      continue;
    }
    std::vector<std::string> open;
    for (const CopySite& c : copies_) {  // exact sites have none in flight here
      if ((c.*kind->member)() && !c.exact) {
        open.push_back(absl::StrCat(Done(c), " < ", Issued(c)));
      }
    }
    if (open.empty()) continue;
    const int d = RecorderOnly(depth, *kind);
    Line(d, absl::StrCat("if (", absl::StrJoin(open, " || "), ") ", kind->wait, "(0u);"));
    EndGroupCopies(d, *kind, 0, /*in_recorder_block=*/true);
    CloseRecorderOnly(depth, *kind);
  }
  DrainObservedCopies(depth);
}

// Declares and initializes the state of each recorded group site: issue numbers, and which
// groups are still to be observed complete (where each kind's lives: the file comment).
// Only the threads that use a piece of it touch it, so no barrier orders it.
void AsyncSites::CopyTracking() {
  const uint32_t units = plan_ == nullptr ? 0 : plan_->units_per_block();
  // The per-unit state: one struct per trace unit in one shared array, so that the
  // recorder reaches all of it from one base address.
  std::vector<std::string> fields, recorder_init;
  for (const GroupKind* kind : {&kCpAsyncGroups, &kMmaGroups, &kStoreGroups}) {
    const History& h = HistoryOf(*kind);
    if (h.bits == 0) continue;
    const std::string comment =
        absl::StrFormat("  // sites of the last %d %s, %d bits each%s", h.depth, kind->what,
                        h.bits, h.one_hot ? ", one-hot" : "");
    const char* type = h.wide() ? "unsigned long long" : "unsigned int";
    // Every entry "none" (History).
    const char* all_ones = h.one_hot ? (h.wide() ? "0ull" : "0u") : h.wide() ? "~0ull" : "~0u";
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
    // No counters: exact sites, and bulk copies on a barrier (their begins carry what the
    // dump needs to derive their ends, format/links.h; observed ones: ObservedCopyTracking).
    if (c.exact || c.derived || c.bulk()) continue;
    if (!KindOf(c).per_unit) {  // wgmma groups: registers
      Line(1, absl::StrCat("unsigned int ", c.var, "_issued = 0u;  // copy ", c.site.name));
      Line(1, absl::StrCat("unsigned int ", c.var, "_done = 0u;"));
      continue;
    }
    // cp.async and TMA store groups: the recorder's, in shared memory
    fields.push_back(absl::StrCat("unsigned int ", c.var, "_issued;  // copy ", c.site.name));
    fields.push_back(absl::StrCat("unsigned int ", c.var, "_done;"));
    recorder_init.push_back(absl::StrCat(Issued(c), " = 0u;"));
    recorder_init.push_back(absl::StrCat(Done(c), " = 0u;"));
  }
  ObservedCopyTracking();
  if (recorder_init.empty()) return;
  Line(1, "struct warptrace_unit_track {  // a trace unit's group bookkeeping, its recorder's");
  for (const std::string& field : fields) Line(2, field);
  Line(1, "};");
  Line(1, absl::StrCat("__shared__ warptrace_unit_track ", kTrack, "[", units, "];"));
  Line(1, absl::StrFormat("// the trace unit this thread records (%d: none; only a recorder "
                          "keeps the state above)",
                          units));
  Line(1, absl::StrCat("const unsigned int ", kRecorderUnit,
                       " = warptrace::recorder::RecordedUnit(warptrace_config, warptrace_tid, ",
                       kBlockLinear, ");"));
  Line(1, absl::StrFormat("if (%s < %du) {", kRecorderUnit, units));
  for (const std::string& init : recorder_init) Line(2, init);
  Line(1, "}");
}

namespace {

// Where a copy is issued: its role (null outside roles) and the role's first thread.
struct IssuerContext {
  const KernelNode* role = nullptr;
  uint64_t issuer = 0;
};

}  // namespace

void AsyncSites::CollectCopies(const std::vector<KernelNode>& body) {
  WalkNodes(
      body, IssuerContext{},
      [this](const KernelNode& n, const IssuerContext& at) { CollectCopy(n, at.role, at.issuer); },
      [](const NestedBody& nested, const IssuerContext& at) {
        if (nested.which != NestedBody::kRoleBody) return at;
        return IssuerContext{nested.role,
                             uint64_t{nested.role->first} * RoleAxisThreads(nested.parent->axis)};
      });
}

void AsyncSites::CollectCopy(const KernelNode& n, const KernelNode* role, uint64_t issuer) {
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
      // An observed copy's state is a member of the block's warptrace_copies
      // (ObservedCopyTracking).
      const bool observed = bulk && site->end_observed;
      copies_.push_back(CopySite{&n, *site,
                                 absl::StrCat(observed ? kCopiesPrefix : "",
                                              mma ? "warptrace_mma" : "warptrace_copy",
                                              n.ordinal),
                                 role, group_index, issuer, /*exact=*/false,
                                 /*derived=*/site->ends_at_waits});
    }
  }
  const GroupKind* kind = n.kind == KernelNode::Kind::kAsyncWait      ? &kCpAsyncGroups
                          : n.kind == KernelNode::Kind::kMmaWait      ? &kMmaGroups
                          : n.kind == KernelNode::Kind::kTmaStoreWait ? &kStoreGroups
                                                                      : nullptr;
  if (kind != nullptr) {
    History& h = HistoryOf(*kind);
    h.depth = std::max(h.depth, n.async_pending);
  }
}

const AsyncSites::CopySite* AsyncSites::Tracked(const KernelNode& node) const {
  for (const CopySite& c : copies_) {
    if (c.node == &node) return &c;
  }
  return nullptr;
}

}  // namespace warptrace
