#include "base/parallel_ranges.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace warptrace {

size_t RangePieces(int threads, uint64_t words, uint64_t n) {
  constexpr uint64_t kWordsPerPiece = uint64_t{1} << 18;
  const uint64_t by_work = std::min<uint64_t>(static_cast<uint64_t>(std::max(threads, 1)),
                                              words / kWordsPerPiece);
  return static_cast<size_t>(std::clamp<uint64_t>(by_work, 1, std::max<uint64_t>(n, 1)));
}

absl::Status ParallelRanges(
    uint64_t n, size_t pieces,
    const std::function<absl::Status(uint64_t first, uint64_t last, size_t piece)>& fn) {
  if (pieces < 1) pieces = 1;
  std::vector<absl::Status> status(pieces);
  std::vector<std::thread> threads;
  for (size_t p = 1; p < pieces; ++p) {
    threads.emplace_back(
        [&, p] { status[p] = fn(n * p / pieces, n * (p + 1) / pieces, p); });
  }
  status[0] = fn(0, n / pieces, 0);
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace warptrace
