#include "jit/cost/recorder_cost.h"

#include <nvrtc.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
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
#include "base/status_macros.h"
#include "format/embedded_headers.h"
#include "jit/compile/nvrtc_program.h"
#include "jit/compile/nvrtc_status.h"

namespace warptrace {
namespace {

std::string Trim(absl::string_view s) { return std::string(absl::StripAsciiWhitespace(s)); }

// The kernel a PTX line declares (".visible .entry k(" -> "k"); nullopt for other lines.
std::optional<absl::string_view> PtxEntryName(absl::string_view line) {
  const size_t entry = line.find(".entry ");
  if (entry == absl::string_view::npos) return std::nullopt;
  absl::string_view name = absl::StripLeadingAsciiWhitespace(line.substr(entry + 7));
  return name.substr(0, name.find_first_of("( \t\r"));
}

// The part of `listing` from the line that is (trimmed) `header` up to the next line that
// starts (trimmed) with `next_prefix`, or the end. NotFound naming `what` when no line is
// `header`.
absl::StatusOr<absl::string_view> ListingSection(absl::string_view listing,
                                                 absl::string_view header,
                                                 absl::string_view next_prefix,
                                                 absl::string_view what) {
  const char* begin = nullptr;
  for (absl::string_view line : absl::StrSplit(listing, '\n')) {
    absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (begin == nullptr) {
      if (trimmed == header) begin = line.data();
    } else if (absl::StartsWith(trimmed, next_prefix)) {
      return absl::string_view(begin, static_cast<size_t>(line.data() - begin));
    }
  }
  if (begin == nullptr) {
    return absl::NotFoundError(absl::StrCat("no \"", header, "\" in ", what));
  }
  return absl::string_view(begin, static_cast<size_t>(listing.data() + listing.size() - begin));
}

std::string ConfigLiteral(const RecorderCostCase& c) {
  return absl::StrFormat(
      "constexpr warptrace::recorder::Config kWtConfig = {%uu, %uu, %uu, %uu, %uu, %uu, 0u, "
      "0xffffffffu, 1u};",
      c.unit_threads, c.unit_first_thread, c.recorder_offset, c.units_per_block, c.capacity,
      c.shared ? 1u : 0u);
}

}  // namespace

std::vector<RecorderCostCase> DefaultRecorderCostCases() {
  std::vector<RecorderCostCase> cases;
  for (bool shared : {false, true}) {
    const std::string p = shared ? "shared" : "global";
    // {name, block_threads, unit_threads, first, recorder_offset, units, capacity, shared}
    cases.push_back({"warp/" + p, 256, 32, 0, 0, 8, 64, shared});
    cases.push_back({"warpgroup/" + p, 256, 128, 0, 0, 2, 64, shared});
    cases.push_back({"block/" + p, 256, 256, 0, 0, 1, 64, shared});
    cases.push_back({"custom/" + p, 256, 64, 128, 3, 1, 64, shared});
  }
  return cases;
}

std::vector<RecorderCostCase> PayloadRecorderCostCases() {
  std::vector<RecorderCostCase> cases;
  for (bool shared : {false, true}) {
    const std::string p = shared ? "shared" : "global";
    cases.push_back({"warp/" + p + "+payload", 256, 32, 0, 0, 8, 128, shared, true});
    cases.push_back({"warpgroup/" + p + "+payload", 256, 128, 0, 0, 2, 128, shared, true});
  }
  return cases;
}

std::string RecorderCostKernelName(const RecorderCostCase& c, absl::string_view variant) {
  std::string name = absl::StrCat("recorder_cost_", c.name, "_", variant);
  for (char& ch : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
  }
  return name;
}

std::string RecorderCostKernelSource(const RecorderCostCase& c, uint32_t events,
                                     bool profiled, absl::string_view kernel_name) {
  std::string records;
  for (uint32_t k = 0; k < events; ++k) {
    if (c.payload) {
      // Payload words that vary at run time, as a barrier's instance and phase do.
      absl::StrAppendFormat(&records,
                            "    warptrace::recorder::RecordWithPayload(wt, "
                            "warptrace::abi::MakeTag(%uu, %s), %uu, static_cast<unsigned>(i));\n",
                            k / 2, k % 2 == 1 ? "true" : "false", k);
      continue;
    }
    absl::StrAppendFormat(&records,
                          "    warptrace::recorder::Record(wt, warptrace::abi::MakeTag(%uu, "
                          "%s));\n",
                          k / 2, k % 2 == 1 ? "true" : "false");
  }
  const std::string smem =
      c.shared ? absl::StrFormat("  __shared__ __align__(8) unsigned int wt_smem[%u];\n",
                                 c.units_per_block * c.capacity * 2)
               : "";
  return absl::StrCat(
      "namespace ", kernel_name, "_ns {\n", profiled ? ConfigLiteral(c) : "", "\n",
      "extern \"C\" __global__ void __launch_bounds__(", c.block_threads, ") ", kernel_name,
      "(float* data, int n", profiled ? ", unsigned int* warptrace_trace" : "", ") {\n",
      "  const unsigned int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * "
      "threadIdx.z);\n",
      "  const unsigned int bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * "
      "blockIdx.z);\n",
      profiled ? absl::StrCat(smem,
                              "  warptrace::recorder::UnitState wt;\n"
                              "  warptrace::recorder::Prologue(wt, kWtConfig, warptrace_trace, ",
                              c.shared ? "wt_smem" : "nullptr", ", tid, bid);\n")
               : "",
      "  float acc = data[bid * blockDim.x + tid];\n",
      "#pragma unroll 1\n",
      "  for (int i = 0; i < n; ++i) {\n", profiled ? records : "",
      "    acc = acc * 0.5f + 1.0f;\n",
      "  }\n",
      "  data[bid * blockDim.x + tid] = acc;\n",
      profiled ? "  warptrace::recorder::Epilogue(wt, kWtConfig, warptrace_trace, tid, bid);\n" : "", "}\n",
      "}  // namespace ", kernel_name, "_ns\n");
}

std::string RecorderCostProgramSource(const std::vector<std::string>& kernel_sources) {
  return absl::StrCat("#include \"recorder.cuh\"\n", absl::StrJoin(kernel_sources, ""));
}

absl::StatusOr<absl::string_view> PtxEntry(absl::string_view ptx,
                                           absl::string_view kernel_name) {
  // ".visible .entry recorder_cost_warp_global_k1(" starts the kernel; its body is the
  // first brace-delimited block after it (inline asm scopes nest inside).
  const char* begin = nullptr;
  int depth = 0;
  bool opened = false;
  for (absl::string_view line : absl::StrSplit(ptx, '\n')) {
    if (begin == nullptr) {
      if (PtxEntryName(line) != kernel_name) continue;
      begin = line.data();
    }
    for (char ch : line.substr(0, line.find("//"))) {
      if (ch == '{') {
        ++depth;
        opened = true;
      } else if (ch == '}') {
        --depth;
      }
    }
    if (opened && depth <= 0) {
      return absl::string_view(begin, static_cast<size_t>(line.data() + line.size() - begin));
    }
  }
  if (begin == nullptr) {
    return absl::NotFoundError(absl::StrCat("no \".entry ", kernel_name, "\" in the PTX"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("the PTX ends inside the body of .entry ", kernel_name));
}

uint64_t CountPtxInstructions(absl::string_view ptx) {
  uint64_t count = 0;
  int depth = 0;  // brace depth: instructions live inside function bodies
  for (absl::string_view raw : absl::StrSplit(ptx, '\n')) {
    std::string line = Trim(raw);
    if (const size_t comment = line.find("//"); comment != std::string::npos) {
      line = Trim(line.substr(0, comment));
    }
    if (line.empty()) continue;
    for (char ch : line) {
      if (ch == '{') ++depth;
      if (ch == '}') --depth;
    }
    if (depth <= 0 || line == "{" || line == "}") continue;
    if (line.back() != ';') continue;  // labels ("$L__BB0_2:") and multi-line headers
    if (line[0] == '.') continue;      // .reg, .shared, .local, .pragma declarations
    // Inline asm may open a scope on the same line: "{ .reg .pred p; ... }" is rare in
    // the recorder, and each statement there ends in ';' on its own line.
    ++count;
  }
  return count;
}

uint64_t CountSassInstructions(absl::string_view sass) {
  // Lines look like "        /*0070*/                   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;"
  // Each kernel ends "EXIT ; BRA <own address> ;" followed by NOP padding to a 128-byte
  // boundary: the self-branch and the padding never execute. NOPs before it are scheduling
  // slots (e.g. after S2UR) and count.
  uint64_t count = 0;
  bool in_padding = false;
  for (absl::string_view raw : absl::StrSplit(sass, '\n')) {
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (absl::StartsWith(line, ".text.") || absl::StartsWith(line, "Function :")) {
      in_padding = false;  // the next kernel
      continue;
    }
    if (!absl::ConsumePrefix(&line, "/*")) continue;
    const size_t close = line.find("*/");
    if (close == absl::string_view::npos) continue;
    absl::string_view address = line.substr(0, close);
    if (address.empty() ||
        address.find_first_not_of("0123456789abcdef") != absl::string_view::npos) {
      continue;
    }
    absl::string_view instruction = absl::StripAsciiWhitespace(line.substr(close + 2));
    if (instruction.empty() || instruction[0] == '/') continue;  // encoding-only lines
    // Drop the ';' and the encoding comment after it ("BRA 0x60; /* 0xffff... */").
    instruction = absl::StripTrailingAsciiWhitespace(instruction.substr(0, instruction.find(';')));
    if (in_padding) continue;
    absl::string_view opcode = instruction;
    if (absl::ConsumePrefix(&opcode, "@")) {
      // Predicate guard: "@P0 STG.E.64 [...]" or "@!P0 ..."
      const size_t space = opcode.find(' ');
      if (space == absl::string_view::npos) continue;
      opcode = absl::StripLeadingAsciiWhitespace(opcode.substr(space));
    }
    if (absl::StartsWith(opcode, "BRA ") || absl::StartsWith(opcode, "BRA\t")) {
      absl::string_view target = absl::StripAsciiWhitespace(opcode.substr(3));
      absl::ConsumePrefix(&target, "0x");
      // Compare as numbers: "0x800" vs "0800".
      uint64_t from = 0, to = 0;
      if (absl::SimpleHexAtoi(address, &from) && absl::SimpleHexAtoi(target, &to) &&
          from == to) {
        in_padding = true;
        continue;
      }
    }
    ++count;
  }
  return count;
}

absl::StatusOr<uint32_t> ParseRegisterCount(absl::string_view res_usage) {
  const size_t at = res_usage.find("REG:");
  if (at == absl::string_view::npos) {
    return absl::NotFoundError(
        absl::StrCat("no \"REG:\" in cuobjdump -res-usage output: ", res_usage));
  }
  absl::string_view rest = res_usage.substr(at + 4);
  const size_t end = rest.find_first_not_of("0123456789");
  uint32_t registers = 0;
  if (!absl::SimpleAtoi(rest.substr(0, end), &registers)) {
    return absl::NotFoundError(
        absl::StrCat("unreadable register count in cuobjdump output: ", res_usage));
  }
  return registers;
}

absl::StatusOr<CostProgram> CompileForCost(const std::string& source,
                                              const CudaTarget& target) {
  const std::string arch = target.ToString();
  std::vector<const char*> header_sources, header_names;
  for (const EmbeddedFile& f : EmbeddedDeviceHeaders()) {
    header_sources.push_back(f.contents.c_str());
    header_names.push_back(f.name.c_str());
  }
  NvrtcProgram prog;
  RETURN_IF_ERROR(ToStatus(nvrtcCreateProgram(prog.out(), source.c_str(), "recorder_cost.cu",
                                              static_cast<int>(header_sources.size()),
                                              header_sources.data(), header_names.data()),
                           "creating the recorder_cost program"));
  const std::string arch_option = "--gpu-architecture=" + arch;
  const char* options[] = {arch_option.c_str(), "--std=c++17"};
  const nvrtcResult compiled = nvrtcCompileProgram(prog.get(), 2, options);
  CostProgram out;
  ASSIGN_OR_RETURN(out.log, prog.Log("the recorder_cost kernel"));
  RETURN_IF_ERROR(ToStatus(compiled, absl::StrCat("compiling the recorder_cost kernel for ", arch),
                           out.log));
  size_t size = 0;
  RETURN_IF_ERROR(ToStatus(nvrtcGetPTXSize(prog.get(), &size), "getting the PTX size"));
  out.ptx.assign(size, '\0');
  RETURN_IF_ERROR(ToStatus(nvrtcGetPTX(prog.get(), out.ptx.data()), "getting the PTX"));
  RETURN_IF_ERROR(ToStatus(nvrtcGetCUBINSize(prog.get(), &size),
                           "getting the cubin size (is the arch a real sm_XX?)"));
  out.cubin.assign(size, '\0');
  RETURN_IF_ERROR(ToStatus(nvrtcGetCUBIN(prog.get(), out.cubin.data()), "getting the cubin"));
  return out;
}

absl::StatusOr<absl::string_view> SassFunction(absl::string_view sass,
                                               absl::string_view kernel_name) {
  // "\t\tFunction : recorder_cost_warp_global_k1", the instructions, "\t\t..........".
  return ListingSection(sass, absl::StrCat("Function : ", kernel_name), "Function :",
                        "cuobjdump -sass output");
}

absl::StatusOr<absl::string_view> ResUsageFunction(absl::string_view res_usage,
                                                   absl::string_view kernel_name) {
  // " Function recorder_cost_warp_global_k1:\n  REG:26 STACK:0 SHARED:0 ..."
  return ListingSection(res_usage, absl::StrCat("Function ", kernel_name, ":"), "Function ",
                        "cuobjdump -res-usage output");
}


absl::StatusOr<SassStats> KernelSassStats(const CubinListing& listing,
                                          absl::string_view kernel_name) {
  ASSIGN_OR_RETURN(absl::string_view sass, SassFunction(listing.sass, kernel_name));
  ASSIGN_OR_RETURN(absl::string_view usage, ResUsageFunction(listing.res_usage, kernel_name));
  SassStats stats;
  stats.instructions = CountSassInstructions(sass);
  ASSIGN_OR_RETURN(stats.registers, ParseRegisterCount(usage));
  return stats;
}


namespace {

// The three kernels of a case: no recorder, K1 and K2 Record calls per iteration.
constexpr int kVariants = 3;
constexpr absl::string_view kVariantNames[kVariants] = {"off", "k1", "k2"};

// What one kernel counts.
struct KernelCost {
  uint64_t ptx = 0;
  std::optional<SassStats> sass;
};

absl::Status WithContext(const absl::Status& status, absl::string_view context) {
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

// The kernel names of every case, kVariants per case in case order. InvalidArgument when
// two cases make the same name (their names differ only in non-identifier characters).
absl::StatusOr<std::vector<std::string>> KernelNames(
    const std::vector<RecorderCostCase>& cases) {
  std::vector<std::string> names;
  std::map<std::string, const RecorderCostCase*> owner;
  for (const RecorderCostCase& c : cases) {
    for (absl::string_view variant : kVariantNames) {
      names.push_back(RecorderCostKernelName(c, variant));
      auto [it, inserted] = owner.emplace(names.back(), &c);
      if (!inserted) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "cases \"%s\" and \"%s\" both make the kernel name %s: give them names that "
            "differ in letters, digits or '_'",
            it->second->name, c.name, names.back()));
      }
    }
  }
  return names;
}

// The source of the one program that holds every kernel of every case.
std::string ProgramSource(const RecorderCostOptions& options,
                          const std::vector<std::string>& names) {
  const uint32_t events[kVariants] = {0, options.events_low, options.events_high};
  std::vector<std::string> kernels;
  for (size_t i = 0; i < names.size(); ++i) {
    const int variant = static_cast<int>(i % kVariants);
    kernels.push_back(RecorderCostKernelSource(options.cases[i / kVariants], events[variant],
                                               /*profiled=*/variant != 0, names[i]));
  }
  return RecorderCostProgramSource(kernels);
}

// One kernel's counts, read from the program's PTX and (when cuobjdump ran) its listings.
absl::StatusOr<KernelCost> MeasureKernel(const CostProgram& program,
                                         const std::optional<CubinListing>& listing,
                                         absl::string_view kernel_name) {
  KernelCost cost;
  ASSIGN_OR_RETURN(absl::string_view ptx, PtxEntry(program.ptx, kernel_name));
  cost.ptx = CountPtxInstructions(ptx);
  if (listing.has_value()) {
    ASSIGN_OR_RETURN(cost.sass, KernelSassStats(*listing, kernel_name));
  }
  return cost;
}

// The row of a case from its off, K1 and K2 kernels' counts.
RecorderCostRow CostRow(const std::string& name, const KernelCost (&costs)[kVariants],
                        const RecorderCostOptions& options) {
  const double dk = options.events_high - options.events_low;
  const KernelCost& off = costs[0];
  const KernelCost& low = costs[1];
  const KernelCost& high = costs[2];
  RecorderCostRow row;
  row.name = name;
  row.ptx_per_event = (static_cast<double>(high.ptx) - static_cast<double>(low.ptx)) / dk;
  row.ptx_fixed = static_cast<int64_t>(low.ptx) - static_cast<int64_t>(off.ptx) -
                  static_cast<int64_t>(row.ptx_per_event * options.events_low + 0.5);
  if (off.sass && low.sass && high.sass) {
    const double per_event = (static_cast<double>(high.sass->instructions) -
                              static_cast<double>(low.sass->instructions)) /
                             dk;
    row.sass_per_event = per_event;
    row.sass_fixed = static_cast<int64_t>(low.sass->instructions) -
                     static_cast<int64_t>(off.sass->instructions) -
                     static_cast<int64_t>(per_event * options.events_low + 0.5);
    row.registers_added = static_cast<int32_t>(high.sass->registers) -
                          static_cast<int32_t>(off.sass->registers);
  }
  return row;
}

}  // namespace

absl::StatusOr<std::vector<RecorderCostRow>> MeasureRecorderCost(
    const RecorderCostOptions& options) {
  if (options.events_high <= options.events_low) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "events_high (%d) must exceed events_low (%d): the cost per event is their "
        "difference in instructions divided by their difference in events",
        options.events_high, options.events_low));
  }
  ASSIGN_OR_RETURN(std::vector<std::string> names, KernelNames(options.cases));
  absl::StatusOr<CostProgram> program =
      CompileForCost(ProgramSource(options, names), options.target);
  if (!program.ok()) {
    return WithContext(program.status(),
                       absl::StrFormat("the program of %d cases", options.cases.size()));
  }
  std::optional<CubinListing> listing;
  if (!options.cuobjdump.empty()) {
    absl::StatusOr<CubinListing> listed = DisassembleCubin(program->cubin, options.cuobjdump);
    if (!listed.ok()) {
      return WithContext(listed.status(),
                         absl::StrFormat("the program of %d cases", options.cases.size()));
    }
    listing = *std::move(listed);
  }
  std::vector<RecorderCostRow> rows;
  for (size_t i = 0; i < options.cases.size(); ++i) {
    const RecorderCostCase& c = options.cases[i];
    KernelCost costs[kVariants];
    for (int v = 0; v < kVariants; ++v) {
      const std::string& kernel = names[i * kVariants + v];
      absl::StatusOr<KernelCost> cost = MeasureKernel(*program, listing, kernel);
      if (!cost.ok()) return WithContext(cost.status(), absl::StrCat(c.name, ": kernel ", kernel));
      costs[v] = *cost;
    }
    rows.push_back(CostRow(c.name, costs, options));
  }
  return rows;
}

std::string FormatRecorderCost(const std::vector<RecorderCostRow>& rows,
                               const RecorderCostOptions& options) {
  std::string out = absl::StrFormat(
      "Recorder cost on %s: instructions per Record = (count(K=%d) - count(K=%d)) / %d, "
      "Record calls in a loop with a run-time trip count;\nfixed = prologue + epilogue "
      "(count(K=%d) - K*per_event - count(no recorder)).\n",
      options.target.ToString(), options.events_high, options.events_low,
      options.events_high - options.events_low, options.events_low);
  absl::StrAppendFormat(&out, "%-26s %10s %10s %11s %11s %10s\n", "unit/placement",
                        "PTX/event", "PTX fixed", "SASS/event", "SASS fixed", "+regs");
  for (const RecorderCostRow& r : rows) {
    absl::StrAppendFormat(
        &out, "%-26s %10.2f %10d %11s %11s %10s\n", r.name, r.ptx_per_event, r.ptx_fixed,
        r.sass_per_event ? absl::StrFormat("%.2f", *r.sass_per_event) : "-",
        r.sass_fixed ? absl::StrCat(*r.sass_fixed) : "-",
        r.registers_added ? absl::StrCat(*r.registers_added) : "-");
  }
  if (options.cuobjdump.empty()) {
    absl::StrAppend(&out,
                    "SASS numbers skipped: no cuobjdump found (pip install "
                    "nvidia-cuda-cuobjdump, or pass --cuobjdump=PATH / set CUOBJDUMP).\n");
  } else {
    absl::StrAppend(&out, "SASS from ", options.cuobjdump, " -sass / -res-usage.\n");
  }
  return out;
}

}  // namespace warptrace
