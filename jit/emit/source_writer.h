// SourceWriter: the emitter's output, line by line, with the #line directives that attribute
// a builder construct's code to its builder path (so compiler diagnostics and __FILE__ /
// __LINE__ in it name the construct and the line within it) and give the generated code
// after it its real line back. The lines are kept with their depth until Take(), so that a
// pass over the whole kernel (jit/emit/record_runs.h) can rewrite and insert lines before
// the #line numbers are counted. Internal to jit/emit.
#ifndef WARPTRACE_JIT_EMIT_SOURCE_WRITER_H_
#define WARPTRACE_JIT_EMIT_SOURCE_WRITER_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace warptrace {

// One Line() of a SourceWriter: `text` (one or more lines) indented by `depth` levels, or
// (restore_line) the `#line <its real line> "<file>"` that ends an attributed construct,
// numbered when the source is taken.
struct SourceLine {
  int depth = 0;
  std::string text;
  bool restore_line = false;
};

class SourceWriter {
 public:
  // A pass over the lines written, run by Take() before they are numbered and joined.
  using LinePass = std::function<std::vector<SourceLine>(std::vector<SourceLine>)>;

  // `file_name`: the name generated lines are attributed to ("<kernel>.cu").
  explicit SourceWriter(std::string file_name) : file_name_(std::move(file_name)) {}

  // `text` (one or more lines) indented by `depth` levels.
  void Line(int depth, const std::string& text);
  // `text`, a builder construct's own code, under `#line 1 "<path>"`. The next Line() is
  // preceded by `#line <its real line> "<file name>"` (unless another Attributed() comes
  // first).
  void Attributed(int depth, const std::string& path, absl::string_view text);
  // The source written so far, after `pass` (if any); the writer is empty afterwards.
  std::string Take(const LinePass& pass = nullptr);

 private:
  const std::string file_name_;
  std::vector<SourceLine> lines_;
  bool restore_line_ = false;  // Line() first writes the #line that ends an Attributed()
};

// `path` as the file name of a #line directive (a string literal): quotes and backslashes
// escaped, anything below a space (a newline in an abbreviated statement) as a space.
std::string LineDirectiveName(absl::string_view path);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_EMIT_SOURCE_WRITER_H_
