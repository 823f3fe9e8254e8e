#include "jit/host_device.h"

#include <dlfcn.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "jit/diagnostics.h"
#include "jit/host/embedded_host_headers.h"
#include "jit/host/host_abi.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "profiler/status_macros.h"

namespace warptrace {
namespace {

constexpr uint64_t kAlignment = 256;

// A directory removed with everything in it when this goes out of scope.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Create(absl::string_view prefix) {
    llvm::SmallString<128> path;
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
            llvm::StringRef(prefix.data(), prefix.size()), path)) {
      return absl::UnavailableError(
          absl::StrCat("cannot create a temporary directory: ", ec.message()));
    }
    return TempDir(std::string(path.str()));
  }
  TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, "")) {}
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    if (!path_.empty()) llvm::sys::fs::remove_directories(path_);
  }
  const std::string& path() const { return path_; }
  std::string File(absl::string_view name) const { return absl::StrCat(path_, "/", name); }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

absl::Status WriteFile(const std::string& path, absl::string_view contents) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (!ec) {
    out << llvm::StringRef(contents.data(), contents.size());
    out.close();
    ec = out.error();
  }
  if (ec) return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    return absl::UnavailableError(
        absl::StrCat("cannot read ", path, ": ", buffer.getError().message()));
  }
  return std::string((*buffer)->getBuffer());
}

struct ProgramResult {
  int exit_code = 0;
  std::string output;  // stdout and stderr together
};

// Runs `argv` (argv[0] is the program path) with stdout+stderr captured in `dir`.
absl::StatusOr<ProgramResult> RunProgram(const std::vector<std::string>& argv,
                                         const TempDir& dir) {
  const std::string log_path = dir.File("output.log");
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  llvm::StringRef log(log_path);
  const llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), log, log};
  std::string error;
  bool execution_failed = false;
  ProgramResult result;
  result.exit_code = llvm::sys::ExecuteAndWait(argv[0], args, /*Env=*/llvm::None, redirects,
                                               /*SecondsToWait=*/0, /*MemoryLimit=*/0, &error,
                                               &execution_failed);
  if (execution_failed) {
    return absl::UnavailableError(
        absl::StrCat("cannot run ", absl::StrJoin(argv, " "), ": ", error));
  }
  ASSIGN_OR_RETURN(result.output, ReadFile(log_path));
  return result;
}

absl::StatusOr<std::string> FindCompiler(const HostDeviceOptions& options) {
  std::vector<std::string> candidates;
  std::string origin;
  if (!options.compiler.empty()) {
    candidates = {options.compiler};
    origin = "HostDeviceOptions::compiler";
  } else if (const char* env = std::getenv("WARPTRACE_HOST_CXX"); env != nullptr && *env) {
    candidates = {env};
    origin = "WARPTRACE_HOST_CXX";
  } else {
    candidates = {"g++", "clang++", "c++"};
    origin = "PATH";
  }
  for (const std::string& candidate : candidates) {
    if (candidate.find('/') != std::string::npos) {
      if (llvm::sys::fs::can_execute(candidate)) return candidate;
      continue;
    }
    if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(candidate)) return *path;
  }
  return absl::NotFoundError(absl::StrCat(
      "no C++ compiler for the host backend: looked for ", absl::StrJoin(candidates, ", "),
      " (from ", origin, "); install g++ or clang++, or set WARPTRACE_HOST_CXX to one"));
}

// Owns a dlopen handle.
class SharedObject {
 public:
  explicit SharedObject(void* handle) : handle_(handle) {}
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;
  ~SharedObject() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  void* Symbol(const char* name) const { return dlsym(handle_, name); }

 private:
  void* handle_;
};

class HostKernel final : public LoadedKernel {
 public:
  HostKernel(const HostDevice* owner, std::string name, std::unique_ptr<SharedObject> so,
             WarptraceHostEntryFn entry, WarptraceHostBindThreadFn bind)
      : owner(owner), name_(std::move(name)), so_(std::move(so)), entry(entry), bind(bind) {}
  const std::string& name() const override { return name_; }

  const HostDevice* const owner;

 private:
  std::string name_;
  std::unique_ptr<SharedObject> so_;

 public:
  const WarptraceHostEntryFn entry;
  const WarptraceHostBindThreadFn bind;
};

// Thrown through kernel code to unwind a thread of an aborted block.
struct BlockAborted {};

// The barriers and warp exchanges of one running block. One mutex guards everything: a
// block is at most 1024 threads and this backend is for correctness.
class BlockRuntime {
 public:
  BlockRuntime(uint32_t num_threads, absl::Duration timeout)
      : num_threads_(num_threads),
        timeout_(absl::ToChronoNanoseconds(timeout)),
        exchange_(num_threads) {
    block_barrier_.expected = num_threads;
    for (uint32_t first = 0; first < num_threads; first += 32) {
      Barrier warp;
      warp.expected = std::min<uint32_t>(32, num_threads - first);
      warp_barriers_.push_back(warp);
    }
  }

  static void SyncBlock(void* self) {
    auto* runtime = static_cast<BlockRuntime*>(self);
    runtime->Arrive(runtime->block_barrier_, /*warp=*/false);
  }
  static void SyncWarp(void* self, unsigned int warp) {
    auto* runtime = static_cast<BlockRuntime*>(self);
    runtime->Arrive(runtime->warp_barriers_[warp], /*warp=*/true);
  }
  static unsigned long long Shuffle(void* self, unsigned int warp, unsigned int lane,
                                    unsigned long long value, unsigned int src_lane) {
    auto* runtime = static_cast<BlockRuntime*>(self);
    Barrier& barrier = runtime->warp_barriers_[warp];
    runtime->exchange_[warp * 32 + lane] = value;
    runtime->Arrive(barrier, /*warp=*/true);
    const unsigned long long result =
        src_lane < barrier.expected ? runtime->exchange_[warp * 32 + src_lane] : value;
    runtime->Arrive(barrier, /*warp=*/true);  // nobody overwrites a slot before all read
    return result;
  }

  // A thread finished (normally or unwound).
  void Exit() {
    std::lock_guard<std::mutex> lock(mu_);
    ++exited_;
    CheckDeadlock();
    cv_.notify_all();
  }

  // Records the first exception escaping kernel code and aborts the block.
  void Fail(std::string message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (failure_.empty()) failure_ = std::move(message);
    if (abort_reason_.empty()) abort_reason_ = "aborted";
    cv_.notify_all();
  }

  // Empty when the block completed; else why it did not.
  std::string abort_reason() const { return abort_reason_; }
  std::string failure() const { return failure_; }

 private:
  struct Barrier {
    uint32_t expected = 0;
    uint32_t arrived = 0;
    uint64_t generation = 0;
  };

  void Arrive(Barrier& barrier, bool warp) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!abort_reason_.empty()) throw BlockAborted{};
    if (++barrier.arrived == barrier.expected) {
      barrier.arrived = 0;
      ++barrier.generation;
      (warp ? waiting_warp_ : waiting_block_) -= barrier.expected - 1;
      cv_.notify_all();
      return;
    }
    ++(warp ? waiting_warp_ : waiting_block_);
    CheckDeadlock();
    const uint64_t generation = barrier.generation;
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    while (barrier.generation == generation && abort_reason_.empty()) {
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout &&
          barrier.generation == generation && abort_reason_.empty()) {
        abort_reason_ = absl::StrFormat(
            "a thread waited more than %s at %s: %s", absl::FormatDuration(absl::FromChrono(timeout_)),
            warp ? "__syncwarp or a warp shuffle" : "__syncthreads", Census());
        cv_.notify_all();
      }
    }
    if (barrier.generation == generation) throw BlockAborted{};
  }

  std::string Census() const {
    return absl::StrFormat(
        "%u of %u threads wait at __syncthreads, %u at __syncwarp or a warp shuffle, %u "
        "exited, %u running",
        waiting_block_, num_threads_, waiting_warp_, exited_,
        num_threads_ - waiting_block_ - waiting_warp_ - exited_);
  }

  // Every thread that has not exited waits at a barrier that has not completed: no barrier
  // can complete any more.
  void CheckDeadlock() {
    const uint32_t waiting = waiting_block_ + waiting_warp_;
    if (waiting == 0 || waiting + exited_ != num_threads_ || !abort_reason_.empty()) return;
    abort_reason_ = absl::StrCat(
        "deadlock: ", Census(),
        "; every thread of a block must reach each __syncthreads, and every lane of a warp "
        "each __syncwarp and shuffle (a thread that returned early never arrives)");
    cv_.notify_all();
  }

  const uint32_t num_threads_;
  const std::chrono::nanoseconds timeout_;
  std::vector<unsigned long long> exchange_;  // one slot per thread, for shuffles
  std::mutex mu_;
  std::condition_variable cv_;
  Barrier block_barrier_;
  std::vector<Barrier> warp_barriers_;
  uint32_t waiting_block_ = 0;
  uint32_t waiting_warp_ = 0;
  uint32_t exited_ = 0;
  std::string abort_reason_;
  std::string failure_;
};

std::string DimString(const WarptraceHostDim& d) {
  return absl::StrFormat("(%u,%u,%u)", d.x, d.y, d.z);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HostDevice>> HostDevice::Create(HostDeviceOptions options) {
  ASSIGN_OR_RETURN(std::string compiler, FindCompiler(options));
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("warptrace-host-cxx"));
  ASSIGN_OR_RETURN(ProgramResult version, RunProgram({compiler, "--version"}, dir));
  if (version.exit_code != 0) {
    return absl::UnavailableError(absl::StrCat("the host compiler ", compiler,
                                               " failed to report its version (exit ",
                                               version.exit_code, "): ", version.output));
  }
  std::string version_line(absl::StripAsciiWhitespace(
      std::vector<absl::string_view>(absl::StrSplit(version.output, '\n'))[0]));
  std::optional<std::string> cache_directory;
  if (options.use_disk_cache) {
    cache_directory = options.cache_directory;
    if (cache_directory->empty()) {
      ASSIGN_OR_RETURN(cache_directory, DiskCache::DefaultDirectory());
    }
  }
  if (options.num_virtual_sms == 0) {
    return absl::InvalidArgumentError("HostDeviceOptions::num_virtual_sms must be at least 1");
  }
  return std::unique_ptr<HostDevice>(new HostDevice(std::move(options), std::move(compiler),
                                                    std::move(version_line),
                                                    std::move(cache_directory)));
}

HostDevice::HostDevice(HostDeviceOptions options, std::string compiler_path,
                       std::string compiler_version,
                       std::optional<std::string> cache_directory)
    : options_(std::move(options)),
      compiler_path_(std::move(compiler_path)),
      compiler_version_(std::move(compiler_version)) {
  if (cache_directory.has_value()) cache_.emplace(*std::move(cache_directory), "so");
}

HostDevice::~HostDevice() {
  absl::MutexLock lock(&memory_mu_);
  for (const auto& [start, bytes] : allocations_) std::free(reinterpret_cast<void*>(start));
}

std::string HostDevice::Name() const {
  return absl::StrCat("host backend (", compiler_version_, ", ", options_.num_virtual_sms,
                      " virtual SMs)");
}

ClockInfo HostDevice::Clock() const {
  ClockInfo clock;
  clock.nominal_sm_clock_khz = WARPTRACE_HOST_SM_CLOCK_KHZ;
  clock.num_sms = options_.num_virtual_sms;
  return clock;
}

HostDeviceStats HostDevice::stats() const {
  absl::MutexLock lock(&stats_mu_);
  return stats_;
}

absl::StatusOr<void*> HostDevice::Allocate(uint64_t bytes) {
  if (bytes == 0) return absl::InvalidArgumentError("cannot allocate 0 bytes on the host device");
  const uint64_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* ptr = std::aligned_alloc(kAlignment, rounded);
  if (ptr == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("host device out of memory allocating ", bytes, " bytes"));
  }
  absl::MutexLock lock(&memory_mu_);
  allocations_[reinterpret_cast<uintptr_t>(ptr)] = bytes;
  return ptr;
}

absl::Status HostDevice::Free(void* device_ptr) {
  absl::MutexLock lock(&memory_mu_);
  auto it = allocations_.find(reinterpret_cast<uintptr_t>(device_ptr));
  if (it == allocations_.end()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot free %p: not the start of an allocation of this host device", device_ptr));
  }
  std::free(device_ptr);
  allocations_.erase(it);
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
  if (it == allocations_.begin()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s of %u bytes at %p: not in any allocation of this host device", what,
                        bytes, ptr));
  }
  --it;
  const uint64_t offset = address - it->first;
  if (offset >= it->second) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s of %u bytes at %p: not in any allocation of this host device", what,
                        bytes, ptr));
  }
  if (bytes > it->second - offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s of %u bytes at offset %u overruns the allocation of %u bytes at %p", what, bytes,
        offset, it->second, reinterpret_cast<void*>(it->first)));
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

absl::StatusOr<std::string> HostDevice::RunCompiler(const KernelSource& source) {
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("warptrace-host"));
  std::vector<SourceFile> files;
  const std::string source_name = absl::StrCat(source.kernel_name, ".cc");
  files.push_back({source_name, source.source});
  RETURN_IF_ERROR(WriteFile(dir.File(source_name), source.source));
  for (const std::vector<EmbeddedFile>* headers : {&source.headers, &EmbeddedHostHeaders()}) {
    for (const EmbeddedFile& header : *headers) {
      RETURN_IF_ERROR(WriteFile(dir.File(header.name), header.contents));
      files.push_back({header.name, header.contents});
    }
  }
  std::vector<std::string> argv = {compiler_path_, "-std=c++17", "-O1", "-shared", "-fPIC",
                                   "-pthread", "-DWARPTRACE_HOST_BACKEND", "-include",
                                   dir.File("cuda_on_cpu.h"), absl::StrCat("-I", dir.path())};
  argv.insert(argv.end(), options_.extra_flags.begin(), options_.extra_flags.end());
  const std::string output = dir.File("kernel.so");
  argv.insert(argv.end(), {"-o", output, dir.File(source_name)});
  ASSIGN_OR_RETURN(ProgramResult result, RunProgram(argv, dir));
  {
    absl::MutexLock lock(&stats_mu_);
    ++stats_.compilations;
  }
  if (result.exit_code != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "host compiler failed on kernel ", source.kernel_name, " (exit ", result.exit_code,
        "): ", absl::StrJoin(argv, " "), "\n", QuoteOffendingLines(result.output, files),
        "compiler output:\n", result.output));
  }
  return ReadFile(output);
}

absl::StatusOr<std::string> HostDevice::SharedObjectFor(const KernelSource& source) {
  CacheKey key;
  key.Add("warptrace-host-so-v1").Add(compiler_path_).Add(compiler_version_);
  key.Add(WARPTRACE_HOST_ABI_VERSION).Add(source.kernel_name).Add(source.source);
  for (const std::vector<EmbeddedFile>* headers : {&source.headers, &EmbeddedHostHeaders()}) {
    key.Add(headers->size());
    for (const EmbeddedFile& header : *headers) key.Add(header.name).Add(header.contents);
  }
  key.Add(options_.extra_flags.size());
  for (const std::string& flag : options_.extra_flags) key.Add(flag);
  const std::string digest = key.Digest();
  if (cache_.has_value()) {
    if (std::optional<std::string> cached = cache_->Get(digest)) {
      absl::MutexLock lock(&stats_mu_);
      ++stats_.cache_hits;
      return *std::move(cached);
    }
  }
  ASSIGN_OR_RETURN(std::string shared_object, RunCompiler(source));
  // A failed write is counted in the cache's stats; the compilation stands.
  if (cache_.has_value()) cache_->Put(digest, shared_object).IgnoreError();
  return shared_object;
}

absl::StatusOr<std::unique_ptr<LoadedKernel>> HostDevice::Load(const KernelSource& source) {
  if (source.host_entry.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", source.kernel_name, " has no host entry (KernelSource::host_entry); the "
        "host backend needs `extern \"C\" void <host_entry>(void** args)`"));
  }
  ASSIGN_OR_RETURN(std::string bytes, SharedObjectFor(source));
  // dlopen needs a file; a fresh path per load also gives every load its own statics.
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("warptrace-host-so"));
  const std::string path = dir.File(absl::StrCat(source.kernel_name, ".so"));
  RETURN_IF_ERROR(WriteFile(path, bytes));
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load the host build of kernel ", source.kernel_name, ": ", dlerror()));
  }
  auto so = std::make_unique<SharedObject>(handle);
  auto version = reinterpret_cast<WarptraceHostAbiVersionFn>(so->Symbol("warptrace_host_abi_version"));
  auto bind = reinterpret_cast<WarptraceHostBindThreadFn>(so->Symbol("warptrace_host_bind_thread"));
  auto entry = reinterpret_cast<WarptraceHostEntryFn>(so->Symbol(source.host_entry.c_str()));
  if (version == nullptr || bind == nullptr || version() != WARPTRACE_HOST_ABI_VERSION) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the host build of kernel ", source.kernel_name,
        " lacks the host ABI (version ", WARPTRACE_HOST_ABI_VERSION,
        "): was it compiled with -include cuda_on_cpu.h?"));
  }
  if (entry == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", source.kernel_name, " defines no host entry `", source.host_entry,
        "`: the source must end with `#ifdef WARPTRACE_HOST_BACKEND extern \"C\" void ",
        source.host_entry, "(void** args) {...} #endif`"));
  }
  return std::unique_ptr<LoadedKernel>(
      new HostKernel(this, source.kernel_name, std::move(so), entry, bind));
}

absl::Status HostDevice::Launch(LoadedKernel& kernel, Dim3 grid, Dim3 block,
                                uint32_t dynamic_shared_bytes, void** args) {
  auto* host_kernel = dynamic_cast<HostKernel*>(&kernel);
  if (host_kernel == nullptr || host_kernel->owner != this) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel ", kernel.name(), " was not loaded by this host device"));
  }
  const std::string what = absl::StrFormat("launching kernel %s on grid (%u,%u,%u) x block "
                                           "(%u,%u,%u)", kernel.name(), grid.x, grid.y, grid.z,
                                           block.x, block.y, block.z);
  if (grid.Count() == 0 || block.Count() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": empty grid or block"));
  }
  if (block.Count() > options_.max_threads_per_block) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, ": ", block.Count(), " threads per block exceed the limit of ",
        options_.max_threads_per_block));
  }
  if (dynamic_shared_bytes > options_.max_dynamic_shared_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, ": ", dynamic_shared_bytes, " bytes of dynamic shared memory exceed the limit of ",
        options_.max_dynamic_shared_bytes));
  }
  absl::MutexLock launch_lock(&launch_mu_);
  const uint32_t num_threads = static_cast<uint32_t>(block.Count());
  std::vector<std::max_align_t> dynamic_shared(
      (dynamic_shared_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
  const uint64_t num_blocks = grid.Count();
  for (uint64_t linear = 0; linear < num_blocks; ++linear) {
    WarptraceHostThread common{};
    common.abi_version = WARPTRACE_HOST_ABI_VERSION;
    common.block_idx = {static_cast<uint32_t>(linear % grid.x),
                        static_cast<uint32_t>(linear / grid.x % grid.y),
                        static_cast<uint32_t>(linear / grid.x / grid.y)};
    common.block_dim = {block.x, block.y, block.z};
    common.grid_dim = {grid.x, grid.y, grid.z};
    common.sm_id = static_cast<uint32_t>(linear % options_.num_virtual_sms);
    common.dynamic_shared = dynamic_shared_bytes > 0 ? dynamic_shared.data() : nullptr;
    common.sync_block = &BlockRuntime::SyncBlock;
    common.sync_warp = &BlockRuntime::SyncWarp;
    common.shuffle = &BlockRuntime::Shuffle;
    BlockRuntime runtime(num_threads, options_.barrier_timeout);
    common.block = &runtime;

    std::vector<std::thread> threads;
    threads.reserve(num_threads);
    std::string spawn_error;
    for (uint32_t t = 0; t < num_threads; ++t) {
      WarptraceHostThread thread = common;
      thread.thread_idx = {t % block.x, t / block.x % block.y, t / block.x / block.y};
      thread.warp = t / 32;
      thread.lane = t % 32;
      try {
        threads.emplace_back([thread, host_kernel, args, &runtime] {
          host_kernel->bind(&thread);
          try {
            host_kernel->entry(args);
          } catch (const BlockAborted&) {
            // Unwound from a barrier of an aborted block; the reason is in the runtime.
          } catch (const std::exception& e) {
            runtime.Fail(absl::StrCat("thread ", DimString(thread.thread_idx), " threw: ", e.what()));
          } catch (...) {
            runtime.Fail(absl::StrCat("thread ", DimString(thread.thread_idx),
                                      " threw a non-std exception"));
          }
          runtime.Exit();
        });
      } catch (const std::system_error& e) {
        spawn_error = absl::StrCat("cannot create thread ", t, " of ", num_threads, ": ", e.what());
        runtime.Fail(spawn_error);
        // The threads not created never arrive: count them as exited so the others unwind.
        for (uint32_t missing = t; missing < num_threads; ++missing) runtime.Exit();
        break;
      }
    }
    for (std::thread& thread : threads) thread.join();

    const std::string block_name = absl::StrFormat(
        "%s: block %s (linear %u)", what, DimString(common.block_idx), linear);
    if (!spawn_error.empty()) {
      return absl::ResourceExhaustedError(absl::StrCat(block_name, ": ", spawn_error));
    }
    if (!runtime.failure().empty()) {
      return absl::InternalError(absl::StrCat(block_name, ": ", runtime.failure()));
    }
    if (!runtime.abort_reason().empty()) {
      return absl::DeadlineExceededError(absl::StrCat(block_name, ": ", runtime.abort_reason()));
    }
  }
  return absl::OkStatus();
}

}  // namespace warptrace
