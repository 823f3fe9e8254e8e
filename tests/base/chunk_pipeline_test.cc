#include "base/chunk_pipeline.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <new>
#include <stdexcept>
#include <cstdint>
#include <string>
#include <thread>
#include <tuple>
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

// (workers, helpers): background threads, and threads that call Help() while chunks come.
class ChunkPipelineWorkers : public ::testing::TestWithParam<std::tuple<int, int>> {
 protected:
  int workers() const { return std::get<0>(GetParam()); }
  int helpers() const { return std::get<1>(GetParam()); }
};

// Threads that call Help() until stopped: chunks transformed and delivered off the
// producer's thread, as the Perfetto sink's caller does while it waits.
class Helpers {
 public:
  Helpers(ChunkPipeline& pipeline, int n) {
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([&pipeline, this] {
        while (!stop_.load()) {
          if (pipeline.Help()) {
            helped_.fetch_add(1);
          } else {
            std::this_thread::yield();
          }
        }
      });
    }
  }
  ~Helpers() { Stop(); }
  void Stop() {
    stop_.store(true);
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }
  int helped() const { return helped_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> helped_{0};
  std::vector<std::thread> threads_;
};

TEST_P(ChunkPipelineWorkers, DeliversEveryChunkTransformedInSubmissionOrder) {
  constexpr size_t kInFlight = 3;
  std::vector<uint8_t> delivered;
  std::vector<uint8_t> expected;
  // A slot is never used by two transforms at once.
  std::array<std::atomic<int>, kInFlight> busy{};
  std::atomic<int> queued{0};
  {
    ChunkPipeline pipeline(
        workers(), kInFlight,
        [&](int slot, absl::Span<const uint8_t> in, std::vector<uint8_t>& out) {
          EXPECT_GE(slot, 0);
          EXPECT_LT(slot, static_cast<int>(kInFlight));
          if (slot < 0 || slot >= static_cast<int>(kInFlight)) return in;
          EXPECT_EQ(busy[static_cast<size_t>(slot)].fetch_add(1), 0) << "slot " << slot;
          absl::Span<const uint8_t> bytes = SlowReverse(in, out);
          busy[static_cast<size_t>(slot)].fetch_sub(1);
          return bytes;
        },
        [&](absl::Span<const uint8_t> bytes) {
          delivered.insert(delivered.end(), bytes.begin(), bytes.end());
        },
        [&] { queued.fetch_add(1); });
    EXPECT_EQ(pipeline.workers(), workers());
    Helpers helping(pipeline, helpers());
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
    EXPECT_FALSE(pipeline.HasPending());
    EXPECT_FALSE(pipeline.Help());
  }
  EXPECT_EQ(delivered, expected);
  EXPECT_EQ(queued.load(), 500);
}

TEST_P(ChunkPipelineWorkers, WithoutATransformDeliversTheChunksAsTheyAre) {
  std::string delivered;
  std::string expected;
  ChunkPipeline pipeline(workers(), 2, nullptr, [&](absl::Span<const uint8_t> bytes) {
    delivered.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  });
  Helpers helping(pipeline, helpers());
  for (size_t i = 0; i < 300; ++i) {
    std::vector<uint8_t> chunk = ChunkOf(i);
    expected.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
    pipeline.Submit(chunk, chunk.size());
  }
  pipeline.Drain();
  EXPECT_EQ(delivered, expected);
}

INSTANTIATE_TEST_SUITE_P(Workers, ChunkPipelineWorkers,
                         ::testing::Combine(::testing::Values(0, 1, 2, 4),
                                            ::testing::Values(0, 1, 2)));

// Without workers, a chunk waits for a helper until max_in_flight are queued; then the
// producer transforms the oldest itself, and Drain does the rest.
TEST(ChunkPipelineTest, WithoutWorkersChunksWaitForHelpOrTheProducer) {
  const std::thread::id producer = std::this_thread::get_id();
  std::vector<std::thread::id> transformed_on;
  std::string delivered;
  ChunkPipeline pipeline(
      0, 2,
      [&](int, absl::Span<const uint8_t> in, std::vector<uint8_t>&) {
        transformed_on.push_back(std::this_thread::get_id());
        return in;
      },
      [&](absl::Span<const uint8_t> bytes) {
        delivered.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      });
  EXPECT_EQ(pipeline.workers(), 0);
  EXPECT_FALSE(pipeline.HasPending());
  EXPECT_FALSE(pipeline.Help());
  for (char c : std::string("ab")) {
    std::vector<uint8_t> chunk(1, static_cast<uint8_t>(c));
    pipeline.Submit(chunk, 1);
  }
  EXPECT_TRUE(pipeline.HasPending());
  EXPECT_TRUE(delivered.empty());  // nobody has transformed anything yet
  std::thread helper([&] { EXPECT_TRUE(pipeline.Help()); });  // takes "a", the oldest
  helper.join();
  EXPECT_EQ(delivered, "a");
  ASSERT_EQ(transformed_on.size(), 1u);
  EXPECT_NE(transformed_on[0], producer);
  for (char c : std::string("cd")) {  // "d" finds 2 in flight: the producer does "b"
    std::vector<uint8_t> chunk(1, static_cast<uint8_t>(c));
    pipeline.Submit(chunk, 1);
  }
  EXPECT_EQ(delivered, "ab");
  pipeline.Drain();
  EXPECT_EQ(delivered, "abcd");
  ASSERT_EQ(transformed_on.size(), 4u);
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(transformed_on[i], producer) << i;
  EXPECT_FALSE(pipeline.HasPending());
}

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

// Destruction does no work (it may run while an exception unwinds the producer): what was
// not drained is dropped, never delivered out of the producer's sight. No worker here, so
// nothing is delivered before the pipeline is destroyed either.
TEST(ChunkPipelineTest, DestructionDropsWhatWasNotDrained) {
  std::string delivered;
  {
    ChunkPipeline pipeline(0, 8, nullptr, [&](absl::Span<const uint8_t> bytes) {
      delivered.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    });
    for (char c : std::string("abcdefgh")) {
      std::vector<uint8_t> chunk(1, static_cast<uint8_t>(c));
      pipeline.Submit(chunk, 1);
    }
  }
  EXPECT_EQ(delivered, "");
}

// A transform that throws on a worker (std::bad_alloc in a deflate) reaches the producer at
// its next Submit or Drain, instead of std::terminate on the worker (issue 55).
TEST_P(ChunkPipelineWorkers, ATransformsExceptionIsRethrownToTheProducer) {
  std::atomic<int> delivered{0};
  ChunkPipeline pipeline(
      std::get<0>(GetParam()), 4,
      [](int, absl::Span<const uint8_t> in, std::vector<uint8_t>&) -> absl::Span<const uint8_t> {
        if (in[0] == 5) throw std::bad_alloc();
        return in;
      },
      [&](absl::Span<const uint8_t>) { ++delivered; });
  bool thrown = false;
  try {
    for (int i = 0; i < 100; ++i) {
      std::vector<uint8_t> chunk(1, static_cast<uint8_t>(i));
      pipeline.Submit(chunk, 1);
    }
    pipeline.Drain();
  } catch (const std::bad_alloc&) {
    thrown = true;
  }
  EXPECT_TRUE(thrown);
  EXPECT_LE(delivered.load(), 5) << "nothing is delivered after the chunk that threw";
}

TEST_P(ChunkPipelineWorkers, ADeliversExceptionIsRethrownToTheProducer) {
  ChunkPipeline pipeline(std::get<0>(GetParam()), 4, nullptr,
                         [&](absl::Span<const uint8_t> bytes) {
    if (bytes[0] == 2) throw std::runtime_error("disk on fire");
  });
  std::string what;
  try {
    for (int i = 0; i < 100; ++i) {
      std::vector<uint8_t> chunk(1, static_cast<uint8_t>(i));
      pipeline.Submit(chunk, 1);
    }
    pipeline.Drain();
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  EXPECT_EQ(what, "disk on fire");
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
  }  // the destructor writes nothing: "after" was never Finish()ed
  EXPECT_EQ(target_bytes, expected);
}

}  // namespace
}  // namespace warptrace
