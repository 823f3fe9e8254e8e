// The host backend as a sanitizer: bounds and uninitialized-read checks of every access a
// kernel compiled in sanitize mode makes (host_abi.h WARPTRACE_HOST_SANITIZE_*; the host
// compiler instruments every load and store to call WarptraceHostRuntime::access).
//
//   LaunchSanitizer  one per launch: the checks asked for, the launch's device buffers
//                    (named by the kernel argument that points at them) and the findings,
//                    deduplicated and sorted so the report does not depend on the schedule.
//   BlockShadow      one per resident block: the layout of its static __shared__ arrays
//                    with redzones between them and after the last, and a shadow byte per
//                    byte of its static and dynamic shared memory (not addressable /
//                    never written / written).
//
// Internal to the runtime (jit/host/runtime/runtime.h). A BlockShadow is touched only by its
// block's worker thread; LaunchSanitizer::Record locks.
//
// What is checked: an access that touches a shared-memory redzone or the space after the
// last static array (reported against the array before it: "red_smem[8], one past the end
// of red_smem (8 elements)"); an access outside the dynamic shared memory's extent or a
// device buffer's requested bytes (its alignment slack, or the guard pages around it); with
// kInit, a read of shared-memory bytes no thread of the block wrote (warptrace's own
// `warptrace_*` arrays excepted: the recorder copies out whole slots). A stray access that
// lands inside another array is not seen (as with AddressSanitizer). With kRaces the block
// also has a RaceShadow (races.h), which its cluster's RaceDomain checks.
#ifndef WARPTRACE_JIT_HOST_RUNTIME_SANITIZER_H_
#define WARPTRACE_JIT_HOST_RUNTIME_SANITIZER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "jit/host/device/host_abi.h"
#include "jit/host/runtime/global_races.h"
#include "jit/host/runtime/races.h"

namespace warptrace::host {

struct Fiber;

// A device buffer of the launch (HostDevice's allocation) and what names it.
struct SanitizeBuffer {
  uintptr_t start = 0;
  uint64_t bytes = 0;  // as allocated (requested)
  std::string name;    // "argument `out` (float*)", or "a device buffer"
  // The races check follows its accesses: a kernel argument that does not point to const
  // (global_races.h).
  bool races = false;
};

class LaunchSanitizer {
 public:
  // Reports at most this many findings, then how many more there were.
  static constexpr size_t kMaxReported = 10;

  LaunchSanitizer(uint32_t checks, std::vector<SanitizeBuffer> buffers);
  uint32_t checks() const { return checks_; }
  // The buffer whose guard window ([page below its start, page after its end)) holds
  // `address`, or null.
  const SanitizeBuffer* BufferNear(uintptr_t address) const;
  // Every buffer's (window start, window bytes, start, start + bytes), flattened, for the
  // kernel's inline filter (host_abi.h WarptraceHostThread::buffer_windows).
  const std::vector<unsigned long long>& windows() const { return windows_; }
  // Per buffer, in windows() order: 1 when the races check follows its accesses
  // (host_abi.h WarptraceHostThread::buffer_races).
  const std::vector<unsigned char>& buffer_races() const { return buffer_races_; }
  // [the lowest window start, the highest window end) (host_abi.h buffers_lo, buffers_hi).
  uint64_t buffers_lo() const { return buffers_lo_; }
  uint64_t buffers_hi() const { return buffers_hi_; }
  // The cross-block half of the races check for global memory.
  GlobalRaceLog& global_races() { return global_races_; }

  // A finding of `kind` ("out-of-bounds write", ...) about `subject` (an array's name
  // literal, the same in every block, or a buffer) at `statement`: kept once per (kind, subject, statement), the lowest (block, thread)
  // example; `message` is called only when the example is kept.
  template <typename MakeMessage>
  void Record(const char* kind, const void* subject, const char* statement, uint64_t block,
              uint32_t thread, MakeMessage message) {
    absl::MutexLock lock(&mu_);
    ++total_;
    Finding& f = findings_[{kind, subject, statement}];
    if (!f.message.empty() && std::tie(f.block, f.thread) <= std::tie(block, thread)) return;
    f = {block, thread, message()};
  }
  // "" when nothing was found; else "sanitizer: N findings:\n  ..." (sorted by message).
  std::string Report() const;

 private:
  struct Finding {
    uint64_t block = 0;
    uint32_t thread = 0;
    std::string message;
  };
  const uint32_t checks_;
  std::vector<SanitizeBuffer> buffers_;  // by start
  std::vector<unsigned long long> windows_;
  std::vector<unsigned char> buffer_races_;
  uint64_t buffers_lo_ = ~uint64_t{0};
  uint64_t buffers_hi_ = 0;
  GlobalRaceLog global_races_;
  mutable absl::Mutex mu_;
  std::map<std::tuple<const char*, const void*, const char*>, Finding> findings_
      ABSL_GUARDED_BY(mu_);
  uint64_t total_ ABSL_GUARDED_BY(mu_) = 0;
};

class BlockShadow {
 public:
  // Bytes of redzone before the first static array and after each.
  static constexpr uint64_t kRedzone = 32;

  BlockShadow(LaunchSanitizer* launch, const char* static_base, const char* dynamic_base,
              uint64_t dynamic_bytes);

  // Places static array `name` of `bytes` (elements of `element_bytes`) aligned to `align`
  // after `*used` (the bytes placed so far, updated): the offset, with a redzone before it
  // when it fits the 48 KiB, -1 when it does not fit at all.
  int64_t Place(const char* name, uint64_t bytes, uint64_t align, uint64_t element_bytes,
                uint64_t* used);

  // Points `f`'s inline filter (host_abi.h WarptraceHostThread::shadow_static, ...) here.
  void Attach(Fiber& f) const;
  // Checks `f`'s access of `bytes` at `address` (a WARPTRACE_HOST_ACCESS_* kind). Returns ""
  // or, for an access that would fault (outside the dynamic shared memory or a device
  // buffer), the message to fail the launch with at once.
  std::string Check(const Fiber& f, uintptr_t address, uint64_t bytes, int kind);
  LaunchSanitizer* launch() const { return launch_; }
  // The races check's shadow (null unless WARPTRACE_HOST_SANITIZE_RACES).
  RaceShadow* races() const { return races_.get(); }
  // Whether `address` is in the block's static (area 0) or dynamic (area 1) shared memory,
  // and where.
  bool SharedArea(uintptr_t address, int* area, uint64_t* offset) const {
    if (address - static_base_ < WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES) {
      *area = 0;
      *offset = address - static_base_;
      return true;
    }
    if (address - dynamic_base_ < dynamic_bytes_) {
      *area = 1;
      *offset = address - dynamic_base_;
      return true;
    }
    return false;
  }
  // Whether the `bytes` at `offset` of `area` are in bounds and written by the kernel:
  // then the bounds and init checks have nothing to say or to mark (the races check's fast
  // path skips them).
  bool Written(int area, uint64_t offset, uint64_t bytes) const {
    const std::vector<uint8_t>& shadow = area == 0 ? static_shadow_ : dynamic_shadow_;
    if (offset + bytes > shadow.size()) return false;
    const uint8_t* s = shadow.data() + offset;
    for (uint64_t i = 0; i < bytes; ++i) {
      if (s[i] < kWritten) return false;
    }
    return true;
  }
  // The `bytes` at `offset` of `area` (an mbarrier's word, once initialized) are checked no
  // more, as warptrace's own arrays: the kernel-side filter skips their accesses, the races
  // check exempts them.
  void Unchecked(int area, uint64_t offset, uint64_t bytes);
  // "red_smem[3] (byte offset 12 of __shared__ red_smem, 8 elements of 4 bytes)" or
  // "stage[60] (byte 240 of the dynamic shared memory stage, ...)" for byte `offset` of
  // `area`, named as `f`'s kernel declares it.
  std::string Locate(const Fiber& f, int area, uint64_t offset) const;

 private:
  // Per shared byte (host_abi.h WarptraceHostThread::shadow_static): kOwn marks warptrace's
  // own arrays (the recorder's staging, copy tracks): written, exempt from the races check,
  // so the kernel-side filter skips their accesses in every mode.
  enum : uint8_t { kUnaddressable = 0, kUnwritten = 1, kWritten = 2, kOwn = 3 };
  struct Array {
    const char* name;
    uint64_t offset, bytes, element_bytes;
  };
  void CheckStatic(const Fiber& f, uint64_t offset, uint64_t bytes, int kind);
  void CheckDynamic(const Fiber& f, uint64_t offset, uint64_t bytes, int kind);
  // The array `offset` is in, or (for a redzone) the one before it (the first array for
  // the leading redzone); null when there is none.
  const Array* ArrayAt(uint64_t offset) const;
  void ReportUninitialized(const Fiber& f, const Array* array, uint64_t offset, uint64_t bytes);

  LaunchSanitizer* const launch_;
  const uintptr_t static_base_;
  const uintptr_t dynamic_base_;
  const uint64_t dynamic_bytes_;
  const bool init_;
  const bool bounds_;
  std::vector<Array> arrays_;  // by offset
  std::vector<uint8_t> static_shadow_;
  std::vector<uint8_t> dynamic_shadow_;
  std::unique_ptr<RaceShadow> races_;
};

}  // namespace warptrace::host

#endif  // WARPTRACE_JIT_HOST_RUNTIME_SANITIZER_H_
