#include "base/chunk_pipeline.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"

namespace warptrace {
namespace {

// Chunk i holds `i` repeated (i % 97 + 1) times, so order and content are both visible.
std::vector<uint8_t> ChunkOf(size_t i) {
  return std::vector<uint8_t>(i % 97 + 1, static_cast<uint8_t>(i));
}

// A transform whose cost varies a lot from chunk to chunk (a later chunk often finishes
// before an earlier one on another worker): a checksum loop, then the bytes reversed.
absl::Span<const uint8_t> SlowReverse(absl::Span<const uint8_t> in, std::vector<uint8_t>& out) {
  uint64_t sum = 0;
  const size_t rounds = (in.size() % 7 == 0) ? 20000 : 10;
  for (size_t r = 0; r < rounds; ++r) {
    for (uint8_t b : in) sum = sum * 31 + b;
  }
  out.assign(in.rbegin(), in.rend());
  out.push_back(static_cast<uint8_t>(sum & 0));  // keeps the loop; always 0
  return absl::MakeConstSpan(out);
}

class ChunkPipelineWorkers : public ::testing::TestWithParam<int> {};

TEST_P(ChunkPipelineWorkers, DeliversEveryChunkTransformedInSubmissionOrder) {
  std::vector<uint8_t> delivered;
  std::vector<uint8_t> expected;
  std::vector<int> workers_seen;
  {
    ChunkPipeline pipeline(
        GetParam(), 3,
        [&](int worker, absl::Span<const uint8_t> in, std::vector<uint8_t>& out) {
          EXPECT_GE(worker, 0);
          EXPECT_LT(worker, GetParam());
          return SlowReverse(in, out);
        },
        [&](absl::Span<const uint8_t> bytes) {
          delivered.insert(delivered.end(), bytes.begin(), bytes.end());
        });
    EXPECT_EQ(pipeline.workers(), GetParam());
    for (size_t i = 0; i < 500; ++i) {
      std::vector<uint8_t> chunk = ChunkOf(i);
      const size_t size = chunk.size();
      expected.insert(expected.end(), chunk.rbegin(), chunk.rend());
      expected.push_back(0);
      chunk.resize(size + 5, 0xee);  // bytes past `size` are not the chunk's
      pipeline.Submit(chunk, size);
    }
    pipeline.Drain();
    EXPECT_EQ(delivered, expected);
  }
  EXPECT_EQ(delivered, expected);
}

TEST_P(ChunkPipelineWorkers, WithoutATransformDeliversTheChunksAsTheyAre) {
  std::string delivered;
  std::string expected;
  ChunkPipeline pipeline(GetParam(), 2, nullptr, [&](absl::Span<const uint8_t> bytes) {
    delivered.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  });
  for (size_t i = 0; i < 300; ++i) {
    std::vector<uint8_t> chunk = ChunkOf(i);
    expected.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
    pipeline.Submit(chunk, chunk.size());
  }
  pipeline.Drain();
  EXPECT_EQ(delivered, expected);
}

INSTANTIATE_TEST_SUITE_P(Workers, ChunkPipelineWorkers, ::testing::Values(1, 2, 4));

TEST(ChunkPipelineTest, SubmitHandsBackARecycledBufferOnceChunksWereDelivered) {
  ChunkPipeline pipeline(1, 1, nullptr, [](absl::Span<const uint8_t>) {});
  std::vector<uint8_t> chunk(4096, 1);
  pipeline.Submit(chunk, chunk.size());
  EXPECT_TRUE(chunk.empty());  // the first job had no buffer to give back
  pipeline.Drain();
  chunk.assign(10, 2);
  pipeline.Submit(chunk, chunk.size());
  EXPECT_EQ(chunk.size(), 4096u);  // the first chunk's storage, delivered and recycled
}

TEST(ChunkPipelineTest, DestructionDeliversWhatWasNotDrained) {
  std::string delivered;
  {
    ChunkPipeline pipeline(2, 8, nullptr, [&](absl::Span<const uint8_t> bytes) {
      delivered.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    });
    for (char c : std::string("abcdefgh")) {
      std::vector<uint8_t> chunk(1, static_cast<uint8_t>(c));
      pipeline.Submit(chunk, 1);
    }
  }
  EXPECT_EQ(delivered, "abcdefgh");
}

TEST(DefaultThreadsTest, IsAtLeastOne) { EXPECT_GE(DefaultThreads(), 1); }

// Writes of every size class through a PipelinedOStream: small ones into its buffer, one
// bigger than the buffer (which raw_ostream passes through), and the rest after it.
TEST(PipelinedOStreamTest, TargetGetsEveryByteInOrder) {
  std::string target_bytes;
  std::string expected;
  {
    llvm::raw_string_ostream target(target_bytes);
    target.SetUnbuffered();
    PipelinedOStream os(target);
    for (int i = 0; i < 200000; ++i) {
      const std::string piece = std::to_string(i) + ",";
      os << piece;
      expected += piece;
    }
    const std::string big(PipelinedOStream::kChunkBytes * 2 + 123, 'x');
    os << big;
    expected += big;
    for (int i = 0; i < 1000; ++i) {
      os << 'y';
      expected += 'y';
    }
    EXPECT_EQ(os.tell(), expected.size());
    os.Finish();
    EXPECT_EQ(target_bytes, expected);
    os << "after";
    expected += "after";
  }  // the destructor finishes too
  EXPECT_EQ(target_bytes, expected);
}

}  // namespace
}  // namespace warptrace
