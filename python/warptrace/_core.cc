// _warptrace_core: the extension module of the Python package (python/warptrace). One
// function per Python API, each one call of python/warptrace/api.h with the GIL released;
// the rest is conversion between Python objects and C++ values. Statuses come back as data
// (a (code, message) pair under "error"), never as C++ exceptions: warptrace/__init__.py
// raises them as TraceError, so their type and fields are defined in Python, in one place.
//
// Buffers are taken as nb::ndarray without constraints, so nanobind never converts (copies)
// them: the buffer protocol or DLPack hands over the memory as it is, and Words() checks
// what the dump needs (CPU memory, 32-bit or 8-bit integers, C-contiguous, aligned) with a
// message that says what to change.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "nanobind/nanobind.h"
#include "nanobind/ndarray.h"
#include "nanobind/stl/string.h"
#include "nanobind/stl/vector.h"
#include "python/warptrace/api.h"

namespace nb = nanobind;

namespace warptrace::python {
namespace {

using Array = nb::ndarray<nb::ro>;

nb::object Error(const absl::Status& status) {
  if (status.ok()) return nb::none();
  return nb::make_tuple(absl::StatusCodeToString(status.code()), std::string(status.message()));
}

nb::dict Failure(const absl::Status& status) {
  nb::dict d;
  d["error"] = Error(status);
  return d;
}

// A buffer the dump cannot read in place: `type_error` (not host integer memory: TypeError
// in Python) or else its shape, alignment or size (ValueError).
nb::dict BufferFailure(const absl::Status& status, bool type_error) {
  nb::dict d = Failure(status);
  d["buffer_error"] = type_error ? "type" : "value";
  return d;
}

// The array's memory as uint32 words, or InvalidArgument naming what is wrong with it
// (`type_error` set when it is the device or the dtype).
absl::StatusOr<absl::Span<const uint32_t>> Words(const Array& a, bool& type_error) {
  type_error = true;
  if (a.device_type() != nb::device::cpu::value) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the buffer lives on device type ", a.device_type(),
        " (DLPack), not in host memory: copy it to the host first (e.g. numpy.asarray, "
        "jax.device_get, tensor.cpu())"));
  }
  const nb::dlpack::dtype t = a.dtype();
  const bool integer = t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::UInt) ||
                       t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Int);
  if (!integer || (t.bits != 32 && t.bits != 8) || t.lanes != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the buffer's dtype (code ", t.code, ", ", t.bits, " bits, ", t.lanes,
        " lanes) is not a 32-bit or 8-bit integer: pass the trace words as uint32 "
        "(numpy.uint32, jnp.uint32, torch.int32) or their bytes as uint8"));
  }
  type_error = false;
  const size_t item = t.bits / 8;
  int64_t expected_stride = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expected_stride) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the buffer is not C-contiguous (dimension ", i, " has stride ", a.stride(i),
          " elements, contiguous would be ", expected_stride,
          "): pass a contiguous array (numpy.ascontiguousarray) so it can be read in place"));
    }
    expected_stride *= static_cast<int64_t>(a.shape(i));
  }
  const size_t bytes = a.size() * item;
  if (bytes % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the buffer has ", bytes, " bytes, not a whole number of 32-bit words"));
  }
  const auto* data = static_cast<const uint8_t*>(a.data());
  if (bytes != 0 && reinterpret_cast<uintptr_t>(data) % alignof(uint32_t) != 0) {
    return absl::InvalidArgumentError(
        "the buffer's memory is not 4-byte aligned: pass a copy (numpy.array(buffer))");
  }
  return absl::Span<const uint32_t>(reinterpret_cast<const uint32_t*>(data), bytes / 4);
}

DumpArgs Request(const std::string& output, const std::string& format, bool summary,
                    bool analysis, bool allow_truncated, bool compensate_overhead,
                    uint64_t sm_clock_khz) {
  DumpArgs r;
  r.output = output;
  r.format = format;
  r.summary = summary;
  r.analysis = analysis;
  r.allow_truncated = allow_truncated;
  r.compensate_overhead = compensate_overhead;
  r.sm_clock_khz = sm_clock_khz;
  return r;
}

nb::tuple Dim(const Dim3& d) { return nb::make_tuple(d.x, d.y, d.z); }

nb::dict SummaryDict(const Summary& s) {
  nb::dict d;
  d["kernel"] = s.kernel_name;
  d["device"] = s.device_name;
  d["units"] = s.units;
  d["calibrated_units"] = s.calibrated_units;
  d["nominal_units"] = s.nominal_units;
  d["mean_calibrated_mhz"] = s.mean_calibrated_mhz;
  d["nominal_sm_clock_khz"] = s.nominal_sm_clock_khz;
  d["clock_note"] = s.clock_note;
  d["wall_ns"] = s.wall_ns;
  d["unit_time_ns"] = s.unit_time_ns;
  d["header"] = SummaryHeader(s);
  nb::list rows;
  for (const RegionStats& r : s.regions) {
    nb::dict row;
    row["name"] = r.name;
    row["count"] = r.count;
    row["total_ns"] = r.total_ns;
    row["mean_ns"] = r.mean_ns;
    row["min_ns"] = r.min_ns;
    row["p50_ns"] = r.p50_ns;
    row["p95_ns"] = r.p95_ns;
    row["max_ns"] = r.max_ns;
    row["share"] = r.share;
    rows.append(row);
  }
  d["regions"] = rows;
  return d;
}

nb::dict OutcomeDict(const DumpReply& o) {
  nb::dict d;
  d["error"] = Error(o.status);
  d["decoded"] = o.result.decoded;
  d["perfetto"] = o.perfetto;
  d["written"] = o.written;
  d["slices"] = o.result.slices;
  d["clock_note"] = o.result.clock_note;
  const VerifyReport& report = o.result.report;
  const TraceLayout& l = o.layout;
  d["kernel"] = l.kernel_name;
  d["grid"] = Dim(l.grid);
  d["block"] = Dim(l.block);
  d["unit_kind"] = std::string(UnitKindName(l.unit.kind));
  d["capacity"] = report.capacity;
  d["required_capacity"] = report.required_capacity();
  d["kept_events"] = report.kept_events;
  d["dropped_events"] = report.dropped_events;
  d["errors"] = report.errors;
  d["warnings"] = report.warnings;
  nb::dict counts;
  for (int v = 0; v < static_cast<int>(report.verdict_counts.size()); ++v) {
    counts[VerdictName(static_cast<Verdict>(v))] = report.verdict_counts[v];
  }
  d["verdict_counts"] = counts;
  nb::list units;
  for (const UnitVerdict& u : report.units) {
    const Dim3 b = BlockIndex(l.grid, u.block_linear);
    nb::dict unit;
    unit["record"] = u.record_index;
    unit["block"] = u.block_linear;
    unit["block_index"] = Dim(b);
    unit["unit"] = u.unit_index;
    unit["name"] = UnitName(b, l.unit.kind, u.unit_index);
    unit["verdict"] = VerdictName(u.verdict);
    unit["reason"] = u.reason;
    unit["kept_events"] = u.kept_events;
    unit["dropped"] = u.dropped;
    unit["repaired"] = u.repaired;
    units.append(unit);
  }
  d["units"] = units;
  nb::list findings;
  for (const Finding& f : report.findings) {
    nb::dict finding;
    finding["severity"] = SeverityName(f.severity);
    finding["kind"] = FindingKindName(f.kind);
    finding["record"] = f.record_index;
    finding["block"] = f.block_linear;
    finding["block_index"] = Dim(f.block_index);
    finding["unit"] = f.unit_index;
    finding["event"] = f.event_index < 0 ? nb::object(nb::none()) : nb::object(nb::int_(f.event_index));
    finding["message"] = f.message;
    finding["text"] = FormatFinding(f);
    findings.append(finding);
  }
  d["findings"] = findings;
  nb::list overflows;
  for (const MosaicOverflow& m : o.overflows) {
    nb::dict ov;
    ov["block"] = m.block_linear;
    ov["block_index"] = Dim(m.block_index);
    ov["trace"] = m.trace;
    ov["events_attempted"] = m.events_attempted;
    ov["events_kept"] = m.events_kept;
    ov["entries_needed"] = m.entries_needed;
    ov["words_past_slice"] = m.words_past_slice;
    ov["message"] = m.message;
    overflows.append(ov);
  }
  d["overflows"] = overflows;
  d["summary"] = o.summary.has_value() ? nb::object(SummaryDict(*o.summary)) : nb::none();
  nb::list diagnosis;
  if (o.analysis.has_value()) {
    for (const Diagnosis& g : o.analysis->diagnosis) {
      nb::dict item;
      item["kind"] = g.kind;
      item["score"] = g.score;
      item["text"] = g.text;
      diagnosis.append(item);
    }
  }
  d["diagnosis"] = diagnosis;
  d["summary_text"] = o.summary_text;
  d["analysis_json"] = o.analysis_json;
  d["report_json"] = o.report_json;
  return d;
}

nb::dict Convert(absl::StatusOr<DumpReply> outcome) {
  if (!outcome.ok()) return Failure(outcome.status());
  return OutcomeDict(*outcome);
}

nb::dict DumpWordsPy(const Array& buffer, const std::string& layout_json,
                     const std::string& output, const std::string& format, bool summary,
                     bool analysis, bool allow_truncated, bool compensate_overhead,
                     uint64_t sm_clock_khz) {
  bool type_error = false;
  absl::StatusOr<absl::Span<const uint32_t>> words = Words(buffer, type_error);
  if (!words.ok()) return BufferFailure(words.status(), type_error);
  const DumpArgs request = Request(output, format, summary, analysis, allow_truncated,
                                      compensate_overhead, sm_clock_khz);
  absl::StatusOr<DumpReply> outcome;
  {
    nb::gil_scoped_release release;
    absl::StatusOr<TraceLayout> layout = LayoutFromJson(layout_json);
    outcome = layout.ok() ? DumpWords(*layout, *words, request)
                          : absl::StatusOr<DumpReply>(layout.status());
  }
  return Convert(std::move(outcome));
}

nb::dict DumpPrefixPy(const std::string& prefix, const std::string& output,
                      const std::string& format, bool summary, bool analysis,
                      bool allow_truncated, bool compensate_overhead, uint64_t sm_clock_khz) {
  const DumpArgs request = Request(output, format, summary, analysis, allow_truncated,
                                      compensate_overhead, sm_clock_khz);
  absl::StatusOr<DumpReply> outcome;
  {
    nb::gil_scoped_release release;
    outcome = DumpPrefix(prefix, request);
  }
  return Convert(std::move(outcome));
}

Dim3 ToDim3(const std::vector<uint32_t>& v, const char* what, absl::Status& status) {
  Dim3 d;
  if (v.empty() || v.size() > 3) {
    status = absl::InvalidArgumentError(
        absl::StrCat(what, " has ", v.size(), " dimensions: give 1 to 3"));
    return d;
  }
  d.x = v[0];
  if (v.size() > 1) d.y = v[1];
  if (v.size() > 2) d.z = v[2];
  if (d.x == 0 || d.y == 0 || d.z == 0) {
    status = absl::InvalidArgumentError(absl::StrCat(what, " has a dimension of 0"));
  }
  return d;
}

nb::dict DumpMosaicPy(const Array& buffer, const std::vector<uint32_t>& grid,
                      const std::vector<uint32_t>& block, uint32_t entries_per_warpgroup,
                      bool warp_scope, const std::vector<std::string>& names,
                      const std::string& kernel_name, const std::string& output,
                      const std::string& format, bool summary, bool analysis,
                      bool allow_truncated, uint64_t sm_clock_khz) {
  bool type_error = false;
  absl::StatusOr<absl::Span<const uint32_t>> words = Words(buffer, type_error);
  if (!words.ok()) return BufferFailure(words.status(), type_error);
  absl::Status status;
  MosaicSidecar sidecar;
  sidecar.grid = ToDim3(grid, "grid", status);
  if (status.ok()) sidecar.block = ToDim3(block, "block", status);
  if (!status.ok()) return Failure(status);
  if (entries_per_warpgroup < 5) {
    return Failure(absl::InvalidArgumentError(absl::StrCat(
        "entries_per_warpgroup is ", entries_per_warpgroup,
        ": it must be >= 5 (3 header words and one 2-word event)")));
  }
  sidecar.entries_per_trace = entries_per_warpgroup;
  sidecar.scope = warp_scope ? UnitKind::kWarp : UnitKind::kWarpgroup;
  sidecar.names = names;
  sidecar.kernel_name = kernel_name;
  const DumpArgs request =
      Request(output, format, summary, analysis, allow_truncated, false, sm_clock_khz);
  absl::StatusOr<DumpReply> outcome;
  {
    nb::gil_scoped_release release;
    outcome = DumpMosaic(sidecar, *words, request);
  }
  return Convert(std::move(outcome));
}

nb::dict LayoutPy(absl::StatusOr<TraceLayout> layout) {
  if (!layout.ok()) return Failure(layout.status());
  nb::dict d;
  d["error"] = nb::none();
  d["json"] = LayoutToJson(*layout);
  d["buffer_bytes"] = BufferBytes(*layout);
  return d;
}

nb::dict LayoutFromJsonPy(const std::string& json) {
  absl::StatusOr<TraceLayout> layout;
  {
    nb::gil_scoped_release release;
    layout = LayoutFromJson(json);
  }
  return LayoutPy(std::move(layout));
}

nb::dict LoadLayoutPy(const std::string& path) {
  absl::StatusOr<TraceLayout> layout;
  {
    nb::gil_scoped_release release;
    layout = LoadLayout(path);
  }
  return LayoutPy(std::move(layout));
}

nb::dict DiffPy(const std::string& before, const std::string& after, bool compensate_overhead) {
  absl::StatusOr<DiffOutcome> diff;
  {
    nb::gil_scoped_release release;
    diff = DiffPrefixes(before, after, compensate_overhead);
  }
  if (!diff.ok()) return Failure(diff.status());
  nb::dict d;
  d["error"] = nb::none();
  d["table"] = diff->table;
  d["json"] = diff->json;
  return d;
}

}  // namespace
}  // namespace warptrace::python

NB_MODULE(_warptrace_core, m) {
  using namespace warptrace::python;
  namespace nb = nanobind;
  m.doc() = "warptrace's C++ core; use the `warptrace` package, not this module.";
  m.def("dump_words", &DumpWordsPy, nb::arg("buffer"), nb::arg("layout_json"),
        nb::arg("output"), nb::arg("format"), nb::arg("summary"), nb::arg("analysis"),
        nb::arg("allow_truncated"), nb::arg("compensate_overhead"), nb::arg("sm_clock_khz"));
  m.def("dump_prefix", &DumpPrefixPy, nb::arg("prefix"), nb::arg("output"), nb::arg("format"),
        nb::arg("summary"), nb::arg("analysis"), nb::arg("allow_truncated"),
        nb::arg("compensate_overhead"), nb::arg("sm_clock_khz"));
  m.def("dump_mosaic", &DumpMosaicPy, nb::arg("buffer"), nb::arg("grid"), nb::arg("block"),
        nb::arg("entries_per_warpgroup"), nb::arg("warp_scope"), nb::arg("names"),
        nb::arg("kernel_name"), nb::arg("output"), nb::arg("format"), nb::arg("summary"),
        nb::arg("analysis"), nb::arg("allow_truncated"), nb::arg("sm_clock_khz"));
  m.def("layout_from_json", &LayoutFromJsonPy, nb::arg("json"));
  m.def("load_layout", &LoadLayoutPy, nb::arg("path"));
  m.def("diff", &DiffPy, nb::arg("before"), nb::arg("after"), nb::arg("compensate_overhead"));
}
