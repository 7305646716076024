#include "timer/near_queue.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace ax::internal {
namespace {

std::vector<uint32_t> Drain(NearQueue& queue) {
  std::vector<uint32_t> ids;
  while (!queue.empty()) {
    ids.push_back(queue.Top().id);
    queue.Pop();
  }
  return ids;
}

TEST(NearQueue, MergesRunAndHeapByDeadlineThenSequence) {
  NearQueue queue;
  queue.Append({20, 3, 1});
  queue.Append({10, 5, 2});
  queue.Append({10, 4, 3});
  queue.FinishLoad();
  queue.Push({10, 6, 4});
  queue.Push({5, 9, 5});
  queue.Push({20, 1, 6});
  EXPECT_EQ(queue.size(), 6u);
  EXPECT_EQ(Drain(queue), (std::vector<uint32_t>{5, 3, 2, 4, 6, 1}));
}

TEST(NearQueue, CompactDropsStaleAndKeepsOrder) {
  NearQueue queue;
  for (uint32_t i = 0; i < 10; ++i) queue.Append({int64_t{i}, i, i});
  queue.FinishLoad();
  for (uint32_t i = 10; i < 20; ++i) queue.Push({int64_t{30 - i}, i, i});
  queue.Compact([](const NearEntry& entry) { return entry.id % 3 == 0; });
  // Run ids 0..9 have deadlines 0..9; heap ids 19..10 have deadlines 11..20.
  const std::vector<uint32_t> expected = {1, 2, 4, 5, 7, 8, 19, 17, 16, 14, 13, 11, 10};
  EXPECT_EQ(Drain(queue), expected);
}

TEST(NearQueue, ReloadsAfterDraining) {
  NearQueue queue;
  queue.Append({1, 0, 7});
  queue.FinishLoad();
  EXPECT_EQ(Drain(queue), std::vector<uint32_t>{7});
  queue.Append({2, 1, 8});
  queue.FinishLoad();
  EXPECT_EQ(Drain(queue), std::vector<uint32_t>{8});
}

// A large run's buffer is handed over once drained, for the owner to free
// outside its lock; a small one stays for the next load.
TEST(NearQueue, HandsOverTheBufferOfALargeRunOnceDrained) {
  NearQueue queue;
  constexpr uint32_t kLarge = 100'000;
  queue.Reserve(kLarge);
  for (uint32_t i = 0; i < kLarge; ++i) queue.Append({int64_t{i}, i, i});
  queue.FinishLoad();
  queue.Pop();
  EXPECT_EQ(queue.TakeDrained().capacity(), 0u);  // not drained yet
  const size_t before = queue.MemoryBytes();
  EXPECT_EQ(Drain(queue).size(), kLarge - 1);
  EXPECT_EQ(queue.MemoryBytes(), before);  // held, not freed
  EXPECT_GE(queue.TakeDrained().capacity(), kLarge);
  EXPECT_EQ(queue.TakeDrained().capacity(), 0u);  // taken once
  EXPECT_LT(queue.MemoryBytes(), before);

  queue.Append({1, 0, 7});
  queue.FinishLoad();
  EXPECT_EQ(Drain(queue), std::vector<uint32_t>{7});
  EXPECT_EQ(queue.TakeDrained().capacity(), 0u);  // a small run keeps its buffer
}

}  // namespace
}  // namespace ax::internal
