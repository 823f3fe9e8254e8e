// Observed copy ends: trace version 4's observation of a bulk or TMA copy's completion by
// its issuing thread, kept in version 5 for the copy sites whose end the dump cannot derive
// (SiteInfo::end_observed: no unit's recorder runs a recorded wait on the copy's barrier,
// e.g. block units, whose one recorder is the producer). Part of AsyncSites (async_sites.h);
// a kernel without such sites emits none of it.
//
// The issuer keeps, per element of the copy's barrier array, the issue + 1 of its copy in
// flight (0: none) and the phase it completes, in one shared struct (warptrace_copies). It
// records the end: polling (test_wait) while it waits on a phase barrier itself, after its
// own wait on the element, at its next issue on the element (waiting for the phase, which
// the kernel's protocol has completed by then), and before the kernel's exit.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "format/trace_abi.h"
#include "jit/emit/async_sites.h"
#include "jit/emit/emit_lines.h"

namespace warptrace {

std::vector<const AsyncSites::CopySite*> AsyncSites::Polled() const {
  std::vector<const CopySite*> polled;
  for (const CopySite& c : copies_) {
    if (c.observed() && c.role == role_.node && MayRunOnIssuer(c)) polled.push_back(&c);
  }
  return polled;
}

bool AsyncSites::PollsWhileWaiting() const { return !Polled().empty(); }

namespace {

// A role that gives registers back (setmaxnreg.dec) to fewer than this many per thread
// records its observed copies' ends without polling on a GPU: each poll (RecordCopyEnds)
// holds about eight registers in the wait loop, on top of the recorder's own, and at
// flash_attention's 24-register producer that spilled (issue 51). The ends are recorded at
// the copy's next issue on its element or before the kernel's exit instead: later, so the
// copy's span is longer than it was, never missing. The host backend polls regardless.
constexpr uint32_t kMinRegistersToPoll = 32;

// Before the kernel's exit, the issuer observes its copies still in flight on a barrier
// array of at most this many elements with straight-line code on a GPU (one waiting
// RecordCopyEnds per element, about 20 SASS each, run once), not a loop over the elements
// (about 40 SASS, run once per element): exit code is no loop of the kernel's (issue 51:
// flash_attention's two 2-element exit drains were its only loops besides the main loop,
// 12.3 -> 7.1 SASS per event in its loops, 36 SASS more in all). Larger arrays keep the
// loop: at hopper_gemm's 4 elements the straight-line drains cost 155 more SASS (1949 ->
// 2104) for the same ends.
constexpr uint32_t kStraightDrainElements = 2;

// The registers per thread `role` keeps after its setmaxnreg.dec, if it has one.
std::optional<uint32_t> RoleRegisters(const KernelNode* role) {
  if (role == nullptr) return std::nullopt;
  std::optional<uint32_t> registers;
  std::function<void(const std::vector<KernelNode>&)> walk =
      [&](const std::vector<KernelNode>& body) {
        for (const KernelNode& n : body) {
          if (n.kind == KernelNode::Kind::kSetMaxRegisters &&
              n.register_change == RegisterChange::kDecrease) {
            registers = registers.has_value() ? std::min(*registers, n.registers) : n.registers;
          }
          walk(n.body);
          walk(n.else_body);
        }
      };
  walk(role->body);
  return registers;
}

}  // namespace

void AsyncSites::PollWhileWaiting(int depth) {
  const std::vector<const CopySite*> polled = Polled();
  if (polled.empty()) return;
  const std::optional<uint32_t> registers = RoleRegisters(role_.node);
  const bool device_polls = !registers.has_value() || *registers >= kMinRegistersToPoll;
  // Polled copies are the role's, issued by its first thread.
  if (!device_polls) {
    Line(0, absl::StrFormat("#if !defined(__CUDA_ARCH__)  // a GPU does not poll at %d "
                            "registers (kMinRegistersToPoll)",
                            *registers));
  }
  Line(depth, absl::StrCat("if (", IsIssuer(*polled.front()), ") {"));
  for (const CopySite* c : polled) PollPending(depth + 1, *c);
  Line(depth, "}");
  if (!device_polls) Line(0, "#endif");
}

void AsyncSites::EndCopiesOnWait(int depth, const std::string& barrier,
                                 const std::string& barrier_id) {
  for (const CopySite& c : copies_) {
    if (!c.observed() || c.node->copy.barrier != barrier || !MayRunOnIssuer(c)) continue;
    Line(depth, absl::StrCat("if (", IsIssuer(c), " && ", c.var,
                             "_pending[warptrace_bar] != 0u) {"));
    RecordCopyEnd(depth + 1, c, absl::StrCat(c.var, "_pending[warptrace_bar]"), barrier_id);
    Line(depth, "}");
  }
}

std::string AsyncSites::IsIssuer(const CopySite& c) { return IsThread(c.issuer); }

// Whether the code being emitted may run on `c`'s issuing thread: outside roles, or in a
// role holding that thread.
bool AsyncSites::MayRunOnIssuer(const CopySite& c) const {
  if (role_.node == nullptr) return true;
  return c.issuer >= role_.first && c.issuer < role_.first + role_.threads;
}

void AsyncSites::ObservedCopyBegin(int depth, const CopySite& c) {
  const AsyncCopySpec& copy = c.node->copy;
  const PhaseBarrierDecl& decl = Decl(copy.barrier);
  const std::string id = BarrierId(decl, "warptrace_bar");
  ObservePending(depth, c, "warptrace_bar", id, /*in_loop=*/true);
  // A multicast copy's begin carries its phase and CTA mask instead of the barrier
  // (format/links.h): the dump links it into every destination CTA.
  const std::string begin_b = copy.multicast_mask.empty() ? id : MulticastLanding(copy);
  RecordPayload(depth, c.site, false, absl::StrCat(c.var, "_issued"), begin_b, "begin of");
  Line(depth, absl::StrCat(c.var, "_pending[warptrace_bar] = ++", c.var, "_issued;"));
  Line(depth, absl::StrCat(c.var, "_phase[warptrace_bar] = static_cast<unsigned int>(",
                           copy.barrier_phase, ");"));
}

// Records the end of the observed copy in flight whose issue + 1 is in `pending`, and
// clears it.
void AsyncSites::RecordCopyEnd(int depth, const CopySite& c, const std::string& pending,
    const std::string& barrier_id) {
  RecordPayload(depth, c.site, true, absl::StrCat(pending, " - 1u"), barrier_id, "end of");
  Line(depth, absl::StrCat(pending, " = 0u;"));
}

// Records the end of each of `c`'s copies in flight whose phase has completed, without
// waiting (test_wait), by the issuing thread (the caller checks). On a GPU one recorder
// call for all the elements (DeviceCopyEnds); the host backend's loop is not unrolled (it
// runs while the thread waits, and unrolled copies of it cost compile time).
void AsyncSites::PollPending(int depth, const CopySite& c) {
  const PhaseBarrierDecl& decl = Decl(c.node->copy.barrier);
  const std::string pending = absl::StrCat(c.var, "_pending[warptrace_e]");
  DeviceCopyEnds(depth, c, "0", absl::StrCat(decl.first_id, "u"), decl.size, /*wait=*/false);
  NoUnroll(out_, depth);
  ForEachElement(depth, decl);
  Line(depth + 1, absl::StrCat("if (", pending, " != 0u && warptrace_mbarrier_test_wait_parity(&",
                               c.node->copy.barrier, "[warptrace_e], ", c.var,
                               "_phase[warptrace_e] & 1u)) {"));
  RecordCopyEnd(depth + 2, c, pending, BarrierId(decl, "warptrace_e"));
  Line(depth + 1, "}");
  Line(depth, "}");
  Line(0, "#endif");
}

// A bulk copy still pending on element `bar`: wait for its phase (complete already when
// the kernel's protocol ordered it), then record its end.
void AsyncSites::ObservePending(int depth, const CopySite& c, const std::string& bar,
    const std::string& id, bool in_loop) {
  const std::string pending = absl::StrCat(c.var, "_pending[", bar, "]");
  if (in_loop) DeviceCopyEnds(depth, c, bar, id, 1, /*wait=*/true);
  Line(depth, absl::StrCat("if (", pending, " != 0u) {"));
  Line(depth + 1, absl::StrCat("warptrace_mbarrier_wait_parity(&", c.node->copy.barrier, "[",
                               bar, "], ", c.var, "_phase[", bar, "] & 1u);"));
  RecordCopyEnd(depth + 1, c, pending, id);
  Line(depth, "}");
  if (in_loop) Line(0, "#endif");
}

// On a GPU, the ends of `c`'s copies in flight on elements `first` to `first` + `count` - 1
// (`first_id`: the first one's barrier id) as one recorder call (recorder::RecordCopyEnds:
// one asm statement, so that LLVM unrolls the kernel's loop around it as it does
// unprofiled, issue 51); `wait`: waits for each one's phase, else tests it. Opens the
// `#else` for the host backend's C++ of the same, which the caller writes and closes.
void AsyncSites::DeviceCopyEnds(int depth, const CopySite& c, const std::string& first,
                                const std::string& first_id, uint32_t count, bool wait) {
  // The phase words follow the pending ones (CopyTracking's struct): their offset is the
  // barrier array's size.
  Line(0, "#if defined(__CUDA_ARCH__)");
  DeviceCopyEndsCall(depth, c, first, first_id, count, wait);
  Line(0, "#else");
}

void AsyncSites::DeviceCopyEndsCall(int depth, const CopySite& c, const std::string& first,
                                    const std::string& first_id, uint32_t count, bool wait) {
  const uint32_t size = Decl(c.node->copy.barrier).size;
  Line(depth, absl::StrFormat(
                  "warptrace::recorder::RecordCopyEnds<%s, 0x%08xu, %du, %du>(warptrace_unit, "
                  "&%s_pending[%s], &%s[%s], %s);  // end of %s",
                  wait ? "true" : "false", abi::MakeTag(c.site.id, true), count, size, c.var,
                  first, c.node->copy.barrier, first, first_id, c.site.name));
}

// Before leaving the kernel: the issuer's observed copies still in flight complete and are
// recorded, so each records exactly its begin and its end.
void AsyncSites::DrainObservedCopies(int depth) {
  for (const CopySite& c : copies_) {
    if (!c.observed() || !MayRunOnIssuer(c)) continue;
    const PhaseBarrierDecl& decl = Decl(c.node->copy.barrier);
    Line(depth, absl::StrCat("if (", IsIssuer(c), ") {"));
    const bool straight = decl.size <= kStraightDrainElements;
    if (straight) {  // on a GPU, straight-line code: one waiting recorder call per element
      Line(0, "#if defined(__CUDA_ARCH__)");
      for (uint32_t e = 0; e < decl.size; ++e) {
        const std::string bar = absl::StrCat(e, "u");
        DeviceCopyEndsCall(depth + 1, c, bar, BarrierId(decl, bar), 1, /*wait=*/true);
      }
      Line(0, "#else");
    }
    NoUnroll(out_, depth + 1);
    ForEachElement(depth + 1, decl);
    ObservePending(depth + 2, c, "warptrace_e", BarrierId(decl, "warptrace_e"),
                   /*in_loop=*/false);
    Line(depth + 1, "}");
    if (straight) Line(0, "#endif");
    Line(depth, "}");
  }
}

// The observed copies' state (the file comment), declared for the block and initialized by
// each issuer.
void AsyncSites::ObservedCopyTracking() {
  std::vector<std::string> copy_fields, copy_init;
  for (const CopySite& c : copies_) {
    if (!c.observed()) continue;
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
  if (copy_fields.empty()) return;
  Line(1, "struct warptrace_copy_track {  // the observed copies' state, their issuers'");
  for (const std::string& field : copy_fields) Line(2, field);
  Line(1, "};");
  Line(1, absl::StrCat("__shared__ warptrace_copy_track ",
                       absl::StripSuffix(kCopiesPrefix, "."), ";"));
  for (const std::string& line : copy_init) Line(1, line);
}

}  // namespace warptrace
