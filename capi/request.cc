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

absl::StatusOr<Request> ParseRequest(const char* text) {
  constexpr absl::string_view kWhat = "dump request";
  absl::StatusOr<llvm::json::Object> object = ParseObject(text, kWhat);
  if (!object.ok()) return object.status();
  Request r;
  for (const auto& member : *object) {
    const std::string key = member.first.str();
    const llvm::json::Value& value = member.second;
    auto str = [&](std::string& into) -> absl::Status {
      llvm::Optional<llvm::StringRef> s = value.getAsString();
      if (!s) return WrongType(kWhat, key, "a string");
      into = s->str();
      return absl::OkStatus();
    };
    auto boolean = [&](bool& into) -> absl::Status {
      llvm::Optional<bool> b = value.getAsBoolean();
      if (!b) return WrongType(kWhat, key, "true or false");
      into = *b;
      return absl::OkStatus();
    };
    absl::Status s;
    if (key == "output") {
      s = str(r.output);
    } else if (key == "output_fd") {
      llvm::Optional<int64_t> fd = value.getAsInteger();
      if (!fd || *fd < 0 || *fd > INT32_MAX) {
        s = WrongType(kWhat, key, "an open file descriptor (an integer >= 0)");
      } else {
        r.output_fd = static_cast<int>(*fd);
      }
    } else if (key == "output_memory") {
      s = boolean(r.output_memory);
    } else if (key == "format") {
      s = str(r.format);
    } else if (key == "events") {
      s = str(r.events);
    } else if (key == "json_args") {
      s = str(r.json_args);
    } else if (key == "mosaic_overhead") {
      s = boolean(r.mosaic_overhead);
    } else if (key == "mosaic_clock_khz") {
      llvm::Optional<int64_t> khz = value.getAsInteger();
      if (!khz || *khz < 0) {
        s = WrongType(kWhat, key, "an integer >= 0 (kHz; 0: a cycle counts as 1 ns)");
      } else {
        r.mosaic_clock_khz = static_cast<uint64_t>(*khz);
      }
    } else if (key == "report") {
      s = str(r.report);
    } else if (key == "analysis_output") {
      s = str(r.analysis_output);
    } else if (key == "summary") {
      s = boolean(r.summary);
    } else if (key == "analysis") {
      s = boolean(r.analysis);
    } else if (key == "causal_profile") {
      s = boolean(r.causal_profile);
    } else if (key == "allow_truncated") {
      s = boolean(r.allow_truncated);
    } else if (key == "compensate_overhead") {
      s = boolean(r.compensate_overhead);
    } else if (key == "sm_clock_khz") {
      llvm::Optional<int64_t> khz = value.getAsInteger();
      if (!khz || *khz < 0) {
        s = WrongType(kWhat, key, "an integer >= 0 (kHz; 0: the default)");
      } else {
        r.sm_clock_khz = static_cast<uint64_t>(*khz);
      }
    } else if (key == "threads") {
      llvm::Optional<int64_t> threads = value.getAsInteger();
      if (!threads || *threads < 0 || *threads > 4096) {
        s = WrongType(kWhat, key, "an integer from 0 (the cores there are) to 4096");
      } else {
        r.threads = static_cast<int>(*threads);
      }
    } else {
      s = absl::InvalidArgumentError(absl::StrCat(
          "the dump request has an unknown key \"", key,
          "\"; known: output, output_fd, output_memory, format, events, json_args, "
          "mosaic_overhead, mosaic_clock_khz, report, analysis_output, summary, analysis, "
          "causal_profile, allow_truncated, compensate_overhead, sm_clock_khz, threads"));
    }
    if (!s.ok()) return s;
  }
  const int targets = !r.output.empty() + (r.output_fd >= 0) + r.output_memory;
  if (targets > 1) {
    return absl::InvalidArgumentError(
        "the dump request names more than one of \"output\", \"output_fd\" and "
        "\"output_memory\": give one");
  }
  return r;
}

}  // namespace warptrace::capi_internal
