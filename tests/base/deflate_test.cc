#include "base/deflate.h"

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/base/packet_bytes.h"

namespace warptrace {
namespace {

using Bytes = std::vector<uint8_t>;

// Compresses into a buffer of exactly Bound bytes followed by guard bytes, checks that the
// guard is untouched and the stream fits the bound.
Bytes Deflate(Deflater& deflater, const Bytes& in) {
  constexpr size_t kGuard = 64;
  const size_t bound = Deflater::Bound(in.size());
  Bytes out(bound + kGuard, 0xA5);
  const size_t size = deflater.Compress(in, out.data());
  EXPECT_LE(size, bound);
  for (size_t i = bound; i < out.size(); ++i) {
    if (out[i] != 0xA5) {
      ADD_FAILURE() << "wrote past the bound at " << i - bound << " (input " << in.size() << ")";
      break;
    }
  }
  out.resize(size);
  return out;
}

Bytes Deflate(const Bytes& in) {
  Deflater deflater;
  return Deflate(deflater, in);
}

// zlib's inflate (header, blocks, Adler-32 all checked).
::testing::AssertionResult InflatesTo(const Bytes& z, const Bytes& expected) {
  Bytes back(expected.size() + 1);
  uLongf size = back.size();
  const int rc = uncompress(back.data(), &size, z.data(), z.size());
  if (rc != Z_OK) return ::testing::AssertionFailure() << "zlib's uncompress: " << rc;
  back.resize(size);
  if (back != expected) {
    return ::testing::AssertionFailure() << "inflated to " << size << " bytes, not the "
                                         << expected.size() << " given";
  }
  return ::testing::AssertionSuccess();
}

Bytes Random(std::mt19937& rng, size_t n, uint32_t alphabet) {
  Bytes b(n);
  for (uint8_t& c : b) c = static_cast<uint8_t>(rng() % alphabet);
  return b;
}

// Literals and copies of earlier bytes, some far back (up to and past the 32 KiB window),
// some long (past 258), some overlapping themselves.
Bytes LzLike(std::mt19937& rng, size_t n) {
  Bytes b;
  while (b.size() < n) {
    if (b.size() < 8 || rng() % 3 == 0) {
      b.push_back(static_cast<uint8_t>(rng()));
      continue;
    }
    const size_t back = 1 + rng() % std::min<size_t>(b.size(), rng() % 2 ? 40000 : 300);
    const size_t len = 3 + rng() % (rng() % 8 == 0 ? 600 : 20);
    const size_t from = b.size() - back;
    for (size_t k = 0; k < len; ++k) b.push_back(b[from + k]);
  }
  b.resize(n);
  return b;
}

TEST(DeflateTest, WhatItWritesInflatesToTheInput) {
  std::mt19937 rng(12345);
  std::vector<Bytes> inputs;
  for (size_t n = 0; n <= 40; ++n) inputs.push_back(Random(rng, n, 3));  // around the tail
  inputs.push_back(Bytes(100'000, 'a'));                          // distance 1, length 258
  inputs.push_back(Random(rng, 300'000, 256));                    // stored, 5 blocks
  inputs.push_back(Random(rng, 65535, 256));                      // one full stored block
  inputs.push_back(Random(rng, 65536, 256));
  inputs.push_back(Random(rng, 200'000, 2));                      // few literals
  for (size_t period : {32767u, 32768u, 32769u}) {                // the window's edge
    Bytes b = Random(rng, period, 256);
    const Bytes copy = b;
    b.insert(b.end(), copy.begin(), copy.end());
    inputs.push_back(std::move(b));
  }
  for (int i = 0; i < 60; ++i) inputs.push_back(LzLike(rng, 1 + rng() % 300'000));
  inputs.push_back(testing::PacketBytes(1, 256 << 10));
  inputs.push_back(testing::PacketBytes(2, 5000));
  Deflater reused;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_TRUE(InflatesTo(Deflate(reused, inputs[i]), inputs[i]))
        << "input " << i << " (" << inputs[i].size() << " bytes)";
  }
}

TEST(DeflateTest, IncompressibleBytesAreStoredAndRepetitiveOnesShrink) {
  std::mt19937 rng(7);
  const Bytes noise = Random(rng, 200'000, 256);
  const Bytes z = Deflate(noise);
  // Header, four stored blocks (5 bytes each besides the data), Adler-32.
  EXPECT_EQ(z.size(), 2 + noise.size() + 4 * 5 + 4);
  EXPECT_TRUE(InflatesTo(z, noise));
  const Bytes packets = testing::PacketBytes(3, 256 << 10);
  const Bytes p = Deflate(packets);
  EXPECT_TRUE(InflatesTo(p, packets));
  // Packets that differ in their timestamps (a few random bits each): a byte or two each,
  // of 8-14.
  EXPECT_LT(p.size() * 5, packets.size()) << p.size() << " of " << packets.size();
  EXPECT_EQ(Deflate(Bytes()).size(), 2u + 5u + 4u);
}

TEST(DeflateTest, TheBytesDependOnTheInputAlone) {
  // The same input compressed by fresh Deflaters, by one that compressed other inputs first
  // (stale tables and tokens), from input at every alignment, and on other threads.
  std::mt19937 rng(99);
  const std::vector<Bytes> inputs = {testing::PacketBytes(5, 256 << 10), LzLike(rng, 150'000),
                                     Random(rng, 70'000, 256), Random(rng, 9, 256)};
  std::vector<Bytes> reference;
  for (const Bytes& in : inputs) reference.push_back(Deflate(in));
  Deflater reused;
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      EXPECT_EQ(Deflate(reused, inputs[i]), reference[i]) << "input " << i;
    }
  }
  for (size_t shift = 1; shift < 16; ++shift) {
    const Bytes& in = inputs[0];
    Bytes shifted(in.size() + shift);
    std::memcpy(shifted.data() + shift, in.data(), in.size());
    Bytes out(Deflater::Bound(in.size()));
    out.resize(reused.Compress(absl::MakeConstSpan(shifted).subspan(shift), out.data()));
    EXPECT_EQ(out, reference[0]) << "input at offset " << shift;
  }
  std::vector<std::vector<Bytes>> by_thread(4);
  std::vector<std::thread> threads;
  for (auto& mine : by_thread) {
    threads.emplace_back([&] {
      Deflater deflater;
      for (const Bytes& in : inputs) mine.push_back(Deflate(deflater, in));
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& mine : by_thread) EXPECT_EQ(mine, reference);
}

}  // namespace
}  // namespace warptrace
