#include "jit/compile/diagnostics.h"

#include <cstdint>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

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

std::optional<absl::string_view> Line(absl::string_view contents, int line) {
  if (line <= 0) return std::nullopt;
  int current = 1;
  for (absl::string_view text : absl::StrSplit(contents, '\n')) {
    if (current == line) return text;
    ++current;
  }
  return std::nullopt;
}

}  // namespace

std::string QuoteOffendingLines(absl::string_view log, const std::vector<SourceFile>& files,
                                int max_errors) {
  std::string out;
  int errors = 0;
  for (absl::string_view text : absl::StrSplit(log, '\n')) {
    std::optional<Location> location = ParseErrorLocation(text);
    if (!location.has_value()) continue;
    ++errors;
    if (errors > max_errors) continue;
    absl::StrAppend(&out, absl::StripTrailingAsciiWhitespace(text), "\n");
    for (const SourceFile& file : files) {
      if (Basename(file.name) != Basename(location->file)) continue;
      if (std::optional<absl::string_view> line = Line(file.contents, location->line)) {
        absl::StrAppendFormat(&out, "  %5d | %s\n", location->line,
                              absl::StripTrailingAsciiWhitespace(*line));
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
