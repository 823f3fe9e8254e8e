// The C API's dump request: warptrace_dump's JSON request parsed into a struct (capi/
// warptrace.h documents the keys). Internal to the C API library.
#ifndef WARPTRACE_CAPI_REQUEST_H_
#define WARPTRACE_CAPI_REQUEST_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/JSON.h"
#include "profiler/frontend/dump_settings.h"

namespace warptrace::capi_internal {

// ---- requests --------------------------------------------------------------------------

// The request is the dump's settings (profiler/frontend/dump_settings.h): its keys are
// DumpSettingSpecs()' keys, checked and defaulted there.
using Request = DumpSettings;

// `text` as a JSON object (null or "" is the empty object); InvalidArgument naming `what`.
absl::StatusOr<llvm::json::Object> ParseObject(const char* text, absl::string_view what);
// InvalidArgument: the `what`'s "key" must be `type`.
absl::Status WrongType(absl::string_view what, absl::string_view key, absl::string_view type);

// A JSON value as a dump setting's value, in JSON's own type (a null or an array is
// std::monostate): SetDumpSetting decides whether it fits the setting.
SettingValue SettingValueFromJson(const llvm::json::Value& value);

// Parses a warptrace_dump request (a JSON object; null or "" is the empty request).
// InvalidArgument naming the key and the type or value expected.
absl::StatusOr<Request> ParseRequest(const char* text);

}  // namespace warptrace::capi_internal

#endif  // WARPTRACE_CAPI_REQUEST_H_
