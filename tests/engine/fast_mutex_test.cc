#include "engine/fast_mutex.h"

#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace ax::internal {
namespace {

TEST(FastMutex, TryLockFailsWhileHeld) {
  FastMutex mu;
  ASSERT_TRUE(mu.try_lock());
  EXPECT_FALSE(mu.try_lock());
  mu.unlock();
  EXPECT_TRUE(mu.try_lock());
  mu.unlock();
}

// Four threads add to a plain counter under the lock: any increment lost
// (or, under ThreadSanitizer, any unordered access) shows a broken lock.
// Mixing try_lock with lock puts threads to sleep on the word and wakes them.
TEST(FastMutex, ExcludesAndWakesSleepers) {
  FastMutex mu;
  long counter = 0;
  constexpr int kThreads = 4;
  constexpr int kAdds = 50'000;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAdds; ++i) {
        if ((i + t) % 3 == 0 && mu.try_lock()) {
          std::unique_lock<FastMutex> l(mu, std::adopt_lock);
          ++counter;
          continue;
        }
        std::lock_guard<FastMutex> l(mu);
        ++counter;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counter, long{kThreads} * kAdds);
}

// A thread that finds the lock held sleeps until the holder lets go.
TEST(FastMutex, AWaiterGetsTheLockOnUnlock) {
  FastMutex mu;
  mu.lock();
  bool got = false;
  std::thread waiter([&] {
    std::lock_guard<FastMutex> l(mu);
    got = true;
  });
  EXPECT_FALSE(got);
  mu.unlock();
  waiter.join();
  EXPECT_TRUE(got);
}

}  // namespace
}  // namespace ax::internal
