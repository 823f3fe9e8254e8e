// The C API's dump request: warptrace_dump's JSON request parsed into a struct (capi/
// warptrace.h documents the keys). Internal to the C API library.
#ifndef WARPTRACE_CAPI_REQUEST_H_
#define WARPTRACE_CAPI_REQUEST_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/JSON.h"

namespace warptrace::capi_internal {

// ---- requests --------------------------------------------------------------------------

struct Request {
  std::string output;
  int output_fd = -1;
  bool output_memory = false;
  std::string format;
  std::string events = "x";
  std::string json_args = "lean";
  bool mosaic_overhead = true;
  uint64_t mosaic_clock_khz = 0;
  std::string report;
  std::string analysis_output;
  bool summary = false;
  bool analysis = false;
  bool causal_profile = true;  // with the summary or the analysis, as the CLI's dump
  bool allow_truncated = false;
  bool compensate_overhead = false;
  uint64_t sm_clock_khz = 0;
  int threads = 0;  // DumpRequest::threads: 0 = the cores there are
};

// `text` as a JSON object (null or "" is the empty object); InvalidArgument naming `what`.
absl::StatusOr<llvm::json::Object> ParseObject(const char* text, absl::string_view what);
// InvalidArgument: the `what`'s "key" must be `type`.
absl::Status WrongType(absl::string_view what, absl::string_view key, absl::string_view type);

// Parses a warptrace_dump request (a JSON object; null or "" is the empty request).
// InvalidArgument naming the key and the type or value expected.
absl::StatusOr<Request> ParseRequest(const char* text);

}  // namespace warptrace::capi_internal

#endif  // WARPTRACE_CAPI_REQUEST_H_
