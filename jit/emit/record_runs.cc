#include "jit/emit/record_runs.h"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace warptrace {
namespace {

constexpr absl::string_view kRecord = "warptrace::recorder::Record(warptrace_unit, ";
constexpr absl::string_view kRecordPayload =
    "warptrace::recorder::RecordWithPayload(warptrace_unit, ";

bool IsDirective(const SourceLine& line) {
  return line.restore_line || absl::StartsWith(absl::StripLeadingAsciiWhitespace(line.text), "#");
}

bool IsConditional(const SourceLine& line) {
  if (line.restore_line) return false;
  const absl::string_view text = absl::StripLeadingAsciiWhitespace(line.text);
  return absl::StartsWith(text, "#if") || absl::StartsWith(text, "#el") ||
         absl::StartsWith(text, "#endif");
}

// The slots a record point line takes (0: not one).
uint32_t Slots(const SourceLine& line) {
  if (absl::StartsWith(line.text, kRecord)) return 1;
  if (absl::StartsWith(line.text, kRecordPayload)) return 2;
  return 0;
}

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `text` holds `word` as a whole identifier.
bool HasWord(absl::string_view text, absl::string_view word) {
  for (size_t at = text.find(word); at != absl::string_view::npos;
       at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !IsIdentifierChar(text[at - 1]);
    const size_t end = at + word.size();
    const bool ends = end == text.size() || !IsIdentifierChar(text[end]);
    if (starts && ends) return true;
  }
  return false;
}

// A line that is not a record point but needs the unit state up to date before it: it
// reads or updates it (the epilogue), or it may leave the run's block.
bool EndsRun(const SourceLine& line) {
  if (Slots(line) != 0) return false;
  const absl::string_view text = line.text;
  return absl::StrContains(text, "warptrace_unit") || HasWord(text, "return") ||
         HasWord(text, "break") || HasWord(text, "continue") || HasWord(text, "goto");
}

bool IsCloser(const SourceLine& line) { return absl::StartsWith(line.text, "}"); }

// `{` or `{  // comment` inside the kernel: a bare block, straight-line.
bool IsBareOpener(const SourceLine& line) {
  if (line.depth == 0 || !absl::StartsWith(line.text, "{")) return false;
  const absl::string_view rest =
      absl::StripLeadingAsciiWhitespace(absl::string_view(line.text).substr(1));
  return rest.empty() || absl::StartsWith(rest, "//");
}

class RunGrouper {
 public:
  explicit RunGrouper(std::vector<SourceLine> in) : in_(std::move(in)) {}

  std::vector<SourceLine> Group() {
    for (size_t i = 0; i < in_.size(); ++i) Visit(i);
    while (!runs_.empty()) Flush();
    return std::move(out_);
  }

 private:
  struct Run {
    int depth = 0;                // the block's depth, bare blocks looked through
    std::vector<size_t> records;  // indices in out_
    uint32_t slots = 0;
  };

  void Visit(size_t i) {
    const SourceLine& line = in_[i];
    if (IsDirective(line)) {
      // The code between conditionals is not always compiled: every run ends here (the
      // constructs around them ended their outer runs, ConstructEndsRun).
      if (IsConditional(line)) {
        while (!runs_.empty()) Flush();
      }
      out_.push_back(line);
      return;
    }
    if (!bare_.empty() && line.depth == bare_.back() && IsCloser(line)) {
      bare_.pop_back();
      out_.push_back(line);
      return;
    }
    const int depth = line.depth - static_cast<int>(bare_.size());
    while (!runs_.empty() && runs_.back().depth > depth) Flush();  // their blocks ended
    if (IsBareOpener(line) && NextDepth(i) == line.depth + 1) {
      bare_.push_back(line.depth);
      out_.push_back(line);
      return;
    }
    if (const uint32_t slots = Slots(line); slots != 0) {
      if (runs_.empty() || runs_.back().depth < depth) runs_.push_back(Run{depth, {}, 0});
      runs_.back().records.push_back(out_.size());
      runs_.back().slots += slots;
      out_.push_back(line);
      return;
    }
    const bool opens = NextDepth(i) > line.depth && !IsCloser(line);
    if (EndsRun(line) || (opens && ConstructEndsRun(i))) {
      if (!runs_.empty() && runs_.back().depth == depth) Flush();
    }
    out_.push_back(line);
  }

  // The depth of the next line after `i` that is not a directive (-1: none).
  int NextDepth(size_t i) const {
    for (size_t j = i + 1; j < in_.size(); ++j) {
      if (!IsDirective(in_[j])) return in_[j].depth;
    }
    return -1;
  }

  // Whether the construct `in_[i]` opens (its header, bodies, `} else {` and closer) holds
  // a record point, a line that ends a run, or a preprocessor conditional.
  bool ConstructEndsRun(size_t i) const {
    const int depth = in_[i].depth;
    for (size_t j = i + 1; j < in_.size(); ++j) {
      const SourceLine& line = in_[j];
      if (IsDirective(line)) {
        if (IsConditional(line)) return true;
        continue;
      }
      if (line.depth < depth || (line.depth == depth && !IsCloser(line))) break;
      if (Slots(line) != 0 || EndsRun(line)) return true;
    }
    return false;
  }

  // Ends the innermost run: its record points at offsets, then one Advance.
  void Flush() {
    Run run = std::move(runs_.back());
    runs_.pop_back();
    if (run.records.size() < 2) return;  // Record advances by itself
    uint32_t at = 0;
    for (size_t index : run.records) {
      std::string& text = out_[index].text;
      const bool payload = absl::StartsWith(text, kRecordPayload);
      const absl::string_view call = payload ? kRecordPayload : kRecord;
      text = absl::StrCat(payload ? "warptrace::recorder::RecordWithPayloadAt<"
                                  : "warptrace::recorder::RecordAt<",
                          at, "u>(warptrace_unit, ", text.substr(call.size()));
      at += payload ? 2 : 1;
    }
    // Indented as the run's block (its depth, bare blocks open here counted back in).
    int depth = run.depth;
    for (int bare : bare_) depth += bare <= depth ? 1 : 0;
    out_.push_back(SourceLine{depth,
                              absl::StrCat("warptrace::recorder::Advance<", run.slots,
                                           "u>(warptrace_unit);  // past the run's ", run.slots,
                                           " slots")});
  }

  const std::vector<SourceLine> in_;
  std::vector<SourceLine> out_;
  std::vector<Run> runs_;  // open runs, outermost first
  std::vector<int> bare_;  // the depths of the open bare blocks
};

}  // namespace

std::vector<SourceLine> GroupRecordRuns(std::vector<SourceLine> lines) {
  return RunGrouper(std::move(lines)).Group();
}

}  // namespace warptrace
