#include "jit/emit/emit_lines.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/trace_abi.h"

namespace warptrace {
namespace {

bool IsSimpleOperand(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

}  // namespace

std::string Operand(const std::string& text) {
  return IsSimpleOperand(text) ? text : absl::StrCat("(", text, ")");
}

void RecordPayload(SourceWriter& out, int depth, const SiteInfo& site, bool exit,
                   const std::string& a, const std::string& b, const std::string& what) {
  out.Line(depth, absl::StrFormat(
                      "warptrace::recorder::RecordWithPayload(warptrace_unit, 0x%08xu, %s, %s);  "
                      "// %s %s",
                      abi::MakeTag(site.id, exit), a, b, what, site.name));
}

void RecordDerived(SourceWriter& out, int depth, const SiteInfo& site, bool exit,
                   const std::string& what) {
  out.Line(depth, absl::StrFormat("warptrace::recorder::Record(warptrace_unit, 0x%08xu);  // %s %s",
                                  abi::MakeTag(site.id, exit), what, site.name));
}

std::string BarrierId(const PhaseBarrierDecl& decl, const std::string& bar) {
  return BarrierIdOfCta(decl, bar, "warptrace_cluster_ctarank()");
}

std::string BarrierIdOfCta(const PhaseBarrierDecl& decl, const std::string& bar,
                           const std::string& cta) {
  const std::string local = decl.first_id == 0 ? bar : absl::StrCat(decl.first_id, "u + ", bar);
  if (decl.cluster_ids == 0) return local;
  return absl::StrCat("static_cast<unsigned int>(", cta, ") * ", decl.cluster_ids, "u + ",
                      local);
}

void DeclareBar(SourceWriter& out, int depth, const std::string& index) {
  out.Line(depth, absl::StrCat("const unsigned int warptrace_bar = static_cast<unsigned int>(",
                               index, ");"));
}

void ForEachElement(SourceWriter& out, int depth, const PhaseBarrierDecl& decl) {
  out.Line(depth, absl::StrFormat(
                      "for (unsigned int warptrace_e = 0; warptrace_e < %du; ++warptrace_e) {",
                      decl.size));
}

void NoUnroll(SourceWriter& out, int depth) {
  out.Line(0, "#if defined(__CUDACC__)");
  out.Line(depth, "#pragma unroll 1");
  out.Line(0, "#endif");
}

std::string IsThread(uint64_t thread) { return absl::StrCat("warptrace_tid == ", thread, "u"); }

}  // namespace warptrace
