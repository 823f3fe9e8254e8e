#include "jit/host/runtime/sanitizer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "jit/host/runtime/block.h"
#include "jit/host/runtime/guarded_memory.h"

namespace warptrace::host {
namespace {

std::string Who(const Fiber& f) {
  const WarptraceHostThread& a = f.abi;
  return absl::StrFormat("block (%u,%u,%u) thread (%u,%u,%u)", a.block_idx.x, a.block_idx.y,
                         a.block_idx.z, a.thread_idx.x, a.thread_idx.y, a.thread_idx.z);
}

// Where the thread is: its builder statement (the marker the host compiler puts before
// each; host_abi.h WarptraceHostThread::statement).
std::string Where(const Fiber& f, int kind) {
  if (kind == WARPTRACE_HOST_ACCESS_ASYNC_WRITE) {
    return absl::StrCat("(a TMA or bulk copy's delivery) issued at ",
                        f.abi.statement != nullptr ? f.abi.statement : "generated code");
  }
  if (f.abi.statement == nullptr) return "at generated code before the first builder statement";
  return absl::StrCat("at ", f.abi.statement);
}

const char* Verb(int kind) { return kind == WARPTRACE_HOST_ACCESS_READ ? "reads" : "writes"; }

const char* OutOfBounds(int kind) {
  return kind == WARPTRACE_HOST_ACCESS_READ ? "out-of-bounds read" : "out-of-bounds write";
}

uint64_t RoundUp(uint64_t x, uint64_t to) { return (x + to - 1) / to * to; }

// "stage[60] (byte 240 of the dynamic shared memory stage, elements of 4 bytes)", by the
// name and type the kernel declared it with (WarptraceHostThread::dynamic_name), if any.
std::string DynamicAt(const Fiber& f, int64_t offset) {
  const WarptraceHostThread& a = f.abi;
  if (a.dynamic_name == nullptr || a.dynamic_element_bytes == 0) {
    return absl::StrFormat("byte %d of the dynamic shared memory", offset);
  }
  const int64_t e = static_cast<int64_t>(a.dynamic_element_bytes);
  const int64_t index = offset >= 0 ? offset / e : -((-offset + e - 1) / e);
  return absl::StrFormat("%s[%d] (byte %d of the dynamic shared memory %s, elements of %d "
                         "bytes)",
                         a.dynamic_name, index, offset, a.dynamic_name, e);
}

uint64_t Page() {
  static const uint64_t page = GuardPageSize();
  return page;
}

}  // namespace

LaunchSanitizer::LaunchSanitizer(uint32_t checks, std::vector<SanitizeBuffer> buffers)
    : checks_(checks), buffers_(std::move(buffers)) {
  std::sort(buffers_.begin(), buffers_.end(),
            [](const SanitizeBuffer& a, const SanitizeBuffer& b) { return a.start < b.start; });
  for (const SanitizeBuffer& b : buffers_) {
    const uintptr_t low = b.start / Page() * Page() - Page();
    const uintptr_t high = RoundUp(b.start + b.bytes, Page()) + Page();
    windows_.insert(windows_.end(), {low, high - low, b.start, b.start + b.bytes});
    buffer_races_.push_back(b.races && (checks_ & WARPTRACE_HOST_SANITIZE_RACES) != 0 ? 1 : 0);
    buffers_lo_ = std::min<uint64_t>(buffers_lo_, low);
    buffers_hi_ = std::max<uint64_t>(buffers_hi_, high);
  }
  if (buffers_hi_ == 0) buffers_lo_ = 0;  // no buffer: the empty range
}

const SanitizeBuffer* LaunchSanitizer::BufferNear(uintptr_t address) const {
  const uint64_t page = Page();
  for (const SanitizeBuffer& b : buffers_) {  // a launch has a handful of buffers
    const uintptr_t low = b.start / page * page - page;
    const uintptr_t high = RoundUp(b.start + b.bytes, page) + page;
    if (address >= low && address < high) return &b;
  }
  return nullptr;
}

std::string LaunchSanitizer::Report() const {
  absl::MutexLock lock(&mu_);
  if (findings_.empty()) return "";
  std::vector<const Finding*> sorted;
  for (const auto& [key, finding] : findings_) sorted.push_back(&finding);
  std::sort(sorted.begin(), sorted.end(), [](const Finding* a, const Finding* b) {
    return std::tie(a->message, a->block, a->thread) < std::tie(b->message, b->block, b->thread);
  });
  std::string out = absl::StrCat("sanitizer: ", findings_.size(),
                                 findings_.size() == 1 ? " finding" : " distinct findings",
                                 " (", total_, total_ == 1 ? " faulty access):" : " faulty accesses):");
  for (size_t i = 0; i < sorted.size() && i < kMaxReported; ++i) {
    absl::StrAppend(&out, "\n  ", sorted[i]->message);
  }
  if (sorted.size() > kMaxReported) {
    absl::StrAppend(&out, "\n  ... and ", sorted.size() - kMaxReported, " more");
  }
  return out;
}

BlockShadow::BlockShadow(LaunchSanitizer* launch, const char* static_base,
                         const char* dynamic_base, uint64_t dynamic_bytes)
    : launch_(launch),
      static_base_(reinterpret_cast<uintptr_t>(static_base)),
      dynamic_base_(reinterpret_cast<uintptr_t>(dynamic_base)),
      dynamic_bytes_(dynamic_bytes),
      init_((launch->checks() & WARPTRACE_HOST_SANITIZE_INIT) != 0),
      bounds_((launch->checks() & WARPTRACE_HOST_SANITIZE_BOUNDS) != 0),
      static_shadow_(WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES, kUnaddressable),
      dynamic_shadow_(dynamic_bytes, init_ ? kUnwritten : kWritten) {
  if ((launch->checks() & WARPTRACE_HOST_SANITIZE_RACES) != 0) {
    races_ = std::make_unique<RaceShadow>(dynamic_bytes);
  }
}

int64_t BlockShadow::Place(const char* name, uint64_t bytes, uint64_t align,
                           uint64_t element_bytes, uint64_t* used) {
  uint64_t offset = RoundUp(*used + kRedzone, align);
  if (offset + bytes + kRedzone > WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES) {
    offset = RoundUp(*used, align);  // no room for a redzone: placed as without sanitizer
  }
  if (offset + bytes > WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES) return -1;
  *used = offset + bytes;
  // warptrace's own arrays (the recorder's staging, its copy tracks) are read whole.
  const bool own = absl::StartsWith(name, "warptrace_");
  std::memset(static_shadow_.data() + offset, own ? kOwn : init_ ? kUnwritten : kWritten, bytes);
  if (own && races_ != nullptr) races_->Exempt(0, offset, bytes);
  arrays_.push_back({name, offset, bytes, element_bytes == 0 ? 1 : element_bytes});
  std::sort(arrays_.begin(), arrays_.end(),
            [](const Array& a, const Array& b) { return a.offset < b.offset; });
  return static_cast<int64_t>(offset);
}

const BlockShadow::Array* BlockShadow::ArrayAt(uint64_t offset) const {
  const Array* before = nullptr;
  for (const Array& a : arrays_) {
    if (a.offset > offset) return before != nullptr ? before : &a;
    before = &a;
  }
  return before;
}


std::string BlockShadow::Locate(const Fiber& f, int area, uint64_t offset) const {
  if (area == 1) return DynamicAt(f, static_cast<int64_t>(offset));
  const Array* array = ArrayAt(offset);
  if (array == nullptr || offset < array->offset || offset >= array->offset + array->bytes) {
    return absl::StrFormat("static shared memory offset %u", offset);
  }
  const uint64_t rel = offset - array->offset;
  return absl::StrFormat("%s[%u] (byte offset %u of __shared__ %s, %u elements of %u bytes)",
                         array->name, rel / array->element_bytes, rel, array->name,
                         array->bytes / array->element_bytes, array->element_bytes);
}

void BlockShadow::Attach(Fiber& f) const {
  f.abi.shadow_static = static_shadow_.data();
  f.abi.shadow_dynamic = dynamic_shadow_.data();
  f.abi.buffer_windows = launch_->windows().data();
  f.abi.buffer_races = launch_->buffer_races().data();
  f.abi.num_buffers = static_cast<unsigned int>(launch_->windows().size() / 4);
  f.abi.buffers_lo = launch_->buffers_lo();
  f.abi.buffers_hi = launch_->buffers_hi();
}

void BlockShadow::Unchecked(int area, uint64_t offset, uint64_t bytes) {
  std::vector<uint8_t>& shadow = area == 0 ? static_shadow_ : dynamic_shadow_;
  if (offset + bytes > shadow.size()) return;
  std::memset(shadow.data() + offset, kOwn, bytes);
  if (races_ != nullptr) races_->Exempt(area, offset, bytes);
}

std::string BlockShadow::Check(const Fiber& f, uintptr_t address, uint64_t bytes, int kind) {
  if (address - static_base_ < WARPTRACE_HOST_MAX_STATIC_SHARED_BYTES) {
    CheckStatic(f, address - static_base_, bytes, kind);
    return "";
  }
  const uint64_t page = Page();
  if (address + page - dynamic_base_ < dynamic_bytes_ + 2 * page) {  // with its guard pages
    if (address - dynamic_base_ < dynamic_bytes_ &&
        address - dynamic_base_ + bytes <= dynamic_bytes_) {
      CheckDynamic(f, address - dynamic_base_, bytes, kind);
      return "";
    }
    if (!bounds_) return "";
    const int64_t offset = static_cast<int64_t>(address - dynamic_base_);
    return absl::StrFormat(
        "sanitizer: %s: %s %s %u bytes at %s, outside its %u bytes (the launch's dynamic "
        "shared memory size), %s",
        OutOfBounds(kind), Who(f), Verb(kind), bytes, DynamicAt(f, offset), dynamic_bytes_,
        Where(f, kind));
  }
  const SanitizeBuffer* buffer = launch_->BufferNear(address);
  if (buffer == nullptr) return "";
  if (address >= buffer->start && address + bytes <= buffer->start + buffer->bytes) return "";
  if (!bounds_) return "";
  const int64_t offset = static_cast<int64_t>(address - buffer->start);
  return absl::StrFormat(
      "sanitizer: %s: %s %s %u bytes at byte %d of %s, outside its %u bytes%s, %s",
      OutOfBounds(kind), Who(f), Verb(kind), bytes, offset, buffer->name, buffer->bytes,
      offset >= 0 && bytes > 0 && offset % bytes == 0 && buffer->bytes % bytes == 0
          ? absl::StrFormat(" (element [%d] of %d %u-byte elements)", offset / bytes,
                            buffer->bytes / bytes, bytes)
          : "",
      Where(f, kind));
}

void BlockShadow::CheckStatic(const Fiber& f, uint64_t offset, uint64_t bytes, int kind) {
  const uint64_t end = std::min<uint64_t>(offset + bytes, static_shadow_.size());
  bool unaddressable = end < offset + bytes;
  bool unwritten = false;
  for (uint64_t i = offset; i < end; ++i) {
    const uint8_t s = static_shadow_[i];
    unaddressable |= s == kUnaddressable;
    unwritten |= s == kUnwritten;
  }
  if (!unaddressable && !unwritten) return;  // written bytes: nothing to say or to mark
  const Array* array = ArrayAt(offset);
  if (unaddressable && !bounds_) return;
  if (unaddressable) {
    const uint64_t e = array == nullptr ? 1 : array->element_bytes;
    const int64_t rel = array == nullptr ? 0 : static_cast<int64_t>(offset - array->offset);
    launch_->Record(OutOfBounds(kind), array != nullptr ? array->name : nullptr, f.abi.statement, f.block->linear(),
                    f.abi.linear_tid, [&] {
                      if (array == nullptr) {
                        return absl::StrFormat(
                            "%s: %s %s %u bytes at static shared memory offset %u, where "
                            "the block has no __shared__ array, %s",
                            OutOfBounds(kind), Who(f), Verb(kind), bytes, offset,
                            Where(f, kind));
                      }
                      const int64_t index = rel >= 0 ? rel / static_cast<int64_t>(e)
                                                     : -((-rel + static_cast<int64_t>(e) - 1) /
                                                         static_cast<int64_t>(e));
                      return absl::StrFormat(
                          "%s: %s %s %u bytes at %s[%d] (byte offset %d), %s __shared__ %s "
                          "(%u elements of %u bytes), %s",
                          OutOfBounds(kind), Who(f), Verb(kind), bytes, array->name, index,
                          rel, rel < 0 ? "before the start of" : "past the end of",
                          array->name, array->bytes / e, e, Where(f, kind));
                    });
    return;
  }
  if (kind != WARPTRACE_HOST_ACCESS_READ) {
    for (uint64_t i = offset; i < offset + bytes; ++i) {
      if (static_shadow_[i] == kUnwritten) static_shadow_[i] = kWritten;  // kOwn stays
    }
  } else if (unwritten) {
    ReportUninitialized(f, array, offset - (array != nullptr ? array->offset : 0), bytes);
  }
}

void BlockShadow::CheckDynamic(const Fiber& f, uint64_t offset, uint64_t bytes, int kind) {
  uint8_t* s = dynamic_shadow_.data() + offset;
  if (kind != WARPTRACE_HOST_ACCESS_READ) {
    std::memset(s, kWritten, bytes);
    return;
  }
  if (!init_) return;
  for (uint64_t i = 0; i < bytes; ++i) {
    if (s[i] == kUnwritten) {
      ReportUninitialized(f, nullptr, offset, bytes);
      return;
    }
  }
}

void BlockShadow::ReportUninitialized(const Fiber& f, const Array* array, uint64_t offset,
                                      uint64_t bytes) {
  launch_->Record("uninitialized read", array != nullptr ? array->name : nullptr,
                  f.abi.statement, f.block->linear(),
                  f.abi.linear_tid, [&] {
                    const std::string what =
                        array == nullptr
                            ? DynamicAt(f, static_cast<int64_t>(offset))
                            : absl::StrFormat("%s[%u] (byte offset %u of __shared__ %s, %u "
                                              "elements of %u bytes)",
                                              array->name, offset / array->element_bytes,
                                              offset, array->name,
                                              array->bytes / array->element_bytes,
                                              array->element_bytes);
                    return absl::StrFormat(
                        "uninitialized read: %s reads %u bytes at %s that no thread of the "
                        "block wrote, %s",
                        Who(f), bytes, what, Where(f, WARPTRACE_HOST_ACCESS_READ));
                  });
}

}  // namespace warptrace::host
