#include "profiler/outputs/chrome_trace_options.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace warptrace {

absl::StatusOr<ChromeEventStyle> ParseChromeEventStyle(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "x") return ChromeEventStyle::kComplete;
  if (lower == "be" || lower == "b/e") return ChromeEventStyle::kBeginEnd;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown Chrome event style '", name, "': use 'x' (complete events) or 'be' (B/E pairs)"));
}

absl::StatusOr<ChromeSliceArgs> ParseChromeSliceArgs(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "lean") return ChromeSliceArgs::kLean;
  if (lower == "full") return ChromeSliceArgs::kFull;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown slice args '", name, "': use 'lean' (none; sites once in otherData) or 'full' "
      "(block, unit, site, kind, origin on every slice)"));
}

const char* ChromeSliceArgsName(ChromeSliceArgs args) {
  return args == ChromeSliceArgs::kLean ? "lean" : "full";
}

const char* ChromeEventStyleName(ChromeEventStyle style) {
  return style == ChromeEventStyle::kComplete ? "x" : "be";
}

}  // namespace warptrace
