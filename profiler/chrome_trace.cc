#include "profiler/chrome_trace.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "profiler/layout.h"
#include "profiler/status_macros.h"

namespace warptrace {
namespace {

// Big enough that write(2) calls do not show in a profile of a multi-GB trace.
constexpr size_t kFileBufferBytes = size_t{1} << 20;

std::string DimString(const Dim3& d) { return absl::StrFormat("(%d,%d,%d)", d.x, d.y, d.z); }

std::string UnitLabel(const UnitTimeline& unit) {
  return absl::StrFormat("block %d %s unit %d", unit.block_linear, DimString(unit.block_index),
                         unit.unit_index);
}

// ns → microseconds with exactly three decimals. `ns` >= 0 (checked by Validate).
// Returns one past the last character written; `out` needs 24 bytes.
char* FormatMicros(int64_t ns, char* out) {
  const uint64_t value = static_cast<uint64_t>(ns);
  const uint64_t whole = value / 1000;
  const uint32_t frac = static_cast<uint32_t>(value % 1000);
  out = std::to_chars(out, out + 20, whole).ptr;
  out[0] = '.';
  out[1] = static_cast<char>('0' + frac / 100);
  out[2] = static_cast<char>('0' + frac / 10 % 10);
  out[3] = static_cast<char>('0' + frac % 10);
  return out + 4;
}

std::string JsonString(llvm::StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream json(os);
  // json::Value's StringRef constructor runs fixUTF8 on invalid input; do it explicitly so
  // the intent is visible and the replacement is the same U+FFFD everywhere.
  json.value(llvm::json::isUTF8(text) ? text.str() : llvm::json::fixUTF8(text));
  os.flush();
  return out;
}

std::string JsonUint(uint64_t value) {
  char buf[24];
  return std::string(buf, std::to_chars(buf, buf + sizeof(buf), value).ptr);
}

// Checks everything the writer relies on, before a byte is written.
absl::Status Validate(const Timeline& timeline) {
  const size_t num_sites = timeline.layout.sites.size();
  const UnitTimeline* previous = nullptr;
  std::vector<const Slice*> open;  // open[d] = the last slice seen at depth d
  for (const UnitTimeline& unit : timeline.units) {
    if (previous != nullptr &&
        std::pair(previous->block_linear, previous->unit_index) >=
            std::pair(unit.block_linear, unit.unit_index)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "timeline units must be strictly ordered by (block, unit): ", UnitLabel(unit),
          " follows ", UnitLabel(*previous)));
    }
    previous = &unit;
    open.clear();
    int64_t last_begin = timeline.origin_ns;
    for (size_t i = 0; i < unit.slices.size(); ++i) {
      const Slice& s = unit.slices[i];
      auto fail = [&](absl::string_view what) {
        return absl::InvalidArgumentError(absl::StrCat(
            UnitLabel(unit), ", slice ", i, " (site ", s.site, ", depth ", s.depth, ", ",
            s.begin_ns, "..", s.end_ns, " ns): ", what));
      };
      if (s.site >= num_sites) {
        return fail(absl::StrCat("site id is outside the site table (", num_sites, " sites)"));
      }
      if (s.end_ns < s.begin_ns) return fail("ends before it begins");
      if (s.begin_ns < timeline.origin_ns) {
        return fail(absl::StrCat("begins before the timeline origin ", timeline.origin_ns,
                                 " ns"));
      }
      if (s.begin_ns < last_begin && i > 0) {
        return fail(absl::StrCat("begins before the previous slice (", last_begin,
                                 " ns); slices must be ordered by begin time"));
      }
      last_begin = s.begin_ns;
      if (s.depth > open.size()) {
        return fail(absl::StrCat("is deeper than its enclosing slices (", open.size(),
                                 " open at this point)"));
      }
      if (s.depth < open.size()) {
        const Slice& sibling = *open[s.depth];
        if (sibling.end_ns > s.begin_ns) {
          return fail(absl::StrCat("overlaps the previous slice at its depth (site ",
                                   sibling.site, ", ends at ", sibling.end_ns, " ns)"));
        }
        open.resize(s.depth);
      }
      if (s.depth > 0) {
        const Slice& parent = *open[s.depth - 1];
        if (s.end_ns > parent.end_ns) {
          return fail(absl::StrCat("ends after its parent (site ", parent.site, ", ",
                                   parent.begin_ns, "..", parent.end_ns, " ns)"));
        }
      }
      open.push_back(&s);
    }
  }
  return absl::OkStatus();
}

// Streams one validated Timeline. Hot-path values are pre-serialized JSON (by json::OStream
// or std::to_chars) handed to the stream as whole values with rawValue.
class Writer {
 public:
  Writer(const Timeline& timeline, const ChromeTraceOptions& options, llvm::raw_ostream& os)
      : timeline_(timeline), options_(options), json_(os) {
    const TraceLayout& layout = timeline.layout;
    units_per_block_ = UnitsPerBlock(layout);
    for (const UnitTimeline& unit : timeline.units) {
      units_per_block_ = std::max<uint64_t>(units_per_block_, uint64_t{unit.unit_index} + 1);
    }
    sites_.reserve(layout.sites.size());
    for (const SiteInfo& site : layout.sites) {
      sites_.push_back({JsonString(site.name), JsonString(SiteKindName(site.kind)),
                        JsonString(site.origin)});
    }
    args_cache_.resize(layout.sites.size());
  }

  void Write() {
    json_.objectBegin();
    json_.attribute("displayTimeUnit", "ns");
    json_.attributeObject("otherData", [&] { WriteOtherData(); });
    json_.attributeArray("traceEvents", [&] {
      WriteProcessMetadata();
      for (const UnitTimeline& unit : timeline_.units) WriteThreadMetadata(unit);
      for (const UnitTimeline& unit : timeline_.units) WriteUnit(unit);
    });
    json_.objectEnd();
  }

 private:
  struct SiteJson {
    std::string name;    // "\"load\""
    std::string kind;    // "\"region\""
    std::string origin;  // "\"gemm.cc:42\""
  };
  struct CachedArgs {
    uint64_t generation = 0;  // == generation_ when valid for the current unit
    std::string json;
  };

  uint64_t Tid(const UnitTimeline& unit) const {
    return uint64_t{unit.block_linear} * units_per_block_ + unit.unit_index;
  }

  void Raw(llvm::StringRef key, llvm::StringRef json_value) {
    json_.attributeBegin(key);
    json_.rawValue(json_value);
    json_.attributeEnd();
  }

  void WriteOtherData() {
    const TraceLayout& layout = timeline_.layout;
    uint64_t counts[5] = {};
    uint64_t slices = 0, dropped = 0;
    for (const UnitTimeline& unit : timeline_.units) {
      ++counts[static_cast<int>(unit.verdict)];
      slices += unit.slices.size();
      dropped += unit.dropped;
    }
    json_.attribute("tool", "warptrace");
    json_.attribute("kernel", llvm::json::fixUTF8(layout.kernel_name));
    json_.attribute("device", llvm::json::fixUTF8(layout.device_name));
    json_.attribute("clock", llvm::json::fixUTF8(timeline_.clock_note));
    json_.attribute("nominal_sm_clock_khz", static_cast<int64_t>(layout.clock.nominal_sm_clock_khz));
    json_.attribute("grid", DimString(layout.grid));
    json_.attribute("block", DimString(layout.block));
    json_.attribute("trace_unit", UnitKindName(layout.unit.kind));
    json_.attribute("capacity", static_cast<int64_t>(layout.capacity));
    // Absolute globaltimer values exceed 2^53: a string keeps every digit.
    json_.attribute("origin_ns", absl::StrCat(timeline_.origin_ns));
    json_.attribute("overhead_compensated", timeline_.overhead_compensated);
    json_.attribute("units", static_cast<int64_t>(timeline_.units.size()));
    for (Verdict v : {Verdict::kComplete, Verdict::kTruncated, Verdict::kOverflowed,
                      Verdict::kCorrupt, Verdict::kMissing}) {
      json_.attribute(absl::StrCat("units_", VerdictName(v)),
                      static_cast<int64_t>(counts[static_cast<int>(v)]));
    }
    json_.attribute("slices", static_cast<int64_t>(slices));
    json_.attribute("dropped_events", static_cast<int64_t>(dropped));
  }

  void WriteProcessMetadata() {
    // (sm, tid of its first unit), one per SM, by SM id.
    std::vector<std::pair<uint32_t, uint64_t>> sms;
    sms.reserve(timeline_.units.size());
    for (const UnitTimeline& unit : timeline_.units) sms.emplace_back(unit.sm_id, Tid(unit));
    std::stable_sort(sms.begin(), sms.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    sms.erase(std::unique(sms.begin(), sms.end(),
                          [](const auto& a, const auto& b) { return a.first == b.first; }),
              sms.end());
    for (const auto& [sm, tid] : sms) {
      json_.object([&] {
        json_.attribute("name", "process_name");
        json_.attribute("ph", "M");
        json_.attribute("pid", static_cast<int64_t>(sm));
        json_.attribute("tid", static_cast<int64_t>(tid));
        json_.attributeObject("args", [&] { json_.attribute("name", absl::StrCat("SM ", sm)); });
      });
      json_.object([&] {
        json_.attribute("name", "process_sort_index");
        json_.attribute("ph", "M");
        json_.attribute("pid", static_cast<int64_t>(sm));
        json_.attribute("tid", static_cast<int64_t>(tid));
        json_.attributeObject("args", [&] { json_.attribute("sort_index", static_cast<int64_t>(sm)); });
      });
    }
  }

  void WriteThreadMetadata(const UnitTimeline& unit) {
    const int64_t pid = unit.sm_id;
    const int64_t tid = static_cast<int64_t>(Tid(unit));
    std::string name = absl::StrCat("block ", DimString(unit.block_index), " ",
                                    UnitKindName(timeline_.layout.unit.kind), " ",
                                    unit.unit_index);
    if (unit.verdict != Verdict::kComplete) absl::StrAppend(&name, " [", VerdictName(unit.verdict), "]");
    json_.object([&] {
      json_.attribute("name", "thread_name");
      json_.attribute("ph", "M");
      json_.attribute("pid", pid);
      json_.attribute("tid", tid);
      json_.attributeObject("args", [&] {
        json_.attribute("name", name);
        json_.attribute("verdict", VerdictName(unit.verdict));
        if (unit.verdict != Verdict::kComplete) {
          json_.attribute("reason", llvm::json::fixUTF8(unit.verdict_reason));
        }
      });
    });
    json_.object([&] {
      json_.attribute("name", "thread_sort_index");
      json_.attribute("ph", "M");
      json_.attribute("pid", pid);
      json_.attribute("tid", tid);
      json_.attributeObject("args", [&] { json_.attribute("sort_index", tid); });
    });
  }

  // The args object of a slice of `unit` at `site`, without "repaired".
  void WriteArgs(const UnitTimeline& unit, uint32_t site, bool repaired) {
    json_.attribute("block", unit_block_);
    json_.attribute("unit", static_cast<int64_t>(unit.unit_index));
    json_.attribute("site", static_cast<int64_t>(site));
    Raw("kind", sites_[site].kind);
    Raw("origin", sites_[site].origin);
    if (unit.verdict != Verdict::kComplete) json_.attribute("verdict", VerdictName(unit.verdict));
    if (repaired) json_.attribute("repaired", true);
  }

  // Serialized args for (current unit, site), built once per unit and site.
  llvm::StringRef ArgsJson(const UnitTimeline& unit, uint32_t site) {
    CachedArgs& cached = args_cache_[site];
    if (cached.generation != generation_) {
      cached.generation = generation_;
      cached.json.clear();
      llvm::raw_string_ostream os(cached.json);
      llvm::json::OStream json(os);
      json.object([&] {
        json.attribute("block", unit_block_);
        json.attribute("unit", static_cast<int64_t>(unit.unit_index));
        json.attribute("site", static_cast<int64_t>(site));
        json.attributeBegin("kind");
        json.rawValue(sites_[site].kind);
        json.attributeEnd();
        json.attributeBegin("origin");
        json.rawValue(sites_[site].origin);
        json.attributeEnd();
        if (unit.verdict != Verdict::kComplete) json.attribute("verdict", VerdictName(unit.verdict));
      });
      os.flush();
    }
    return cached.json;
  }

  void WriteUnit(const UnitTimeline& unit) {
    if (unit.slices.empty()) return;
    ++generation_;
    unit_block_ = DimString(unit.block_index);
    pid_json_ = JsonUint(unit.sm_id);
    tid_json_ = JsonUint(Tid(unit));
    const bool complete_events = options_.events == ChromeEventStyle::kComplete;
    open_.clear();
    for (const Slice& s : unit.slices) {
      if (!complete_events) {
        while (open_.size() > s.depth) {
          WriteEnd(open_.back());
          open_.pop_back();
        }
        open_.push_back(s.end_ns);
      }
      WriteBeginOrComplete(unit, s, complete_events);
    }
    while (!open_.empty()) {
      WriteEnd(open_.back());
      open_.pop_back();
    }
  }

  void WriteBeginOrComplete(const UnitTimeline& unit, const Slice& s, bool complete) {
    const SiteJson& site = sites_[s.site];
    char buf[24];
    json_.objectBegin();
    Raw("name", site.name);
    Raw("cat", site.kind);
    Raw("ph", complete ? llvm::StringRef("\"X\"") : llvm::StringRef("\"B\""));
    Raw("ts", llvm::StringRef(buf, FormatMicros(s.begin_ns - timeline_.origin_ns, buf) - buf));
    if (complete) {
      Raw("dur", llvm::StringRef(buf, FormatMicros(s.end_ns - s.begin_ns, buf) - buf));
    }
    Raw("pid", pid_json_);
    Raw("tid", tid_json_);
    if (s.repaired) {
      json_.attributeObject("args", [&] { WriteArgs(unit, s.site, /*repaired=*/true); });
    } else {
      Raw("args", ArgsJson(unit, s.site));
    }
    json_.objectEnd();
  }

  void WriteEnd(int64_t end_ns) {
    char buf[24];
    json_.objectBegin();
    Raw("ph", "\"E\"");
    Raw("ts", llvm::StringRef(buf, FormatMicros(end_ns - timeline_.origin_ns, buf) - buf));
    Raw("pid", pid_json_);
    Raw("tid", tid_json_);
    json_.objectEnd();
  }

  const Timeline& timeline_;
  const ChromeTraceOptions& options_;
  llvm::json::OStream json_;
  uint64_t units_per_block_ = 1;
  std::vector<SiteJson> sites_;
  std::vector<CachedArgs> args_cache_;
  uint64_t generation_ = 0;
  // Per current unit.
  std::string unit_block_;
  std::string pid_json_;
  std::string tid_json_;
  std::vector<int64_t> open_;  // end times of open B events (B/E mode)
};

absl::Status IoError(std::error_code ec, absl::string_view path) {
  const std::string message =
      absl::StrCat("writing Chrome trace to '", path, "': ", ec.message());
  if (ec == std::errc::no_such_file_or_directory) return absl::NotFoundError(message);
  if (ec == std::errc::permission_denied || ec == std::errc::read_only_file_system) {
    return absl::PermissionDeniedError(message);
  }
  if (ec == std::errc::no_space_on_device || ec == std::errc::file_too_large) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::UnavailableError(message);
}

}  // namespace

absl::Status WriteChromeTrace(const Timeline& timeline, const ChromeTraceOptions& options,
                              llvm::raw_ostream& os) {
  RETURN_IF_ERROR(Validate(timeline));
  Writer(timeline, options, os).Write();
  return absl::OkStatus();
}

absl::Status WriteChromeTraceFile(const Timeline& timeline, const ChromeTraceOptions& options,
                                  absl::string_view path) {
  RETURN_IF_ERROR(Validate(timeline));
  absl::Status status;
  llvm::Error error = llvm::writeToOutput(
      llvm::StringRef(path.data(), path.size()), [&](llvm::raw_ostream& os) -> llvm::Error {
        // LLVM 14 has the kind but no raw_fd_ostream::classof for dyn_cast.
        auto* fd = os.get_kind() == llvm::raw_ostream::OStreamKind::OK_FDStream
                       ? static_cast<llvm::raw_fd_ostream*>(&os)
                       : nullptr;
        os.SetBufferSize(kFileBufferBytes);
        Writer(timeline, options, os).Write();
        os.flush();
        if (fd != nullptr && fd->has_error()) {
          const std::error_code ec = fd->error();
          fd->clear_error();  // or its destructor aborts the process
          status = IoError(ec, path);
          return llvm::errorCodeToError(ec);
        }
        return llvm::Error::success();
      });
  if (error) {
    std::error_code ec = llvm::errorToErrorCode(std::move(error));
    if (status.ok()) status = IoError(ec, path);
    return status;
  }
  // writeToOutput creates its temporary file with the executable bits (it was made for
  // objcopy); a trace is data: rw-rw-rw- less the umask.
  namespace fs = llvm::sys::fs;
  if (path != "-" && fs::is_regular_file(llvm::Twine(llvm::StringRef(path.data(), path.size())))) {
    const auto mode = static_cast<fs::perms>((fs::all_read | fs::all_write) & ~fs::getUmask());
    if (std::error_code ec = fs::setPermissions(llvm::StringRef(path.data(), path.size()), mode)) {
      return IoError(ec, path);
    }
  }
  return status;
}

absl::StatusOr<ChromeEventStyle> ParseChromeEventStyle(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "x") return ChromeEventStyle::kComplete;
  if (lower == "be" || lower == "b/e") return ChromeEventStyle::kBeginEnd;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown Chrome event style '", name, "': use 'x' (complete events) or 'be' (B/E pairs)"));
}

const char* ChromeEventStyleName(ChromeEventStyle style) {
  return style == ChromeEventStyle::kComplete ? "x" : "be";
}

}  // namespace warptrace
