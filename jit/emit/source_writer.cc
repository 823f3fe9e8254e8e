#include "jit/emit/source_writer.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace warptrace {

void SourceWriter::Line(int depth, const std::string& text) {
  if (restore_line_) {
    // The generated code after an attributed construct gets its real line back.
    restore_line_ = false;
    lines_.push_back(SourceLine{0, "", /*restore_line=*/true});
  }
  lines_.push_back(SourceLine{depth, text});
}

void SourceWriter::Attributed(int depth, const std::string& path, absl::string_view text) {
  restore_line_ = false;
  Line(0, absl::StrCat("#line 1 \"", LineDirectiveName(path), "\""));
  for (absl::string_view line : absl::StrSplit(text, '\n')) Line(depth, std::string(line));
  restore_line_ = true;
}

std::string SourceWriter::Take(const LinePass& pass) {
  std::vector<SourceLine> lines = std::move(lines_);
  lines_.clear();
  restore_line_ = false;
  if (pass) lines = pass(std::move(lines));
  std::string out;
  int written = 0;  // lines in out
  for (const SourceLine& line : lines) {
    // A restore directive is line written + 1; the line after it, written + 2.
    const std::string text =
        line.restore_line ? absl::StrCat("#line ", written + 2, " \"", file_name_, "\"")
                          : line.text;
    absl::StrAppend(&out, std::string(2 * line.depth, ' '), text, "\n");
    written += 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }
  return out;
}

std::string LineDirectiveName(absl::string_view path) {
  std::string out;
  for (char c : path) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  }
  return out;
}

}  // namespace warptrace
