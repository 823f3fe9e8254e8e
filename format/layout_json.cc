#include "format/layout_json.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/utf8.h"

namespace warptrace {

void WriteSitesJson(const std::vector<SiteInfo>& sites, llvm::json::OStream& j) {
  for (const SiteInfo& site : sites) {
    j.object([&] {
      j.attribute("id", static_cast<int64_t>(site.id));
      j.attribute("name", ValidUtf8(site.name));
      j.attribute("kind", SiteKindName(site.kind));
      j.attribute("origin", ValidUtf8(site.origin));
      if (site.copy_engine != CopyEngine::kNone) {
        j.attribute("copy_engine", CopyEngineName(site.copy_engine));
        j.attribute("copy_bytes", site.copy_bytes);
      }
      if (site.multicast) j.attribute("multicast", true);
      if (site.end_observed) j.attribute("end_observed", true);
      if (site.ends_at_waits) j.attribute("ends_at_waits", true);
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

absl::StatusOr<std::vector<SiteInfo>> ReadSitesJson(const JsonFields& object,
                                                    absl::string_view key) {
  ASSIGN_OR_RETURN(std::vector<JsonFields> objects, object.Objects(key));
  std::vector<SiteInfo> sites;
  sites.reserve(objects.size());
  for (const JsonFields& fields : objects) {
    SiteInfo site;
    ASSIGN_OR_RETURN(uint64_t id, fields.Unsigned("id"));
    site.id = static_cast<uint32_t>(id);
    ASSIGN_OR_RETURN(site.name, fields.String("name"));
    ASSIGN_OR_RETURN(std::string kind, fields.String("kind"));
    absl::StatusOr<SiteKind> parsed = ParseSiteKind(kind);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sidecar field \"", fields.Path("kind"), "\": ", parsed.status().message()));
    }
    site.kind = *parsed;
    ASSIGN_OR_RETURN(site.origin, fields.String("origin"));
    if (fields.Has("copy_engine")) {
      ASSIGN_OR_RETURN(std::string engine, fields.String("copy_engine"));
      absl::StatusOr<CopyEngine> parsed_engine = ParseCopyEngine(engine);
      if (!parsed_engine.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("sidecar field \"",
                                                       fields.Path("copy_engine"), "\": ",
                                                       parsed_engine.status().message()));
      }
      site.copy_engine = *parsed_engine;
      ASSIGN_OR_RETURN(site.copy_bytes, fields.Unsigned("copy_bytes"));
    }
    if (fields.Has("multicast")) {
      ASSIGN_OR_RETURN(site.multicast, fields.Bool("multicast"));
    }
    if (fields.Has("end_observed")) {
      ASSIGN_OR_RETURN(site.end_observed, fields.Bool("end_observed"));
    }
    if (fields.Has("ends_at_waits")) {
      ASSIGN_OR_RETURN(site.ends_at_waits, fields.Bool("ends_at_waits"));
    }
    sites.push_back(std::move(site));
  }
  return sites;
}

absl::StatusOr<HostTimeAnchor> ReadHostAnchorJson(const JsonFields& anchor) {
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  ASSIGN_OR_RETURN(uint64_t globaltimer, anchor.Unsigned("globaltimer_ns", kMax));
  ASSIGN_OR_RETURN(uint64_t boottime, anchor.Unsigned("boottime_ns", kMax));
  ASSIGN_OR_RETURN(uint64_t realtime, anchor.Unsigned("realtime_ns", kMax));
  ASSIGN_OR_RETURN(uint64_t uncertainty, anchor.Unsigned("uncertainty_ns", kMax));
  return HostTimeAnchor{true, static_cast<int64_t>(globaltimer), static_cast<int64_t>(boottime),
                        static_cast<int64_t>(realtime), static_cast<int64_t>(uncertainty)};
}

}  // namespace warptrace
