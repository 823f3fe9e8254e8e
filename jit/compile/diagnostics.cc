#include "jit/compile/diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace warptrace {
namespace {

struct Location {
  absl::string_view file;
  int line = 0;
};

// "<file>(<line>): error" (NVRTC) or "<file>:<line>:<col>: error" (GCC/Clang).
std::optional<Location> ParseErrorLocation(absl::string_view text) {
  const size_t error_at = text.find(": error");
  if (error_at == absl::string_view::npos) return std::nullopt;
  absl::string_view head = text.substr(0, error_at);
  Location location;
  if (!head.empty() && head.back() == ')') {
    const size_t open = head.rfind('(');
    if (open == absl::string_view::npos) return std::nullopt;
    if (!absl::SimpleAtoi(head.substr(open + 1, head.size() - open - 2), &location.line)) {
      return std::nullopt;
    }
    location.file = head.substr(0, open);
    return location;
  }
  // file:line:col or file:line
  std::vector<absl::string_view> parts = absl::StrSplit(head, ':');
  if (parts.size() < 2) return std::nullopt;
  int col = 0;
  size_t line_part = parts.size() - 1;
  if (parts.size() >= 3 && absl::SimpleAtoi(parts[parts.size() - 1], &col) &&
      absl::SimpleAtoi(parts[parts.size() - 2], &location.line)) {
    line_part = parts.size() - 2;
  } else if (!absl::SimpleAtoi(parts[parts.size() - 1], &location.line)) {
    return std::nullopt;
  }
  // Everything before ":<line>" is the file (it may itself contain ':').
  location.file = head.substr(0, static_cast<size_t>(parts[line_part].data() - head.data()) - 1);
  return location;
}

absl::string_view Basename(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

// `#line N "name"` (or `# N "name"`, the preprocessor's own form): N and the unescaped name.
std::optional<std::pair<int, std::string>> LineDirective(absl::string_view text) {
  absl::string_view s = absl::StripLeadingAsciiWhitespace(text);
  if (!absl::ConsumePrefix(&s, "#")) return std::nullopt;
  s = absl::StripLeadingAsciiWhitespace(s);
  absl::ConsumePrefix(&s, "line");
  s = absl::StripLeadingAsciiWhitespace(s);
  const size_t digits = s.find_first_not_of("0123456789");
  int line = 0;
  if (digits == 0 || !absl::SimpleAtoi(s.substr(0, digits), &line)) return std::nullopt;
  s = absl::StripLeadingAsciiWhitespace(s.substr(digits));
  if (!absl::ConsumePrefix(&s, "\"")) return std::nullopt;
  std::string name;
  for (size_t i = 0; i < s.size() && s[i] != '"'; ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) ++i;
    name.push_back(s[i]);
  }
  return std::make_pair(line, std::move(name));
}

bool SameFile(absl::string_view a, absl::string_view b) {
  return a == b || Basename(a) == Basename(b);
}

// The physical line of `file` that diagnostics call line `location.line` of
// `location.file`: a line of `file` itself, or one that a #line directive in it attributes
// to that name (the emitter's builder paths, "kernel gemm > region mma > statement `..`").
struct SourceLine {
  absl::string_view text;
  int physical = 0;
  bool attributed = false;  // through a #line directive
};
std::optional<SourceLine> FindLine(const EmbeddedFile& file, const Location& location) {
  if (location.line <= 0) return std::nullopt;
  std::string name = file.name;
  int logical = 1;
  int physical = 1;
  for (absl::string_view text : absl::StrSplit(file.contents, '\n')) {
    if (std::optional<std::pair<int, std::string>> directive = LineDirective(text)) {
      logical = directive->first;
      name = std::move(directive->second);
      ++physical;
      continue;
    }
    if (logical == location.line && SameFile(name, location.file)) {
      return SourceLine{text, physical, name != file.name};
    }
    ++logical;
    ++physical;
  }
  return std::nullopt;
}

}  // namespace

std::string QuoteOffendingLines(absl::string_view log, const std::vector<EmbeddedFile>& files,
                                int max_errors) {
  std::string out;
  int errors = 0;
  for (absl::string_view text : absl::StrSplit(log, '\n')) {
    std::optional<Location> location = ParseErrorLocation(text);
    if (!location.has_value()) continue;
    ++errors;
    if (errors > max_errors) continue;
    absl::StrAppend(&out, absl::StripTrailingAsciiWhitespace(text), "\n");
    for (const EmbeddedFile& file : files) {
      std::optional<SourceLine> line = FindLine(file, *location);
      if (!line.has_value()) continue;
      const absl::string_view text = absl::StripTrailingAsciiWhitespace(line->text);
      if (line->attributed) {
        absl::StrAppendFormat(&out, "  %s:%d | %s\n", Basename(file.name), line->physical,
                              text);
      } else {
        absl::StrAppendFormat(&out, "  %5d | %s\n", location->line, text);
      }
      break;
    }
  }
  if (errors > max_errors) {
    absl::StrAppendFormat(&out, "(%d more errors not quoted)\n", errors - max_errors);
  }
  return out;
}

}  // namespace warptrace
