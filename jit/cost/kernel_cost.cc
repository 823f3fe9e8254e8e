#include "jit/cost/kernel_cost.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "base/temp_dir.h"
#include "jit/compile/compiler.h"
#include "jit/compile/nvrtc_compiler.h"
#include "jit/compile/cuobjdump.h"
#include "jit/cost/compile_phases.h"
#include "jit/cost/recorder_cost.h"
#include "jit/cuda/cuda_device.h"
#include "jit/emit/emitter.h"
#include "jit/kernels/ampere_gemm.h"
#include "jit/kernels/flash_attention.h"
#include "jit/kernels/hopper_gemm.h"
#include "jit/kernels/cluster_reduction.h"
#include "jit/kernels/reduction.h"
#include "jit/kernels/split_softmax.h"
#include "jit/kernels/tiled_gemm.h"
#include "jit/kernels/warp_specialized_pipeline.h"
#include "jit/plan/record_plan.h"

namespace warptrace {
namespace {

absl::Status WithContext(const absl::Status& status, absl::string_view context) {
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

// The number right before `suffix` in `text` ("0 bytes spill stores" -> 0); nullopt when
// `suffix` is absent or not preceded by a number.
std::optional<uint32_t> NumberBefore(absl::string_view text, absl::string_view suffix) {
  const size_t at = text.find(suffix);
  if (at == absl::string_view::npos) return std::nullopt;
  absl::string_view before = absl::StripTrailingAsciiWhitespace(text.substr(0, at));
  size_t start = before.size();
  while (start > 0 && absl::ascii_isdigit(static_cast<unsigned char>(before[start - 1]))) {
    --start;
  }
  uint32_t value = 0;
  if (!absl::SimpleAtoi(before.substr(start), &value)) return std::nullopt;
  return value;
}

// The flags added to the request CudaDevice::Load compiles: ptxas's report, and NVRTC's
// compile cache off so that ptxas runs (and reports) on every compile.
const std::vector<std::string>& VerboseFlags() {
  static const std::vector<std::string>* flags =
      new std::vector<std::string>{"--ptxas-options=-v", "--no-cache"};
  return *flags;
}

// Writes `source` with its headers, the log and the SASS of one mode under options.dump_dir.
absl::Status DumpMode(const KernelCostOptions& options, absl::string_view variant, bool profiled,
                      const KernelSource& source, const KernelCompileCost& cost) {
  std::string stem = absl::StrCat(options.dump_dir, "/", variant, profiled ? ".on" : ".off");
  std::replace(stem.begin() + static_cast<std::ptrdiff_t>(options.dump_dir.size()), stem.end(),
               ' ', '_');
  for (const EmbeddedFile& header : source.headers) {
    RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(options.dump_dir, "/", header.name),
                                        header.contents));
  }
  RETURN_IF_ERROR(WriteFileAtomically(stem + ".cu", source.source));
  RETURN_IF_ERROR(WriteFileAtomically(stem + ".log", cost.log));
  RETURN_IF_ERROR(WriteFileAtomically(stem + ".cubin", cost.cubin));
  if (!cost.sass.empty()) RETURN_IF_ERROR(WriteFileAtomically(stem + ".sass", cost.sass));
  return absl::OkStatus();
}

// One compile of `kernel` in one mode, with everything measured but the median compile
// time (MeasureKernelCost alternates the further compiles); `request` gets what it compiled.
absl::StatusOr<KernelCompileCost> MeasureMode(const Kernel& kernel, const CudaTarget& target,
                                              bool profiled, const KernelCostOptions& options,
                                              absl::string_view variant,
                                              CompileRequest& request) {
  ProfileOptions profile;
  profile.enabled = profiled;
  profile.policy = options.policy;
  if (profiled) profile.unit = options.unit;
  ASSIGN_OR_RETURN(KernelSource source, EmitKernel(kernel, profile));
  KernelCompileCost cost;
  cost.record_points = CountRecordPoints(source.source);
  if (source.layout.has_value()) {
    for (const SiteInfo& site : source.layout->sites) {
      cost.observed_copy_sites += site.end_observed ? 1 : 0;
    }
  }
  NvrtcCompiler compiler;
  ASSIGN_OR_RETURN(request, CudaCompileRequest(source, target, VerboseFlags()));
  ASSIGN_OR_RETURN(CompiledKernel compiled, compiler.Compile(request));
  cost.compile_time = compiled.compile_time;
  cost.log = std::move(compiled.log);
  std::string cubin = std::move(compiled.cubin);
  cost.ptx = std::move(compiled.ptx);
  ASSIGN_OR_RETURN(cost.ptxas, ParsePtxasInfo(cost.log, source.kernel_name));
  if (!options.cuobjdump.empty()) {
    ASSIGN_OR_RETURN(CubinListing listing, DisassembleCubin(cubin, options.cuobjdump));
    ASSIGN_OR_RETURN(absl::string_view sass, SassFunction(listing.sass, source.kernel_name));
    cost.sass = std::string(sass);
    cost.sass_instructions = CountSassInstructions(sass);
    cost.key_instructions = CountKeySassInstructions(sass);
    cost.clock_reads = CountClockReads(sass);
    cost.loops = CountLoopSass(sass);
  }
  cost.cubin = std::move(cubin);
  if (!options.dump_dir.empty()) {
    RETURN_IF_ERROR(DumpMode(options, variant, profiled, source, cost));
  }
  return cost;
}

}  // namespace

namespace {

// Compiles the unprofiled and the profiled request `repeats` times each, alternated, and
// keeps each mode's median. MeasureMode's first compiles are left out: the process's first
// NVRTC compile (the unprofiled one) pays NVRTC's one-time start, and each follows a
// cuobjdump run. The order flips every round (off on, on off, ...), so neither mode always
// runs right after the other.
// Where NVRTC writes time traces, as many rounds again follow, each compile writing one
// (CompileWithPhases), and each phase's median is kept too. The timed rounds write none:
// tracing adds its own time to every compile (about 9 ms with NVRTC 13 here), which would
// shift the compile-time column and its ratio. A traced round that fails (the trace could
// not be written or read) costs the row its phases, not the table: the reason is kept in
// KernelCostRow::phases_unavailable.
absl::Status MedianCompileTimes(const CompileRequest (&requests)[2], int repeats,
                                KernelCostRow& row) {
  auto median = [](std::vector<absl::Duration>& v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  // Per mode: the compile times, then the front end's, NVVM's and ptxas's.
  std::vector<absl::Duration> times[2][4];
  NvrtcCompiler compiler;
  for (int r = 0; r < repeats; ++r) {
    for (int k : {0, 1}) {
      const int mode = r % 2 == 0 ? k : 1 - k;
      ASSIGN_OR_RETURN(CompiledKernel compiled, compiler.Compile(requests[mode]));
      times[mode][0].push_back(compiled.compile_time);
    }
  }
  if (repeats > 0 && !NvrtcWritesTimeTraces()) {
    row.phases_unavailable = "this NVRTC writes no time traces (12.8 and later do)";
  } else if (repeats > 0) {
    absl::StatusOr<TempDir> trace_dir = TempDir::Create("warptrace-compile-phases");
    absl::Status traced = trace_dir.status();
    for (int r = 0; r < repeats && traced.ok(); ++r) {
      for (int k : {0, 1}) {
        const int mode = r % 2 == 0 ? k : 1 - k;
        absl::StatusOr<TimedCompile> timed =
            CompileWithPhases(compiler, requests[mode], trace_dir->path());
        if (!timed.ok()) {
          traced = timed.status();
          break;
        }
        times[mode][1].push_back(timed->phases.front_end);
        times[mode][2].push_back(timed->phases.nvvm);
        times[mode][3].push_back(timed->phases.ptxas);
      }
    }
    if (!traced.ok()) {
      row.phases_unavailable = std::string(traced.message());
      for (int mode : {0, 1}) {
        for (int phase = 1; phase < 4; ++phase) times[mode][phase].clear();
      }
    }
  }
  for (int mode : {0, 1}) {
    if (times[mode][0].empty()) continue;  // repeats < 1: MeasureMode's time stays
    KernelCompileCost& cost = mode == 0 ? row.off : row.on;
    cost.compile_time = median(times[mode][0]);
    if (times[mode][1].empty()) continue;
    cost.phases = CompilePhases{median(times[mode][1]), median(times[mode][2]),
                                median(times[mode][3])};
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelCostVariant> DefaultKernelCostVariants(uint32_t size) {
  std::vector<KernelCostVariant> out;
  auto hopper = [&out](std::string name, HopperGemmShape shape) {
    out.push_back({"hopper_gemm " + std::move(name), CudaTarget(9, 0, CudaTarget::Variant::kArchSpecific), /*setmaxnreg=*/true,
                   [shape]() { return HopperGemm(shape); }});
  };
  // M = N = K = size: K is the mainloop's compile-time trip count (ptxas unrolls short
  // ones), M and N bound the persistent tile loops. Persistent: an H100/H200's 132 SMs'
  // worth of blocks, or 3 when there are fewer tiles.
  const uint32_t m = size, n = size, k = size;
  const uint32_t blocks = (size / 128) * (size / 128) >= 132 ? 132 : 3;
  for (uint32_t bn : {64u, 128u, 256u}) {
    hopper(absl::StrCat("coop bn", bn, " bf16"), {.m = m, .n = n, .k = k, .bn = bn});
  }
  hopper("coop bn128 f32", {.m = m, .n = n, .k = k, .bn = 128, .out_f32 = true});
  hopper("pingpong bn128 bf16", {.m = m, .n = n, .k = k, .bn = 128, .pingpong = true});
  hopper("coop persistent bn128 bf16",
         {.m = m, .n = n, .k = k, .bn = 128, .persistent_blocks = blocks});
  hopper("pingpong persistent bn128 bf16",
         {.m = m, .n = n, .k = k, .bn = 128, .pingpong = true, .persistent_blocks = blocks});
  // 2-CTA clusters, the shared operand multicast (the bundle's --cluster=2x1 / 1x2 rows).
  hopper("cluster 2x1 bn128 bf16", {.m = m, .n = n, .k = k, .bn = 128, .cluster_m = 2});
  hopper("cluster 1x2 bn128 bf16", {.m = m, .n = n, .k = k, .bn = 128, .cluster_n = 2});
  auto attention = [&out](std::string name, FlashAttentionShape shape) {
    out.push_back({"flash_attention " + std::move(name), CudaTarget(9, 0, CudaTarget::Variant::kArchSpecific), /*setmaxnreg=*/true,
                   [shape]() { return FlashAttention(shape); }});
  };
  // Sequence = size, 16 heads (the GPU check's problem at 4096).
  for (uint32_t head_dim : {64u, 128u}) {
    const FlashAttentionShape base = {.heads = 16, .seq = size, .head_dim = head_dim};
    const std::string d = absl::StrCat("d", head_dim);
    attention(d, base);
    FlashAttentionShape causal = base;
    causal.causal = true;
    attention(d + " causal", causal);
    FlashAttentionShape pingpong = base;
    pingpong.pingpong = true;
    attention(d + " pingpong", pingpong);
    FlashAttentionShape overlap = base;
    overlap.overlap = true;
    attention(d + " overlap", overlap);
  }
  auto ampere = [&out](std::string name, AmpereGemmShape shape) {
    out.push_back({"ampere_gemm " + std::move(name), CudaTarget(8, 0), /*setmaxnreg=*/false,
                   [shape]() { return AmpereGemm(shape); }});
  };
  ampere("4 warps 3 stages", {.m = m, .n = n, .k = k, .warps = 4, .stages = 3});
  ampere("8 warps 3 stages", {.m = m, .n = n, .k = k, .warps = 8, .stages = 3});
  ampere("4 warps 2 stages", {.m = m, .n = n, .k = k, .warps = 4, .stages = 2});
  ampere("8 warps 4 stages", {.m = m, .n = n, .k = k, .warps = 8, .stages = 4});
  return out;
}

std::vector<KernelCostVariant> ExampleKernelCostVariants() {
  std::vector<KernelCostVariant> out;
  const CudaTarget sm90 = CudaTarget::Default();
  out.push_back({"tiled_gemm", sm90, /*setmaxnreg=*/false,
                 [] { return TiledGemm({.m = 64, .n = 64, .k = 128, .tile = 16}); }});
  out.push_back({"reduction", sm90, /*setmaxnreg=*/false,
                 [] { return Reduction({.n = 4096, .blocks = 8, .threads = 256}); }});
  out.push_back({"cluster_reduction", sm90, /*setmaxnreg=*/false, [] {
                   return ClusterReduction({.n = 4096, .blocks = 8, .threads = 256, .cluster = 2});
                 }});
  // split_softmax: a program of two kernels.
  out.push_back({"split_softmax partition", sm90, /*setmaxnreg=*/false,
                 [] { return SplitSoftmaxPartition({.rows = 4, .max_len = 2048}); }});
  out.push_back({"split_softmax reduce", sm90, /*setmaxnreg=*/false,
                 [] { return SplitSoftmaxReduce({.rows = 4, .max_len = 2048}); }});
  // tools/gpu_bundle/run.sh's PIPELINE_VARIANTS, as warp_specialized_pipeline's flags make
  // them (--persistent without --blocks: a third of the tiles, rounded up).
  auto pipeline = [&](std::string name, PipelineShape shape, bool persistent) {
    if (persistent) shape.persistent_blocks = std::max(1u, (PipelineTiles(shape) + 2) / 3);
    out.push_back({"warp_specialized_pipeline " + std::move(name), sm90, /*setmaxnreg=*/false,
                   [shape] { return WarpSpecializedPipeline(shape); }});
  };
  const CopyKind cp = CopyKind::kCpAsync, bulk = CopyKind::kBulk;
  pipeline("cp_async stages 3", {.stages = 3, .copy = cp}, false);
  pipeline("cp_async stages 4 persistent", {.stages = 4, .copy = cp}, true);
  pipeline("bulk stages 3", {.stages = 3, .copy = bulk}, false);
  pipeline("bulk stages 2 persistent", {.stages = 2, .copy = bulk}, true);
  pipeline("bulk stages 4 persistent k1024 producer_delay",
           {.k = 1024, .stages = 4, .copy = bulk, .producer_delay = 20000}, true);
  pipeline("cp_async stages 4 persistent k1024 consumer_delay",
           {.k = 1024, .stages = 4, .copy = cp, .consumer_delay = 20000}, true);
  return out;
}

absl::StatusOr<std::vector<KernelCostVariant>> FilterKernelCostVariants(
    std::vector<KernelCostVariant> variants, absl::string_view filter) {
  if (filter.empty()) return variants;
  std::vector<KernelCostVariant> kept;
  std::vector<std::string> names;
  for (KernelCostVariant& v : variants) {
    names.push_back(v.name);
    if (absl::StrContains(v.name, filter)) kept.push_back(std::move(v));
  }
  if (kept.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no kernel variant's name contains \"", filter, "\"; the variants are: ",
        absl::StrJoin(names, ", ")));
  }
  return kept;
}

absl::StatusOr<PtxasStats> ParsePtxasInfo(absl::string_view log, absl::string_view kernel_name) {
  // ptxas info    : Compiling entry function 'k' for 'sm_90a'
  // ptxas info    : Function properties for k
  //     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  // ptxas info    : Used 168 registers, used 1 barriers, 384 bytes cmem[0]
  const std::string header = absl::StrCat("Compiling entry function '", kernel_name, "'");
  bool in_entry = false, have_registers = false, have_spills = false;
  PtxasStats stats;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StrContains(line, "Compiling entry function '")) {
      in_entry = absl::StrContains(line, header);
      continue;
    }
    if (!in_entry) continue;
    if (std::optional<uint32_t> spill_stores = NumberBefore(line, "bytes spill stores")) {
      stats.spill_store_bytes = *spill_stores;
      stats.spill_load_bytes = NumberBefore(line, "bytes spill loads").value_or(0);
      stats.stack_frame_bytes = NumberBefore(line, "bytes stack frame").value_or(0);
      have_spills = NumberBefore(line, "bytes spill loads").has_value();
    }
    if (absl::StrContains(line, "Used ")) {
      if (std::optional<uint32_t> registers = NumberBefore(line, "registers")) {
        stats.registers = *registers;
        have_registers = true;
      }
    }
  }
  if (!have_registers || !have_spills) {
    return absl::NotFoundError(absl::StrFormat(
        "no ptxas report (\"Used N registers\" and \"N bytes spill stores, N bytes spill "
        "loads\") for entry %s in the log (compiled with --ptxas-options=-v and "
        "--no-cache?): %s",
        kernel_name, log));
  }
  return stats;
}

std::string NonInfoLogLines(absl::string_view log) {
  std::vector<absl::string_view> out;
  bool after_info = false;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (trimmed.empty()) continue;
    if (absl::StartsWith(line, "ptxas info")) {
      after_info = true;
      continue;
    }
    // The line after "ptxas info : Function properties for k": NVRTC 13 writes it
    // "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
    // ptxas alone indents it.
    absl::string_view rest = trimmed;
    if (absl::ConsumePrefix(&rest, "ptxas")) {
      rest = absl::StripLeadingAsciiWhitespace(rest);
      absl::ConsumePrefix(&rest, ".");
      rest = absl::StripLeadingAsciiWhitespace(rest);
    }
    if (after_info && absl::StrContains(rest, "bytes stack frame")) {
      continue;
    }
    after_info = false;
    out.push_back(line);
  }
  return absl::StrJoin(out, "\n");
}

uint32_t CountRecordPoints(absl::string_view source) {
  uint32_t count = 0;
  for (absl::string_view call :
       {"warptrace::recorder::Record(", "warptrace::recorder::RecordWithPayload(",
        "warptrace::recorder::RecordAt<", "warptrace::recorder::RecordWithPayloadAt<"}) {
    for (size_t at = source.find(call); at != absl::string_view::npos;
         at = source.find(call, at + call.size())) {
      ++count;
    }
  }
  return count;
}


namespace {

// The kernel construct a key SASS class comes from, for the perturbation report.
absl::string_view ConstructOf(absl::string_view opcode) {
  static constexpr std::pair<absl::string_view, absl::string_view> kConstructs[] = {
      {"HGMMA", "wgmma groups (MmaGroup)"},
      {"UTMALDG", "TMA loads (AsyncCopy with a tensor map)"},
      {"UTMASTG", "TMA stores (TmaStore)"},
      {"UBLKCP", "bulk copies (AsyncCopy on a phase barrier)"},
      {"LDGSTS", "cp.async copies (AsyncCopy)"},
      {"LDSM", "ldmatrix (the kernel's statements)"},
      {"STSM", "stmatrix (the kernel's statements)"},
      {"HMMA", "mma.sync (the kernel's statements)"},
      {"SYNCS.EXCH", "phase barrier inits (PhaseBarriers)"},
      {"SYNCS.ARRIVE", "phase barrier arrivals (Arrive)"},
      {"SYNCS.ARRIVE.RED", "phase barrier expect_tx and remote arrivals (AsyncCopy on a phase "
                           "barrier, Arrive to another CTA)"},
      {"SYNCS.TRYWAIT", "phase barrier waits (WaitPhase)"},
      {"SYNCS.PHASECHK", "phase barrier tests (test_wait)"},
      {"SYNCS", "other phase barrier instructions"},
      {"BAR", "barriers (Barrier, NamedBarrier)"},
      {"LDL", "local memory loads (spills, stack arrays)"},
      {"STL", "local memory stores (spills, stack arrays)"},
  };
  for (const auto& [name, construct] : kConstructs) {
    if (name == opcode) return construct;
  }
  return "the kernel's code";
}

// Whether Perturbations exempts key class `opcode` going from `off` to `on`: the waits and
// tests of the copy-end polls, in a kernel whose copy sites keep an observed end.
bool ExemptKeyClass(const KernelCostRow& row, absl::string_view opcode, uint64_t off,
                    uint64_t on) {
  return row.on.observed_copy_sites > 0 && on > off &&
         (opcode == "SYNCS.TRYWAIT" || opcode == "SYNCS.PHASECHK");
}

// The key-class lines of Perturbations (`exempt`: the lines it exempts instead).
void KeyClassPerturbations(const KernelCostRow& row, std::vector<std::string>& out,
                           bool exempt = false) {
  if (row.off.key_instructions.size() != row.on.key_instructions.size()) return;
  for (size_t i = 0; i < row.on.key_instructions.size(); ++i) {
    const std::string& opcode = row.on.key_instructions[i].first;
    const uint64_t off = row.off.key_instructions[i].second;
    const uint64_t on = row.on.key_instructions[i].second;
    if (on == off) continue;
    // The record code has no instruction of these classes (trace version 5: no copy-end
    // polls) but where copy sites keep an observed end, so any other difference is the
    // kernel's own. Local memory is never the record code's own.
    if (ExemptKeyClass(row, opcode, off, on) != exempt) continue;
    if (exempt) {
      out.push_back(absl::StrFormat("%s %d -> %d", opcode, off, on));
      continue;
    }
    if ((opcode == "LDL" || opcode == "STL") && on < off) continue;
    const std::string why =
        opcode == "LDL" || opcode == "STL" ? "local memory the unprofiled kernel does not use"
        : on < off ? "fewer than unprofiled: a loop around them is unrolled less"
        : opcode == "SYNCS.ARRIVE.RED"
            ? "more than unprofiled: expect_tx ptxas merges unprofiled (a record point between "
              "two expect_tx), or a loop around them unrolled more"
            : "more than unprofiled: a loop around them is unrolled more";
    out.push_back(absl::StrFormat("%s %d -> %d: %s, %s", opcode, off, on, ConstructOf(opcode),
                                  why));
  }
}

}  // namespace

std::vector<std::string> ExemptPerturbations(const KernelCostRow& row) {
  std::vector<std::string> out;
  KeyClassPerturbations(row, out, /*exempt=*/true);
  return out;
}

std::vector<std::string> Perturbations(const KernelCostRow& row) {
  std::vector<std::string> out;
  KeyClassPerturbations(row, out);
  const PtxasStats& off = row.off.ptxas;
  const PtxasStats& on = row.on.ptxas;
  if (on.spill_store_bytes > off.spill_store_bytes || on.spill_load_bytes > off.spill_load_bytes) {
    out.push_back(absl::StrFormat("spills %d/%d -> %d/%d bytes (stores/loads): registers the "
                                  "record code holds",
                                  off.spill_store_bytes, off.spill_load_bytes,
                                  on.spill_store_bytes, on.spill_load_bytes));
  }
  if (on.stack_frame_bytes > off.stack_frame_bytes) {
    out.push_back(absl::StrFormat("stack frame %d -> %d bytes", off.stack_frame_bytes,
                                  on.stack_frame_bytes));
  }
  // setmaxnreg kernels run one block per SM whatever ptxas allocates.
  if (!row.setmaxnreg) {
    const uint32_t blocks_off = RegisterLimitedBlocksPerSm(off.registers, row.threads_per_block);
    const uint32_t blocks_on = RegisterLimitedBlocksPerSm(on.registers, row.threads_per_block);
    if (blocks_on < blocks_off) {
      out.push_back(absl::StrFormat("blocks/SM %d -> %d: %d -> %d registers per thread",
                                    blocks_off, blocks_on, off.registers, on.registers));
    }
  }
  return out;
}

KernelCostVariant UserKernelCostVariant(std::string name, const Kernel& kernel,
                                        std::optional<CudaTarget> target) {
  KernelCostVariant variant;
  variant.name = std::move(name);
  // Without a target: the default one, with the variant the kernel's instructions need.
  variant.target = target.has_value()
                       ? *target
                       : kernel.requirements.Resolve(CudaTarget::Default())
                             .value_or(CudaTarget::Default());
  variant.setmaxnreg = kernel.fixed_register_count;
  variant.build = [kernel]() -> absl::StatusOr<Kernel> { return kernel; };
  return variant;
}

uint32_t RegisterLimitedBlocksPerSm(uint32_t registers, uint32_t threads_per_block) {
  if (registers == 0 || threads_per_block == 0) return 0;
  const uint32_t per_warp = (registers * 32 + 255) / 256 * 256;
  const uint32_t warps = std::min<uint32_t>(65536 / per_warp, 64);
  const uint32_t warps_per_block = (threads_per_block + 31) / 32;
  return std::min<uint32_t>(warps / warps_per_block, 32);
}

absl::StatusOr<std::vector<KernelCostRow>> MeasureKernelCost(const KernelCostOptions& options) {
  std::vector<KernelCostRow> rows;
  for (const KernelCostVariant& variant : options.variants) {
    absl::StatusOr<Kernel> kernel = variant.build();
    if (!kernel.ok()) return WithContext(kernel.status(), variant.name);
    KernelCostRow row;
    row.name = variant.name;
    row.arch = variant.target.ToString();
    row.setmaxnreg = variant.setmaxnreg;
    row.threads_per_block = static_cast<uint32_t>(kernel->ThreadsPerBlock());
    CompileRequest requests[2];
    for (bool profiled : {false, true}) {
      absl::StatusOr<KernelCompileCost> cost =
          MeasureMode(*kernel, variant.target, profiled, options, variant.name,
                      requests[profiled ? 1 : 0]);
      if (!cost.ok()) {
        return WithContext(cost.status(), absl::StrCat(variant.name, profiled ? ", profiled"
                                                                              : ", unprofiled"));
      }
      (profiled ? row.on : row.off) = *std::move(cost);
    }
    absl::Status timed = MedianCompileTimes(requests, options.repeats, row);
    if (!timed.ok()) return WithContext(timed, variant.name);
    if (row.on.sass_instructions && row.off.sass_instructions && row.on.record_points > 0) {
      row.sass_per_record_point = (static_cast<double>(*row.on.sass_instructions) -
                                   static_cast<double>(*row.off.sass_instructions)) /
                                  row.on.record_points;
    }
    if (row.on.sass_instructions && row.off.sass_instructions && row.on.clock_reads > 2) {
      row.sass_per_event = (static_cast<double>(*row.on.sass_instructions) -
                            static_cast<double>(*row.off.sass_instructions)) /
                           static_cast<double>(row.on.clock_reads - 2);
    }
    if (row.on.loops.clock_reads > 0) {
      row.sass_per_loop_event = (static_cast<double>(row.on.loops.instructions) -
                                 static_cast<double>(row.off.loops.instructions)) /
                                static_cast<double>(row.on.loops.clock_reads);
    }
    const double off_s = absl::ToDoubleSeconds(row.off.compile_time);
    row.compile_ratio = off_s > 0 ? absl::ToDoubleSeconds(row.on.compile_time) / off_s : 0;
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

// FormatKernelCost's "  NAME perturbation: ..." line of `r`, its exemptions named.
std::string PerturbationLine(const KernelCostRow& r) {
  const std::vector<std::string> flags = Perturbations(r);
  const std::vector<std::string> exempt = ExemptPerturbations(r);
  return absl::StrCat(
      "  ", r.name, " perturbation: ",
      flags.empty() ? "none" : absl::StrCat("FLAGGED: ", absl::StrJoin(flags, "; ")),
      exempt.empty() ? ""
                     : absl::StrFormat(" (exempt: %s: the copy-end polls of %d copy sites "
                                       "that keep an observed end, no trace unit's recorder "
                                       "waiting on their barrier)",
                                       absl::StrJoin(exempt, ", "), r.on.observed_copy_sites),
      "\n");
}

// FormatKernelCost's "  NAME compile ms by phase off/on: ..." line of `r`, or why it has
// none; empty without timing rounds.
std::string PhasesLine(const KernelCostRow& r) {
  if (!r.phases_unavailable.empty()) {
    return absl::StrCat("  ", r.name, " compile ms by phase: not measured: ",
                        r.phases_unavailable, "\n");
  }
  if (!r.off.phases.has_value() || !r.on.phases.has_value()) return "";
  auto phase = [](absl::string_view name, absl::Duration off, absl::Duration on) {
    const double a = absl::ToDoubleMilliseconds(off), b = absl::ToDoubleMilliseconds(on);
    return absl::StrFormat("%s %.1f/%.1f (%+.1f)", name, a, b, b - a);
  };
  const CompilePhases& off = *r.off.phases;
  const CompilePhases& on = *r.on.phases;
  return absl::StrCat("  ", r.name, " compile ms by phase off/on (extra): ",
                      phase("front end", off.front_end, on.front_end), ", ",
                      phase("NVVM", off.nvvm, on.nvvm), ", ", phase("ptxas", off.ptxas, on.ptxas),
                      "\n");
}

// FormatKernelCost's closing lines: how each column was measured, the phases' sentence
// when some row has phases, and where the SASS came from.
std::string Legend(const std::vector<KernelCostRow>& rows, const KernelCostOptions& options) {
  std::string out;
  absl::StrAppend(
      &out,
      "Columns are off/on. regs: ptxas registers per thread ((smr): the kernel's warpgroups "
      "set their own with setmaxnreg); blocks/SM: the resident blocks per SM the register "
      "count leaves room for (before shared memory's limit); spill st/ld: bytes of spill stores/loads, off then on; stack: "
      "bytes of stack frame (local memory); "
      "SASS/pt = (SASS(on) - SASS(off)) / record points, the record points being the "
      "Record/RecordWithPayload calls in the emitted source (static); SASS/ev = (SASS(on) - "
      "SASS(off)) / (clock reads(on) - 2), per record point instance in the compiled code "
      "(prologue and epilogue instructions included: an upper bound); loop/ev = the same "
      "within the kernel's loops alone (natural loops of backward branches, CountLoopSass: the "
      "prologue and epilogue apart, the epilogue's own slot loop too); ratio = compile "
      "time on/off. SASS off/on: instructions that matter (HGMMA wgmma, UTMALDG/UTMASTG "
      "TMA load/store, UBLKCP bulk copy, LDGSTS cp.async, LDSM/STSM ldmatrix/stmatrix, "
      "HMMA mma.sync, mbarrier SYNCS.EXCH inits, SYNCS.ARRIVE arrivals, SYNCS.ARRIVE.RED "
      "expect_tx and remote arrivals, SYNCS.TRYWAIT waits (an out-of-line retry block is the "
      "same wait), SYNCS.PHASECHK tests, BAR barriers, LDL/STL local memory), static counts. "
      "perturbation: what profiling changed beyond the record code's own instructions "
      "(jit/cost/kernel_cost.h, Perturbations): FLAGGED lines name the class, the construct "
      "and why.\n");
  if (std::any_of(rows.begin(), rows.end(),
                  [](const KernelCostRow& r) { return r.on.phases.has_value(); })) {
    absl::StrAppend(
        &out,
        "compile ms by phase: each phase's median over as many compiles again, alternated, "
        "each writing NVRTC's -fdevice-time-trace (jit/cost/compile_phases.h; the "
        "compile-time column's compiles write none: tracing takes time of its own): front "
        "end = C++ parsing, template "
        "instantiation and IR generation (before libNVVM starts), NVVM = libNVVM (link, "
        "optimize, PTX), ptxas = PTX to SASS; the rest of a compile is NVRTC's own set-up.\n");
  }
  if (options.cuobjdump.empty()) {
    absl::StrAppend(&out, "SASS columns skipped: no cuobjdump.\n");
  } else {
    absl::StrAppend(&out, "SASS from ", options.cuobjdump, " -sass.\n");
  }
  return out;
}

}  // namespace

std::string FormatKernelCost(const std::vector<KernelCostRow>& rows,
                             const KernelCostOptions& options) {
  std::string out = absl::StrFormat(
      "What recording costs %s (off = unprofiled, on = profiled%s; NVRTC "
      "--ptxas-options=-v --no-cache; compile time = median of %d, the modes alternated):\n",
      options.subject,
      options.policy == RecordPolicy{}
          ? " with default options"
          : absl::StrFormat(" with handoffs %s, mma groups %s, kernel site %s",
                            options.policy.handoffs ? "on" : "off",
                            options.policy.mma_groups ? "on" : "off",
                            options.policy.kernel ? "on" : "off"),
      options.repeats);
  absl::StrAppendFormat(&out, "%-42s %-6s %9s %9s %15s %7s %11s %10s %7s %7s %8s %9s %11s %5s\n",
                        "kernel", "arch", "regs", "blocks/SM", "spill st/ld", "stack", "SASS",
                        "record pts", "SASS/pt", "SASS/ev", "loop/ev", "+regs", "compile ms",
                        "ratio");
  auto spills = [](const PtxasStats& s) {
    return absl::StrCat(s.spill_store_bytes, "/", s.spill_load_bytes);
  };
  for (const KernelCostRow& r : rows) {
    const int added = static_cast<int>(r.on.ptxas.registers) -
                      static_cast<int>(r.off.ptxas.registers);
    absl::StrAppendFormat(
        &out, "%-42s %-6s %9s %9s %15s %7s %11s %10d %7s %7s %8s %9s %11s %5.2f\n", r.name,
        r.arch,
        absl::StrCat(r.off.ptxas.registers, "/", r.on.ptxas.registers),
        // setmaxnreg kernels run one block per SM (their __launch_bounds__(threads, 1)).
        r.setmaxnreg ? std::string("1/1")
                     : absl::StrCat(RegisterLimitedBlocksPerSm(r.off.ptxas.registers,
                                                               r.threads_per_block),
                                    "/",
                                    RegisterLimitedBlocksPerSm(r.on.ptxas.registers,
                                                               r.threads_per_block)),
        absl::StrCat(spills(r.off.ptxas), " ", spills(r.on.ptxas)),
        absl::StrCat(r.off.ptxas.stack_frame_bytes, "/", r.on.ptxas.stack_frame_bytes),
        r.on.sass_instructions
            ? absl::StrCat(*r.off.sass_instructions, "/", *r.on.sass_instructions)
            : "-",
        r.on.record_points,
        r.sass_per_record_point ? absl::StrFormat("%.1f", *r.sass_per_record_point) : "-",
        r.sass_per_event ? absl::StrFormat("%.1f", *r.sass_per_event) : "-",
        r.sass_per_loop_event ? absl::StrFormat("%.1f", *r.sass_per_loop_event) : "-",
        absl::StrCat(added >= 0 ? "+" : "", added, r.setmaxnreg ? " (smr)" : ""),
        absl::StrFormat("%.0f/%.0f", absl::ToDoubleMilliseconds(r.off.compile_time),
                        absl::ToDoubleMilliseconds(r.on.compile_time)),
        r.compile_ratio);
  }
  for (const KernelCostRow& r : rows) {
    if (r.on.key_instructions.empty() ||
        r.on.key_instructions.size() != r.off.key_instructions.size()) {
      continue;
    }
    std::vector<std::string> present;
    for (size_t i = 0; i < r.on.key_instructions.size(); ++i) {
      const uint64_t off = r.off.key_instructions[i].second;
      const uint64_t on = r.on.key_instructions[i].second;
      if (off > 0 || on > 0) {
        present.push_back(absl::StrCat(r.on.key_instructions[i].first, " ", off, "/", on));
      }
    }
    absl::StrAppend(&out, "  ", r.name, " SASS off/on: ",
                    present.empty() ? absl::StrCat("none of ", absl::StrJoin(KeySassOpcodes(), " "))
                                    : absl::StrJoin(present, ", "),
                    "\n");
  }
  for (const KernelCostRow& r : rows) absl::StrAppend(&out, PerturbationLine(r));
  for (const KernelCostRow& r : rows) absl::StrAppend(&out, PhasesLine(r));
  absl::StrAppend(&out, Legend(rows, options));
  return out;
}

}  // namespace warptrace
