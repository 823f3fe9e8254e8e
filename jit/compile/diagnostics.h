// Turns a compiler's log into a message a user can act on: every "error" diagnostic that
// names a file we compiled is followed by the offending source line, quoted.
//
// Understands both NVRTC's "<file>(<line>): error: ..." and GCC/Clang's
// "<file>:<line>:<col>: error: ..." (the file may carry a directory prefix), and the
// `#line N "name"` directives the emitter writes (jit/emit/emitter.cc): an error "in"
// "kernel gemm > region mma > statement `...`" line 2 is quoted from the line of the
// generated source that the directive attributes to it, with that line's real number:
//
//   kernel gemm > region mma > statement `acc += ...`:2:5: error: 'acc' was not declared
//     gemm.cc:57 |   acc += a[i] * b[i];
//
//   std::string message = QuoteOffendingLines(log, {{"gemm.cu", source}});
//   // gemm.cu(12): error: identifier "acc" is undefined
//   //     12 |   acc += a[i] * b[i];
#ifndef WARPTRACE_JIT_COMPILE_DIAGNOSTICS_H_
#define WARPTRACE_JIT_COMPILE_DIAGNOSTICS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/embedded_file.h"

namespace warptrace {

// Returns the error lines of `log`, each followed by its quoted source line (when the file
// and line are found in `files`). At most `max_errors` errors are quoted; the rest are
// counted. A file's name is matched as the log writes it (a directory prefix is ignored);
// a line a #line directive attributes to another name is quoted as "<file>:<real line> |".
// Empty when the log has no error line that names a line number.
std::string QuoteOffendingLines(absl::string_view log, const std::vector<EmbeddedFile>& files,
                                int max_errors = 10);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COMPILE_DIAGNOSTICS_H_
