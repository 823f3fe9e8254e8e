// Memory between inaccessible guard pages, for the host backend's device buffers and each
// block's shared memory: an access just past the end (or before the start) faults instead
// of silently corrupting a neighbour or the C library's heap, and the fault can be
// described (DescribeGuardFault) by the region it hit and how far out of bounds it was.
//
//   ASSIGN_OR_RETURN(GuardedRegion buffer,
//                    GuardedRegion::Map(bytes, 256, "device buffer"));
//   buffer.data();   // `bytes` usable bytes; the page after data() + bytes is PROT_NONE
//
// Layout: [guard page][slack][data ... end][guard page]. The data's end is placed against
// the upper guard (rounded up to `alignment`), so an overrun faults at its first byte past
// the alignment padding; the data's start is `alignment`-aligned, and an underrun faults
// once it crosses the slack below it (less than a page). Pages are mapped lazily (only
// touched pages cost memory).
//
// Every live region is in a process-wide registry that DescribeGuardFault reads; Map and
// the destructor lock it. Move-only; unmapped (and unregistered) when destroyed.
#ifndef WARPTRACE_JIT_HOST_GUARDED_MEMORY_H_
#define WARPTRACE_JIT_HOST_GUARDED_MEMORY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace warptrace::host {

class GuardedRegion {
 public:
  // `bytes` (may be 0: data() then points at the upper guard) aligned to `alignment` (a
  // power of two, at most a page). `what` names the region in fault reports ("device
  // buffer", "dynamic shared memory"). Errors: ResourceExhausted when it cannot be mapped
  // or protected; InvalidArgument for a bad alignment.
  static absl::StatusOr<GuardedRegion> Map(uint64_t bytes, uint64_t alignment,
                                           std::string what);
  GuardedRegion() = default;
  GuardedRegion(GuardedRegion&& other) noexcept;
  GuardedRegion& operator=(GuardedRegion&& other) noexcept;
  GuardedRegion(const GuardedRegion&) = delete;
  GuardedRegion& operator=(const GuardedRegion&) = delete;
  ~GuardedRegion();

  char* data() const { return data_; }
  uint64_t size() const { return size_; }
  bool mapped() const { return mapping_ != nullptr; }

 private:
  void Release();

  char* mapping_ = nullptr;
  uint64_t mapping_size_ = 0;
  char* data_ = nullptr;
  uint64_t size_ = 0;
};

// What a fault at `address` hit, when it lies in a guard page of a live region, e.g.
// "16 bytes past the end of the dynamic shared memory (1024 bytes at 0x7f...)" or
// "4 bytes before the start of the device buffer (4096 bytes at 0x7f...)"; nullopt
// otherwise.
std::optional<std::string> DescribeGuardFault(uintptr_t address);

size_t GuardPageSize();

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_GUARDED_MEMORY_H_
