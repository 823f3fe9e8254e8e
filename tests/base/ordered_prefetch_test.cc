#include "base/ordered_prefetch.h"

#include <atomic>
#include <cstdint>
#include <new>
#include <vector>

#include "gtest/gtest.h"

namespace warptrace {
namespace {

// Piece i's cost varies a lot (some pieces finish after later ones on other workers).
uint64_t Work(size_t i) {
  uint64_t x = i;
  const int rounds = i % 5 == 0 ? 200000 : 100;
  for (int k = 0; k < rounds; ++k) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

class OrderedPrefetchWorkers : public ::testing::TestWithParam<int> {};

TEST_P(OrderedPrefetchWorkers, HandsEveryPieceOnInOrderAndStaysWithinTheWindow) {
  constexpr size_t kPieces = 300;
  constexpr size_t kWindow = 4;
  std::atomic<size_t> started{0};
  std::atomic<size_t> asked{0};  // Next(asked) may have released piece asked - 1
  std::atomic<bool> ahead_too_far{false};
  struct Piece {
    size_t index = 0;
    uint64_t value = 0;
    std::vector<int> storage;  // kept from piece to piece
  };
  OrderedPrefetch<Piece> prefetch(kPieces, GetParam(), kWindow,
                                  [&](int worker, size_t i, Piece& out) {
                                    EXPECT_GE(worker, 0);
                                    EXPECT_LT(worker, GetParam());
                                    // A piece starts only when its slot is free.
                                    if (i >= asked.load() + kWindow) ahead_too_far = true;
                                    ++started;
                                    out.index = i;
                                    out.value = Work(i);
                                    out.storage.push_back(1);
                                  });
  size_t storage_total = 0;
  for (size_t i = 0; i < kPieces; ++i) {
    asked = i;  // from here piece i - 1 may be released, and pieces < i + kWindow start
    Piece& p = prefetch.Next();
    EXPECT_EQ(p.index, i);
    EXPECT_EQ(p.value, Work(i));
    storage_total = std::max(storage_total, p.storage.size());
  }
  EXPECT_FALSE(ahead_too_far);
  EXPECT_EQ(started.load(), kPieces);
  EXPECT_EQ(storage_total, kPieces / kWindow) << "each slot's Result is reused";
}

INSTANTIATE_TEST_SUITE_P(Workers, OrderedPrefetchWorkers, ::testing::Values(1, 2, 5));

TEST(OrderedPrefetchTest, StoppingEarlyMakesNoMorePiecesAndReturns) {
  std::atomic<size_t> made{0};
  {
    OrderedPrefetch<int> prefetch(1000, 3, 2, [&](int, size_t i, int& out) {
      out = static_cast<int>(i);
      ++made;
    });
    EXPECT_EQ(prefetch.Next(), 0);
    EXPECT_EQ(prefetch.Next(), 1);
  }  // destroyed with 998 pieces never asked for
  EXPECT_LE(made.load(), 4u);
}

// An exception on a worker (std::bad_alloc while a unit is prepared) reaches the consumer at
// the piece that threw, after the pieces before it, instead of std::terminate (issue 55).
TEST_P(OrderedPrefetchWorkers, AWorkersExceptionIsRethrownByNextAtItsPiece) {
  OrderedPrefetch<size_t> prefetch(100, GetParam(), 3, [](int, size_t i, size_t& out) {
    if (i == 7) throw std::bad_alloc();
    out = i;
  });
  size_t got = 0;
  bool thrown = false;
  try {
    for (; got < 100; ++got) EXPECT_EQ(prefetch.Next(), got);
  } catch (const std::bad_alloc&) {
    thrown = true;
  }
  EXPECT_TRUE(thrown);
  EXPECT_EQ(got, 7u);
}

TEST(OrderedPrefetchTest, NoPiecesIsFine) {
  OrderedPrefetch<int> prefetch(0, 2, 2, [](int, size_t, int&) { FAIL(); });
}

}  // namespace
}  // namespace warptrace
