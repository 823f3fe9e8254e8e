#include "profiler/outputs/chrome_trace_options.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace warptrace {

absl::StatusOr<ChromeEventStyle> ParseChromeEventStyle(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "x") return ChromeEventStyle::kComplete;
  if (lower == "be" || lower == "b/e") return ChromeEventStyle::kBeginEnd;
  if (lower == "mosaic") return ChromeEventStyle::kMosaic;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown Chrome event style '", name, "': use 'x' (complete events), 'be' (B/E pairs) "
      "or 'mosaic' (exactly JAX Mosaic GPU's own dump)"));
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
  switch (style) {
    case ChromeEventStyle::kComplete:
      return "x";
    case ChromeEventStyle::kBeginEnd:
      return "be";
    case ChromeEventStyle::kMosaic:
      return "mosaic";
  }
  return "x";
}

}  // namespace warptrace
