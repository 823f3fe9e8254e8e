// The lines of generated code that both the emitter (jit/emit/emitter.cc) and its async
// sites (jit/emit/async_sites.h) write: record points with a payload, the barrier element a
// construct works on, loops over a barrier array. Internal to jit/emit.
#ifndef WARPTRACE_JIT_EMIT_EMIT_LINES_H_
#define WARPTRACE_JIT_EMIT_EMIT_LINES_H_

#include <cstdint>
#include <string>

#include "format/layout.h"
#include "jit/builder/kernel.h"
#include "jit/emit/source_writer.h"

namespace warptrace {

// The block's linear index, as the prologue and the epilogue compute it.
inline constexpr char kBlockLinear[] =
    "blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)";

// `text` as an operand: itself when it is an identifier or a number, else parenthesized.
std::string Operand(const std::string& text);

// `warptrace::recorder::RecordWithPayload(warptrace_unit, <tag of site, exit>, a, b);  // what`.
void RecordPayload(SourceWriter& out, int depth, const SiteInfo& site, bool exit,
                   const std::string& a, const std::string& b, const std::string& what);

// `warptrace::recorder::Record(warptrace_unit, <tag of site, exit>);  // what`: a hand-off
// event whose payload the dump derives (format/links.h, trace version 4): a phase wait's
// enter, and the issues and completions of in-order async groups (cp.async and bulk store
// groups, wgmma groups), numbered by their order in the unit.
void RecordDerived(SourceWriter& out, int depth, const SiteInfo& site, bool exit,
                   const std::string& what);

// The payload's barrier id of element `bar` of `decl` (format/links.h): block-local, or with a
// cluster link scope (decl.cluster_ids) cluster-wide for the calling CTA (BarrierId) or for
// CTA rank `cta` (BarrierIdOfCta: a remote arrival's target).
std::string BarrierId(const PhaseBarrierDecl& decl, const std::string& bar);
std::string BarrierIdOfCta(const PhaseBarrierDecl& decl, const std::string& bar,
                           const std::string& cta);

// `const unsigned int warptrace_bar = ...(index);`, the element of the barrier array a
// construct works on.
void DeclareBar(SourceWriter& out, int depth, const std::string& index);

// `for (unsigned int warptrace_e = 0; warptrace_e < <size>u; ++warptrace_e) {`, a loop over
// every element of `decl` (the block is left open).
void ForEachElement(SourceWriter& out, int depth, const PhaseBarrierDecl& decl);

// `#pragma unroll 1` for NVRTC only (the host compiler does not know it).
void NoUnroll(SourceWriter& out, int depth);

// `warptrace_tid == <thread>u`.
std::string IsThread(uint64_t thread);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_EMIT_EMIT_LINES_H_
