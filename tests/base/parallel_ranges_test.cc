// Tests ParallelRanges: the ranges cover [0, n) once each, the first error in range order is
// the one returned, and RangePieces' bounds.
#include "base/parallel_ranges.h"

#include <atomic>
#include <cstdint>
#include <new>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace warptrace {
namespace {

TEST(ParallelRangesTest, RangesCoverEveryItemOnce) {
  for (size_t pieces : {1, 2, 3, 7, 10}) {
    std::vector<std::atomic<int>> seen(10);
    std::vector<std::pair<uint64_t, uint64_t>> ranges(pieces);
    EXPECT_TRUE(ParallelRanges(10, pieces, [&](uint64_t first, uint64_t last, size_t piece) {
                  ranges[piece] = {first, last};
                  for (uint64_t i = first; i < last; ++i) ++seen[i];
                  return absl::OkStatus();
                }).ok());
    for (const std::atomic<int>& n : seen) EXPECT_EQ(n.load(), 1) << pieces << " pieces";
    EXPECT_EQ(ranges.front().first, 0u);
    EXPECT_EQ(ranges.back().second, 10u);
    for (size_t p = 1; p < pieces; ++p) EXPECT_EQ(ranges[p].first, ranges[p - 1].second);
  }
}

TEST(ParallelRangesTest, TheFirstErrorInRangeOrderIsReturned) {
  // Items 3 and 8 fail; with any split, item 3's error is the one a single pass meets first.
  for (size_t pieces : {1, 2, 4, 10}) {
    const absl::Status status =
        ParallelRanges(10, pieces, [](uint64_t first, uint64_t last, size_t) {
          for (uint64_t i = first; i < last; ++i) {
            if (i == 3 || i == 8) return absl::DataLossError(i == 3 ? "item 3" : "item 8");
          }
          return absl::OkStatus();
        });
    EXPECT_EQ(status, absl::DataLossError("item 3")) << pieces << " pieces";
  }
}

// An exception on a piece's thread (std::bad_alloc while decoding) reaches the caller once
// every piece ended, instead of std::terminate (issue 55).
TEST(ParallelRangesTest, AnExceptionOnAnyThreadIsRethrownToTheCaller) {
  std::atomic<int> ended{0};
  bool thrown = false;
  try {
    (void)ParallelRanges(100, 4, [&](uint64_t first, uint64_t, size_t) -> absl::Status {
      ++ended;
      if (first == 50) throw std::bad_alloc();  // piece 2, on a thread of its own
      return absl::OkStatus();
    });
  } catch (const std::bad_alloc&) {
    thrown = true;
  }
  EXPECT_TRUE(thrown);
  EXPECT_EQ(ended.load(), 4);
}

TEST(ParallelRangesTest, RangePiecesIsBoundedByThreadsWorkAndItems) {
  constexpr uint64_t kMiB = uint64_t{1} << 18;  // words
  EXPECT_EQ(RangePieces(4, 100 * kMiB, 1000), 4u);
  EXPECT_EQ(RangePieces(4, 2 * kMiB, 1000), 2u);  // two MiB of words: two pieces
  EXPECT_EQ(RangePieces(4, kMiB / 2, 1000), 1u);  // under a MiB: one
  EXPECT_EQ(RangePieces(8, 100 * kMiB, 3), 3u);   // no more pieces than items
  EXPECT_EQ(RangePieces(0, 100 * kMiB, 1000), 1u);
  EXPECT_EQ(RangePieces(4, 100 * kMiB, 0), 1u);
}

}  // namespace
}  // namespace warptrace
