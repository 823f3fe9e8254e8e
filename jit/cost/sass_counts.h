// Counting a kernel's SASS (one function's `cuobjdump -sass` text): the instruction classes
// that say what the kernel got, the SM clock reads (one per record point instance), and
// what its loops hold. jit/cost/kernel_cost compares them profiled and unprofiled.
#ifndef WARPTRACE_JIT_COST_SASS_COUNTS_H_
#define WARPTRACE_JIT_COST_SASS_COUNTS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace warptrace {

// The SASS classes that say what a kernel got, in this order: HGMMA (wgmma), UTMALDG /
// UTMASTG (TMA load / store), UBLKCP (bulk copy), LDGSTS (cp.async), LDSM / STSM
// (ldmatrix / stmatrix), HMMA (mma.sync); the phase-barrier (mbarrier) instructions by
// sub-opcode: SYNCS.EXCH (init), SYNCS.ARRIVE (arrive), SYNCS.ARRIVE.RED (expect_tx and
// remote arrivals), SYNCS.TRYWAIT (try_wait: distinct waits), SYNCS.PHASECHK (test_wait),
// SYNCS (any other); BAR, LDL / STL (local memory: spills and stack).
const std::vector<std::string>& KeySassOpcodes();
// How many instructions of each KeySassOpcodes() class `sass` (one function's cuobjdump
// -sass text) holds, by the opcode before its first '.' (predicates skipped) or SYNCS's
// sub-opcode, in KeySassOpcodes() order (zeros included). SYNCS.TRYWAIT counts waits, not
// instructions: ptxas emits a wait either as one inline spin or as a try plus an
// out-of-line retry block after the function's EXIT ("TRYWAIT; @!P BRA <itself or just
// before>; BRA <back>"), and the retry block is the same wait, so it is not counted.
std::vector<std::pair<std::string, uint64_t>> CountKeySassInstructions(absl::string_view sass);

// The SASS inside the kernel's loops: instructions in the natural loop of some backward
// branch (a BRA to an instruction before it that dominates it: the instructions that reach
// the branch without passing its target; a jump back from code ptxas placed out of line,
// such as an mbarrier wait's retry at the function's end, is no loop, and neither is the
// code between its two ends), and the SM clock reads among them (CountClockReads'
// instructions). The prologue and epilogue are apart: the recorder epilogue's own loop (it copies and checksums the unit's slots) is
// counted in epilogue_instructions, not in instructions. It is the loop without a clock
// read whose last two timer reads before it are a globaltimer read, not the first one (the
// prologue's), then a clock read: the epilogue's end stamps.
struct LoopSass {
  uint64_t instructions = 0;
  uint64_t clock_reads = 0;
  uint64_t epilogue_instructions = 0;
};
LoopSass CountLoopSass(absl::string_view sass);

// The clock reads in `sass` (one function's cuobjdump -sass text): S2R, S2UR and CS2R
// instructions naming SR_CLOCKLO.
uint64_t CountClockReads(absl::string_view sass);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COST_SASS_COUNTS_H_
