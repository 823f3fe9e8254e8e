#include "profiler/outputs/chrome_trace_options.h"

#include "base/enum_table.h"

namespace warptrace {
namespace {

constexpr EnumTable<ChromeEventStyle, 4> kEventStyles{
    "Chrome event style",
    {{
        {ChromeEventStyle::kComplete, "x", "complete events"},
        {ChromeEventStyle::kBeginEnd, "be", "B/E pairs"},
        {ChromeEventStyle::kMosaic, "mosaic", "exactly JAX Mosaic GPU's own dump"},
        {ChromeEventStyle::kBeginEnd, "b/e"},
    }},
    EnumCase::kIgnore};
static_assert(kEventStyles.Covers(3));

constexpr EnumTable<ChromeSliceArgs, 2> kSliceArgs{
    "slice args",
    {{
        {ChromeSliceArgs::kLean, "lean", "none; sites once in otherData"},
        {ChromeSliceArgs::kFull, "full", "block, unit, site, kind, origin on every slice"},
    }},
    EnumCase::kIgnore};
static_assert(kSliceArgs.Covers(2));

}  // namespace

absl::StatusOr<ChromeEventStyle> ParseChromeEventStyle(absl::string_view name) {
  return kEventStyles.Parse(name);
}

absl::StatusOr<ChromeSliceArgs> ParseChromeSliceArgs(absl::string_view name) {
  return kSliceArgs.Parse(name);
}

const char* ChromeSliceArgsName(ChromeSliceArgs args) { return kSliceArgs.Name(args); }

const char* ChromeEventStyleName(ChromeEventStyle style) { return kEventStyles.Name(style); }

}  // namespace warptrace
