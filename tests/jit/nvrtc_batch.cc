#include "tests/jit/nvrtc_batch.h"

#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "jit/compile/compiler.h"
#include "jit/compile/nvrtc_compiler.h"
#include "jit/target/cuda_target.h"
#include "base/status_macros.h"

namespace warptrace::testing {
namespace {

// The #include lines of `source`, in order, each with its newline.
std::string IncludeLines(absl::string_view source) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(source, '\n')) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "#include")) {
      absl::StrAppend(&out, line, "\n");
    }
  }
  return out;
}

// Whether every #include line of `source` comes before its other lines (blank lines and //
// comments aside), so that the batch may put them first without changing the source.
bool IncludesComeFirst(absl::string_view source) {
  bool code_seen = false;
  for (absl::string_view line : absl::StrSplit(source, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "//")) continue;
    if (!absl::StartsWith(line, "#include")) {
      code_seen = true;
    } else if (code_seen) {
      return false;
    }
  }
  return true;
}

// What decides which members may share a program: their #include lines and the names and
// contents of their headers.
std::string ProgramKey(const NvrtcBatchMember& member) {
  std::string key = IncludeLines(member.source);
  for (const EmbeddedFile& header : member.headers) {
    absl::StrAppend(&key, "\n", header.name, "\n", header.contents.size(), "\n", header.contents);
  }
  return key;
}

std::string KernelDefinition(absl::string_view kernel_name) {
  return absl::StrCat("__global__ void ", kernel_name, "(");
}

// Where `kernel_name` starts in `source`'s definition of that kernel, `__global__ void
// [__launch_bounds__(...)] kernel_name(`; npos when there is none.
size_t KernelNameAt(absl::string_view source, absl::string_view kernel_name) {
  constexpr absl::string_view kHead = "__global__ void ";
  constexpr absl::string_view kBounds = "__launch_bounds__(";
  for (size_t at = source.find(kHead); at != absl::string_view::npos;
       at = source.find(kHead, at + 1)) {
    size_t name = at + kHead.size();
    if (source.substr(name, kBounds.size()) == kBounds) {
      const size_t close = source.find(") ", name);
      if (close == absl::string_view::npos) continue;
      name = close + 2;
    }
    if (source.substr(name, kernel_name.size() + 1) == absl::StrCat(kernel_name, "(")) return name;
  }
  return absl::string_view::npos;
}

absl::StatusOr<CompiledKernel> Compile(const std::string& name, const std::string& source,
                                       const std::vector<EmbeddedFile>& headers,
                                       const CompileOptions& options) {
  CompileRequest request;
  request.name = name;
  request.source = source;
  request.headers = headers;
  request.options = options;
  return NvrtcCompiler().Compile(request);
}

// The result of a member compiled by itself (its kernel keeps its name).
NvrtcBatchResult CompileAlone(const NvrtcBatchMember& member, const CompileOptions& options) {
  NvrtcBatchResult out;
  out.label = member.label;
  out.entry = member.kernel_name;
  absl::StatusOr<CompiledKernel> compiled =
      Compile(member.kernel_name + ".cu", member.source, member.headers, options);
  out.status = compiled.status();
  if (compiled.ok()) {
    out.log = compiled->log;
    out.ptx = PtxOfEntry(compiled->ptx, out.entry);
    out.cubin = std::move(compiled->cubin);
  }
  return out;
}

// Compiles `members` (indices into `all`, all with one ProgramKey) as one program; on a
// failure or a log, each alone. Fills `results` at those indices.
void CompileProgram(const std::vector<NvrtcBatchMember>& all, const std::vector<size_t>& members,
                    const CompileOptions& options, std::vector<NvrtcBatchResult>& results) {
  const NvrtcBatchMember& first = all[members[0]];
  if (members.size() == 1) {
    results[members[0]] = CompileAlone(first, options);
    return;
  }
  std::string source = absl::StrCat("// ", members.size(), " kernels, each in its namespace\n",
                                    IncludeLines(first.source));
  std::vector<std::string> entries;
  for (size_t i = 0; i < members.size(); ++i) {
    const NvrtcBatchMember& member = all[members[i]];
    entries.push_back(absl::StrCat(member.kernel_name, "_batch", i));
    std::string text = member.source;
    text.replace(KernelNameAt(text, member.kernel_name), member.kernel_name.size(),
                 entries.back());
    absl::StrAppend(&source, "namespace warptrace_batch", i, " {\n", text,
                    "\n}  // namespace warptrace_batch", i, "\n");
  }
  absl::StatusOr<CompiledKernel> compiled =
      Compile(first.kernel_name + "_batch.cu", source, first.headers, options);
  if (compiled.ok() && compiled->log.empty()) {
    for (size_t i = 0; i < members.size(); ++i) {
      NvrtcBatchResult& out = results[members[i]];
      out.label = all[members[i]].label;
      out.entry = entries[i];
      out.ptx = PtxOfEntry(compiled->ptx, entries[i]);
      out.cubin = compiled->cubin;
    }
    return;
  }
  // Attribute the failure or log: each member alone. Only when none of them fails or logs
  // anything alone is the batching itself at fault.
  bool all_clean = true;
  for (size_t index : members) {
    results[index] = CompileAlone(all[index], options);
    all_clean = all_clean && results[index].status.ok() && results[index].log.empty();
  }
  if (!all_clean) return;
  const std::string batch_log =
      compiled.ok() ? compiled->log : std::string(compiled.status().message());
  for (size_t index : members) results[index].batch_log = batch_log;
}

}  // namespace

absl::StatusOr<std::vector<NvrtcBatchResult>> CompileNvrtcBatches(
    const std::vector<NvrtcBatchMember>& members, const std::string& arch,
    const std::vector<std::string>& extra_flags) {
  CompileOptions options;
  ASSIGN_OR_RETURN(options.target, CudaTarget::Parse(arch));
  options.cpp_standard = "c++17";
  options.line_info = false;
  options.extra_flags = extra_flags;
  // Programs in the order of their first member; a repeated source maps to its first member.
  std::vector<std::vector<size_t>> programs;
  std::map<std::string, size_t> program_of_key;
  std::map<std::string, size_t> first_of_source;
  std::vector<size_t> same_as(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    const NvrtcBatchMember& member = members[i];
    if (KernelNameAt(member.source, member.kernel_name) == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("batch member ", member.label, ": its source defines no `",
                       KernelDefinition(member.kernel_name), "` (optionally with __launch_bounds__)"));
    }
    // Identical sources with identical headers compile identically.
    const auto [first, inserted] = first_of_source.emplace(
        absl::StrCat(ProgramKey(member), "\n", member.kernel_name, "\n", member.source), i);
    same_as[i] = first->second;
    if (!inserted) continue;
    if (!IncludesComeFirst(member.source)) {
      programs.push_back({i});  // alone
      continue;
    }
    const auto [program, is_new] = program_of_key.emplace(ProgramKey(member), programs.size());
    if (is_new) programs.emplace_back();
    programs[program->second].push_back(i);
  }
  std::vector<NvrtcBatchResult> results(members.size());
  for (const std::vector<size_t>& indices : programs) {
    CompileProgram(members, indices, options, results);
  }
  for (size_t i = 0; i < members.size(); ++i) {
    if (same_as[i] == i) continue;
    results[i] = results[same_as[i]];
    results[i].label = members[i].label;
  }
  return results;
}

std::string PtxOfEntry(const std::string& ptx, const std::string& entry) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(ptx, '\n')) {
    if (absl::StartsWith(line, ".version") || absl::StartsWith(line, ".target") ||
        absl::StartsWith(line, ".address_size")) {
      absl::StrAppend(&out, line, "\n");
    }
  }
  const size_t at = ptx.find(absl::StrCat(".entry ", entry, "("));
  if (at == std::string::npos) return "";
  const size_t begin = ptx.rfind('\n', at) + 1;  // npos + 1 == 0: the first line
  const size_t close = ptx.find("\n}\n", at);
  const size_t end = close == std::string::npos ? ptx.size() : close + 3;
  absl::StrAppend(&out, absl::string_view(ptx).substr(begin, end - begin));
  return out;
}

}  // namespace warptrace::testing
