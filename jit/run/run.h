// One call that does it all: plan + emit + compile + launch + copy back + decode + verify +
// timeline. Hands back the kernel's outputs (in the caller's host arrays) and a Trace.
//
//   ASSIGN_OR_RETURN(Kernel kernel, builder.Build());
//   std::vector<float> x = ..., y(n);
//   std::vector<KernelArg> args = {KernelArg::In(absl::MakeConstSpan(x)),
//                                  KernelArg::Out(absl::MakeSpan(y)),
//                                  KernelArg::Scalar<int>(n)};
//   RunOptions options;                      // auto device, warpgroup units, auto placement
//   ASSIGN_OR_RETURN(RunResult run, RunKernel(kernel, args, options));
//   std::cout << run.device_reason << "\n" << run.plan->Explain();
//   const Timeline& timeline = run.trace->timeline;   // verified, on the ns axis
//
// Arguments follow the kernel's parameters in order: a buffer for each pointer parameter
// (In: copied to the device; Out: zeroed on the device and copied back; InOut: both), a
// Scalar for each scalar parameter, of the parameter's size, and a TensorMap for each
// CUtensorMap parameter: a buffer as above (its device copy is what the map views) and the
// map's TensorMapSpec (jit/platform/tensor_map.h), validated before the launch and encoded by the
// device (cuTensorMapEncodeTiled on CUDA, warptrace's descriptor on the host):
//   TensorMapSpec spec{TensorMapDataType::kBFloat16, {64, 128}, {128}, {64, 32},
//                      TensorMapSwizzle::k128B};
//   args.push_back(KernelArg::TensorMap(KernelArg::In(absl::MakeConstSpan(a)), spec));
// The trace buffer is not an argument: it is allocated from the plan, zeroed, appended, and
// decoded afterwards.
//
// Errors: InvalidArgument when the arguments do not match the parameters (naming the
// parameter) or the kernel cannot be planned or compiled (on the host backend: by the host
// compiler or, with RunOptions::check_gpu_compile, by NVRTC); the device's errors for memory,
// load and launch (each naming the step); the verifier's status (DataLoss for a corrupt
// trace, ResourceExhausted for dropped events) when the trace is broken and
// RunOptions::dump.verify.allow_truncated is off; InvalidArgument for a RunOptions::dump the
// front end refuses (two outputs on one path, an output naming an input, a descriptor output
// with retry_on_dropped); a dump output's file-system error, naming it. Outputs are copied back before the trace is
// judged, so they are valid even when the trace is not.
//
// The plan is made per launch: a loop with TripCount::PerBlock is counted for every block
// from the launch's integer scalar arguments, so a persistent kernel's buffer is sized for
// exactly the tiles its busiest block takes.
//
// Dropped events happen only when a user-given loop bound (TripCount::UpperBound) was
// wrong, or under a capacity override (ProfileOptions::capacity_override, which the retry
// below sets). With RunOptions::retry_on_dropped the kernel is relaunched once (inputs
// copied again) with the capacity the dump computed, and RunResult::retry_note says so.
#ifndef WARPTRACE_JIT_RUN_RUN_H_
#define WARPTRACE_JIT_RUN_RUN_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "format/layout.h"
#include "jit/builder/kernel_builder.h"
#include "jit/builder/kernel_source.h"
#include "jit/plan/record_plan.h"
#include "jit/platform/device.h"
#include "jit/platform/sanitize.h"
#include "jit/platform/tensor_map.h"
#include "jit/run/device_select.h"
#include "profiler/dump/collector.h"
#include "profiler/frontend/dump_files.h"
#include "profiler/timeline/timeline.h"
#include "profiler/timeline/timeline_types.h"
#include "profiler/trace/decode.h"
#include "profiler/trace/verify.h"

namespace warptrace {

// One kernel argument. Holds a view of caller memory for buffers (which must outlive the
// RunKernel call) or a copy of the value for scalars.
class KernelArg {
 public:
  enum class Kind { kIn, kOut, kInOut, kScalar, kTensorMap };

  template <typename T>
  static KernelArg In(absl::Span<const T> host) {
    return KernelArg(Kind::kIn, const_cast<T*>(host.data()), host.size() * sizeof(T));
  }
  template <typename T>
  static KernelArg Out(absl::Span<T> host) {
    return KernelArg(Kind::kOut, host.data(), host.size() * sizeof(T));
  }
  template <typename T>
  static KernelArg InOut(absl::Span<T> host) {
    return KernelArg(Kind::kInOut, host.data(), host.size() * sizeof(T));
  }
  template <typename T>
  static KernelArg Scalar(T value) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "scalars are <= 8 bytes");
    KernelArg arg(Kind::kScalar, nullptr, sizeof(T));
    std::memcpy(arg.scalar_, &value, sizeof(T));
    return arg;
  }

  // A CUtensorMap parameter: `buffer` (In, Out or InOut) is the tensor's memory, copied
  // like a buffer argument; the map views its device copy as `spec` says.
  static KernelArg TensorMap(KernelArg buffer, TensorMapSpec spec) {
    KernelArg arg(Kind::kTensorMap, buffer.host_, buffer.bytes_);
    arg.buffer_kind_ = buffer.kind_;
    arg.tensor_map_ = std::move(spec);
    return arg;
  }

  Kind kind() const { return kind_; }
  void* host() const { return host_; }
  uint64_t bytes() const { return bytes_; }
  const void* scalar() const { return scalar_; }
  // A buffer in device memory: In, Out, InOut, or a TensorMap's buffer.
  bool has_buffer() const { return kind_ != Kind::kScalar && buffer_kind() != Kind::kScalar; }
  // How the buffer is copied: kind() for buffers, the viewed buffer's kind for a TensorMap
  // (kScalar when that was not a buffer).
  Kind buffer_kind() const { return kind_ == Kind::kTensorMap ? buffer_kind_ : kind_; }
  const TensorMapSpec& tensor_map() const { return tensor_map_; }

 private:
  KernelArg(Kind kind, void* host, uint64_t bytes) : kind_(kind), host_(host), bytes_(bytes) {}
  Kind kind_;
  void* host_;
  uint64_t bytes_;
  alignas(8) unsigned char scalar_[8] = {};
  Kind buffer_kind_ = Kind::kScalar;
  TensorMapSpec tensor_map_;
};

struct RunOptions {
  RunOptions() { dump.collect = true; }

  DeviceChoice device = DeviceChoice::kAuto;
  DeviceSelectOptions device_options;
  // Profiling: unit, placement, record policy, sample; enabled = false runs the kernel
  // without any instrumentation (no trace).
  ProfileOptions profile;
  // How each launch's trace buffer is dumped — verify (allow_truncated, ...) and timeline
  // (compensate_overhead, ...) — and what that one dump writes besides the Trace it returns:
  // trace files, the verdict report, the summary, the analysis (profiler/frontend/
  // dump_files.h; RunResult::dump holds what it produced). `collect` (on by default) keeps
  // the Timeline in RunResult::trace; off, the Trace holds the buffer, its decoding and the
  // report only. A retry (retry_on_dropped) dumps again: trace outputs by descriptor are
  // refused with it.
  DumpRequest dump;
  // Relaunch once with the capacity the dump computed when events were dropped.
  bool retry_on_dropped = false;
  // On the host backend, also compile the kernel with NVRTC (jit/run/gpu_compile_check.h;
  // cached, no GPU needed) and fail with NVRTC's log when it does not compile for the GPU
  // (device_options.cuda.target, else CudaTarget::Default()), so that "runs on the host" implies
  // "compiles for the GPU". Off: the host compiler alone decides (e.g. for a kernel that
  // is host-only on purpose). Ignored on a GPU, which compiles with NVRTC anyway.
  bool check_gpu_compile = true;
  // When set, each launch also keeps what NVRTC makes of the kernel as launched (profiled:
  // K.on.*, not: K.off.*) in this directory (created if missing): the emitted .cu with its
  // headers, NVRTC's log with ptxas's register / spill report, the PTX, a plain cubin
  // (cuobjdump and nvdisasm read it) and its cuobjdump -sass (when cuobjdump is found).
  // jit/compile/kernel_artifacts.h. Compiled for device_options.cuda.target (else sm_90) on
  // either backend, so no GPU is needed; errors name the directory or carry NVRTC's log.
  std::string artifacts_dir;
  // The host backend's sanitizer (jit/platform/sanitize.h, docs/sanitizer.md): the device
  // RunKernel selects is created with it (HostDeviceOptions::sanitize); a HostDevice passed
  // in must have been created with the same checks (InvalidArgument otherwise). Ignored on a
  // GPU, which has no such mode (RunResult::device_reason says so).
  SanitizeOptions sanitize;
};

struct RunResult {
  DeviceKind device_kind = DeviceKind::kHost;
  std::string device_name;
  std::string device_reason;   // from SelectDevice (empty when a Device was passed in)
  KernelSource source;         // as launched (after a retry: the retried source)
  std::optional<RecordPlan> plan;  // when profiled
  std::unique_ptr<Trace> trace;    // when profiled
  // The dump's other products (RunOptions::dump): summary, analysis, the files written. Its
  // result's report is in `trace`.
  DumpOutcome dump;
  bool retried = false;
  std::string retry_note;          // what the retry did, when it happened
};

// Runs `kernel` on `device`.
absl::StatusOr<RunResult> RunKernel(Device& device, const Kernel& kernel,
                                    absl::Span<const KernelArg> args, const RunOptions& options);

// Selects the device per options.device (see SelectDevice), then runs.
absl::StatusOr<RunResult> RunKernel(const Kernel& kernel, absl::Span<const KernelArg> args,
                                    const RunOptions& options);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_RUN_RUN_H_
