#include "jit/builder/loop_head.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace warptrace {
namespace {

std::string WithoutSpaces(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(c))) out.push_back(c);
  }
  return out;
}

// An integer literal (decimal, optionally negative, an optional u/l suffix is refused: the
// head runs in int).
std::optional<int64_t> Literal(absl::string_view text) {
  int64_t value = 0;
  if (text.empty() || !absl::SimpleAtoi(text, &value)) return std::nullopt;
  return value;
}

// `var OP literal` (or `literal OP var`, turned around).
struct Comparison {
  std::string op;
  int64_t bound = 0;
};

std::optional<Comparison> ParseCondition(const std::string& var, const std::string& text) {
  for (const char* op : {"<=", ">=", "!=", "==", "<", ">"}) {
    const size_t at = text.find(op);
    if (at == std::string::npos) continue;
    const std::string left = text.substr(0, at);
    const std::string right = text.substr(at + std::string(op).size());
    if (left == var) {
      if (std::optional<int64_t> v = Literal(right)) return Comparison{op, *v};
    } else if (right == var) {
      const std::string o = op;
      const std::string mirrored = o == "<"    ? ">"
                                   : o == ">"  ? "<"
                                   : o == "<=" ? ">="
                                   : o == ">=" ? "<="
                                               : o;
      if (std::optional<int64_t> v = Literal(left)) return Comparison{mirrored, *v};
    }
    return std::nullopt;
  }
  return std::nullopt;
}

bool Holds(const Comparison& c, int64_t v) {
  if (c.op == "<") return v < c.bound;
  if (c.op == "<=") return v <= c.bound;
  if (c.op == ">") return v > c.bound;
  if (c.op == ">=") return v >= c.bound;
  if (c.op == "!=") return v != c.bound;
  return v == c.bound;
}

// `var OP= operand`, ++/-- as += 1 / -= 1.
struct Update {
  std::string op;  // "+", "-", "*", "/", "<<", ">>"
  int64_t operand = 0;
};

std::optional<Update> ParseUpdate(const std::string& var, const std::string& text) {
  if (text == "++" + var || text == var + "++") return Update{"+", 1};
  if (text == "--" + var || text == var + "--") return Update{"-", 1};
  if (text.rfind(var, 0) != 0) return std::nullopt;
  const std::string rest = text.substr(var.size());
  for (const char* op : {"<<=", ">>=", "+=", "-=", "*=", "/="}) {
    const std::string o = op;
    if (rest.rfind(o, 0) != 0) continue;
    std::optional<int64_t> v = Literal(rest.substr(o.size()));
    if (!v.has_value()) return std::nullopt;
    return Update{o.substr(0, o.size() - 1), *v};
  }
  return std::nullopt;
}

absl::StatusOr<int64_t> Apply(const Update& u, int64_t v, const std::string& head) {
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("loop head `", head, "`: ", why));
  };
  int64_t next = 0;
  if (u.op == "+") {
    next = v + u.operand;
  } else if (u.op == "-") {
    next = v - u.operand;
  } else if (u.op == "*") {
    next = v * u.operand;  // |v|, |operand| < 2^31: no int64 overflow
  } else if (u.op == "/") {
    if (u.operand == 0) return error("divides by 0");
    next = v / u.operand;
  } else {
    if (u.operand < 0 || u.operand >= 32) {
      return error(absl::StrCat("shifts by ", u.operand, " (undefined for an int)"));
    }
    if (u.op == ">>") {
      next = v >> u.operand;
    } else {
      if (v < 0) return error("shifts a negative value left (undefined for an int)");
      next = v << u.operand;
    }
  }
  if (next < std::numeric_limits<int32_t>::min() || next > std::numeric_limits<int32_t>::max()) {
    return error(absl::StrCat("takes the int variable from ", v, " to ", next,
                              ", past int's range (undefined)"));
  }
  return next;
}

}  // namespace

std::optional<absl::StatusOr<uint64_t>> RunLoopHead(const std::string& var,
                                                    const std::string& init,
                                                    const std::string& condition,
                                                    const std::string& update, uint64_t limit) {
  const std::optional<int64_t> start = Literal(WithoutSpaces(init));
  const std::optional<Comparison> cond = ParseCondition(var, WithoutSpaces(condition));
  const std::optional<Update> step = ParseUpdate(var, WithoutSpaces(update));
  if (!start.has_value() || !cond.has_value() || !step.has_value()) return std::nullopt;
  const std::string head =
      absl::StrCat("for (int ", var, " = ", init, "; ", condition, "; ", update, ")");
  if (*start < std::numeric_limits<int32_t>::min() ||
      *start > std::numeric_limits<int32_t>::max()) {
    return absl::StatusOr<uint64_t>(absl::InvalidArgumentError(
        absl::StrCat("loop head `", head, "`: ", *start, " does not fit an int")));
  }
  int64_t v = *start;
  uint64_t trips = 0;
  while (Holds(*cond, v)) {
    if (trips == limit) {
      return absl::StatusOr<uint64_t>(absl::InvalidArgumentError(absl::StrCat(
          "loop head `", head, "` runs more than ", limit, " iterations (it may never end)")));
    }
    ++trips;
    absl::StatusOr<int64_t> next = Apply(*step, v, head);
    if (!next.ok()) return absl::StatusOr<uint64_t>(next.status());
    v = *next;
  }
  return absl::StatusOr<uint64_t>(trips);
}

absl::Status CheckLoopHeadTrips(const KernelNode& node) {
  if (node.condition.empty() || node.update.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        node.path, ": loop '", node.text, "' needs a condition and an update (`for (int ",
        node.text, " = ", node.begin, "; ", node.condition, "; ", node.update, ")`)"));
  }
  if (node.trip.kind() != TripCount::Kind::kExact &&
      node.trip.kind() != TripCount::Kind::kUpperBound) {
    return absl::OkStatus();
  }
  constexpr uint64_t kLimit = uint64_t{1} << 24;
  std::optional<absl::StatusOr<uint64_t>> ran =
      RunLoopHead(node.text, node.begin, node.condition, node.update,
                  std::max<uint64_t>(kLimit, node.trip.count()));
  if (!ran.has_value()) return absl::OkStatus();
  if (!ran->ok()) {
    return absl::InvalidArgumentError(absl::StrCat(node.path, ": ", ran->status().message()));
  }
  const bool exact = node.trip.kind() == TripCount::Kind::kExact;
  if (exact ? **ran != node.trip.count() : **ran > node.trip.count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        node.path, ": TripCount::", exact ? "Exact(" : "UpperBound(", node.trip.count(),
        ") but `for (int ", node.text, " = ", node.begin, "; ", node.condition, "; ",
        node.update, ")` runs ", **ran, " iterations"));
  }
  return absl::OkStatus();
}

}  // namespace warptrace
