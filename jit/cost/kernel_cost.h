// What recording costs the real kernels (jit/kernels/hopper_gemm, flash_attention,
// ampere_gemm):
// for each variant, emitted unprofiled and profiled (default ProfileOptions), compiled with
// NVRTC for the kernel's architecture (sm_90a Hopper, sm_80 Ampere) with
// `--ptxas-options=-v --no-cache` (NVRTC's compile cache off, so ptxas runs and reports
// every time), read back:
//
//   registers, spill stores / loads  ptxas's "Used N registers" and "N bytes spill stores,
//                                    N bytes spill loads" lines for the kernel's entry
//   SASS instructions                cuobjdump -sass of the cubin, CountSassInstructions
//                                    (recorder_cost.h: up to the final self-branch)
//   record points                    the Record / RecordWithPayload calls in the emitted
//                                    profiled source (static: a call in a loop counts once)
//   SASS / record point              (SASS(profiled) - SASS(unprofiled)) / record points:
//                                    every instruction profiling adds (prologue, epilogue,
//                                    per-point code, unrolled copies of it) spread over the
//                                    points the emitter wrote; an upper bound of the marginal
//                                    per-event cost recorder_cost measures
//   compile time                     the median wall time of `repeats` NVRTC compiles,
//                                    the two modes compiled in alternation (off on, on off,
//                                    off on, ...) so that a slow spell of a shared machine
//                                    weighs on both alike, after one untimed compile of
//                                    each (the process's first pays NVRTC's start)
//   compile phases                   front end, NVVM and ptxas, each phase's median over
//                                    as many rounds again, alternated the same way, each
//                                    compile writing NVRTC's own time trace
//                                    (compile_phases.h; NVRTC 12.8 and later). Tracing
//                                    adds its own time, so the timed rounds write none.
//
// setmaxnreg: the Hopper GEMM's warpgroups set their own register counts (40 / 232) at run
// time, so ptxas's count is the kernel's launch-time allocation, not what each role gets.
//
//   KernelCostOptions options;
//   options.cuobjdump = FindCuobjdump("");
//   ASSIGN_OR_RETURN(std::vector<KernelCostRow> rows, MeasureKernelCost(options));
//   std::cout << FormatKernelCost(rows, options);
#ifndef WARPTRACE_JIT_COST_KERNEL_COST_H_
#define WARPTRACE_JIT_COST_KERNEL_COST_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "jit/builder/kernel.h"
#include "jit/cost/compile_phases.h"
#include "jit/cost/sass_counts.h"
#include "jit/plan/record_plan.h"
#include "jit/target/cuda_target.h"

namespace warptrace {

// One kernel variant to measure.
struct KernelCostVariant {
  std::string name;  // "hopper_gemm coop bn128 bf16", ...
  CudaTarget target = CudaTarget::Default();  // sm_90a, sm_80
  // True when the kernel sets its registers with setmaxnreg (ptxas's count is then not
  // what its warpgroups run with).
  bool setmaxnreg = false;
  std::function<absl::StatusOr<Kernel>()> build;
};

// The main variants at M = N = K = `size` (a multiple of 256): hopper_gemm cooperative BN
// 64/128/256, ping-pong, persistent (cooperative and ping-pong: 132 blocks, or 3 when there
// are fewer tiles), f32 output; flash_attention head dim 64 and 128, plain, causal,
// ping-pong, overlap (sequence = size, 16 heads); ampere_gemm 4 and 8 warps, 2, 3 and 4 stages. The size
// changes the code: K is the mainloop's compile-time trip count, which ptxas unrolls when
// short (256: 4 K-blocks) and not at GPU sizes (4096).
std::vector<KernelCostVariant> DefaultKernelCostVariants(uint32_t size = 4096);

// What ptxas reports for one entry function under --ptxas-options=-v.
struct PtxasStats {
  uint32_t registers = 0;
  uint32_t spill_store_bytes = 0;
  uint32_t spill_load_bytes = 0;
  uint32_t stack_frame_bytes = 0;
};
// Reads kernel `kernel_name`'s stats from an NVRTC log made with --ptxas-options=-v: the
// lines after "Compiling entry function '<name>'" up to the next entry's. NotFound naming
// the kernel when the log has no such entry or the entry no register / spill line.
absl::StatusOr<PtxasStats> ParsePtxasInfo(absl::string_view log, absl::string_view kernel_name);

// The lines of `log` that are not ptxas's informational output under -v ("ptxas info ..."
// and the indented "N bytes stack frame, ..." lines after them): warnings (C7508,
// C7510-C7515, ...) and anything else, joined by '\n'. Empty for a clean compile.
std::string NonInfoLogLines(absl::string_view log);

// Record / RecordWithPayload calls in emitted CUDA source.
uint32_t CountRecordPoints(absl::string_view source);

// One compile of one variant in one mode.
struct KernelCompileCost {
  PtxasStats ptxas;
  std::optional<uint64_t> sass_instructions;  // set when cuobjdump ran
  uint32_t record_points = 0;                  // 0 unprofiled
  absl::Duration compile_time;                 // median of the repeats
  // Each phase's median over `repeats` traced compiles after the timed ones
  // (compile_phases.h: front end, NVVM, ptxas); unset without timing rounds (repeats 0) or
  // when NVRTC writes no time traces.
  std::optional<CompilePhases> phases;
  std::string log;                             // NVRTC's log of the first compile
  std::string sass;                            // this kernel's cuobjdump -sass section
  // CountKeySassInstructions(sass) when cuobjdump ran, else empty.
  std::vector<std::pair<std::string, uint64_t>> key_instructions;
  std::string cubin;                           // the plain ELF cubin NVRTC produced
  std::string ptx;                             // the PTX it was assembled from
  // SASS instructions reading the SM clock (S2R / S2UR / CS2R of SR_CLOCKLO): one per
  // record point instance after unrolling, plus the prologue's and the epilogue's.
  uint64_t clock_reads = 0;
  LoopSass loops;  // CountLoopSass(sass)
  // Profiled: the copy sites that keep an observed end (SiteInfo::end_observed: no unit's
  // recorder waits on their barrier), whose issuer polls their phase barriers.
  uint32_t observed_copy_sites = 0;
};

struct KernelCostRow {
  std::string name;
  std::string arch;
  bool setmaxnreg = false;
  uint32_t threads_per_block = 0;
  KernelCompileCost off;  // unprofiled
  KernelCompileCost on;   // profiled
  std::optional<double> sass_per_record_point;
  // (SASS(on) - SASS(off)) / (clock reads(on) - 2): what profiling adds per record point
  // instance in the compiled code (the prologue's and epilogue's clock reads left out, their
  // instructions not: an upper bound). Unset without SASS.
  std::optional<double> sass_per_event;
  // The same in the loops alone (CountLoopSass): (loop SASS(on) - loop SASS(off)) / loop
  // clock reads(on); comparable where the loops unroll alike (no perturbation flagged).
  std::optional<double> sass_per_loop_event;
  double compile_ratio = 0;  // on / off compile time
  // Why off.phases and on.phases are unset although there were timing rounds (an NVRTC
  // before 12.8, a time trace that could not be written or read); empty otherwise.
  std::string phases_unavailable;
};

// What profiling changed in a variant's code beyond the record code's own instructions,
// one line each, empty when nothing did (the perturbation report of `--cost`, issue 51):
//   * a KeySassOpcodes() class whose count differs (HGMMA, UTMALDG, UTMASTG, UBLKCP,
//     LDGSTS, LDSM, STSM, HMMA, every SYNCS class, BAR: the record code has none of them
//     since trace version 5 dropped the copy-end polls; a lower count means a loop of the
//     kernel's is unrolled less);
//   * spills or stack profiled where unprofiled has none, LDL / STL added;
//   * fewer register-limited blocks per SM (RegisterLimitedBlocksPerSm).
// Each line names what changed and, where the class says it, the construct it comes from
// ("UTMALDG 8 -> 2: TMA copies (AsyncCopy with a tensor map), their loop unrolled less").
// One exemption, only for a profiled kernel with copy sites that keep an observed end
// (KernelCompileCost::observed_copy_sites > 0): SYNCS.TRYWAIT and SYNCS.PHASECHK above
// unprofiled are the record code's own (those copies' end polls and waits), listed by
// ExemptPerturbations instead.
std::vector<std::string> Perturbations(const KernelCostRow& row);
// The differences Perturbations exempts, one line each ("SYNCS.TRYWAIT 8 -> 22"; empty for
// every kernel without copy sites that keep an observed end), so that FormatKernelCost's
// perturbation line says what it did not flag, and why.
std::vector<std::string> ExemptPerturbations(const KernelCostRow& row);


struct KernelCostOptions {
  std::vector<KernelCostVariant> variants = DefaultKernelCostVariants();
  // Timed compiles per variant and mode, alternated; the median is reported. 0: no timing
  // rounds, each mode's time is that of its one measuring compile (cold: for tests).
  int repeats = 3;
  // What the profiled mode records (the default: everything the examples record). Fewer
  // record points cost less code, registers and compile time.
  RecordPolicy policy;
  std::string cuobjdump;  // empty: no SASS numbers
  // When set, each variant's emitted source (with its headers beside it), NVRTC log,
  // cubin (plain ELF: cuobjdump and nvdisasm read it) and SASS are written under this
  // directory as <variant>.<off|on>.{cu,log,cubin,sass}, spaces in the variant's name as
  // '_' (the directory must exist).
  std::string dump_dir;
  // The title's subject: "the kernels" (the project's), or a user kernel's name.
  std::string subject = "the kernels";
  // The profiled mode's trace unit (ProfileOptions::unit); unset: the plan's choice.
  std::optional<UnitSpec> unit;
};

// The GPU bundle's other examples (tools/gpu_bundle/run.sh: EXAMPLES and
// PIPELINE_VARIANTS) at their default shapes, on sm_90: tiled_gemm, reduction, and
// warp_specialized_pipeline in each of the bundle's six variants (cp.async or bulk copies,
// 2-4 stages, persistent, K = 1024 with producer or consumer delays). With
// DefaultKernelCostVariants, every kernel the bundle runs.
std::vector<KernelCostVariant> ExampleKernelCostVariants();

// The variants whose name contains `filter` (all when empty); InvalidArgument naming the
// known variants when none matches.
absl::StatusOr<std::vector<KernelCostVariant>> FilterKernelCostVariants(
    std::vector<KernelCostVariant> variants, absl::string_view filter);

// The blocks per SM that `registers` per thread leave room for (65536 registers per SM,
// allocated per warp in units of 256, at most 64 warps and 32 blocks per SM: sm_80 and
// sm_90): what profiling changes in occupancy, before shared memory's own limit.
uint32_t RegisterLimitedBlocksPerSm(uint32_t registers, uint32_t threads_per_block);

// Emits, compiles and measures every variant, unprofiled and profiled. Errors name the
// variant and mode: the builder's, the emitter's, a compile failure (InvalidArgument with
// NVRTC's log), a log without the kernel's ptxas report, cuobjdump failures.
absl::StatusOr<std::vector<KernelCostRow>> MeasureKernelCost(const KernelCostOptions& options);

// A variant of a kernel the caller built (an example's, a user's): `target` as given, or,
// when none, CudaTarget::Default() (the H100/H200's sm_90) with the variant the kernel's
// requirements need (sm_90a for wgmma and setmaxnreg). setmaxnreg from
// Kernel::fixed_register_count.
KernelCostVariant UserKernelCostVariant(std::string name, const Kernel& kernel,
                                        std::optional<CudaTarget> target = std::nullopt);

// One aligned table, a row per variant, then per variant with SASS the counts of the
// instructions that matter (KeySassOpcodes, off/on, those present in either mode), and
// lines saying how each column was measured.
std::string FormatKernelCost(const std::vector<KernelCostRow>& rows,
                             const KernelCostOptions& options);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_COST_KERNEL_COST_H_
