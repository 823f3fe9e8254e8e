#include "jit/builder/kernel.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

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

const char* RoleAxisName(RoleAxis axis) {
  return axis == RoleAxis::kWarp ? "warp" : "warpgroup";
}

uint32_t RoleAxisThreads(RoleAxis axis) { return axis == RoleAxis::kWarp ? 32 : 128; }

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

}  // namespace warptrace
