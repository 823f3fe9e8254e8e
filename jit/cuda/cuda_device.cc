#include "jit/cuda/cuda_device.h"

#include <cuda.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "jit/compile/nvrtc_compiler.h"
#include "jit/cuda/cuda_driver.h"
#include "jit/cuda/cuda_status.h"
#include "jit/primitives/embedded_primitives.h"

namespace warptrace {
namespace {

constexpr char kPreludeName[] = "warptrace_cuda_prelude.h";
constexpr char kPrelude[] =
    "// Device macros of the KernelSource contract (jit/builder/kernel_source.h), NVRTC side,\n"
    "// and the device prelude every kernel sees (jit/primitives/warptrace_device_prelude.cuh).\n"
    "#define WARPTRACE_DYNAMIC_SHARED(type, name) extern __shared__ __align__(16) type name[]\n"
    "#include \"warptrace_device_prelude.cuh\"\n";
constexpr char kDevicePreludeName[] = "warptrace_device_prelude.cuh";
// The C and C++ headers whose content the device prelude gives: NVRTC has none of them, so a
// kernel's `#include <cstdint>` resolves to the prelude.
constexpr const char* kStandardHeadersInPrelude[] = {
    "cstdint", "stdint.h", "cstddef", "stddef.h", "climits", "limits.h", "cfloat", "float.h"};
constexpr uint32_t kDefaultDynamicSharedLimit = 48 * 1024;

CUdeviceptr ToDevicePtr(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr); }

class CudaKernel final : public LoadedKernel {
 public:
  CudaKernel(const CudaDevice* owner, const CudaDriver* driver, std::string name,
             CUmodule module, CUfunction function, Dim3 cluster, bool non_portable_cluster)
      : owner(owner), function(function), cluster(cluster),
        non_portable_cluster(non_portable_cluster), driver_(driver), name_(std::move(name)),
        module_(module) {}
  ~CudaKernel() override { driver_->api().cuModuleUnload(module_); }
  const std::string& name() const override { return name_; }

  const CudaDevice* const owner;
  const CUfunction function;
  uint32_t dynamic_shared_limit = kDefaultDynamicSharedLimit;  // guarded by launch_mu_
  const Dim3 cluster;               // KernelSource::cluster
  const bool non_portable_cluster;  // KernelSource::non_portable_cluster
  bool non_portable_allowed = false;  // guarded by launch_mu_

 private:
  const CudaDriver* driver_;
  std::string name_;
  CUmodule module_;
};

// cuLaunchKernelEx with the kernel's cluster shape (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION),
// after opting into a non-portable size where the kernel asked. A failure of the opt-in or
// a driver without cuLaunchKernelEx sets *error (and returns its CUresult).
CUresult LaunchCluster(const CudaDriverApi& cu, CudaKernel& kernel, Dim3 grid, Dim3 block,
                       uint32_t dynamic_shared_bytes, void** args, const std::string& what,
                       const std::string& device_name, absl::Status* error) {
  const Dim3& c = kernel.cluster;
  if (cu.cuLaunchKernelEx == nullptr) {
    *error = absl::UnavailableError(absl::StrCat(
        what, ": the driver of ", device_name,
        " lacks cuLaunchKernelEx (CUDA 11.8+), which cluster launches need; update the "
        "NVIDIA driver"));
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  // More than 8 CTAs per cluster needs the kernel's opt-in (CUDA programming guide: "a
  // cluster size of 8 thread blocks is the maximum portable cluster size").
  if (kernel.non_portable_cluster && !kernel.non_portable_allowed) {
    const CUresult allowed = cu.cuFuncSetAttribute(
        kernel.function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (allowed != CUDA_SUCCESS) {
      *error = ToStatus(allowed, absl::StrCat(what, ": allowing a non-portable "
                                                            "cluster size"));
      return allowed;
    }
    kernel.non_portable_allowed = true;
  }
  CUlaunchAttribute attribute;
  std::memset(&attribute, 0, sizeof attribute);
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = c.x;
  attribute.value.clusterDim.y = c.y;
  attribute.value.clusterDim.z = c.z;
  CUlaunchConfig config;
  std::memset(&config, 0, sizeof config);
  config.gridDimX = grid.x;
  config.gridDimY = grid.y;
  config.gridDimZ = grid.z;
  config.blockDimX = block.x;
  config.blockDimY = block.y;
  config.blockDimZ = block.z;
  config.sharedMemBytes = dynamic_shared_bytes;
  config.hStream = nullptr;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return cu.cuLaunchKernelEx(&config, kernel.function, args, /*extra=*/nullptr);
}

constexpr size_t kMaxPending = 8;

// " (launched since the last synchronize: kernel a on ...; kernel b on ...)" naming where a
// kernel's asynchronous fault came from; "" when nothing is pending.
std::string PendingKernels(const std::vector<std::string>& pending, uint64_t count) {
  if (count == 0) return "";
  std::string out = absl::StrCat(" (launched since the last synchronize: ",
                                 absl::StrJoin(pending, "; "));
  if (count > pending.size()) absl::StrAppend(&out, "; and ", count - pending.size(), " more");
  return absl::StrCat(out, ")");
}

}  // namespace

// Owns the retained primary context: released when the device is destroyed, or when
// Create fails after retaining it.
struct CudaDevice::Driver {
  Driver(const CudaDriver* driver, CUdevice device, CUcontext context)
      : driver(driver), device(device), context(context) {}
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;
  ~Driver() { driver->api().cuDevicePrimaryCtxRelease(device); }
  const CudaDriverApi& api() const { return driver->api(); }

  const CudaDriver* const driver;
  const CUdevice device;
  const CUcontext context;
};

std::string CudaToolkitIncludeDir() {
  static const std::string* dir = [] {
    std::vector<std::string> candidates;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* root = std::getenv(var); root != nullptr && *root != '\0') {
        candidates.push_back(absl::StrCat(root, "/include"));
      }
    }
    candidates.push_back("/usr/local/cuda/include");
    for (const std::string& c : candidates) {
      struct stat st;
      if (::stat(absl::StrCat(c, "/cuda_bf16.h").c_str(), &st) == 0) return new std::string(c);
    }
    return new std::string();
  }();
  return *dir;
}

absl::StatusOr<CompileRequest> CudaCompileRequest(const KernelSource& source,
                                                  const CudaTarget& target,
                                                  const std::vector<std::string>& extra_flags) {
  CompileRequest request;
  request.name = absl::StrCat(source.kernel_name, ".cu");
  request.source = source.source;
  request.headers = source.headers;
  request.headers.push_back({kPreludeName, kPrelude});
  // (NVRTC refuses a program with two headers of one name: the kernel's headers carry the
  // prelude already when they are the primitives'.)
  const bool has_prelude =
      std::any_of(request.headers.begin(), request.headers.end(),
                  [](const EmbeddedFile& h) { return h.name == kDevicePreludeName; });
  for (const EmbeddedFile& header : EmbeddedPrimitivesHeaders()) {
    if (header.name == kDevicePreludeName && !has_prelude) request.headers.push_back(header);
  }
  for (const char* name : kStandardHeadersInPrelude) {
    request.headers.push_back(
        {name, "// NVRTC: the device prelude's part of this header.\n"
               "#include \"warptrace_device_prelude.cuh\"\n"});
  }
  // wgmma and setmaxnreg exist only on architecture-specific targets (plain sm_90 fails in
  // ptxas): the kernel's requirements choose the variant, or name what the GPU lacks.
  ASSIGN_OR_RETURN(request.options.target, source.requirements.Resolve(target));
  request.options.extra_flags = {absl::StrCat("--pre-include=", kPreludeName)};
  // The toolkit's headers kernels include by name (<cuda_bf16.h>, <cuda_fp16.h>): NVRTC has
  // no search path of its own.
  const std::string toolkit_include = CudaToolkitIncludeDir();
  if (!toolkit_include.empty()) {
    request.options.extra_flags.push_back(absl::StrCat("-I", toolkit_include));
  }
  request.options.extra_flags.insert(request.options.extra_flags.end(), extra_flags.begin(),
                                     extra_flags.end());
  return request;
}

absl::StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Create(CudaDeviceOptions options) {
  ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  const CudaDriverApi& cu = driver->api();
  int count = 0;
  RETURN_IF_ERROR(ToStatus(cu.cuDeviceGetCount(&count), "counting CUDA devices"));
  if (options.ordinal < 0 || options.ordinal >= count) {
    return absl::UnavailableError(absl::StrCat("no CUDA device ", options.ordinal, ": ", count,
                                               " device(s) present; use the host backend"));
  }
  const std::string which = absl::StrCat("CUDA device ", options.ordinal);
  CUdevice device;
  RETURN_IF_ERROR(ToStatus(cu.cuDeviceGet(&device, options.ordinal), absl::StrCat("getting ", which)));
  CUcontext context;
  RETURN_IF_ERROR(ToStatus(cu.cuDevicePrimaryCtxRetain(&context, device),
                           absl::StrCat("retaining the primary context of ", which)));
  auto handles = std::make_unique<Driver>(driver, device, context);
  CompileCacheOptions cache_options;
  cache_options.directory = options.cache_directory;
  cache_options.use_disk = options.use_disk_cache;
  ASSIGN_OR_RETURN(std::unique_ptr<CachingCompiler> compiler,
                   CachingCompiler::Create(std::make_unique<NvrtcCompiler>(), cache_options));
  std::unique_ptr<CudaDevice> out(
      new CudaDevice(std::move(handles), std::move(compiler), std::move(options)));
  RETURN_IF_ERROR(out->MakeCurrent("creating"));

  char name[256] = {};
  RETURN_IF_ERROR(ToStatus(cu.cuDeviceGetName(name, sizeof(name), device),
                           absl::StrCat("reading the name of ", which)));
  out->name_ = name;
  int major = 0, minor = 0, clock_khz = 0, sms = 0;
  const struct {
    int* value;
    CUdevice_attribute attribute;
    const char* what;
  } attributes[] = {
      {&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability (major)"},
      {&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability (minor)"},
      {&clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "SM clock rate"},
      {&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count"},
      {&out->max_shared_optin_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       "opt-in shared memory per block"},
  };
  for (const auto& attribute : attributes) {
    RETURN_IF_ERROR(ToStatus(cu.cuDeviceGetAttribute(attribute.value, attribute.attribute, device),
                             absl::StrCat("reading the ", attribute.what, " of ", which)));
  }
  out->target_ = out->options_.target.value_or(CudaTarget(major, minor));
  out->clock_.nominal_sm_clock_khz = static_cast<uint64_t>(clock_khz);
  out->clock_.num_sms = static_cast<uint32_t>(sms);
  return out;
}

CudaDevice::CudaDevice(std::unique_ptr<Driver> driver, std::unique_ptr<CachingCompiler> compiler,
                       CudaDeviceOptions options)
    : driver_(std::move(driver)), compiler_(std::move(compiler)), options_(std::move(options)) {}

CudaDevice::~CudaDevice() = default;

absl::Status CudaDevice::MakeCurrent(absl::string_view what) const {
  return ToStatus(driver_->api().cuCtxSetCurrent(driver_->context),
                  absl::StrCat("making the context of ", name_, " current for ", what));
}

absl::StatusOr<void*> CudaDevice::Allocate(uint64_t bytes) {
  RETURN_IF_ERROR(MakeCurrent("allocating"));
  CUdeviceptr ptr = 0;
  RETURN_IF_ERROR(ToStatus(driver_->api().cuMemAlloc(&ptr, bytes),
                           absl::StrCat("allocating ", bytes, " bytes on ", name_)));
  return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
}

absl::Status CudaDevice::Free(void* device_ptr) {
  RETURN_IF_ERROR(MakeCurrent("freeing"));
  return ToStatus(driver_->api().cuMemFree(ToDevicePtr(device_ptr)),
                  absl::StrFormat("freeing %p on %s", device_ptr, name_));
}

absl::Status CudaDevice::CopyToDevice(void* device_dst, const void* host_src, uint64_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  RETURN_IF_ERROR(MakeCurrent("copying to the device"));
  return ToStatus(driver_->api().cuMemcpyHtoD(ToDevicePtr(device_dst), host_src, bytes),
                  absl::StrCat("copying ", bytes, " bytes to ", name_));
}

absl::Status CudaDevice::CopyToHost(void* host_dst, const void* device_src, uint64_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  RETURN_IF_ERROR(MakeCurrent("copying to the host"));
  return ToStatus(driver_->api().cuMemcpyDtoH(host_dst, ToDevicePtr(device_src), bytes),
                  absl::StrCat("copying ", bytes, " bytes from ", name_));
}

absl::Status CudaDevice::Memset(void* device_ptr, uint8_t value, uint64_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  RETURN_IF_ERROR(MakeCurrent("memset"));
  return ToStatus(driver_->api().cuMemsetD8(ToDevicePtr(device_ptr), value, bytes),
                  absl::StrCat("setting ", bytes, " bytes on ", name_));
}

absl::StatusOr<std::unique_ptr<LoadedKernel>> CudaDevice::Load(const KernelSource& source) {
  ASSIGN_OR_RETURN(const CompileRequest request,
                   CudaCompileRequest(source, target_, options_.extra_flags));
  ASSIGN_OR_RETURN(CompiledKernel compiled, compiler_->Compile(request));
  RETURN_IF_ERROR(MakeCurrent("loading"));
  const CudaDriverApi& cu = driver_->api();
  CUmodule module;
  RETURN_IF_ERROR(ToStatus(cu.cuModuleLoadData(&module, compiled.cubin.data()),
                           absl::StrCat("loading the ", compiled.arch, " module of kernel ",
                                        source.kernel_name, " on ", name_)));
  CUfunction function;
  if (absl::Status found = ToStatus(cu.cuModuleGetFunction(&function, module,
                                                           source.kernel_name.c_str()),
                                    absl::StrCat("finding kernel ", source.kernel_name,
                                                 " in its module (is it extern \"C\"?)"));
      !found.ok()) {
    cu.cuModuleUnload(module);
    return found;
  }
  return std::unique_ptr<LoadedKernel>(
      new CudaKernel(this, driver_->driver, source.kernel_name, module, function,
                     source.cluster, source.non_portable_cluster));
}

absl::Status CudaDevice::Launch(LoadedKernel& kernel, Dim3 grid, Dim3 block,
                                uint32_t dynamic_shared_bytes, void** args) {
  auto* cuda_kernel = dynamic_cast<CudaKernel*>(&kernel);
  if (cuda_kernel == nullptr || cuda_kernel->owner != this) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel ", kernel.name(), " was not loaded by ", name_));
  }
  const std::string what = absl::StrFormat(
      "launching kernel %s on grid (%u,%u,%u) x block (%u,%u,%u) with %u bytes of dynamic "
      "shared memory", kernel.name(), grid.x, grid.y, grid.z, block.x, block.y, block.z,
      dynamic_shared_bytes);
  if (grid.Count() == 0 || block.Count() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": empty grid or block"));
  }
  if (dynamic_shared_bytes > static_cast<uint32_t>(max_shared_optin_)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, ": ", name_, " allows at most ", max_shared_optin_, " bytes per block"));
  }
  RETURN_IF_ERROR(MakeCurrent("launching"));
  const CudaDriverApi& cu = driver_->api();
  absl::MutexLock lock(&launch_mu_);
  if (dynamic_shared_bytes > cuda_kernel->dynamic_shared_limit) {
    RETURN_IF_ERROR(ToStatus(
        cu.cuFuncSetAttribute(cuda_kernel->function,
                              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                              static_cast<int>(dynamic_shared_bytes)),
        absl::StrCat(what, ": raising the dynamic shared memory limit")));
    cuda_kernel->dynamic_shared_limit = dynamic_shared_bytes;
  }
  absl::Status cluster_error;
  const CUresult launched =
      cuda_kernel->cluster.Count() > 1
          ? LaunchCluster(cu, *cuda_kernel, grid, block, dynamic_shared_bytes, args, what,
                          name_, &cluster_error)
          : cu.cuLaunchKernel(cuda_kernel->function, grid.x, grid.y, grid.z, block.x,
                              block.y, block.z, dynamic_shared_bytes, /*hStream=*/nullptr,
                              args, /*extra=*/nullptr);
  if (!cluster_error.ok()) return cluster_error;
  if (launched != CUDA_SUCCESS) {
    // A sticky error of an earlier kernel (an illegal address) shows up at the next launch.
    return ToStatus(launched, absl::StrCat(what, PendingKernels(pending_, pending_count_)));
  }
  if (pending_.size() < kMaxPending) {
    pending_.push_back(absl::StrFormat("kernel %s on grid (%u,%u,%u) x block (%u,%u,%u)",
                                       kernel.name(), grid.x, grid.y, grid.z, block.x, block.y,
                                       block.z));
  }
  ++pending_count_;
  return absl::OkStatus();
}

absl::StatusOr<Device::LaunchDurations> CudaDevice::TimeLaunches(LoadedKernel& kernel,
                                                                 Dim3 grid, Dim3 block,
                                                                 uint32_t dynamic_shared_bytes,
                                                                 void** args, int count) {
  if (count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("timing kernel ", kernel.name(), ": count must be at least 1, not ", count));
  }
  const CudaDriverApi& cu = driver_->api();
  if (cu.cuEventCreate == nullptr || cu.cuEventDestroy == nullptr ||
      cu.cuEventRecord == nullptr || cu.cuEventSynchronize == nullptr ||
      cu.cuEventElapsedTime == nullptr) {
    return absl::UnavailableError(absl::StrCat("timing kernel ", kernel.name(), ": the driver ",
                                               driver_->driver->library(),
                                               " lacks the CUDA event API; update the driver"));
  }
  RETURN_IF_ERROR(MakeCurrent("timing"));
  const std::string what = absl::StrCat("timing kernel ", kernel.name(), " on ", name_);
  CUevent events[2] = {nullptr, nullptr};
  struct EventsDeleter {
    const CudaDriverApi& cu;
    CUevent* events;
    ~EventsDeleter() {
      for (int i = 0; i < 2; ++i) {
        if (events[i] != nullptr) cu.cuEventDestroy(events[i]);
      }
    }
  } deleter{cu, events};
  for (CUevent& event : events) {
    RETURN_IF_ERROR(ToStatus(cu.cuEventCreate(&event, CU_EVENT_DEFAULT),
                             absl::StrCat(what, ": creating an event")));
  }
  LaunchDurations out;
  out.clock = "CUDA events";
  out.micros.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    RETURN_IF_ERROR(ToStatus(cu.cuEventRecord(events[0], /*hStream=*/nullptr),
                             absl::StrCat(what, ": recording the start event")));
    RETURN_IF_ERROR(Launch(kernel, grid, block, dynamic_shared_bytes, args));
    RETURN_IF_ERROR(ToStatus(cu.cuEventRecord(events[1], /*hStream=*/nullptr),
                             absl::StrCat(what, ": recording the stop event")));
    RETURN_IF_ERROR(ToStatus(cu.cuEventSynchronize(events[1]),
                             absl::StrCat(what, ": waiting for launch ", i)));
    float ms = 0;
    RETURN_IF_ERROR(ToStatus(cu.cuEventElapsedTime(&ms, events[0], events[1]),
                             absl::StrCat(what, ": reading the elapsed time of launch ", i)));
    out.micros.push_back(static_cast<double>(ms) * 1000.0);
  }
  return out;
}

absl::StatusOr<TensorMapBytes> CudaDevice::EncodeTensorMap(const TensorMapSpec& spec,
                                                           void* device_address,
                                                           absl::string_view what) {
  const CudaDriverApi& cu = driver_->api();
  if (cu.cuTensorMapEncodeTiled == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "encoding tensor map ", what, ": the driver ", driver_->driver->library(),
        " lacks cuTensorMapEncodeTiled (CUDA 12.0+); update the NVIDIA driver"));
  }
  const cuuint32_t rank = static_cast<cuuint32_t>(spec.dims.size());
  cuuint64_t dims[5] = {};
  cuuint64_t strides[5] = {};
  cuuint32_t box[5] = {};
  cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  for (size_t i = 0; i < spec.dims.size() && i < 5; ++i) {
    dims[i] = spec.dims[i];
    box[i] = spec.box[i];
  }
  for (size_t i = 0; i < spec.strides_bytes.size() && i < 4; ++i) strides[i] = spec.strides_bytes[i];
  static_assert(sizeof(CUtensorMap) == sizeof(TensorMapBytes), "a CUtensorMap is 128 bytes");
  CUtensorMap map;
  RETURN_IF_ERROR(MakeCurrent("encoding a tensor map"));
  RETURN_IF_ERROR(ToStatus(
      cu.cuTensorMapEncodeTiled(&map, static_cast<CUtensorMapDataType>(spec.type), rank,
                                device_address, dims, strides, box, element_strides,
                                CU_TENSOR_MAP_INTERLEAVE_NONE,
                                static_cast<CUtensorMapSwizzle>(spec.swizzle),
                                CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                static_cast<CUtensorMapFloatOOBfill>(spec.oob_fill)),
      absl::StrCat("encoding tensor map ", what, " (", DescribeTensorMap(spec),
                   ") with cuTensorMapEncodeTiled")));
  TensorMapBytes out;
  std::memcpy(out.bytes, &map, sizeof(map));
  return out;
}

absl::Status CudaDevice::Synchronize() {
  RETURN_IF_ERROR(MakeCurrent("synchronizing"));
  std::vector<std::string> pending;
  uint64_t count = 0;
  {
    absl::MutexLock lock(&launch_mu_);
    pending = pending_;
    count = pending_count_;
  }
  const CUresult synced = driver_->api().cuCtxSynchronize();
  if (synced != CUDA_SUCCESS) {
    return ToStatus(synced, absl::StrCat("waiting for the kernels on ", name_, " to finish",
                                         PendingKernels(pending, count)));
  }
  absl::MutexLock lock(&launch_mu_);
  // Launches made meanwhile by other threads stay pending.
  pending_.erase(pending_.begin(), pending_.begin() + std::min(pending_.size(), pending.size()));
  pending_count_ -= std::min(pending_count_, count);
  return absl::OkStatus();
}

}  // namespace warptrace
