#include "jit/host/runtime/runtime.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "jit/host/runtime/fault_handler.h"
#include "jit/host/runtime/virtual_clock.h"
#include "jit/host/runtime/worker.h"

namespace warptrace::host {

Runtime::Runtime(RuntimeOptions options) : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::Create(RuntimeOptions options) {
  if (options.blocks_per_sm == 0) {
    return absl::InvalidArgumentError("RuntimeOptions::blocks_per_sm must be at least 1");
  }
  RETURN_IF_ERROR(InstallFaultHandler(&Worker::LandFault));
  if (options.num_sms == 0) options.num_sms = std::thread::hardware_concurrency();
  options.num_sms = std::max<uint32_t>(options.num_sms, 2);
  std::unique_ptr<Runtime> runtime(new Runtime(options));
  for (uint32_t i = 0; i < runtime->options_.num_sms; ++i) {
    runtime->workers_.push_back(std::make_unique<Worker>(i, runtime->options_));
  }
  for (auto& worker : runtime->workers_) {
    Worker* w = worker.get();
    Runtime* r = runtime.get();
    runtime->threads_.emplace_back([r, w] { r->WorkerMain(w); });
  }
  return runtime;
}

Runtime::~Runtime() {
  {
    absl::MutexLock lock(&mu_);
    shutdown_ = true;
    start_cv_.SignalAll();
  }
  for (std::thread& t : threads_) t.join();
}

void Runtime::WorkerMain(Worker* worker) {
  const WorkerSignalStack signal_stack;  // where a fiber's fault is handled
  uint64_t seen = 0;
  for (;;) {
    LaunchState* launch = nullptr;
    {
      absl::MutexLock lock(&mu_);
      while (!shutdown_ && generation_ == seen) start_cv_.Wait(&mu_);
      if (shutdown_) return;
      seen = generation_;
      launch = launch_;
    }
    worker->RunLaunch(*launch, workers_);
    absl::MutexLock lock(&mu_);
    if (++finished_ == workers_.size()) done_cv_.Signal();
  }
}

absl::Status Runtime::Launch(const LaunchSpec& spec) {
  absl::MutexLock serialize(&launch_mu_);
  if (absl::Status handler = KeepFaultHandlerFirst(); !handler.ok()) {
    return absl::Status(handler.code(), absl::StrCat(spec.what, ": ", handler.message()));
  }
  const WarptraceHostDim& c = spec.cluster;
  const uint32_t cluster_size = ClusterCount(c);
  if (cluster_size == 0 || cluster_size > 16 || spec.grid.x % c.x != 0 ||
      spec.grid.y % c.y != 0 || spec.grid.z % c.z != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: a cluster of %ux%ux%u CTAs must have 1 to 16 CTAs and divide the grid "
        "%ux%ux%u",
        spec.what, c.x, c.y, c.z, spec.grid.x, spec.grid.y, spec.grid.z));
  }
  LaunchState launch;
  launch.spec = spec;
  launch.cluster_size = cluster_size;
  launch.num_clusters =
      uint64_t{spec.grid.x / c.x} * (spec.grid.y / c.y) * (spec.grid.z / c.z);
  launch.num_blocks = uint64_t{spec.grid.x} * spec.grid.y * spec.grid.z;
  launch.num_threads = spec.block.x * spec.block.y * spec.block.z;
  launch.deadline = std::chrono::steady_clock::now() +
                    absl::ToChronoNanoseconds(options_.launch_timeout);
  launch.clock = LaunchClock(options_.clock);
  launch.deterministic = options_.clock == ClockMode::kDeterministic;
  launch.start_ns = launch.clock.ns_base;
  if (spec.sanitize != 0) {
    launch.sanitizer = std::make_unique<LaunchSanitizer>(spec.sanitize, spec.sanitize_buffers);
  }
  {
    absl::MutexLock lock(&mu_);
    launch_ = &launch;
    finished_ = 0;
    ++generation_;
    start_cv_.SignalAll();
    while (finished_ < num_sms()) done_cv_.Wait(&mu_);
    launch_ = nullptr;
  }
  // Every block finished and logged its global accesses: the check between blocks.
  if (launch.sanitizer != nullptr) launch.sanitizer->global_races().Check(*launch.sanitizer);
  absl::MutexLock lock(&launch.mu);
  if (launch.failure.ok() && launch.sanitizer != nullptr) {
    if (std::string report = launch.sanitizer->Report(); !report.empty()) {
      const bool bounds = absl::StrContains(report, "out-of-bounds");
      return absl::Status(
          bounds ? absl::StatusCode::kOutOfRange : absl::StatusCode::kFailedPrecondition,
          absl::StrCat(spec.what, ": ", report));
    }
  }
  if (launch.failure.ok()) return absl::OkStatus();
  std::string message = absl::StrCat(spec.what, ": ", launch.failure.message());
  if (!launch.census.empty()) {
    std::sort(launch.census.begin(), launch.census.end());
    absl::StrAppend(&message, "\n  ", absl::StrJoin(launch.census, "\n  "));
  }
  // What the sanitizer found before the failure is often its cause (a race that corrupted
  // a stage, an out-of-bounds write): said with it.
  if (launch.sanitizer != nullptr) {
    if (std::string report = launch.sanitizer->Report(); !report.empty()) {
      absl::StrAppend(&message, "\nbefore the failure, the ", report);
    }
  }
  return absl::Status(launch.failure.code(), message);
}

}  // namespace warptrace::host

