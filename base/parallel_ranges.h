// ParallelRanges: a pass over n independent items (a Mosaic buffer's blocks, a trace's
// records) split into contiguous ranges, one thread each, with the error one thread going
// through [0, n) in order would meet first.
//
//   const size_t pieces = RangePieces(threads, words.size(), n);
//   std::vector<Partial> partial(pieces);
//   RETURN_IF_ERROR(ParallelRanges(n, pieces, [&](uint64_t first, uint64_t last, size_t piece) {
//     return Convert(first, last, partial[piece]);   // stops at its range's first error
//   }));
//
// fn(first, last, piece) runs once per piece, piece 0 on the calling thread and each other
// on a thread of its own, concurrently: it may touch only its range's items and its piece's
// state. The ranges are [n * p / pieces, n * (p + 1) / pieces).
//
// Exceptions: one fn throws (std::bad_alloc), on any thread, is rethrown on the calling
// thread once every piece has ended (the first in range order); a thread that cannot be
// started (std::system_error) too, after the pieces already running ended.
#ifndef WARPTRACE_BASE_PARALLEL_RANGES_H_
#define WARPTRACE_BASE_PARALLEL_RANGES_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "absl/status/status.h"

namespace warptrace {

// Pieces worth a pass that reads `words` 32-bit words over `n` items with `threads` threads
// (< 1: one): one per 1 MiB of words (a thread costs ~50 us to start, a MiB ~0.3-0.5 ms to
// convert or decode), at most `threads` and `n`, at least 1.
size_t RangePieces(int threads, uint64_t words, uint64_t n);

// Runs fn over the `pieces` ranges of [0, n) and returns the first piece's error, in range
// order; OK when every piece returned OK.
absl::Status ParallelRanges(
    uint64_t n, size_t pieces,
    const std::function<absl::Status(uint64_t first, uint64_t last, size_t piece)>& fn);

}  // namespace warptrace

#endif  // WARPTRACE_BASE_PARALLEL_RANGES_H_
