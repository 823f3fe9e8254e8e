#include "jit/host/runtime/guarded_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace warptrace::host {
namespace {

struct Registered {
  uint64_t mapping_size;
  uintptr_t data;
  uint64_t size;
  std::string what;
};

struct Registry {
  absl::Mutex mu;
  std::map<uintptr_t, Registered> regions ABSL_GUARDED_BY(mu);  // by mapping start
};

Registry& TheRegistry() {
  static Registry* const registry = new Registry;  // never destroyed: used until exit
  return *registry;
}

}  // namespace

size_t GuardPageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

absl::StatusOr<GuardedRegion> GuardedRegion::Map(uint64_t bytes, uint64_t alignment,
                                                 std::string what) {
  const uint64_t page = GuardPageSize();
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > page) {
    return absl::InvalidArgumentError(absl::StrCat(
        "guarded memory: alignment ", alignment, " is not a power of two up to a page"));
  }
  const uint64_t padded = (bytes + alignment - 1) / alignment * alignment;
  const uint64_t data_pages = (padded + page - 1) / page * page;
  const uint64_t total = data_pages + 2 * page;
  void* mapping = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot map ", bytes, " bytes of ", what,
                                                     ": ", std::strerror(errno)));
  }
  char* base = static_cast<char*>(mapping);
  if (mprotect(base, page, PROT_NONE) != 0 ||
      mprotect(base + page + data_pages, page, PROT_NONE) != 0) {
    const int error = errno;
    munmap(mapping, total);
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot protect the guard pages of ", what, ": ", std::strerror(error)));
  }
  GuardedRegion region;
  region.mapping_ = base;
  region.mapping_size_ = total;
  region.data_ = base + page + data_pages - padded;
  region.size_ = bytes;
  Registry& registry = TheRegistry();
  absl::MutexLock lock(&registry.mu);
  registry.regions[reinterpret_cast<uintptr_t>(base)] = {
      total, reinterpret_cast<uintptr_t>(region.data_), bytes, std::move(what)};
  return region;
}

GuardedRegion::GuardedRegion(GuardedRegion&& other) noexcept
    : mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_size_(std::exchange(other.mapping_size_, 0)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

GuardedRegion& GuardedRegion::operator=(GuardedRegion&& other) noexcept {
  if (this != &other) {
    Release();
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_size_ = std::exchange(other.mapping_size_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

GuardedRegion::~GuardedRegion() { Release(); }

void GuardedRegion::Release() {
  if (mapping_ == nullptr) return;
  {
    Registry& registry = TheRegistry();
    absl::MutexLock lock(&registry.mu);
    registry.regions.erase(reinterpret_cast<uintptr_t>(mapping_));
  }
  munmap(mapping_, mapping_size_);
  mapping_ = data_ = nullptr;
  mapping_size_ = size_ = 0;
}

std::optional<std::string> DescribeGuardFault(uintptr_t address) {
  const uint64_t page = GuardPageSize();
  Registry& registry = TheRegistry();
  absl::MutexLock lock(&registry.mu);
  auto it = registry.regions.upper_bound(address);
  if (it == registry.regions.begin()) return std::nullopt;
  --it;
  const uintptr_t start = it->first;
  const Registered& r = it->second;
  if (address >= start + r.mapping_size) return std::nullopt;
  const std::string region =
      absl::StrFormat("the %s (%u bytes at %p)", r.what, r.size, reinterpret_cast<void*>(r.data));
  if (address < start + page) {
    return absl::StrFormat("%u bytes before the start of %s", r.data - address, region);
  }
  if (address >= start + r.mapping_size - page) {
    return absl::StrFormat("%u bytes past the end of %s", address - (r.data + r.size), region);
  }
  return std::nullopt;  // an accessible byte: the fault was something else
}

}  // namespace warptrace::host
