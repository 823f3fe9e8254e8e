#include "jit/host/host_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "jit/compile/disk_cache.h"
#include "jit/host/device/host_abi.h"
#include "jit/host/compiler/host_compiler.h"
#include "jit/host/device/host_tma.h"
#include "jit/host/runtime/shared_object.h"

namespace warptrace {
namespace {

// Whether a pointer parameter of C++ type `type` ("const float*", "float const* __restrict__",
// "float* const") points to const: "const" among the words before its last '*'.
bool PointsToConst(absl::string_view type) {
  const size_t star = type.rfind('*');
  if (star == absl::string_view::npos) return false;
  for (absl::string_view word : absl::StrSplit(type.substr(0, star), absl::ByAnyChar(" \t*&"))) {
    if (word == "const") return true;
  }
  return false;
}

constexpr uint64_t kAlignment = 256;

class HostKernel final : public LoadedKernel {
 public:
  HostKernel(const HostDevice* owner, std::string name, std::unique_ptr<host::SharedObject> so,
             WarptraceHostEntryFn entry, uint32_t dynamic_shared_align, Dim3 cluster)
      : owner(owner), entry(entry), dynamic_shared_align(dynamic_shared_align),
        cluster(cluster),
        name_(std::move(name)), so_(std::move(so)) {}
  const std::string& name() const override { return name_; }

  const HostDevice* const owner;
  const WarptraceHostEntryFn entry;
  const uint32_t dynamic_shared_align;  // KernelSource::dynamic_shared_align
  const Dim3 cluster;                   // KernelSource::cluster
  std::vector<KernelParam> params;      // KernelSource::params: names the sanitizer's buffers

 private:
  std::string name_;
  std::unique_ptr<host::SharedObject> so_;
};

// HostDeviceOptions::clock, else WARPTRACE_HOST_CLOCK.
absl::StatusOr<host::ClockMode> ClockModeOf(const HostDeviceOptions& options) {
  if (options.clock.has_value()) return *options.clock;
  const char* env = std::getenv("WARPTRACE_HOST_CLOCK");
  const std::string value = env != nullptr ? env : "";
  if (value.empty() || value == "steady") return host::ClockMode::kSteady;
  if (value == "deterministic") return host::ClockMode::kDeterministic;
  return absl::InvalidArgumentError(absl::StrCat(
      "WARPTRACE_HOST_CLOCK=", value, ": use steady (the default) or deterministic"));
}

uint32_t SanitizeBits(const SanitizeOptions& options) {
  return (options.bounds ? WARPTRACE_HOST_SANITIZE_BOUNDS : 0u) |
         (options.races ? WARPTRACE_HOST_SANITIZE_RACES : 0u) |
         (options.init ? WARPTRACE_HOST_SANITIZE_INIT : 0u);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HostDevice>> HostDevice::Create(HostDeviceOptions options) {
  ASSIGN_OR_RETURN(const host::ClockMode clock_mode, ClockModeOf(options));
  host::HostCompilerOptions cxx_options;
  cxx_options.compiler = options.compiler;
  cxx_options.extra_flags = options.extra_flags;
  cxx_options.use_precompiled_header = options.use_precompiled_header;
  cxx_options.sanitize = SanitizeBits(options.sanitize);
  if (options.use_disk_cache) {
    // Without a directory CachingCompiler::Create below reports why.
    absl::StatusOr<std::string> directory = options.cache_directory.empty()
                                                ? DiskCache::DefaultDirectory()
                                                : options.cache_directory;
    if (directory.ok()) cxx_options.precompiled_header_directory = *std::move(directory);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<host::HostCompiler> cxx,
                   host::HostCompiler::Create(std::move(cxx_options)));
  const std::string path = cxx->path();
  const std::string version = cxx->version_line();
  const host::HostCompiler* host_compiler = cxx.get();
  CompileCacheOptions cache;
  cache.directory = options.cache_directory;
  cache.use_disk = options.use_disk_cache;
  ASSIGN_OR_RETURN(std::unique_ptr<CachingCompiler> compiler,
                   CachingCompiler::Create(std::move(cxx), cache));
  host::RuntimeOptions runtime_options;
  runtime_options.num_sms = options.num_virtual_sms;
  runtime_options.blocks_per_sm = options.blocks_per_sm;
  runtime_options.fiber_stack_bytes = options.fiber_stack_bytes;
  runtime_options.launch_timeout = options.launch_timeout;
  runtime_options.clock = clock_mode;
  ASSIGN_OR_RETURN(std::unique_ptr<host::Runtime> runtime,
                   host::Runtime::Create(runtime_options));
  return std::unique_ptr<HostDevice>(new HostDevice(
      std::move(options), path, version, host_compiler, std::move(compiler), std::move(runtime)));
}

HostDevice::HostDevice(HostDeviceOptions options, std::string compiler_path,
                       std::string compiler_version, const host::HostCompiler* host_compiler,
                       std::unique_ptr<CachingCompiler> compiler,
                       std::unique_ptr<host::Runtime> runtime)
    : options_(std::move(options)),
      compiler_path_(std::move(compiler_path)),
      compiler_version_(std::move(compiler_version)),
      host_compiler_(host_compiler),
      compiler_(std::move(compiler)),
      runtime_(std::move(runtime)) {}

HostDevice::~HostDevice() {
  absl::MutexLock lock(&memory_mu_);
  allocations_.clear();
}

std::string HostDevice::Name() const {
  return absl::StrCat(
      "host backend (", compiler_version_, ", ", runtime_->num_sms(), " virtual SMs",
      clock_mode() == host::ClockMode::kDeterministic ? ", deterministic clock" : "",
      options_.sanitize.any() ? absl::StrCat(", sanitize=", SanitizeName(options_.sanitize))
                              : "",
      ")");
}

ClockInfo HostDevice::Clock() const {
  ClockInfo clock;
  clock.nominal_sm_clock_khz = WARPTRACE_HOST_SM_CLOCK_KHZ;
  clock.num_sms = runtime_->num_sms();
  clock.host_backend = true;  // outputs say the times are the CPU's, not a GPU's
  return clock;
}

HostDeviceStats HostDevice::stats() const {
  const CompileCacheStats cache = compiler_->stats();
  HostDeviceStats stats;
  stats.compilations = cache.misses;
  stats.cache_hits = cache.memory_hits + cache.disk_hits;
  const host::HostCompilerStats cxx = host_compiler_->stats();
  stats.compilations_with_pch = cxx.with_pch;
  stats.pch_builds = cxx.pch_builds;
  stats.pch_fallbacks = cxx.pch_fallbacks;
  return stats;
}

absl::StatusOr<void*> HostDevice::Allocate(uint64_t bytes) {
  if (bytes == 0) return absl::InvalidArgumentError("cannot allocate 0 bytes on the host device");
  absl::StatusOr<host::GuardedRegion> region =
      host::GuardedRegion::Map(bytes, kAlignment, "device buffer");
  if (!region.ok()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "host device out of memory allocating ", bytes, " bytes: ", region.status().message()));
  }
  void* ptr = region->data();
  absl::MutexLock lock(&memory_mu_);
  allocations_.emplace(reinterpret_cast<uintptr_t>(ptr), *std::move(region));
  return ptr;
}

absl::StatusOr<TensorMapBytes> HostDevice::EncodeTensorMap(const TensorMapSpec& spec,
                                                           void* device_address,
                                                           absl::string_view what) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(device_address);
  uint64_t buffer_bytes = 0;
  {
    absl::MutexLock lock(&memory_mu_);
    auto it = allocations_.upper_bound(address);
    if (it != allocations_.begin()) {
      --it;
      const uint64_t start = it->first;
      if (address <= start + it->second.size()) {
        buffer_bytes = it->second.size();
        // ValidateTensorMap measures from the buffer's start.
        if (address - start != spec.offset_bytes) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "encoding tensor map %s: the address %p is %u bytes into its allocation, not "
              "offset_bytes = %u",
              what, device_address, address - start, spec.offset_bytes));
        }
      }
    }
  }
  if (buffer_bytes == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "encoding tensor map %s: %p is not in an allocation of this host device", what,
        device_address));
  }
  RETURN_IF_ERROR(ValidateTensorMap(spec, buffer_bytes, address, what));
  WarptraceHostTensorMap m{};
  m.magic = WARPTRACE_HOST_TMA_MAGIC;
  m.version = WARPTRACE_HOST_TMA_VERSION;
  m.rank = static_cast<uint32_t>(spec.dims.size());
  m.element_bytes = ElementBytes(spec.type);
  m.data_type = static_cast<uint32_t>(spec.type);
  m.swizzle = static_cast<uint32_t>(spec.swizzle);
  m.oob_fill = static_cast<uint32_t>(spec.oob_fill);
  for (size_t i = 0; i < spec.dims.size(); ++i) {
    m.dims[i] = spec.dims[i];
    m.box[i] = spec.box[i];
  }
  for (size_t i = 0; i < spec.strides_bytes.size(); ++i) m.strides[i] = spec.strides_bytes[i];
  m.global_address = address;
  TensorMapBytes out;
  static_assert(sizeof(m) == sizeof(out.bytes), "the descriptor fills the map");
  std::memcpy(out.bytes, &m, sizeof(m));
  return out;
}

absl::Status HostDevice::Free(void* device_ptr) {
  absl::MutexLock lock(&memory_mu_);
  auto it = allocations_.find(reinterpret_cast<uintptr_t>(device_ptr));
  if (it == allocations_.end()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot free %p: not the start of an allocation of this host device", device_ptr));
  }
  allocations_.erase(it);  // unmaps it
  return absl::OkStatus();
}

absl::Status HostDevice::CheckRange(const void* ptr, uint64_t bytes, const char* what) const {
  if (bytes == 0) return absl::OkStatus();
  if (ptr == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " of ", bytes, " bytes at a null pointer"));
  }
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  absl::MutexLock lock(&memory_mu_);
  auto it = allocations_.upper_bound(address);
  if (it == allocations_.begin() ||
      address - std::prev(it)->first >= std::prev(it)->second.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s of %u bytes at %p: not in any allocation of this host device", what,
                        bytes, ptr));
  }
  --it;
  const uint64_t offset = address - it->first;
  if (bytes > it->second.size() - offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s of %u bytes at offset %u overruns the allocation of %u bytes at %p", what, bytes,
        offset, it->second.size(), reinterpret_cast<void*>(it->first)));
  }
  return absl::OkStatus();
}

absl::Status HostDevice::CopyToDevice(void* device_dst, const void* host_src, uint64_t bytes) {
  RETURN_IF_ERROR(CheckRange(device_dst, bytes, "copy to the device"));
  if (bytes > 0) std::memcpy(device_dst, host_src, bytes);
  return absl::OkStatus();
}

absl::Status HostDevice::CopyToHost(void* host_dst, const void* device_src, uint64_t bytes) {
  RETURN_IF_ERROR(CheckRange(device_src, bytes, "copy to the host"));
  if (bytes > 0) std::memcpy(host_dst, device_src, bytes);
  return absl::OkStatus();
}

absl::Status HostDevice::Memset(void* device_ptr, uint8_t value, uint64_t bytes) {
  RETURN_IF_ERROR(CheckRange(device_ptr, bytes, "memset"));
  if (bytes > 0) std::memset(device_ptr, value, bytes);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LoadedKernel>> HostDevice::Load(const KernelSource& source) {
  if (source.host_entry.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", source.kernel_name, " has no host entry (KernelSource::host_entry); the "
        "host backend needs `extern \"C\" void <host_entry>(void** args)`"));
  }
  ASSIGN_OR_RETURN(CompiledKernel compiled, compiler_->Compile(host::HostCompileRequest(source)));
  ASSIGN_OR_RETURN(std::unique_ptr<host::SharedObject> so,
                   host::SharedObject::Load(compiled.cubin, source.kernel_name));
  auto version = reinterpret_cast<WarptraceHostAbiVersionFn>(so->Symbol("warptrace_host_abi_version"));
  auto entry = reinterpret_cast<WarptraceHostEntryFn>(so->Symbol(source.host_entry.c_str()));
  if (version == nullptr || version() != WARPTRACE_HOST_ABI_VERSION) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the host build of kernel ", source.kernel_name, " lacks the host ABI (version ",
        WARPTRACE_HOST_ABI_VERSION, "): was it compiled with -include cuda_on_cpu.h?"));
  }
  if (entry == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", source.kernel_name, " defines no host entry `", source.host_entry,
        "`: the source must end with `#ifdef WARPTRACE_HOST_BACKEND extern \"C\" void ",
        source.host_entry, "(void** args) {...} #endif`"));
  }
  auto kernel = std::make_unique<HostKernel>(this, source.kernel_name, std::move(so), entry,
                                             std::max<uint32_t>(source.dynamic_shared_align, 16),
                                             source.cluster);
  kernel->params = source.params;
  return std::unique_ptr<LoadedKernel>(std::move(kernel));
}

absl::Status HostDevice::Launch(LoadedKernel& kernel, Dim3 grid, Dim3 block,
                                uint32_t dynamic_shared_bytes, void** args) {
  auto* host_kernel = dynamic_cast<HostKernel*>(&kernel);
  if (host_kernel == nullptr || host_kernel->owner != this) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel ", kernel.name(), " was not loaded by this host device"));
  }
  host::LaunchSpec spec;
  spec.what = absl::StrFormat("launching kernel %s on grid (%u,%u,%u) x block (%u,%u,%u)",
                              kernel.name(), grid.x, grid.y, grid.z, block.x, block.y, block.z);
  if (grid.Count() == 0 || block.Count() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(spec.what, ": empty grid or block"));
  }
  if (block.Count() > options_.max_threads_per_block) {
    return absl::ResourceExhaustedError(absl::StrCat(
        spec.what, ": ", block.Count(), " threads per block exceed the limit of ",
        options_.max_threads_per_block));
  }
  if (dynamic_shared_bytes > options_.max_dynamic_shared_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        spec.what, ": ", dynamic_shared_bytes,
        " bytes of dynamic shared memory exceed the limit of ",
        options_.max_dynamic_shared_bytes));
  }
  spec.entry = host_kernel->entry;
  spec.args = args;
  spec.grid = {grid.x, grid.y, grid.z};
  spec.block = {block.x, block.y, block.z};
  spec.dynamic_shared_bytes = dynamic_shared_bytes;
  spec.dynamic_shared_align = host_kernel->dynamic_shared_align;
  const Dim3& c = host_kernel->cluster;
  spec.cluster = {c.x, c.y, c.z};
  spec.sanitize = SanitizeBits(options_.sanitize);
  if (spec.sanitize != 0) spec.sanitize_buffers = SanitizeBuffers(*host_kernel, args);
  return runtime_->Launch(spec);
}

std::vector<host::SanitizeBuffer> HostDevice::SanitizeBuffers(const LoadedKernel& kernel,
                                                              void** args) const {
  const auto& params = static_cast<const HostKernel&>(kernel).params;
  absl::MutexLock lock(&memory_mu_);
  std::vector<host::SanitizeBuffer> buffers;
  for (const auto& [start, region] : allocations_) {
    host::SanitizeBuffer& b = buffers.emplace_back();
    b.start = start;
    b.bytes = region.size();
    b.name = absl::StrFormat("a device buffer (%u bytes at %p)", b.bytes,
                             reinterpret_cast<void*>(start));
    for (size_t i = 0; i < params.size() && args != nullptr; ++i) {
      if (!params[i].is_pointer || params[i].size != sizeof(void*)) continue;
      void* value = nullptr;
      std::memcpy(&value, args[i], sizeof value);
      if (reinterpret_cast<uintptr_t>(value) == start) {
        b.name = absl::StrCat("argument `", params[i].name, "` (", params[i].type, ")");
        b.races = !PointsToConst(params[i].type) &&
                  !absl::StartsWith(params[i].name, "warptrace_");  // the recorder's own
        break;
      }
    }
  }
  return buffers;
}

}  // namespace warptrace
