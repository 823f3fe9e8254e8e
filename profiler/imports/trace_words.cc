#include "profiler/imports/trace_words.h"

#include <sys/mman.h>

#include <new>

namespace warptrace {

TraceWords TraceWords::ForWriting(size_t n, uint32_t** data) {
  // Huge pages (2 MiB) for buffers of a few of them; below that, plain malloc.
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t bytes = n * sizeof(uint32_t);
  void* p = nullptr;
  if (bytes >= 2 * kHugePage) {
    p = std::aligned_alloc(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
    // Only a hint: without transparent huge pages the words are in 4 KiB pages as usual.
    if (p != nullptr) madvise(p, bytes, MADV_HUGEPAGE);
  } else {
    p = std::malloc(bytes == 0 ? 1 : bytes);
  }
  if (p == nullptr) throw std::bad_alloc();
  TraceWords words;
  words.written_ = std::shared_ptr<uint32_t>(static_cast<uint32_t*>(p), [](uint32_t* q) {
    std::free(q);
  });
  words.written_size_ = n;
  *data = words.written_.get();
  return words;
}

}  // namespace warptrace
