// DumpSettings: a dump as its users ask for it, the one schema behind all three doors. The
// CLI's `warptrace dump` flags, the C API's request JSON (warptrace_dump_*) and python's
// `warptrace.dump()` keywords are the same settings, listed once in DumpSettingSpecs(): key,
// type, default, bounds and doc. Each door only spells a value (a flag's text, a JSON value,
// a keyword) and hands it to SetDumpSetting; every default, bound and rule (the causal
// profile with the summary, the SM clock override, the threads a Mosaic load uses) is decided
// here, once, by MakeDumpRequest and LoadSettingsFor.
//
//   DumpSettings settings;
//   RETURN_IF_ERROR(SetDumpSetting(settings, "output", std::string("gemm.pftrace"), "output"));
//   RETURN_IF_ERROR(SetDumpSetting(settings, "summary", true, "summary"));
//   ASSIGN_OR_RETURN(DumpRequest request, MakeDumpRequest(settings, {}));
//   ASSIGN_OR_RETURN(LoadedDump loaded, LoadForDump(prefix, settings.sm_clock_khz,
//                                                   settings.threads, /*in_place=*/true));
//   DumpOutcome outcome = DumpLoadedToFiles(loaded, request);
//
// Thread-safety: reentrant; the spec table is immutable.
#ifndef WARPTRACE_PROFILER_FRONTEND_DUMP_SETTINGS_H_
#define WARPTRACE_PROFILER_FRONTEND_DUMP_SETTINGS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/imports/mosaic_import.h"

namespace warptrace {

// Field defaults are the table's (DumpSettingSpecs; a test holds them equal).
struct DumpSettings {
  std::string output;          // the trace file ("-": stdout)
  int output_fd = -1;          // C API: an open descriptor instead
  bool output_memory = false;  // C API: the trace returned in memory
  std::string format;          // "perfetto" | "json" | "" (from the output's extension)
  std::string events = "x";    // Chrome event style: x | be | mosaic
  std::string json_args = "lean";
  bool mosaic_overhead = true;
  uint64_t mosaic_clock_khz = 0;
  std::string report;           // the verdict report's path
  std::string analysis_output;  // the analysis JSON's path (the CLI's --analysis)
  bool summary = false;
  bool analysis = false;        // the analysis in the outcome (implied by analysis_output)
  bool causal_profile = true;   // with the summary or the analysis
  bool allow_truncated = false;
  bool compensate_overhead = false;
  uint64_t sm_clock_khz = 0;    // 0: the layout's (warptrace) / Mosaic's default
  int threads = 0;              // 0: the cores there are
  friend bool operator==(const DumpSettings&, const DumpSettings&) = default;
};

enum class SettingType { kString, kBool, kInteger };

// The DumpSettings field a setting sets (its type matches the spec's SettingType).
using DumpSettingField = std::variant<std::string DumpSettings::*, bool DumpSettings::*,
                                      int DumpSettings::*, uint64_t DumpSettings::*>;

struct DumpSettingSpec {
  absl::string_view key;       // the C API's JSON key and python's keyword
  absl::string_view cli_flag;  // `warptrace dump --<cli_flag>`; empty: not on the CLI
  SettingType type;
  absl::string_view default_text;  // as a user would write it: "x", "true", "0", ""
  int64_t min = 0;                // kInteger's bounds, inclusive
  int64_t max = 0;
  absl::string_view doc;
  DumpSettingField field;
};

// Every setting, in the order the docs list them. DumpSettings' field defaults equal
// default_text (dump_settings_test holds them so).
inline constexpr std::array<DumpSettingSpec, 17> kDumpSettingSpecs = {{
    {"output", "output", SettingType::kString, "", 0, 0,
     "the trace file to write (open in ui.perfetto.dev; JSON also in chrome://tracing); '-' "
     "for stdout",
     &DumpSettings::output},
    {"output_fd", "", SettingType::kInteger, "-1", 0, 0x7FFFFFFF,
     "an open file descriptor to write the trace to instead (written in place, left open)",
     &DumpSettings::output_fd},
    {"output_memory", "", SettingType::kBool, "false", 0, 0, "return the trace in memory instead",
     &DumpSettings::output_memory},
    {"format", "format", SettingType::kString, "", 0, 0,
     "output format: 'perfetto' (Perfetto protobuf trace) or 'json' (Chrome trace JSON); "
     "default: from the output's extension (.pftrace or .perfetto-trace: perfetto, "
     "otherwise json)",
     &DumpSettings::format},
    {"events", "events", SettingType::kString, "x", 0, 0,
     "Chrome event style: 'x' (complete events), 'be' (begin/end pairs) or 'mosaic' "
     "(exactly the events of JAX Mosaic GPU's own dump)",
     &DumpSettings::events},
    {"json_args", "json_args", SettingType::kString, "lean", 0, 0,
     "Chrome trace slice args: 'lean' (none: block and unit are the thread's; site, kind "
     "and origin once per site in otherData) or 'full' (all of them on every slice)",
     &DumpSettings::json_args},
    {"mosaic_overhead", "mosaic_overhead", SettingType::kBool, "true", 0, 0,
     "events 'mosaic': subtract Mosaic's profiling-overhead estimate, as Mosaic does",
     &DumpSettings::mosaic_overhead},
    {"mosaic_clock_khz", "mosaic_clock_khz", SettingType::kInteger, "0", 0, 0xFFFFFFFFLL,
     "events 'mosaic': 0 counts a cycle as 1 ns (Mosaic's convention); N converts cycles at "
     "N kHz instead (calibrated: not Mosaic's numbers)",
     &DumpSettings::mosaic_clock_khz},
    {"report", "report", SettingType::kString, "", 0, 0,
     "write the per-unit verdict report (JSON) here, also when verification fails",
     &DumpSettings::report},
    {"analysis_output", "analysis", SettingType::kString, "", 0, 0,
     "write the analysis (waiting vs working, critical path, grid, overhead, diagnosis) as "
     "JSON here",
     &DumpSettings::analysis_output},
    {"summary", "summary", SettingType::kBool, "false", 0, 0,
     "the per-region summary table and the diagnosis (ranked findings)",
     &DumpSettings::summary},
    {"analysis", "", SettingType::kBool, "false", 0, 0,
     "compute the analysis (implied by analysis_output)",
     &DumpSettings::analysis},
    {"causal_profile", "causal_profile", SettingType::kBool, "true", 0, 0,
     "the causal profile (each region's predicted kernel speedup at 10/25/50/100% faster) "
     "under the summary's diagnosis and in the analysis (false leaves it out)",
     &DumpSettings::causal_profile},
    {"allow_truncated", "allow_truncated", SettingType::kBool, "false", 0, 0,
     "keep each broken unit's valid prefix, close its open regions and report the problems "
     "as warnings instead of failing",
     &DumpSettings::allow_truncated},
    {"compensate_overhead", "compensate_overhead", SettingType::kBool, "false", 0, 0,
     "move events earlier by the measured per-event recording overhead",
     &DumpSettings::compensate_overhead},
    {"sm_clock_khz", "sm_clock_khz", SettingType::kInteger, "0", 0, 0xFFFFFFFFLL,
     "SM clock in kHz: the rate for Mosaic GPU buffers, which record none (default "
     "1980000), or the nominal fallback rate for warptrace buffers (default: the "
     "sidecar's)",
     &DumpSettings::sm_clock_khz},
    {"threads", "threads", SettingType::kInteger, "0", 0, 4096,
     "threads to use, the calling one included (0: the cores there are; 1: everything on "
     "one thread); the output is the same either way",
     &DumpSettings::threads},
}};

// The doc and default of `key`, at compile time (the CLI's flag declarations use them); a
// key not in the table does not compile.
constexpr const DumpSettingSpec& DumpSettingSpecOf(absl::string_view key) {
  for (const DumpSettingSpec& spec : kDumpSettingSpecs) {
    if (spec.key == key) return spec;
  }
  throw "not a dump setting";  // at compile time: an error naming this line
}
constexpr absl::string_view DumpSettingDoc(absl::string_view key) {
  return DumpSettingSpecOf(key).doc;
}
constexpr bool DumpSettingBoolDefault(absl::string_view key) {
  return DumpSettingSpecOf(key).default_text == "true";
}
constexpr int64_t DumpSettingIntDefault(absl::string_view key) {
  int64_t v = 0;
  absl::string_view text = DumpSettingSpecOf(key).default_text;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  for (char c : text) v = v * 10 + (c - '0');
  return negative ? -v : v;
}

absl::Span<const DumpSettingSpec> DumpSettingSpecs();
// The table as JSON, the C API's warptrace_dump_settings: [{"key", "type", "default", "min",
// "max", "cli_flag", "doc"}, ...].
std::string DumpSettingsJson();
// The spec of `key`, or nullptr.
const DumpSettingSpec* FindDumpSetting(absl::string_view key);
// "output, output_fd, ...": the keys, for "known: ..." messages.
std::string DumpSettingKeys();

// std::monostate: a value of no setting's type (a JSON null or array), refused by every one.
using SettingValue = std::variant<std::monostate, bool, int64_t, std::string>;

// Sets `key` to `value`. `spelled` names it in errors as the caller's user wrote it
// ("--threads", "the dump request's \"threads\"", "dump(threads=...)"). InvalidArgument: an
// unknown key (listing the known ones), a value of the wrong type or out of bounds (naming
// what is expected, from the spec).
absl::Status SetDumpSetting(DumpSettings& settings, absl::string_view key,
                            const SettingValue& value, absl::string_view spelled);
// A value as a CLI flag's text: kBool "true/false/1/0/yes/no" (any case), kInteger a decimal
// number, kString as is. InvalidArgument naming `spelled` and what is expected.
absl::StatusOr<SettingValue> ParseSettingText(const DumpSettingSpec& spec,
                                              absl::string_view text, absl::string_view spelled);

// How each door names its outputs in errors, by setting key ("output" -> "--output").
using SettingSpelling = std::function<std::string(absl::string_view key)>;

// The DumpRequest the settings ask for. The trace output is settings.output (a path),
// output_fd, or `memory` when output_memory (the caller's stream). The rules, decided here
// only: the causal profile comes with the summary or the analysis (asked, or implied by
// analysis_output) unless causal_profile is false; the trace format is `format`, else the
// output's extension. InvalidArgument: a bad format, event style or args name (naming the
// setting as `spelling` spells it), or more than one of output, output_fd, output_memory.
absl::StatusOr<DumpRequest> MakeDumpRequest(const DumpSettings& settings,
                                            const SettingSpelling& spelling,
                                            llvm::raw_ostream* memory = nullptr);

// The settings' SM clock applied to a layout the caller already holds (an in-memory
// buffer's): sm_clock_khz, when not 0, is its nominal rate, as LoadForDump does for a saved
// warptrace trace.
void ApplyClockSetting(const DumpSettings& settings, TraceLayout& layout);
// The Mosaic importer's options for a buffer the caller holds: sm_clock_khz, when not 0, is
// the rate its cycles convert at (LoadForDump applies the same to a saved one); `threads`.
MosaicImportOptions MosaicImportOptionsFor(const DumpSettings& settings);

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_FRONTEND_DUMP_SETTINGS_H_
