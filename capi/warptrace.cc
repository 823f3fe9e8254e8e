// The C API (warptrace.h) over the dump front end (profiler/frontend/dump_files.h): requests
// parsed from JSON, outcomes written as JSON, statuses turned into codes and messages. No
// exception leaves a function: each body runs under Guard, which turns one into
// WARPTRACE_INTERNAL (or WARPTRACE_RESOURCE_EXHAUSTED "out of memory: ..." for std::bad_alloc
// and a thread that could not start: base/exception_status.h).
#include "capi/warptrace.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/enum_table.h"
#include "base/exception_status.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "capi/error.h"
#include "capi/request.h"
#include "format/layout.h"
#include "format/layout_json.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/analysis/analysis_json.h"
#include "profiler/analysis/diff.h"
#include "profiler/analysis/summary.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/frontend/dump_settings.h"
#include "profiler/frontend/whatif_files.h"
#include "profiler/imports/mosaic_import.h"
#include "profiler/imports/sidecar.h"
#include "profiler/outputs/chrome_trace_options.h"
#include "profiler/trace/verify.h"

struct warptrace_layout {
  warptrace::TraceLayout layout;
};

namespace warptrace {
namespace {

constexpr char kVersion[] = "0.2.0";

constexpr EnumTable<warptrace_code, 17> kCodeNames{"status code", {{
    {WARPTRACE_OK, "OK"},
    {WARPTRACE_CANCELLED, "CANCELLED"},
    {WARPTRACE_UNKNOWN, "UNKNOWN"},
    {WARPTRACE_INVALID_ARGUMENT, "INVALID_ARGUMENT"},
    {WARPTRACE_DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED"},
    {WARPTRACE_NOT_FOUND, "NOT_FOUND"},
    {WARPTRACE_ALREADY_EXISTS, "ALREADY_EXISTS"},
    {WARPTRACE_PERMISSION_DENIED, "PERMISSION_DENIED"},
    {WARPTRACE_RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED"},
    {WARPTRACE_FAILED_PRECONDITION, "FAILED_PRECONDITION"},
    {WARPTRACE_ABORTED, "ABORTED"},
    {WARPTRACE_OUT_OF_RANGE, "OUT_OF_RANGE"},
    {WARPTRACE_UNIMPLEMENTED, "UNIMPLEMENTED"},
    {WARPTRACE_INTERNAL, "INTERNAL"},
    {WARPTRACE_UNAVAILABLE, "UNAVAILABLE"},
    {WARPTRACE_DATA_LOSS, "DATA_LOSS"},
    {WARPTRACE_UNAUTHENTICATED, "UNAUTHENTICATED"},
}}};
static_assert(kCodeNames.Covers(17));


warptrace_code Fail(const absl::Status& status, warptrace_error** error) {
  const auto code = static_cast<warptrace_code>(static_cast<int>(status.code()));
  if (error != nullptr) {
    *error = new (std::nothrow) warptrace_error{code, std::string(status.message())};
  }
  return code;
}

// Runs `body`; an exception becomes an error instead of crossing into C.
warptrace_code Guard(warptrace_error** error, const std::function<absl::Status()>& body) {
  if (error != nullptr) *error = nullptr;
  try {
    const absl::Status status = body();
    return status.ok() ? WARPTRACE_OK : Fail(status, error);
  } catch (...) {
    // Out of memory (std::bad_alloc, a thread that could not start) is RESOURCE_EXHAUSTED
    // "out of memory: ..."; anything else INTERNAL.
    return Fail(StatusOfCurrentException(), error);
  }
}

absl::Status Required(const void* p, absl::string_view what) {
  if (p != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " is NULL"));
}

// A malloc'd copy (freed with warptrace_free).
char* CopyString(absl::string_view s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

absl::StatusOr<absl::Span<const uint32_t>> Words(const void* buffer, size_t bytes) {
  if (bytes == 0) return absl::Span<const uint32_t>();
  if (buffer == nullptr) return absl::InvalidArgumentError("the buffer is NULL");
  if (bytes % 4 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the buffer has ", bytes, " bytes, not a whole number of 32-bit words"));
  }
  if (reinterpret_cast<uintptr_t>(buffer) % alignof(uint32_t) != 0) {
    return absl::InvalidArgumentError(
        "the buffer's memory is not 4-byte aligned: pass an aligned copy");
  }
  return absl::Span<const uint32_t>(static_cast<const uint32_t*>(buffer), bytes / 4);
}

using capi_internal::ParseObject;
using capi_internal::ParseRequest;
using capi_internal::Request;
using capi_internal::WrongType;

// ---- the dump ---------------------------------------------------------------------------

// What one dump produced, for the result JSON.
struct Dumped {
  TraceLayout layout;
  std::vector<MosaicOverflow> overflows;
  DumpOutcome outcome;
  TraceFormat format = TraceFormat::kChromeJson;
  std::string trace;  // "output_memory"
};

// warptrace_set_cancel_check's, per thread.
struct CancelCheck {
  int (*check)(void*) = nullptr;
  void* data = nullptr;
};
thread_local CancelCheck cancel_check;

std::function<bool()> CancelledFn() {
  const CancelCheck c = cancel_check;
  if (c.check == nullptr) return nullptr;
  return [c] { return c.check(c.data) != 0; };
}

// `decoded`, when not null, is the buffer already decoded (a Mosaic buffer decoded in place),
// and `words` are not read.
absl::Status Dump(const Request& r, Dumped& d, absl::Span<const uint32_t> words,
                  const DecodedTrace* decoded = nullptr, bool mosaic_bounds_check = false) {
  llvm::raw_string_ostream memory(d.trace);
  ASSIGN_OR_RETURN(DumpRequest request, MakeDumpRequest(r, nullptr, &memory));
  ASSIGN_OR_RETURN(d.format, ChooseTraceFormat(r.format, r.output));
  request.cancelled = CancelledFn();
  if (mosaic_bounds_check) request = WithMosaicBoundsCheck(std::move(request));
  d.outcome = decoded != nullptr ? DumpDecodedToFiles(*decoded, request)
                                 : DumpToFiles(d.layout, words, request);
  memory.flush();
  absl::Status status = d.outcome.status;
  if (!status.ok() && !d.overflows.empty()) {
    // The importer's lines name the entries_per_warpgroup that fits; verify's name events.
    std::string lines;
    for (const MosaicOverflow& o : d.overflows) absl::StrAppend(&lines, o.message, "\n");
    status = absl::Status(status.code(), absl::StrCat(lines, status.message()));
  }
  return status;
}

void Dim(llvm::json::OStream& j, const Dim3& d) {
  j.array([&] {
    j.value(static_cast<int64_t>(d.x));
    j.value(static_cast<int64_t>(d.y));
    j.value(static_cast<int64_t>(d.z));
  });
}

std::string ResultJson(const Dumped& d, const absl::Status& status) {
  const DumpOutcome& o = d.outcome;
  const VerifyReport& report = o.result.report;
  const TraceLayout& l = d.layout;
  std::string text;
  llvm::raw_string_ostream os(text);
  os.SetBufferSize(size_t{1} << 16);  // one append per 64 KiB, not one per JSON token
  llvm::json::OStream j(os);
  j.object([&] {
    j.attribute("ok", status.ok());
    j.attribute("decoded", o.result.decoded);
    j.attributeArray("written", [&] {
      for (const std::string& path : o.written) j.value(ValidUtf8(path));
    });
    j.attribute("format", d.format == TraceFormat::kPerfetto ? "perfetto" : "json");
    j.attribute("kernel", ValidUtf8(l.kernel_name));
    j.attributeBegin("grid");
    Dim(j, l.grid);
    j.attributeEnd();
    j.attributeBegin("block");
    Dim(j, l.block);
    j.attributeEnd();
    j.attribute("unit_kind", UnitKindName(l.unit.kind));
    j.attribute("capacity", static_cast<int64_t>(report.capacity));
    j.attribute("required_capacity", static_cast<int64_t>(report.required_capacity()));
    j.attribute("kept_events", static_cast<int64_t>(report.kept_events));
    j.attribute("dropped_events", static_cast<int64_t>(report.dropped_events));
    j.attribute("slices", static_cast<int64_t>(o.result.slices));
    j.attribute("errors", static_cast<int64_t>(report.errors));
    j.attribute("warnings", static_cast<int64_t>(report.warnings));
    j.attribute("clock_note", ValidUtf8(o.result.clock_note));
    j.attributeObject("verdict_counts", [&] {
      for (int v = 0; v < static_cast<int>(report.verdict_counts.size()); ++v) {
        j.attribute(VerdictName(static_cast<Verdict>(v)),
                    static_cast<int64_t>(report.verdict_counts[v]));
      }
    });
    j.attributeArray("units", [&] {
      for (const UnitVerdict& u : report.units) {
        j.object([&] { WriteUnitVerdictJsonMembers(u, l, /*coordinates=*/true, j); });
      }
    });
    j.attributeArray("findings", [&] {
      for (const Finding& f : report.findings) {
        j.object([&] { WriteFindingJsonMembers(f, /*coordinates=*/true, j); });
      }
    });
    j.attributeArray("overflows", [&] {
      for (const MosaicOverflow& m : d.overflows) {
        j.object([&] {
          j.attribute("block", static_cast<int64_t>(m.block_linear));
          j.attributeBegin("block_index");
          Dim(j, m.block_index);
          j.attributeEnd();
          j.attribute("trace", static_cast<int64_t>(m.trace));
          j.attribute("events_attempted", static_cast<int64_t>(m.events_attempted));
          j.attribute("events_kept", static_cast<int64_t>(m.events_kept));
          j.attribute("entries_needed", static_cast<int64_t>(m.entries_needed));
          j.attribute("words_past_slice", static_cast<int64_t>(m.words_past_slice));
          j.attribute("bounds_checked", m.bounds_checked);
          j.attribute("entries_needed_exact", m.entries_needed_exact);
          j.attribute("message", ValidUtf8(m.message));
        });
      }
    });
    j.attributeBegin("summary");
    if (o.summary.has_value()) {
      WriteSummaryJson(*o.summary, j);
    } else {
      j.value(nullptr);
    }
    j.attributeEnd();
    std::string summary_text;
    {
      llvm::raw_string_ostream s(summary_text);
      PrintSummaryAndDiagnosis(o, s);
    }
    j.attribute("summary_text", ValidUtf8(summary_text));
    j.attributeBegin("analysis");
    if (o.analysis.has_value()) {
      j.rawValue([&](llvm::raw_ostream& out) { WriteAnalysisJson(*o.analysis, out); });
    } else {
      j.value(nullptr);
    }
    j.attributeEnd();
    j.attributeBegin("report");
    if (o.result.decoded) {
      j.rawValue([&](llvm::raw_ostream& out) { WriteVerifyReportJson(report, l, out); });
    } else {
      j.value(nullptr);
    }
    j.attributeEnd();
  });
  os.flush();
  return text;
}

// The dump's status, with the result JSON set whenever the buffer decoded (or it succeeded),
// and the trace bytes for "output_memory".
absl::Status Finish(const absl::Status& status, const Dumped& d, const Request& r,
                    char** result, void** trace, size_t* trace_bytes) {
  if (status.ok() || d.outcome.result.decoded) *result = CopyString(ResultJson(d, status));
  if (r.output_memory && status.ok()) {
    *trace = CopyString(d.trace);
    *trace_bytes = d.trace.size();
  }
  return status;
}

absl::Status CheckOutputs(char** result, const Request& r, void** trace, size_t* trace_bytes) {
  RETURN_IF_ERROR(Required(result, "result"));
  *result = nullptr;
  if (r.output_memory) {
    if (trace == nullptr || trace_bytes == nullptr) {
      return absl::InvalidArgumentError(
          "the dump request asks for \"output_memory\" but trace or trace_bytes is NULL: use "
          "warptrace_dump_ex with both");
    }
  }
  if (trace != nullptr) *trace = nullptr;
  if (trace_bytes != nullptr) *trace_bytes = 0;
  return absl::OkStatus();
}

absl::Status DumpLayout(const warptrace_layout* layout, const void* buffer, size_t bytes,
                        const char* request_json, char** result, void** trace,
                        size_t* trace_bytes) {
  RETURN_IF_ERROR(Required(layout, "layout"));
  ASSIGN_OR_RETURN(const Request r, ParseRequest(request_json));
  RETURN_IF_ERROR(CheckOutputs(result, r, trace, trace_bytes));
  ASSIGN_OR_RETURN(const absl::Span<const uint32_t> words, Words(buffer, bytes));
  Dumped d;
  d.layout = layout->layout;
  ApplyClockSetting(r, d.layout);
  return Finish(Dump(r, d, words), d, r, result, trace, trace_bytes);
}

}  // namespace
}  // namespace warptrace

using warptrace::Guard;
using warptrace::Required;

extern "C" {

const char* warptrace_version(void) { return warptrace::kVersion; }
int warptrace_c_api_version(void) { return WARPTRACE_C_API_VERSION; }

warptrace_code warptrace_error_code(const warptrace_error* error) {
  return error == nullptr ? WARPTRACE_OK : error->code;
}

const char* warptrace_error_message(const warptrace_error* error) {
  return error == nullptr ? "" : error->message.c_str();
}

const char* warptrace_code_name(warptrace_code code) {
  return warptrace::kCodeNames.Name(code, "UNKNOWN");
}

void warptrace_error_free(warptrace_error* error) { delete error; }

void warptrace_free(void* p) { std::free(p); }

warptrace_code warptrace_layout_from_json(const char* json, size_t size,
                                          warptrace_layout** layout, warptrace_error** error) {
  return Guard(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(Required(layout, "layout"));
    *layout = nullptr;
    if (json == nullptr && size != 0) return Required(json, "json");
    ASSIGN_OR_RETURN(warptrace::TraceLayout parsed,
                     warptrace::ParseLayoutJson(absl::string_view(json == nullptr ? "" : json,
                                                                   size)));
    *layout = new warptrace_layout{std::move(parsed)};
    return absl::OkStatus();
  });
}

warptrace_code warptrace_layout_load(const char* path, warptrace_layout** layout,
                                     warptrace_error** error) {
  return Guard(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(Required(layout, "layout"));
    *layout = nullptr;
    RETURN_IF_ERROR(Required(path, "path"));
    ASSIGN_OR_RETURN(const std::string json,
                     warptrace::ReadFile(path, {.role = "trace sidecar"}));
    absl::StatusOr<warptrace::TraceLayout> parsed = warptrace::ParseLayoutJson(json);
    if (!parsed.ok()) {
      return absl::Status(parsed.status().code(),
                          absl::StrCat(path, ": ", parsed.status().message()));
    }
    *layout = new warptrace_layout{*std::move(parsed)};
    return absl::OkStatus();
  });
}

warptrace_code warptrace_layout_to_json(const warptrace_layout* layout, char** json,
                                        warptrace_error** error) {
  return Guard(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(Required(json, "json"));
    *json = nullptr;
    RETURN_IF_ERROR(Required(layout, "layout"));
    std::string text;
    llvm::raw_string_ostream os(text);
    warptrace::WriteLayoutJson(layout->layout, os);
    os.flush();
    *json = warptrace::CopyString(text);
    return absl::OkStatus();
  });
}

uint64_t warptrace_layout_buffer_bytes(const warptrace_layout* layout) {
  return layout == nullptr ? 0 : warptrace::BufferBytes(layout->layout);
}

void warptrace_layout_free(warptrace_layout* layout) { delete layout; }

warptrace_code warptrace_dump(const warptrace_layout* layout, const void* buffer, size_t bytes,
                              const char* request, char** result, warptrace_error** error) {
  return Guard(error, [&] {
    return warptrace::DumpLayout(layout, buffer, bytes, request, result, nullptr, nullptr);
  });
}

warptrace_code warptrace_dump_ex(const warptrace_layout* layout, const void* buffer,
                                 size_t bytes, const char* request, char** result,
                                 void** trace, size_t* trace_bytes, warptrace_error** error) {
  return Guard(error, [&] {
    return warptrace::DumpLayout(layout, buffer, bytes, request, result, trace, trace_bytes);
  });
}

void warptrace_set_cancel_check(int (*check)(void* data), void* data) {
  warptrace::cancel_check = {check, data};
}

char* warptrace_dump_settings(void) {
  try {
    return warptrace::CopyString(warptrace::DumpSettingsJson());
  } catch (...) {
    return nullptr;  // out of memory
  }
}

warptrace_code warptrace_dump_prefix(const char* prefix, const char* request, char** result,
                                     warptrace_error** error) {
  return Guard(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(Required(prefix, "prefix"));
    ASSIGN_OR_RETURN(const warptrace::Request r, warptrace::ParseRequest(request));
    RETURN_IF_ERROR(warptrace::CheckOutputs(result, r, nullptr, nullptr));
    // A Mosaic buffer is decoded where it lies (no converted copy).
    ASSIGN_OR_RETURN(warptrace::LoadedDump loaded,
                     warptrace::LoadForDump(prefix, r.sm_clock_khz, r.threads, /*in_place=*/true));
    warptrace::Dumped d;
    d.layout = std::move(loaded.trace.layout);
    d.overflows = std::move(loaded.overflows);
    const warptrace::DecodedTrace* decoded =
        loaded.in_place != nullptr ? &loaded.in_place->decoded : nullptr;
    return warptrace::Finish(
        warptrace::Dump(r, d, loaded.trace.words, decoded, loaded.mosaic_bounds_check), d, r,
        result, nullptr, nullptr);
  });
}

warptrace_code warptrace_dump_mosaic(const char* spec, const void* buffer, size_t bytes,
                                     const char* request, char** result, void** trace,
                                     size_t* trace_bytes, warptrace_error** error) {
  return Guard(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(Required(spec, "spec"));
    ASSIGN_OR_RETURN(const warptrace::Request r, warptrace::ParseRequest(request));
    RETURN_IF_ERROR(warptrace::CheckOutputs(result, r, trace, trace_bytes));
    ASSIGN_OR_RETURN(const warptrace::MosaicSidecar sidecar,
                     warptrace::ParseMosaicSidecar(spec));
    ASSIGN_OR_RETURN(const absl::Span<const uint32_t> words, warptrace::Words(buffer, bytes));
    const warptrace::MosaicImportOptions options = warptrace::MosaicImportOptionsFor(r);
    // Decoded where it lies: the events are read from the caller's buffer, not a copy.
    warptrace::Dumped d;
    ASSIGN_OR_RETURN(d.layout, warptrace::MosaicTraceLayout(sidecar, options));
    warptrace::DecodedTrace decoded;
    RETURN_IF_ERROR(
        warptrace::DecodeMosaicBuffer(sidecar, d.layout, words, decoded, d.overflows));
    return warptrace::Finish(warptrace::Dump(r, d, {}, &decoded, sidecar.bounds_check), d, r,
                             result, trace, trace_bytes);
  });
}

}  // extern "C"

// C++ helpers of the diff entry points below: outside extern "C" (they return C++ types).
namespace warptrace {
namespace {

// warptrace_diff of two saved traces.
absl::StatusOr<TraceDiff> DiffSaved(const char* before, const char* after, bool compensate) {
  RETURN_IF_ERROR(Required(after, "after"));
  DiffCollector collectors[2];
  const char* prefixes[2] = {before, after};
  const char* sides[2] = {"before", "after"};
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<LoadedDump> loaded = LoadForDump(prefixes[i], 0, 1, /*in_place=*/true);
    absl::Status status = loaded.status();
    if (status.ok()) {
      DumpRequest request;
      request.timeline.compensate_overhead = compensate;
      for (TraceSink* sink : collectors[i].sinks()) request.sinks.push_back(sink);
      status = DumpLoadedToFiles(*loaded, request).status;
    }
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat(sides[i], "=", prefixes[i], ": ",
                                                      status.message()));
    }
  }
  return DiffTraces(collectors[0], collectors[1]);
}

// warptrace_diff of a saved trace against its what-if prediction (`diff --what-if`).
absl::StatusOr<TraceDiff> DiffPredicted(const char* before, const char* after,
                                        const std::string& what_if, bool compensate) {
  if (after != nullptr && after[0] != '\0') {
    return absl::InvalidArgumentError(
        "warptrace_diff with \"what_if\": the prediction is the after side; pass no after");
  }
  ASSIGN_OR_RETURN(LoadedDump loaded, LoadForDump(before, 0));
  WhatIfRequest request;
  request.speedups = {what_if};
  request.timeline.compensate_overhead = compensate;
  request.causal_profile = false;
  request.diff = true;
  WhatIfOutcome outcome = WhatIfToFiles(loaded.trace.layout, loaded.trace.words, request);
  if (!outcome.status.ok()) {
    return absl::Status(outcome.status.code(),
                        absl::StrCat("before=", before, ": ", outcome.status.message()));
  }
  return *std::move(outcome.diff);
}

}  // namespace
}  // namespace warptrace

extern "C" {

warptrace_code warptrace_diff(const char* before, const char* after, const char* options,
                              char** result, warptrace_error** error) {
  return Guard(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(Required(result, "result"));
    *result = nullptr;
    RETURN_IF_ERROR(Required(before, "before"));
    ASSIGN_OR_RETURN(const llvm::json::Object object,
                     warptrace::ParseObject(options, "diff options"));
    bool compensate = false;
    llvm::Optional<int64_t> rows;
    std::string what_if;
    for (const auto& [key, value] : object) {
      if (key == "what_if") {
        llvm::Optional<llvm::StringRef> spec = value.getAsString();
        if (!spec) return warptrace::WrongType("diff options", key.str(), "a string");
        what_if = spec->str();
      } else if (key == "compensate_overhead") {
        llvm::Optional<bool> b = value.getAsBoolean();
        if (!b) return warptrace::WrongType("diff options", key.str(), "true or false");
        compensate = *b;
      } else if (key == "rows") {
        rows = value.getAsInteger();
        if (!rows || *rows < 0) {
          return warptrace::WrongType("diff options", key.str(), "an integer >= 0");
        }
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "the diff options have an unknown key \"", key.str(),
            "\"; known: what_if, compensate_overhead, rows"));
      }
    }
    ASSIGN_OR_RETURN(const warptrace::TraceDiff diff,
                     what_if.empty() ? warptrace::DiffSaved(before, after, compensate)
                                     : warptrace::DiffPredicted(before, after, what_if,
                                                                compensate));
    std::string table;
    {
      llvm::raw_string_ostream os(table);
      warptrace::PrintTraceDiff(diff, os, rows.hasValue() ? static_cast<size_t>(*rows)
                                                           : diff.rows.size());
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::json::OStream j(os);
    j.object([&] {
      j.attribute("table", warptrace::ValidUtf8(table));
      j.attributeBegin("diff");
      j.rawValue([&](llvm::raw_ostream& out) { warptrace::WriteTraceDiffJson(diff, out); });
      j.attributeEnd();
    });
    os.flush();
    *result = warptrace::CopyString(text);
    return absl::OkStatus();
  });
}

warptrace_code warptrace_what_if(const char* prefix, const char* request, char** result,
                                 warptrace_error** error) {
  return Guard(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(Required(result, "result"));
    *result = nullptr;
    RETURN_IF_ERROR(Required(prefix, "prefix"));
    ASSIGN_OR_RETURN(const llvm::json::Object object,
                     warptrace::ParseObject(request, "what-if request"));
    warptrace::WhatIfRequest r;
    std::string output;
    for (const auto& [key, value] : object) {
      if (key == "speedups") {
        const llvm::json::Array* specs = value.getAsArray();
        if (specs == nullptr) {
          return warptrace::WrongType("what-if request", key.str(), "a list of strings");
        }
        for (const llvm::json::Value& spec : *specs) {
          llvm::Optional<llvm::StringRef> text = spec.getAsString();
          if (!text) return warptrace::WrongType("what-if request", key.str(), "a list of strings");
          r.speedups.push_back(text->str());
        }
      } else if (key == "causal_profile") {
        llvm::Optional<bool> b = value.getAsBoolean();
        if (!b) return warptrace::WrongType("what-if request", key.str(), "true or false");
        r.causal_profile = *b;
      } else if (key == "output" || key == "json") {
        llvm::Optional<llvm::StringRef> text = value.getAsString();
        if (!text) return warptrace::WrongType("what-if request", key.str(), "a string");
        (key == "json" ? r.json_path : output) = text->str();
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "the what-if request has an unknown key \"", key.str(),
            "\"; known: speedups, causal_profile, output, json"));
      }
    }
    if (r.speedups.empty()) {
      return absl::InvalidArgumentError(
          "the what-if request has no \"speedups\": give e.g. [\"consumer:mma=0.5\"]");
    }
    if (!output.empty()) {
      ASSIGN_OR_RETURN(const warptrace::TraceFormat format,
                       warptrace::ChooseTraceFormat("", output));
      (format == warptrace::TraceFormat::kPerfetto ? r.perfetto_path : r.chrome_path) = output;
    }
    ASSIGN_OR_RETURN(warptrace::LoadedDump loaded, warptrace::LoadForDump(prefix, 0));
    const warptrace::WhatIfOutcome outcome =
        warptrace::WhatIfToFiles(loaded.trace.layout, loaded.trace.words, r);
    RETURN_IF_ERROR(outcome.status);
    *result = warptrace::CopyString(outcome.json);
    return absl::OkStatus();
  });
}

}  // extern "C"
