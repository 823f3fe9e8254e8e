#include "profiler/imports/layout_json.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/utf8.h"

namespace warptrace {

void WriteSitesJson(const std::vector<SiteInfo>& sites, llvm::json::OStream& j) {
  for (const SiteInfo& site : sites) {
    j.object([&] {
      j.attribute("id", static_cast<int64_t>(site.id));
      j.attribute("name", ValidUtf8(site.name));
      j.attribute("kind", SiteKindName(site.kind));
      j.attribute("origin", ValidUtf8(site.origin));
    });
  }
}

void WriteHostAnchorJson(const HostTimeAnchor& anchor, LargeIntegers large,
                         llvm::json::OStream& j) {
  auto ns = [&](const char* key, int64_t value) {
    if (large == LargeIntegers::kNumbers) {
      j.attribute(key, value);
    } else {
      j.attribute(key, absl::StrCat(value));
    }
  };
  ns("globaltimer_ns", anchor.globaltimer_ns);
  ns("boottime_ns", anchor.boottime_ns);
  ns("realtime_ns", anchor.realtime_ns);
  j.attribute("uncertainty_ns", anchor.uncertainty_ns);
}

}  // namespace warptrace
