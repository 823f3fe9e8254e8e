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
    Line(0, absl::StrCat("#line ", lines_ + 2, " \"", file_name_, "\""));
  }
  absl::StrAppend(&out_, std::string(2 * depth, ' '), text, "\n");
  lines_ += 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

void SourceWriter::Attributed(int depth, const std::string& path, absl::string_view text) {
  restore_line_ = false;
  Line(0, absl::StrCat("#line 1 \"", LineDirectiveName(path), "\""));
  for (absl::string_view line : absl::StrSplit(text, '\n')) Line(depth, std::string(line));
  restore_line_ = true;
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
