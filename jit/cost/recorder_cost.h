// What the device recorder costs, measured from the code NVRTC generates: instructions on
// the recorder's path per recorded event, per trace-unit kind and placement.
//
// Each case gets three kernels: one without any recorder code ("off"), and two with K1 and
// K2 Record calls in the body of a loop whose trip count is only known at run time (so
// nothing can be folded away). Then
//
//   per event = (count(K2) - count(K1)) / (K2 - K1)      the marginal cost of one Record
//   fixed     = count(K1) - K1 * per_event - count(off)  prologue + epilogue + setup
//
// for PTX instructions (always) and SASS instructions (when cuobjdump is available: the
// PyPI package nvidia-cuda-cuobjdump ships it), plus the registers the recorder adds
// (cuobjdump -res-usage). Static counts, not timings: the device-side cost in cycles is
// measured by the GPU check script.
//
// All kernels of all cases go into one NVRTC program, each in a namespace of its own under
// a name of its own (RecorderCostKernelName), and cuobjdump runs twice on the one cubin
// (-sass, -res-usage): starting cuobjdump -sass costs about half a second, a compile a
// tenth. The counts are then read per kernel (PtxEntry, SassFunction, ResUsageFunction).
// Kernels are compiled independently (the recorder is force-inlined, ptxas allocates
// registers per kernel), so each kernel counts what it would alone in a program.
//
//   RecorderCostOptions options;
//   options.cuobjdump = FindCuobjdump("");  // empty when absent: SASS columns are skipped
//   ASSIGN_OR_RETURN(std::vector<RecorderCostRow> rows, MeasureRecorderCost(options));
//   std::cout << FormatRecorderCost(rows, options);
#ifndef WARPTRACE_JIT_COST_RECORDER_COST_H_
#define WARPTRACE_JIT_COST_RECORDER_COST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jit/compile/cuobjdump.h"
#include "jit/target/cuda_target.h"

namespace warptrace {

// One trace-unit kind and placement to measure, as the device Config the emitter writes.
struct RecorderCostCase {
  std::string name;              // "warp/global", ...
  uint32_t block_threads = 256;
  uint32_t unit_threads = 32;
  uint32_t unit_first_thread = 0;
  uint32_t recorder_offset = 0;
  uint32_t units_per_block = 8;
  uint32_t capacity = 64;
  bool shared = false;
  // Each measured event is RecordWithPayload (an event and its payload slot, trace
  // version 2) instead of Record.
  bool payload = false;
};

// warp, warpgroup, block and a custom subset, each with global and shared placement.
std::vector<RecorderCostCase> DefaultRecorderCostCases();
// Events with a payload slot (barrier and async sites), warp and warpgroup units, global
// and shared placement: "warp/global+payload", ...
std::vector<RecorderCostCase> PayloadRecorderCostCases();

// The name of the kernel that measures case `c` in `variant` ("off", "k1", "k2"):
// "recorder_cost_<case>_<variant>", the case name with every character that cannot be in a
// C identifier made '_' ("warp/global+payload", "k1" -> "recorder_cost_warp_global_payload_k1").
std::string RecorderCostKernelName(const RecorderCostCase& c, absl::string_view variant);

// The measured kernel, extern "C" `kernel_name`, in namespace `<kernel_name>_ns` (so that
// many such kernels, each with its own device Config, fit in one program): `events` Record
// calls per loop iteration (distinct site ids), or no recorder code at all when `profiled`
// is false. A profiled kernel needs `#include "recorder.cuh"` (RecorderCostProgramSource)
// before it.
std::string RecorderCostKernelSource(const RecorderCostCase& c, uint32_t events,
                                     bool profiled,
                                     absl::string_view kernel_name = "recorder_cost");

// One program of the given kernel sources: recorder.cuh included once, then each source.
std::string RecorderCostProgramSource(const std::vector<std::string>& kernel_sources);

// The part of NVRTC's `ptx` that is kernel `kernel_name`: from its `.entry` line to the
// brace that closes its body (what CountPtxInstructions counts for that kernel alone).
// NotFound when the PTX has no such entry; InvalidArgument when its body never closes.
absl::StatusOr<absl::string_view> PtxEntry(absl::string_view ptx,
                                           absl::string_view kernel_name);

// Executable instructions of every kernel in `ptx`: statements ending in ';' inside
// function bodies, including predicated ones and inline asm, excluding declarations
// (.reg, .shared, .local, ...), labels, braces and comments.
uint64_t CountPtxInstructions(absl::string_view ptx);

// SASS statistics from `cuobjdump -sass` and `cuobjdump -res-usage` output.
struct SassStats {
  uint64_t instructions = 0;  // up to the final self-branch (padding excluded)
  uint32_t registers = 0;     // REG: of the kernel
};
// Counts SASS instructions in `cuobjdump -sass` text, NOPs included (ptxas puts some in as
// scheduling slots), up to each kernel's final `BRA` to itself (the end-of-kernel trap loop,
// never executed) and the NOP padding after it.
uint64_t CountSassInstructions(absl::string_view sass);
// The register count ("REG:N") from `cuobjdump -res-usage` text (the first one: pass the
// section of one function, ResUsageFunction); NotFound if absent.
absl::StatusOr<uint32_t> ParseRegisterCount(absl::string_view res_usage);

// The part of `cuobjdump -sass` text that is kernel `kernel_name`: from its
// "Function : <name>" line up to the next function's. NotFound when there is none.
absl::StatusOr<absl::string_view> SassFunction(absl::string_view sass,
                                               absl::string_view kernel_name);
// The part of `cuobjdump -res-usage` text that is kernel `kernel_name`: the lines after
// " Function <name>:" up to the next function's. NotFound when there is none.
absl::StatusOr<absl::string_view> ResUsageFunction(absl::string_view res_usage,
                                                   absl::string_view kernel_name);

// (Not named CompiledKernel: jit/compile/compiler.h has one, and a binary linking both
// would hold two definitions of one name, an ODR violation that crashes.)
struct CostProgram {
  std::string ptx;
  std::string cubin;
  std::string log;
};
// Compiles with NVRTC (recorder headers in memory) for `target`. Returns
// InvalidArgument carrying NVRTC's log when the source does not compile, Internal for
// other NVRTC failures.
absl::StatusOr<CostProgram> CompileForCost(const std::string& source,
                                              const CudaTarget& target);

// The SASS instructions and registers of kernel `kernel_name` in `listing`. NotFound when
// either listing has no section for the kernel or its section no register count.
absl::StatusOr<SassStats> KernelSassStats(const CubinListing& listing,
                                          absl::string_view kernel_name);

struct RecorderCostOptions {
  CudaTarget target = CudaTarget::Default();
  uint32_t events_low = 8;    // K1
  uint32_t events_high = 16;  // K2
  std::string cuobjdump;      // empty: SASS numbers are skipped
  std::vector<RecorderCostCase> cases = DefaultRecorderCostCases();
};

struct RecorderCostRow {
  std::string name;
  double ptx_per_event = 0;
  int64_t ptx_fixed = 0;
  std::optional<double> sass_per_event;  // set when cuobjdump ran
  std::optional<int64_t> sass_fixed;
  std::optional<int32_t> registers_added;  // profiled (K2) minus off
};

// Measures every case, all in one program and one cubin. InvalidArgument for events_high <=
// events_low or two cases whose names make the same kernel name; errors from
// CompileForCost and DisassembleCubin as they are, per-kernel errors (a kernel missing
// from the PTX or the cuobjdump listings) naming the case and the kernel.
absl::StatusOr<std::vector<RecorderCostRow>> MeasureRecorderCost(
    const RecorderCostOptions& options);

// An aligned table with one row per case, and a line saying how it was measured (or that
// SASS numbers were skipped because no cuobjdump was found).
std::string FormatRecorderCost(const std::vector<RecorderCostRow>& rows,
                               const RecorderCostOptions& options);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COST_RECORDER_COST_H_
