#include "format/json_fields.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "llvm/Support/raw_ostream.h"

namespace warptrace {
namespace {

namespace json = ::llvm::json;

llvm::StringRef Ref(absl::string_view s) { return llvm::StringRef(s.data(), s.size()); }

}  // namespace

JsonFields::JsonFields(const json::Object& object, std::string path, std::string source)
    : object_(&object), path_(std::move(path)), source_(std::move(source)) {}

std::string JsonFields::Path(absl::string_view key) const {
  return path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key);
}

bool JsonFields::Has(absl::string_view key) const { return object_->get(Ref(key)) != nullptr; }

absl::StatusOr<const json::Value*> JsonFields::Get(absl::string_view key) const {
  const json::Value* v = object_->get(Ref(key));
  if (v == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, " is missing field \"", Path(key), "\""));
  }
  return v;
}

absl::StatusOr<uint64_t> JsonFields::Unsigned(absl::string_view key, uint64_t max,
                                              uint64_t min) const {
  ASSIGN_OR_RETURN(const json::Value* v, Get(key));
  return UnsignedValue(*v, Path(key), max, min);
}

absl::StatusOr<std::string> JsonFields::String(absl::string_view key) const {
  ASSIGN_OR_RETURN(const json::Value* v, Get(key));
  llvm::Optional<llvm::StringRef> s = v->getAsString();
  if (!s) return Mistyped(Path(key), "a string", *v);
  return s->str();
}

absl::StatusOr<bool> JsonFields::Bool(absl::string_view key) const {
  ASSIGN_OR_RETURN(const json::Value* v, Get(key));
  llvm::Optional<bool> b = v->getAsBoolean();
  if (!b) return Mistyped(Path(key), "true or false", *v);
  return *b;
}

absl::StatusOr<JsonFields> JsonFields::Object(absl::string_view key) const {
  ASSIGN_OR_RETURN(const json::Value* v, Get(key));
  const json::Object* o = v->getAsObject();
  if (o == nullptr) return Mistyped(Path(key), "an object", *v);
  return JsonFields(*o, Path(key), source_);
}

absl::StatusOr<const json::Array*> JsonFields::Array(absl::string_view key) const {
  ASSIGN_OR_RETURN(const json::Value* v, Get(key));
  const json::Array* a = v->getAsArray();
  if (a == nullptr) return Mistyped(Path(key), "an array", *v);
  return a;
}

absl::StatusOr<std::vector<std::string>> JsonFields::Strings(absl::string_view key) const {
  ASSIGN_OR_RETURN(const json::Array* a, Array(key));
  std::vector<std::string> out;
  out.reserve(a->size());
  for (size_t i = 0; i < a->size(); ++i) {
    llvm::Optional<llvm::StringRef> s = (*a)[i].getAsString();
    if (!s) return Mistyped(absl::StrCat(Path(key), "[", i, "]"), "a string", (*a)[i]);
    out.push_back(s->str());
  }
  return out;
}

absl::StatusOr<std::vector<JsonFields>> JsonFields::Objects(absl::string_view key) const {
  ASSIGN_OR_RETURN(const json::Array* a, Array(key));
  std::vector<JsonFields> out;
  out.reserve(a->size());
  for (size_t i = 0; i < a->size(); ++i) {
    std::string path = absl::StrCat(Path(key), "[", i, "]");
    const json::Object* object = (*a)[i].getAsObject();
    if (object == nullptr) return Mistyped(path, "an object", (*a)[i]);
    out.emplace_back(*object, std::move(path), source_);
  }
  return out;
}

absl::StatusOr<Dim3> JsonFields::Dims(absl::string_view key, size_t min_elements,
                                      uint32_t min_value) const {
  ASSIGN_OR_RETURN(const json::Array* a, Array(key));
  if (a->size() < min_elements || a->size() > 3) {
    const std::string count =
        min_elements == 3 ? std::string("3") : absl::StrCat(min_elements, " to 3");
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s field \"%s\" must be an array of %s integers >= %d [x, y, z], found %d elements",
        source_, Path(key), count, min_value, a->size()));
  }
  uint32_t d[3] = {1, 1, 1};
  for (size_t i = 0; i < a->size(); ++i) {
    ASSIGN_OR_RETURN(uint64_t v, UnsignedValue((*a)[i], absl::StrCat(Path(key), "[", i, "]"),
                                               std::numeric_limits<uint32_t>::max(), min_value));
    d[i] = static_cast<uint32_t>(v);
  }
  return Dim3{d[0], d[1], d[2]};
}

absl::Status JsonFields::Mistyped(absl::string_view path, absl::string_view expected,
                                  const json::Value& found) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << found;
  os.flush();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return absl::InvalidArgumentError(
      absl::StrCat(source_, " field \"", path, "\" must be ", expected, ", found ", text));
}

absl::StatusOr<uint64_t> JsonFields::UnsignedValue(const json::Value& v, absl::string_view path,
                                                   uint64_t max, uint64_t min) const {
  if (llvm::Optional<int64_t> i = v.getAsInteger()) {
    if (*i >= 0 && static_cast<uint64_t>(*i) >= min && static_cast<uint64_t>(*i) <= max) {
      return static_cast<uint64_t>(*i);
    }
  } else if (llvm::Optional<uint64_t> u = v.getAsUINT64()) {
    if (*u >= min && *u <= max) return *u;
  }
  const std::string expected =
      min == 0 ? absl::StrCat("an unsigned integer <= ", max)
               : absl::StrCat("an integer in [", min, ", ", max, "]");
  return Mistyped(path, expected, v);
}

}  // namespace warptrace
