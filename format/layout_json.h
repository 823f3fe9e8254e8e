// The JSON form of the parts of a TraceLayout that more than one file carries: the site
// table and the host-time anchor. The sidecar (sidecar.h) and the Chrome trace's otherData
// (chrome_trace.h) both write them through these, so the two can never disagree on a key or
// on how a name is repaired; the sidecar reads them back with the Read functions.
//
//   j.attributeArray("sites", [&] { WriteSitesJson(layout.sites, j); });
//   if (layout.host_anchor.known) {
//     j.attributeObject("host_anchor", [&] {
//       WriteHostAnchorJson(layout.host_anchor, LargeIntegers::kNumbers, j);
//     });
//   }
//
// Thread-safety: reentrant.
#ifndef WARPTRACE_FORMAT_LAYOUT_JSON_H_
#define WARPTRACE_FORMAT_LAYOUT_JSON_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "format/json_fields.h"
#include "format/layout.h"
#include "llvm/Support/JSON.h"

namespace warptrace {

// One {"id", "name", "kind", "origin"} object per site, in table order, as array elements
// of the array being written, with "copy_engine" and "copy_bytes" added for a site whose
// SiteInfo::copy_engine is known. Names and origins pass through ValidUtf8 (base/utf8.h).
void WriteSitesJson(const std::vector<SiteInfo>& sites, llvm::json::OStream& j);

// How the anchor's nanosecond values (beyond 2^53) are written.
enum class LargeIntegers {
  kNumbers,         // JSON integers, exact for readers that parse int64 (the sidecar's)
  kDecimalStrings,  // "1764000000000000000": exact in every reader, JavaScript included
};

// "globaltimer_ns", "boottime_ns", "realtime_ns" (as `large`) and "uncertainty_ns" (an
// integer), as attributes of the object being written.
void WriteHostAnchorJson(const HostTimeAnchor& anchor, LargeIntegers large,
                         llvm::json::OStream& j);

// The site table in `object`'s array `key`, as WriteSitesJson writes it (a site without
// "copy_engine" reads back kNone / 0: sidecars of version 1). InvalidArgument
// naming the field (JsonFields' messages) for a missing or mistyped one or an unknown kind.
absl::StatusOr<std::vector<SiteInfo>> ReadSitesJson(const JsonFields& object,
                                                    absl::string_view key);

// A host anchor written with LargeIntegers::kNumbers (known = true). JsonFields' errors.
absl::StatusOr<HostTimeAnchor> ReadHostAnchorJson(const JsonFields& anchor);

}  // namespace warptrace

#endif  // WARPTRACE_FORMAT_LAYOUT_JSON_H_
