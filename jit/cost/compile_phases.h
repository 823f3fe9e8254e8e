// Where an NVRTC compile spends its time, by phase, from the Chrome trace JSON that NVRTC
// (CUDA 12.8 and later) writes under -fdevice-time-trace=<file>: the front end, libNVVM and
// ptxas each write their own events into that one file (ptxas reads the file NVRTC wrote
// and appends to it, so the file must not exist before the compile).
//
//   front end  from the trace's first event to libNVVM's start: C++ parsing (NVRTC's builtin
//              header and the kernel's own), template instantiation, NVVM IR generation
//   NVVM       the "LibNVVM" event: module linking, the optimizer, code generation to PTX
//   ptxas      the "Total PTXAS Time" event: PTX to SASS
//
// `--cost` reports them for both modes so that a compile ratio says which part of the
// compiler the record code costs (issue 51).
//
//   ASSIGN_OR_RETURN(TimedCompile timed, CompileWithPhases(compiler, request, dir.path()));
//   // timed.kernel: the compile's result; timed.phases: its three phases
#ifndef WARPTRACE_JIT_COST_COMPILE_PHASES_H_
#define WARPTRACE_JIT_COST_COMPILE_PHASES_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "jit/compile/compiler.h"

namespace warptrace {

struct CompilePhases {
  absl::Duration front_end;
  absl::Duration nvvm;
  absl::Duration ptxas;
};

// The phases of one compile from its time trace (a JSON object with "traceEvents", or a
// bare array of events; complete events "ph": "X" with "ts" and "dur" in microseconds).
// InvalidArgument when the text is not such JSON, or names the event it lacks ("LibNVVM",
// "Total PTXAS Time") when the trace holds no such phase.
absl::StatusOr<CompilePhases> ParseNvrtcTimeTrace(absl::string_view json);

// Whether the linked NVRTC writes time traces (-fdevice-time-trace: 12.8 or later).
bool NvrtcWritesTimeTraces();

struct TimedCompile {
  CompiledKernel kernel;
  CompilePhases phases;
};

// Compiles `request` with -fdevice-time-trace added, the trace written under `dir` (an
// existing directory) and removed after it is read. FailedPrecondition naming `dir` when no
// file can be written there (checked first: NVRTC aborts the process when it cannot write
// its trace); the compiler's errors as they are; a trace that cannot be read or parsed: its
// error, naming the file. The trace's name is fixed: one compile at a time per directory.
absl::StatusOr<TimedCompile> CompileWithPhases(Compiler& compiler, CompileRequest request,
                                               const std::string& dir);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COST_COMPILE_PHASES_H_
