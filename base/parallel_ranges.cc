#include "base/parallel_ranges.h"

#include <algorithm>
#include <exception>
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
  std::vector<std::exception_ptr> thrown(pieces);  // by piece
  std::vector<std::thread> threads;
  threads.reserve(pieces);
  auto run = [&](size_t p) {
    try {
      status[p] = fn(n * p / pieces, n * (p + 1) / pieces, p);
    } catch (...) {
      thrown[p] = std::current_exception();
    }
  };
  std::exception_ptr start_failure;
  try {
    for (size_t p = 1; p < pieces; ++p) threads.emplace_back(run, p);
  } catch (...) {
    start_failure = std::current_exception();  // still join the threads that started
  }
  if (start_failure == nullptr) run(0);
  for (std::thread& t : threads) t.join();
  if (start_failure != nullptr) std::rethrow_exception(start_failure);
  for (size_t p = 0; p < pieces; ++p) {
    if (thrown[p] != nullptr) std::rethrow_exception(thrown[p]);
    if (!status[p].ok()) return status[p];
  }
  return absl::OkStatus();
}

}  // namespace warptrace
