#include "format/sidecar.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "format/json_fields.h"
#include "format/layout_json.h"
#include "format/trace_abi.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/JSON.h"

namespace warptrace {
namespace {

namespace json = ::llvm::json;

llvm::StringRef Ref(absl::string_view s) { return llvm::StringRef(s.data(), s.size()); }

absl::StatusOr<json::Value> ParseJson(absl::string_view text) {
  llvm::Expected<json::Value> value = json::parse(Ref(text));
  if (!value) return absl::InvalidArgumentError(
      absl::StrCat("sidecar is not valid JSON: ", llvm::toString(value.takeError())));
  if (value->getAsObject() == nullptr) {
    return absl::InvalidArgumentError("sidecar is not a JSON object");
  }
  return std::move(*value);
}

absl::StatusOr<std::vector<BarrierInfo>> ParseBarriers(const JsonFields& root) {
  ASSIGN_OR_RETURN(std::vector<JsonFields> objects, root.Objects("barriers"));
  std::vector<BarrierInfo> barriers;
  barriers.reserve(objects.size());
  for (const JsonFields& fields : objects) {
    BarrierInfo barrier;
    ASSIGN_OR_RETURN(uint64_t id, fields.Unsigned("id"));
    barrier.id = static_cast<uint32_t>(id);
    ASSIGN_OR_RETURN(barrier.name, fields.String("name"));
    ASSIGN_OR_RETURN(uint64_t arrivals, fields.Unsigned("arrivals_per_phase"));
    barrier.arrivals_per_phase = static_cast<uint32_t>(arrivals);
    barriers.push_back(std::move(barrier));
  }
  return barriers;
}

// The sidecar's "format" and "version": ours, and one this build reads.
absl::Status CheckFormatAndVersion(const JsonFields& root) {
  ASSIGN_OR_RETURN(std::string format, root.String("format"));
  if (format != kSidecarFormat) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sidecar has format \"", format, "\", expected \"", kSidecarFormat,
        "\"; a \"mosaic-gpu\" sidecar is read together with its buffer (warptrace dump "
        "--input=PREFIX, warptrace.dump(PREFIX), warptrace.mosaic)"));
  }
  ASSIGN_OR_RETURN(const json::Value* version, root.Get("version"));
  const auto number = version->getAsInteger();  // llvm::Optional<int64_t>
  if (!number || *number < kOldestSidecarVersion || *number > kSidecarVersion) {
    std::string found;
    llvm::raw_string_ostream os(found);
    os << *version;
    os.flush();
    return absl::InvalidArgumentError(absl::StrCat(
        "sidecar version ", found, " is not supported: this build reads versions ",
        kOldestSidecarVersion, " to ", kSidecarVersion,
        "; re-save the trace with a matching warptrace"));
  }
  return absl::OkStatus();
}

// The "unit" object.
// "site_trips": one SiteTrip per site (those not listed stay unbounded).
absl::StatusOr<std::vector<SiteTrip>> ParseSiteTrips(const JsonFields& root, size_t sites) {
  std::vector<SiteTrip> site_trips(sites);
  ASSIGN_OR_RETURN(const json::Array* trips, root.Array("site_trips"));
  for (size_t i = 0; i < trips->size(); ++i) {
    const std::string path = absl::StrCat("site_trips[", i, "]");
    const json::Object* object = (*trips)[i].getAsObject();
    if (object == nullptr) return root.Mistyped(path, "an object", (*trips)[i]);
    JsonFields trip(*object, path, "sidecar");
    ASSIGN_OR_RETURN(uint64_t site, trip.Unsigned("site"));
    if (site >= sites) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sidecar field \"", path, ".site\": site ", site, " is past the ", sites, " sites"));
    }
    ASSIGN_OR_RETURN(std::string bound, trip.String("bound"));
    absl::StatusOr<TripBound> parsed_bound = ParseTripBound(bound);
    if (!parsed_bound.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sidecar field \"", path, ".bound\": ", parsed_bound.status().message()));
    }
    SiteTrip& t = site_trips[site];
    t.bound = *parsed_bound;
    ASSIGN_OR_RETURN(t.count, trip.Unsigned("count", std::numeric_limits<int64_t>::max()));
    ASSIGN_OR_RETURN(t.loop, trip.String("loop"));
    if (trip.Has("always_in")) {  // optional: sidecars before issue 54 have none
      ASSIGN_OR_RETURN(uint64_t span, trip.Unsigned("always_in"));
      if (span >= sites) {
        return absl::InvalidArgumentError(absl::StrCat(
            "sidecar field \"", path, ".always_in\": site ", span, " is past the ", sites,
            " sites"));
      }
      t.always_in = static_cast<int64_t>(span);
    }
  }
  return site_trips;
}

absl::StatusOr<UnitSpec> ParseUnit(const JsonFields& unit) {
  UnitSpec out;
  ASSIGN_OR_RETURN(std::string unit_kind, unit.String("kind"));
  absl::StatusOr<UnitKind> kind = ParseUnitKind(unit_kind);
  if (!kind.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("sidecar field \"unit.kind\": ",
                                                   kind.status().message()));
  }
  out.kind = *kind;
  ASSIGN_OR_RETURN(uint64_t first_thread, unit.Unsigned("first_thread"));
  ASSIGN_OR_RETURN(uint64_t num_threads, unit.Unsigned("num_threads"));
  ASSIGN_OR_RETURN(uint64_t recorder_offset, unit.Unsigned("recorder_offset"));
  out.first_thread = static_cast<uint32_t>(first_thread);
  out.num_threads = static_cast<uint32_t>(num_threads);
  out.recorder_offset = static_cast<uint32_t>(recorder_offset);
  return out;
}

}  // namespace

void WriteLayoutJson(const TraceLayout& layout, llvm::raw_ostream& os) {
  json::OStream j(os, /*IndentSize=*/2);
  auto dims = [&](const char* key, const Dim3& d) {
    j.attributeArray(key, [&] {
      j.value(d.x);
      j.value(d.y);
      j.value(d.z);
    });
  };
  j.object([&] {
    j.attribute("format", kSidecarFormat);
    j.attribute("version", kSidecarVersion);
    j.attribute("kernel_name", ValidUtf8(layout.kernel_name));
    j.attribute("device_name", ValidUtf8(layout.device_name));
    dims("grid", layout.grid);
    dims("block", layout.block);
    if (layout.cluster.Count() > 1) dims("cluster", layout.cluster);
    j.attributeObject("unit", [&] {
      j.attribute("kind", UnitKindName(layout.unit.kind));
      j.attribute("first_thread", layout.unit.first_thread);
      j.attribute("num_threads", layout.unit.num_threads);
      j.attribute("recorder_offset", layout.unit.recorder_offset);
    });
    j.attribute("capacity", layout.capacity);
    j.attribute("placement", PlacementName(layout.placement));
    j.attributeObject("sample", [&] {
      j.attribute("begin", layout.sample.begin);
      j.attribute("end", layout.sample.end);
      j.attribute("stride", layout.sample.stride);
    });
    j.attributeObject("clock", [&] {
      j.attribute("nominal_sm_clock_khz", layout.clock.nominal_sm_clock_khz);
      j.attribute("num_sms", layout.clock.num_sms);
      j.attribute("event_clock", ValidUtf8(layout.clock.event_clock));
      j.attribute("host_backend", layout.clock.host_backend);
    });
    j.attributeArray("sites", [&] { WriteSitesJson(layout.sites, j); });
    // Optional: what each site counts of its loop (format/layout.h, SiteTrip).
    if (!layout.site_trips.empty()) {
      j.attributeArray("site_trips", [&] {
        for (size_t id = 0; id < layout.site_trips.size(); ++id) {
          const SiteTrip& trip = layout.site_trips[id];
          if (trip.bound == TripBound::kNone) continue;
          j.object([&] {
            j.attribute("site", static_cast<int64_t>(id));
            j.attribute("bound", TripBoundName(trip.bound));
            j.attribute("count", trip.count);
            j.attribute("loop", ValidUtf8(trip.loop));
            if (trip.always_in >= 0) j.attribute("always_in", trip.always_in);
          });
        }
      });
    }
    if (layout.host_anchor.known) {
      j.attributeObject("host_anchor", [&] {
        WriteHostAnchorJson(layout.host_anchor, LargeIntegers::kNumbers, j);
      });
    }
    if (!layout.exact_events.empty()) {
      j.attributeArray("exact_events", [&] {
        for (int64_t n : layout.exact_events) j.value(n);
      });
    }
    if (!layout.block_labels.empty()) {
      j.attributeArray("block_labels", [&] {
        for (const std::string& label : layout.block_labels) j.value(ValidUtf8(label));
      });
    }
    if (!layout.grid_dim_names.empty()) {
      j.attributeArray("grid_dim_names", [&] {
        for (const std::string& name : layout.grid_dim_names) j.value(ValidUtf8(name));
      });
    }
    if (!layout.unit_roles.empty()) {
      j.attributeArray("unit_roles", [&] {
        for (const std::string& role : layout.unit_roles) j.value(ValidUtf8(role));
      });
    }
    if (!layout.barriers.empty()) {
      j.attributeArray("barriers", [&] {
        for (const BarrierInfo& barrier : layout.barriers) {
          j.object([&] {
            j.attribute("id", barrier.id);
            j.attribute("name", ValidUtf8(barrier.name));
            j.attribute("arrivals_per_phase", barrier.arrivals_per_phase);
          });
        }
      });
    }
  });
}

absl::StatusOr<std::string> SidecarFormat(absl::string_view text) {
  ASSIGN_OR_RETURN(json::Value value, ParseJson(text));
  JsonFields root(*value.getAsObject(), "", "sidecar");
  return root.String("format");
}

absl::StatusOr<TraceLayout> ParseLayoutJson(absl::string_view text) {
  ASSIGN_OR_RETURN(json::Value value, ParseJson(text));
  JsonFields root(*value.getAsObject(), "", "sidecar");
  RETURN_IF_ERROR(CheckFormatAndVersion(root));
  TraceLayout layout;
  ASSIGN_OR_RETURN(layout.kernel_name, root.String("kernel_name"));
  ASSIGN_OR_RETURN(layout.device_name, root.String("device_name"));
  ASSIGN_OR_RETURN(layout.grid, root.Dims("grid"));
  ASSIGN_OR_RETURN(layout.block, root.Dims("block"));
  if (root.Has("cluster")) {
    ASSIGN_OR_RETURN(layout.cluster, root.Dims("cluster"));
  }

  ASSIGN_OR_RETURN(JsonFields unit, root.Object("unit"));
  ASSIGN_OR_RETURN(layout.unit, ParseUnit(unit));

  ASSIGN_OR_RETURN(uint64_t capacity, root.Unsigned("capacity"));
  layout.capacity = static_cast<uint32_t>(capacity);
  ASSIGN_OR_RETURN(std::string placement_name, root.String("placement"));
  absl::StatusOr<Placement> placement = ParsePlacement(placement_name);
  if (!placement.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("sidecar field \"placement\": ",
                                                   placement.status().message()));
  }
  layout.placement = *placement;

  ASSIGN_OR_RETURN(JsonFields sample, root.Object("sample"));
  ASSIGN_OR_RETURN(uint64_t begin, sample.Unsigned("begin"));
  ASSIGN_OR_RETURN(uint64_t end, sample.Unsigned("end"));
  ASSIGN_OR_RETURN(uint64_t stride, sample.Unsigned("stride"));
  layout.sample = {static_cast<uint32_t>(begin), static_cast<uint32_t>(end),
                   static_cast<uint32_t>(stride)};

  ASSIGN_OR_RETURN(JsonFields clock, root.Object("clock"));
  ASSIGN_OR_RETURN(layout.clock.nominal_sm_clock_khz,
                   clock.Unsigned("nominal_sm_clock_khz", std::numeric_limits<int64_t>::max()));
  ASSIGN_OR_RETURN(uint64_t num_sms, clock.Unsigned("num_sms"));
  layout.clock.num_sms = static_cast<uint32_t>(num_sms);
  ASSIGN_OR_RETURN(layout.clock.event_clock, clock.String("event_clock"));
  if (clock.Has("host_backend")) {  // absent in sidecars older than the field
    ASSIGN_OR_RETURN(layout.clock.host_backend, clock.Bool("host_backend"));
  }

  if (root.Has("host_anchor")) {
    ASSIGN_OR_RETURN(JsonFields anchor, root.Object("host_anchor"));
    ASSIGN_OR_RETURN(layout.host_anchor, ReadHostAnchorJson(anchor));
  }
  ASSIGN_OR_RETURN(layout.sites, ReadSitesJson(root, "sites"));
  // Optional (sidecars written before the plan check have none).
  if (root.Has("site_trips")) {
    ASSIGN_OR_RETURN(layout.site_trips, ParseSiteTrips(root, layout.sites.size()));
  }
  // Optional (sidecars written before the plan check have none): -1 or a count per unit.
  if (root.Has("exact_events")) {
    ASSIGN_OR_RETURN(const json::Array* exact, root.Array("exact_events"));
    for (size_t i = 0; i < exact->size(); ++i) {
      const llvm::Optional<int64_t> n = (*exact)[i].getAsInteger();
      if (!n || *n < -1) {
        return root.Mistyped(absl::StrCat("exact_events[", i, "]"), "an integer >= -1",
                             (*exact)[i]);
      }
      layout.exact_events.push_back(*n);
    }
  }
  // Optional (sidecars written before block labels have none).
  if (root.Has("block_labels")) {
    ASSIGN_OR_RETURN(layout.block_labels, root.Strings("block_labels"));
  }
  if (root.Has("grid_dim_names")) {
    ASSIGN_OR_RETURN(layout.grid_dim_names, root.Strings("grid_dim_names"));
  }
  // Optional (sidecars written before the role table have none).
  if (root.Has("unit_roles")) {
    ASSIGN_OR_RETURN(layout.unit_roles, root.Strings("unit_roles"));
  }
  // Optional (sidecars written before the barrier table have none).
  if (root.Has("barriers")) {
    ASSIGN_OR_RETURN(layout.barriers, ParseBarriers(root));
  }

  if (absl::Status valid = ValidateLayout(layout); !valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sidecar describes an invalid layout: ", valid.message()));
  }
  return layout;
}

absl::Status CheckBufferBytes(const TraceLayout& layout, absl::string_view bytes,
                              absl::string_view what) {
  const uint64_t expected = BufferBytes(layout);
  const uint64_t actual = bytes.size();
  if (actual != expected) {
    const uint64_t records = NumRecords(layout);
    const uint64_t record_bytes = abi::RecordBytes(layout.capacity);
    std::string meaning;
    if (actual % 4 != 0) {
      meaning = "it is not even a whole number of 32-bit words, so the file is cut short or "
                "is not a warptrace buffer";
    } else if (records != 0 && actual % (records * 4) == 0 &&
               actual / (records * 4) >= abi::kHeaderWords &&
               (actual / (records * 4) - abi::kHeaderWords) % abi::kEventWords == 0) {
      const uint64_t implied = (actual / (records * 4) - abi::kHeaderWords) / abi::kEventWords;
      meaning = absl::StrFormat(
          "that is %d records of capacity %d instead of %d: the sidecar probably belongs to "
          "another run of the kernel (check \"capacity\", \"grid\" and \"sample\")",
          records, implied, layout.capacity);
    } else if (actual % record_bytes == 0) {
      meaning = absl::StrFormat(
          "that is %d records of this layout's %d bytes instead of %d: check \"grid\", "
          "\"block\", \"unit\" and \"sample\" in the sidecar",
          actual / record_bytes, record_bytes, records);
    } else {
      meaning = absl::StrFormat(
          "that is %.2f records of this layout's %d bytes: the file is truncated or the "
          "sidecar does not belong to it",
          static_cast<double>(actual) / static_cast<double>(record_bytes), record_bytes);
    }
    return absl::DataLossError(absl::StrFormat(
        "%s holds %d bytes but the layout (%d records x %d bytes, capacity %d) needs %d bytes; "
        "%s",
        what, actual, records, record_bytes, layout.capacity, expected, meaning));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint32_t>> WordsFromBytes(const TraceLayout& layout,
                                                     absl::string_view bytes,
                                                     absl::string_view what) {
  RETURN_IF_ERROR(CheckBufferBytes(layout, bytes, what));
  const uint64_t actual = bytes.size();
  std::vector<uint32_t> words(actual / 4);
  if (llvm::sys::IsLittleEndianHost) {
    if (actual != 0) std::memcpy(words.data(), bytes.data(), actual);
  } else {
    for (size_t i = 0; i < words.size(); ++i) {
      words[i] = llvm::support::endian::read32le(bytes.data() + 4 * i);
    }
  }
  return words;
}

absl::Status SaveTrace(absl::string_view prefix, const TraceLayout& layout,
                       absl::Span<const uint32_t> words) {
  RETURN_IF_ERROR(ValidateLayout(layout));
  if (uint64_t{words.size()} * 4 != BufferBytes(layout)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "buffer has %d words but the layout needs %d (%d records x %d words)", words.size(),
        BufferBytes(layout) / 4, NumRecords(layout), abi::RecordWords(layout.capacity)));
  }
  const std::string bin = absl::StrCat(prefix, ".bin");
  const std::string sidecar = absl::StrCat(prefix, ".json");
  RETURN_IF_ERROR(WriteFileAtomically(bin, [&](llvm::raw_ostream& os) {
    if (llvm::sys::IsLittleEndianHost) {
      os.write(reinterpret_cast<const char*>(words.data()), words.size() * 4);
    } else {
      for (uint32_t w : words) {
        char le[4];
        llvm::support::endian::write32le(le, w);
        os.write(le, 4);
      }
    }
    return absl::OkStatus();
  }, {.role = "trace buffer"}));
  return WriteFileAtomically(sidecar, [&](llvm::raw_ostream& os) {
    WriteLayoutJson(layout, os);
    os << "\n";
    return absl::OkStatus();
  }, {.role = "trace sidecar"});
}

}  // namespace warptrace
