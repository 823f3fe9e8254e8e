#include "jit/cost/compile_phases.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "nvrtc.h"

namespace warptrace {
namespace {

namespace json = ::llvm::json;

// The "X" (complete) events' begin and end, in microseconds.
struct Span {
  double begin = 0;
  double end = 0;
};

}  // namespace

absl::StatusOr<CompilePhases> ParseNvrtcTimeTrace(absl::string_view text) {
  llvm::Expected<json::Value> value = json::parse(llvm::StringRef(text.data(), text.size()));
  if (!value) {
    return absl::InvalidArgumentError(absl::StrCat("NVRTC time trace is not valid JSON: ",
                                                   llvm::toString(value.takeError())));
  }
  const json::Array* events = value->getAsArray();
  if (const json::Object* root = value->getAsObject(); root != nullptr) {
    events = root->getArray("traceEvents");
  }
  if (events == nullptr) {
    return absl::InvalidArgumentError(
        "NVRTC time trace has no \"traceEvents\" array (nor is it an array of events)");
  }
  std::optional<double> first;
  std::optional<Span> nvvm, ptxas;
  for (const json::Value& item : *events) {
    const json::Object* event = item.getAsObject();
    if (event == nullptr || event->getString("ph") != llvm::StringRef("X")) continue;
    const llvm::Optional<double> ts = event->getNumber("ts");
    const llvm::Optional<double> dur = event->getNumber("dur");
    if (!ts || !dur) continue;
    if (!first || *ts < *first) first = *ts;
    const llvm::Optional<llvm::StringRef> name = event->getString("name");
    if (!name) continue;
    // One of each per compile; the longest if a tool ever splits one.
    std::optional<Span>* phase = *name == "LibNVVM"            ? &nvvm
                                 : *name == "Total PTXAS Time" ? &ptxas
                                                               : nullptr;
    if (phase != nullptr && (!phase->has_value() || (*phase)->end - (*phase)->begin < *dur)) {
      *phase = Span{*ts, *ts + *dur};
    }
  }
  if (!nvvm) {
    return absl::InvalidArgumentError(
        "NVRTC time trace has no \"LibNVVM\" event (the NVVM phase): not a whole compile's "
        "trace");
  }
  if (!ptxas) {
    return absl::InvalidArgumentError(
        "NVRTC time trace has no \"Total PTXAS Time\" event (ptxas's phase): compiled to PTX "
        "only, or a trace ptxas did not append to");
  }
  auto micros = [](double us) { return absl::Microseconds(static_cast<int64_t>(us + 0.5)); };
  CompilePhases phases;
  phases.front_end = micros(nvvm->begin - *first);
  phases.nvvm = micros(nvvm->end - nvvm->begin);
  phases.ptxas = micros(ptxas->end - ptxas->begin);
  return phases;
}

bool NvrtcWritesTimeTraces() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return false;
  return major > 12 || (major == 12 && minor >= 8);
}

absl::StatusOr<TimedCompile> CompileWithPhases(Compiler& compiler, CompileRequest request,
                                               const std::string& dir) {
  // NVRTC writes <path>.json; ptxas appends to what it finds there, so nothing may be left.
  const std::string path = absl::StrCat(dir, "/nvrtc-time-trace");
  const std::string written = path + ".json";
  // NVRTC 13 aborts the process ("Failed to write time profiler data") when it cannot write
  // the trace: make sure it can before asking it to.
  {
    const std::string probe = path + ".probe";
    absl::Status writable = WriteFileAtomically(probe, "");
    if (!writable.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot write NVRTC's time trace under ", dir, ": ", writable.message()));
    }
    llvm::sys::fs::remove(probe);
  }
  llvm::sys::fs::remove(written);
  request.options.extra_flags.push_back(absl::StrCat("-fdevice-time-trace=", path));
  TimedCompile out;
  ASSIGN_OR_RETURN(out.kernel, compiler.Compile(request));
  absl::StatusOr<std::string> trace =
      ReadFile(written, {.role = "NVRTC time trace", .register_as_input = false});
  llvm::sys::fs::remove(written);
  if (!trace.ok()) return trace.status();
  absl::StatusOr<CompilePhases> phases = ParseNvrtcTimeTrace(*trace);
  if (!phases.ok()) {
    return absl::Status(phases.status().code(),
                        absl::StrCat(written, ": ", phases.status().message()));
  }
  out.phases = *phases;
  return out;
}

}  // namespace warptrace
