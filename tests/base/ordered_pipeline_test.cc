// Tests OrderedPipeline<Item> with items of their own type: every item delivered once, in
// submission order, with what the transform made of it; items come back recycled with their
// storage; a producer that would wait transforms queued items itself even when a worker
// exists (the worker here is stuck until the producer has made one).
#include "base/ordered_pipeline.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace warptrace {
namespace {

struct Item {
  uint64_t value = 0;
  std::vector<uint64_t> storage;  // grows once, then reused
  std::string made;               // the transform's
  std::thread::id made_on;
};

TEST(OrderedPipelineTest, DeliversEveryItemInOrderWithWhatTheTransformMade) {
  for (int workers : {0, 1, 3}) {
    std::vector<std::string> delivered;
    {
      OrderedPipeline<Item> pipeline(
          workers, 5,
          [](int /*slot*/, Item& item) {
            uint64_t sum = 0;
            // Uneven costs: later items often finish first on another thread.
            const uint64_t rounds = item.value % 3 == 0 ? 20000 : 1;
            for (uint64_t r = 0; r < rounds; ++r) sum = sum * 31 + item.value + r;
            volatile uint64_t keep = sum;  // the loop is the cost, not the result
            (void)keep;
            item.made = std::to_string(item.value * 2);
          },
          [&](Item& item) { delivered.push_back(item.made); });
      Item item;
      for (uint64_t i = 0; i < 200; ++i) {
        item.value = i;
        pipeline.Submit(item);
      }
      pipeline.Drain();
      ASSERT_EQ(delivered.size(), 200u) << workers << " workers";
    }
    for (uint64_t i = 0; i < 200; ++i) EXPECT_EQ(delivered[i], std::to_string(2 * i)) << i;
  }
}

TEST(OrderedPipelineTest, SubmitHandsBackAnItemDeliveredBeforeWithItsStorage) {
  OrderedPipeline<Item> pipeline(0, 2, nullptr, [](Item&) {});
  Item item;
  item.storage.reserve(1000);
  const uint64_t* first = item.storage.data();
  pipeline.Submit(item);  // a new item comes back: nothing was delivered yet
  EXPECT_EQ(item.storage.capacity(), 0u);
  pipeline.Submit(item);
  pipeline.Drain();
  // Both delivered: the next Submits hand them back, the last delivered first.
  pipeline.Submit(item);
  EXPECT_EQ(item.storage.capacity(), 0u);
  pipeline.Submit(item);
  EXPECT_GE(item.storage.capacity(), 1000u);
  EXPECT_EQ(item.storage.data(), first);
}

TEST(OrderedPipelineTest, AProducerThatWouldWaitTransformsQueuedItemsWhileTheWorkerIsBusy) {
  const std::thread::id producer = std::this_thread::get_id();
  std::mutex mu;
  std::condition_variable cv;
  bool producer_made_one = false;
  bool worker_gave_up = false;
  std::vector<uint64_t> values;
  std::vector<std::thread::id> made_on;
  {
    OrderedPipeline<Item> pipeline(
        1, 3,
        [&](int /*slot*/, Item& item) {
          item.made_on = std::this_thread::get_id();
          std::unique_lock<std::mutex> lock(mu);
          if (item.made_on == producer) {
            producer_made_one = true;
            cv.notify_all();
            return;
          }
          // The worker is stuck at its items until the producer has made one: a producer
          // that only waited for a free place would wait for the worker forever (here 60 s,
          // then the test fails).
          if (!cv.wait_for(lock, std::chrono::seconds(60), [&] { return producer_made_one; })) {
            worker_gave_up = true;
          }
        },
        [&](Item& item) {
          values.push_back(item.value);
          made_on.push_back(item.made_on);
        });
    Item item;
    for (uint64_t i = 0; i < 20; ++i) {
      item.value = i;
      pipeline.Submit(item);
    }
    pipeline.Drain();
  }
  EXPECT_FALSE(worker_gave_up);
  ASSERT_EQ(values.size(), 20u);
  for (uint64_t i = 0; i < 20; ++i) EXPECT_EQ(values[i], i);
  int by_producer = 0;
  for (const std::thread::id& id : made_on) by_producer += id == producer ? 1 : 0;
  EXPECT_GE(by_producer, 1);
}

}  // namespace
}  // namespace warptrace
