#include "base/utf8.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

namespace warptrace {

bool IsValidUtf8(absl::string_view text) {
  return llvm::json::isUTF8(llvm::StringRef(text.data(), text.size()));
}

std::string ValidUtf8(absl::string_view text) {
  const llvm::StringRef ref(text.data(), text.size());
  // fixUTF8 re-encodes every code point; the check first keeps valid text a plain copy.
  return llvm::json::isUTF8(ref) ? std::string(text) : llvm::json::fixUTF8(ref);
}

}  // namespace warptrace
