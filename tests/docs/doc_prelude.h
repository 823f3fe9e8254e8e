// What every compiled code block of the docs sees (tests/docs/extract_code_blocks.py puts it
// first in the generated source): the public headers a kernel author's program includes.
// A block may include more itself; its #include lines are moved above the blocks.
#ifndef WARPTRACE_TESTS_DOCS_DOC_PRELUDE_H_
#define WARPTRACE_TESTS_DOCS_DOC_PRELUDE_H_

#include <cstdint>
#include <iostream>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "jit/builder/kernel_builder.h"
#include "jit/platform/tensor_map.h"
#include "jit/run/run.h"
#include "profiler/outputs/chrome_trace.h"
#include "profiler/outputs/perfetto/perfetto_writer.h"

namespace warptrace {
namespace doc_blocks {

// One compiled block: where it is, and its main() when it is a complete program.
struct DocBlock {
  const char* page;
  int line;  // the block's first line in the page
  int (*main)(int argc, char** argv);  // null: compiled only
};

// Every compiled block of the pages, in page order (defined by the generated source).
const std::vector<DocBlock>& AllDocBlocks();

// A block's main(), taken with either standard signature.
template <auto kMain>
int CallMain(int argc, char** argv) {
  if constexpr (std::is_invocable_v<decltype(kMain)>) {
    (void)argc;
    (void)argv;
    return kMain();
  } else {
    return kMain(argc, argv);
  }
}

}  // namespace doc_blocks
}  // namespace warptrace

#endif  // WARPTRACE_TESTS_DOCS_DOC_PRELUDE_H_
