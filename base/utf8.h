// UTF-8 repair for text that came from users or from a buffer (kernel, site, barrier and
// device names, verdict reasons) on its way into an output whose format requires valid
// UTF-8: JSON (Chrome trace, reports, sidecars) and Perfetto's protobuf strings.
//
//   json.attribute("name", ValidUtf8(site.name));
//
// Valid input comes back unchanged (the common case costs one scan, no allocation beyond
// the copy); each invalid byte sequence becomes U+FFFD, exactly as llvm::json::fixUTF8
// replaces it, so every output of the project repairs a name the same way.
//
// Thread-safety: reentrant.
#ifndef WARPTRACE_BASE_UTF8_H_
#define WARPTRACE_BASE_UTF8_H_

#include <string>

#include "absl/strings/string_view.h"

namespace warptrace {

// `text` if it is valid UTF-8, else `text` with every invalid sequence replaced by U+FFFD.
std::string ValidUtf8(absl::string_view text);

// Whether `text` is valid UTF-8.
bool IsValidUtf8(absl::string_view text);

}  // namespace warptrace

#endif  // WARPTRACE_BASE_UTF8_H_
