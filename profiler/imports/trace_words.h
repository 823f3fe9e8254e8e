// TraceWords: a trace buffer's 32-bit words, either read in place from a mapped file (LoadTrace
// of a warptrace buffer on a little-endian host: no copy, so a dump's memory is the mapped
// input plus what its sinks keep) or owned (an importer's conversion, a synthesized trace).
//
//   LoadedTrace t = *LoadTrace(prefix);
//   DumpToFiles(t.layout, t.words, request);      // converts to absl::Span<const uint32_t>
//
// Read-only either way; assign a std::vector to replace the words. Copying a mapped TraceWords
// shares the mapping. An importer that writes every word itself takes ForWriting's storage:
// not zeroed first, so each page is touched once, by its writer (a copy of such a TraceWords
// shares it too). Thread-safety: const methods are safe to call concurrently.
#ifndef WARPTRACE_PROFILER_IMPORTS_TRACE_WORDS_H_
#define WARPTRACE_PROFILER_IMPORTS_TRACE_WORDS_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "llvm/Support/MemoryBuffer.h"

namespace warptrace {

class TraceWords {
 public:
  TraceWords() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): owned words read as words.
  TraceWords(std::vector<uint32_t> words) : owned_(std::move(words)) {}
  // `mapped`'s bytes must be a whole number of 4-byte-aligned host-order words.
  explicit TraceWords(std::unique_ptr<llvm::MemoryBuffer> mapped)
      : mapped_(std::move(mapped)) {}

  // `n` words that the caller must write, every one, through `*data` before anything reads
  // them (the returned TraceWords, or a copy). Large buffers are asked for in transparent huge
  // pages (madvise), so that writing them takes a few page faults, not one per 4 KiB.
  static TraceWords ForWriting(size_t n, uint32_t** data);

  absl::Span<const uint32_t> span() const {
    if (written_ != nullptr) return {written_.get(), written_size_};
    if (mapped_ == nullptr) return owned_;
    return {reinterpret_cast<const uint32_t*>(mapped_->getBufferStart()),
            mapped_->getBufferSize() / 4};
  }
  // NOLINTNEXTLINE(google-explicit-constructor): every reader takes a span.
  operator absl::Span<const uint32_t>() const { return span(); }
  // A copy as a vector (tests, and callers that must mutate the words).
  std::vector<uint32_t> ToVector() const { return {span().begin(), span().end()}; }

  const uint32_t* data() const { return span().data(); }
  size_t size() const { return span().size(); }
  bool empty() const { return size() == 0; }
  const uint32_t* begin() const { return data(); }
  const uint32_t* end() const { return data() + size(); }
  uint32_t operator[](size_t i) const { return data()[i]; }
  // True when the words are read in place from a mapped file.
  bool mapped() const { return mapped_ != nullptr; }

  friend bool operator==(const TraceWords& a, const std::vector<uint32_t>& b) {
    return a.span() == absl::Span<const uint32_t>(b);
  }

 private:
  std::vector<uint32_t> owned_;
  std::shared_ptr<const llvm::MemoryBuffer> mapped_;
  std::shared_ptr<uint32_t> written_;  // ForWriting's, freed by std::free
  size_t written_size_ = 0;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_IMPORTS_TRACE_WORDS_H_
