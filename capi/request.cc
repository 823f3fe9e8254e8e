#include "capi/request.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "llvm/Support/JSON.h"

namespace warptrace::capi_internal {

absl::StatusOr<llvm::json::Object> ParseObject(const char* text, absl::string_view what) {
  if (text == nullptr || text[0] == '\0') return llvm::json::Object();
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the ", what, " is not JSON: ", llvm::toString(value.takeError())));
  }
  if (value->getAsObject() == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("the ", what, " is not a JSON object"));
  }
  return std::move(*value->getAsObject());
}

absl::Status WrongType(absl::string_view what, absl::string_view key, absl::string_view type) {
  return absl::InvalidArgumentError(
      absl::StrCat("the ", what, "'s \"", key, "\" must be ", type));
}

SettingValue SettingValueFromJson(const llvm::json::Value& value) {
  if (llvm::Optional<bool> b = value.getAsBoolean()) return *b;
  if (llvm::Optional<int64_t> i = value.getAsInteger()) return *i;
  if (llvm::Optional<llvm::StringRef> s = value.getAsString()) return s->str();
  return std::monostate();
}

absl::StatusOr<Request> ParseRequest(const char* text) {
  constexpr absl::string_view kWhat = "dump request";
  absl::StatusOr<llvm::json::Object> object = ParseObject(text, kWhat);
  if (!object.ok()) return object.status();
  Request r;
  for (const auto& member : *object) {
    const std::string key = member.first.str();
    if (FindDumpSetting(key) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("the dump request has an unknown key \"",
                                                     key, "\"; known: ", DumpSettingKeys()));
    }
    RETURN_IF_ERROR(SetDumpSetting(r, key, SettingValueFromJson(member.second),
                                   absl::StrCat("the ", kWhat, "'s \"", key, "\"")));
  }
  return r;
}

}  // namespace warptrace::capi_internal
