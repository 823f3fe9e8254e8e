#include "jit/builder/trip_expr.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace warptrace {
namespace {

using Op = TripExpr::Op;

constexpr const char* kBuiltinNames[] = {"blockIdx", "gridDim", "blockDim"};

// Recursive descent over the grammar in the header, lowest precedence first:
//   select := or ('?' select ':' select)?
//   or := and ('||' and)*          and := cmp ('&&' cmp)*
//   cmp := sum (('<'|'<='|'>'|'>='|'=='|'!=') sum)*
//   sum := term (('+'|'-') term)*  term := unary (('*'|'/'|'%') unary)*
//   unary := ('-'|'!') unary | primary
//   primary := number | builtin '.' (x|y|z) | ident | (min|max) '(' select ',' select ')'
//            | '(' select ')'
class Parser {
 public:
  Parser(std::string_view text, std::vector<Op>* ops, std::vector<std::string>* scalars,
         bool* reads_block_idx)
      : text_(text), ops_(ops), scalars_(scalars), reads_block_idx_(reads_block_idx) {}

  absl::Status Parse() {
    ASSIGN_OR_RETURN(const int root, Select(0));
    (void)root;
    Skip();
    if (pos_ != text_.size()) return Error("an operator or the end of the expression");
    return absl::OkStatus();
  }

 private:
  absl::Status Error(std::string_view expected) const {
    const std::string rest(text_.substr(pos_, 12));
    return absl::InvalidArgumentError(absl::StrCat(
        "per-block trip count '", std::string(text_), "': expected ", std::string(expected),
        " at column ", pos_ + 1, rest.empty() ? " (the end)" : absl::StrCat(" ('", rest, "')")));
  }

  void Skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(std::string_view token) {
    Skip();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  int Push(Op op) {
    ops_->push_back(op);
    return static_cast<int>(ops_->size()) - 1;
  }
  int Binary(char binary, int a, int b) {
    Op op;
    op.kind = Op::Kind::kBinary;
    op.binary = binary;
    op.a = a;
    op.b = b;
    return Push(op);
  }

  absl::StatusOr<int> Select(int depth) {
    if (depth > 64) return Error("a shallower expression (nesting over 64)");
    ASSIGN_OR_RETURN(const int cond, Or(depth));
    if (!Eat("?")) return cond;
    ASSIGN_OR_RETURN(const int then_value, Select(depth + 1));
    if (!Eat(":")) return Error("':'");
    ASSIGN_OR_RETURN(const int else_value, Select(depth + 1));
    Op op;
    op.kind = Op::Kind::kSelect;
    op.a = cond;
    op.b = then_value;
    op.c = else_value;
    return Push(op);
  }

  absl::StatusOr<int> Or(int depth) {
    ASSIGN_OR_RETURN(int left, And(depth));
    while (Eat("||")) {
      ASSIGN_OR_RETURN(const int right, And(depth));
      left = Binary('|', left, right);
    }
    return left;
  }

  absl::StatusOr<int> And(int depth) {
    ASSIGN_OR_RETURN(int left, Compare(depth));
    while (Eat("&&")) {
      ASSIGN_OR_RETURN(const int right, Compare(depth));
      left = Binary('&', left, right);
    }
    return left;
  }

  absl::StatusOr<int> Compare(int depth) {
    ASSIGN_OR_RETURN(int left, Sum(depth));
    while (true) {
      char op = 0;
      if (Eat("<=")) op = 'l';
      else if (Eat(">=")) op = 'g';
      else if (Eat("==")) op = '=';
      else if (Eat("!=")) op = '!';
      else if (Eat("<")) op = '<';
      else if (Eat(">")) op = '>';
      else return left;
      ASSIGN_OR_RETURN(const int right, Sum(depth));
      left = Binary(op, left, right);
    }
  }

  absl::StatusOr<int> Sum(int depth) {
    ASSIGN_OR_RETURN(int left, Term(depth));
    while (true) {
      char op = 0;
      if (Eat("+")) op = '+';
      else if (Eat("-")) op = '-';
      else return left;
      ASSIGN_OR_RETURN(const int right, Term(depth));
      left = Binary(op, left, right);
    }
  }

  absl::StatusOr<int> Term(int depth) {
    ASSIGN_OR_RETURN(int left, Unary(depth));
    while (true) {
      char op = 0;
      if (Eat("*")) op = '*';
      else if (Eat("/")) op = '/';
      else if (Eat("%")) op = '%';
      else return left;
      ASSIGN_OR_RETURN(const int right, Unary(depth));
      left = Binary(op, left, right);
    }
  }

  absl::StatusOr<int> Unary(int depth) {
    if (depth > 64) return Error("a shallower expression (nesting over 64)");
    Skip();
    // "!=" is never at the start of an operand, so '!' here is logical not.
    if (Eat("-") || Eat("!")) {
      const bool negate = text_[pos_ - 1] == '-';
      ASSIGN_OR_RETURN(const int operand, Unary(depth + 1));
      Op op;
      op.kind = negate ? Op::Kind::kNeg : Op::Kind::kNot;
      op.a = operand;
      return Push(op);
    }
    return Primary(depth);
  }

  absl::StatusOr<int> Primary(int depth) {
    Skip();
    if (Eat("(")) {
      ASSIGN_OR_RETURN(const int inner, Select(depth + 1));
      if (!Eat(")")) return Error("')'");
      return inner;
    }
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int64_t value = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        const int digit = text_[pos_] - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
          return Error("a literal that fits in 64 bits");
        }
        value = value * 10 + digit;
        ++pos_;
      }
      if (pos_ < text_.size() &&
          (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        return Error("a decimal literal without suffix");
      }
      Op op;
      op.value = value;
      return Push(op);
    }
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (pos_ == start) return Error("a number, a name or '('");
    const std::string name(text_.substr(start, pos_ - start));
    for (int i = 0; i < 3; ++i) {
      if (name != kBuiltinNames[i]) continue;
      if (!Eat(".")) return Error("'.x', '.y' or '.z'");
      Skip();
      const char axis = pos_ < text_.size() ? text_[pos_] : '\0';
      if (axis != 'x' && axis != 'y' && axis != 'z') return Error("'x', 'y' or 'z'");
      ++pos_;
      if (i == 0) *reads_block_idx_ = true;
      Op op;
      op.kind = Op::Kind::kBuiltin;
      op.value = i * 3 + (axis - 'x');
      return Push(op);
    }
    if (name == "min" || name == "max") {
      if (!Eat("(")) return Error("'(' after min/max");
      ASSIGN_OR_RETURN(const int a, Select(depth + 1));
      if (!Eat(",")) return Error("','");
      ASSIGN_OR_RETURN(const int b, Select(depth + 1));
      if (!Eat(")")) return Error("')'");
      Op op;
      op.kind = name == "min" ? Op::Kind::kMin : Op::Kind::kMax;
      op.a = a;
      op.b = b;
      return Push(op);
    }
    if (std::isdigit(static_cast<unsigned char>(name[0]))) return Error("a name");
    auto it = std::find(scalars_->begin(), scalars_->end(), name);
    if (it == scalars_->end()) it = scalars_->insert(scalars_->end(), name);
    Op op;
    op.kind = Op::Kind::kScalar;
    op.value = it - scalars_->begin();
    return Push(op);
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::vector<Op>* ops_;
  std::vector<std::string>* scalars_;
  bool* reads_block_idx_;
};

uint32_t Axis(const Dim3& d, int axis) { return axis == 0 ? d.x : axis == 1 ? d.y : d.z; }

}  // namespace

absl::StatusOr<TripExpr> TripExpr::Parse(std::string_view text) {
  TripExpr expr;
  expr.text_ = std::string(text);
  Parser parser(expr.text_, &expr.ops_, &expr.scalars_, &expr.reads_block_idx_);
  RETURN_IF_ERROR(parser.Parse());
  return expr;
}

absl::StatusOr<int64_t> TripExpr::Evaluate(const TripExprEnv& env) const {
  if (env.scalars.size() != scalars_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("per-block trip count '", text_, "' reads ",
                                                   scalars_.size(), " scalars but ",
                                                   env.scalars.size(), " were given"));
  }
  return Eval(static_cast<int>(ops_.size()) - 1, env);
}

absl::StatusOr<int64_t> TripExpr::Eval(int node, const TripExprEnv& env) const {
  const Op& op = ops_[node];
  auto overflow = [&] {
    return absl::OutOfRangeError(
        absl::StrCat("per-block trip count '", text_, "' overflows 64-bit arithmetic"));
  };
  switch (op.kind) {
    case Op::Kind::kLiteral:
      return op.value;
    case Op::Kind::kBuiltin: {
      const Dim3& d = op.value < 3 ? env.block_idx : op.value < 6 ? env.grid_dim : env.block_dim;
      return int64_t{Axis(d, static_cast<int>(op.value % 3))};
    }
    case Op::Kind::kScalar:
      return env.scalars[op.value];
    case Op::Kind::kNeg: {
      ASSIGN_OR_RETURN(const int64_t a, Eval(op.a, env));
      if (a == std::numeric_limits<int64_t>::min()) return overflow();
      return -a;
    }
    case Op::Kind::kNot: {
      ASSIGN_OR_RETURN(const int64_t a, Eval(op.a, env));
      return int64_t{a == 0};
    }
    case Op::Kind::kSelect: {
      ASSIGN_OR_RETURN(const int64_t cond, Eval(op.a, env));
      return Eval(cond != 0 ? op.b : op.c, env);
    }
    case Op::Kind::kMin:
    case Op::Kind::kMax: {
      ASSIGN_OR_RETURN(const int64_t a, Eval(op.a, env));
      ASSIGN_OR_RETURN(const int64_t b, Eval(op.b, env));
      return op.kind == Op::Kind::kMin ? std::min(a, b) : std::max(a, b);
    }
    case Op::Kind::kBinary:
      break;
  }
  ASSIGN_OR_RETURN(const int64_t a, Eval(op.a, env));
  if (op.binary == '&' && a == 0) return int64_t{0};
  if (op.binary == '|' && a != 0) return int64_t{1};
  ASSIGN_OR_RETURN(const int64_t b, Eval(op.b, env));
  int64_t r = 0;
  switch (op.binary) {
    case '+':
      if (__builtin_add_overflow(a, b, &r)) return overflow();
      return r;
    case '-':
      if (__builtin_sub_overflow(a, b, &r)) return overflow();
      return r;
    case '*':
      if (__builtin_mul_overflow(a, b, &r)) return overflow();
      return r;
    case '/':
    case '%':
      if (b == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "per-block trip count '", text_, "' divides by zero (", a, op.binary == '/' ? " / " : " % ", b,
            ")"));
      }
      if (a == std::numeric_limits<int64_t>::min() && b == -1) return overflow();
      return op.binary == '/' ? a / b : a % b;
    case '<': return int64_t{a < b};
    case 'l': return int64_t{a <= b};
    case '>': return int64_t{a > b};
    case 'g': return int64_t{a >= b};
    case '=': return int64_t{a == b};
    case '!': return int64_t{a != b};
    case '&':
    case '|': return int64_t{b != 0};
  }
  return absl::InternalError("unknown operator");
}

}  // namespace warptrace
