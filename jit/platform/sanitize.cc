#include "jit/platform/sanitize.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace warptrace {

absl::StatusOr<SanitizeOptions> ParseSanitize(absl::string_view text) {
  SanitizeOptions options;
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  if (trimmed.empty() || trimmed == "none") return options;
  if (trimmed == "all") return SanitizeOptions{true, true, true};
  for (absl::string_view check : absl::StrSplit(trimmed, ',')) {
    check = absl::StripAsciiWhitespace(check);
    if (check == "bounds") {
      options.bounds = true;
    } else if (check == "races") {
      options.races = true;
    } else if (check == "init") {
      options.init = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown sanitizer check '", check,
          "': expected bounds, races or init (comma-separated), all, or none"));
    }
  }
  return options;
}

std::string SanitizeName(const SanitizeOptions& options) {
  if (!options.any()) return "none";
  if (options.bounds && options.init && options.races) return "all";
  std::vector<const char*> names;
  if (options.bounds) names.push_back("bounds");
  if (options.races) names.push_back("races");
  if (options.init) names.push_back("init");
  return absl::StrJoin(names, ",");
}

}  // namespace warptrace
