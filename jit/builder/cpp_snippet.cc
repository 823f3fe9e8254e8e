#include "jit/builder/cpp_snippet.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace warptrace {
namespace {

bool IsIdentStart(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || u >= 0x80;
}
bool IsIdentChar(char c) {
  return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c));
}
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

int LineOf(absl::string_view code, size_t offset) {
  return 1 + static_cast<int>(std::count(code.begin(), code.begin() + offset, '\n'));
}

bool IsLiteralPrefix(absl::string_view ident) {
  static const auto* prefixes =
      new std::set<absl::string_view>{"L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R"};
  return prefixes->count(ident) != 0;
}

class Lexer {
 public:
  explicit Lexer(absl::string_view code) : code_(code) {}

  absl::StatusOr<std::vector<CppToken>> Run() {
    bool line_start = true;  // only whitespace since the last newline
    while (pos_ < code_.size()) {
      const char c = code_[pos_];
      if (c == '\n' || std::isspace(static_cast<unsigned char>(c))) {
        line_start = line_start || c == '\n';
        ++pos_;
      } else if (c == '#' && line_start) {
        SkipPreprocessorLine();
      } else if (c == '/' && Next() == '/') {
        pos_ = std::min(code_.find('\n', pos_), code_.size());
      } else if (c == '/' && Next() == '*') {
        const size_t end = code_.find("*/", pos_ + 2);
        if (end == absl::string_view::npos) return Unterminated("block comment", pos_);
        pos_ = end + 2;
      } else {
        line_start = false;
        RETURN_IF_ERROR(Token());
      }
    }
    return std::move(tokens_);
  }

 private:
  char Next() const { return pos_ + 1 < code_.size() ? code_[pos_ + 1] : '\0'; }

  absl::Status Unterminated(const char* what, size_t start) const {
    return absl::InvalidArgumentError(
        absl::StrCat("unterminated ", what, " starting on line ", LineOf(code_, start)));
  }

  void Push(CppToken::Kind kind, size_t start) {
    tokens_.push_back(CppToken{kind, code_.substr(start, pos_ - start), start});
  }

  void SkipPreprocessorLine() {
    while (pos_ < code_.size() && code_[pos_] != '\n') {
      pos_ += code_[pos_] == '\\' ? 2 : 1;  // a backslash continues the line
    }
  }

  absl::Status Token() {
    const size_t start = pos_;
    const char c = code_[pos_];
    if (IsIdentStart(c)) {
      while (pos_ < code_.size() && IsIdentChar(code_[pos_])) ++pos_;
      if (pos_ < code_.size() && (code_[pos_] == '"' || code_[pos_] == '\'') &&
          IsLiteralPrefix(code_.substr(start, pos_ - start))) {
        return Literal(start);
      }
      Push(CppToken::Kind::kIdentifier, start);
    } else if (IsDigit(c) || (c == '.' && IsDigit(Next()))) {
      Number();
      Push(CppToken::Kind::kNumber, start);
    } else if (c == '"' || c == '\'') {
      return Literal(start);
    } else {
      const bool pair = (c == ':' && Next() == ':') || (c == '-' && Next() == '>');
      pos_ += pair ? 2 : 1;
      Push(CppToken::Kind::kPunct, start);
    }
    return absl::OkStatus();
  }

  // 1'000, 0x1p-3, 1.5e+10f, .5
  void Number() {
    ++pos_;
    while (pos_ < code_.size()) {
      const char c = code_[pos_];
      const char prev = code_[pos_ - 1];
      const bool exponent_sign =
          (c == '+' || c == '-') && (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P');
      const bool separator = c == '\'' && pos_ + 1 < code_.size() && IsIdentChar(code_[pos_ + 1]);
      if (!IsIdentChar(c) && c != '.' && !exponent_sign && !separator) return;
      ++pos_;
    }
  }

  // A string or character literal whose prefix (if any) starts at `start`; pos_ is at
  // the opening quote.
  absl::Status Literal(size_t start) {
    const char quote = code_[pos_];
    if (quote == '"' && pos_ > start && code_[pos_ - 1] == 'R') {
      const size_t open = code_.find('(', pos_);
      if (open == absl::string_view::npos) return Unterminated("raw string literal", start);
      const std::string close =
          absl::StrCat(")", code_.substr(pos_ + 1, open - pos_ - 1), "\"");
      const size_t end = code_.find(close, open);
      if (end == absl::string_view::npos) return Unterminated("raw string literal", start);
      pos_ = end + close.size();
    } else {
      ++pos_;
      while (pos_ < code_.size() && code_[pos_] != quote && code_[pos_] != '\n') {
        pos_ += code_[pos_] == '\\' ? 2 : 1;
      }
      if (pos_ >= code_.size() || code_[pos_] != quote) {
        return Unterminated(quote == '"' ? "string literal" : "character literal", start);
      }
      ++pos_;
    }
    Push(CppToken::Kind::kLiteral, start);
    return absl::OkStatus();
  }

  absl::string_view code_;
  size_t pos_ = 0;
  std::vector<CppToken> tokens_;
};

// Walks the statement structure of the tokens: what a break, continue, goto or return
// would leave.
class Scanner {
 public:
  Scanner(absl::string_view code, const std::vector<CppToken>& tokens)
      : code_(code), tokens_(tokens) {}

  SnippetFacts Run() {
    bool is_extern = false, is_shared = false;
    for (const CppToken& t : tokens_) {
      is_extern = is_extern || (t.kind == CppToken::Kind::kIdentifier && t.text == "extern");
      is_shared = is_shared || (t.kind == CppToken::Kind::kIdentifier && t.text == "__shared__");
    }
    facts_.declares_extern_shared = is_extern && is_shared;
    if (is_shared && !is_extern) facts_.shared_decls = SharedDeclarations();
    const Context top;
    while (!AtEnd()) {
      if (IsPunct("}")) {
        Unbalanced(absl::StrCat("unbalanced '}' on line ", Line(Peek())));
        ++pos_;
      } else {
        Statement(top);
      }
    }
    for (const std::string& label : gotos_) {
      if (labels_.count(label) == 0) facts_.escaping_jumps.push_back("goto " + label);
    }
    return std::move(facts_);
  }

 private:
  struct Context {
    bool nested = false;  // inside a lambda or a local class: a function of its own
    bool can_break = false;
    bool can_continue = false;
    bool conditional = false;  // under an if/else or a switch of the statement
  };
  static Context Loop(Context c) { return {c.nested, true, true, c.conditional}; }
  static Context Switch(Context c) { return {c.nested, true, c.can_continue, true}; }
  static Context Nested() { return {true, false, false, false}; }
  static Context Conditional(Context c) {
    c.conditional = true;
    return c;
  }

  // Notes a block barrier call (__syncthreads and its _count/_and/_or forms) at the current
  // token, and whether the statement's own control flow decides if it runs.
  void NoteBarrier(const Context& c) {
    const CppToken& t = Peek();
    if (c.nested) return;
    if (t.kind != CppToken::Kind::kIdentifier || !absl::StartsWith(t.text, "__syncthreads")) {
      return;
    }
    const std::string where = absl::StrCat("`", t.text, "` on line ", Line(t));
    if (facts_.block_barrier.empty()) facts_.block_barrier = where;
    if (c.conditional && facts_.conditional_block_barrier.empty()) {
      facts_.conditional_block_barrier = where;
    }
  }

  bool AtEnd() const { return pos_ >= tokens_.size(); }
  const CppToken& Peek(size_t ahead = 0) const {
    static const CppToken kEnd;
    return pos_ + ahead < tokens_.size() ? tokens_[pos_ + ahead] : kEnd;
  }
  bool IsPunct(absl::string_view text, size_t ahead = 0) const {
    return pos_ + ahead < tokens_.size() && Peek(ahead).kind == CppToken::Kind::kPunct &&
           Peek(ahead).text == text;
  }
  bool IsWord(absl::string_view text) const {
    return !AtEnd() && Peek().kind == CppToken::Kind::kIdentifier && Peek().text == text;
  }
  int Line(const CppToken& t) const { return LineOf(code_, t.offset); }
  void Unbalanced(std::string what) {
    if (facts_.unbalanced.empty()) facts_.unbalanced = std::move(what);
  }

  void Statement(const Context& c) {
    if (AtEnd() || IsPunct("}")) return;  // the enclosing block's end: its caller's
    if (IsPunct("{")) return Block(c);
    if (IsPunct(";")) {
      ++pos_;
      return;
    }
    if (Peek().kind != CppToken::Kind::kIdentifier) return Expression(c);
    const absl::string_view word = Peek().text;
    if (word == "for" || word == "while") {
      ++pos_;
      SkipParens(c);
      return Statement(Loop(c));
    }
    if (word == "do") return DoWhile(c);
    if (word == "switch") {
      ++pos_;
      SkipParens(c);
      return Statement(Switch(c));
    }
    if (word == "if") return If(c);
    if (word == "else") {
      ++pos_;
      return Statement(Conditional(c));
    }
    if (word == "case" || (word == "default" && IsPunct(":", 1))) return CaseLabel(c);
    if (IsPunct(":", 1)) {  // a label
      if (!c.nested) labels_.insert(std::string(word));
      pos_ += 2;
      return Statement(c);
    }
    Jump(c, word);
    Expression(c);
  }

  // Notes a break, continue, goto or return at the statement's start; the caller then
  // consumes the rest (a return value may hold a lambda).
  void Jump(const Context& c, absl::string_view word) {
    if ((word == "break" && !c.can_break) || (word == "continue" && !c.can_continue)) {
      facts_.escaping_jumps.push_back(std::string(word));
    } else if (word == "goto" && !c.nested && Peek(1).kind == CppToken::Kind::kIdentifier) {
      gotos_.push_back(std::string(Peek(1).text));
    } else if (word == "return" && !c.nested) {
      facts_.returns_from_kernel = true;
    }
  }

  void DoWhile(const Context& c) {
    ++pos_;
    Statement(Loop(c));
    if (IsWord("while")) {
      ++pos_;
      SkipParens(c);
      Expression(c);
    }
  }

  void If(const Context& c) {
    ++pos_;
    if (IsWord("constexpr")) ++pos_;
    SkipParens(c);
    Statement(Conditional(c));
    if (IsWord("else")) {
      ++pos_;
      Statement(Conditional(c));
    }
  }

  void CaseLabel(const Context& c) {
    while (!AtEnd() && !IsPunct(":") && !IsPunct(";") && !IsPunct("{") && !IsPunct("}")) {
      if (IsPunct("(") || IsPunct("[")) {
        SkipBalanced(c);
      } else {
        ++pos_;
      }
    }
    if (IsPunct(":")) ++pos_;
    Statement(c);
  }

  // An expression or declaration statement, up to and including its ';' (or up to the
  // '}' that ends the enclosing block). Braces inside it are a lambda's body, a local
  // class's body or an initializer list: a function of their own as far as jumps go.
  void Expression(const Context& c) {
    while (!AtEnd()) {
      if (IsPunct(";")) {
        ++pos_;
        return;
      }
      if (IsPunct("}")) return;
      if (IsPunct("(") || IsPunct("[")) {
        SkipBalanced(c);
      } else if (IsPunct("{")) {
        Block(Nested());
      } else {
        if (IsPunct(")") || IsPunct("]")) {
          Unbalanced(absl::StrCat("unbalanced '", Peek().text, "' on line ", Line(Peek())));
        }
        NoteBarrier(c);
        ++pos_;
      }
    }
  }

  void Block(const Context& c) {
    const CppToken& open = Peek();
    ++pos_;
    while (!AtEnd()) {
      if (IsPunct("}")) {
        ++pos_;
        return;
      }
      if (IsPunct(")") || IsPunct("]")) {
        Unbalanced(absl::StrCat("unbalanced '", Peek().text, "' on line ", Line(Peek())));
        ++pos_;
        continue;
      }
      Statement(c);
    }
    Unbalanced(absl::StrCat("'{' on line ", Line(open), " is never closed"));
  }

  // A control statement's parenthesized head.
  void SkipParens(const Context& c) {
    if (IsPunct("(")) SkipBalanced(c);
  }

  // From a '(' or '[' to its match.
  void SkipBalanced(const Context& c) {
    const CppToken& open = Peek();
    const absl::string_view close = open.text == "(" ? ")" : "]";
    ++pos_;
    if (open.text == "(" && IsPunct("{")) Block(c);  // a GNU statement expression: ({ ... })
    while (!AtEnd()) {
      if (IsPunct(close)) {
        ++pos_;
        return;
      }
      if (IsPunct("(") || IsPunct("[")) {
        SkipBalanced(c);
      } else if (IsPunct("{")) {
        Block(Nested());
      } else if (IsPunct(")") || IsPunct("]") || IsPunct("}")) {
        Unbalanced(absl::StrCat("'", open.text, "' on line ", Line(open), " is closed by '",
                                Peek().text, "' on line ", Line(Peek())));
        return;
      } else {
        NoteBarrier(c);
        ++pos_;
      }
    }
    Unbalanced(absl::StrCat("'", open.text, "' on line ", Line(open), " is never closed"));
  }

  absl::string_view code_;
  const std::vector<CppToken>& tokens_;
  size_t pos_ = 0;
  // Each `__shared__ ... ;` of the statement, split where it has the simple shape.
  std::vector<RawSharedDecl> SharedDeclarations() const {
    std::vector<RawSharedDecl> out;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (tokens_[i].kind != CppToken::Kind::kIdentifier || tokens_[i].text != "__shared__") {
        continue;
      }
      size_t end = i;
      while (end < tokens_.size() && tokens_[end].text != ";") ++end;
      RawSharedDecl decl;
      const size_t stop = end < tokens_.size() ? tokens_[end].offset + 1 : code_.size();
      decl.text = std::string(code_.substr(tokens_[i].offset, stop - tokens_[i].offset));
      Split(i + 1, end, decl);
      out.push_back(std::move(decl));
      i = end;
    }
    return out;
  }

  // Tokens [begin, end) after __shared__: [__align__ ( N )] type... name ([ dim ])*.
  void Split(size_t begin, size_t end, RawSharedDecl& decl) const {
    size_t i = begin;
    if (i + 3 < end && tokens_[i].text == "__align__" && tokens_[i + 1].text == "(" &&
        tokens_[i + 3].text == ")") {
      decl.align = std::string(tokens_[i + 2].text);
      i += 4;
    }
    size_t name = end;
    for (size_t k = i; k < end; ++k) {
      if (tokens_[k].text == "[") {
        name = k - 1;
        break;
      }
      if (k + 1 == end) name = k;
    }
    if (name == end || name <= i || tokens_[name].kind != CppToken::Kind::kIdentifier) return;
    std::vector<std::string> type;
    for (size_t k = i; k < name; ++k) {
      const absl::string_view t = tokens_[k].text;
      if (t == "," || t == "=" || t == "*" || t == "&" || t == "(" || t == ")") return;
      type.emplace_back(t);
    }
    for (size_t k = name + 1; k < end;) {
      if (tokens_[k].text != "[") return;
      size_t close = k + 1;
      std::string dim;
      while (close < end && tokens_[close].text != "]") {
        if (tokens_[close].text == "[" || tokens_[close].text == ",") return;
        absl::StrAppend(&dim, dim.empty() ? "" : " ", tokens_[close].text);
        ++close;
      }
      if (close == end || dim.empty()) return;
      decl.dims.push_back(std::move(dim));
      k = close + 1;
    }
    decl.type = absl::StrJoin(type, " ");
    decl.name = std::string(tokens_[name].text);
    decl.parsed = true;
  }

  SnippetFacts facts_;
  std::set<std::string> labels_;   // defined by the snippet itself (not in lambdas)
  std::vector<std::string> gotos_;  // targets, in order
};

}  // namespace

absl::StatusOr<std::vector<CppToken>> LexCpp(absl::string_view code) {
  return Lexer(code).Run();
}

absl::StatusOr<SnippetFacts> ScanSnippet(absl::string_view code) {
  ASSIGN_OR_RETURN(std::vector<CppToken> tokens, LexCpp(code));
  return Scanner(code, tokens).Run();
}

}  // namespace warptrace
