// KernelBuilder's loops (kernel_builder.h: For, BeginFor, EndFor), both heads.
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace {

KernelBuilder& KernelBuilder::For(std::string var, Expr begin, Expr end, TripCount trip,
                                  const std::function<void()>& body) {
  return For(std::move(var), std::move(begin), std::move(end), Expr(1), trip, body);
}

KernelBuilder& KernelBuilder::For(std::string var, Expr begin, Expr end, Expr step,
                                  TripCount trip, const std::function<void()>& body) {
  BeginFor(std::move(var), std::move(begin), std::move(end), std::move(step), trip);
  body();
  return EndFor();
}

KernelBuilder& KernelBuilder::BeginFor(std::string var, Expr begin, Expr end, Expr step,
                                       TripCount trip) {
  KernelNode node;
  node.kind = KernelNode::Kind::kLoop;
  node.text = std::move(var);
  node.begin = begin.text();
  node.end = end.text();
  node.step = step.text();
  node.trip = trip;
  if (trip.kind() == TripCount::Kind::kPerBlock && trip.expr().empty()) {
    // TripCount::PerBlock(): the loop's own bounds are the expression.
    if (step.is_literal() && step.literal() <= 0) {
      Fail(absl::StrCat("loop '", node.text, "' takes TripCount::PerBlock() from its bounds "
                        "but its step is ", step.literal(),
                        "; the step must be positive (or give PerBlock(expr))"));
      return *this;
    }
    node.trip = TripCount::PerBlock(TripCount::BoundsExpr(node.begin, node.end, node.step));
  }
  Open(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::For(LoopHead head, TripCount trip,
                                  const std::function<void()>& body) {
  BeginFor(std::move(head), trip);
  body();
  return EndFor();
}

KernelBuilder& KernelBuilder::BeginFor(LoopHead head, TripCount trip) {
  KernelNode node;
  node.kind = KernelNode::Kind::kLoop;
  node.text = std::move(head.var);
  node.begin = head.init.text();
  node.condition = std::move(head.condition);
  node.update = std::move(head.update);
  node.trip = trip;
  if (trip.kind() == TripCount::Kind::kPerBlock && trip.expr().empty()) {
    Fail(absl::StrCat("loop '", node.text, "' (for (int ", node.text, " = ", node.begin, "; ",
                      node.condition, "; ", node.update,
                      ")) takes TripCount::PerBlock() from its bounds, but a loop head of its "
                      "own has none; give PerBlock(expr)"));
    return *this;
  }
  Open(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::EndFor() {
  Close(KernelNode::Kind::kLoop, "For");
  return *this;
}

}  // namespace warptrace
