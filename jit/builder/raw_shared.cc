// KernelBuilder::CountRawShared (kernel_builder.h): a statement's own `__shared__` arrays in
// the plan's shared budget, so that "after the kernel's N shared bytes" counts every byte.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "jit/builder/cpp_snippet.h"
#include "jit/builder/element_types.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace {
namespace {

// A dimension: an integer literal, a kernel constant, or a product of them ("4 * kTile").
std::optional<uint64_t> DimValue(const std::string& dim,
                                 const std::vector<std::pair<std::string, int64_t>>& constants) {
  uint64_t value = 1;
  for (absl::string_view factor : absl::StrSplit(dim, '*')) {
    factor = absl::StripAsciiWhitespace(factor);
    int64_t v = 0;
    bool known = absl::SimpleAtoi(factor, &v);
    for (const auto& [name, constant] : constants) {
      if (!known && factor == name) {
        v = constant;
        known = true;
      }
    }
    if (!known || v <= 0 || value > (uint64_t{1} << 40) / static_cast<uint64_t>(v)) {
      return std::nullopt;
    }
    value *= static_cast<uint64_t>(v);
  }
  return value;
}

// How the declaration reads with the builder: SharedArray("float", "red", {8, 32}).
std::string SharedArraySpelling(const RawSharedDecl& d) {
  if (!d.parsed) return "SharedArray(type, name, {dims...})";
  return absl::StrCat("SharedArray(\"", d.type, "\", \"", d.name, "\", {",
                      absl::StrJoin(d.dims, ", "), "}",
                      KnownElementBytes(NormalizeType(d.type)).has_value()
                          ? ""
                          : ", sizeof_in_bytes",
                      ")");
}

}  // namespace

void KernelBuilder::CountRawShared(const std::string& code, const std::string& path) {
  absl::StatusOr<SnippetFacts> facts = ScanSnippet(code);
  if (!facts.ok()) return;  // Build() reports the statement's lexical errors
  for (const RawSharedDecl& d : facts->shared_decls) {
    std::optional<uint32_t> element =
        d.parsed ? KnownElementBytes(NormalizeType(d.type)) : std::nullopt;
    std::vector<uint64_t> dims;
    uint64_t count = 1;
    bool sized = element.has_value();
    for (const std::string& dim : d.dims) {
      const std::optional<uint64_t> v = sized ? DimValue(dim, kernel_.constants) : std::nullopt;
      sized = v.has_value();
      if (!sized) break;
      dims.push_back(*v);
      count *= *v;
    }
    if (!sized) {
      Fail(absl::StrCat(
          path, ": declares shared memory `", d.text,
          "` whose size the builder cannot count (its type is not one it knows, or a "
          "dimension is not an integer literal, a Constant or a product of them), so the "
          "plan's shared budget would miss it; declare it with ", SharedArraySpelling(d)));
      return;
    }
    SharedArrayDecl decl;
    decl.type = NormalizeType(d.type);
    decl.name = d.name;
    decl.count = count;
    decl.element_bytes = *element;
    decl.dims = dims.empty() ? std::vector<uint64_t>{1} : dims;
    decl.in_statement = true;
    decl.path = path;
    kernel_.shared_arrays.push_back(std::move(decl));
  }
}

}  // namespace warptrace
