#include "profiler/frontend/dump_settings.h"

#include <array>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/imports/mosaic_import.h"
#include "profiler/outputs/chrome_trace_options.h"

namespace warptrace {
namespace {

using T = SettingType;

static_assert(kMosaicDefaultSmClockKhz == 1'980'000,
              "keep sm_clock_khz's doc in step with the Mosaic importer's default");

std::string Expected(const DumpSettingSpec& spec) {
  switch (spec.type) {
    case T::kString:
      return "a string";
    case T::kBool:
      return "true or false";
    case T::kInteger:
      return absl::StrCat("an integer from ", spec.min, " to ", spec.max);
  }
  return "";
}

// The value as the user wrote it, for messages: 17, true, "x", or a type's name.
std::string Shown(const SettingValue& value) {
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const int64_t* i = std::get_if<int64_t>(&value)) return absl::StrCat(*i);
  if (const std::string* s = std::get_if<std::string>(&value)) return absl::StrCat("\"", *s, "\"");
  return "null";
}

absl::Status Wrong(const DumpSettingSpec& spec, absl::string_view spelled,
                   const SettingValue& value) {
  return absl::InvalidArgumentError(absl::StrCat(spelled, " must be ", Expected(spec), ", not ",
                                                 Shown(value), " (", spec.doc, ")"));
}

}  // namespace

absl::Span<const DumpSettingSpec> DumpSettingSpecs() { return kDumpSettingSpecs; }

const DumpSettingSpec* FindDumpSetting(absl::string_view key) {
  for (const DumpSettingSpec& spec : kDumpSettingSpecs) {
    if (spec.key == key) return &spec;
  }
  return nullptr;
}

std::string DumpSettingKeys() {
  std::string out;
  for (const DumpSettingSpec& spec : kDumpSettingSpecs) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", spec.key);
  }
  return out;
}

std::string DumpSettingsJson() {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os);
  j.array([&] {
    for (const DumpSettingSpec& spec : kDumpSettingSpecs) {
      j.object([&] {
        j.attribute("key", llvm::StringRef(spec.key.data(), spec.key.size()));
        j.attribute("type", spec.type == T::kString ? "string"
                            : spec.type == T::kBool ? "bool"
                                                    : "integer");
        j.attribute("default",
                    llvm::StringRef(spec.default_text.data(), spec.default_text.size()));
        j.attribute("min", spec.min);
        j.attribute("max", spec.max);
        j.attribute("cli_flag", llvm::StringRef(spec.cli_flag.data(), spec.cli_flag.size()));
        j.attribute("doc", llvm::StringRef(spec.doc.data(), spec.doc.size()));
      });
    }
  });
  os.flush();
  return text;
}

absl::Status SetDumpSetting(DumpSettings& settings, absl::string_view key,
                            const SettingValue& value, absl::string_view spelled) {
  const DumpSettingSpec* spec = FindDumpSetting(key);
  if (spec == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(spelled, " is not a dump setting; known: ",
                                                   DumpSettingKeys()));
  }
  switch (spec->type) {
    case T::kString:
      if (!std::holds_alternative<std::string>(value)) return Wrong(*spec, spelled, value);
      settings.*std::get<std::string DumpSettings::*>(spec->field) = std::get<std::string>(value);
      return absl::OkStatus();
    case T::kBool:
      if (!std::holds_alternative<bool>(value)) return Wrong(*spec, spelled, value);
      settings.*std::get<bool DumpSettings::*>(spec->field) = std::get<bool>(value);
      return absl::OkStatus();
    case T::kInteger: {
      if (!std::holds_alternative<int64_t>(value)) return Wrong(*spec, spelled, value);
      const int64_t v = std::get<int64_t>(value);
      if (v < spec->min || v > spec->max) return Wrong(*spec, spelled, value);
      // Within the spec's bounds, which fit the field's type (int or uint64_t).
      if (const auto* i = std::get_if<int DumpSettings::*>(&spec->field)) {
        settings.**i = static_cast<int>(v);
      } else {
        settings.*std::get<uint64_t DumpSettings::*>(spec->field) = static_cast<uint64_t>(v);
      }
      return absl::OkStatus();
    }
  }
  return Wrong(*spec, spelled, value);
}

absl::StatusOr<SettingValue> ParseSettingText(const DumpSettingSpec& spec, absl::string_view text,
                                              absl::string_view spelled) {
  switch (spec.type) {
    case T::kString:
      return SettingValue(std::string(text));
    case T::kBool: {
      const std::string v = absl::AsciiStrToLower(text);
      if (v == "true" || v == "1" || v == "yes") return SettingValue(true);
      if (v == "false" || v == "0" || v == "no") return SettingValue(false);
      break;
    }
    case T::kInteger: {
      int64_t v = 0;
      if (absl::SimpleAtoi(text, &v)) return SettingValue(v);
      break;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(spelled, "=", text, ": expected ", Expected(spec)));
}

absl::StatusOr<DumpRequest> MakeDumpRequest(const DumpSettings& s,
                                            const SettingSpelling& spelling,
                                            llvm::raw_ostream* memory) {
  auto spelled = [&](absl::string_view key) {
    return spelling ? spelling(key) : absl::StrCat("\"", key, "\"");
  };
  auto named = [&](absl::string_view key, const absl::Status& status) {
    return absl::Status(status.code(), absl::StrCat(spelled(key), ": ", status.message()));
  };
  const int targets = !s.output.empty() + (s.output_fd >= 0) + s.output_memory;
  if (targets > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "more than one of ", spelled("output"), ", ", spelled("output_fd"), " and ",
        spelled("output_memory"), " is given: give one"));
  }
  absl::StatusOr<TraceFormat> format = ChooseTraceFormat(s.format, s.output);
  if (!format.ok()) return named("format", format.status());
  absl::StatusOr<ChromeEventStyle> events = ParseChromeEventStyle(s.events);
  if (!events.ok()) return named("events", events.status());
  absl::StatusOr<ChromeSliceArgs> args = ParseChromeSliceArgs(s.json_args);
  if (!args.ok()) return named("json_args", args.status());
  DumpRequest request;
  request.summary = s.summary;
  request.analysis = s.analysis;
  request.causal_profile =
      s.causal_profile && (s.summary || s.analysis || !s.analysis_output.empty());
  request.verify.allow_truncated = s.allow_truncated;
  request.timeline.compensate_overhead = s.compensate_overhead;
  request.threads = s.threads;
  request.report_path = s.report;
  request.analysis_path = s.analysis_output;
  if (spelling) {
    request.report_role = absl::StrCat("verdict report (", spelling("report"), ")");
    request.analysis_role = absl::StrCat("analysis (", spelling("analysis_output"), ")");
  }
  if (targets == 1) {
    TraceOutput& trace = request.traces.emplace_back();
    trace.format = *format;
    trace.path = s.output;
    trace.fd = s.output_fd;
    if (s.output_memory) trace.stream = memory;
    trace.chrome.events = *events;
    trace.chrome.args = *args;
    trace.chrome.mosaic.compensate_overhead = s.mosaic_overhead;
    trace.chrome.mosaic.sm_clock_khz = s.mosaic_clock_khz;
    if (spelling) trace.role = absl::StrCat("trace (", spelling("output"), ")");
  }
  return request;
}

void ApplyClockSetting(const DumpSettings& settings, TraceLayout& layout) {
  if (settings.sm_clock_khz != 0) layout.clock.nominal_sm_clock_khz = settings.sm_clock_khz;
}

MosaicImportOptions MosaicImportOptionsFor(const DumpSettings& settings) {
  MosaicImportOptions options;
  if (settings.sm_clock_khz != 0) options.sm_clock_khz = settings.sm_clock_khz;
  return options;
}

}  // namespace warptrace
