#include "jit/host/compiler/source_lowering.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace warptrace::host {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The newlines of `text`, so a replacement keeps the lines below it in place.
std::string Newlines(absl::string_view text) {
  return std::string(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')), '\n');
}

// Index just past the end of the comment, literal or directive starting at `i`, or `i`.
size_t SkipNonCode(absl::string_view s, size_t i, bool line_start) {
  if (s.substr(i, 2) == "//") {
    size_t end = s.find('\n', i);
    return end == absl::string_view::npos ? s.size() : end;
  }
  if (s.substr(i, 2) == "/*") {
    size_t end = s.find("*/", i + 2);
    return end == absl::string_view::npos ? s.size() : end + 2;
  }
  if (s[i] == '"' || s[i] == '\'') {
    const char quote = s[i];
    size_t j = i + 1;
    while (j < s.size() && s[j] != quote && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
    return std::min(j + 1, s.size());
  }
  if (line_start && s[i] == '#') {  // a directive, with its continuation lines
    size_t j = i;
    while (j < s.size() && s[j] != '\n') {
      if (s[j] == '\\' && j + 1 < s.size() && s[j + 1] == '\n') ++j;
      ++j;
    }
    return j;
  }
  return i;
}

// Copies the comment, literal or directive starting at `*i` to `out` and moves `*i` past
// it; false (nothing copied) when code starts there.
bool CopyNonCode(absl::string_view s, bool line_start, size_t* i, std::string* out) {
  const size_t skipped = SkipNonCode(s, *i, line_start);
  if (skipped == *i) return false;
  absl::StrAppend(out, s.substr(*i, skipped - *i));
  *i = skipped;
  return true;
}

// From `open` (an opening parenthesis or bracket) to just past its match, or npos.
size_t MatchClose(absl::string_view s, size_t open) {
  int depth = 0;
  for (size_t j = open; j < s.size(); ++j) {
    const size_t skipped = SkipNonCode(s, j, false);
    if (skipped != j) {
      j = skipped - 1;
      continue;
    }
    if (s[j] == '(' || s[j] == '[' || s[j] == '{') ++depth;
    if (s[j] == ')' || s[j] == ']' || s[j] == '}') {
      if (--depth == 0) return j + 1;
    }
  }
  return absl::string_view::npos;
}

// The text of PTX operands/strings made safe inside a pragma message.
std::string PragmaSafe(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (out.size() >= 60) {
      out += "...";
      break;
    }
    if (c == '\n' || c == '\t') c = ' ';
    if (c == '"' || c == '\\') continue;
    if (std::isprint(static_cast<unsigned char>(c))) out += c;
  }
  return out;
}

// `asm [volatile|goto|inline]* ( ... )` at `i` (the keyword): the pragma error replacing it.
bool LowerAsm(absl::string_view s, size_t* i, size_t keyword_end, std::string* out) {
  size_t j = keyword_end;
  for (;;) {
    while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    size_t k = j;
    while (k < s.size() && IsIdent(s[k])) ++k;
    const absl::string_view word = s.substr(j, k - j);
    if (word == "volatile" || word == "__volatile__" || word == "goto" || word == "inline") {
      j = k;
      continue;
    }
    break;
  }
  if (j >= s.size() || s[j] != '(') return false;
  const size_t end = MatchClose(s, j);
  if (end == absl::string_view::npos) return false;
  const absl::string_view statement = s.substr(*i, end - *i);
  absl::StrAppend(out, "_Pragma(\"GCC error \\\"inline PTX (asm(", PragmaSafe(s.substr(j + 1, end - j - 2)),
                  ")) cannot run on the host backend: this kernel needs a GPU; use the "
                  "device functions of warptrace_primitives.cuh, which have a host "
                  "implementation\\\"\") ((void)0)",
                  Newlines(statement));
  *i = end;
  return true;
}

struct Declaration {
  bool is_extern = false;
  std::string align;  // from __align__(n), or empty
  std::string type;
  std::string name;
  std::string dims;
};

// Parses the declaration text after `__shared__` up to (not including) its `;`.
bool ParseDeclaration(absl::string_view text, Declaration* d) {
  std::string rest;
  size_t i = 0;
  while (i < text.size()) {
    if (text.substr(i, 9) == "__align__") {
      const size_t open = text.find('(', i);
      const size_t close = open == absl::string_view::npos ? open : MatchClose(text, open);
      if (close == absl::string_view::npos) return false;
      d->align = std::string(absl::StripAsciiWhitespace(text.substr(open + 1, close - open - 2)));
      i = close;
      continue;
    }
    rest += text[i++];
  }
  int depth = 0;
  for (char c : rest) {
    if (c == '(' || c == '[' || c == '<') ++depth;
    if (c == ')' || c == ']' || c == '>') --depth;
    if (depth == 0 && (c == ',' || c == '=' || c == '{')) return false;
  }
  absl::string_view body = absl::StripAsciiWhitespace(rest);
  const size_t bracket = body.find('[');
  absl::string_view head = body.substr(0, bracket);
  d->dims = bracket == absl::string_view::npos ? "" : std::string(body.substr(bracket));
  head = absl::StripTrailingAsciiWhitespace(head);
  size_t name_start = head.size();
  while (name_start > 0 && IsIdent(head[name_start - 1])) --name_start;
  if (name_start == head.size() || name_start == 0) return false;
  d->name = std::string(head.substr(name_start));
  d->type = std::string(absl::StripAsciiWhitespace(head.substr(0, name_start)));
  return !d->type.empty() && IsIdentStart(d->name[0]);
}

// `[extern] __shared__ ...;` with the keyword at `keyword`, a preceding `extern` starting
// at `start`: the lowered declaration.
bool LowerShared(absl::string_view s, size_t start, size_t keyword, bool is_extern,
                 size_t* i, uint32_t* next_site, std::string* out) {
  const size_t decl_start = keyword + 10;
  size_t semicolon = decl_start;
  int depth = 0;
  for (; semicolon < s.size(); ++semicolon) {
    const char c = s[semicolon];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == ';' || c == '{' || c == '}')) break;
  }
  if (semicolon >= s.size() || s[semicolon] != ';') return false;
  Declaration d;
  d.is_extern = is_extern;
  if (!ParseDeclaration(s.substr(decl_start, semicolon - decl_start), &d)) return false;
  const absl::string_view original = s.substr(start, semicolon + 1 - start);
  if (is_extern) {
    absl::StrAppend(out, d.type, "* const ", d.name, " = ::warptrace_host::DynamicShared<",
                    d.type, ">(\"", d.name, "\");");
  } else {
    absl::StrAppend(out, "auto& ", d.name, " = ::warptrace_host::Shared<", d.type, d.dims,
                    d.align.empty() ? "" : absl::StrCat(", ", d.align), ">(", (*next_site)++,
                    "u, \"", d.name, "\");");
  }
  absl::StrAppend(out, Newlines(original));
  *i = semicolon + 1;
  return true;
}

// Just past the `[...]` subscripts that follow `i` (spaces and tabs between them allowed),
// or `i` when none does; npos for an unbalanced one.
size_t SkipSubscripts(absl::string_view s, size_t i) {
  size_t end = i;
  for (;;) {
    size_t j = end;
    while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
    if (j >= s.size() || s[j] != '[') return end;
    const size_t close = MatchClose(s, j);
    if (close == absl::string_view::npos) return close;
    end = close;
  }
}

// The code of `s` with comments, literals and directives blanked to spaces (newlines kept),
// so that the scans below see only code at the original offsets.
std::string CodeOnly(absl::string_view s) {
  std::string code(s);
  for (size_t i = 0; i < s.size();) {
    const size_t skipped = SkipNonCode(s, i, i == 0 || s[i - 1] == '\n');
    if (skipped == i) {
      ++i;
      continue;
    }
    for (size_t j = i; j < skipped; ++j) {
      if (code[j] != '\n') code[j] = ' ';
    }
    i = skipped;
  }
  return code;
}

size_t SkipSpace(absl::string_view s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// Just past the `<...>` at `i` (template arguments), or npos when unbalanced.
size_t SkipAngles(absl::string_view s, size_t i) {
  int depth = 0;
  for (size_t j = i; j < s.size(); ++j) {
    if (s[j] == '<') ++depth;
    if (s[j] == '>' && --depth == 0) return j + 1;
    if (s[j] == ';' || s[j] == '{' || s[j] == '}') return absl::string_view::npos;
  }
  return absl::string_view::npos;
}

// The top-level comma-separated pieces of the parenthesized list from `open` (its `(`) to
// `close` (just past its `)`); none for an empty list.
std::vector<absl::string_view> SplitArguments(absl::string_view s, size_t open, size_t close) {
  std::vector<absl::string_view> pieces;
  int depth = 0;
  size_t begin = open + 1;
  for (size_t j = open + 1; j + 1 < close; ++j) {
    const char c = s[j];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      pieces.push_back(s.substr(begin, j - begin));
      begin = j + 1;
    }
  }
  const absl::string_view inner = s.substr(open + 1, close - 2 - open);
  if (!absl::StripAsciiWhitespace(inner).empty()) {
    pieces.push_back(s.substr(begin, close - 1 - begin));
  }
  return pieces;
}

// The name an argument `ident` or `ident[...]...` passes (its whole text), else "".
absl::string_view ArgumentArray(absl::string_view arg) {
  arg = absl::StripAsciiWhitespace(arg);
  size_t k = 0;
  while (k < arg.size() && IsIdent(arg[k])) ++k;
  if (k == 0 || !IsIdentStart(arg[0])) return {};
  const size_t end = SkipSubscripts(arg, k);
  if (end == absl::string_view::npos || SkipSpace(arg, end) != arg.size()) return {};
  return arg.substr(0, k);
}

// The declared name of a parameter (`float (&d)[N / 16][8]` -> d, `unsigned short* sA` ->
// sA): its last identifier outside subscripts, template arguments and a default value.
std::string ParameterName(absl::string_view param) {
  std::string name;
  int square = 0, angle = 0;
  for (size_t i = 0; i < param.size();) {
    const char c = param[i];
    if (c == '=' && square == 0 && angle == 0) break;
    if (c == '[') ++square;
    if (c == ']') --square;
    if (c == '<') ++angle;
    if (c == '>') --angle;
    if (IsIdentStart(c)) {
      size_t end = i;
      while (end < param.size() && IsIdent(param[end])) ++end;
      if (square == 0 && angle == 0) name = std::string(param.substr(i, end - i));
      i = end;
      continue;
    }
    ++i;
  }
  return name;
}

// The register arrays of the source: the identifiers a wgmma call takes as registers (its
// accumulator, first argument, and for the RS form its A fragment, second; each possibly
// subscripted: `warptrace_wgmma_mma_async_bf16_ss<...>(acc[m], ...)`), and, through
// helpers, the arguments a call passes where the helper's parameter is one of those names
// (`gemm(tSrS, ...)` of `void gemm(float (&tCrC)[32], ...)` that passes tCrC to a wgmma),
// to a fixed point. Scope-blind, so it over-approximates; the run-time check decides.
std::set<std::string, std::less<>> FindRegisterArrays(absl::string_view source) {
  const std::string code_text = CodeOnly(source);
  const absl::string_view s = code_text;
  constexpr absl::string_view kCall = "warptrace_wgmma_mma_async_bf16_";
  struct Call {
    absl::string_view callee;
    size_t open, close;  // its argument list's parentheses
  };
  std::vector<Call> calls;
  std::map<absl::string_view, std::vector<std::string>> functions;  // name -> parameters
  for (size_t i = 0; i < s.size();) {
    if (!IsIdentStart(s[i]) || (i > 0 && IsIdent(s[i - 1]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < s.size() && IsIdent(s[end])) ++end;
    const absl::string_view word = s.substr(i, end - i);
    i = end;
    size_t j = SkipSpace(s, end);
    if (j < s.size() && s[j] == '<') {
      const size_t after = SkipAngles(s, j);
      if (after == absl::string_view::npos) continue;
      j = SkipSpace(s, after);
    }
    if (j >= s.size() || s[j] != '(') continue;
    const size_t close = MatchClose(s, j);
    if (close == absl::string_view::npos) continue;
    if (word == "if" || word == "for" || word == "while" || word == "switch" ||
        word == "return" || word == "sizeof" || word == "catch") {
      continue;
    }
    calls.push_back({word, j, close});
    size_t body = SkipSpace(s, close);
    while (body < s.size() && IsIdentStart(s[body])) {  // const, noexcept, ...
      while (body < s.size() && IsIdent(s[body])) ++body;
      body = SkipSpace(s, body);
    }
    if (body < s.size() && s[body] == '{') {
      std::vector<std::string>& params = functions[word];
      params.clear();
      for (absl::string_view param : SplitArguments(s, j, close)) {
        params.push_back(ParameterName(param));
      }
    }
  }
  std::set<std::string, std::less<>> names;
  for (const Call& c : calls) {
    if (!absl::StartsWith(c.callee, kCall) || c.callee.size() != kCall.size() + 2) continue;
    const std::vector<absl::string_view> args = SplitArguments(s, c.open, c.close);
    const size_t registers = absl::EndsWith(c.callee, "rs") ? 2 : 1;
    for (size_t a = 0; a < registers && a < args.size(); ++a) {
      const absl::string_view name = ArgumentArray(args[a]);
      if (!name.empty()) names.emplace(name);
    }
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const Call& c : calls) {
      auto f = functions.find(c.callee);
      if (f == functions.end()) continue;
      const std::vector<absl::string_view> args = SplitArguments(s, c.open, c.close);
      for (size_t a = 0; a < args.size() && a < f->second.size(); ++a) {
        if (names.count(f->second[a]) == 0) continue;
        const absl::string_view name = ArgumentArray(args[a]);
        if (!name.empty() && names.emplace(name).second) grew = true;
      }
    }
  }
  return names;
}

// Whether the identifier at `i` (followed by `[`) is an element access rather than the
// declarator of a declaration (`float acc[64]`, `float a[4], acc[4]`) or a member
// (`s.acc[i]`, `p->acc[i]`, `ns::acc[i]`): what precedes it is an operator or punctuation
// (a `,` only inside parentheses: a call's argument, not the next declarator), or a keyword
// that starts an expression. (A `*` before it is an operator: a register array is never
// declared as an array of pointers.) `prev` is the last character of code before it,
// `prev2` the one before that, `prev_word` the identifier ending there (if any),
// `paren_depth` the parentheses open at `i`.
bool IsElementAccess(char prev, char prev2, absl::string_view prev_word, int paren_depth) {
  if (!prev_word.empty()) {
    return prev_word == "return" || prev_word == "case" || prev_word == "else" ||
           prev_word == "do";
  }
  if (prev == ',') return paren_depth > 0;
  if (prev == '.' || (prev == '>' && prev2 == '-') || (prev == ':' && prev2 == ':')) {
    return false;
  }
  // `&acc[i]` takes an address (no access: a float array has no bitwise and).
  return prev != '\0' && prev != '&';
}

// Where a wrapped subscript expression ends, and the text that closes the wrap there.
struct PendingClose {
  size_t at;
  std::string text;
};

}  // namespace

std::string LowerForHost(absl::string_view s, uint32_t* next_site) {
  const std::set<std::string, std::less<>> registers = FindRegisterArrays(s);
  char prev = '\0';            // the last character of code written
  char prev2 = '\0';           // the one before it
  absl::string_view prev_word;  // the identifier that ended there, if any
  int paren_depth = 0;
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  bool line_start = true;
  size_t pending_extern = absl::string_view::npos;  // where an `extern` just before began
  size_t out_before_extern = 0;
  std::vector<PendingClose> closes;  // innermost last: nested wraps end first
  for (size_t i = 0; i < s.size();) {
    while (!closes.empty() && closes.back().at <= i) {
      out += closes.back().text;
      closes.pop_back();
    }
    if (CopyNonCode(s, line_start, &i, &out)) continue;
    const char c = s[i];
    if (!IsIdentStart(c)) {
      if (c == '\n') line_start = true;
      if (!std::isspace(static_cast<unsigned char>(c))) {
        line_start = false;
        pending_extern = absl::string_view::npos;
        if (!IsIdent(c)) {  // a digit continues a number, not an identifier
          prev2 = prev;
          prev = c;
          prev_word = {};
        }
        if (c == '(') ++paren_depth;
        if (c == ')' && paren_depth > 0) --paren_depth;
      }
      out += c;
      ++i;
      continue;
    }
    line_start = false;
    size_t end = i;
    while (end < s.size() && IsIdent(s[end])) ++end;
    const absl::string_view word = s.substr(i, end - i);
    if (word == "asm" || word == "__asm__" || word == "__asm") {
      if (LowerAsm(s, &i, end, &out)) continue;
    }
    if (word == "__shared__") {
      const bool is_extern = pending_extern != absl::string_view::npos;
      const size_t start = is_extern ? pending_extern : i;
      std::string lowered;
      size_t next = i;
      if (LowerShared(s, start, i, is_extern, &next, next_site, &lowered)) {
        if (is_extern) out.resize(out_before_extern);
        out += lowered;
        i = next;
        pending_extern = absl::string_view::npos;
        continue;
      }
    }
    if (word == "extern") {
      pending_extern = i;
      out_before_extern = out.size();
    } else {
      pending_extern = absl::string_view::npos;
    }
    const size_t chain_end =
        registers.count(word) != 0 ? SkipSubscripts(s, end) : absl::string_view::npos;
    if (chain_end != absl::string_view::npos && chain_end != end &&
        IsElementAccess(prev, prev2, prev_word, paren_depth)) {
      // The whole subscript expression goes through the check, which decides at run time
      // (by its type and address) whether it accesses registers. The statement's #line
      // file is its builder path.
      absl::StrAppend(&out, "::warptrace_host::wgmma::Access(", word);
      closes.push_back({chain_end, absl::StrCat(", \"", word, "\", __builtin_FILE())")});
    } else {
      absl::StrAppend(&out, word);
    }
    prev2 = prev;
    prev = word.back();
    prev_word = word;
    i = end;
  }
  while (!closes.empty()) {  // a wrap that ends with the text (no code after it)
    out += closes.back().text;
    closes.pop_back();
  }
  return out;
}

namespace {

// Whether a line of a builder statement can take a statement before it: it starts a
// statement (not a label's continuation, an else, a closing brace or a directive).
bool StartsStatement(absl::string_view line) {
  if (line.empty()) return false;
  const char c = line[0];
  if (!IsIdentStart(c) && c != '(' && c != '*' && c != '{' && c != ':' && c != '+' &&
      c != '-' && c != '&' && c != '[') {
    return false;
  }
  size_t end = 0;
  while (end < line.size() && IsIdent(line[end])) ++end;
  const absl::string_view word = line.substr(0, end);
  return word != "else" && word != "case" && word != "default" && word != "public" &&
         word != "private" && word != "protected" && word != "while" && word != "catch";
}

}  // namespace

std::string MarkStatements(absl::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  int depth = 0;  // braces: a statement is inside a function body
  bool line_start = true;
  bool after_line_directive = false;
  for (size_t i = 0; i < s.size();) {
    if (line_start && after_line_directive && s[i] != '\n') {
      size_t j = i;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      absl::StrAppend(&out, s.substr(i, j - i));
      i = j;
      after_line_directive = false;
      const size_t eol = std::min(s.find('\n', i), s.size());
      if (depth > 0 && StartsStatement(s.substr(i, eol - i))) {
        out += "WARPTRACE_HOST_STATEMENT() ";
      }
      if (i >= s.size()) break;
    }
    if (line_start && s[i] == '#') {
      after_line_directive = absl::StartsWith(s.substr(i), "#line 1 \"kernel ");
    }
    if (CopyNonCode(s, line_start, &i, &out)) continue;
    const char c = s[i];
    if (c == '{') ++depth;
    if (c == '}' && depth > 0) --depth;
    if (c == '\n') {
      line_start = true;
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      line_start = false;
    }
    out += c;
    ++i;
  }
  return out;
}

}  // namespace warptrace::host
