#include "jit/host/source_lowering.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>
#include <string>

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
                    d.type, ">();");
  } else {
    absl::StrAppend(out, "auto& ", d.name, " = ::warptrace_host::Shared<", d.type, d.dims,
                    d.align.empty() ? "" : absl::StrCat(", ", d.align), ">(", (*next_site)++,
                    "u, \"", d.name, "\");");
  }
  absl::StrAppend(out, Newlines(original));
  *i = semicolon + 1;
  return true;
}

// The identifiers passed as the accumulator (first argument) of a wgmma call, and where the
// first such call starts: `warptrace_wgmma_mma_async_bf16_ss<...>(acc, ...)`.
struct Accumulators {
  std::set<std::string, std::less<>> names;
  size_t first_call = absl::string_view::npos;
};

Accumulators FindAccumulators(absl::string_view s) {
  Accumulators found;
  constexpr absl::string_view kCall = "warptrace_wgmma_mma_async_bf16_";
  for (size_t i = 0; i < s.size();) {
    const size_t skipped = SkipNonCode(s, i, i == 0 || s[i - 1] == '\n');
    if (skipped != i) {
      i = skipped;
      continue;
    }
    if (!IsIdentStart(s[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < s.size() && IsIdent(s[end])) ++end;
    const absl::string_view word = s.substr(i, end - i);
    const size_t start = i;
    i = end;
    if (!absl::StartsWith(word, kCall) || word.size() != kCall.size() + 2) continue;
    size_t j = end;
    while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j < s.size() && s[j] == '<') {  // template arguments: skip to the matching '>'
      int depth = 0;
      for (; j < s.size(); ++j) {
        if (s[j] == '<') ++depth;
        if (s[j] == '>' && --depth == 0) break;
      }
      ++j;
    }
    while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j >= s.size() || s[j] != '(') continue;
    ++j;
    while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    size_t k = j;
    while (k < s.size() && IsIdent(s[k])) ++k;
    if (k == j || !IsIdentStart(s[j])) continue;
    size_t after = k;
    while (after < s.size() && std::isspace(static_cast<unsigned char>(s[after]))) ++after;
    if (after >= s.size() || (s[after] != ',' && s[after] != ')')) continue;
    found.names.emplace(s.substr(j, k - j));
    found.first_call = std::min(found.first_call, start);
  }
  return found;
}

// Whether the identifier at `i` (followed by `[`) is an element access rather than the
// declarator of a declaration (`float acc[64]`, `float a[4], acc[4]`): what precedes it is
// an operator or punctuation (a `,` only inside parentheses: a call's argument, not the
// next declarator), or a keyword that starts an expression. (A `*` before it is an
// operator: an accumulator is a float array, never declared as an array of pointers.) `prev` is the last character of code before it, `prev_word` the identifier
// ending there (if any), `paren_depth` the parentheses open at `i`.
bool IsElementAccess(char prev, absl::string_view prev_word, int paren_depth) {
  if (!prev_word.empty()) {
    return prev_word == "return" || prev_word == "case" || prev_word == "else" ||
           prev_word == "do";
  }
  if (prev == ',') return paren_depth > 0;
  // `&acc[i]` takes an address (no access: a float array has no bitwise and).
  return prev != '\0' && prev != '&';
}

}  // namespace

std::string LowerForHost(absl::string_view s, uint32_t* next_site) {
  const Accumulators accumulators = FindAccumulators(s);
  char prev = '\0';            // the last character of code written
  absl::string_view prev_word;  // the identifier that ended there, if any
  int paren_depth = 0;
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  bool line_start = true;
  size_t pending_extern = absl::string_view::npos;  // where an `extern` just before began
  size_t out_before_extern = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t skipped = SkipNonCode(s, i, line_start);
    if (skipped != i) {
      absl::StrAppend(&out, s.substr(i, skipped - i));
      i = skipped;
      continue;
    }
    const char c = s[i];
    if (!IsIdentStart(c)) {
      if (c == '\n') line_start = true;
      if (!std::isspace(static_cast<unsigned char>(c))) {
        line_start = false;
        pending_extern = absl::string_view::npos;
        if (!IsIdent(c)) {  // a digit continues a number, not an identifier
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
    size_t next = end;
    while (next < s.size() && (s[next] == ' ' || s[next] == '\t')) ++next;
    if (i > accumulators.first_call && next < s.size() && s[next] == '[' &&
        accumulators.names.count(word) != 0 && IsElementAccess(prev, prev_word, paren_depth)) {
      // The statement's #line file is its builder path.
      absl::StrAppend(&out, "::warptrace_host::wgmma::Access(", word, ", \"", word,
                      "\", __builtin_FILE())");
    } else {
      absl::StrAppend(&out, word);
    }
    prev = word.back();
    prev_word = word;
    i = end;
  }
  return out;
}

}  // namespace warptrace::host
