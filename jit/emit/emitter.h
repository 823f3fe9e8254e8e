// The CUDA emitter: turns a built Kernel (and, when profiled, its RecordPlan) into one
// complete, deterministic, readable translation unit, following the contract in
// jit/builder/kernel_source.h.
//
// Profiled, the source:
//   * includes "recorder.cuh" (handed over in KernelSource::headers, never read from disk);
//   * appends `unsigned int* warptrace_trace` as the kernel's last parameter;
//   * opens the kernel with a `constexpr warptrace::recorder::Config warptrace_config` built
//     from the plan, a `__shared__ unsigned long long warptrace_staging[units * capacity]`
//     array for shared placement, and warptrace::recorder::Prologue;
//   * records an enter event before and an exit event (tag | kExitFlag) after every record
//     site (the kernel, regions, loop iterations, barrier waits), with the site's name in a
//     comment;
//   * before every exit of the kernel (its end and each Return()) records the exits of
//     the sites still open, innermost first, then calls warptrace::recorder::Epilogue.
// Not profiled, none of that is there: no include, no trace parameter, no record code.
//
// Regions, loops, branches and roles are emitted as C++ scopes in both modes, so the
// kernel's own code sees the same scoping whether it is profiled or not. Role splits
// become an if/else chain on `warptrace_tid / 128u` (or / 32u). Dynamic shared memory is
// declared with WARPTRACE_DYNAMIC_SHARED(type, name), which the source defines for CUDA
// (`extern __shared__ __align__(128) type name[]`: bulk copies need 16-byte alignment)
// unless the host backend defined it first. The host entry
// `warptrace_host_entry_<kernel>(void** args)` follows under `#ifdef WARPTRACE_HOST_BACKEND`.
//
// Warp-specialization constructs (jit/builder/kernel.h) call warptrace_primitives.cuh, which the
// source then includes (and KernelSource::headers carries, profiled or not): phase barrier
// arrays are declared as shared arrays and initialized by thread 0 (then a fence and
// __syncthreads) before the body; arrivals record their event before arriving, waits record
// their release after it, and each recorded async copy keeps per-thread issue numbers so
// its end pairs with its begin (see RecordPlan for what each costs).
//
//   ASSIGN_OR_RETURN(Kernel kernel, builder.Build());
//   ProfileOptions options;                 // warpgroup units, auto placement
//   ASSIGN_OR_RETURN(KernelSource source, EmitKernel(kernel, options));
//   // source.source is the .cu text, source.layout the trace layout for the dump.
//
// The same Kernel and options always give byte-identical source.
#ifndef WARPTRACE_JIT_EMIT_EMITTER_H_
#define WARPTRACE_JIT_EMIT_EMITTER_H_

#include "absl/status/statusor.h"
#include "jit/builder/kernel.h"
#include "jit/builder/kernel_source.h"
#include "jit/plan/record_plan.h"

namespace warptrace {

// Emits `kernel` profiled per `options` (planning it with RecordPlan::Create) or, with
// options.enabled false, without any profiling. Returns RecordPlan::Create's errors.
absl::StatusOr<KernelSource> EmitKernel(const Kernel& kernel, const ProfileOptions& options);

// Emits `kernel` profiled with an existing plan, which must have been made for this kernel
// (InvalidArgument otherwise).
absl::StatusOr<KernelSource> EmitKernel(const Kernel& kernel, const RecordPlan& plan);

// Emits `kernel` without profiling.
KernelSource EmitUnprofiledKernel(const Kernel& kernel);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_EMIT_EMITTER_H_
