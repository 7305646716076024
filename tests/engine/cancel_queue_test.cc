// CancelQueue: every id pushed is taken exactly once, each thread's in the
// order it pushed them, across chunk boundaries, while producers push, after
// they have exited, and when a thread moves between queues.
#include "engine/cancel_queue.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace ax::internal {
namespace {

// Ids carry their producer in the slot and a sequence number in the
// generation.
JobId IdOf(uint32_t producer, uint32_t seq) { return JobId(producer, seq); }

TEST(CancelQueue, TakesInPushOrderAcrossChunks) {
  CancelQueue q;
  EXPECT_EQ(q.Backlog(), 0u);
  constexpr uint32_t kN = 3 * CancelQueue::Chunk::kIds + 7;
  for (uint32_t i = 0; i < kN; ++i) EXPECT_EQ(q.Push(IdOf(0, i)), i + 1);
  EXPECT_EQ(q.Backlog(), kN);
  std::vector<JobId> got;
  // In pieces: a take may end inside a chunk and the next go on from there.
  while (q.Take(500, [&](JobId id) { got.push_back(id); }) > 0) {
  }
  ASSERT_EQ(got.size(), kN);
  for (uint32_t i = 0; i < kN; ++i) EXPECT_EQ(got[i], IdOf(0, i));
  EXPECT_EQ(q.Backlog(), 0u);
  // Emptied chunks are reused, and the count the producer sees starts over.
  EXPECT_EQ(q.Push(IdOf(0, kN)), 1u);
  EXPECT_EQ(q.Take(10, [&](JobId id) { EXPECT_EQ(id, IdOf(0, kN)); }), 1u);
}

TEST(CancelQueue, ProducersAndAConsumerAtOnce) {
  CancelQueue q;
  constexpr uint32_t kProducers = 4;
  constexpr uint32_t kEach = 20'000;
  std::atomic<bool> done{false};
  std::vector<std::thread> producers;
  for (uint32_t p = 0; p < kProducers; ++p) {
    producers.emplace_back([&q, p] {
      for (uint32_t i = 1; i <= kEach; ++i) (void)q.Push(IdOf(p, i));
    });
  }
  std::vector<uint32_t> last(kProducers, 0);
  size_t taken = 0;
  std::mutex consumer;  // the engine lock's role: one consumer at a time
  auto take = [&] {
    std::lock_guard<std::mutex> l(consumer);
    return q.Take(1'000, [&](JobId id) {
      ASSERT_LT(id.slot(), kProducers);
      EXPECT_EQ(id.generation(), last[id.slot()] + 1) << "producer " << id.slot();
      last[id.slot()] = id.generation();
      ++taken;
    });
  };
  std::thread consumer_thread([&] {
    while (!done.load()) (void)take();
  });
  for (auto& t : producers) t.join();  // their rings are abandoned now
  done = true;
  consumer_thread.join();
  while (take() > 0) {
  }
  EXPECT_EQ(taken, size_t{kProducers} * kEach);
  EXPECT_EQ(q.Backlog(), 0u);
  for (uint32_t p = 0; p < kProducers; ++p) EXPECT_EQ(last[p], kEach);
}

TEST(CancelQueue, AThreadMovingBetweenQueues) {
  CancelQueue a;
  CancelQueue b;
  std::vector<JobId> from_a;
  std::vector<JobId> from_b;
  std::thread([&] {
    for (uint32_t i = 1; i <= 10; ++i) {
      (void)a.Push(IdOf(0, i));
      (void)b.Push(IdOf(1, i));
    }
  }).join();
  EXPECT_EQ(a.Backlog(), 10u);
  EXPECT_EQ(b.Backlog(), 10u);
  (void)a.Take(100, [&](JobId id) { from_a.push_back(id); });
  (void)b.Take(100, [&](JobId id) { from_b.push_back(id); });
  ASSERT_EQ(from_a.size(), 10u);
  ASSERT_EQ(from_b.size(), 10u);
  for (uint32_t i = 1; i <= 10; ++i) {
    EXPECT_NE(std::find(from_a.begin(), from_a.end(), IdOf(0, i)), from_a.end());
    EXPECT_NE(std::find(from_b.begin(), from_b.end(), IdOf(1, i)), from_b.end());
  }
  EXPECT_EQ(a.Backlog(), 0u);
  EXPECT_EQ(b.Backlog(), 0u);
}

// A queue destroyed while a thread still caches its ring: the thread's next
// push, to another queue, must not touch the destroyed one.
TEST(CancelQueue, OutlivedByAThreadsRing) {
  auto first = std::make_unique<CancelQueue>();
  (void)first->Push(IdOf(0, 1));
  first.reset();
  CancelQueue second;
  EXPECT_EQ(second.Push(IdOf(0, 2)), 1u);
  EXPECT_EQ(second.Take(10, [](JobId id) { EXPECT_EQ(id, IdOf(0, 2)); }), 1u);
}

}  // namespace
}  // namespace ax::internal
