#include "jit/builder/kernel.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/enum_table.h"

namespace warptrace {

Expr::Expr(int64_t value)
    : text_(std::to_string(value)), is_literal_(true), literal_(value) {}

Expr::Expr(std::string text) : text_(std::move(text)) {
  // A decimal integer literal (optionally negative) is known to the builder.
  const std::string& t = text_;
  size_t start = !t.empty() && t[0] == '-' ? 1 : 0;
  if (t.size() > start && t.size() - start <= 18 &&
      std::all_of(t.begin() + start, t.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    is_literal_ = true;
    literal_ = std::stoll(t);
  }
}

std::string TripCount::BoundsExpr(const std::string& begin, const std::string& end,
                                  const std::string& step) {
  const std::string b = "(" + begin + ")";
  const std::string e = "(" + end + ")";
  if (step == "1") {
    if (begin == "0") return e + " > 0 ? " + e + " : 0";
    return e + " > " + b + " ? " + e + " - " + b + " : 0";
  }
  const std::string s = "(" + step + ")";
  return e + " > " + b + " ? (" + e + " - " + b + " + " + s + " - 1) / " + s + " : 0";
}

namespace {

constexpr EnumTable<RoleAxis, 2> kRoleAxes{"role axis", {{
    {RoleAxis::kWarpgroup, "warpgroup"},
    {RoleAxis::kWarp, "warp"},
}}};
static_assert(kRoleAxes.Covers(2));

constexpr EnumTable<RegisterChange, 2> kRegisterChanges{"register change", {{
    {RegisterChange::kIncrease, "inc"},
    {RegisterChange::kDecrease, "dec"},
}}};
static_assert(kRegisterChanges.Covers(2));

}  // namespace

const char* RoleAxisName(RoleAxis axis) { return kRoleAxes.Name(axis); }

const char* RegisterChangeName(RegisterChange change) { return kRegisterChanges.Name(change); }

uint32_t RoleAxisThreads(RoleAxis axis) {
  switch (axis) {
    case RoleAxis::kWarp:
      return 32;
    case RoleAxis::kWarpgroup:
      return 128;
  }
  return 128;
}

const char* KernelNodeKindName(KernelNode::Kind kind) {
  switch (kind) {
#define WARPTRACE_KERNEL_NODE_KIND_NAME(e, name) \
  case KernelNode::Kind::e:                      \
    return name;
    WARPTRACE_KERNEL_NODE_KINDS(WARPTRACE_KERNEL_NODE_KIND_NAME)
#undef WARPTRACE_KERNEL_NODE_KIND_NAME
  }
  return "?";
}

uint64_t Kernel::StaticSharedBytes() const {
  uint64_t bytes = 0;
  for (const SharedArrayDecl& a : shared_arrays) bytes += a.Bytes();
  for (const PhaseBarrierDecl& b : phase_barriers) bytes += uint64_t{b.size} * 8;
  return bytes;
}

const PhaseBarrierDecl* Kernel::FindPhaseBarriers(const std::string& name) const {
  for (const PhaseBarrierDecl& b : phase_barriers) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

namespace {

std::string Abbreviate(const std::string& text, size_t max_length = 32) {
  std::string one_line;
  for (char c : text) one_line.push_back(c == '\n' || c == '\t' ? ' ' : c);
  if (one_line.size() <= max_length) return one_line;
  return one_line.substr(0, max_length - 3) + "...";
}

}  // namespace

std::string KernelNodeLabel(const KernelNode& node, NodeLabelStyle style) {
  const bool path = style == NodeLabelStyle::kPath;
  switch (node.kind) {
    case KernelNode::Kind::kStatement:
      if (!path) break;
      return absl::StrCat("statement `", Abbreviate(node.text), "`");
    case KernelNode::Kind::kRegion:
      return absl::StrCat(node.call ? "call " : "region ", node.text);
    case KernelNode::Kind::kLoop:
      return absl::StrCat("loop ", node.text);
    case KernelNode::Kind::kIf:
      return path ? absl::StrCat("if (", Abbreviate(node.text), ")") : "if";
    case KernelNode::Kind::kRoles:
      return path ? absl::StrCat("roles by ", RoleAxisName(node.axis)) : "roles";
    case KernelNode::Kind::kRole:
      if (!path) break;
      return absl::StrCat("role ", node.text);
    case KernelNode::Kind::kBarrier:
      return absl::StrCat("barrier ", node.text);
    case KernelNode::Kind::kReturn:
      break;
    case KernelNode::Kind::kNamedBarrier:
      return absl::StrCat("named barrier ", node.text);
    case KernelNode::Kind::kArrive:
      if (!path) return absl::StrCat("arrive ", node.text);
      return absl::StrCat(node.tx_bytes.empty() ? "arrive " : "arrive_expect_tx ", node.text,
                          "[", Abbreviate(node.index, 16), "]");
    case KernelNode::Kind::kPhaseWait:
      if (!path) return absl::StrCat("wait ", node.text);
      return absl::StrCat("wait ", node.text, "[", Abbreviate(node.index, 16), "]");
    case KernelNode::Kind::kAsyncCopy:
      return absl::StrCat("copy ", node.text);
    case KernelNode::Kind::kAsyncWait:
      if (!path) break;
      return node.async_pending == 0
                 ? "wait async copies"
                 : absl::StrCat("wait async copies (", node.async_pending, " in flight)");
    case KernelNode::Kind::kMmaGroup:
      return absl::StrCat("mma group ", node.text);
    case KernelNode::Kind::kMmaWait:
      if (!path) break;
      return node.async_pending == 0
                 ? "wait mma groups"
                 : absl::StrCat("wait mma groups (", node.async_pending, " in flight)");
    case KernelNode::Kind::kTmaStore:
      return absl::StrCat("tma store ", node.text);
    case KernelNode::Kind::kTmaStoreWait:
      if (!path) break;
      return node.async_pending == 0
                 ? "wait tma stores"
                 : absl::StrCat("wait tma stores (", node.async_pending, " in flight)");
    case KernelNode::Kind::kClusterBarrier:
      return absl::StrCat("cluster barrier ", node.text);
    case KernelNode::Kind::kSetMaxRegisters:
      if (!path) break;
      return absl::StrCat("setmaxnreg.", RegisterChangeName(node.register_change), " ",
                          node.registers);
  }
  // The count view names the constructs without records of their own by their kind.
  return KernelNodeKindName(node.kind);
}

}  // namespace warptrace
