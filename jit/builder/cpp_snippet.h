// Reading a user's raw C++ statement (KernelBuilder::Stmt) as C++ tokens, for the few facts
// the builder must know about it: whether it returns from the kernel, jumps out of itself,
// keeps its brackets balanced, declares extern shared memory, or calls __syncthreads (and
// whether under a branch of its own). Comments, string and
// character literals (raw strings included) and preprocessor lines are never mistaken for
// code, and a `return` inside a lambda (or a member function of a local class) is that
// function's, not the kernel's.
//
//   ASSIGN_OR_RETURN(SnippetFacts facts, ScanSnippet("for (int j = 0; j < 4; ++j) {\n"
//                                                    "  if (x[j] < 0) break;\n}"));
//   facts.escaping_jumps;  // empty: the break leaves the statement's own loop only
//
// This is a lexer plus a scanner of statement structure (blocks, loops, switch, labels,
// lambda bodies), not a C++ parser: it trusts the compiler to reject what is not C++.
#ifndef WARPTRACE_JIT_BUILDER_CPP_SNIPPET_H_
#define WARPTRACE_JIT_BUILDER_CPP_SNIPPET_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace warptrace {

struct CppToken {
  enum class Kind {
    kIdentifier,  // keywords included
    kNumber,
    kLiteral,     // a string or character literal, with its prefix
    kPunct,       // one character, or "::" / "->"
  };
  Kind kind = Kind::kPunct;
  absl::string_view text;  // a view into the lexed code
  size_t offset = 0;       // of the token's first character
};

// The tokens of `code`, without comments, whitespace and preprocessor lines.
// InvalidArgument for an unterminated block comment, string or character literal (the
// message gives the line).
absl::StatusOr<std::vector<CppToken>> LexCpp(absl::string_view code);

// A `__shared__` declaration of a statement (not extern), split at its declarator:
// `__shared__ __align__(16) float red[8][32];` is type "float", name "red", dims {"8", "32"},
// align "16". `parsed` false when it is not one declarator of that shape (several names,
// an initializer, a pointer): only `text` is set then.
struct RawSharedDecl {
  std::string text;  // the declaration, from __shared__ to the ';'
  bool parsed = false;
  std::string type, name, align;
  std::vector<std::string> dims;
};

struct SnippetFacts {
  // A `return` of the enclosing function (the kernel), outside any lambda or local class.
  bool returns_from_kernel = false;
  // Jumps that leave the statement, as written: "break", "continue", "goto done". A
  // break/continue inside the statement's own loop (or a break in its own switch) and a
  // goto to a label the statement defines stay inside and are not listed.
  std::vector<std::string> escaping_jumps;
  // Empty, or the first bracket that does not match: "unbalanced '}' on line 2", "'{' on
  // line 1 is never closed".
  std::string unbalanced;
  // Both `extern` and `__shared__` appear as tokens.
  bool declares_extern_shared = false;
  // Its static `__shared__` declarations (none when it declares extern shared memory).
  std::vector<RawSharedDecl> shared_decls;
  // The first call of a block barrier (`__syncthreads`, `__syncthreads_count`/_and/_or),
  // as "`__syncthreads` on line 2", outside lambdas and local classes; empty if none.
  std::string block_barrier;
  // The first such call under an if/else or switch of the statement itself (a barrier that
  // only the threads taking that branch would reach); empty if none. Loops do not count:
  // their bounds are as uniform as the code around them.
  std::string conditional_block_barrier;
};

// Errors: LexCpp's.
absl::StatusOr<SnippetFacts> ScanSnippet(absl::string_view code);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_BUILDER_CPP_SNIPPET_H_
