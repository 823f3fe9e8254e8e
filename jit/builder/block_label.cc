// KernelBuilder::BlockLabel (kernel_builder.h), beside the builder so that its checks stay
// with the label's language (trip_expr.h).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/builder/kernel_builder.h"
#include "jit/builder/trip_expr.h"

namespace warptrace {
namespace {

bool IsLabelNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == ' ' || c == '_' || c == '.' || c == ':' || c == '-';
}

}  // namespace

KernelBuilder& KernelBuilder::BlockLabel(std::vector<BlockLabelPart> parts) {
  const std::string path = "block label";  // Fail prefixes the builder path
  if (!kernel_.block_label.empty()) {
    Fail(absl::StrCat(path, ": BlockLabel is called twice; give every part in one call"));
    return *this;
  }
  if (parts.empty()) {
    Fail(absl::StrCat(path, ": a block label needs at least one part, e.g. "
                            "{{\"seq\", \"blockIdx.y\"}}"));
    return *this;
  }
  for (const BlockLabelPart& part : parts) {
    bool valid = !part.name.empty() && part.name.size() <= 32;
    for (char c : part.name) valid &= IsLabelNameChar(c);
    if (!valid) {
      Fail(absl::StrCat(path, ": part name '", part.name, "' must be 1 to 32 letters, "
                        "digits, spaces or _ . : -"));
      return *this;
    }
    if (absl::StatusOr<TripExpr> expr = TripExpr::Parse(part.expr); !expr.ok()) {
      Fail(absl::StrCat(path, " > ", part.name, ": ", expr.status().message()));
      return *this;
    }
  }
  kernel_.block_label = std::move(parts);
  return *this;
}

}  // namespace warptrace
