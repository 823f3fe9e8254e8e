// The frame of an emitted kernel — everything around its body: the header (provenance, the
// record sites, includes, preamble, the dynamic shared memory macro), the signature
// (parameters, the trace buffer, launch bounds), the shared declarations and the host
// backend's entry point. Internal to jit/emit (emitter.cc writes the body between them).
#ifndef WARPTRACE_JIT_EMIT_KERNEL_FRAME_H_
#define WARPTRACE_JIT_EMIT_KERNEL_FRAME_H_

#include <initializer_list>
#include <vector>

#include "jit/builder/kernel.h"
#include "jit/emit/source_writer.h"
#include "jit/plan/record_plan.h"

namespace warptrace {

// The trace buffer's parameter, last when profiled.
inline constexpr char kTraceParam[] = "warptrace_trace";

// Whether `body` or anything nested in it is of one of `kinds`.
bool Contains(const std::vector<KernelNode>& body, std::initializer_list<KernelNode::Kind> kinds);
// Whether the kernel calls warptrace_primitives.cuh.
bool UsesPrimitives(const Kernel& kernel);
// Whether the primitives header is included: for the primitives, and for CUtensorMap
// parameters (the type comes with jit/primitives/tma_sm90.cuh).
bool IncludesPrimitives(const Kernel& kernel);

// `plan` null: unprofiled.
void WriteHeader(SourceWriter& w, const Kernel& kernel, const RecordPlan* plan);
void WriteSignature(SourceWriter& w, const Kernel& kernel, bool profiled);
void WriteDeclarations(SourceWriter& w, const Kernel& kernel);
// Thread 0 initializes the phase barrier arrays, then a fence and __syncthreads.
void WritePhaseBarrierInit(SourceWriter& w, const Kernel& kernel);
void WriteHostEntry(SourceWriter& w, const Kernel& kernel, bool profiled);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_EMIT_KERNEL_FRAME_H_
