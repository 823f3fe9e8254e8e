// The verdict report's JSON form (verify.h: WriteVerifyReportJson, WriteVerifyReportFile),
// apart from the verifier as the analysis keeps its JSON in analysis_json.cc.
#include <cstdint>

#include "base/file.h"
#include "base/utf8.h"
#include "llvm/Support/JSON.h"
#include "profiler/trace/verify.h"

namespace warptrace {

namespace json = ::llvm::json;

namespace {

void BlockIndexJson(const Dim3& b, json::OStream& j) {
  j.attributeArray("block_index", [&] {
    j.value(static_cast<int64_t>(b.x));
    j.value(static_cast<int64_t>(b.y));
    j.value(static_cast<int64_t>(b.z));
  });
}

}  // namespace

void WriteUnitVerdictJsonMembers(const UnitVerdict& u, const TraceLayout& layout,
                                 bool coordinates, json::OStream& j) {
  j.attribute("record", static_cast<int64_t>(u.record_index));
  j.attribute("block", u.block_linear);
  if (coordinates) BlockIndexJson(BlockIndex(layout.grid, u.block_linear), j);
  j.attribute("unit", u.unit_index);
  if (coordinates) {
    j.attribute("name", UnitName(BlockIndex(layout.grid, u.block_linear), layout.unit.kind,
                                 u.unit_index));
  }
  j.attribute("verdict", VerdictName(u.verdict));
  j.attribute("reason", ValidUtf8(u.reason));
  j.attribute("kept_events", u.kept_events);
  j.attribute("dropped", u.dropped);
  j.attribute("overhead_cycles", u.overhead_cycles);
  j.attribute("repaired", u.repaired);
}

void WriteFindingJsonMembers(const Finding& f, bool coordinates, json::OStream& j) {
  j.attribute("severity", SeverityName(f.severity));
  j.attribute("kind", FindingKindName(f.kind));
  j.attribute("record", static_cast<int64_t>(f.record_index));
  j.attribute("block", f.block_linear);
  if (coordinates) BlockIndexJson(f.block_index, j);
  j.attribute("unit", f.unit_index);
  if (f.event_index >= 0) {
    j.attribute("event", f.event_index);
  } else {
    j.attribute("event", nullptr);
  }
  j.attribute("message", ValidUtf8(f.message));
  if (coordinates) j.attribute("text", ValidUtf8(FormatFinding(f)));
}

void WriteVerifyReportJson(const VerifyReport& report, const TraceLayout& layout,
                           llvm::raw_ostream& os) {
  json::OStream j(os, /*IndentSize=*/1);
  j.object([&] {
    j.attribute("format", "warptrace-verdict");
    j.attribute("version", 1);
    j.attribute("kernel", ValidUtf8(layout.kernel_name));
    j.attribute("device", ValidUtf8(layout.device_name));
    j.attribute("ok", report.ok());
    j.attribute("allow_truncated", report.allow_truncated);
    j.attribute("errors", static_cast<int64_t>(report.errors));
    j.attribute("warnings", static_cast<int64_t>(report.warnings));
    j.attribute("capacity", report.capacity);
    j.attribute("max_attempted", report.max_attempted);
    j.attribute("required_capacity", report.required_capacity());
    j.attribute("dropped_events", static_cast<int64_t>(report.dropped_events));
    j.attributeObject("verdicts", [&] {
      for (Verdict v : {Verdict::kComplete, Verdict::kTruncated, Verdict::kOverflowed,
                        Verdict::kCorrupt, Verdict::kMissing}) {
        j.attribute(VerdictName(v),
                    static_cast<int64_t>(report.verdict_counts[static_cast<int>(v)]));
      }
    });
    j.attributeObject("finding_counts", [&] {
      for (int k = 0; k < kNumFindingKinds; ++k) {
        if (report.kind_counts[k] == 0) continue;
        j.attribute(FindingKindName(static_cast<FindingKind>(k)),
                    static_cast<int64_t>(report.kind_counts[k]));
      }
    });
    j.attributeArray("units", [&] {
      for (const UnitVerdict& u : report.units) {
        j.object([&] { WriteUnitVerdictJsonMembers(u, layout, /*coordinates=*/false, j); });
      }
    });
    j.attributeArray("findings", [&] {
      for (const Finding& f : report.findings) {
        j.object([&] { WriteFindingJsonMembers(f, /*coordinates=*/false, j); });
      }
    });
  });
}

absl::Status WriteVerifyReportFile(const VerifyReport& report, const TraceLayout& layout,
                                   absl::string_view path) {
  return WriteFileAtomically(
      path,
      [&](llvm::raw_ostream& os) {
        WriteVerifyReportJson(report, layout, os);
        os << "\n";
        return absl::OkStatus();
      },
      {.role = "verdict report"});
}

}  // namespace warptrace
