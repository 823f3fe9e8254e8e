#include "jit/run/run.h"

#include <time.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/clock.h"
#include "base/enum_table.h"
#include "base/status_macros.h"
#include "format/trace_abi.h"
#include "jit/compile/cuobjdump.h"
#include "jit/compile/kernel_artifacts.h"
#include "jit/cuda/cuda_device.h"
#include "jit/emit/emitter.h"
#include "jit/host/host_device.h"
#include "jit/platform/sanitize.h"
#include "jit/run/gpu_compile_check.h"

namespace warptrace {
namespace {

constexpr EnumTable<KernelArg::Kind, 5> kArgKinds{"argument kind", {{
    {KernelArg::Kind::kIn, "In buffer"},
    {KernelArg::Kind::kOut, "Out buffer"},
    {KernelArg::Kind::kInOut, "InOut buffer"},
    {KernelArg::Kind::kScalar, "Scalar"},
    {KernelArg::Kind::kTensorMap, "TensorMap"},
}}};
static_assert(kArgKinds.Covers(5));

const char* ArgKindName(KernelArg::Kind kind) { return kArgKinds.Name(kind); }

absl::Status CheckArgs(const Kernel& kernel, absl::Span<const KernelArg> args) {
  if (args.size() != kernel.params.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kernel %s takes %d arguments but %d were given", kernel.name, kernel.params.size(),
        args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelParam& param = kernel.params[i];
    const KernelArg& arg = args[i];
    const bool is_map = arg.kind() == KernelArg::Kind::kTensorMap;
    if (param.is_tensor_map() != is_map) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "kernel %s argument %d (%s %s): a %s was given; pass %s", kernel.name, i, param.type,
          param.name, ArgKindName(arg.kind()),
          is_map ? (param.is_pointer ? "KernelArg::In/Out/InOut(span)"
                                     : "KernelArg::Scalar<T>(value)")
                 : "KernelArg::TensorMap(KernelArg::In/Out/InOut(span), TensorMapSpec)"));
    }
    if (is_map) {
      if (!arg.has_buffer()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "kernel %s argument %d (%s %s): KernelArg::TensorMap needs a buffer "
            "(KernelArg::In/Out/InOut(span)) for the tensor it views, not a Scalar",
            kernel.name, i, param.type, param.name));
      }
      continue;
    }
    const bool is_buffer = arg.kind() != KernelArg::Kind::kScalar;
    if (param.is_pointer != is_buffer) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "kernel %s argument %d (%s %s): a %s was given; pass %s", kernel.name, i, param.type,
          param.name, ArgKindName(arg.kind()),
          param.is_pointer ? "KernelArg::In/Out/InOut(span)" : "KernelArg::Scalar<T>(value)"));
    }
    if (!is_buffer && arg.bytes() != param.size) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "kernel %s argument %d (%s %s) is %d bytes but a %d-byte scalar was given",
          kernel.name, i, param.type, param.name, param.size, arg.bytes()));
    }
  }
  return absl::OkStatus();
}

// Every TMA copy declares its box twice: AsyncCopySpec::box (the bytes the plan and the
// barrier expect) and the tensor map argument's TensorMapSpec::box (what the copy moves).
// A mismatch would complete more or fewer bytes than the barrier expects, a deadlock that
// names the barrier; compare them before the launch, naming both.
std::string InnermostFirst(const std::vector<uint32_t>& box) {
  return absl::StrCat("{", absl::StrJoin(box, ", "), "}");
}

absl::Status CheckTmaBoxes(const Kernel& kernel, absl::Span<const KernelArg> args) {
  std::vector<const KernelNode*> copies;
  ForEachNode(kernel.body, [&copies](const KernelNode& node) {
    if (node.kind == KernelNode::Kind::kAsyncCopy && node.copy.tma()) copies.push_back(&node);
  });
  for (const KernelNode* node : copies) {
    const AsyncCopySpec& c = node->copy;
    for (size_t i = 0; i < args.size(); ++i) {
      if (kernel.params[i].name != c.tensor_map) continue;
      const TensorMapSpec& map = args[i].tensor_map();
      const uint32_t map_element_bytes = ElementBytes(map.type);
      if (map.box == c.box && map_element_bytes == c.element_bytes) continue;
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: TMA copy '%s' declares a box of %s elements of %d bytes (AsyncCopySpec::box, "
          "element_bytes: %d bytes expected on barrier '%s'), but argument %d (%s) of kernel "
          "%s is a tensor map with box %s of %s (%d bytes) (TensorMapSpec::box, type: %d "
          "bytes per copy); the copy would complete %d bytes where the barrier expects %d. "
          "Make the two boxes (innermost first) and element sizes the same",
          node->path, c.name, InnermostFirst(c.box), c.element_bytes, c.Bytes(), c.barrier, i,
          kernel.params[i].name, kernel.name, InnermostFirst(map.box), DataTypeName(map.type),
          map_element_bytes, BoxBytes(map), BoxBytes(map), c.Bytes()));
    }
  }
  return absl::OkStatus();
}

// The integer scalar arguments by parameter name, for per-block trip counts. An unsigned
// long long above 2^63 - 1 is left out (a trip count reading it fails to plan, naming it).
LaunchScalars ScalarValues(const Kernel& kernel, absl::Span<const KernelArg> args) {
  LaunchScalars values;
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelParam& param = kernel.params[i];
    const std::string type = param.ValueType();  // "int" for "const int"
    if (param.is_pointer || param.is_tensor_map() || type == "float" || type == "double") {
      continue;
    }
    const bool is_signed = type.rfind("unsigned", 0) != 0 && type != "bool";
    uint64_t raw = 0;
    std::memcpy(&raw, args[i].scalar(), std::min<uint64_t>(param.size, sizeof(raw)));
    int64_t value = 0;
    if (param.size < 8) {
      const int shift = 64 - 8 * static_cast<int>(param.size);
      // Sign- or zero-extend the low `size` bytes.
      value = is_signed ? static_cast<int64_t>(raw << shift) >> shift
                        : static_cast<int64_t>(raw & ((uint64_t{1} << (8 * param.size)) - 1));
    } else {
      if (!is_signed && raw > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        continue;
      }
      value = static_cast<int64_t>(raw);
    }
    values.emplace(param.name, value);
  }
  return values;
}

// Device buffers for the kernel's arguments, filled from the host.
struct LaunchArgs {
  std::vector<DeviceBuffer> buffers;  // one per argument (empty for scalars)
  std::vector<void*> pointers;        // device addresses, one per argument
  std::vector<TensorMapBytes> maps;   // one per argument (used by tensor maps)
  std::vector<void*> slots;           // what cuLaunchKernel-style args point at
};

absl::StatusOr<LaunchArgs> PrepareArgs(Device& device, const Kernel& kernel,
                                       absl::Span<const KernelArg> args) {
  LaunchArgs launch;
  launch.buffers.reserve(args.size());
  launch.pointers.assign(args.size(), nullptr);
  launch.maps.resize(args.size());
  // Every map is checked before any memory is allocated: a bad map fails fast, naming it.
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind() != KernelArg::Kind::kTensorMap) continue;
    // The buffer's address is not known yet: only its alignment (the devices allocate at
    // 256 bytes) and bounds matter, and those ValidateTensorMap sees through offset_bytes.
    RETURN_IF_ERROR(ValidateTensorMap(
        args[i].tensor_map(), args[i].bytes(), args[i].tensor_map().offset_bytes,
        absl::StrCat("argument ", i, " (", kernel.params[i].name, ") of kernel ", kernel.name)));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg& arg = args[i];
    if (arg.kind() == KernelArg::Kind::kScalar) {
      launch.buffers.emplace_back();
      continue;
    }
    const std::string what =
        absl::StrCat("argument ", i, " (", kernel.params[i].name, ") of kernel ", kernel.name);
    absl::StatusOr<DeviceBuffer> buffer =
        DeviceBuffer::Allocate(device, arg.bytes() == 0 ? 1 : arg.bytes());
    if (!buffer.ok()) {
      return absl::Status(buffer.status().code(),
                          absl::StrCat("allocating ", what, ": ", buffer.status().message()));
    }
    absl::Status fill = arg.buffer_kind() == KernelArg::Kind::kOut
                            ? buffer->Zero()
                            : buffer->CopyFrom(arg.host(), arg.bytes());
    if (!fill.ok()) {
      return absl::Status(fill.code(), absl::StrCat("filling ", what, ": ", fill.message()));
    }
    launch.pointers[i] = buffer->get();
    if (arg.kind() == KernelArg::Kind::kTensorMap) {
      void* tensor = static_cast<char*>(buffer->get()) + arg.tensor_map().offset_bytes;
      RETURN_IF_ERROR(ValidateTensorMap(arg.tensor_map(), arg.bytes(),
                                        reinterpret_cast<uintptr_t>(tensor), what));
      ASSIGN_OR_RETURN(launch.maps[i], device.EncodeTensorMap(arg.tensor_map(), tensor, what));
    }
    launch.buffers.push_back(std::move(*buffer));
  }
  return launch;
}

absl::Status CopyBack(const Kernel& kernel, absl::Span<const KernelArg> args,
                      const LaunchArgs& launch) {
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg& arg = args[i];
    if (arg.buffer_kind() != KernelArg::Kind::kOut &&
        arg.buffer_kind() != KernelArg::Kind::kInOut) {
      continue;
    }
    absl::Status status = launch.buffers[i].CopyTo(arg.host(), arg.bytes());
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("copying back argument ", i, " (", kernel.params[i].name,
                                       ") of kernel ", kernel.name, ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

// The host's clocks read back to back; monotonic_ns is the midpoint of two CLOCK_MONOTONIC
// reads around the others and spread_ns half their distance.
struct HostClocks {
  int64_t monotonic_ns = 0;
  int64_t boottime_ns = 0;
  int64_t realtime_ns = 0;
  int64_t spread_ns = 0;
};

HostClocks ReadHostClocks() {
  HostClocks c;
  const int64_t before = ReadClockNs(CLOCK_MONOTONIC);
  c.boottime_ns = ReadClockNs(CLOCK_BOOTTIME);
  c.realtime_ns = ReadClockNs(CLOCK_REALTIME);
  const int64_t after = ReadClockNs(CLOCK_MONOTONIC);
  c.monotonic_ns = before + (after - before) / 2;
  c.spread_ns = (after - before + 1) / 2;
  return c;
}

struct Launched {
  KernelSource source;
  std::optional<RecordPlan> plan;
  std::vector<uint32_t> trace_words;
  HostClocks at_launch;     // just before the launch call
  int64_t launch_to_sync_ns = 0;  // launch call to Synchronize's return (CLOCK_MONOTONIC)
};

// The host-time anchor of a launch (layout.h, HostTimeAnchor). The host backend's
// globaltimer is virtual time on CLOCK_MONOTONIC's axis (jit/host/device/host_abi.h: its steady
// clock is set from CLOCK_MONOTONIC when the launch starts, and its blocks start there), so
// its anchor is the clocks read together. On a GPU the first recorded unit start (the
// trace origin) is paired with the launch call: it came after it and before the
// synchronize returned.
HostTimeAnchor AnchorOf(DeviceKind kind, const Launched& run, const DecodedTrace& decoded) {
  HostTimeAnchor anchor;
  const HostClocks& c = run.at_launch;
  if (kind == DeviceKind::kHost) {
    anchor = {true, c.monotonic_ns, c.boottime_ns, c.realtime_ns, c.spread_ns};
  } else if (!decoded.records.empty()) {
    anchor = {true, TraceOrigin(decoded), c.boottime_ns, c.realtime_ns,
              run.launch_to_sync_ns + c.spread_ns};
  }
  return anchor;
}

// RunOptions::artifacts_dir: what NVRTC makes of `source` for the GPU target, as CudaDevice
// would compile it, kept as K.on.* / K.off.*.
absl::StatusOr<KernelArtifacts> KeepArtifacts(const KernelSource& source,
                                              const RunOptions& options) {
  ASSIGN_OR_RETURN(
      CompileRequest request,
      CudaCompileRequest(source,
                         options.device_options.cuda.target.value_or(CudaTarget::Default())));
  return KeepKernelArtifacts(std::move(request),
                             absl::StrCat(source.kernel_name, source.profiled ? ".on" : ".off"),
                             options.artifacts_dir, FindCuobjdump(""));
}

// Emits, loads and launches once; copies outputs and the trace buffer back.
absl::StatusOr<Launched> LaunchOnce(Device& device, const Kernel& kernel,
                                    absl::Span<const KernelArg> args,
                                    const ProfileOptions& profile, const RunOptions& options) {
  Launched out;
  if (profile.enabled) {
    // Made per launch: per-block trip counts read the scalar arguments.
    ASSIGN_OR_RETURN(RecordPlan plan,
                     RecordPlan::Create(kernel, profile, ScalarValues(kernel, args)));
    ASSIGN_OR_RETURN(out.source, EmitKernel(kernel, plan));
    out.plan = std::move(plan);
  } else {
    out.source = EmitUnprofiledKernel(kernel);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<LoadedKernel> loaded, device.Load(out.source));
  if (options.check_gpu_compile && device.Kind() == DeviceKind::kHost) {
    RETURN_IF_ERROR(CheckCompilesForGpu(
        out.source, options.device_options.cuda.target.value_or(CudaTarget::Default())));
  }
  if (!options.artifacts_dir.empty()) {
    absl::StatusOr<KernelArtifacts> kept = KeepArtifacts(out.source, options);
    if (!kept.ok()) {
      return absl::Status(kept.status().code(),
                          absl::StrCat("keeping the artifacts of kernel ", kernel.name, " (",
                                       "RunOptions::artifacts_dir): ", kept.status().message()));
    }
  }
  ASSIGN_OR_RETURN(LaunchArgs launch, PrepareArgs(device, kernel, args));

  DeviceBuffer trace;
  void* trace_ptr = nullptr;
  if (out.plan) {
    const uint64_t bytes = out.plan->buffer_bytes();
    absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(device, bytes);
    if (!buffer.ok()) {
      return absl::Status(buffer.status().code(),
                          absl::StrCat("allocating the ", bytes, "-byte trace buffer of kernel ",
                                       kernel.name, ": ", buffer.status().message()));
    }
    trace = std::move(*buffer);
    RETURN_IF_ERROR(trace.Zero());
    trace_ptr = trace.get();
  }
  for (size_t i = 0; i < args.size(); ++i) {
    switch (args[i].kind()) {
      case KernelArg::Kind::kScalar:
        launch.slots.push_back(const_cast<void*>(args[i].scalar()));
        break;
      case KernelArg::Kind::kTensorMap:  // the 128 bytes, by value
        launch.slots.push_back(launch.maps[i].bytes);
        break;
      default:
        launch.slots.push_back(&launch.pointers[i]);
        break;
    }
  }
  if (out.plan) launch.slots.push_back(&trace_ptr);

  out.at_launch = ReadHostClocks();
  RETURN_IF_ERROR(device.Launch(*loaded, out.source.grid, out.source.block,
                                out.source.dynamic_shared_bytes, launch.slots.data()));
  RETURN_IF_ERROR(device.Synchronize());
  out.launch_to_sync_ns = ReadClockNs(CLOCK_MONOTONIC) - out.at_launch.monotonic_ns;
  RETURN_IF_ERROR(CopyBack(kernel, args, launch));
  if (out.plan) {
    out.trace_words.resize(trace.size() / sizeof(uint32_t));
    RETURN_IF_ERROR(trace.CopyTo(out.trace_words.data(), trace.size()));
  }
  return out;
}

// The one dump of a launch's buffer: decoded once into the Trace, then the front end with
// the caller's outputs. A first launch that dropped events and will be retried (`will_retry`
// is set then; `retrying`: this is the relaunch) writes none.
absl::StatusOr<std::unique_ptr<Trace>> AnalyzeLaunch(Device& device, const Kernel& kernel,
                                                     const RunOptions& options, bool retrying,
                                                     Launched& run, RunResult& into,
                                                     bool& will_retry) {
  auto trace = std::make_unique<Trace>();
  trace->layout = run.plan->layout();
  trace->layout.device_name = device.Name();
  trace->layout.clock = device.Clock();
  trace->words = std::move(run.trace_words);
  RETURN_IF_ERROR(DecodeInto(trace->layout, trace->words, trace->decoded));
  trace->layout.host_anchor = AnchorOf(device.Kind(), run, trace->decoded);
  DumpRequest request = options.dump;
  // The retry knowingly runs past the plan: the loops that did are warnings then.
  request.verify.plan_mismatch_warnings = request.verify.plan_mismatch_warnings || retrying;
  will_retry =
      !retrying && options.retry_on_dropped &&
      std::any_of(trace->decoded.records.begin(), trace->decoded.records.end(),
                  [](const DecodedRecord& r) {
                    return r.header_problem == HeaderProblem::kNone && r.dropped() > 0;
                  });
  if (will_retry) {
    request.traces.clear();
    request.report_path.clear();
    request.analysis_path.clear();
  }
  into.dump = DumpDecodedToFiles(trace->decoded, request);
  DumpOutcome& outcome = into.dump;
  trace->report = std::move(outcome.result.report);
  outcome.result.report = VerifyReport();
  const bool verify_failed =
      trace->report.errors > 0 && outcome.status == trace->report.ToStatus();
  if (!outcome.status.ok() && (!outcome.failed_output.empty() || !verify_failed)) {
    return absl::Status(outcome.status.code(),
                        absl::StrCat("dumping the trace of kernel ", kernel.name, ": ",
                                     outcome.status.message()));
  }
  if (outcome.timeline.has_value()) {
    trace->timeline = *std::move(outcome.timeline);
    trace->has_timeline = true;
    outcome.timeline.reset();
  }
  return trace;
}

}  // namespace

absl::StatusOr<RunResult> RunKernel(Device& device, const Kernel& kernel,
                                    absl::Span<const KernelArg> args,
                                    const RunOptions& options) {
  RETURN_IF_ERROR(CheckArgs(kernel, args));
  RETURN_IF_ERROR(CheckTmaBoxes(kernel, args));
  if (const auto* host = dynamic_cast<const HostDevice*>(&device);
      host != nullptr && options.sanitize.any() && host->sanitize() != options.sanitize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RunOptions::sanitize is ", SanitizeName(options.sanitize), " but the host device was "
        "created with ", SanitizeName(host->sanitize()),
        ": create it with HostDeviceOptions::sanitize (the kernels are compiled for it)"));
  }
  for (const TraceOutput& output : options.dump.traces) {
    if (output.fd >= 0 && options.retry_on_dropped) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RunOptions::dump writes the ", output.role.empty() ? TraceFormatRole(output.format)
                                                              : output.role,
          " to file descriptor ", output.fd,
          " and retry_on_dropped may dump twice: give it a path (replaced atomically) or turn "
          "the retry off"));
    }
  }
  RunResult result;
  result.device_kind = device.Kind();
  result.device_name = device.Name();

  ProfileOptions profile = options.profile;
  ASSIGN_OR_RETURN(Launched launched, LaunchOnce(device, kernel, args, profile, options));
  if (!launched.plan) {
    result.source = std::move(launched.source);
    return result;
  }

  bool will_retry = false;  // the first launch dropped events and retry_on_dropped is on
  ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace,
                   AnalyzeLaunch(device, kernel, options, /*retrying=*/false, launched, result,
                                 will_retry));

  if (will_retry) {
    const uint32_t needed = trace->report.required_capacity();
    result.retried = true;
    result.retry_note = absl::StrFormat(
        "kernel %s dropped %d events at capacity %d (a loop ran past its UpperBound); "
        "relaunched once with the capacity the trace showed was needed: %d",
        kernel.name, trace->report.dropped_events, trace->report.capacity, needed);
    for (const Finding& f : trace->report.findings) {
      if (f.kind != FindingKind::kTripCountExceeded) continue;
      absl::StrAppend(&result.retry_note, "; ", FormatFinding(f));
      break;
    }
    profile.capacity_override = needed;
    ASSIGN_OR_RETURN(launched, LaunchOnce(device, kernel, args, profile, options));
    ASSIGN_OR_RETURN(trace, AnalyzeLaunch(device, kernel, options, /*retrying=*/true, launched,
                                          result, will_retry));
  }

  result.source = std::move(launched.source);
  result.plan = std::move(launched.plan);
  if (!trace->report.ok() && !options.dump.verify.allow_truncated) {
    const absl::Status status = trace->report.ToStatus();
    return absl::Status(status.code(),
                        absl::StrCat("trace of kernel ", kernel.name, " on ", device.Name(),
                                     " did not verify", result.retried ? " after a retry" : "",
                                     ": ", status.message()));
  }
  result.trace = std::move(trace);
  return result;
}

absl::StatusOr<RunResult> RunKernel(const Kernel& kernel, absl::Span<const KernelArg> args,
                                    const RunOptions& options) {
  DeviceSelectOptions device_options = options.device_options;
  if (options.sanitize.any()) device_options.host.sanitize = options.sanitize;
  ASSIGN_OR_RETURN(SelectedDevice selected, SelectDevice(options.device, device_options));
  ASSIGN_OR_RETURN(RunResult result, RunKernel(*selected.device, kernel, args, options));
  result.device_reason = std::move(selected.reason);
  if (options.sanitize.any() && selected.device->Kind() != DeviceKind::kHost) {
    absl::StrAppend(&result.device_reason, " (sanitize=", SanitizeName(options.sanitize),
                    " ignored: the sanitizer is the host backend's)");
  }
  return result;
}

}  // namespace warptrace
