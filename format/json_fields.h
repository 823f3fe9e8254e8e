// JsonFields: typed, path-aware reads of a parsed JSON object, for the small JSON files the
// dump reads (the layout sidecar, Mosaic GPU sidecars). Every error names the file kind and
// the field's full path, so a user knows which line of which file to fix:
//
//   JsonFields root(*value.getAsObject(), /*path=*/"", /*source=*/"sidecar");
//   ASSIGN_OR_RETURN(JsonFields clock, root.Object("clock"));
//   ASSIGN_OR_RETURN(uint64_t sms, clock.Unsigned("num_sms"));
//   // -> InvalidArgument: sidecar is missing field "clock.num_sms"
//   // -> InvalidArgument: sidecar field "clock.num_sms" must be an unsigned integer <= ...
//
// Every method returns InvalidArgument on a missing or mistyped field; nothing else fails.
// Lifetimes: a JsonFields points into the caller's json::Object (and so do the arrays
// Array() returns): the parsed value must outlive it. Cheap to copy.
#ifndef WARPTRACE_FORMAT_JSON_FIELDS_H_
#define WARPTRACE_FORMAT_JSON_FIELDS_H_

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "format/layout.h"
#include "llvm/Support/JSON.h"

namespace warptrace {

class JsonFields {
 public:
  // `path`: where `object` sits in the file ("" for the top level, "clock", "sites[2]").
  // `source`: what the file is, first word of every message ("sidecar", "Mosaic GPU sidecar").
  JsonFields(const llvm::json::Object& object, std::string path, std::string source);

  // "clock.num_sms" for key "num_sms" under path "clock".
  std::string Path(absl::string_view key) const;
  bool Has(absl::string_view key) const;

  absl::StatusOr<const llvm::json::Value*> Get(absl::string_view key) const;
  // An integer in [min, max].
  absl::StatusOr<uint64_t> Unsigned(absl::string_view key,
                                    uint64_t max = std::numeric_limits<uint32_t>::max(),
                                    uint64_t min = 0) const;
  absl::StatusOr<std::string> String(absl::string_view key) const;
  absl::StatusOr<bool> Bool(absl::string_view key) const;
  absl::StatusOr<JsonFields> Object(absl::string_view key) const;
  absl::StatusOr<const llvm::json::Array*> Array(absl::string_view key) const;
  // An array of strings.
  absl::StatusOr<std::vector<std::string>> Strings(absl::string_view key) const;
  // An array of objects, each with its path ("sites[2]") and this object's source.
  absl::StatusOr<std::vector<JsonFields>> Objects(absl::string_view key) const;
  // An array of [min_elements, 3] integers >= min_value; missing trailing elements are 1
  // (CUDA's dim3 defaults). The layout sidecar asks for exactly 3 (>= 0); Mosaic for 1 to 3
  // CUDA dimensions (>= 1).
  absl::StatusOr<Dim3> Dims(absl::string_view key, size_t min_elements = 3,
                            uint32_t min_value = 0) const;

  // InvalidArgument: `<source> field "<path>" must be <expected>, found <value>` (the value
  // printed as JSON, cut at 40 characters).
  absl::Status Mistyped(absl::string_view path, absl::string_view expected,
                        const llvm::json::Value& found) const;
  // `v` as an integer in [min, max], else Mistyped(path, ...).
  absl::StatusOr<uint64_t> UnsignedValue(const llvm::json::Value& v, absl::string_view path,
                                         uint64_t max, uint64_t min = 0) const;

 private:
  const llvm::json::Object* object_;
  std::string path_;
  std::string source_;
};

}  // namespace warptrace

#endif  // WARPTRACE_FORMAT_JSON_FIELDS_H_
