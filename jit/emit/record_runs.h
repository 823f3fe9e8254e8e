// Record runs: the emitter's pass that groups the record points of a straight-line run of
// generated code (issue 51: at most 8 SASS per event instance in the kernel's loops).
//
// Each `warptrace::recorder::Record(warptrace_unit, ...)` (1 slot) or `RecordWithPayload`
// (2 slots) stores through the unit state's pointer and then advances the pointer and the
// count of slots left; compiled, every event copies both (two SASS) before its store. In a
// run of record points that always execute together, the k-th one is written instead as
// `RecordAt<k>` / `RecordWithPayloadAt<k>` (its slot at an immediate offset, checked against
// an immediate: format/recorder.cuh), and one `Advance<n>(warptrace_unit);` ends the run.
// The slots written, their order and the capacity check per slot are those of the plain
// calls: the trace is byte for byte the same.
//
// A run is the record points of one block (bare `{ // ... }` blocks, straight-line, are
// looked through) up to the first of: a line that uses the unit state otherwise (the
// epilogue), a jump (return, break, continue, goto), a preprocessor
// conditional, the end of its block, or a construct (if, for, while, ...) whose body holds
// any of these or a record point. A construct without them (a barrier, the kernel's own
// loops and branches) does not end the run. A run of one record point is left as it is.
//
// The pass reads the structure from the lines' depths (SourceWriter), which the emitter
// keeps as the blocks' nesting.
#ifndef WARPTRACE_JIT_EMIT_RECORD_RUNS_H_
#define WARPTRACE_JIT_EMIT_RECORD_RUNS_H_

#include <vector>

#include "jit/emit/source_writer.h"

namespace warptrace {

// `lines` with the record points of each run of two or more grouped (above).
std::vector<SourceLine> GroupRecordRuns(std::vector<SourceLine> lines);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_EMIT_RECORD_RUNS_H_
